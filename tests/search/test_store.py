"""The snapshot store through a DB-API connection of another parameter style (as PostgreSQL drivers use), so a
dashboard workspace in PostgreSQL can hold the same tables with the same code."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gainscope.search import Hit, QueryResult, SnapshotStore


class FormatStyle:
    """A connection whose statements must use %s marks (psycopg's style), backed by SQLite for the test."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path)
        self.statements: list[str] = []

    def cursor(self) -> FormatStyle._Cursor:
        return FormatStyle._Cursor(self)

    def commit(self) -> None:
        self.db.commit()

    def rollback(self) -> None:
        self.db.rollback()

    def close(self) -> None:
        self.db.close()

    class _Cursor:
        def __init__(self, owner: FormatStyle) -> None:
            self.owner = owner
            self.cursor = owner.db.cursor()

        def execute(self, statement: str, params: tuple = ()) -> None:
            assert "?" not in statement, statement
            self.owner.statements.append(statement)
            self.cursor.execute(statement.replace("%s", "?"), params)

        def fetchall(self) -> list:
            return self.cursor.fetchall()

        def close(self) -> None:
            self.cursor.close()


def test_the_store_speaks_format_style_and_commits_explicitly(tmp_path: Path) -> None:
    connection = FormatStyle(tmp_path / "w.db")
    store = SnapshotStore(connection, path="workspace", paramstyle="format")
    store.create_schema()
    store.create_schema()  # idempotent
    snap = store.create(name="s", engine="e", kind="http", configuration={"k": 1}, configuration_hash="ab" * 32,
                        knobs={"boost": 2}, top=10, note="first")
    store.record(snap, QueryResult("q1", 0, "red shoe", "ok", "2024-01-01T00:00:00+00:00", 1,
                                   hits=(Hit("d1", 2.0, {"title": "Red"}), Hit("d2", None)), total=7, latency=0.01))
    store.record(snap, QueryResult("q2", 1, "blue hat", "failed", "2024-01-01T00:00:01+00:00", 3, error="HTTP 503"))
    store.record(snap, QueryResult("q2", 1, "blue hat", "ok", "2024-01-01T00:00:02+00:00", 1))  # replaces
    store.close()
    with SnapshotStore.open(tmp_path / "w.db", readonly=True) as again:  # the same tables, read by the SQLite path
        [found] = again.snapshots()
        assert (found.name, found.knobs, found.note, found.top) == ("s", {"boost": 2}, "first", 10)
        results = again.results(found)
    assert [(r.query_id, r.status, r.hits, r.total) for r in results] == [
        ("q1", "ok", (Hit("d1", 2.0, {"title": "Red"}), Hit("d2", None)), 7), ("q2", "ok", (), None)]
    assert any("%s" in statement for statement in connection.statements)
