"""An async client for any OpenAI-compatible chat-completions server, built to be trusted with a budget.

It talks to OpenAI, Azure OpenAI, vLLM, Ollama, the llama.cpp server or a LiteLLM proxy over one
``httpx.AsyncClient`` and returns the answer's text with the server's own token usage; parsing the text is the
caller's job (:mod:`gainscope.judges.answers`).

::

    settings = ClientSettings("http://localhost:8000/v1", concurrency=16, requests_per_minute=600)
    async with ChatClient(settings) as client:
        done = await client.complete("qwen2.5-7b", [{"role": "user", "content": "..."}])
        done.text, done.prompt_tokens, done.attempts

What the client does, precisely
-------------------------------

Every call to :meth:`ChatClient.complete` makes at most ``max_attempts`` attempts. One attempt is:

1. take one of ``concurrency`` slots (an ``asyncio.Semaphore``); the slot is held only while the attempt waits on
   the limits and talks to the server, never during a backoff sleep;
2. pass the *gate*, in FIFO order: wait until the shared cooldown is over, the requests-per-minute window has room
   for one more request and the tokens-per-minute window has room for this request's estimate; then the send
   time is recorded in both windows;
3. POST ``{base_url}/chat/completions`` and read the whole response within ``timeout`` seconds.

Outcomes:

* a 2xx JSON body with a non-empty ``choices`` list -> a :class:`Completion`; ``prompt_tokens`` and
  ``completion_tokens`` come from the body's ``usage`` and are None when the server gives none (never estimated);
* retried: HTTP 408, 409, 429 and every 5xx status (500-599: 500, 502, 503, 504, and the 520-530 of Cloudflare
  and other proxies, 529 "overloaded", ...) except 501 Not Implemented and 505 HTTP Version Not Supported, which
  are permanent; a timeout; a refused, reset or dropped connection; a 2xx body that is not JSON or has no
  ``choices`` (a broken proxy). Not retried: 501, 505 and every other status (400, 401, 403, 404, 422, ...), and a
  429 whose error code is ``insufficient_quota`` (the account has no credit; waiting won't help);
* before retry ``n`` (n = 1, 2, ...) the call sleeps ``max(retry_after, uniform(0, min(backoff_max,
  backoff_base * 2 ** (n - 1))))`` -- exponential backoff with full jitter, never less than the server's
  ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms``. A ``Retry-After`` above ``max_retry_after``
  ends the call at once instead of waiting less than asked;
* after a 429, and after any retried response carrying ``Retry-After``, the whole client cools down: no request
  of this client is sent before that wait is over (as MinimaLLM does), so concurrent requests do not each hammer
  a server that has asked for a pause;
* JSON mode: with ``json_mode=None`` the first request carries ``response_format: {"type": "json_object"}``;
  when the server answers 400 (or 422) with a body mentioning ``response_format`` the request is sent again at once
  without it (this resend does not use up one of the ``max_attempts``, but it is an HTTP request and is counted
  in ``attempts``) and the client never sends it again. ``True`` always
  sends it (a 400 is then an error), ``False`` never does. A ``response_format`` passed in ``extra`` is the
  caller's and is never dropped;
* after the last attempt, or on an error that is not retried, :class:`~gainscope.errors.JudgeRequestError` is
  raised with ``status`` (the last HTTP status; None for a timeout or a connection failure), ``attempts`` and a
  message naming the URL, what went wrong and what to do.

Stopping (a circuit breaker): a failure that would repeat for every call makes the client *stop*. The call that
meets it raises :class:`FatalRequestError` (a :class:`~gainscope.errors.JudgeRequestError` with ``fatal = True``),
and so does every later call of this client, at once and without sending anything. Two causes:

* ``reason == "refused"``: the server refused a request in a way that will not change -- HTTP 400, 401, 402, 403,
  404, 405, 415, 422, 501 or 505 (a 400/422 that is the JSON-mode fallback above is not one), a 429 with
  ``insufficient_quota``, or a request that httpx cannot send (a header it cannot hold). A 400/422 that is about
  this request only -- its code is ``context_length_exceeded``, ``content_filter``, ``invalid_prompt``, ... or its
  message speaks of the context length or a content filter -- fails that call alone;
* ``reason == "not_answering"``: ``max_consecutive_failures`` calls in a row (5 by default) failed after all their
  attempts on timeouts or connection errors, with no HTTP response from the server in between (any response,
  even an error, resets the count).

Calls already under way when the client stops raise the same error before their next attempt.

``attempts`` -- of a :class:`Completion` and of a :class:`~gainscope.errors.JudgeRequestError` -- is the number of
HTTP requests sent for that call: the first, every retry and the JSON-mode resend (a request counts as sent once it
has passed the gate, even when the connection then fails). :attr:`ClientStats.requests` is their total over all
calls.

Limits are sliding windows of length ``rate_window`` (60 s): a request is sent only if fewer than
``requests_per_minute`` requests were sent in the ``rate_window`` seconds before it, so *any* window of that
length holds at most that many sends, retries included. For ``tokens_per_minute`` each request reserves an
estimate -- (characters of the messages) / 4 + ``max_tokens`` (0 when not given) -- at its send time, and the
reservation is replaced by the real ``usage`` total when the answer comes back (kept as estimated when the
server reports none or the request failed). A request whose estimate alone exceeds the limit is sent when the
window is empty. A sliding window allows a burst of the whole limit at once; providers that enforce a minute's
limit over shorter periods (OpenAI calls its limits "quantized") are better served by a shorter window with the
matching share, e.g. ``requests_per_minute=10, rate_window=1.0`` for 600 requests a minute sent 10 a second.

The limits, the concurrency and the cooldowns are those of one :class:`ChatClient`, in one process: nothing is
shared between processes (nor between two clients in one process). Two processes judging with the same key -- two
``gainscope judge`` runs into one store, say -- each send up to the full ``requests_per_minute`` and
``tokens_per_minute``, so together up to twice the limit; give each process its share (the limit divided by the
number of processes) when they must stay within the provider's limits together. The server's own 429s and
``Retry-After`` still apply to each process.

Secrets
-------

The API key is sent as ``Authorization: Bearer`` (``api-key`` for Azure). Surrounding whitespace is stripped from
it (a key read from a ``.env`` file often ends in a line break); a key that still holds a control or non-ASCII
character is refused with a :class:`~gainscope.errors.PolicyError` that does not show it -- when it comes from
``api_key``, at :class:`ClientSettings` construction, when from the environment, at :class:`ChatClient`
construction. Every error message the client produces goes through one redaction: the key, the user name and
password of a base URL such as ``http://user:password@host/v1`` (printed ``http://***@host/v1``) and the values of
``extra_headers`` whose name suggests a credential (``authorization``, ``*key*``, ``*token*``, ``*secret*``,
``cookie``) are replaced by ``***``, in their plain and escaped forms (secrets shorter than 4 characters are left,
so as not to garble the message). The key appears in no repr either.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import re
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import TracebackType
from typing import Any

import httpx

from gainscope.errors import FatalRequestError, JudgeRequestError, PolicyError
from gainscope.net.limits import Clock, Gate, Sleep
from gainscope.net.redact import Redactor, clean_api_key, credential_values, mask_userinfo, printable_ascii
from gainscope.net.retry import RETRYABLE_STATUSES, Unanswered, backoff_delay, retry_after_seconds

__all__ = [
    "RETRYABLE_STATUSES",
    "ChatClient",
    "ClientSettings",
    "ClientStats",
    "Completion",
    "FatalRequestError",
    "Redactor",
    "clean_api_key",
    "mask_userinfo",
    "retry_after_seconds",
]

# statuses that will be the same for every request: the client stops (FatalRequestError)
FATAL_STATUSES = frozenset({400, 401, 402, 403, 404, 405, 415, 422, 501, 505})
# a 400/422 about this request only (too long for the model, filtered content): that call fails, the client goes on
PER_REQUEST_CODES = frozenset({"context_length_exceeded", "content_filter", "content_policy_violation",
                               "invalid_prompt", "string_above_max_length"})
_PER_REQUEST_MESSAGE = re.compile(r"context (length|window|size)|maximum context|too many tokens|prompt is too long|"
                                  r"content (filter|management|policy)|safety system", re.IGNORECASE)
JSON_MODE = {"type": "json_object"}


@dataclass(frozen=True)
class ClientSettings:
    """How to reach the server and how hard to push it (see the module docstring for the exact rules).

    ``api_key``: explicit, else the environment's ``OPENAI_API_KEY`` (for Azure first ``AZURE_OPENAI_API_KEY``),
    else none (local servers). ``concurrency``: requests in flight at most. ``requests_per_minute`` and
    ``tokens_per_minute``: sliding-window limits per ``rate_window`` seconds (a minute unless changed).
    ``max_attempts``: attempts per request, the first included. ``backoff_base``/``backoff_max``: the
    exponential backoff with full jitter, in seconds. ``timeout``: seconds one attempt may take, from sending to
    the whole response. ``json_mode``: None tries ``response_format`` and falls back, True always sends it, False
    never. ``azure_api_version``: Azure OpenAI mode (``base_url`` is the deployment URL,
    ``.../openai/deployments/<name>``). ``max_retry_after``: a server asking to wait longer than this ends the
    request instead. ``max_consecutive_failures``: calls in a row without an answer (timeouts, connection errors)
    after which the client stops with :class:`FatalRequestError`.
    """

    base_url: str
    api_key: str | None = field(default=None, repr=False)
    concurrency: int = 8
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    max_attempts: int = 6
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    timeout: float = 60.0
    json_mode: bool | None = None
    azure_api_version: str | None = None
    extra_headers: dict[str, str] = field(default_factory=dict)
    rate_window: float = 60.0
    max_retry_after: float = 600.0
    max_consecutive_failures: int = 5

    def __post_init__(self) -> None:
        if self.api_key is not None:
            object.__setattr__(self, "api_key", clean_api_key(self.api_key, "api_key"))
        for name, value in self.extra_headers.items():
            if not printable_ascii(value):
                raise PolicyError(f"client setting extra_headers[{name!r}] contains a control or non-ASCII "
                                  "character, which a header cannot hold; the value is not shown here")
        _check(self.concurrency >= 1, "concurrency", self.concurrency, "an integer >= 1")
        _check(self.max_attempts >= 1, "max_attempts", self.max_attempts, "an integer >= 1")
        _check(self.max_consecutive_failures >= 1, "max_consecutive_failures", self.max_consecutive_failures,
               "an integer >= 1")
        for name in ("requests_per_minute", "tokens_per_minute"):
            value = getattr(self, name)
            _check(value is None or value > 0, name, value, "a number > 0, or None for no limit")
        for name in ("backoff_base", "backoff_max", "max_retry_after"):
            _check(getattr(self, name) >= 0, name, getattr(self, name), "a number of seconds >= 0")
        for name in ("timeout", "rate_window"):
            _check(getattr(self, name) > 0, name, getattr(self, name), "a number of seconds > 0")
        try:
            url = httpx.URL(self.base_url)
        except httpx.InvalidURL:
            url = httpx.URL("invalid:")
        _check(url.scheme in ("http", "https") and bool(url.host), "base_url", mask_userinfo(self.base_url),
               "an http(s) URL such as http://localhost:8000/v1")

    def __repr__(self) -> str:
        """The fields as a dataclass shows them, with the base URL's user name and password masked."""
        shown = (f"{f.name}={mask_userinfo(self.base_url) if f.name == 'base_url' else getattr(self, f.name)!r}"
                 for f in fields(self) if f.repr)
        return f"{type(self).__name__}({', '.join(shown)})"


