"""The ``chat_server`` fixture: a started ``FakeChatServer`` (see server.py), stopped after the test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .server import FakeChatServer


@pytest.fixture
def chat_server() -> Iterator[FakeChatServer]:
    """A fake chat-completions server on 127.0.0.1 answering ``ok`` with the default grade; set ``.behaviour``."""
    with FakeChatServer() as server:
        yield server
