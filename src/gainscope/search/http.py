"""HTTP engines: any JSON search API (``kind = "http"``), Elasticsearch and OpenSearch ``_search``, Solr ``select``.

One adapter, :class:`HttpEngine`, sends a templated request and maps the JSON answer with JMESPath expressions
(https://jmespath.org): ``docs`` finds the list of hits in the response, ``id``, ``score`` and each of ``fields``
are read inside one hit, ``total`` in the response. This is the role of Quepid's custom search API mapper,
declared instead of coded. Elasticsearch, OpenSearch and Solr are the same adapter with defaults filled in
(:data:`PRESETS`):

=================  ======  ===================================================  ================  =======  ========
kind               method  request                                              docs              id       total
=================  ======  ===================================================  ================  =======  ========
elasticsearch,     POST    body ``{"size": {{top}}, "query": {"multi_match":   ``hits.hits``     ``_id``  ``hits.
opensearch                 {"query": "{{query}}"}}}`` (give your own ``body``)                              total``
solr               GET     params ``q={{query}}``, ``rows={{top}}``,            ``response.docs`` ``id``   ``response.
                           ``fl=id,score``, ``wt=json``                                                     numFound``
=================  ======  ===================================================  ================  =======  ========

(scores: ``_score`` and ``score``; Elasticsearch 7+ and OpenSearch give ``hits.total`` as ``{"value": n,
"relation": "eq" | "gte"}``, read as ``n``; Elasticsearch 6 and earlier as a number.)

The request: ``url`` (placeholders percent-encoded), ``params`` (query-string parameters for GET, form fields for
a POST without body; a list value repeats the parameter, as Solr's ``fq``), ``body`` (a JSON template, see
:mod:`~gainscope.search.templates`; sent with ``Content-Type: application/json``), ``headers``. Credentials come
only from environment variables: ``{{env.NAME}}`` in ``headers`` or ``params`` (e.g. ``Authorization = "ApiKey
{{env.ES_API_KEY}}"``) or ``basic_auth = ["USER_VARIABLE", "PASSWORD_VARIABLE"]``; a credential written into the
file itself (a header such as ``Authorization`` without ``{{env.}}``, a password in the URL) is refused. Their
values are replaced by ``***`` in every message and in the recorded request.

One attempt, and what comes of it (retries are the caller's, :func:`~gainscope.search.engine.search_once`):

* 2xx with JSON: the hits, mapped; a mapping that finds no list of hits, a hit without an id (or with an id that
  is not a string or a number), the same id twice, and a non-numeric score are :class:`EngineResponseError` naming
  the engine, the query and the key to fix. An empty list is zero hits;
* 2xx that is not JSON (an HTML page) or a body over ``max_response_mb`` (8 MiB by default):
  :class:`EngineResponseError`, not retried;
* 408, 409, 429, 5xx but 501/505, timeouts, refused, reset or dropped connections: retryable
  :class:`EngineRequestError` (with the server's ``Retry-After``);
* 401, 403, 404, 405, 407, 410, 501, 505: :class:`EngineRequestError` with ``fatal`` set (every query would get it;
  a run stops); any other status (400: this query's syntax, ...) fails this query only.
"""

from __future__ import annotations

import base64
import difflib
import json
import math
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gainscope.errors import EngineConfigError, EngineRequestError, EngineResponseError, MissingDependencyError
from gainscope.net.redact import CREDENTIAL_HEADER, Redactor, mask_userinfo, printable_ascii
from gainscope.net.retry import RETRYABLE_STATUSES, retry_after_seconds
from gainscope.search.engine import (
    EngineBase,
    Hit,
    Prepared,
    SearchQuery,
    SearchResponse,
    check_hits,
    check_knob_names,
)
from gainscope.search.templates import Context, Placeholder, Template, lookup_option, parse

__all__ = ["FATAL_STATUSES", "HTTP_KINDS", "PRESETS", "HttpEngine", "ResponseMapping"]