def _check(ok: bool, name: str, value: object, allowed: str) -> None:
    if not ok:
        raise PolicyError(f"client setting {name}={value!r} is not allowed; use {allowed}")


@dataclass(frozen=True)
class Completion:
    """One answer: its text (unparsed), the model the server named, the server's token usage (None when it gave
    none), ``attempts``: the HTTP requests sent for it (retries and the JSON-mode resend included), the seconds
    from the call to the answer (waits and retries included), the finish reason and the raw JSON body."""

    text: str
    model: str
    prompt_tokens: int | None
    completion_tokens: int | None
    attempts: int
    latency: float
    finish_reason: str | None
    raw: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class ClientStats:
    """What the client has done so far.

    ``requests``: HTTP requests sent (retries and JSON-mode resends included); ``completions`` / ``failures``:
    calls that returned / raised; ``retries``: retries by reason (``"429"``, ``"503"``, ``"timeout"``,
    ``"connection"``, ``"bad_body"``, ``"response_format"`` for the JSON-mode resend, ...); ``rate_limited``: 429
    answers; ``prompt_tokens`` / ``completion_tokens``: totals of the usage servers reported; ``unreported_usage``:
    answers without usage; ``limit_wait``: seconds the gate held requests back for the limits and cooldowns (wall
    time, not summed over the waiting requests); ``json_mode``: whether ``response_format`` is still sent.
    """

    requests: int
    completions: int
    failures: int
    retries: Mapping[str, int]
    rate_limited: int
    prompt_tokens: int
    completion_tokens: int
    unreported_usage: int
    limit_wait: float
    json_mode: bool


