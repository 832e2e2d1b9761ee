"""LLM mode over a batch: each (query, document) graded once and shared by every metric, labels kept in a judgment
store across runs, the client's timeout and attempts, the real query id sent to the judge."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from tests.chat_server import FakeChatServer, Reply

from gainscope.io.texts import Document, Query
from gainscope.judges.prompts import builtin_prompt
from gainscope.judges.spec import JudgeSpec
from gainscope.judges.store import JudgmentStore, PairKey, StoredLabel
from gainscope.temporal import SharedJudge
from gainscope.temporal.batch import evaluate_records, read_records

from .helpers import invoke, write

L3 = math.log2(3)

LINE = {"query_id": "q1", "query": "Who won in 2020?",
        "retrieved": [{"doc_id": "a", "text": "About 2019. grade=1"}, {"doc_id": "b", "text": "2020! grade=4"},
                      {"doc_id": "c", "text": "x grade=2"}]}


def llm_args(server: Any, *more: str) -> list[str]:
    return ["--mode", "llm", "--base-url", server.url, "--model", "fake", "-f", "json", "-q", "--resamples", "10",
            *more]


def test_each_pair_is_graded_once_for_every_metric(tmp_path: Path, chat_server: FakeChatServer) -> None:
    # the same ranking from two systems: still one request per (query, document)
    lines = [LINE, {**LINE, "system": "other"}]
    code, out, err = invoke("evaluate", write(tmp_path, lines), "-m", "TemporalNDCG@2 TemporalPrecision@2",
                            "-m", "TemporalMRR@2 TemporalRecall@2 TemporalMAP@2", *llm_args(chat_server))
    assert code == 0, err
    assert len(chat_server.requests) == 3
    # grades 1, 4, 2; relevant (>= 2): b, c. nDCG@2 ideal from all three: 4, 2
    assert json.loads(out)["per_query"]["run"]["q1"] == {
        "TemporalNDCG@2": pytest.approx((1 + 4 / L3) / (4 + 2 / L3)), "TemporalPrecision@2": 0.5,
        "TemporalMRR@2": 0.5, "TemporalRecall@2": 0.5, "TemporalMAP@2": pytest.approx((1 / 2) / 2)}
    assert "judge fake, prompt temporal" in err and "3 asked; 23 grade requests of the metrics answered" in err


def test_a_drifting_judge_gives_consistent_rows(tmp_path: Path, chat_server: FakeChatServer) -> None:
    chat_server.behaviour = lambda body, attempt: Reply("ok", grade=min(attempt, 4))  # a later ask grades higher
    lines = [{"query_id": "q1", "query": "Who won in 2020?",
              "retrieved": [{"doc_id": "a", "text": "doc a"}, {"doc_id": "b", "text": "doc b"}]}]
    code, out, err = invoke("evaluate", write(tmp_path, lines), "-m", "TemporalPrecision(rel=2)@2",
                            "-m", "TemporalMRR(rel=2)@2", "-m", "TemporalRecall(rel=1)@2", *llm_args(chat_server))
    # every metric reads the same grades (1, 1): nothing reaches 2, both reach 1
    assert code == 0, err
    assert json.loads(out)["per_query"]["run"]["q1"] == {
        "TemporalPrecision(rel=2)@2": 0.0, "TemporalMRR(rel=2)@2": 0.0, "TemporalRecall(rel=1)@2": 1.0}
    assert len(chat_server.requests) == 2


def test_labels_are_kept_in_a_store_across_runs(tmp_path: Path, chat_server: FakeChatServer) -> None:
    path, store = write(tmp_path, [LINE]), tmp_path / "labels.sqlite"
    code, first, err = invoke("evaluate", path, "-m", "TemporalNDCG@2", *llm_args(chat_server, "--store", str(store)))
    assert code == 0 and len(chat_server.requests) == 3 and "3 asked" in err
    code, second, err = invoke("evaluate", path, "-m", "TemporalNDCG@2", *llm_args(chat_server, "--store", str(store)))
    assert code == 0 and len(chat_server.requests) == 3  # nothing asked again
    assert "0 asked, 3 from the store" in err and json.loads(first)["per_query"] == json.loads(second)["per_query"]
    with JudgmentStore(store) as s:
        labels = list(s.labels())
    # stored under the line's query id, not a placeholder
    assert sorted((lb.key.query_id, lb.key.doc_id, lb.grade) for lb in labels) == [("q1", "a", 1), ("q1", "b", 4),
                                                                                   ("q1", "c", 2)]


def test_timeout_and_max_attempts_reach_the_client(tmp_path: Path, chat_server: FakeChatServer) -> None:
    chat_server.behaviour = lambda body, attempt: Reply("503")
    line = {**LINE, "retrieved": LINE["retrieved"][:1]}  # type: ignore[index]
    code, _, _ = invoke("evaluate", write(tmp_path, [line]), "-m", "TemporalPrecision@1",
                        *llm_args(chat_server, "--max-attempts", "2", "--answer-attempts", "1"))
    assert code == 4 and len(chat_server.requests) == 2  # two attempts of one request, no more
    chat_server.reset()
    chat_server.behaviour = lambda body, attempt: Reply("slow", delay=2.0)
    code, out, _ = invoke("evaluate", write(tmp_path, [line]), "-m", "TemporalPrecision@1",
                          *llm_args(chat_server, "--timeout", "0.2", "--max-attempts", "1", "--answer-attempts", "1"))
    assert code == 4
    reason = json.loads(out)["failures"]["run"][0]["documents"][0]["reason"]
    assert "request failed" in reason and "0.2" in reason, reason


class IdJudge:
    """Records the query ids it is asked about; grades 2."""

    def __init__(self) -> None:
        self.spec = JudgeSpec("ids", builtin_prompt("temporal"))
        self.asked: list[tuple[str, str]] = []

    async def grade(self, query: Query, document: Document) -> StoredLabel:
        self.asked.append((query.query_id, document.doc_id))
        return StoredLabel(PairKey(self.spec.hash, query.query_id, "", document.doc_id, ""), "llm", "ok", 2)


def test_the_judge_is_asked_with_the_line_query_id(tmp_path: Path) -> None:
    judge = IdJudge()
    records = read_records(write(tmp_path, [{**LINE, "query_id": "how-2020"}]))
    ev = evaluate_records(records, ["TemporalPrecision@3", "TemporalMRR@3"], mode="llm", judge=judge)
    assert ev.per_query("run", "TemporalPrecision@3") == {"how-2020": 1.0}
    assert sorted(judge.asked) == [("how-2020", "a"), ("how-2020", "b"), ("how-2020", "c")]


def test_shared_judge_in_the_library() -> None:
    import asyncio

    from gainscope.temporal import TemporalMRR, TemporalPrecision

    judge = IdJudge()
    shared = SharedJudge(judge)

    async def both() -> tuple[float, float]:
        docs = ["one 2020", "two 2021"]
        p = TemporalPrecision(use_llm=True, llm=shared).acompute(query="2020?", retrieved_docs=docs, k=2)
        r = TemporalMRR(use_llm=True, llm=shared).acompute(query="2020?", retrieved_docs=docs, k=2)
        return await p, await r

    assert asyncio.run(both()) == (1.0, 1.0)
    assert len(judge.asked) == 2 and (shared.asked, shared.shared) == (2, 2)


def test_diversity_in_llm_mode_from_the_command_line(tmp_path: Path, chat_server: FakeChatServer) -> None:
    line = {**LINE, "scope": "2010-2029"}
    code, out, err = invoke("evaluate", write(tmp_path, [line]), "-m", "TemporalDiversity(granularity=10)@2",
                            *llm_args(chat_server))
    assert code == 0, err
    # the fake judge reads the grade=N marker of the document whatever the period: b (grade 4) covers both decades
    assert json.loads(out)["per_query"]["run"]["q1"] == {"TemporalDiversity(granularity=10)@2": 1.0}
    assert len(chat_server.requests) == 4  # 2 decades x the top 2 documents
    assert json.loads(out)["conventions"]["TemporalDiversity(granularity=10)@2"] == (
        "buckets of 10 years (granularity) of scope=; a bucket is covered when the judge grades a top-2 document "
        ">= 2 (rel) against it")
