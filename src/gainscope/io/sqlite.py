"""What an SQLite file failure means, said once for every store gainscope keeps in SQLite (the judgment store of
:mod:`gainscope.judges.store`, the snapshot store of :mod:`gainscope.search.store`).

:func:`store_failure` turns an ``sqlite3.Error`` into a :class:`~gainscope.errors.StoreError` that names the file,
what happened and what to do, by SQLite's primary result code (``SQLITE_NOTADB``, ``SQLITE_CORRUPT``,
``SQLITE_FULL``, ``SQLITE_IOERR``, ``SQLITE_READONLY``/``SQLITE_PERM``, ``SQLITE_CANTOPEN``,
``SQLITE_BUSY``/``SQLITE_LOCKED``), never by the wording of the message.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gainscope.errors import StoreError

__all__ = ["sqlite_code", "store_failure"]


def sqlite_code(exc: sqlite3.Error) -> int:
    """The primary SQLite result code of ``exc`` (``SQLITE_IOERR`` for ``SQLITE_IOERR_WRITE``...); 0 if unknown."""
    return (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF


def store_failure(exc: sqlite3.Error, path: str | Path, *, kind: str, items: str, readonly: bool = False,
                  lock_wait: float | None = None) -> StoreError:
    """The :class:`~gainscope.errors.StoreError` for ``exc`` raised by the store ``kind`` (``"judgment store"``,
    ``"snapshot store"``) at ``path``: ``"PATH: what happened (SQLite's words [CODE]). What to do"``. ``items``
    names what the store holds (``"labels"``, ``"results"``): what was recorded before a failure is kept (each
    store commits as it goes). ``readonly``: the store was opened for reading only; ``lock_wait``: the seconds a
    lock was waited for."""
    where = str(path)
    code = sqlite_code(exc)
    said = f"{exc} [{getattr(exc, 'sqlite_errorname', 'sqlite error')}]"
    if code == sqlite3.SQLITE_NOTADB:
        text = (f"not a {kind}: the file is not an SQLite database ({said}). Give the path of a store gainscope "
                "wrote, or a new file name to start an empty store")
    elif code == sqlite3.SQLITE_CORRUPT:
        text = (f"the {kind} is damaged, e.g. truncated or overwritten ({said}). Restore it from a backup, or save "
                f"what is readable with `sqlite3 {where} .recover | sqlite3 recovered.sqlite` and use that file; a "
                "new file name starts an empty store")
    elif code == sqlite3.SQLITE_FULL:
        text = (f"no space left to write the {kind} ({said}). Free disk space or move the store to another disk, "
                f"then run again: the {items} recorded so far are kept and are not asked for again")
    elif code == sqlite3.SQLITE_IOERR:
        text = (f"the {kind} could not be read or written ({said}). Check the disk: free space, a file size limit "
                f"(ulimit -f), a device removed or unmounted; {items} recorded before are kept")
    elif code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM) and readonly:
        text = f"the {kind} was opened read-only and cannot be written ({said})"
    elif code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM):
        text = (f"the {kind} cannot be written ({said}): the file, its folder or the file system is read-only. "
                "Make them writable, or work on a copy in a writable folder")
    elif code == sqlite3.SQLITE_CANTOPEN:
        text = (f"cannot open the {kind} ({said}); check that the path names a file in a folder that exists and "
                f"that you may read (and, to add {items}, write)")
    elif code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        waited = f" for {lock_wait:g} s" if lock_wait is not None else ""
        text = (f"the {kind} stayed locked by another process{waited} ({said}); let that process finish or stop "
                "it, then run again")
    else:
        text = f"the {kind} failed ({said})"
    return StoreError(f"{where}: {text}", path=where)
