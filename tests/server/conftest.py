"""Shared fixtures of the dashboard tests: the bundled examples as workspace cases, the recipes indexed for the
embedded engine, and a dashboard served in a thread (one per test module) with an HTTP client that sends the
workspace token."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MOVIES = EXAMPLES / "cases" / "movies_before.json"
MOVIES_AFTER = EXAMPLES / "cases" / "movies_after.json"
HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'


@pytest.fixture(scope="session")
def recipes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the recipes indexed (index/), engines.toml naming it, and recipes_case.json beside them."""
    from gainscope.search.embedded import build_index

    folder = tmp_path_factory.mktemp("recipes")
    build_index(EXAMPLES / "search" / "corpus.jsonl", folder / "index", fields="title^2,text")
    (folder / "engines.toml").write_text('[engines.recipes]\nkind = "embedded"\nindex = "index"\ndisplay = ["title"]\n',
                                         encoding="utf-8")
    shutil.copy(EXAMPLES / "search" / "recipes_case.json", folder / "recipes_case.json")
    return folder


@dataclass
class Dashboard:
    """A served workspace: ``url``, ``workspace``, ``client`` (sends the token), ``anonymous`` (does not)."""

    url: str
    workspace: Any
    server: Any
    client: httpx.Client
    anonymous: httpx.Client

    def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> tuple[int, Any]:
        """``(status, JSON answer)`` of a request with the token."""
        response = self.client.request(method, path, json=body, **kwargs)
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, response.text

    def job(self, answer: dict[str, Any]) -> dict[str, Any]:
        """Wait for the job a call started and return its final state."""
        jobs = self.server.app.state.jobs
        return jobs.wait(answer["job"]["id"]).to_json()


def serve(folder: Path, **options: Any) -> Iterator[Dashboard]:
    from gainscope.server.run import ServerThread
    from gainscope.server.workspace import Workspace

    loopback = options.pop("loopback", True)
    ws = Workspace.open(folder, **options)
    with ServerThread(ws, loopback=loopback) as server:
        headers = {"X-Gainscope-Token": ws.token}
        with httpx.Client(base_url=server.url, headers=headers, timeout=60) as client, \
                httpx.Client(base_url=server.url, timeout=60) as anonymous:
            yield Dashboard(server.url, ws, server, client, anonymous)
    ws.close()


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """A dashboard over a new workspace (one per test module)."""
    yield from serve(tmp_path_factory.mktemp("workspace") / "ws")


def add_case(workspace: Any, path: Path, **options: Any) -> Any:
    """Import a case file into a workspace (as ``gainscope case add`` does); returns its record."""
    from dataclasses import replace

    from gainscope.server import cases as bridge

    case = bridge.read_any(path, **options)
    return workspace.import_case(replace(case, source=str(path.resolve())), source=str(path.resolve()),
                                 read_files=True)


def load_test_module(relative: str) -> Any:
    """A helper module of another test folder (``render/browser.py``), loaded from its file: test folders are not
    packages of one another."""
    import importlib.util
    import sys

    path = ROOT / "tests" / relative
    name = "gainscope_tests_" + relative.replace("/", "_").removesuffix(".py")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A PostgreSQL server from Debian's packages, started for the session (see postgres.py); skipped when PostgreSQL
    is not installed, failed instead when GAINSCOPE_REQUIRE_POSTGRES=1 (as CI sets)."""
    from .postgres import PostgresServer, find_binaries

    binaries = find_binaries()
    if binaries is None:
        reason = ("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb, no initdb on PATH): python3 "
                  "dev.py test installs Debian's postgresql as root")
        if os.environ.get("GAINSCOPE_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"GAINSCOPE_REQUIRE_POSTGRES=1 but {reason}")
        pytest.skip(reason)
    folder = Path(tempfile.mkdtemp(prefix="gainscope-postgres-"))  # under /tmp: the postgres user can reach it
    try:
        with PostgresServer.start(folder, binaries) as server:
            yield server
    finally:
        shutil.rmtree(folder, ignore_errors=True)
