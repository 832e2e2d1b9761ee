"""The fake chat-completions server of tests/judges, loaded by path (tests/ is not a package)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def _server_module() -> ModuleType:
    name = "gainscope_tests_fake_chat_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).parents[1] / "judges" / "server.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture
def fake_server() -> Iterator[Any]:
    """A started FakeChatServer (grades from a ``grade=N`` marker in the prompt); and its module as ``.module``."""
    module = _server_module()
    with module.FakeChatServer() as server:
        server.module = module
        yield server
