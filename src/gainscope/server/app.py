"""The web app: Starlette routes for the pages and the JSON API, and the security every response goes through.

Security (issue 16, item 4):

* **Token.** Every write (``POST``, ``PUT``, ``PATCH``, ``DELETE``) needs the workspace token in the header
  ``X-Gainscope-Token``. A browser cannot send a custom header cross-site without a CORS preflight, which this
  server never answers, so the header also stops cross-site requests; a write whose ``Origin`` is not this
  server is refused as well. Opening the start-up URL (``/?token=...``) stores the token in a cookie
  (``HttpOnly``, ``SameSite=Strict``) and redirects to the same page without it; pages then carry the token in a
  ``<meta>`` for the page's own script to send, and only to a request that holds the cookie.
* **Reads.** On 127.0.0.1 (the default) pages and ``GET /api/...`` are open to this machine, but a request whose
  ``Host`` is not a loopback name is refused (no DNS rebinding). Bound to another address, a server needs a token
  (``gainscope serve`` refuses to start without one) and every request needs it, in the header or the cookie.
* **Content-Security-Policy** on every page: ``default-src 'none'``; scripts only with the page's nonce (a fresh
  one per response, ``'strict-dynamic'`` for the modules it imports), styles and images from this server only,
  requests to this server only; no inline handlers anywhere. Text from cases (titles, ids, fields, query
  texts) is escaped by Jinja2 (autoescape) or set with ``textContent`` by the scripts: it shows as text and never
  runs. ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` and ``frame-ancestors 'none'``
  too.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from gainscope.server.jobs import Jobs
from gainscope.server.workspace import Workspace

__all__ = ["COOKIE", "HEADER", "create_app", "is_loopback"]

HEADER = "X-Gainscope-Token"
COOKIE = "gainscope_token"
STATIC = Path(__file__).parent / "static"
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _host_name(header: str) -> str:
    """The host of a ``Host`` header, without its port."""
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def _same(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode(), b.encode())


class Security(BaseHTTPMiddleware):
    """The token, host and origin checks and the security headers (see the module docstring)."""

    def __init__(self, app: Any, *, token: str, loopback: bool) -> None:
        super().__init__(app)
        self.token = token
        self.loopback = loopback

    async def dispatch(self, request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        request.state.nonce = secrets.token_urlsafe(18)
        header, cookie = request.headers.get(HEADER), request.cookies.get(COOKIE)
        request.state.authorized = _same(header, self.token) or _same(cookie, self.token)
        refused = self._refusal(request, header)
        if refused is not None:
            return self._headers(refused, request)
        given = request.query_params.get("token")
        if request.method == "GET" and given is not None and not request.url.path.startswith("/api"):
            if not _same(given, self.token):
                return self._headers(JSONResponse({"error": "the token in the URL is not this workspace's; use the "
                                                            "URL gainscope serve printed"}, 403), request)
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
            response: Response = RedirectResponse(target, 303)
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict", path="/")
            return self._headers(response, request)
        return self._headers(await call_next(request), request)

    def _refusal(self, request: Request, header: str | None) -> Response | None:
        """Why a request is refused, or None."""
        if self.loopback and not is_loopback(_host_name(request.headers.get("host", ""))):
            return JSONResponse({"error": "this dashboard answers requests to 127.0.0.1 or localhost only (the Host "
                                          "header names another host: DNS rebinding?)"}, 403)
        if request.method in _WRITES:
            origin = request.headers.get("origin")
            if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
                return JSONResponse({"error": f"a write from another site ({origin}) is refused"}, 403)
            if not _same(header, self.token):
                what = "is missing" if header is None else "is not this workspace's token"
                return JSONResponse({"error": f"a write needs the workspace token in the {HEADER} header; it {what} "
                                              "(open the URL gainscope serve printed, or send the header)"}, 403)
        elif not self.loopback and not request.state.authorized and request.query_params.get("token") is None:
            return JSONResponse({"error": f"this dashboard needs the workspace token: open the URL gainscope serve "
                                          f"printed, or send the {HEADER} header"}, 401)
        return None

    def _headers(self, response: Response, request: Request) -> Response:
        nonce = request.state.nonce
        if response.headers.get("content-type", "").startswith("text/html"):
            csp = (f"default-src 'none'; script-src 'nonce-{nonce}' 'strict-dynamic'; style-src 'self'; "
                   "img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; "
                   "frame-ancestors 'none'")
        else:
            csp = "default-src 'none'; frame-ancestors 'none'"
        response.headers["Content-Security-Policy"] = csp
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers.setdefault("Cache-Control", "no-store")
        return response


def create_app(workspace: Workspace, *, loopback: bool = True) -> Starlette:
    """The dashboard over ``workspace``. ``loopback``: the server listens on a loopback address only (see the
    module docstring for what changes otherwise)."""
    from gainscope.server import api, pages

    jobs = Jobs()
    pages.compile_templates()
    routes = [*pages.routes(), *api.routes(), Mount("/static", app=StaticFiles(directory=STATIC), name="static")]
    app = Starlette(routes=routes, middleware=[Middleware(Security, token=workspace.token, loopback=loopback)])
    app.state.workspace = workspace
    app.state.jobs = jobs
    app.state.loopback = loopback
    return app


def route(path: str, endpoint: Callable[..., Any], methods: list[str]) -> Route:
    """A route (a small helper, so the route tables read as tables)."""
    return Route(path, endpoint, methods=methods)
