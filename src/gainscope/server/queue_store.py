"""The rating queues' tables, in the workspace's database beside the cases (SQLite or PostgreSQL, through
:class:`gainscope.io.database.Database`, as :mod:`gainscope.server.store`)::

    ws_queues       id, case_id, name, source (the file), note (its header comments), created, position (where the
                    person stopped: the item shown when the queue is opened again)
    ws_queue_items  queue_id, position, case_id, query_id, doc_id, skipped: the pairs in the file's order (the
                    order ``gainscope pool`` chose them in)
    ws_queue_log    queue_id, seq, position, action (rate | skip), rating given, the rating in force before it
                    (value, source, author) and the skipped flag before it, at: what undo takes back, newest first

A queue holds no rating: a pair's rating is the case's (``ws_ratings``), given through the queue or anywhere else in
the dashboard, so a pair rated on its query page counts as rated in the queue too. An LLM label applied as a rating
(source ``llm:...``) does not: the queue asks people.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gainscope.errors import NotFoundError
from gainscope.io.database import Database
from gainscope.search.store import utc_now

__all__ = ["QUEUE_SCHEMA", "QueueAction", "QueueItem", "QueueRecord", "QueueStore"]

QUEUE_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS ws_queues (id TEXT PRIMARY KEY, case_id TEXT NOT NULL, name TEXT NOT NULL, "
    "source TEXT, note TEXT, created TEXT NOT NULL, position INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ws_queue_items (queue_id TEXT NOT NULL, position INTEGER NOT NULL, "
    "case_id TEXT NOT NULL, query_id TEXT NOT NULL, doc_id TEXT NOT NULL, skipped INTEGER NOT NULL, "
    "PRIMARY KEY (queue_id, position))",
    "CREATE TABLE IF NOT EXISTS ws_queue_log (queue_id TEXT NOT NULL, seq BIGINT NOT NULL, position INTEGER NOT NULL, "
    "action TEXT NOT NULL, rating DOUBLE PRECISION, previous DOUBLE PRECISION, previous_source TEXT, "
    "previous_author TEXT, was_skipped INTEGER NOT NULL, at TEXT NOT NULL, PRIMARY KEY (queue_id, seq))",
)


@dataclass(frozen=True)
class QueueRecord:
    """A queue as stored."""

    id: str
    case_id: str
    name: str
    source: str | None
    note: str | None
    created: str
    position: int


def _record(row: Sequence[Any]) -> QueueRecord:
    """A ``ws_queues`` row (id, case_id, name, source, note, created, position) as a record."""
    return QueueRecord(row[0], row[1], row[2], row[3], row[4], row[5], int(row[6]))


@dataclass(frozen=True)
class QueueItem:
    """One pair of a queue: its place, the case's query id (not the TREC id) and the document."""

    position: int
    query_id: str
    doc_id: str
    skipped: bool


@dataclass(frozen=True)
class QueueAction:
    """One action that undo can take back: a rating given (``rating``) or a skip, on the item at ``position``, with
    what was there before (the rating in force, its source and author; whether the item was skipped)."""

    seq: int
    position: int
    action: str
    rating: float | None
    previous: float | None
    previous_source: str | None
    previous_author: str | None
    was_skipped: bool


