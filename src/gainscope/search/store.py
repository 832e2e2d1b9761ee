"""The snapshot store: every query a run sent, what was sent, what came back, and when.

A *snapshot* is one engine configuration run over a set of queries: its name (unique in the store), the engine's
name and kind, its configuration (:meth:`Engine.configuration`) and that configuration's hash, the knob values,
the depth asked for, when it was created and a note. For each query it holds one *result*: the query (id, text,
options, position in the queries file), ``ok`` or ``failed``, the request sent (credentials as ``***``), the raw
response, the hits (id, score, display fields) and the engine's total, the latency, the time it was sent, the
attempts, and for a failure the HTTP status and the error. A failed query is recorded as failed, never as an
empty list; only a result ``ok`` with no hits means the engine found nothing.

Results are written as each query ends (one transaction each), so a run killed at any moment keeps everything
recorded before, and a rerun into the same snapshot sends only what is missing (and, on request, what failed).

Storage: SQLite (WAL) by default (:meth:`SnapshotStore.open`). Every statement is plain enough for PostgreSQL too
(TEXT, BIGINT, DOUBLE PRECISION, text ids made by the caller, ``INSERT ... ON CONFLICT ... DO UPDATE``) and goes
through a DB-API cursor with explicit commits (:class:`gainscope.io.database.Database`, the one way gainscope speaks
to a database), so a workspace in PostgreSQL can hold the same tables: ``SnapshotStore(connection, path=...,
paramstyle="format")``, or ``SnapshotStore(database, path=...)`` over a :class:`~gainscope.io.database.Database`
shared with other stores (the dashboard's workspace), then :meth:`~SnapshotStore.create_schema` (only
:meth:`~SnapshotStore.open`'s checks of an SQLite file, and the translation of sqlite3 errors, are SQLite's).
"""

from __future__ import annotations

import datetime
import json
import sqlite3
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from gainscope.errors import InputError, StoreError
from gainscope.io.database import Database
from gainscope.search.engine import Hit

__all__ = ["QueryResult", "Snapshot", "SnapshotStore", "utc_now"]

