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

Failures of the file itself are a :class:`~gainscope.errors.StoreError` that names the store and what to do, never
an sqlite3 exception: a file that is not an SQLite database (random bytes, a text file), a damaged one (truncated,
overwritten), an SQLite database of another program (its tables are left untouched: nothing is added to it), a
read-only file or folder, a full disk or another I/O error. A file without write permission is refused before
anything is written, also for root (the permission bits say the owner wants it left as it is). Labels committed
before a failure stay in the store.

``JudgmentStore(path, readonly=True)`` opens the store with SQLite's ``mode=ro`` and writes nothing (no claims,
no journal mode, no tables): it reads a store on a read-only file or folder. When SQLite cannot set up its
shared-memory index there (a WAL store in a folder this user cannot write), the store is read as ``immutable``
provided its ``-wal`` file holds nothing (else the labels it holds would be missed, and that is refused).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import socket
import sqlite3
import stat
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

from gainscope.errors import InputError, StoreError

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

#: seconds a locked store is waited for (SQLite's busy timeout, and the retries of a store being created)
LOCK_WAIT = 60.0


def _schema_columns() -> dict[str, list[str]]:
    """The column names of every table of :data:`SCHEMA`, read from SQLite itself (one source of truth)."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(SCHEMA)
        return {table: [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
                for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        db.close()


_COLUMNS = _schema_columns()


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


P = ParamSpec("P")
R = TypeVar("R")


def _translated(method: Callable[Concatenate[JudgmentStore, P], R]) -> Callable[Concatenate[JudgmentStore, P], R]:
    """``method`` with every sqlite3 error turned into a :class:`~gainscope.errors.StoreError` (see
    :meth:`JudgmentStore._failure`)."""

    @functools.wraps(method)
    def wrapper(self: JudgmentStore, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._errors():
            return method(self, *args, **kwargs)

    return wrapper


class JudgmentStore:
    """A SQLite judgment store (see the module docstring). Use as a context manager or call :meth:`close`.

    ``readonly=True`` opens it for reading only (``mode=ro``): nothing is written, and it works on a read-only
    file or folder. Every failure of the file is a :class:`~gainscope.errors.StoreError`.
    """

    def __init__(self, path: str | Path, *, lease: float = 120.0, readonly: bool = False) -> None:
        self.path = Path(path)
        self.lease = lease
        self.readonly = readonly
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.owner = f"{self.host}:{self.pid}:{uuid.uuid4().hex[:8]}"
        self._db = self._open_readonly() if readonly else self._open()

    def _open(self) -> sqlite3.Connection:
        """Connect for writing, check that the file is a judgment store (or empty), switch to WAL and create the
        tables. Two processes creating one new store at once can find it locked while the other switches the
        journal mode (SQLite's busy timeout does not cover that), so a locked database is tried again for up to
        :data:`LOCK_WAIT` seconds."""
        self._check_writable()
        deadline = time.monotonic() + LOCK_WAIT
        delay = 0.01
        while True:
            try:
                db = sqlite3.connect(self.path, timeout=LOCK_WAIT, isolation_level=None)
            except sqlite3.Error as exc:
                raise self._failure(exc) from exc
            try:
                self._check_schema(db)  # before anything is written: another program's database stays untouched
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(SCHEMA)
                return db
            except sqlite3.Error as exc:
                db.close()
                if _code(exc) not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or time.monotonic() > deadline:
                    raise self._failure(exc) from exc
                time.sleep(delay)
                delay = min(0.5, delay * 2)
            except StoreError:
                db.close()
                raise

    def _open_readonly(self) -> sqlite3.Connection:
        """Connect with ``mode=ro`` and check the tables; see the module docstring for the ``immutable`` case."""
        if not self.path.is_file():
            raise StoreError(f"{self.path}: no such judgment store (no file there); check the path",
                             path=str(self.path))
        uri = self.path.absolute().as_uri()
        try:
            return self._connect_checked(uri + "?mode=ro")
        except sqlite3.Error as exc:
            wal = Path(f"{self.path}-wal")
            if _code(exc) not in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN):
                raise self._failure(exc) from exc
            if wal.exists() and wal.stat().st_size > 0:
                raise StoreError(
                    f"{self.path}: cannot read the judgment store here ({exc}): SQLite needs to write its index "
                    f"beside the store, this folder is not writable, and {wal.name} holds labels not yet merged "
                    "into the store. Open it once where its folder is writable (or copy the store and its -wal "
                    "file to a writable folder)", path=str(self.path)) from exc
        try:  # no index can be made, and there is no log to index: the file alone is the whole store
            return self._connect_checked(uri + "?mode=ro&immutable=1")
        except sqlite3.Error as exc:
            raise self._failure(exc) from exc

    def _connect_checked(self, uri: str) -> sqlite3.Connection:
        db = sqlite3.connect(uri, uri=True, timeout=LOCK_WAIT, isolation_level=None)
        try:
            self._check_schema(db)
        except BaseException:
            db.close()
            raise
        return db

    def _check_writable(self) -> None:
        """Refuse a read-only store or folder before SQLite tries (and before root writes a file marked read-only)."""
        where = str(self.path)
        folder = self.path.parent
        if not folder.is_dir():
            raise StoreError(f"{where}: cannot create the judgment store: there is no folder {folder}; create it "
                             "or give another path", path=where)
        if self.path.exists() and not stat.S_ISREG(self.path.stat().st_mode):
            raise StoreError(f"{where}: not a judgment store (not a regular file); give the path of a store file, or "
                             "a new file name to start an empty store", path=where)
        # the journal files too: a read of a read-only store leaves them with the store's permissions
        files = [f for f in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")) if f.exists()]
        locked = [f for f in files if not f.stat().st_mode & 0o222 or not os.access(f, os.W_OK)]
        if locked:
            names = " ".join(str(f) for f in locked)
            modes = ", ".join(f"{f.name} {stat.filemode(f.stat().st_mode)}" for f in locked)
            raise StoreError(f"{where}: the judgment store is read-only ({modes}), so no label can be added to it. "
                             f"Make it writable (chmod u+w {names}) or work on a copy; reading it needs no write "
                             "access (gainscope store info, store export)", path=where)
        if not os.access(folder, os.W_OK):
            raise StoreError(f"{where}: the folder {folder} is not writable, and the judgment store writes its "
                             f"journal ({self.path.name}-wal, {self.path.name}-shm) beside the file. Make the folder "
                             "writable or put the store in another folder", path=where)

    def _check_schema(self, db: sqlite3.Connection) -> None:
        """A judgment store, or (for writing) an empty database; never another program's database."""
        where = str(self.path)
        tables = {name: [row[1] for row in db.execute(f"PRAGMA table_info({_quoted(name)})")]
                  for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                  if not name.startswith("sqlite_")}
        foreign = sorted(set(tables) - set(_COLUMNS))
        if foreign:
            raise StoreError(f"{where}: an SQLite database of another program, not a judgment store (tables "
                             f"{', '.join(foreign)}); it is left untouched. Give the path of a store gainscope "
                             "wrote, or a new file name to start an empty store", path=where)
        for name, columns in tables.items():
            if columns != _COLUMNS[name]:
                raise StoreError(f"{where}: not a judgment store this gainscope can use: its table {name} has the "
                                 f"columns {', '.join(columns)}, where {', '.join(_COLUMNS[name])} are expected "
                                 "(another program or version wrote it). Use a new file name for a new store",
                                 path=where)
        if self.readonly and not {"judges", "labels"} <= set(tables):
            raise StoreError(f"{where}: no judgment store in this file (an empty SQLite database); give the path of "
                             "a store that `gainscope judge` wrote", path=where)

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """Turn sqlite3 errors raised inside into StoreError."""
        try:
            yield
        except sqlite3.Error as exc:
            raise self._failure(exc) from exc

    def _failure(self, exc: sqlite3.Error) -> StoreError:
        """The StoreError for an sqlite3 error: the store's path, what happened and what to do."""
        where = str(self.path)
        code = _code(exc)
        said = f"{exc} [{getattr(exc, 'sqlite_errorname', 'sqlite error')}]"
        if code == sqlite3.SQLITE_NOTADB:
            text = (f"not a judgment store: the file is not an SQLite database ({said}). Give the path of a store "
                    "gainscope wrote, or a new file name to start an empty store")
        elif code == sqlite3.SQLITE_CORRUPT:
            text = (f"the judgment store is damaged, e.g. truncated or overwritten ({said}). Restore it from a "
                    f"backup, or save what is readable with `sqlite3 {where} .recover | sqlite3 recovered.sqlite` "
                    "and use that file; a new file name starts an empty store")
        elif code == sqlite3.SQLITE_FULL:
            text = (f"no space left to write the judgment store ({said}). Free disk space or move the store to "
                    "another disk, then run again: the labels recorded so far are kept and are not asked for again")
        elif code == sqlite3.SQLITE_IOERR:
            text = (f"the judgment store could not be read or written ({said}). Check the disk: free space, a file "
                    "size limit (ulimit -f), a device removed or unmounted; labels recorded before are kept")
        elif code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM) and self.readonly:
            text = f"the judgment store was opened read-only and cannot be written ({said})"
        elif code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM):
            text = (f"the judgment store cannot be written ({said}): the file, its folder or the file system is "
                    "read-only. Make them writable, or work on a copy in a writable folder")
        elif code == sqlite3.SQLITE_CANTOPEN:
            text = (f"cannot open the judgment store ({said}); check that the path names a file in a folder that "
                    "exists and that you may read (and, to add labels, write)")
        elif code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            text = (f"the judgment store stayed locked by another process for {LOCK_WAIT:g} s ({said}); let that "
                    "process finish or stop it, then run again")
        else:
            text = f"the judgment store failed ({said})"
        return StoreError(f"{where}: {text}", path=where)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolled back when anything fails (if SQLite has not already)."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            raise

    def __enter__(self) -> JudgmentStore:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:  # the error on its way out says more than a failing close (and claims left are stale at exit)
            with contextlib.suppress(StoreError):
                self.close()

    def close(self) -> None:
        """Release this process's claims and close the file (a store opened read-only holds none)."""
        try:
            if not self.readonly:
                with self._errors():
                    self._db.execute("DELETE FROM claims WHERE owner = ?", (self.owner,))
        finally:
            self._db.close()

    # ------------------------------------------------------------------ judges
    @_translated
    def register_judge(self, judge_hash: str, spec: dict[str, Any]) -> None:
        """Record a judge's canonical specification (once)."""
        self._db.execute("INSERT OR IGNORE INTO judges VALUES (?, ?, ?)",
                         (judge_hash, json.dumps(spec, sort_keys=True), time.time()))

    @_translated
    def judges(self) -> dict[str, dict[str, Any]]:
        """Every registered judge: hash -> specification."""
        return {h: json.loads(s) for h, s in self._db.execute("SELECT hash, spec FROM judges ORDER BY created")}

    # ------------------------------------------------------------------ reading
    @_translated
    def get(self, key: PairKey) -> StoredLabel | None:
        """The stored label of ``key``, if any (ok or failed)."""
        row = self._db.execute(f"SELECT * FROM labels WHERE {_KEY}", key.values()).fetchone()
        return None if row is None else _label(row)

    @_translated
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
        with self._errors():  # a damaged page can surface at any row
            for row in self._db.execute(sql + " ORDER BY query_id, doc_id", args):
                yield _label(row)

    @_translated
    def counts(self) -> list[tuple[str, str, str, int]]:
        """``(judge, source, status, count)`` for a summary of the store."""
        return self._db.execute("SELECT judge, source, status, COUNT(*) FROM labels GROUP BY judge, source, status "
                                "ORDER BY judge, status").fetchall()

    # ------------------------------------------------------------------ claims
    @_translated
    def claim(self, key: PairKey) -> Literal["claimed", "taken", "done"]:
        """Claim ``key`` for this process, in one transaction: ``"done"`` when a successful label is already stored
        (another process may have recorded it since this one looked), ``"taken"`` when a live owner holds it,
        else ``"claimed"``."""
        now = time.time()
        with self._transaction() as db:
            if db.execute(f"SELECT 1 FROM labels WHERE {_KEY} AND status = 'ok'", key.values()).fetchone():
                return "done"
            row = db.execute(f"SELECT owner, host, pid, expires FROM claims WHERE {_KEY}", key.values()).fetchone()
            if row is not None and row[0] != self.owner and not self._stale(row, now):
                return "taken"
            db.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (*key.values(), self.owner, self.host, self.pid, now + self.lease))
            return "claimed"

    def _stale(self, row: tuple[Any, ...], now: float) -> bool:
        _, host, pid, expires = row
        if expires < now:
            return True
        if host == self.host:
            return not _alive(int(pid))
        return False

    @_translated
    def renew(self, key: PairKey) -> None:
        """Extend this process's claim on ``key`` by a lease (a pair in progress keeps its claim)."""
        self._db.execute(f"UPDATE claims SET expires = ? WHERE {_KEY} AND owner = ?",
                         (time.time() + self.lease, *key.values(), self.owner))

    @_translated
    def release(self, key: PairKey) -> None:
        """Give up this process's claim on ``key`` (nothing was recorded)."""
        self._db.execute(f"DELETE FROM claims WHERE {_KEY} AND owner = ?", (*key.values(), self.owner))

    # ------------------------------------------------------------------ writing
    @_translated
    def record(self, label: StoredLabel) -> bool:
        """Store ``label`` and drop its claim, in one transaction; it replaces an earlier failure of the same key,
        never a grade: a failure recorded after another process's grade is dropped (returns False)."""
        if (label.grade is None) != (label.status == "failed"):
            raise ValueError("a label has a grade exactly when its status is 'ok'")
        with self._transaction() as db:
            if label.status == "failed" and db.execute(f"SELECT 1 FROM labels WHERE {_KEY} AND status = 'ok'",
                                                       label.key.values()).fetchone():
                db.execute(f"DELETE FROM claims WHERE {_KEY} AND owner = ?", (*label.key.values(), self.owner))
                return False
            db.execute("INSERT OR REPLACE INTO labels VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (*label.key.values(), label.source, label.status, label.grade, label.reasoning, label.raw,
                        label.error, label.model, label.prompt_tokens, label.completion_tokens, label.cost,
                        label.requests, label.created or time.time()))
            db.execute(f"DELETE FROM claims WHERE {_KEY}", label.key.values())
            return True

    def latest_labels(self, judge: str, *, status: str | None = None) -> Iterator[StoredLabel]:
        """One label per (query id, doc id) of ``judge``: the most recent (labels of older texts are left out)."""
        latest: dict[tuple[str, str], StoredLabel] = {}
        for label in self.labels(judge, status=status):
            pair = (label.key.query_id, label.key.doc_id)
            if pair not in latest or label.created > latest[pair].created:
                latest[pair] = label
        yield from (latest[pair] for pair in sorted(latest))

    @_translated
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
        with self._transaction() as db:
            db.executemany("INSERT OR REPLACE INTO labels VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           batch)
        return len(batch)


def _code(exc: sqlite3.Error) -> int:
    """The primary SQLite result code of ``exc`` (``SQLITE_IOERR`` for ``SQLITE_IOERR_WRITE``...); 0 if unknown."""
    return (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF


def _quoted(name: str) -> str:
    """An SQL identifier, quoted (table names of a foreign database can be anything)."""
    return '"' + name.replace('"', '""') + '"'


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