class QueueStore:
    """The queue tables over the workspace's database (see the module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def queues(self, case_id: str | None = None) -> list[QueueRecord]:
        """The queues (of one case), oldest first."""
        where, params = ("WHERE case_id = ? ", (case_id,)) if case_id is not None else ("", ())
        rows = self.database.query(f"SELECT id, case_id, name, source, note, created, position FROM ws_queues {where}"
                                   "ORDER BY created, id", params)
        return [_record(row) for row in rows]

    def queue(self, queue_id: str, case_id: str | None = None) -> QueueRecord:
        """The queue ``queue_id`` (of the case ``case_id`` when given); a NotFoundError naming the queues there are."""
        rows = self.database.query("SELECT id, case_id, name, source, note, created, position FROM ws_queues WHERE "
                                   "id = ?", (queue_id,))
        if not rows or (case_id is not None and rows[0][1] != case_id):
            known = [q.id for q in self.queues(case_id)]
            where = f"case {case_id!r}" if case_id is not None else "this workspace"
            raise NotFoundError(f"no queue {queue_id!r} in {where}" + (
                f"; its queues: {', '.join(known[:10])}" if known else "; it holds no queue yet"))
        row = rows[0]
        return _record(row)

    def add(self, queue_id: str, case_id: str, name: str, pairs: Sequence[tuple[str, str]], *,
            source: str | None, note: str | None) -> QueueRecord:
        """Store a new queue of ``pairs`` (the case's query ids and doc ids, in order)."""
        record = QueueRecord(queue_id, case_id, name, source, note, utc_now(), 0)
        with self.database.transaction() as cur:
            cur.execute("INSERT INTO ws_queues (id, case_id, name, source, note, created, position) VALUES "
                        "(?, ?, ?, ?, ?, ?, ?)", (queue_id, case_id, name, source, note, record.created, 0))
            cur.executemany("INSERT INTO ws_queue_items (queue_id, position, case_id, query_id, doc_id, skipped) "
                            "VALUES (?, ?, ?, ?, ?, 0)",
                            [(queue_id, i, case_id, q, d) for i, (q, d) in enumerate(pairs)])
        return record

    def delete(self, queue_id: str) -> None:
        """Remove a queue (the ratings given through it stay: they are the case's)."""
        self.database.write(*((f"DELETE FROM {table} WHERE {'id' if table == 'ws_queues' else 'queue_id'} = ?",
                               (queue_id,)) for table in ("ws_queues", "ws_queue_items", "ws_queue_log")))

    def delete_case(self, case_id: str) -> None:
        """Remove every queue of a case."""
        for queue in self.queues(case_id):
            self.delete(queue.id)

    def items(self, queue_id: str) -> list[QueueItem]:
        """The queue's pairs in order."""
        rows = self.database.query("SELECT position, query_id, doc_id, skipped FROM ws_queue_items WHERE queue_id = ? "
                                   "ORDER BY position", (queue_id,))
        return [QueueItem(int(p), q, d, bool(s)) for p, q, d, s in rows]

    def set_position(self, queue_id: str, position: int) -> None:
        """Remember where the person is."""
        self.database.write(("UPDATE ws_queues SET position = ? WHERE id = ?", (position, queue_id)))

    def set_skipped(self, queue_id: str, position: int, skipped: bool) -> None:
        """Mark an item skipped (or not)."""
        self.database.write(("UPDATE ws_queue_items SET skipped = ? WHERE queue_id = ? AND position = ?",
                             (int(skipped), queue_id, position)))

    def log(self, queue_id: str, position: int, action: str, *, rating: float | None, previous: float | None,
            previous_source: str | None, previous_author: str | None, was_skipped: bool) -> None:
        """Record an action for undo."""
        with self.database.transaction() as cur:
            cur.execute("SELECT MAX(seq) FROM ws_queue_log WHERE queue_id = ?", (queue_id,))
            seq = int(cur.fetchone()[0] or 0) + 1
            cur.execute("INSERT INTO ws_queue_log (queue_id, seq, position, action, rating, previous, previous_source, "
                        "previous_author, was_skipped, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (queue_id, seq, position, action, rating, previous, previous_source, previous_author,
                         int(was_skipped), utc_now()))

    def last_action(self, queue_id: str) -> QueueAction | None:
        """The newest action not yet undone, or None."""
        rows = self.database.query("SELECT seq, position, action, rating, previous, previous_source, previous_author, "
                                   "was_skipped FROM ws_queue_log WHERE queue_id = ? ORDER BY seq DESC LIMIT 1",
                                   (queue_id,))
        if not rows:
            return None
        seq, position, action, rating, previous, source, author, skipped = rows[0]
        return QueueAction(int(seq), int(position), action, rating, previous, source, author, bool(skipped))

    def forget_action(self, queue_id: str, seq: int) -> None:
        """Drop an undone action."""
        self.database.write(("DELETE FROM ws_queue_log WHERE queue_id = ? AND seq = ?", (queue_id, seq)))
