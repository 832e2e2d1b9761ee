"""ChatClient against a real chat-completions server on 127.0.0.1 (tests/chat_server.py); httpx is not mocked.

Delays are scaled down (backoff of hundredths of a second, 1 s rate windows) so the file runs in seconds.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
from collections.abc import Callable, Coroutine
from dataclasses import replace
from email.utils import formatdate
from typing import Any, TypeVar

import pytest
from tests.chat_server import FakeChatServer, RecordedRequest, Reply, default_behaviour

from gainscope.errors import JudgeRequestError, PolicyError
from gainscope.judges.client import (
    ChatClient,
    ClientSettings,
    Completion,
    FatalRequestError,
    retry_after_seconds,
)

T = TypeVar("T")

# The limits hold at the client's send times; arrivals at the server lag them by a varying few milliseconds (more
# for a request that opens a connection), so spacing between arrivals is checked with this slack. Retry-After is
# exact: the client hears the 429 after it arrived, then waits.
SLACK = 0.05
#: how late the server may see a request the client sent on time: arrival times lag send times by the
#: scheduling delay of two processes on a loaded machine (seen up to ~0.1 s with the suite on both cores);
#: an unthrottled client would still send everything within milliseconds, so the window checks keep biting
RATE_SLACK = 0.25


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def fast(url: str, **overrides: Any) -> ClientSettings:
    """Settings with a backoff of hundredths of a second, for tests."""
    settings = ClientSettings(url, backoff_base=0.01, backoff_max=0.05, timeout=5.0, max_attempts=4)
    return replace(settings, **overrides)


def ask(text: str = "query: q1 document: d1 grade=3") -> list[dict[str, str]]:
    return [{"role": "system", "content": "You grade relevance."}, {"role": "user", "content": text}]


async def complete_all(settings: ClientSettings, texts: list[str], **kwargs: Any) -> list[Completion]:
    async with ChatClient(settings) as client:
        return list(await asyncio.gather(*(client.complete("judge", ask(text), **kwargs) for text in texts)))


async def complete_one(settings: ClientSettings, text: str = "query: q1 document: d1 grade=3",
                       **kwargs: Any) -> Completion:
    async with ChatClient(settings) as client:
        return await client.complete("judge", ask(text), **kwargs)


def first_then_ok(reply: Reply, times: int = 1) -> Callable[[dict[str, Any], int], Reply]:
    """``reply`` for the first ``times`` attempts of each request, then the default answer."""
    return lambda body, attempt: reply if attempt <= times else default_behaviour(body, attempt)


def max_in_window(times: list[float], length: float) -> int:
    """The most arrivals in any half-open window [t, t + length) starting at an arrival."""
    return max(sum(1 for other in times if start <= other < start + length) for start in times)


def chat_requests(server: FakeChatServer) -> list[RecordedRequest]:
    return [request for request in server.requests if request.path.endswith("/chat/completions")]


# ------------------------------------------------------------------------------------------------ answers


def test_ok_answer_with_usage(chat_server: FakeChatServer) -> None:
    done = run(complete_one(fast(chat_server.url), max_tokens=50, seed=7))
    assert done.text == '{"grade": 3, "reasoning": "The passage matches the query at level 3."}'
    assert (done.model, done.attempts, done.finish_reason) == ("judge", 1, "stop")
    assert done.prompt_tokens is not None and done.prompt_tokens > 0
    assert done.completion_tokens == len(done.text) // 4
    assert done.raw["object"] == "chat.completion"
    [request] = chat_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body is not None
    assert request.body["messages"] == ask()
    assert (request.body["temperature"], request.body["max_tokens"], request.body["seed"]) == (0.0, 50, 7)


@pytest.mark.parametrize("kind", ["fenced", "malformed", "out_of_range", "missing_grade"])
def test_unusable_answers_are_returned_as_text(chat_server: FakeChatServer, kind: str) -> None:
    chat_server.behaviour = lambda body, attempt: Reply(kind, grade=2)
    done = run(complete_one(fast(chat_server.url)))
    expected = {"fenced": "```json\n{", "malformed": "Relevance: high", "out_of_range": '{"grade": 7',
                "missing_grade": '{"reasoning"'}[kind]
    assert done.text.startswith(expected)
    assert done.attempts == 1 and chat_server.count() == 1


def test_usage_is_none_when_the_server_gives_none(chat_server: FakeChatServer) -> None:
    chat_server.behaviour = lambda body, attempt: Reply("no_usage")

    async def go() -> tuple[Completion, int]:
        async with ChatClient(fast(chat_server.url)) as client:
            done = await client.complete("judge", ask())
            return done, client.stats.unreported_usage

    done, unreported = run(go())
    assert (done.prompt_tokens, done.completion_tokens, unreported) == (None, None, 1)


def test_extra_fields_are_merged_and_none_fields_left_out(chat_server: FakeChatServer) -> None:
    run(complete_one(fast(chat_server.url, json_mode=False), temperature=None,
                     extra={"max_completion_tokens": 20, "top_p": 1}))
    body = chat_server.requests[0].body
    assert body == {"model": "judge", "messages": ask(), "max_completion_tokens": 20, "top_p": 1}


# ------------------------------------------------------------------------------------------------ retries


def test_429_waits_at_least_retry_after(chat_server: FakeChatServer) -> None:
    chat_server.behaviour = first_then_ok(Reply("429", retry_after=0.3))

    async def go() -> tuple[Completion, Any]:
        async with ChatClient(fast(chat_server.url)) as client:
            return await client.complete("judge", ask()), client.stats

    done, stats = run(go())
    first, second = chat_server.request_times()
    assert second - first >= 0.3
    assert done.attempts == 2
    assert (stats.requests, stats.rate_limited, dict(stats.retries)) == (2, 1, {"429": 1})


def test_retry_after_ms_is_honoured(chat_server: FakeChatServer) -> None:
    chat_server.behaviour = first_then_ok(Reply("429", headers={"retry-after-ms": "250"}))
    run(complete_one(fast(chat_server.url)))
    first, second = chat_server.request_times()
    assert second - first >= 0.25


def test_a_429_pauses_every_request_of_the_client(chat_server: FakeChatServer) -> None:
    def behaviour(body: dict[str, Any], attempt: int) -> Reply:
        if "first" in str(body["messages"]) and attempt == 1:
            return Reply("429", retry_after=0.3)
        return default_behaviour(body, attempt)

    chat_server.behaviour = behaviour

    async def go() -> None:
        async with ChatClient(fast(chat_server.url)) as client:
            first = asyncio.create_task(client.complete("judge", ask("first")))
            while client.stats.rate_limited == 0:
                await asyncio.sleep(0.005)
            await asyncio.gather(first, *(client.complete("judge", ask(f"other {i}")) for i in range(3)))

    run(go())
    limited = next(r.time for r in chat_server.requests if r.kind == "429")
    others = [r.time for r in chat_server.requests if "other" in r.user_text]
    assert len(others) == 3 and min(others) - limited >= 0.3


@pytest.mark.parametrize("status", ["408", "409", "500", "502", "503", "504", "520", "522", "524", "529",
                                    "599"])
def test_server_errors_are_retried(chat_server: FakeChatServer, status: str) -> None:
    chat_server.behaviour = first_then_ok(Reply(status), times=2)

    async def go() -> tuple[Completion, Any]:
        async with ChatClient(fast(chat_server.url)) as client:
            return await client.complete("judge", ask()), client.stats

    done, stats = run(go())
    assert done.attempts == 3 and done.text.startswith('{"grade": 3')
    assert [r.kind for r in chat_server.requests] == [status, status, "ok"]
    assert dict(stats.retries) == {status: 2}


def test_attempts_count_every_http_request_of_the_call(chat_server: FakeChatServer) -> None:
    chat_server.behaviour = first_then_ok(Reply("500"), times=2)

    async def go() -> tuple[Completion, Any]:
        async with ChatClient(fast(chat_server.url)) as client:
            return await client.complete("judge", ask()), client.stats

    done, stats = run(go())
    assert done.attempts == 3 == stats.requests == chat_server.count()


def test_attempts_include_the_json_mode_resend(chat_server: FakeChatServer) -> None:
    chat_server.json_mode_supported = False
    chat_server.behaviour = first_then_ok(Reply("500"), times=2)

    async def go() -> tuple[Completion, Any]:
        async with ChatClient(fast(chat_server.url, max_attempts=3)) as client:
            return await client.complete("judge", ask()), client.stats

    done, stats = run(go())  # the resend does not use up one of the 3 attempts: 400, 500, 500, ok
    assert [r.kind for r in chat_server.requests] == ["400_response_format", "500", "500", "ok"]
    assert done.attempts == 4 == stats.requests


def test_a_failed_call_counts_its_http_requests(chat_server: FakeChatServer) -> None:
    chat_server.json_mode_supported = False
    chat_server.behaviour = lambda body, attempt: Reply("503")

    async def go() -> Any:
        async with ChatClient(fast(chat_server.url, max_attempts=2)) as client:
            with pytest.raises(JudgeRequestError) as caught:
                await client.complete("judge", ask())
            return caught.value, client.stats

    error, stats = run(go())
    assert error.attempts == 3 == stats.requests == chat_server.count()
    assert "failed after 3 attempts" in str(error)


@pytest.mark.parametrize("kind", ["drop", "empty_choices", "bad_body"])
def test_dropped_connections_and_broken_bodies_are_retried(chat_server: FakeChatServer, kind: str) -> None:
    chat_server.behaviour = first_then_ok(Reply(kind))
    done = run(complete_one(fast(chat_server.url)))
    assert done.attempts == 2
    assert [r.kind for r in chat_server.requests] == [kind, "ok"]


def test_timeout_is_retried(chat_server: FakeChatServer) -> None:
    chat_server.behaviour = first_then_ok(Reply("timeout", delay=1.0))
    done = run(complete_one(fast(chat_server.url, timeout=0.2)))
    assert done.attempts == 2
    first, second = chat_server.request_times()
    assert 0.2 - SLACK <= second - first < 1.0  # retried after the client's timeout, not after the server's hold


def test_all_attempts_failing_raises_with_status_and_attempts(chat_server: FakeChatServer) -> None:
    chat_server.behaviour = lambda body, attempt: Reply("503")
    with pytest.raises(JudgeRequestError) as caught:
        run(complete_one(fast(chat_server.url, max_attempts=4)))
    assert (caught.value.status, caught.value.attempts) == (503, 4)
    assert chat_server.count() == 4
    message = str(caught.value)
    assert message.startswith(f"POST {chat_server.url}/chat/completions failed after 4 attempts: HTTP 503")
    assert "check its health" in message


@pytest.mark.parametrize(("kind", "timeout"), [("drop", 5.0), ("timeout", 0.1)])
def test_failing_without_a_response_has_no_status(chat_server: FakeChatServer, kind: str, timeout: float) -> None:
    chat_server.behaviour = lambda body, attempt: Reply(kind, delay=1.0 if kind == "timeout" else 0.0)
    with pytest.raises(JudgeRequestError) as caught:
        run(complete_one(fast(chat_server.url, max_attempts=2, timeout=timeout)))
    assert (caught.value.status, caught.value.attempts) == (None, 2)
    assert chat_server.count() == 2


def test_refused_connection_is_retried_then_reported() -> None:
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(JudgeRequestError) as caught:
        run(complete_one(fast(f"http://127.0.0.1:{port}/v1", max_attempts=3)))
    assert (caught.value.status, caught.value.attempts) == (None, 3)
    assert "server is running" in str(caught.value)


@pytest.mark.parametrize(("status", "advice"), [("400", "refused the request"), ("401", "API key"),
                                                ("404", "base URL"), ("422", "refused the request"),
                                                ("501", "does not implement"), ("505", "does not implement")])
def test_other_client_errors_are_not_retried(chat_server: FakeChatServer, status: str, advice: str) -> None:
    chat_server.behaviour = lambda body, attempt: Reply(status)
    with pytest.raises(JudgeRequestError) as caught:
        run(complete_one(fast(chat_server.url, api_key="sk-secret-123")))
    assert (caught.value.status, caught.value.attempts) == (int(status), 1)
    assert chat_server.count() == 1
    assert advice in str(caught.value) and "sk-secret-123" not in str(caught.value)


def test_insufficient_quota_is_not_retried(chat_server: FakeChatServer) -> None:
    quota = '{"error": {"message": "You exceeded your current quota.", "type": "insufficient_quota", ' \
            '"param": null, "code": "insufficient_quota"}}'
    chat_server.behaviour = lambda body, attempt: Reply("429", text=quota)
    with pytest.raises(JudgeRequestError, match="no quota left") as caught:
        run(complete_one(fast(chat_server.url)))
    assert caught.value.attempts == 1 and chat_server.count() == 1


def test_retry_after_beyond_the_maximum_fails_at_once(chat_server: FakeChatServer) -> None:
    chat_server.behaviour = lambda body, attempt: Reply("429", retry_after=3600)
    with pytest.raises(JudgeRequestError, match="asks to wait 3600 s, more than max_retry_after=60") as caught:
        run(complete_one(fast(chat_server.url, max_retry_after=60)))
    assert (caught.value.status, caught.value.attempts) == (429, 1)


def test_backoff_is_exponential_with_full_jitter(chat_server: FakeChatServer) -> None:
    chat_server.behaviour = first_then_ok(Reply("503"), times=3)
    now = [0.0]
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    settings = fast(chat_server.url, backoff_base=1.0, backoff_max=3.0, max_attempts=6)

    async def go() -> Completion:
        async with ChatClient(settings, sleep=sleep, clock=lambda: now[0], rng=random.Random(7)) as client:
            return await client.complete("judge", ask())

    assert run(go()).attempts == 4
    jitter = random.Random(7)
    assert slept == pytest.approx([jitter.uniform(0, 1.0), jitter.uniform(0, 2.0), jitter.uniform(0, 3.0)])


# ------------------------------------------------------------------------------------------------ stopping


async def calls(settings: ClientSettings, texts: list[str]) -> tuple[list[Completion | JudgeRequestError], Any]:
    """Sequential calls on one client: each one's completion or error, and the client's stats."""
    outcomes: list[Completion | JudgeRequestError] = []
    async with ChatClient(settings) as client:
        for text in texts:
            try:
                outcomes.append(await client.complete("judge", ask(text)))
            except JudgeRequestError as exc:
                outcomes.append(exc)
        return outcomes, client.stats


def test_a_401_stops_the_client_after_one_request(chat_server: FakeChatServer) -> None:
    chat_server.behaviour = lambda body, attempt: Reply("401")
    (first, second, third), stats = run(calls(fast(chat_server.url, api_key=SECRET_KEY), ["q1", "q2", "q3"]))
    assert isinstance(first, FatalRequestError) and first.fatal
    assert (first.reason, first.status, first.attempts) == ("refused", 401, 1)
    assert "Check the API key" in str(first) and "sends no more requests" in str(first)
    for later in (second, third):
        assert isinstance(later, FatalRequestError)
        assert (later.reason, later.status, later.attempts) == ("refused", 401, 0)
        assert str(later).startswith("not sent: the client stopped") and "Check the API key" in str(later)
    assert chat_server.count() == 1 and (stats.requests, stats.failures) == (1, 3)


@pytest.mark.parametrize(("status", "text", "advice"), [
    ("400", "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens'.",
     "the parameters sent"),
    ("403", None, "API key"),
    ("404", "The model `judge` does not exist or you do not have access to it.", "model name"),
    ("422", None, "the parameters sent"),
    ("501", None, "does not implement"),
    ("505", None, "does not implement"),
    ("429", '{"error": {"message": "You exceeded your current quota.", "code": "insufficient_quota"}}', "no quota"),
])
def test_permanent_refusals_stop_the_client(chat_server: FakeChatServer, status: str, text: str | None,
                                            advice: str) -> None:
    if text is not None and not text.startswith("{"):
        text = json.dumps({"error": {"message": text, "type": "invalid_request_error", "code": None}})
    chat_server.behaviour = lambda body, attempt: Reply(status, text=text)
    (first, second), _ = run(calls(fast(chat_server.url), ["q1", "q2"]))
    assert isinstance(first, FatalRequestError) and (first.status, first.attempts) == (int(status), 1)
    assert advice in str(first)
    assert isinstance(second, FatalRequestError) and second.attempts == 0
    assert chat_server.count() == 1


@pytest.mark.parametrize("error", [
    {"message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
     "code": "context_length_exceeded"},
    {"message": "The response was filtered due to the prompt triggering content management policy.",
     "code": "content_filter"},
    {"message": "the request exceeds the available context size, try increasing it", "code": 400},
])
def test_a_400_about_one_request_fails_that_call_only(chat_server: FakeChatServer, error: dict[str, Any]) -> None:
    def behaviour(body: dict[str, Any], attempt: int) -> Reply:
        if "long" in str(body["messages"]):
            return Reply("400", text=json.dumps({"error": error}))
        return default_behaviour(body, attempt)

    chat_server.behaviour = behaviour
    (failed, done), _ = run(calls(fast(chat_server.url), ["long", "short"]))
    assert isinstance(failed, JudgeRequestError) and not isinstance(failed, FatalRequestError)
    assert failed.status == 400 and "this request only" in str(failed)
    assert isinstance(done, Completion) and chat_server.count() == 2


def test_json_mode_required_but_missing_stops_the_client(chat_server: FakeChatServer) -> None:
    chat_server.json_mode_supported = False
    (first, second), _ = run(calls(fast(chat_server.url, json_mode=True), ["q1", "q2"]))
    assert isinstance(first, FatalRequestError) and first.status == 400 and "response_format" in str(first)
    assert isinstance(second, FatalRequestError) and chat_server.count() == 1


def test_a_server_that_stops_answering_stops_the_client(chat_server: FakeChatServer) -> None:
    chat_server.behaviour = lambda body, attempt: Reply("drop")
    outcomes, stats = run(calls(fast(chat_server.url, max_attempts=2), [f"q{i}" for i in range(7)]))
    assert all(isinstance(o, JudgeRequestError) and not isinstance(o, FatalRequestError) for o in outcomes[:4])
    fifth, sixth, seventh = outcomes[4:]
    assert isinstance(fifth, FatalRequestError) and (fifth.reason, fifth.status, fifth.attempts) == \
        ("not_answering", None, 2)
    assert f"the server at {chat_server.url} is not answering: 5 calls in a row" in str(fifth)
    assert isinstance(sixth, FatalRequestError) and isinstance(seventh, FatalRequestError)
    assert (sixth.reason, sixth.attempts) == ("not_answering", 0)
    assert chat_server.count() == 10 == stats.requests  # 5 calls of 2 attempts, then nothing


def test_a_refused_port_stops_the_client_after_max_consecutive_failures() -> None:
    base = f"http://user:pw-SECRET@127.0.0.1:{unused_port()}/v1"
    outcomes, stats = run(calls(fast(base, max_attempts=1, max_consecutive_failures=3), ["a", "b", "c", "d"]))
    assert [type(o).__name__ for o in outcomes] == ["JudgeRequestError", "JudgeRequestError", "FatalRequestError",
                                                    "FatalRequestError"]
    assert "the server at http://***@127.0.0.1" in str(outcomes[2])
    assert not any("SECRET" in str(outcome) for outcome in outcomes)
    assert stats.requests == 3


def test_any_answer_resets_the_count_of_calls_without_answer(chat_server: FakeChatServer) -> None:
    chat_server.behaviour = lambda body, attempt: Reply("drop") if "down" in str(body["messages"]) else \
        default_behaviour(body, attempt)
    texts = [f"down {i}" for i in range(4)] + ["up"] + [f"down again {i}" for i in range(4)]
    outcomes, _ = run(calls(fast(chat_server.url, max_attempts=1), texts))
    assert not any(isinstance(o, FatalRequestError) for o in outcomes)
    assert isinstance(outcomes[4], Completion) and chat_server.count() == 9


class FullBackoff(random.Random):
    """A jitter that always draws the ceiling: backoffs of exactly min(backoff_max, backoff_base * 2 ** (n - 1))."""

    def uniform(self, a: float, b: float) -> float:
        return b


def test_calls_under_way_stop_before_their_next_attempt(chat_server: FakeChatServer) -> None:
    def behaviour(body: dict[str, Any], attempt: int) -> Reply:
        return Reply("503") if "busy" in str(body["messages"]) else Reply("401")

    chat_server.behaviour = behaviour

    async def go() -> tuple[BaseException | None, BaseException | None]:
        settings = fast(chat_server.url, backoff_base=0.5, backoff_max=0.5)
        async with ChatClient(settings, rng=FullBackoff()) as client:  # busy sleeps 0.5 s after its 503
            busy = asyncio.create_task(client.complete("judge", ask("busy")))
            while chat_server.count() == 0:
                await asyncio.sleep(0.005)
            refused = await asyncio.gather(client.complete("judge", ask("refused")), return_exceptions=True)
            [outcome] = await asyncio.gather(busy, return_exceptions=True)
            return refused[0], outcome

    refused, busy = run(go())
    assert isinstance(refused, FatalRequestError) and refused.status == 401
    assert isinstance(busy, FatalRequestError) and busy.attempts == 1  # its 503, then no retry
    assert str(busy).startswith("stopped after 1 attempt: the client stopped after an earlier failure")
    assert [r.kind for r in chat_server.requests] == ["503", "401"]


# ------------------------------------------------------------------------------------------------ limits


def test_concurrency_is_bounded(chat_server: FakeChatServer) -> None:
    chat_server.behaviour = lambda body, attempt: Reply("slow", delay=0.1)
    run(complete_all(fast(chat_server.url, concurrency=3), [f"q{i}" for i in range(12)]))
    assert chat_server.count() == 12
    assert chat_server.max_concurrency() == 3


def test_requests_per_minute_hold_over_every_window(chat_server: FakeChatServer) -> None:
    settings = fast(chat_server.url, requests_per_minute=5, rate_window=1.0, concurrency=8)
    run(complete_all(settings, [f"q{i}" for i in range(12)]))
    times = chat_server.request_times()
    assert len(times) == 12
    assert times[-1] - times[0] >= 2.0 - RATE_SLACK  # 5 + 5 + 2: the third batch waits two windows
    assert max_in_window(times, 1.0 - RATE_SLACK) <= 5


def test_tokens_per_minute_hold_over_every_window(chat_server: FakeChatServer) -> None:
    chat_server.behaviour = lambda body, attempt: Reply("ok", usage=(100, 200))
    text = "x" * 380  # with the system message 400 characters = 100 tokens, + max_tokens 200 = 300
    settings = fast(chat_server.url, tokens_per_minute=1000, rate_window=1.0, concurrency=8)
    run(complete_all(settings, [text] * 7, max_tokens=200))
    times = chat_server.request_times()
    assert times[-1] - times[0] >= 2.0 - RATE_SLACK  # 3 + 3 + 1 requests of 300 tokens
    assert max_in_window(times, 1.0 - RATE_SLACK) <= 3


def test_tokens_per_minute_are_settled_with_the_real_usage(chat_server: FakeChatServer) -> None:
    chat_server.behaviour = lambda body, attempt: Reply("ok", usage=(5, 5))
    text = "x" * 380
    settings = fast(chat_server.url, tokens_per_minute=1000, rate_window=1.0, concurrency=1)

    async def go() -> Any:
        async with ChatClient(settings) as client:
            for _ in range(8):
                await client.complete("judge", ask(text), max_tokens=200)
            return client.stats

    stats = run(go())
    times = chat_server.request_times()
    assert max_in_window(times, 0.9) == 8  # reserved 300 each, settled at 10: no wait for a window
    assert (stats.prompt_tokens, stats.completion_tokens) == (40, 40)


def test_an_estimate_above_the_limit_is_sent_alone(chat_server: FakeChatServer) -> None:
    settings = fast(chat_server.url, tokens_per_minute=50, rate_window=0.3)
    run(complete_all(settings, ["y" * 400, "z" * 400]))
    first, second = chat_server.request_times()
    assert second - first >= 0.3 - SLACK


# ------------------------------------------------------------------------------------------------ JSON mode


def test_json_mode_is_sent_when_the_server_has_it(chat_server: FakeChatServer) -> None:
    run(complete_one(fast(chat_server.url)))
    assert chat_server.requests[0].body["response_format"] == {"type": "json_object"}  # type: ignore[index]


def test_json_mode_falls_back_once_and_remembers(chat_server: FakeChatServer) -> None:
    chat_server.json_mode_supported = False

    async def go() -> tuple[list[Completion], Any]:
        async with ChatClient(fast(chat_server.url)) as client:
            done = [await client.complete("judge", ask(f"q{i}")) for i in range(3)]
            return done, client.stats

    done, stats = run(go())
    assert [r.kind for r in chat_server.requests] == ["400_response_format", "ok", "ok", "ok"]
    assert ["response_format" in (r.body or {}) for r in chat_server.requests] == [True, False, False, False]
    assert [d.attempts for d in done] == [2, 1, 1]  # the resend is an HTTP request of the first call
    assert stats.json_mode is False and dict(stats.retries) == {"response_format": 1} and stats.requests == 4


def test_json_mode_true_does_not_fall_back(chat_server: FakeChatServer) -> None:
    chat_server.json_mode_supported = False
    with pytest.raises(JudgeRequestError) as caught:
        run(complete_one(fast(chat_server.url, json_mode=True)))
    assert (caught.value.status, caught.value.attempts, chat_server.count()) == (400, 1, 1)
    assert "response_format" in str(caught.value)


def test_json_mode_false_never_sends_it(chat_server: FakeChatServer) -> None:
    run(complete_one(fast(chat_server.url, json_mode=False)))
    assert "response_format" not in (chat_server.requests[0].body or {})


def test_a_response_format_given_by_the_caller_is_kept(chat_server: FakeChatServer) -> None:
    chat_server.json_mode_supported = False
    schema = {"type": "json_schema", "json_schema": {"name": "grade", "schema": {"type": "object"}}}
    with pytest.raises(JudgeRequestError):
        run(complete_one(fast(chat_server.url), extra={"response_format": schema}))
    assert [r.body["response_format"] for r in chat_server.requests] == [schema]  # type: ignore[index]


# ------------------------------------------------------------------------------------------------ auth, Azure


def test_bearer_key_is_sent_when_given(chat_server: FakeChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = fast(chat_server.url, api_key="sk-test", extra_headers={"X-Team": "search"})
    run(complete_one(settings))
    headers = chat_server.requests[0].headers
    assert headers["authorization"] == "Bearer sk-test" and headers["x-team"] == "search"
    assert "sk-test" not in repr(settings)


def test_key_from_the_environment(chat_server: FakeChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    run(complete_one(fast(chat_server.url)))
    assert chat_server.requests[0].headers["authorization"] == "Bearer sk-env"


def test_no_key_no_authorization(chat_server: FakeChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    run(complete_one(fast(chat_server.url)))
    assert "authorization" not in chat_server.requests[0].headers


def test_azure_uses_api_key_header_and_api_version(chat_server: FakeChatServer,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    base = chat_server.url.removesuffix("/v1") + "/openai/deployments/judge-dep"
    run(complete_one(fast(base, api_key="az-key", azure_api_version="2024-06-01")))
    [request] = chat_requests(chat_server)
    assert request.path == "/openai/deployments/judge-dep/chat/completions"
    assert request.query == "api-version=2024-06-01"
    assert request.headers["api-key"] == "az-key" and "authorization" not in request.headers


# ------------------------------------------------------------------------------------------------ helpers


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after": "0.3"}) == 0.3
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_seconds({"retry-after": formatdate(1_000_030, usegmt=True)}, now=1_000_000) == 30.0
    assert retry_after_seconds({"retry-after": formatdate(1_000_000, usegmt=True)}, now=1_000_030) == 0.0
    assert retry_after_seconds({"retry-after": "Thu, 01 Jan 1970 00:00:30 -0000"}, now=0) == 30.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


@pytest.mark.parametrize(("name", "value"), [("concurrency", 0), ("max_attempts", 0), ("requests_per_minute", 0),
                                             ("timeout", 0), ("base_url", "localhost:8000"),
                                             ("max_consecutive_failures", 0)])
def test_bad_settings_are_refused(name: str, value: Any) -> None:
    with pytest.raises(PolicyError, match=f"client setting {name}="):
        fields: dict[str, Any] = {"base_url": "http://127.0.0.1:1/v1", name: value}
        ClientSettings(**fields)



# ------------------------------------------------------------------------------------------------ secrets

SECRET_KEY = "sk-SECRET-key-123"


def unused_port() -> int:
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("key", [f"{SECRET_KEY}\n", f"{SECRET_KEY}\r\n", f"  {SECRET_KEY}\t"])
def test_whitespace_around_the_key_is_stripped(chat_server: FakeChatServer, key: str) -> None:
    settings = fast(chat_server.url, api_key=key)
    assert settings.api_key == SECRET_KEY
    run(complete_one(settings))
    assert chat_server.requests[0].headers["authorization"] == f"Bearer {SECRET_KEY}"


def test_whitespace_around_a_key_from_the_environment_is_stripped(chat_server: FakeChatServer,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", f"{SECRET_KEY}\r\n")
    run(complete_one(fast(chat_server.url)))
    assert chat_server.requests[0].headers["authorization"] == f"Bearer {SECRET_KEY}"


@pytest.mark.parametrize("key", ["sk-SECRET\nkey-123", "sk-SECRET\x00key", "sk-SECRET-clé", "“sk-SECRET-key”",
                                 "sk-SECRET\tkey"])
def test_a_key_with_control_or_non_ascii_characters_is_refused_unseen(key: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(PolicyError, match="API key from api_key contains a control or non-ASCII") as caught:
        ClientSettings("http://127.0.0.1:1/v1", api_key=key)
    assert "SECRET" not in str(caught.value) and "SECRET" not in repr(caught.value)
    if "\x00" in key:
        return  # no environment variable can hold it
    monkeypatch.setenv("OPENAI_API_KEY", key)
    settings = ClientSettings("http://127.0.0.1:1/v1")
    with pytest.raises(PolicyError, match="environment variable OPENAI_API_KEY contains") as caught:
        ChatClient(settings)
    assert "SECRET" not in str(caught.value)


def test_a_header_value_with_a_line_break_is_refused_unseen() -> None:
    with pytest.raises(PolicyError, match=r"extra_headers\['X-Api-Key'\] contains") as caught:
        ClientSettings("http://127.0.0.1:1/v1", extra_headers={"X-Api-Key": "SECRET\n"})
    assert "SECRET" not in str(caught.value)


def test_the_base_url_user_info_is_masked_in_repr_and_setting_errors() -> None:
    settings = ClientSettings("http://user:pw-SECRET@127.0.0.1:1/v1", api_key=SECRET_KEY)
    assert "SECRET" not in repr(settings) and "base_url='http://***@127.0.0.1:1/v1'" in repr(settings)
    with pytest.raises(PolicyError) as caught:
        ClientSettings("ftp://user:pw-SECRET@127.0.0.1:1/v1")
    assert "SECRET" not in str(caught.value) and "ftp://***@127.0.0.1:1/v1" in str(caught.value)


@pytest.mark.parametrize("path", ["http", "timeout", "connection", "refused", "protocol"])
def test_no_error_message_shows_the_key_or_the_url_password(chat_server: FakeChatServer, path: str) -> None:
    """Each way a call can fail, with a secret key and a base URL holding a user name and password."""
    port = unused_port() if path == "refused" else chat_server.port
    base = f"http://user-SECRET:pw-SECRET@127.0.0.1:{port}/v1"
    if path == "protocol":  # httpx would send the URL's user info as Basic auth instead of the broken Bearer key
        base = f"http://127.0.0.1:{port}/v1"
    settings = fast(base, api_key=SECRET_KEY, max_attempts=2, timeout=0.2)
    if path == "protocol":  # a key that got past the validation: httpx refuses to send it and names it
        object.__setattr__(settings, "api_key", f"{SECRET_KEY}\n")
    echo = json.dumps({"error": {"message": f"Incorrect API key provided: {SECRET_KEY} for user-SECRET:pw-SECRET "
                                            f"at {base}", "code": "invalid_api_key"}})
    chat_server.behaviour = {
        "http": lambda body, attempt: Reply("401", text=echo),
        "timeout": lambda body, attempt: Reply("timeout", delay=1.0),
        "connection": lambda body, attempt: Reply("drop"),
    }.get(path, default_behaviour)
    with pytest.raises(JudgeRequestError) as caught:
        run(complete_one(settings))
    message = str(caught.value)
    assert "SECRET" not in message and "SECRET" not in repr(caught.value), message
    assert f"POST http://{'***@' if path != 'protocol' else ''}127.0.0.1:{port}/v1/chat/completions" in message
    assert chat_server.count() == {"http": 1, "timeout": 2, "connection": 2, "refused": 0, "protocol": 0}[path]
