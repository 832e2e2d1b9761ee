"""The judgment store: every label an LLM judge or a human gave, in one SQLite file (WAL mode).

A label is keyed by ``(judge, query_id, query_hash, doc_id, doc_hash)``: the judge's hash
(:class:`~gainscope.judges.spec.JudgeSpec`), and the SHA-256 (first 16 hex digits) of the exact query and
document text the judge saw. A rerun therefore pays nothing for a pair already judged by the same judge on the
same text, and a changed document or prompt is judged again. Human labels are stored under the judge
``human:<assessor>`` with empty text hashes (they are matched by query and document id).

Crash safety and several processes:

* every label is committed as soon as it is known (one transaction each, WAL, ``synchronous=NORMAL``), so a
  process killed at any moment (``kill -9``) loses no label it had received and recorded;
* before a request is sent, the pair is *claimed* (``BEGIN IMMEDIATE``, so two processes cannot both claim it);
  another process waits for a pair claimed by a live owner. A claim lasts a lease (120 s), renewed while the pair
  is in progress; it is stale, and is taken over, when its lease has expired or when its owner process, on this
  host, no longer exists -- so a killed run resumes at once here, and within a lease on another host;
* a grade is never replaced by a failure (a failure recorded after another process's grade is dropped);
* failed labels (no grade after every retry) are stored with their raw answer and error, never with a grade;
  they are retried by the next run unless asked otherwise, and never exported as qrels.

The one request that can be paid twice is one in flight when its process is killed (the server answered, the
label was not yet committed); a resumed run asks again for those pairs only.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from gainscope.errors import InputError

__all__ = ["JudgmentStore", "PairKey", "StoredLabel", "text_hash"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS judges (hash TEXT PRIMARY KEY, spec TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS labels (
    judge TEXT NOT NULL, query_id TEXT NOT NULL, query_hash TEXT NOT NULL, doc_id TEXT NOT NULL,
    doc_hash TEXT NOT NULL, source TEXT NOT NULL, status TEXT NOT NULL, grade INTEGER, reasoning TEXT,
    raw TEXT, error TEXT, model TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL,
    requests INTEGER, created REAL NOT NULL,
    PRIMARY KEY (judge, query_id, query_hash, doc_id, doc_hash));
CREATE INDEX IF NOT EXISTS labels_pair ON labels (query_id, doc_id);
CREATE TABLE IF NOT EXISTS claims (
    judge TEXT NOT NULL, query_id TEXT NOT NULL, query_hash TEXT NOT NULL, doc_id TEXT NOT NULL,
    doc_hash TEXT NOT NULL, owner TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL, expires REAL NOT NULL,
    PRIMARY KEY (judge, query_id, query_hash, doc_id, doc_hash));
"""

_KEY = "judge = ? AND query_id = ? AND query_hash = ? AND doc_id = ? AND doc_hash = ?"


