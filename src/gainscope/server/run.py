"""Running the dashboard: uvicorn on a socket bound first (so the port is known, and a busy port is an error before
anything starts), in the foreground (``gainscope serve``) or in a thread (:class:`ServerThread`: the tests and the
benchmark, which talk to it over HTTP like a browser)."""

from __future__ import annotations

import signal
import socket
import threading
import time
from types import TracebackType
from typing import Any

from gainscope.server.workspace import Workspace

__all__ = ["ServerThread", "bind", "serve_forever"]


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: any free one); OSError when it cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on connections of a socket that says
    # it is TCP; without it every small answer waited for the client's delayed ACK, about 40 ms on Linux
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def _server(workspace: Workspace, loopback: bool) -> Any:
    import uvicorn

    from gainscope.server.app import create_app

    config = uvicorn.Config(create_app(workspace, loopback=loopback), log_level="warning", access_log=False,
                            lifespan="off")
    return uvicorn.Server(config)


def serve_forever(workspace: Workspace, sock: socket.socket, *, loopback: bool) -> None:
    """Serve on ``sock`` until interrupted (Ctrl-C, SIGTERM), then return normally.

    uvicorn catches SIGINT and SIGTERM while it serves, shuts down, and then raises the signal again for the handler
    that was there before; that handler does nothing here, so the caller closes the workspace and exits with 0."""
    quiet = {sig: signal.signal(sig, lambda *_: None) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        _server(workspace, loopback).run(sockets=[sock])
    finally:
        for sig, handler in quiet.items():
            signal.signal(sig, handler)


class ServerThread:
    """The dashboard served in a thread on 127.0.0.1 (a free port unless given): ``url`` is its address; stop it
    with :meth:`stop` or by leaving the ``with`` block."""

    def __init__(self, workspace: Workspace, *, host: str = "127.0.0.1", port: int = 0, loopback: bool = True) -> None:
        self.workspace = workspace
        self._socket = bind(host, port)
        self.port = self._socket.getsockname()[1]
        self.url = f"http://{host}:{self.port}"
        self._server = _server(workspace, loopback)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]},
                                        name="gainscope-dashboard", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the dashboard did not start")
            time.sleep(0.01)

    @property
    def app(self) -> Any:
        """The Starlette app (its state holds the workspace and the jobs)."""
        return self._server.config.app

    def stop(self) -> None:
        """Stop serving and wait for the thread."""
        self._server.should_exit = True
        self._thread.join(30)
        self._socket.close()

    def __enter__(self) -> ServerThread:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
