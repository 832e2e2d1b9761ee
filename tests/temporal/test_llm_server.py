"""LLM mode end to end: a real LLMJudge and ChatClient against the fake chat-completions server."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from tests.chat_server import FakeChatServer, Reply, default_behaviour, user_text

from gainscope.judges.client import ChatClient, ClientSettings
from gainscope.judges.labeling import LLMJudge
from gainscope.judges.prompts import builtin_prompt
from gainscope.judges.spec import JudgeSpec
from gainscope.temporal import TemporalGradeError, TemporalNDCG

DOCS = ["The 2020 election. grade=4", "Cooking pasta. grade=0", "Results of 2021. grade=3"]


async def _run(server: Any, metric_kwargs: dict[str, Any], k: int) -> Any:
    spec = JudgeSpec(model="fake", prompt=builtin_prompt("temporal"))
    async with ChatClient(ClientSettings(base_url=server.url, max_attempts=1)) as client:
        judge = LLMJudge(spec, client, answer_attempts=2)
        metric = TemporalNDCG(use_llm=True, llm=judge, **metric_kwargs)
        return await metric.ascore(query="Who won the 2020 election?", retrieved_docs=DOCS, k=k)


def test_ndcg_with_a_real_judge(chat_server: FakeChatServer) -> None:
    score = asyncio.run(_run(chat_server, {}, k=2))
    # grades 4, 0 in the top 2; ideal from the three graded documents: 4, 3
    assert score.grades == (4.0, 0.0)
    assert score.value == pytest.approx(4 / (4 + 3 / math.log2(3)))
    prompts = [r.user_text for r in chat_server.requests]
    assert len(prompts) == 3 and all("temporal relevance" in p for p in prompts)


def test_unusable_answers_fail_the_value_not_zero(chat_server: FakeChatServer) -> None:
    def behaviour(body: dict[str, Any], attempt: int) -> Any:
        text = user_text(body)
        return Reply("malformed") if "Cooking" in text else default_behaviour(body, attempt)

    chat_server.behaviour = behaviour
    with pytest.raises(TemporalGradeError, match=r"d2: unusable answer"):
        asyncio.run(_run(chat_server, {}, k=2))
    score = asyncio.run(_run(chat_server, {"on_failure": "nan"}, k=2))
    assert math.isnan(score.value) and [d for d, _ in score.failures] == ["d2"]
    # two answer attempts for the failing document
    assert chat_server.count(lambda r: r.kind == "malformed") == 4
