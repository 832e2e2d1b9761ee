"""One StoredJudge for every command that grades: two runs sharing a store (two store connections, so two owners
of claims, as two processes are) never pay twice for a pair -- in ``judge`` (label_pairs), ``temporal --mode llm``
(SharedJudge) and ``agent evaluate --judge``. The two runs go concurrently against the fake chat server, which
answers slowly enough that the second run looks at every pair while the first is still asking for it."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from tests.chat_server import FakeChatServer, Reply, user_text

from gainscope.errors import PolicyError
from gainscope.io.texts import Document, Query
from gainscope.judges.client import ChatClient, ClientSettings
from gainscope.judges.labeling import LLMJudge, label_pairs
from gainscope.judges.prompts import builtin_prompt
from gainscope.judges.spec import JudgeSpec
from gainscope.judges.store import JudgmentStore, PairKey, StoredLabel
from gainscope.judges.stored import StoredJudge

SLOW = 0.3  # seconds per answer: both runs have looked at every pair before the first answer arrives


def _asked(server: FakeChatServer) -> Counter[str]:
    """How often each user message was sent (one per pair)."""
    return Counter(user_text(r.body or {}) for r in server.requests)


async def _two_runs(store_path: Path, server: FakeChatServer, prompt: str,
                    run: Callable[[LLMJudge, JudgmentStore], Awaitable[Any]]) -> list[Any]:
    """``run(judge, store)`` twice at once, each with its own client and its own connection to the store."""
    spec = JudgeSpec("fake", builtin_prompt(prompt))

    async def one() -> Any:
        with JudgmentStore(store_path) as store:
            async with ChatClient(ClientSettings(base_url=server.url, api_key="k", max_attempts=1)) as chat:
                return await run(LLMJudge(spec, chat), store)

    return list(await asyncio.gather(one(), one()))


def test_judge_two_runs_pay_once(tmp_path: Path, chat_server: FakeChatServer) -> None:
    chat_server.behaviour = lambda body, attempt: Reply("slow", grade=2, delay=SLOW)
    queries = {"q": Query("q", "the query")}
    docs = {d: Document(d, f"[{d}] text") for d in ("a", "b", "c")}
    pairs = [("q", d) for d in docs]

    async def run(judge: LLMJudge, store: JudgmentStore) -> Any:
        return await label_pairs(pairs, queries, docs, judge=judge, store=store, workers=3)

    results = asyncio.run(_two_runs(tmp_path / "s.sqlite", chat_server, "graded", run))
    assert len(chat_server.requests) == 3 and set(_asked(chat_server).values()) == {1}
    # each run ends with every pair: judged by itself or taken from the store once the other recorded it
    assert [sorted(labels) for _, labels in results] == [pairs, pairs]
    assert sum(state.judged for state, _ in results) == 3 and all(state.elsewhere == 0 for state, _ in results)


def test_temporal_two_runs_pay_once(tmp_path: Path, chat_server: FakeChatServer) -> None:
    from gainscope.temporal import SharedJudge
    from gainscope.temporal.batch import aevaluate_records, read_records

    chat_server.behaviour = lambda body, attempt: Reply("slow", grade=3, delay=SLOW)
    line = {"query_id": "q1", "query": "Who won in 2020?",
            "retrieved": [{"doc_id": d, "text": f"doc {d} 2020"} for d in ("a", "b", "c")]}
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    records = read_records(path)

    async def run(judge: LLMJudge, store: JudgmentStore) -> Any:
        shared = SharedJudge(judge, store)  # what `temporal evaluate --mode llm --store` builds
        evaluation = await aevaluate_records(records, ["TemporalPrecision@3", "TemporalMRR@3"], mode="llm",
                                             judge=shared)
        return evaluation, shared

    results = asyncio.run(_two_runs(tmp_path / "s.sqlite", chat_server, "temporal", run))
    assert len(chat_server.requests) == 3 and set(_asked(chat_server).values()) == {1}
    assert [ev.per_query("run", "TemporalPrecision@3") for ev, _ in results] == [{"q1": 1.0}, {"q1": 1.0}]
    assert sorted((s.asked, s.stored) for _, s in results) == [(0, 3), (3, 0)]


def test_agent_two_runs_pay_once(tmp_path: Path, chat_server: FakeChatServer) -> None:
    from gainscope.agents.evaluate import evaluate_agents_async
    from gainscope.agents.readers import read_conversations

    chat_server.behaviour = lambda body, attempt: Reply("slow", grade=4, delay=SLOW)
    trace = {"conversation_id": "c1", "turns": [{"query": "who", "iterations": [
        {"searches": [{"results": [{"id": d, "snippet": f"snippet {d}"} for d in ("a", "b", "c")]}]}]}]}
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(trace) + "\n", encoding="utf-8")
    conversations = read_conversations(path)

    async def run(judge: LLMJudge, store: JudgmentStore) -> Any:
        stored = StoredJudge(judge, store)  # what `agent evaluate --judge MODEL --store` builds
        report = await evaluate_agents_async(conversations, judge=stored)
        return report, stored

    results = asyncio.run(_two_runs(tmp_path / "s.sqlite", chat_server, "graded", run))
    assert len(chat_server.requests) == 3 and set(_asked(chat_server).values()) == {1}
    assert all([g.gain for g in report.conversations[0].grades] == [4.0] * 3 for report, _ in results)
    assert sorted((s.asked, s.stored) for _, s in results) == [(0, 3), (3, 0)]


# ------------------------------------------------------------------------------------------- unit
class CountingJudge:
    """Grades 2 after ``gate`` opens; counts requests per (query id, doc id)."""

    def __init__(self, grade: int | None = 2) -> None:
        self.spec = JudgeSpec("count", builtin_prompt("graded"))
        self.asked: Counter[tuple[str, str]] = Counter()
        self.grade_value = grade

    def key(self, query: Query, document: Document) -> PairKey:
        return PairKey(self.spec.hash, query.query_id, "qh", document.doc_id, "dh")

    async def grade(self, query: Query, document: Document) -> StoredLabel:
        self.asked[(query.query_id, document.doc_id)] += 1
        await asyncio.sleep(0)
        status = "ok" if self.grade_value is not None else "failed"
        return StoredLabel(self.key(query, document), "llm", status, self.grade_value)  # type: ignore[arg-type]


def test_a_pair_held_by_another_owner_is_waited_for_then_taken_from_the_store(tmp_path: Path) -> None:
    judge = CountingJudge()
    q, d = Query("q", "t"), Document("d", "x")
    with JudgmentStore(tmp_path / "s.sqlite") as other, JudgmentStore(tmp_path / "s.sqlite") as mine:
        held = judge.key(q, d)
        assert other.claim(held) == "claimed"
        stored = StoredJudge(judge, mine, poll=0.01)

        async def run() -> StoredLabel:
            async def other_records() -> None:
                while stored.waited == 0:  # once the wrapper has found the pair taken
                    await asyncio.sleep(0.01)
                other.record(StoredLabel(held, "llm", "ok", 4))

            label, _ = await asyncio.gather(stored.grade(q, d), other_records())
            return label

        label = asyncio.run(run())
    assert label.grade == 4 and judge.asked == {} and (stored.asked, stored.stored, stored.waited) == (0, 1, 1)


def test_a_claim_of_a_dead_owner_is_taken_over(tmp_path: Path) -> None:
    judge = CountingJudge()
    q, d = Query("q", "t"), Document("d", "x")
    with JudgmentStore(tmp_path / "s.sqlite") as other, JudgmentStore(tmp_path / "s.sqlite") as mine:
        other.lease = -1.0  # its claim is expired as soon as it is made
        assert other.claim(judge.key(q, d)) == "claimed"
        label = asyncio.run(StoredJudge(judge, mine).grade(q, d))
    assert label.grade == 2 and judge.asked == {("q", "d"): 1}


def test_failed_labels_are_asked_again_unless_told_not_to(tmp_path: Path) -> None:
    q, d = Query("q", "t"), Document("d", "x")
    with JudgmentStore(tmp_path / "s.sqlite") as store:
        asyncio.run(StoredJudge(CountingJudge(grade=None), store).grade(q, d))
        again = CountingJudge()
        assert asyncio.run(StoredJudge(again, store, retry_failed=False).grade(q, d)).status == "failed"
        assert again.asked == {}
        assert asyncio.run(StoredJudge(again, store).grade(q, d)).grade == 2 and again.asked == {("q", "d"): 1}


def test_concurrent_requests_share_one_answer_without_a_store() -> None:
    judge = CountingJudge()
    stored = StoredJudge(judge)
    q, d = Query("q", "t"), Document("d", "x")

    async def run() -> list[StoredLabel]:
        return list(await asyncio.gather(*(stored.grade(q, d) for _ in range(3))))

    assert len(set(map(id, asyncio.run(run())))) == 1
    assert judge.asked == {("q", "d"): 1} and (stored.asked, stored.shared) == (1, 2)


def test_a_store_needs_a_judge_with_keys(tmp_path: Path) -> None:
    class NoKey:
        spec = JudgeSpec("nokey", builtin_prompt("graded"))

        async def grade(self, query: Query, document: Document) -> StoredLabel:
            raise AssertionError

    with JudgmentStore(tmp_path / "s.sqlite") as store, pytest.raises(PolicyError, match=r"needs a judge with \.key"):
        StoredJudge(NoKey(), store)


# ------------------------------------------------------------------------------------ two processes
def _command(kind: str, tmp_path: Path, url: str, store: Path) -> list[str]:
    if kind == "temporal":
        line = {"query_id": "q1", "query": "Who won in 2020?",
                "retrieved": [{"doc_id": d, "text": f"doc {d} 2020"} for d in ("a", "b", "c", "d")]}
        path = tmp_path / "runs.jsonl"
        path.write_text(json.dumps(line) + "\n", encoding="utf-8")
        return ["temporal", "evaluate", str(path), "-m", "TemporalPrecision@4", "--mode", "llm", "--model", "fake",
                "--base-url", url, "--store", str(store), "--resamples", "10"]
    trace = {"conversation_id": "c1", "turns": [{"query": "who", "iterations": [
        {"searches": [{"results": [{"id": d, "snippet": f"snippet {d}"} for d in ("a", "b", "c", "d")]}]}]}]}
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(trace) + "\n", encoding="utf-8")
    return ["agent", "evaluate", str(path), "--judge", "fake", "--base-url", url, "--store", str(store)]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["temporal", "agent"])
def test_two_processes_of_a_command_pay_once(kind: str, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    with FakeChatServer() as server:
        server.behaviour = lambda body, attempt: Reply("slow", grade=3, delay=0.5)
        args = [sys.executable, "-m", "gainscope", *_command(kind, tmp_path, server.url, tmp_path / "s.sqlite")]
        env = {**os.environ, "PYTHONWARNINGS": "ignore", "OPENAI_API_KEY": "k"}
        procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                 for _ in range(2)]
        outs = [p.communicate(timeout=60) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outs
        assert len(server.requests) == 4 and set(_asked(server).values()) == {1}