def text_hash(text: str) -> str:
    """The first 16 hex digits of the SHA-256 of ``text`` (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class PairKey:
    """A (query, document) pair as one judge saw it."""

    judge: str
    query_id: str
    query_hash: str
    doc_id: str
    doc_hash: str

    def values(self) -> tuple[str, str, str, str, str]:
        """The key columns, in order."""
        return self.judge, self.query_id, self.query_hash, self.doc_id, self.doc_hash


@dataclass(frozen=True)
class StoredLabel:
    """One label with its provenance. ``grade`` is None exactly when ``status`` is ``failed``."""

    key: PairKey
    source: Literal["llm", "human"]
    status: Literal["ok", "failed"]
    grade: int | None
    reasoning: str = ""
    raw: str = ""
    error: str = ""
    model: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None
    requests: int = 0
    created: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """Plain data for JSONL export."""
        data = asdict(self)
        key = data.pop("key")
        return {**key, **data}


class JudgmentStore:
    """A SQLite judgment store (see the module docstring). Use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | Path, *, lease: float = 120.0) -> None:
        self.path = Path(path)
        self.lease = lease
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.owner = f"{self.host}:{self.pid}:{uuid.uuid4().hex[:8]}"
        self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        """Connect, switch to WAL and create the tables. Two processes creating one new store at once can find
        it locked while the other switches the journal mode (SQLite's busy timeout does not cover that), so
        a locked database is tried again for up to a minute."""
        deadline = time.monotonic() + 60.0
        delay = 0.01
        while True:
            try:
                db = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            except sqlite3.Error as exc:
                raise InputError(f"{self.path}: cannot open the judgment store ({exc})") from None
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(SCHEMA)
                return db
            except sqlite3.OperationalError as exc:
                db.close()
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise InputError(f"{self.path}: cannot open the judgment store ({exc})") from None
                time.sleep(delay)
                delay = min(0.5, delay * 2)

    def __enter__(self) -> JudgmentStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release this process's claims and close the file."""
        try:
            self._db.execute("DELETE FROM claims WHERE owner = ?", (self.owner,))
        finally:
            self._db.close()

    # ------------------------------------------------------------------ judges
    def register_judge(self, judge_hash: str, spec: dict[str, Any]) -> None:
        """Record a judge's canonical specification (once)."""
        self._db.execute("INSERT OR IGNORE INTO judges VALUES (?, ?, ?)",
                         (judge_hash, json.dumps(spec, sort_keys=True), time.time()))

    def judges(self) -> dict[str, dict[str, Any]]:
        """Every registered judge: hash -> specification."""
        return {h: json.loads(s) for h, s in self._db.execute("SELECT hash, spec FROM judges ORDER BY created")}

    # ------------------------------------------------------------------ reading
    def get(self, key: PairKey) -> StoredLabel | None:
        """The stored label of ``key``, if any (ok or failed)."""
        row = self._db.execute(f"SELECT * FROM labels WHERE {_KEY}", key.values()).fetchone()
        return None if row is None else _label(row)

    def ok_labels(self, keys: Sequence[PairKey]) -> dict[PairKey, StoredLabel]:
        """The successful labels among ``keys``."""
        out = {}
        for key in keys:
            label = self.get(key)
            if label is not None and label.status == "ok":
                out[key] = label
        return out

    def human_pairs(self) -> set[tuple[str, str]]:
        """``(query_id, doc_id)`` of every human label."""
        return set(self._db.execute("SELECT query_id, doc_id FROM labels WHERE source = 'human'").fetchall())

    def labels(self, judge: str | None = None, *, status: str | None = None) -> Iterator[StoredLabel]:
        """Every label, optionally of one judge and one status, ordered by query and document id."""
        sql, args = "SELECT * FROM labels", []
        where = []
        if judge is not None:
            where.append("judge = ?")
            args.append(judge)
        if status is not None:
            where.append("status = ?")
            args.append(status)
        if where:
            sql += " WHERE " + " AND ".join(where)
        for row in self._db.execute(sql + " ORDER BY query_id, doc_id", args):
            yield _label(row)

    def counts(self) -> list[tuple[str, str, str, int]]:
        """``(judge, source, status, count)`` for a summary of the store."""
        return self._db.execute("SELECT judge, source, status, COUNT(*) FROM labels GROUP BY judge, source, status "
                                "ORDER BY judge, status").fetchall()

    # ------------------------------------------------------------------ claims
    def claim(self, key: PairKey) -> Literal["claimed", "taken", "done"]:
        """Claim ``key`` for this process, in one transaction: ``"done"`` when a successful label is already stored
        (another process may have recorded it since this one looked), ``"taken"`` when a live owner holds it,
        else ``"claimed"``."""
        now = time.time()
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute(f"SELECT 1 FROM labels WHERE {_KEY} AND status = 'ok'", key.values()).fetchone():
                db.execute("COMMIT")
                return "done"
            row = db.execute(f"SELECT owner, host, pid, expires FROM claims WHERE {_KEY}", key.values()).fetchone()
            if row is not None and row[0] != self.owner and not self._stale(row, now):
                db.execute("COMMIT")
                return "taken"
            db.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (*key.values(), self.owner, self.host, self.pid, now + self.lease))
            db.execute("COMMIT")
            return "claimed"
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _stale(self, row: tuple[Any, ...], now: float) -> bool:
        _, host, pid, expires = row
        if expires < now:
            return True
        if host == self.host:
            return not _alive(int(pid))
        return False

    def renew(self, key: PairKey) -> None:
        """Extend this process's claim on ``key`` by a lease (a pair in progress keeps its claim)."""
        self._db.execute(f"UPDATE claims SET expires = ? WHERE {_KEY} AND owner = ?",
                         (time.time() + self.lease, *key.values(), self.owner))

    def release(self, key: PairKey) -> None:
        """Give up this process's claim on ``key`` (nothing was recorded)."""
        self._db.execute(f"DELETE FROM claims WHERE {_KEY} AND owner = ?", (*key.values(), self.owner))

    # ------------------------------------------------------------------ writing
    def record(self, label: StoredLabel) -> bool:
        """Store ``label`` and drop its claim, in one transaction; it replaces an earlier failure of the same key,
        never a grade: a failure recorded after another process's grade is dropped (returns False)."""
        if (label.grade is None) != (label.status == "failed"):
            raise ValueError("a label has a grade exactly when its status is 'ok'")
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            if label.status == "failed" and db.execute(f"SELECT 1 FROM labels WHERE {_KEY} AND status = 'ok'",
                                                       label.key.values()).fetchone():
                db.execute(f"DELETE FROM claims WHERE {_KEY} AND owner = ?", (*label.key.values(), self.owner))
                db.execute("COMMIT")
                return False
            db.execute("INSERT OR REPLACE INTO labels VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (*label.key.values(), label.source, label.status, label.grade, label.reasoning, label.raw,
                        label.error, label.model, label.prompt_tokens, label.completion_tokens, label.cost,
                        label.requests, label.created or time.time()))
            db.execute(f"DELETE FROM claims WHERE {_KEY}", label.key.values())
            db.execute("COMMIT")
            return True
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def latest_labels(self, judge: str, *, status: str | None = None) -> Iterator[StoredLabel]:
        """One label per (query id, doc id) of ``judge``: the most recent (labels of older texts are left out)."""
        latest: dict[tuple[str, str], StoredLabel] = {}
        for label in self.labels(judge, status=status):
            pair = (label.key.query_id, label.key.doc_id)
            if pair not in latest or label.created > latest[pair].created:
                latest[pair] = label
        yield from (latest[pair] for pair in sorted(latest))

    def import_human(self, rows: Iterable[tuple[str, str, float]], assessor: str = "qrels") -> int:
        """Store human grades ``(query_id, doc_id, grade)`` under the judge ``human:<assessor>``; returns the
        number stored. Grades must be integers (a fractional grade is an InputError)."""
        judge = f"human:{assessor}"
        now = time.time()
        batch = []
        for q, d, g in rows:
            if float(g) != int(g):
                raise InputError(f"human grade {g} of ({q}, {d}) is not an integer; the store keeps integer grades")
            batch.append((judge, q, "", d, "", "human", "ok", int(g), "", "", "", assessor, None, None, None, 0, now))
        self._db.execute("BEGIN IMMEDIATE")
        self._db.executemany("INSERT OR REPLACE INTO labels VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             batch)
        self._db.execute("COMMIT")
        return len(batch)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _label(row: tuple[Any, ...]) -> StoredLabel:
    (judge, q, qh, d, dh, source, status, grade, reasoning, raw, error, model, pt, ct, cost, requests, created) = row
    return StoredLabel(key=PairKey(judge, q, qh, d, dh), source=source, status=status, grade=grade,
                       reasoning=reasoning or "", raw=raw or "", error=error or "", model=model or "",
                       prompt_tokens=pt, completion_tokens=ct, cost=cost, requests=requests or 0, created=created)
