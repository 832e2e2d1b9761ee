"""The workspace in PostgreSQL (``gainscope serve --database postgresql://...``), against a real server from Debian's
packages that the tests start (postgres.py): the same store, the same API, the same numbers as with SQLite."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gainscope.cases import read_case, resolve_scorer, score_case
from gainscope.errors import StoreError
from gainscope.server.workspace import Workspace

from .conftest import MOVIES, Dashboard, add_case, serve

CASE = "movies-baseline-snapshot"


@pytest.fixture(scope="module")
def team(postgres: Any, tmp_path_factory: pytest.TempPathFactory, recipes: Path) -> Iterator[Dashboard]:
    url = postgres.database("dashboard")
    for dashboard in serve(tmp_path_factory.mktemp("pg") / "ws", database=url):
        add_case(dashboard.workspace, recipes / "recipes_case.json")
        yield dashboard


def test_the_workspace_lives_in_postgres(team: Dashboard) -> None:
    assert team.workspace.store.database.dialect == "postgres"
    assert team.workspace.where.startswith("postgresql://gainscope@127.0.0.1:")
    assert not (team.workspace.folder / "workspace.sqlite").exists()
    assert (team.workspace.folder / "token").exists()


def test_import_rate_and_the_scores_of_score_case(team: Dashboard) -> None:
    status, created = team.call("POST", "/api/cases", {"filename": "movies.json",
                                                       "content": MOVIES.read_text(encoding="utf-8")})
    assert status == 201, created
    status, answer = team.call("PUT", f"/api/cases/{CASE}/ratings", {"query": "star wars", "doc": "sw2", "rating": 2,
                                                                     "author": "pg"})
    assert status == 200 and answer["changed"]
    case = read_case(MOVIES)
    from dataclasses import replace

    wars = case.queries[0]
    case = replace(case, queries=(replace(wars, ratings={**wars.ratings, "sw2": 2}), *case.queries[1:]))
    for scorer in ("nDCG@10", "P@5", "ERR@10"):
        assert answer["scores"][scorer]["case"] == score_case(case, resolve_scorer(scorer)).score
    _, events = team.call("GET", f"/api/cases/{CASE}/ratings/events", params={"doc": "sw2"})
    assert [(e["previous"], e["rating"], e["author"]) for e in events] == [(None, 2, "pg")]
    _, query = team.call("GET", f"/api/cases/{CASE}/queries/1")
    assert list(d["doc"] for d in query["results"]) == list(wars.results)
    assert query["results"][-1]["rating"] == 2


def test_reruns_snapshots_and_compare_in_postgres(team: Dashboard) -> None:
    for boost in (2, 0):
        status, started = team.call("POST", "/api/cases/recipes/rerun", {"knobs": {"title_boost": boost}})
        assert status == 202, started
        job = team.job(started)
        assert job["state"] == "done", job["message"]
    status, cmp = team.call("GET", "/api/cases/recipes/compare", params={"snapshot": ["recipes #1", "recipes #2"],
                                                                         "current": "1", "scorer": "nDCG@10"})
    assert status == 200, cmp
    snapshots = cmp["by_scorer"]["nDCG@10"]["snapshots"]
    assert [s["name"] for s in snapshots] == ["recipes #1", "recipes #2", "current"]
    assert snapshots[1]["score"] == snapshots[2]["score"]  # the last rerun's results are the results in force
    _, history = team.call("GET", "/api/cases/recipes/history", params={"scorer": "nDCG@10"})
    # imported without results: no point until the first rerun (its zeros would say nothing)
    assert [p["event"] for p in history["scorers"]["nDCG@10"]] == ["rerun", "rerun"]


def test_a_second_workspace_process_sees_the_same_data(team: Dashboard, tmp_path: Path) -> None:
    with Workspace.open(tmp_path / "other", database=team.workspace.target) as other:
        assert {c.id for c in other.store.cases()} == {"recipes", CASE}
        assert other.store.query(CASE, "1").ratings["sw2"].author == "pg"


def test_what_cannot_be_reached_is_said(postgres: Any, tmp_path: Path) -> None:
    url = f"postgresql://gainscope:secret@127.0.0.1:{postgres.port}/no_such_database"
    with pytest.raises(StoreError) as caught:
        Workspace.open(tmp_path / "ws", database=url)
    message = str(caught.value)
    assert message.startswith(f"cannot connect to postgresql://gainscope:***@127.0.0.1:{postgres.port}/no_such_database")
    assert "secret" not in message and "check the URL, that the server runs and accepts this user" in message


def test_case_add_and_serve_on_the_command_line_use_the_database(team: Dashboard, cli_runner: Any,
                                                                 tmp_path: Path) -> None:
    url = team.workspace.target
    code, out, err = cli_runner("case", "add", str(tmp_path / "cli"), str(MOVIES), "--name", "From the CLI",
                                "--database", url)
    assert (code, out) == (0, "from-the-cli\n"), err
    assert "to postgresql://gainscope@127.0.0.1:" in err
    _, cases = team.call("GET", "/api/cases")  # the running dashboard sees it: one database
    assert "from-the-cli" in {c["id"] for c in cases}
    folder = tmp_path / "served"
    process = subprocess.Popen([sys.executable, "-m", "gainscope", "serve", str(folder), "--port", "0", "--database",
                                url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        base = process.stdout.readline().strip().split("/?")[0]
        with urllib.request.urlopen(f"{base}/api/cases", timeout=30) as response:
            served = {c["id"] for c in json.loads(response.read())}
        assert served == {c["id"] for c in cases}
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert not (folder / "workspace.sqlite").exists()