FATAL_STATUSES = frozenset({401, 403, 404, 405, 407, 410, 501, 505})
HTTP_KINDS = ("http", "elasticsearch", "opensearch", "solr")
DEFAULT_MAX_RESPONSE_MB = 8.0
DEFAULT_TIMEOUT = 30.0

_ES = {"method": "POST",
       "body": '{"size": {{top}}, "query": {"multi_match": {"query": "{{query}}"}}}',
       "docs": "hits.hits", "id": "_id", "score": "_score", "total": "hits.total", "source": "_source"}
PRESETS: dict[str, dict[str, Any]] = {
    "http": {"method": "GET"},
    "elasticsearch": _ES,
    "opensearch": _ES,
    "solr": {"method": "GET", "params": {"q": "{{query}}", "rows": "{{top}}", "fl": "id,score", "wt": "json"},
             "docs": "response.docs", "id": "id", "score": "score", "total": "response.numFound", "source": ""},
}


@dataclass(frozen=True)
class ResponseMapping:
    """The JMESPath expressions that read a response: ``docs`` (required), ``id`` (required), ``score``, ``total``
    and ``fields`` (display name -> expression inside a hit)."""

    docs: str
    id: str
    score: str | None = None
    total: str | None = None
    fields: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Compiled:
    docs: Any
    id: Any
    score: Any
    total: Any
    fields: dict[str, Any]


def _jmespath() -> Any:
    try:
        import jmespath
    except ImportError:
        raise MissingDependencyError("the HTTP search engines need jmespath; pip install jmespath (a dependency "
                                     "of gainscope: reinstall gainscope)") from None
    return jmespath