# ------------------------------------------------------------------------------------------------- attempts


@dataclass(frozen=True)
class _Failure:
    """Why an attempt did not produce a completion."""

    reason: str  # "429", "503", "timeout", "connection", "bad_body", "empty_choices", "response_format", ...
    detail: str
    status: int | None = None
    retryable: bool = False
    retry_after: float | None = None
    fatal: bool = False  # the same would happen to every request: the client stops


def _estimate_tokens(messages: list[dict[str, str]], max_tokens: int | None) -> int:
    characters = sum(len(str(message.get("content") or "")) for message in messages)
    return math.ceil(characters / 4) + (max_tokens or 0)


def _server_message(response: httpx.Response) -> tuple[str, str | None]:
    """The error message of an error body (OpenAI, vLLM and llama.cpp shapes) and its code, shortened."""
    try:
        payload = response.json()
    except ValueError:
        return response.text[:300].strip(), None
    error = payload.get("error", payload) if isinstance(payload, dict) else payload
    if isinstance(error, dict):
        code = error.get("code")
        return str(error.get("message") or error)[:300], str(code) if code is not None else None
    return str(error)[:300], None


def _advice(failure: _Failure) -> str:
    status = failure.status
    if failure.reason == "429":
        return ("The server kept rate limiting: lower the concurrency, set a requests- or tokens-per-minute "
                "limit below the server's, or raise max_attempts.")
    if failure.reason == "insufficient_quota":
        return "The account has no quota left: check its plan and billing, then run again."
    if failure.reason == "retry_after":
        return "Run again later, or raise max_retry_after to wait that long."
    if failure.reason == "timeout":
        return "Raise the timeout or lower the concurrency; the server may be overloaded."
    if failure.reason == "http":
        return "The request could not be sent: check the base URL, the API key and the extra headers."
    if failure.reason == "connection":
        return "Check that the server is running at this address and that the base URL is right."
    if failure.reason == "per_request":
        return ("The server refused this request only (too long for the model, or its content was filtered); "
                "other requests are still sent.")
    if status in (401, 403):
        return "Check the API key (--api-key or OPENAI_API_KEY) and its permissions."
    if status == 404:
        return ("Check the base URL (it usually ends in /v1; for Azure it is the deployment URL, with "
                "azure_api_version set) and the model name.")
    if status in (400, 422):
        return ("The server refused the request as invalid; its message above says why: check the model name and "
                "the parameters sent (max_tokens, temperature, seed, response_format, extra fields).")
    if status == 402:
        return "The account cannot pay for the request: check its plan and credit, then run again."
    if status is not None and 400 <= status < 500 and status not in RETRYABLE_STATUSES:
        return "The server refused the request; its message above says why."
    if status in (501, 505):
        return ("The server does not implement this request: check that the base URL points at an OpenAI-compatible "
                "chat-completions server.")
    return "The server kept failing: check its health or logs, or run again later (finished work is kept)."


