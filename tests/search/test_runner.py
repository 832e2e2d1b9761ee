"""The runner: snapshots resumed without sending what is recorded (also after kill -9), failed queries recorded as
failed and sent again only on request, configurations told apart by hash, Python engines, and runs that keep the
engine's order."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from gainscope.errors import EngineRequestError, InconsistentInputError, InputError
from gainscope.search import (
    Hit,
    QueryResult,
    RetryPolicy,
    RunSettings,
    SearchQuery,
    SnapshotStore,
    load_engine,
    results_to_run,
    run_queries,
    search_queries,
)
from gainscope.search.python import PythonEngine
from gainscope.search.runner import empty_queries, unordered_queries

from .server import FakeSearchServer, Recorded, Reply

FAST = RunSettings(top=5, concurrency=2, retry=RetryPolicy(max_attempts=3, backoff_base=0.001, backoff_max=0.002))
TOML = '''
[engines.shop]
kind = "http"
url = "{url}/search"
params = {{ q = "{{{{query}}}}", boost = "{{{{boost}}}}" }}
docs = "items"
id = "id"
score = "score"
[engines.shop.knobs]
boost = 1
'''


def items(request: Recorded, n: int) -> Reply:
    text = request.param("q")
    return Reply(200, {"items": [{"id": f"{text}-{i}", "score": 3 - i} for i in range(3)]})


def shop(tmp_path: Path, url: str):
    (tmp_path / "engines.toml").write_text(TOML.format(url=url))
    return load_engine(f"{tmp_path / 'engines.toml'}:shop")


def queries(n: int) -> list[SearchQuery]:
    return [SearchQuery(f"q{i}", f"text{i}") for i in range(n)]


def run(engine, qs, store, **kwargs):
    return asyncio.run(run_queries(engine, qs, store, **{"settings": FAST, **kwargs}))


def test_a_rerun_sends_only_what_is_not_recorded(tmp_path: Path) -> None:
    with FakeSearchServer(items) as server, SnapshotStore.open(tmp_path / "s.sqlite") as store:
        first = run(shop(tmp_path, server.url), queries(2), store)
        assert (first.sent, first.reused, len(server.requests)) == (2, 0, 2)
        second = run(shop(tmp_path, server.url), queries(3), store)
        assert (second.sent, second.reused, len(server.requests)) == (1, 2, 3)
        assert server.requests[-1].param("q") == "text2"
        assert second.snapshot.name == first.snapshot.name == f"shop@{first.snapshot.configuration_hash[:8]}"
        assert [r.query_id for r in second.results] == ["q0", "q1", "q2"]
        # another knob value is another configuration, hence another snapshot
        other = run(shop(tmp_path, server.url), queries(3), store, knobs={"boost": 2})
        assert other.snapshot.name != first.snapshot.name and other.sent == 3
        assert server.requests[-1].param("boost") == "2"


def test_failed_queries_stay_failed_until_rerun_failed(tmp_path: Path) -> None:
    broken = {"text1"}

    def behaviour(request: Recorded, n: int) -> Reply:
        if request.param("q") in broken:
            return Reply(400, {"error": "bad query"})
        return items(request, n)

    with FakeSearchServer(behaviour) as server, SnapshotStore.open(tmp_path / "s.sqlite") as store:
        engine = shop(tmp_path, server.url)
        outcome = run(engine, queries(3), store)
        assert [(r.query_id, r.status) for r in outcome.results] == [("q0", "ok"), ("q1", "failed"), ("q2", "ok")]
        assert outcome.failed[0].hits == () and not outcome.complete
        again = run(engine, queries(3), store)
        assert again.sent == 0 and len(server.requests) == 3 and [r.query_id for r in again.failed] == ["q1"]
        broken.clear()
        fixed = run(engine, queries(3), store, settings=RunSettings(top=5, rerun_failed=True))
        assert fixed.sent == 1 and server.requests[-1].param("q") == "text1" and fixed.complete


def test_zero_hits_are_recorded_as_ok_with_no_hits(tmp_path: Path) -> None:
    with FakeSearchServer(lambda request, n: Reply(200, {"items": []})) as server, \
            SnapshotStore.open(tmp_path / "s.sqlite") as store:
        outcome = run(shop(tmp_path, server.url), queries(1), store)
    [result] = outcome.results
    assert (result.status, result.hits, result.error) == ("ok", (), None) and outcome.complete


def test_a_name_taken_by_another_configuration_is_an_error(tmp_path: Path) -> None:
    with FakeSearchServer(items) as server, SnapshotStore.open(tmp_path / "s.sqlite") as store:
        engine = shop(tmp_path, server.url)
        run(engine, queries(1), store, name="baseline")
        with pytest.raises(InputError) as caught:
            run(engine, queries(1), store, name="baseline", knobs={"boost": 3})
    assert str(caught.value) == (f"{tmp_path / 's.sqlite'}: snapshot 'baseline' was taken with another configuration "
                                 "(knobs.boost: 1 then, 3 now); give this one another name (--name), or use the "
                                 "snapshot's own configuration to resume it")


def test_duplicate_query_ids_are_refused(tmp_path: Path) -> None:
    with SnapshotStore.open(tmp_path / "s.sqlite") as store, pytest.raises(InconsistentInputError) as caught:
        run(PythonEngine(lambda q, p, t: []), [SearchQuery("a", "x"), SearchQuery("a", "y")], store)
    assert str(caught.value) == ("query id 'a' is used twice (queries 1 and 2); ids key the run and the judgments, so "
                                 "each query needs its own")


@pytest.mark.slow
def test_a_run_killed_with_sigkill_resumes_without_resending_what_is_recorded(tmp_path: Path) -> None:
    """A real process, killed mid-run: the server holds request 6 until the test has killed the process."""
    total, hold_at = 12, 6
    arrived, release = threading.Event(), threading.Event()

    def behaviour(request: Recorded, n: int) -> Reply:
        if n == hold_at:
            arrived.set()
            return Reply(200, {"items": []}, hold=release)
        return items(request, n)

    qfile = tmp_path / "queries.jsonl"
    qfile.write_text("".join(json.dumps({"id": q.id, "text": q.text}) + "\n" for q in queries(total)))
    store_path = tmp_path / "s.sqlite"
    with FakeSearchServer(behaviour) as server:
        shop(tmp_path, server.url)
        command = [sys.executable, "-m", "gainscope", "search", "--engine", f"{tmp_path / 'engines.toml'}:shop",
                   "--queries", str(qfile), "--snapshot", str(store_path), "--concurrency", "1", "-o",
                   str(tmp_path / "run.trec")]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert arrived.wait(120), "the run never reached the held request"
            os.kill(process.pid, signal.SIGKILL)
            process.wait(60)
        finally:
            release.set()
            if process.poll() is None:
                process.kill()
            process.communicate()
        assert process.returncode == -signal.SIGKILL
        with SnapshotStore.open(store_path) as store:
            [snapshot] = store.snapshots()
            recorded = {qid for qid, status in store.statuses(snapshot).items() if status == "ok"}
        assert 3 <= len(recorded) <= hold_at - 1  # everything answered before the kill (a last commit may be lost)
        sent_before = len(server.requests)
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        resent = [r.param("q") for r in server.requests[sent_before:]]
    assert sorted(resent) == sorted(q.text for q in queries(total) if q.id not in recorded)
    assert f"{len(recorded)} recorded before" in done.stderr
    lines = (tmp_path / "run.trec").read_text().splitlines()
    assert {line.split()[0] for line in lines} == {q.id for q in queries(total)}


# ---------------------------------------------------------------------------------------------- Python engines
def test_python_engines_return_ids_pairs_dicts_or_hits(tmp_path: Path) -> None:
    def retriever(query: str, params: dict, top: int) -> list:
        shapes = {"ids": ["a", "b"], "pairs": [("a", 2.0), ("b", 1)], "dicts": [{"doc_id": "a", "score": 1.5,
                                                                                 "title": "A"}],
                  "hits": [Hit("z", 0.5)], "total": {"hits": ["a"], "total": 40}}
        return shapes[query] if query == "total" else shapes[query][:top]

    engine = PythonEngine(retriever, knobs={"alpha": 0.5})
    assert engine.search("ids").ids == ["a", "b"]
    assert [(h.id, h.score) for h in engine.search("pairs").hits] == [("a", 2.0), ("b", 1.0)]
    assert engine.search("dicts").hits[0].fields == {"title": "A"}
    assert engine.search("hits").hits == (Hit("z", 0.5),)
    assert engine.search("total").total == 40
    assert engine.search("ids", top=1).ids == ["a"]


def test_python_engines_get_knobs_and_options_and_may_be_async(tmp_path: Path) -> None:
    calls: list = []

    async def dense(query: str, params: dict, top: int, options: dict) -> list:
        calls.append((query, params, top, options))
        return [f"{query}-{params['alpha']}-{options.get('lang', '-')}"]

    with SnapshotStore.open(tmp_path / "s.sqlite") as store:
        outcome = search_queries(PythonEngine(dense, knobs={"alpha": 0.5}),
                                 [SearchQuery("q1", "x", {"lang": "en"}), SearchQuery("q2", "y")], store,
                                 knobs={"alpha": 0.7}, settings=FAST)
    assert sorted(calls) == [("x", {"alpha": 0.7}, 5, {"lang": "en"}), ("y", {"alpha": 0.7}, 5, {})]
    assert [r.hits[0].id for r in outcome.results] == ["x-0.7-en", "y-0.7--"]


def test_python_engine_errors_fail_the_query_and_retryable_ones_are_retried(tmp_path: Path) -> None:
    attempts = {"flaky": 0}

    def engine_fn(query: str, params: dict, top: int) -> object:
        if query == "boom":
            raise ValueError("index not loaded")
        if query == "flaky":
            attempts["flaky"] += 1
            if attempts["flaky"] < 3:
                raise EngineRequestError("temporarily down", retryable=True)
            return ["ok"]
        return "not a list"

    engine = PythonEngine(engine_fn, name="vec")
    with SnapshotStore.open(tmp_path / "s.sqlite") as store:
        outcome = search_queries(engine, [SearchQuery("a", "boom"), SearchQuery("b", "flaky"),
                                          SearchQuery("c", "str")], store, settings=FAST)
    boom, flaky, text = outcome.results
    target = f"{engine_fn.__module__}:{engine_fn.__qualname__}"
    assert boom.error == f"engine 'vec', query 'a' ('boom'): {target} raised ValueError: index not loaded"
    assert (flaky.status, flaky.attempts) == ("ok", 3)
    assert text.error == (f"engine 'vec', query 'c' ('str'): {target} returned str 'not a list'; return a list of "
                          "ids, of (id, score) pairs or of {'id': ..., 'score': ...} dicts")


# ---------------------------------------------------------------------------------------------- runs
def result(qid: str, hits: list[tuple[str, float | None]], status: str = "ok") -> QueryResult:
    return QueryResult(qid, 0, qid, status, "t", 1, hits=tuple(Hit(d, s) for d, s in hits))


def rows(run) -> list[tuple]:
    return [tuple(r) for r in run.frame.select("query_id", "doc_id", "score", "rank").iter_rows()]


def test_runs_keep_the_engine_scores_when_they_decrease_and_the_engine_order_otherwise() -> None:
    ordered = [result("q1", [("b", 2.5), ("a", 1.0)])]
    run, notes = results_to_run(ordered, name="e")
    assert rows(run) == [("q1", "b", 2.5, 1), ("q1", "a", 1.0, 2)] and notes == []
    # q2's tie would be ordered by doc id descending (z before a) by trec_eval: every query gets n - rank + 1
    tied = [*ordered, result("q2", [("a", 1.0), ("z", 1.0), ("m", 0.5)]), result("q3", [], "failed")]
    run, notes = results_to_run(tied, name="e")
    assert rows(run) == [("q1", "b", 2.0, 1), ("q1", "a", 1.0, 2), ("q2", "a", 3.0, 1), ("q2", "z", 2.0, 2),
                         ("q2", "m", 1.0, 3)]
    assert notes == ["1 query (q2) came back with scores that tie, are missing or do not decrease; trec_eval would "
                     "order ties by doc id, which is not the engine's order, so the run's scores are n - rank + 1 (the "
                     "engine's order) for every query; the engine's scores are in the snapshot"]
    run, notes = results_to_run(tied, name="e", scores="engine")
    assert rows(run)[2:4] == [("q2", "a", 1.0, 1), ("q2", "z", 1.0, 2)]
    assert notes[0].endswith("the run keeps the engine's scores (scores='engine'), so trec_eval orders their ties "
                             "by doc id, not as the engine did")


def test_queries_answered_with_no_document_are_named_since_the_run_cannot_hold_them() -> None:
    answered = [result("q1", [("b", 2.5)]), result("q2", []), result("q3", [], "failed"), result("q4", [])]
    run, notes = results_to_run(answered, name="e")
    assert rows(run) == [("q1", "b", 2.5, 1)]  # q3 failed: reported by the caller, not here
    assert notes == ["2 queries (q2, q4) came back with no document, so the run has no line for them: evaluated, a "
                     "judged query without a ranking scores 0 (trec_eval -c)"]
    assert empty_queries(answered) == ["q2", "q4"] and unordered_queries(answered) == []


@pytest.mark.parametrize(("status", "retry_after", "qps", "pause"), [
    (429, 2.0, 10.0, 2.0),    # the server said how long: everybody waits, cap or not
    (503, 2.0, None, 2.0),
    (429, None, None, 0.3),   # a 429 and no cap bounding the load: everybody waits this query's backoff
    (429, None, 10.0, None),  # a 429 under a --qps cap: only the rejected query waits
    (500, None, None, None),  # other failures: only that query waits
])
def test_who_waits_after_a_failure(status: int, retry_after: float | None, qps: float | None,
                                   pause: float | None) -> None:
    from gainscope.search.runner import cooldown

    error = EngineRequestError("x", status=status, retryable=True, retry_after=retry_after)
    assert cooldown(error, 0.3, qps) == pause


def test_a_qps_cap_caps_the_backoff_at_one_pass_of_the_slots_through_the_gate() -> None:
    from gainscope.search.engine import RetryPolicy
    from gainscope.search.runner import capped_backoff

    policy = RetryPolicy(backoff_base=0.25, backoff_max=10.0)
    assert capped_backoff(policy, None, 16) is policy                      # no cap: the policy as given
    assert capped_backoff(policy, 100.0, 16).backoff_max == 0.25           # 16 / 100 = 0.16 < the base 0.25
    assert capped_backoff(policy, 2.0, 16).backoff_max == 8.0              # 16 / 2 = 8 seconds
    assert capped_backoff(policy, 0.5, 16).backoff_max == 10.0             # 16 / 0.5 = 32, above the policy's 10
    assert capped_backoff(policy, 2.0, 16).max_retry_after == policy.max_retry_after  # Retry-After still honoured