KIND = "gainscope-search-snapshots"
SCHEMA_VERSION = "1"
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS gainscope_store (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS snapshots (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, engine TEXT NOT NULL, "
    "kind TEXT NOT NULL, configuration TEXT NOT NULL, configuration_hash TEXT NOT NULL, knobs TEXT NOT NULL, "
    "top_k INTEGER NOT NULL, created TEXT NOT NULL, note TEXT, source TEXT)",
    "CREATE TABLE IF NOT EXISTS snapshot_results (snapshot_id TEXT NOT NULL REFERENCES snapshots(id), "
    "query_id TEXT NOT NULL, position INTEGER NOT NULL, query TEXT NOT NULL, options TEXT, status TEXT NOT NULL, "
    "request TEXT, response TEXT, hits TEXT, total BIGINT, latency DOUBLE PRECISION, sent TEXT NOT NULL, "
    "attempts INTEGER NOT NULL, http_status INTEGER, error TEXT, PRIMARY KEY (snapshot_id, query_id))",
)
_SNAPSHOT_COLUMNS = "id, name, engine, kind, configuration, configuration_hash, knobs, top_k, created, note, source"
_RESULT_COLUMNS = ("query_id, position, query, options, status, request, response, hits, total, latency, sent, "
                   "attempts, http_status, error")


def utc_now() -> str:
    """The time now in UTC, ISO 8601 with microseconds."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class Snapshot:
    """One engine configuration run over queries (see the module docstring)."""

    id: str
    name: str
    engine: str
    kind: str
    configuration: dict[str, Any]
    configuration_hash: str
    knobs: dict[str, Any]
    top: int
    created: str
    note: str | None = None
    source: str | None = None

    @property
    def short_hash(self) -> str:
        """The first 8 characters of the configuration hash."""
        return self.configuration_hash[:8]


@dataclass(frozen=True)
class QueryResult:
    """One query of a snapshot (see the module docstring): ``status`` is ``ok`` or ``failed``."""

    query_id: str
    position: int
    query: str
    status: str
    sent: str
    attempts: int
    options: dict[str, Any] = field(default_factory=dict)
    request: Mapping[str, Any] | None = None
    response: str | None = None
    hits: tuple[Hit, ...] = ()
    total: int | None = None
    latency: float | None = None
    http_status: int | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when the engine answered (zero hits included)."""
        return self.status == "ok"


class SnapshotStore:
    """Snapshots in a database (see the module docstring). Open an SQLite file with :meth:`open`; use as a
    context manager, or call :meth:`close`."""

    def __init__(self, connection: Any, *, path: str, paramstyle: str = "qmark") -> None:
        if isinstance(connection, Database):  # a database shared with other stores (the dashboard's workspace)
            self.database = connection
        else:
            self.database = Database(connection, path=path, paramstyle=paramstyle,
                                     translate=lambda exc: _translated(exc, Path(path))
                                     if isinstance(exc, sqlite3.Error) else None)
        self._db = self.database.connection
        self.path = path

    @classmethod
    def open(cls, path: str | Path, *, readonly: bool = False) -> SnapshotStore:
        """Open (or create, unless ``readonly``) the SQLite store at ``path``."""
        p = Path(path)
        if readonly and not p.exists():
            raise StoreError(f"{p}: no such snapshot store; take a snapshot first (gainscope search ... --snapshot "
                             f"{p})", path=str(p))
        if not readonly and not p.parent.exists():
            raise StoreError(f"{p}: the folder {p.parent} does not exist; create it or choose another --snapshot path",
                             path=str(p))
        try:
            if readonly:
                db = sqlite3.connect(p.resolve().as_uri() + "?mode=ro", uri=True, timeout=30)
            else:
                db = sqlite3.connect(p, timeout=30)
            store = cls(db, path=str(p))
            store._setup(readonly)
        except sqlite3.Error as exc:
            raise _translated(exc, p) from None
        return store

    def _setup(self, readonly: bool) -> None:
        db = self._db
        tables = {row[0] for row in self._query("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and "gainscope_store" not in tables:
            raise StoreError(f"{self.path} is an SQLite database of another program (tables: "
                             f"{', '.join(sorted(tables)[:5])}); it is left untouched: choose another --snapshot file",
                             path=self.path)
        if tables:
            meta = dict(self._query("SELECT key, value FROM gainscope_store"))
            if meta.get("kind") != KIND:
                raise StoreError(f"{self.path} is a gainscope store of another kind ({meta.get('kind')!r}), not a "
                                 "snapshot store; choose another --snapshot file", path=self.path)
            if meta.get("schema") != SCHEMA_VERSION:
                raise StoreError(f"{self.path}: snapshot store schema {meta.get('schema')!r}; this gainscope reads "
                                 f"schema {SCHEMA_VERSION}", path=self.path)
        if readonly:
            if not tables:
                raise StoreError(f"{self.path} is empty, not a snapshot store", path=self.path)
            return
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        self.create_schema()

    # ---------------------------------------------------------------------------------------- plumbing
    def _query(self, statement: str, params: Sequence[Any] = ()) -> list[Any]:
        """The rows of a SELECT (the statement written with ``?`` marks)."""
        return self.database.query(statement, params)

    def _write(self, *statements: tuple[str, Sequence[Any]]) -> None:
        """Run ``statements`` in one transaction: committed together, or rolled back."""
        self.database.write(*statements)

    def create_schema(self) -> None:
        """Create the tables when they do not exist (portable SQL: SQLite and PostgreSQL), and mark the database
        as a snapshot store."""
        self._write(*((statement, ()) for statement in SCHEMA))
        if not self._query("SELECT value FROM gainscope_store WHERE key = ?", ("kind",)):
            self._write(("INSERT INTO gainscope_store (key, value) VALUES (?, ?)", ("kind", KIND)),
                        ("INSERT INTO gainscope_store (key, value) VALUES (?, ?)", ("schema", SCHEMA_VERSION)))

    def close(self) -> None:
        """Close the database."""
        self.database.close()

    def __enter__(self) -> SnapshotStore:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # ---------------------------------------------------------------------------------------- snapshots
    def snapshots(self) -> list[Snapshot]:
        """Every snapshot, oldest first."""
        rows = self._query(f"SELECT {_SNAPSHOT_COLUMNS} FROM snapshots ORDER BY created, name")
        return [_snapshot(row) for row in rows]

    def find(self, name: str) -> Snapshot | None:
        """The snapshot named ``name``, or None."""
        rows = self._query(f"SELECT {_SNAPSHOT_COLUMNS} FROM snapshots WHERE name = ?", (name,))
        return _snapshot(rows[0]) if rows else None

    def get(self, name: str) -> Snapshot:
        """The snapshot named ``name``; an error listing the store's snapshots when there is none."""
        found = self.find(name)
        if found is None:
            names = [s.name for s in self.snapshots()]
            import difflib

            close = difflib.get_close_matches(name, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else (f"; it holds: {', '.join(names)}" if names else
                                                                   "; it holds no snapshot")
            raise InputError(f"{self.path} has no snapshot {name!r}{hint}")
        return found

    def create(self, *, name: str, engine: str, kind: str, configuration: Mapping[str, Any], configuration_hash: str,
               knobs: Mapping[str, Any], top: int, note: str | None = None, source: str | None = None) -> Snapshot:
        """A new, empty snapshot."""
        snapshot = Snapshot(uuid.uuid4().hex, name, engine, kind, dict(configuration), configuration_hash,
                            dict(knobs), top, utc_now(), note, source)
        self._write((f"INSERT INTO snapshots ({_SNAPSHOT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (snapshot.id, name, engine, kind, _json(configuration), configuration_hash, _json(knobs), top,
                      snapshot.created, note, source)))
        return snapshot

    def delete(self, name: str) -> None:
        """Remove a snapshot and its results."""
        snapshot = self.get(name)
        self._write(("DELETE FROM snapshot_results WHERE snapshot_id = ?", (snapshot.id,)),
                    ("DELETE FROM snapshots WHERE id = ?", (snapshot.id,)))

    # ---------------------------------------------------------------------------------------- results
    def record(self, snapshot: Snapshot, result: QueryResult) -> None:
        """Write one query's result (replacing an earlier result of the same query), committed at once."""
        values = (snapshot.id, result.query_id, result.position, result.query, _json(result.options),
                  result.status, None if result.request is None else _json(result.request), result.response,
                  _json([h.to_json() for h in result.hits]), result.total, result.latency, result.sent,
                  result.attempts, result.http_status, result.error)
        columns = "snapshot_id, " + _RESULT_COLUMNS
        update = ", ".join(f"{c} = excluded.{c}" for c in _RESULT_COLUMNS.split(", ")[1:])
        self._write((f"INSERT INTO snapshot_results ({columns}) VALUES ({', '.join('?' * len(values))}) "
                     f"ON CONFLICT (snapshot_id, query_id) DO UPDATE SET {update}", values))

    def statuses(self, snapshot: Snapshot) -> dict[str, str]:
        """``{query id: "ok" | "failed"}`` of what is recorded."""
        rows = self._query("SELECT query_id, status FROM snapshot_results WHERE snapshot_id = ?", (snapshot.id,))
        return {row[0]: row[1] for row in rows}

    def results(self, snapshot: Snapshot, *, responses: bool = True) -> list[QueryResult]:
        """The recorded results in the order of the queries file (``responses=False`` leaves the raw responses and
        requests out, which is faster for large snapshots)."""
        columns = _RESULT_COLUMNS if responses else _RESULT_COLUMNS.replace("request, response", "NULL, NULL")
        rows = self._query(f"SELECT {columns} FROM snapshot_results WHERE snapshot_id = ? ORDER BY position, query_id",
                           (snapshot.id,))
        return [_result(row) for row in rows]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _snapshot(row: Sequence[Any]) -> Snapshot:
    return Snapshot(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5], json.loads(row[6]), int(row[7]),
                    row[8], row[9], row[10])


def _result(row: Sequence[Any]) -> QueryResult:
    (query_id, position, query, options, status, request, response, hits, total, latency, sent, attempts,
     http_status, error) = row
    return QueryResult(query_id, int(position), query, status, sent, int(attempts),
                       json.loads(options) if options else {}, json.loads(request) if request else None, response,
                       tuple(Hit.from_json(h) for h in json.loads(hits or "[]")),
                       None if total is None else int(total), latency, http_status, error)


def _translated(exc: sqlite3.Error, path: Path) -> StoreError:
    """An sqlite3 error as a StoreError naming the file and what to do."""
    text = str(exc)
    lower = text.lower()
    if "not a database" in lower or "malformed" in lower or "disk image" in lower:
        what = "is not a snapshot store or is damaged (" + text + "); choose another --snapshot file"
    elif "readonly" in lower or "read-only" in lower:
        what = f"cannot be written ({text}): the file or its folder is read-only; check the permissions"
    elif "full" in lower:
        what = f"cannot be written: the disk is full ({text}); free space, then run again (what was recorded stays)"
    elif "locked" in lower or "busy" in lower:
        what = f"is locked by another program ({text}); wait for it to finish, then run again"
    elif "unable to open" in lower:
        what = f"cannot be opened ({text}); check that the path and its folder exist and are readable"
    else:
        what = f"failed: {type(exc).__name__}: {text}"
    return StoreError(f"snapshot store {path} {what}", path=str(path))
