"""The workspace: its folder, token and database (what it refuses to open), the store's provenance of ratings
(events, the order documents were first rated in, a human rating never overwritten by a label) and its history."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest

from gainscope.errors import InputError, NotFoundError, StoreError
from gainscope.server.store import LabelRecord, ScorePoint, slug
from gainscope.server.workspace import Workspace

from .conftest import EXAMPLES, MOVIES, add_case

RECIPES_CASE = EXAMPLES / "search" / "recipes_case.json"


def test_a_new_workspace_has_a_database_and_a_private_token(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    with Workspace.open(folder) as ws:
        token = ws.token
        assert len(token) >= 24 and ws.where == str(folder / "workspace.sqlite")
    assert (folder / "token").read_text().strip() == token
    assert stat.S_IMODE(os.stat(folder / "token").st_mode) == 0o600
    with Workspace.open(folder) as again:  # the stored token is kept
        assert again.token == token
    with Workspace.open(folder, token="team-secret-1") as given:  # a given one replaces it
        assert given.token == "team-secret-1"
    assert (folder / "token").read_text().strip() == "team-secret-1"
    with pytest.raises(InputError, match=r"^a token needs at least 8 characters and no spaces \(token=\)$"):
        Workspace.open(folder, token="short")


def test_what_a_workspace_refuses(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="is a file, not a workspace folder"):
        Workspace.open(tmp_path / "file")
    with pytest.raises(StoreError, match="no such workspace folder"):
        Workspace.open(tmp_path / "missing", create=False)
    other = tmp_path / "other"
    other.mkdir()
    db = sqlite3.connect(other / "workspace.sqlite")
    db.execute("CREATE TABLE accounts (id TEXT)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match=r"is an SQLite database of another program \(tables: accounts\); it is left "
                                         "untouched"):
        Workspace.open(other)
    with pytest.raises(InputError) as caught:
        Workspace.open(tmp_path / "pg", database="sqlite:///x.db")
    assert str(caught.value) == ("database= takes a PostgreSQL URL (postgresql://user@host:5432/name); got "
                                 "'sqlite:///x.db'; without it the workspace is workspace.sqlite in the workspace "
                                 "folder")
    assert not (tmp_path / "pg").exists()  # refused before the folder was made


def test_a_snapshot_store_is_not_taken_for_a_workspace(tmp_path: Path) -> None:
    from gainscope.search.store import SnapshotStore

    folder = tmp_path / "ws"
    folder.mkdir()
    with SnapshotStore.open(folder / "workspace.sqlite") as store:
        store.create(name="s", engine="e", kind="k", configuration={}, configuration_hash="0" * 64, knobs={}, top=10)
    with pytest.raises(StoreError, match=r"is a snapshot store \(gainscope search --snapshot\), not a dashboard "
                                         "workspace"):
        Workspace.open(folder)


def test_the_workspace_file_is_a_snapshot_store_for_the_command_line(tmp_path: Path) -> None:
    from gainscope.search.store import SnapshotStore

    with Workspace.open(tmp_path / "ws") as ws:
        record = add_case(ws, MOVIES)
        ws.snapshot_current(record.id, note="kept")
    with SnapshotStore.open(tmp_path / "ws" / "workspace.sqlite", readonly=True) as store:
        [snapshot] = store.snapshots()
        assert snapshot.name == "movies-baseline-snapshot #1" and snapshot.note == "kept"
        assert [r.query for r in store.results(snapshot)] == ["star wars", "star trek", "the godfather", "rom com"]


def test_ratings_keep_their_order_their_source_and_every_change(tmp_path: Path) -> None:
    with Workspace.open(tmp_path / "ws") as ws:
        record = add_case(ws, MOVIES)
        store = ws.store
        q = store.query(record.id, "1")
        # the case file's order, which Quepid's bestDocs keep for ties
        assert list(q.ratings) == ["sw4", "sw5", "sw6", "sw1", "spaceballs", "startrek2"]
        assert store.set_rating(record.id, "1", "new", 2, source="human", author="ann") == (True, None)
        assert store.set_rating(record.id, "1", "sw4", 1, source="human", author="ann") == (True, 3)
        assert list(store.query(record.id, "1").ratings)[-1] == "new"  # a new document goes last
        assert next(iter(store.query(record.id, "1").ratings)) == "sw4"  # a change keeps its place
        # an LLM label never overwrites a person's (or an imported) rating, but may replace its own
        assert store.set_rating(record.id, "1", "sw4", 3, source="llm:abc", keep_human=True) == (False, 1)
        assert store.set_rating(record.id, "1", "gpt", 1, source="llm:abc", keep_human=True) == (True, None)
        assert store.set_rating(record.id, "1", "gpt", 2, source="llm:abc", keep_human=True) == (True, 1)
        assert store.set_rating(record.id, "1", "gpt", 3, source="human", author="ann") == (True, 2)
        assert store.set_rating(record.id, "1", "gpt", 0, source="llm:abc", keep_human=True) == (False, 3)
        events = store.rating_events(record.id, "1", "gpt")
        assert [(e.previous, e.rating, e.source, e.author) for e in events] == [
            (2, 3, "human", "ann"), (1, 2, "llm:abc", None), (None, 1, "llm:abc", None)]
        with pytest.raises(NotFoundError, match="case 'movies-baseline-snapshot' has no query '9'"):
            store.query(record.id, "9")


def test_history_and_labels(tmp_path: Path) -> None:
    with Workspace.open(tmp_path / "ws") as ws:
        record = add_case(ws, MOVIES)
        store = ws.store
        points = store.history(record.id)
        assert [(p.scorer, p.event) for p in points] == [("nDCG@10", "import"), ("P@5", "import"), ("ERR@10", "import")]
        assert store.history(record.id, "P@5", with_queries=True)[0].queries == {"1": 0.8, "2": 0.75, "3": 0.0,
                                                                                   "4": 0.0}
        store.add_scores(record.id, [ScorePoint("P@5", 0.5, "2030-01-01T00:00:00+00:00", "annotation", note="n")])
        assert store.history(record.id, "P@5")[-1].note == "n"
        store.add_labels(record.id, [LabelRecord("1", "sw2", "j1", 2, "why", "m", "t")])
        store.add_labels(record.id, [LabelRecord("1", "sw2", "j1", 3, "why not", "m", "t2")])
        assert [(lb.grade, lb.reasoning) for lb in store.labels(record.id)] == [(3, "why not")]
        assert store.judges(record.id) == [("j1", "m", 1)]
        store.delete_case(record.id)
        assert store.history(record.id) == [] and store.labels(record.id) == []


def test_a_case_without_results_gets_no_history_point_but_an_annotation_keeps_its_note(tmp_path: Path) -> None:
    # the recipes case names an engine and has no results: its scorers give 0.0 (Quepid's built-ins score an empty
    # list 0), which is no score of the case; a point at 0 would start its history chart with a fall that never was
    with Workspace.open(tmp_path / "ws") as ws:
        record = add_case(ws, RECIPES_CASE)
        assert ws.store.history(record.id) == []
        assert ws.scoreboard.record(record.id, "rating") == []
        noted = ws.scoreboard.record(record.id, "annotation", note="before the first run", always=True)
        assert {p.note for p in noted} == {"before the first run"}
        assert [p.event for p in ws.store.history(record.id, "nDCG@10")] == ["annotation"]


def test_slugs() -> None:
    assert slug("Movies (baseline snapshot)") == "movies-baseline-snapshot"
    assert slug("<>") == "case" and slug("Ünïcode Çase") == "n-code-ase"