class HttpEngine(EngineBase):
    """An engine behind HTTP (see the module docstring). Build it from a declaration with
    :func:`gainscope.search.config.engine_from_table`, or directly::

        HttpEngine("shop", "http", url="http://127.0.0.1:9200/products/_search", method="GET",
                   params={"q": "{{query}}"}, mapping=ResponseMapping(docs="hits.items", id="pid"), knobs={})
    """

    def __init__(self, name: str, kind: str, *, url: str, method: str = "GET", params: Mapping[str, Any] | None = None,
                 body: str | None = None, headers: Mapping[str, str] | None = None,
                 basic_auth: tuple[str, str] | None = None, mapping: ResponseMapping,
                 knobs: Mapping[str, Any] | None = None,
                 timeout: float = DEFAULT_TIMEOUT, max_response_mb: float = DEFAULT_MAX_RESPONSE_MB,
                 verify: bool | str = True) -> None:
        if kind not in HTTP_KINDS:
            raise EngineConfigError(f"engine {name!r}: kind {kind!r} is not an HTTP kind ({', '.join(HTTP_KINDS)})")
        self.name = name
        self.kind = kind
        self._knobs = dict(knobs or {})
        check_knob_names(name, self._knobs)
        names = list(self._knobs)
        self.method = method.upper()
        if self.method not in ("GET", "POST"):
            raise EngineConfigError(f"engine {name!r}: method {method!r} is not GET or POST")
        if mask_userinfo(url) != url:
            raise EngineConfigError(f"engine {name!r}: the url holds a user name or password "
                                    f"({mask_userinfo(url)}); credentials come from environment variables only: "
                                    'basic_auth = ["USER_VARIABLE", "PASSWORD_VARIABLE"]')
        self.url = parse(url, Context.URL, where="url", engine=name, knobs=names)
        if not url.startswith(("http://", "https://")):
            raise EngineConfigError(f"engine {name!r}: url {url!r} is not an http(s) URL; write it as "
                                    "http://HOST:PORT/PATH")
        self.params = {str(k): self._param(str(k), v, names) for k, v in (params or {}).items()}
        self.body = parse(body, Context.JSON, where="body", engine=name, knobs=names) if body is not None else None
        if self.body is not None and self.method == "GET" and kind == "http":
            raise EngineConfigError(f"engine {name!r}: a body is sent with method = \"POST\"; set it, or move the "
                                    "template into params")
        self.headers = {str(k): self._header(str(k), str(v), names) for k, v in (headers or {}).items()}
        self.basic_auth = basic_auth
        self.mapping = mapping
        self._compiled = self._compile(mapping)
        self.timeout = _positive(name, "timeout", timeout)
        self.max_response_bytes = int(_positive(name, "max_response_mb", max_response_mb) * 1024 * 1024)
        self.verify = verify
        self._client: Any = None
        self._secrets: set[str] = set()

    # ---------------------------------------------------------------------------------------- declaration
    def _param(self, key: str, value: Any, names: list[str]) -> list[Template]:
        values = value if isinstance(value, list) else [value]
        out = []
        for i, item in enumerate(values):
            if isinstance(item, bool) or not isinstance(item, str | int | float):
                raise EngineConfigError(f"engine {self.name!r}: params.{key} must be a text, a number or a list of "
                                        f"them; got {item!r}")
            where = f"params.{key}" + (f"[{i}]" if isinstance(value, list) else "")
            out.append(parse(_literal(item), Context.TEXT, where=where, engine=self.name, knobs=names,
                             env_allowed=True))
        return out

    def _header(self, key: str, value: str, names: list[str]) -> Template:
        template = parse(value, Context.TEXT, where=f"headers.{key}", engine=self.name, knobs=names, env_allowed=True)
        if CREDENTIAL_HEADER.search(key) and value.strip() and not any(p.kind == "env" for p in
                                                                         template.placeholders):
            raise EngineConfigError(f"engine {self.name!r}: headers.{key} looks like a credential written into the "
                                    "file; credentials come from environment variables only: write it as "
                                    f"\"... {{{{env.VARIABLE}}}}\" and export VARIABLE")
        return template

    def _compile(self, mapping: ResponseMapping) -> _Compiled:
        jmespath = _jmespath()

        def compiled(key: str, expression: str | None) -> Any:
            if expression is None:
                return None
            if not isinstance(expression, str) or not expression.strip():
                raise EngineConfigError(f"engine {self.name!r}: {key} must be a JMESPath expression (text); got "
                                        f"{expression!r}")
            try:
                return jmespath.compile(expression)
            except jmespath.exceptions.JMESPathError as exc:
                raise EngineConfigError(f"engine {self.name!r}: {key} = {expression!r} is not a JMESPath expression "
                                        f"({str(exc).splitlines()[0]}); see https://jmespath.org/specification.html"
                                        ) from None

        return _Compiled(compiled("docs", mapping.docs), compiled("id", mapping.id), compiled("score", mapping.score),
                         compiled("total", mapping.total),
                         {name: compiled(f"fields.{name}", expr) for name, expr in mapping.fields.items()})

    def configuration(self, knobs: Mapping[str, Any]) -> dict[str, Any]:
        """Kind, method, templates (as written: credentials are ``{{env.NAME}}`` there), mapping and knob values."""
        return {"kind": self.kind, "method": self.method, "url": self.url.text,
                "params": {k: [t.text for t in v] for k, v in self.params.items()},
                "body": self.body.text if self.body is not None else None,
                "headers": {k: v.text for k, v in self.headers.items()},
                "basic_auth": list(self.basic_auth) if self.basic_auth else None,
                "mapping": {"docs": self.mapping.docs, "id": self.mapping.id, "score": self.mapping.score,
                            "total": self.mapping.total, "fields": dict(self.mapping.fields)},
                "knobs": dict(knobs)}

    # ---------------------------------------------------------------------------------------- requests
    def prepare(self, query: SearchQuery, knobs: Mapping[str, Any], top: int) -> Prepared:
        """Render every template for ``query``; a missing option or environment variable is an error here."""
        secrets: list[str] = []

        def value(p: Placeholder, where: str) -> Any:
            kind = p.kind
            if kind == "query":
                return query.text
            if kind == "top":
                return top
            if kind == "knob":
                return knobs[p.name]
            if kind == "opt":
                found, option = lookup_option(query.options, p.name[4:])
                if not found:
                    raise EngineConfigError(f"engine {self.name!r}, query {query.id!r} ({query.text!r}): {where} uses "
                                            f"{{{{{p.name}}}}} but the query has no option {p.name[4:]!r}; give it in "
                                            "the queries file (\"options\": {...}) or remove it from the template")
                return option
            variable = p.name[4:]
            found_value = os.environ.get(variable)
            if found_value is None:
                raise EngineConfigError(f"engine {self.name!r}: {where} uses {{{{{p.name}}}}} but the environment "
                                        f"variable {variable} is not set; export it before running")
            secrets.append(found_value)
            return found_value

        def render(template: Template) -> str:
            try:
                return template.render(lambda p: value(p, template.where))
            except EngineConfigError:
                raise
            except ValueError as exc:
                raise EngineConfigError(f"engine {self.name!r}, query {query.id!r}: {template.where} cannot be "
                                        f"rendered: {exc}") from None

        url = render(self.url)
        params = [(key, render(t)) for key, templates in self.params.items() for t in templates]
        headers = {key: render(t) for key, t in self.headers.items()}
        for key, text in headers.items():
            if not printable_ascii(text):
                raise EngineConfigError(f"engine {self.name!r}, query {query.id!r}: headers.{key} would hold a line "
                                        "break or a character a header cannot hold; check the values it uses")
        body = render(self.body) if self.body is not None else None
        if body is not None:
            try:
                json.loads(body)
            except json.JSONDecodeError as exc:
                raise EngineConfigError(f"engine {self.name!r}, query {query.id!r} ({query.text!r}): the body is not "
                                        f"JSON once rendered ({exc.msg} at character {exc.pos + 1}: "
                                        f"{body[max(0, exc.pos - 30):exc.pos + 30]!r}); a placeholder outside quotes "
                                        "is written as a JSON value, inside quotes as string content") from None
            headers.setdefault("Content-Type", "application/json")
        headers.setdefault("Accept", "application/json")
        if self.basic_auth is not None:
            user, password = (self._env(v, "basic_auth") for v in self.basic_auth)
            secrets += [user, password]
            token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            headers["Authorization"] = f"Basic {token}"
            secrets.append(token)
        self._secrets.update(s for s in secrets if s)
        redact = Redactor(secrets)
        shown_headers = {k: ("***" if CREDENTIAL_HEADER.search(k) else redact(v)) for k, v in headers.items()}
        request = {"method": self.method, "url": url,
                   "params": [[k, redact(v)] for k, v in params] if params else None,
                   "headers": shown_headers, "body": body}
        return Prepared(query, top, dict(knobs), request, (url, params, headers, body))

    def _env(self, variable: str, where: str) -> str:
        value = os.environ.get(variable)
        if value is None:
            raise EngineConfigError(f"engine {self.name!r}: {where} names the environment variable {variable}, "
                                    "which is not set; export it before running")
        return value

    def _http(self) -> Any:
        if self._client is None:
            import httpx

            self._client = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout), follow_redirects=False,
                                             verify=self.verify, limits=httpx.Limits(max_connections=256,
                                                                                     max_keepalive_connections=64))
        return self._client

    async def aclose(self) -> None:
        """Close the connections."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def redact(self, text: str) -> str:
        """``text`` with every credential this engine has used replaced by ``***``."""
        return Redactor(self._secrets)(text)

    async def attempt(self, prepared: Prepared) -> SearchResponse:
        """Send the request once and map the answer (see the module docstring)."""
        import httpx

        url, params, headers, body = prepared.payload
        query = prepared.query
        where = f"engine {self.name!r}, query {query.id!r} ({query.text!r})"
        request_line = f"{self.method} {mask_userinfo(url)}"
        kwargs: dict[str, Any] = {"headers": headers}
        if self.method == "POST" and body is None and params:
            kwargs["data"] = dict(_group(params))
        else:
            kwargs["params"] = params
        if body is not None:
            kwargs["content"] = body.encode("utf-8")
        started = time.perf_counter()
        try:
            async with self._http().stream(self.method, url, **kwargs) as response:
                data = bytearray()
                async for chunk in response.aiter_bytes():
                    data.extend(chunk)
                    if len(data) > self.max_response_bytes:
                        raise EngineResponseError(self.redact(
                            f"{where}: {request_line} answered more than {self.max_response_bytes / 1048576:g} MiB "
                            "(max_response_mb); ask for fewer fields or fewer results (Elasticsearch: \"_source\" "
                            "filtering; Solr: fl), or raise max_response_mb"), raw=bytes(data[:300]).decode(
                            "utf-8", "replace"))
        except httpx.TimeoutException:
            raise EngineRequestError(self.redact(f"{where}: {request_line}: no complete answer within "
                                                 f"{self.timeout:g} s (timeout)"), retryable=True) from None
        except (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ProxyError) as exc:
            raise EngineRequestError(self.redact(f"{where}: {request_line}: connection failed "
                                                 f"({type(exc).__name__}: {exc}); check that the engine runs at this "
                                                 "address"), retryable=True) from None
        except httpx.HTTPError as exc:
            raise EngineRequestError(self.redact(f"{where}: {request_line} could not be sent ({type(exc).__name__}: "
                                                 f"{exc}); check the url and headers"), fatal=True) from None
        latency = time.perf_counter() - started
        text = bytes(data).decode("utf-8", "replace")
        status = response.status_code
        if not 200 <= status < 300:
            raise self._status_error(where, request_line, status, text, response.headers)
        payload = self._json(where, request_line, text, response.headers.get("content-type", ""))
        hits, total = self._map(where, payload, text)
        return SearchResponse(check_hits(self.name, query, hits, text), total, latency, text, prepared.request)

    def _status_error(self, where: str, request_line: str, status: int, text: str, headers: Any) -> EngineRequestError:
        detail = _server_message(text)
        message = f"{where}: {request_line} answered HTTP {status}" + (f": {detail}" if detail else "")
        if status in RETRYABLE_STATUSES:
            return EngineRequestError(self.redact(message), status=status, retryable=True,
                                      retry_after=retry_after_seconds(headers))
        if status in FATAL_STATUSES:
            advice = {401: "check the credentials (the environment variables the engine names)",
                      403: "check the credentials and their permissions",
                      404: "check the url (host, index or collection name, path)",
                      407: "check the proxy's credentials"}.get(status, "check the url and method")
            return EngineRequestError(self.redact(f"{message}; {advice}"), status=status, fatal=True)
        return EngineRequestError(self.redact(f"{message}; the engine refused this query (its message says why): "
                                              "check the template for this query"), status=status)

    def _json(self, where: str, request_line: str, text: str, content_type: str) -> Any:
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            start = text.lstrip()[:80]
            html = start.startswith("<") or "html" in content_type.lower()
            hint = ("an HTML page: the url probably points at a web page or a login form, not at the search API"
                    if html else "check that the url points at the search API and that it answers JSON"
                    + (" (Solr: wt=json)" if self.kind == "solr" else ""))
            raise EngineResponseError(self.redact(f"{where}: {request_line} answered something that is not JSON "
                                                  f"(Content-Type {content_type or 'not given'}; it starts "
                                                  f"{start!r}): {hint}"), raw=text[:500]) from None

    def _map(self, where: str, payload: Any, raw: str) -> tuple[list[Hit], int | None]:
        compiled = self._compiled
        mapping = self.mapping
        docs = compiled.docs.search(payload)
        if docs is None:
            keys = ", ".join(list(payload)[:10]) if isinstance(payload, dict) else type(payload).__name__
            raise EngineResponseError(self.redact(
                f"{where}: the mapping docs = {mapping.docs!r} finds nothing in the response (its top-level keys: "
                f"{keys}); set docs in the engine's declaration to the JMESPath of the list of hits"), raw=raw[:500])
        if not isinstance(docs, list):
            raise EngineResponseError(self.redact(
                f"{where}: the mapping docs = {mapping.docs!r} finds {type(docs).__name__} {_short(docs)}, not a list "
                "of hits; set docs to the JMESPath of the list"), raw=raw[:500])
        hits = []
        for rank, doc in enumerate(docs, start=1):
            ident = compiled.id.search(doc)
            if ident is None:
                keys = ", ".join(list(doc)[:10]) if isinstance(doc, dict) else type(doc).__name__
                raise EngineResponseError(self.redact(
                    f"{where}: hit {rank} has no id: id = {mapping.id!r} finds nothing in it (its keys: {keys}); set "
                    "id to the JMESPath of the document id inside one hit"), raw=raw[:500])
            if isinstance(ident, bool) or not isinstance(ident, str | int) or (isinstance(ident, str) and
                                                                               not ident.strip()):
                raise EngineResponseError(self.redact(
                    f"{where}: hit {rank}: id = {mapping.id!r} finds {_short(ident)}, not a document id (a non-empty "
                    "text or an integer)"), raw=raw[:500])
            score = None
            if compiled.score is not None:
                score = _number(compiled.score.search(doc))
                if score is _BAD:
                    raise EngineResponseError(self.redact(
                        f"{where}: hit {rank}: score = {mapping.score!r} finds {_short(compiled.score.search(doc))}, "
                        "not a number"), raw=raw[:500])
            fields = {name: expr.search(doc) for name, expr in compiled.fields.items()}
            hits.append(Hit(str(ident), score, {k: v for k, v in fields.items() if v is not None}))
        total = None
        if compiled.total is not None:
            found = compiled.total.search(payload)
            if isinstance(found, dict) and "value" in found:  # Elasticsearch 7+, OpenSearch
                found = found["value"]
            total_value = _number(found)
            if total_value is _BAD or (total_value is not None and (total_value < 0 or not float(total_value)
                                                                    .is_integer())):
                raise EngineResponseError(self.redact(
                    f"{where}: total = {mapping.total!r} finds {_short(found)}, not a count of hits"), raw=raw[:500])
            total = None if total_value is None else int(total_value)
            if total is not None and total < len(hits):
                raise EngineResponseError(self.redact(
                    f"{where}: total = {mapping.total!r} says {total} hits but the response holds {len(hits)}; check "
                    "the total mapping"), raw=raw[:500])
        return hits, total


_BAD: Any = object()


def _number(value: Any) -> Any:
    """A score or count as a float; None when absent; _BAD when it is not a number."""
    if value is None:
        return None
    if isinstance(value, bool):
        return _BAD
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else _BAD
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return _BAD
        return number if math.isfinite(number) else _BAD
    return _BAD


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _literal(value: str | int | float) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _group(params: list[tuple[str, str]]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for key, value in params:
        grouped.setdefault(key, []).append(value)
    return grouped


def _positive(engine: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise EngineConfigError(f"engine {engine!r}: {key} must be a number > 0; got {value!r}")
    return float(value)


def _server_message(text: str) -> str:
    """The error message of an error body: Elasticsearch/OpenSearch ``error.type``/``reason``, Solr ``error.msg``,
    else the start of the body."""
    try:
        payload = json.loads(text)
    except json.JSONDecodeError:
        return " ".join(text.split())[:200]
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict):
        if "msg" in error:  # Solr
            return str(error["msg"])[:300]
        reason = error.get("reason")
        kind = error.get("type")
        if reason or kind:  # Elasticsearch, OpenSearch
            return f"{kind}: {reason}" if kind and reason else str(reason or kind)
    if isinstance(error, str):
        return error[:300]
    return " ".join(text.split())[:200]


def close_match(key: str, allowed: list[str]) -> str:
    """'; did you mean X?' for a key close to an allowed one, else the allowed keys."""
    close = difflib.get_close_matches(key, allowed, n=1)
    return f"; did you mean {close[0]!r}?" if close else f" (allowed: {', '.join(allowed)})"