class ChatClient:
    """Sends chat-completions requests with bounded concurrency, RPM/TPM limits and retries (see the module
    docstring). Use as an async context manager, or call :meth:`aclose`.

    ``transport``, ``sleep``, ``clock`` and ``rng`` are seams for tests: an httpx transport, the coroutine used to
    wait, the monotonic clock of the limits and cooldowns, and the random source of the backoff jitter.
    """

    def __init__(self, settings: ClientSettings, *, transport: httpx.AsyncBaseTransport | None = None,
                 sleep: Sleep = asyncio.sleep, clock: Clock = time.monotonic,
                 rng: random.Random | None = None) -> None:
        self.settings = settings
        self._sleep = sleep
        self._clock = clock
        self._rng = rng if rng is not None else random.Random()
        self._slots = asyncio.Semaphore(settings.concurrency)
        self._gate = Gate(requests=settings.requests_per_minute, tokens=settings.tokens_per_minute,
                          length=settings.rate_window, sleep=sleep, clock=clock)
        self._json_mode = settings.json_mode is not False
        self._url = settings.base_url.rstrip("/") + "/chat/completions"
        self._params = {"api-version": settings.azure_api_version} if settings.azure_api_version else {}
        headers = self._headers()
        self._redact = Redactor(self._secrets(headers))
        self._http = httpx.AsyncClient(
            transport=transport, headers=headers, timeout=httpx.Timeout(settings.timeout),
            limits=httpx.Limits(max_connections=settings.concurrency,
                                max_keepalive_connections=settings.concurrency),
            follow_redirects=False)
        self._counts: Counter[str] = Counter()
        self._retries: Counter[str] = Counter()
        self._unanswered = Unanswered(settings.max_consecutive_failures)  # calls in a row without any answer
        self._broken: FatalRequestError | None = None

    def _headers(self) -> dict[str, str]:
        settings = self.settings
        azure = settings.azure_api_version is not None
        key = settings.api_key
        for variable in ("AZURE_OPENAI_API_KEY", "OPENAI_API_KEY") if azure else ("OPENAI_API_KEY",):
            if key is None and (value := os.environ.get(variable)) is not None:
                key = clean_api_key(value, f"the environment variable {variable}")
        headers = {"Accept": "application/json"}
        if key:
            headers.update({"api-key": key} if azure else {"Authorization": f"Bearer {key}"})
        headers.update(settings.extra_headers)
        return headers

    def _secrets(self, headers: Mapping[str, str]) -> list[str]:
        """What the redaction hides: the key, the base URL's user name and password, credential-like headers."""
        return credential_values(headers, self.settings.base_url)

    # ------------------------------------------------------------------------------------------ public

    @property
    def stats(self) -> ClientStats:
        """A snapshot of the counters (see :class:`ClientStats`)."""
        counts = self._counts
        return ClientStats(
            requests=counts["requests"], completions=counts["completions"], failures=counts["failures"],
            retries=dict(self._retries), rate_limited=counts["rate_limited"],
            prompt_tokens=counts["prompt_tokens"], completion_tokens=counts["completion_tokens"],
            unreported_usage=counts["unreported_usage"], limit_wait=self._gate.waited, json_mode=self._json_mode)

    @property
    def broken(self) -> FatalRequestError | None:
        """The error that stopped this client (see the module docstring), None while it still sends requests."""
        return self._broken

    async def complete(self, model: str, messages: list[dict[str, str]], *, temperature: float | None = 0.0,
                       max_tokens: int | None = None, seed: int | None = None,
                       extra: Mapping[str, object] | None = None) -> Completion:
        """Ask ``model`` for the next message after ``messages``; retried as the module docstring says.

        ``temperature``, ``max_tokens`` and ``seed`` are sent when not None; ``extra`` is merged into the body last
        (provider-specific fields, e.g. ``{"max_completion_tokens": 50}``). Raises
        :class:`~gainscope.errors.JudgeRequestError` when every attempt failed or the error is not retryable, and
        :class:`FatalRequestError` (a subclass) when the client has stopped (this call's failure, or an earlier one,
        would repeat for every call).
        """
        started = self._clock()
        estimate = _estimate_tokens(messages, max_tokens)
        body: dict[str, Any] = {"model": model, "messages": messages}
        for name, value in (("temperature", temperature), ("max_tokens", max_tokens), ("seed", seed)):
            if value is not None:
                body[name] = value
        body.update(extra or {})
        caller_format = "response_format" in body
        attempt = sent = 0  # attempts counted against max_attempts; HTTP requests sent (the JSON-mode resend too)
        while True:
            attempt += 1
            json_mode = self._json_mode and not caller_format
            request = {**body, "response_format": dict(JSON_MODE)} if json_mode else body
            outcome = await self._attempt(request, estimate) if self._broken is None else None
            if outcome is None:  # the client stopped before this attempt was sent
                raise self._stopped(sent)
            sent += 1
            if isinstance(outcome, dict):
                self._counts["completions"] += 1
                return self._completion(outcome, model, sent, started)
            if outcome.reason == "response_format" and json_mode and self.settings.json_mode is None:
                self._json_mode = False  # remembered: this server has no JSON mode
                self._retries["response_format"] += 1
                attempt -= 1
                continue
            await self._before_retry(outcome, attempt, sent)

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    # ------------------------------------------------------------------------------------------ internals

    async def _before_retry(self, failure: _Failure, attempt: int, sent: int) -> None:
        """Raise if ``failure`` ends the call (after ``attempt`` attempts and ``sent`` requests); otherwise sleep the
        backoff (and start a cooldown if due)."""
        settings = self.settings
        if failure.retry_after is not None and failure.retry_after > settings.max_retry_after:
            failure = _Failure("retry_after", f"{failure.detail}; the server asks to wait "
                               f"{failure.retry_after:g} s, more than max_retry_after={settings.max_retry_after:g}",
                               failure.status)
        if not failure.retryable or attempt >= settings.max_attempts:
            self._counts["failures"] += 1
            if failure.reason in ("timeout", "connection"):
                if self._unanswered.failed() and self._broken is None:
                    raise self._stop(self._not_answering(failure), sent)
            if failure.fatal:
                raise self._stop(failure, sent)
            raise self._error(failure, sent)
        delay = backoff_delay(attempt, base=settings.backoff_base, ceiling=settings.backoff_max, rng=self._rng,
                              retry_after=failure.retry_after)
        if failure.status == 429 or failure.retry_after is not None:
            self._gate.cool_down(delay)
        self._retries[failure.reason] += 1
        deadline = self._clock() + delay
        while (remaining := deadline - self._clock()) > 0:
            await self._sleep(remaining)

    def _not_answering(self, failure: _Failure) -> _Failure:
        count = self.settings.max_consecutive_failures
        calls = f"{count} calls in a row" if count != 1 else "a call"
        return _Failure("not_answering", f"the server at {self.settings.base_url} is not answering: {calls} got no "
                        f"answer after every attempt (the last: {failure.detail})")

    def _stop(self, failure: _Failure, attempts: int) -> FatalRequestError:
        """Stop the client for good because of ``failure``; the error for the call that met it."""
        if failure.reason == "not_answering":
            advice = ("Check that the server is running and reachable at this address, or raise the timeout or "
                      "max_consecutive_failures.")
        else:
            advice = _advice(failure)
        message = (f"POST {self._url} failed after {attempts} attempt{'s' if attempts != 1 else ''}: "
                   f"{failure.detail}. {advice} The client sends no more requests: fix this, then run again.")
        reason = "not_answering" if failure.reason == "not_answering" else "refused"
        error = FatalRequestError(self._redact(message), status=failure.status, attempts=attempts, reason=reason)
        self._broken = error
        return error

    def _stopped(self, attempts: int) -> FatalRequestError:
        """The error for a call made (or still going on) after the client stopped."""
        assert self._broken is not None
        self._counts["failures"] += 1
        broken = self._broken
        done = f"stopped after {attempts} attempt{'s' if attempts != 1 else ''}" if attempts else "not sent"
        return FatalRequestError(f"{done}: the client stopped after an earlier failure. {broken}",
                                 status=broken.status, attempts=attempts, reason=broken.reason)

    def _error(self, failure: _Failure, attempts: int) -> JudgeRequestError:
        """The error for a call that ends with ``failure`` after ``attempts`` HTTP requests; its message is
        redacted (see the module docstring)."""
        plural = "s" if attempts != 1 else ""
        message = f"POST {self._url} failed after {attempts} attempt{plural}: {failure.detail}. {_advice(failure)}"
        return JudgeRequestError(self._redact(message), status=failure.status, attempts=attempts)

    async def _attempt(self, body: dict[str, Any], estimate: int) -> dict[str, Any] | _Failure | None:
        """One request: a slot, the gate, the POST; the parsed body of a usable answer, or why not (None when the
        client stopped while this attempt waited, and nothing was sent)."""
        async with self._slots:
            entry = await self._gate.enter(estimate)
            if self._broken is not None:
                return None
            self._counts["requests"] += 1
            try:
                async with asyncio.timeout(self.settings.timeout):
                    response = await self._http.post(self._url, json=body, params=self._params)
            except (TimeoutError, httpx.TimeoutException):
                return _Failure("timeout", f"no complete answer within {self.settings.timeout:g} s",
                                retryable=True)
            except (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ProxyError) as exc:
                return _Failure("connection", f"connection failed ({type(exc).__name__}: {exc})", retryable=True)
            except httpx.DecodingError as exc:
                return _Failure("bad_body", f"a body that cannot be decoded ({exc})", retryable=True)
            except httpx.HTTPError as exc:
                return _Failure("http", f"{type(exc).__name__}: {exc}", fatal=True)
        outcome = self._read(response)
        if isinstance(outcome, dict):
            self._gate.settle(entry, _usage(outcome)[2])
        return outcome

    def _read(self, response: httpx.Response) -> dict[str, Any] | _Failure:
        self._unanswered.answered()
        status = response.status_code
        if status == 429:
            self._counts["rate_limited"] += 1
        if not 200 <= status < 300:
            return self._status_failure(response)
        try:
            payload = response.json()
        except ValueError:
            return _Failure("bad_body", f"HTTP {status} with a body that is not JSON: {response.text[:120]!r}",
                            status, retryable=True)
        choices = payload.get("choices") if isinstance(payload, dict) else None
        if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict) \
                or not isinstance(choices[0].get("message"), dict):
            return _Failure("empty_choices", f"HTTP {status} without an answer in 'choices': "
                            f"{response.text[:120]!r}", status, retryable=True)
        return payload

    def _status_failure(self, response: httpx.Response) -> _Failure:
        status = response.status_code
        message, code = _server_message(response)
        detail = f"HTTP {status} {message!r}"
        if status in (400, 422) and (code in PER_REQUEST_CODES or _PER_REQUEST_MESSAGE.search(message)):
            return _Failure("per_request", detail, status)
        if status in (400, 422) and "response_format" in response.text.lower():
            return _Failure("response_format", detail, status, fatal=True)  # unless the JSON-mode fallback applies
        if status == 429 and code == "insufficient_quota":
            return _Failure("insufficient_quota", detail, status, fatal=True)
        if status not in RETRYABLE_STATUSES:
            return _Failure(str(status), detail, status, fatal=status in FATAL_STATUSES)
        return _Failure(str(status), detail, status, retryable=True,
                        retry_after=retry_after_seconds(response.headers))

    def _completion(self, payload: dict[str, Any], model: str, attempts: int, started: float) -> Completion:
        choice = payload["choices"][0]
        content = choice["message"].get("content")
        prompt, completion, _ = _usage(payload)
        if prompt is None and completion is None:
            self._counts["unreported_usage"] += 1
        self._counts["prompt_tokens"] += prompt or 0
        self._counts["completion_tokens"] += completion or 0
        finish = choice.get("finish_reason")
        return Completion(text=content if isinstance(content, str) else "", model=str(payload.get("model") or model),
                          prompt_tokens=prompt, completion_tokens=completion, attempts=attempts,
                          latency=self._clock() - started, finish_reason=finish if isinstance(finish, str) else None,
                          raw=payload)


def _usage(payload: Mapping[str, Any]) -> tuple[int | None, int | None, int | None]:
    """(prompt, completion, total) tokens from the body's ``usage``; None for what it does not report."""
    usage = payload.get("usage")
    if not isinstance(usage, dict):
        return None, None, None

    def number(name: str) -> int | None:
        value = usage.get(name)
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    prompt, completion, total = number("prompt_tokens"), number("completion_tokens"), number("total_tokens")
    if total is None and (prompt is not None or completion is not None):
        total = (prompt or 0) + (completion or 0)
    return prompt, completion, total
