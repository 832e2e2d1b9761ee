"""One way to speak to a database: portable SQL through a DB-API connection, SQLite or PostgreSQL.

The stores that keep state between runs -- the search snapshot store (:mod:`gainscope.search.store`) and the
dashboard's workspace (:mod:`gainscope.server.store`) -- write SQL that both SQLite and PostgreSQL accept
(``TEXT``, ``INTEGER``, ``BIGINT``, ``DOUBLE PRECISION``, text ids made by the caller, ``INSERT ... ON CONFLICT
(...) DO UPDATE SET c = excluded.c``) with ``?`` marks, and run it through a :class:`Database`:

* :meth:`Database.query` runs one SELECT and returns its rows; :meth:`Database.write` runs statements in one
  transaction, committed together or rolled back; :meth:`Database.transaction` gives a cursor for several
  statements that read and write in one transaction;
* the marks become the driver's (``?`` for sqlite3's qmark style, ``%s`` for psycopg's format style);
* a lock serialises every use, so one connection can serve several threads (a web server's);
* errors of the driver become :class:`~gainscope.errors.StoreError` through the ``translate`` hook the owner
  gives (each store words them for its own users), else a generic one naming the database.

:func:`connect` opens what a user names: a PostgreSQL URL (``postgresql://user@host:5432/db``, needs the
``postgres`` extra: psycopg 3) or an SQLite file path.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gainscope.errors import MissingDependencyError, StoreError

__all__ = ["Cursor", "Database", "connect", "is_postgres_url", "redact_url"]

_POSTGRES = re.compile(r"^postgres(?:ql)?://", re.IGNORECASE)
_USERINFO = re.compile(r"^([a-z]+://)([^@/]*)@", re.IGNORECASE)


def is_postgres_url(text: str) -> bool:
    """True for ``postgresql://...`` and ``postgres://...``."""
    return bool(_POSTGRES.match(text))


def redact_url(url: str) -> str:
    """A database URL with its password replaced by ``***`` (the user name is kept)."""
    def hide(m: re.Match[str]) -> str:
        user, sep, _ = m.group(2).partition(":")
        return f"{m.group(1)}{user}{':***' if sep else ''}@"

    return _USERINFO.sub(hide, url, count=1)


class Cursor:
    """A cursor of a :class:`Database` transaction that takes statements with ``?`` marks."""

    def __init__(self, database: Database, cursor: Any) -> None:
        self._database = database
        self._cursor = cursor

    def execute(self, statement: str, params: Sequence[Any] = ()) -> Cursor:
        """Run one statement."""
        self._cursor.execute(self._database.sql(statement), tuple(params))
        return self

    def executemany(self, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for every row of parameters."""
        if rows:
            self._cursor.executemany(self._database.sql(statement), [tuple(r) for r in rows])

    def fetchall(self) -> list[Any]:
        """The rows of the last SELECT."""
        return list(self._cursor.fetchall())

    def fetchone(self) -> Any:
        """The next row of the last SELECT, None at the end."""
        return self._cursor.fetchone()


class Database:
    """A DB-API connection spoken to with portable SQL (see the module docstring).

    ``path`` names the database in messages (a file path, or a URL without its password); ``paramstyle`` is
    ``qmark`` (sqlite3) or ``format`` (psycopg); ``translate`` turns a driver error into a
    :class:`StoreError` (or returns None to use the generic message); ``errors`` are the driver's exception
    classes (sqlite3's by default).
    """

    def __init__(self, connection: Any, *, path: str, paramstyle: str = "qmark",
                 translate: Callable[[BaseException], StoreError | None] | None = None,
                 errors: tuple[type[BaseException], ...] = (sqlite3.Error,), dialect: str = "sqlite") -> None:
        if paramstyle not in ("qmark", "format"):
            raise ValueError(f"paramstyle must be 'qmark' or 'format'; got {paramstyle!r}")
        self.connection = connection
        self.path = path
        self.paramstyle = paramstyle
        self.dialect = dialect
        self.lock = threading.RLock()
        self._translate = translate
        self._errors = errors

    def sql(self, statement: str) -> str:
        """``statement`` (written with ``?`` marks) in the driver's parameter style."""
        return statement if self.paramstyle == "qmark" else statement.replace("?", "%s")

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Driver errors inside become StoreErrors (see the class docstring)."""
        try:
            yield
        except self._errors as exc:
            translated = self._translate(exc) if self._translate is not None else None
            raise (translated or StoreError(f"database {self.path} failed: {type(exc).__name__}: "
                                            f"{str(exc).strip()}", path=self.path)) from None

    def query(self, statement: str, params: Sequence[Any] = ()) -> list[Any]:
        """The rows of one SELECT."""
        with self.lock, self.guard():
            cursor = self.connection.cursor()
            try:
                cursor.execute(self.sql(statement), tuple(params))
                rows = list(cursor.fetchall())
            finally:
                cursor.close()
            if self.dialect == "postgres":
                self.connection.commit()  # end the read's transaction: no idle transaction holds locks
            return rows

    def write(self, *statements: tuple[str, Sequence[Any]]) -> None:
        """Run ``statements`` in one transaction: committed together, or rolled back."""
        with self.transaction() as cursor:
            for statement, params in statements:
                cursor.execute(statement, params)

    @contextmanager
    def transaction(self) -> Iterator[Cursor]:
        """A cursor whose statements are committed together when the block ends, or rolled back when it
        raises."""
        with self.lock, self.guard():
            raw = self.connection.cursor()
            try:
                yield Cursor(self, raw)
                self.connection.commit()
            except BaseException:
                self.connection.rollback()
                raise
            finally:
                raw.close()

    def close(self) -> None:
        """Close the connection."""
        with self.lock:
            self.connection.close()


def connect(target: str | Path, *, check_same_thread: bool = False, timeout: float = 30.0,
            translate: Callable[[BaseException], StoreError | None] | None = None) -> Database:
    """A :class:`Database` for a PostgreSQL URL or an SQLite file (created when missing; WAL mode)."""
    text = str(target)
    if is_postgres_url(text):
        try:
            import psycopg
        except ImportError:
            raise MissingDependencyError("a PostgreSQL database needs psycopg 3: pip install 'gainscope[postgres]'") \
                from None
        shown = redact_url(text)
        try:
            remote: Any = psycopg.connect(text, connect_timeout=max(1, int(timeout)))
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to {shown}: {str(exc).strip()}; check the URL, that the server runs "
                             "and accepts this user", path=shown) from None
        return Database(remote, path=shown, paramstyle="format", translate=translate,
                        errors=(psycopg.Error,), dialect="postgres")
    path = Path(text)
    try:
        connection = sqlite3.connect(path, timeout=timeout, check_same_thread=check_same_thread)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.Error as exc:
        translated = translate(exc) if translate is not None else None
        raise (translated or StoreError(f"cannot open the SQLite database {path}: {exc}", path=str(path))) from None
    return Database(connection, path=str(path), translate=translate)
