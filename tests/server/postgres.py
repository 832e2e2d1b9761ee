"""A throwaway PostgreSQL server for the dashboard's tests: Debian's binaries (``/usr/lib/postgresql/*/bin``, else
``initdb`` and ``pg_ctl`` on PATH), a cluster made with ``initdb`` in a temporary folder, started with ``pg_ctl`` on a
free port of 127.0.0.1 (and a Unix socket in the same folder), trust authentication, no fsync; stopped and removed at
the end. As root (CI), PostgreSQL refuses to run, so the cluster is made and run as the ``postgres`` user that
Debian's package creates.

    with PostgresServer.start(tmp_path) as server:
        url = server.database("ws1")        # postgresql://gainscope@127.0.0.1:PORT/ws1, created empty
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["PostgresServer", "find_binaries"]

USER = "gainscope"


def find_binaries() -> Path | None:
    """The folder of Debian's PostgreSQL programs (the newest version), else of ``initdb`` on PATH, else None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3])
                   if Path(p).parts[-3].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).resolve().parent if on_path else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """A PostgreSQL cluster of the tests (see the module docstring)."""

    def __init__(self, folder: Path, binaries: Path, port: int, runner: dict[str, Any]) -> None:
        self.folder = folder
        self.binaries = binaries
        self.port = port
        self._runner = runner

    @classmethod
    def start(cls, folder: Path, binaries: Path | None = None) -> PostgresServer:
        """Make a cluster in ``folder`` and start it."""
        binaries = binaries or find_binaries()
        if binaries is None:
            raise RuntimeError("PostgreSQL's initdb was not found")
        folder.mkdir(parents=True, exist_ok=True)
        runner: dict[str, Any] = {}
        if os.geteuid() == 0:  # PostgreSQL refuses root: run it as Debian's postgres user
            account = pwd.getpwnam("postgres")
            os.chown(folder, account.pw_uid, account.pw_gid)
            runner = {"user": account.pw_uid, "group": account.pw_gid}
        port = _free_port()
        server = cls(folder, binaries, port, runner)
        server._run("initdb", "-D", str(folder / "data"), "-U", USER, "-A", "trust", "-E", "UTF8", "--locale=C",
                    "--no-sync")
        options = (f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
                   "-c full_page_writes=off")
        server._run("pg_ctl", "-D", str(folder / "data"), "-o", options, "-l", str(folder / "server.log"), "-w",
                    "-t", "60", "start")
        return server

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run([str(self.binaries / program), *args], cwd=self.folder, capture_output=True, text=True,
                              timeout=120, **self._runner)
        if done.returncode:
            log = self.folder / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{program} failed ({done.returncode}): {done.stderr or done.stdout}\n{tail}")

    def url(self, database: str = "postgres") -> str:
        """The URL of a database of this server."""
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def database(self, name: str) -> str:
        """A new empty database ``name``; its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        """Stop the server (immediately: its data is thrown away)."""
        self._run("pg_ctl", "-D", str(self.folder / "data"), "-m", "immediate", "-w", "stop")

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
