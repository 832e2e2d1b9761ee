"""The judges page's API against a fake OpenAI-compatible server on 127.0.0.1: LLM labels of a case's shown results
(kept apart from the ratings; applied only where nobody rated; a human rating never overwritten), and the agreement
between the people's ratings and the labels (gainscope.agreement's numbers)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.chat_server import FakeChatServer, Reply

from .conftest import Dashboard, add_case


def butter_judge(body: dict[str, Any], attempt: int) -> Reply:
    """Grade 3 for a recipe with butter (a word in no query), else 1."""
    text = body["messages"][-1]["content"].lower()
    return Reply("ok", grade=3 if "butter" in text else 1)


@pytest.fixture(scope="module")
def chat() -> Iterator[FakeChatServer]:
    with FakeChatServer(butter_judge) as server:
        yield server


@pytest.fixture(scope="module")
def judged(dashboard: Dashboard, recipes: Path) -> Dashboard:
    add_case(dashboard.workspace, recipes / "recipes_case.json")
    status, started = dashboard.call("POST", "/api/cases/recipes/rerun", {})
    assert status == 202 and dashboard.job(started)["state"] == "done"
    return dashboard


def test_labels_of_every_shown_result_and_the_agreement_with_people(judged: Dashboard, chat: FakeChatServer) -> None:
    status, started = judged.call("POST", "/api/cases/recipes/judge", {
        "base_url": chat.url, "model": "fake-model", "prompt": "umbrela", "scope": "shown"})
    assert status == 202, started
    job = judged.job(started)
    assert job["state"] == "done", job["message"]
    result = job["result"]
    _, case = judged.call("GET", "/api/cases/recipes")
    shown = sum(min(q["result_count"], 10) for q in case["queries"])
    assert result["pairs"] == shown == result["labelled"] and result["applied"] == 0
    labels = judged.workspace.store.labels("recipes", result["judge"])
    queries = judged.workspace.store.queries("recipes")
    titles = judged.workspace.store.fields("recipes")
    for lb in labels:
        assert lb.grade == (3 if "butter" in (titles[lb.doc_id]["title"] + _text(judged, lb.doc_id)).lower() else 1)
    # the ratings did not change: labels are kept apart
    assert all(r.source.startswith("import:") for q in queries for r in q.ratings.values())
    status, agreement = judged.call("GET", "/api/cases/recipes/agreement")
    assert status == 200, agreement
    from gainscope.agreement import label_agreement
    from gainscope.io import read_judgments

    people = {q.id: q.rating_values() for q in queries if q.ratings}
    llm: dict[str, dict[str, float]] = {}
    for lb in labels:
        llm.setdefault(lb.query_id, {})[lb.doc_id] = lb.grade
    expected = label_agreement(read_judgments(people, float_grades=True), read_judgments(llm, float_grades=True),
                               categories=[0, 1, 2, 3])
    got = agreement["agreement"]
    assert got["pairs"] == expected.n and got["kappa"]["value"] == pytest.approx(expected.kappa.value)
    assert got["confusion"] == expected.confusion.tolist()
    assert agreement["judges"] == [{"judge": result["judge"], "model": "fake-model", "labels": len(labels)}]
    assert all(d["human"] != d["llm"] for d in agreement["disagreements"])
    page = judged.client.get("/cases/recipes/judges").text
    assert "Cohen&#39;s kappa" in page and 'id="confusion"' in page


def _text(dashboard: Dashboard, doc: str) -> str:
    engine, _ = dashboard.workspace.engine(dashboard.workspace.store.case("recipes"))
    return str(engine.document(doc)["text"])


def test_applied_labels_rate_only_what_nobody_rated(judged: Dashboard, chat: FakeChatServer) -> None:
    before = {q.id: dict(q.ratings) for q in judged.workspace.store.queries("recipes")}
    status, started = judged.call("POST", "/api/cases/recipes/judge", {
        "base_url": chat.url, "model": "fake-model", "scope": "unrated", "apply": True})
    assert status == 202
    job = judged.job(started)
    assert job["state"] == "done", job["message"]
    after = {q.id: dict(q.ratings) for q in judged.workspace.store.queries("recipes")}
    added = 0
    for qid, ratings in after.items():
        for doc, rating in ratings.items():
            if doc in before[qid]:
                assert rating == before[qid][doc]  # nobody's rating was touched
            else:
                added += 1
                assert rating.source == f"llm:{job['result']['judge']}" and rating.author == "fake-model"
    assert added == job["result"]["applied"] > 0
    # a person's rating later replaces the label, and the next labelling leaves it alone
    qid, doc = next((q, d) for q, r in after.items() for d, v in r.items() if v.source.startswith("llm:"))
    judged.call("PUT", "/api/cases/recipes/ratings", {"query_id": qid, "doc": doc, "rating": 0})
    _, started = judged.call("POST", "/api/cases/recipes/judge", {
        "base_url": chat.url, "model": "fake-model", "scope": "shown", "apply": True})
    assert judged.job(started)["state"] == "done"
    assert judged.workspace.store.query("recipes", qid).ratings[doc].value == 0


def test_what_the_judge_form_refuses(judged: Dashboard, chat: FakeChatServer) -> None:
    status, started = judged.call("POST", "/api/cases/recipes/judge", {"base_url": chat.url, "model": "m",
                                                                       "prompt": "graded"})
    job = judged.job(started)
    assert job["state"] == "failed" and "the graded prompt grades 0-4, outside the case's scale 0-3" in job["message"]
    status, answer = judged.call("POST", "/api/cases/recipes/judge", {"base_url": "ftp://x", "model": "m"})
    assert status == 400 and "base_url" in answer["error"]
    status, answer = judged.call("POST", "/api/cases/recipes/judge", {"base_url": chat.url, "model": "m",
                                                                      "prompt": "poetic"})
    assert (status, answer["error"]) == (400, "'prompt' is one of graded, umbrela, binary, temporal; got 'poetic'")
