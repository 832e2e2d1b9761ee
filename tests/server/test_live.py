"""Live cases in the dashboard: the recipes over the embedded engine -- rerun (a job with progress, a snapshot with
its note, results refreshed, scores and history updated), the try's knobs, finding and rating documents that did
not come back, and comparing reruns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gainscope.cases import read_case, resolve_scorer, score_case
from gainscope.search.embedded import EmbeddedEngine

from .conftest import Dashboard, add_case


@pytest.fixture(scope="module")
def live(dashboard: Dashboard, recipes: Path) -> Dashboard:
    add_case(dashboard.workspace, recipes / "recipes_case.json")
    return dashboard


def test_rerun_fills_the_results_as_the_engine_answers_and_scores_them(live: Dashboard, recipes: Path) -> None:
    status, started = live.call("POST", "/api/cases/recipes/rerun", {"note": "first run", "qps": 1000})
    assert status == 202, started
    job = live.job(started)
    assert job["state"] == "done", job["message"]
    assert (job["done"], job["total"], job["failed"]) == (12, 12, 0)
    assert job["result"]["snapshot"] == "recipes #1"
    engine = EmbeddedEngine(recipes / "index")
    _, query = live.call("GET", "/api/cases/recipes/queries/1")
    expected = engine.search("chocolate cake", {"title_boost": 2}, top=10)
    assert [d["doc"] for d in query["results"]] == expected.ids
    assert query["results"][0]["title"] == expected.hits[0].fields["title"]
    assert query["num_found"] == expected.total
    # the scores are score_case's on the case with the engine's results
    case = read_case(recipes / "recipes_case.json")
    from dataclasses import replace

    refreshed = replace(case, queries=tuple(replace(q, results=tuple(engine.search(q.query, {"title_boost": 2},
                                                                                     top=10).ids))
                                            for q in case.queries))
    expected_score = score_case(refreshed, resolve_scorer("nDCG@10")).score
    _, summary = live.call("GET", "/api/cases")
    assert next(c for c in summary if c["id"] == "recipes")["scores"]["nDCG@10"] == expected_score
    assert job["result"]["scores"]["nDCG@10"] == expected_score
    _, history = live.call("GET", "/api/cases/recipes/history", params={"scorer": "nDCG@10"})
    last = history["scorers"]["nDCG@10"][-1]
    assert (last["event"], last["snapshot"], last["note"], last["score"]) == ("rerun", "recipes #1", "first run",
                                                                              expected_score)


def test_knobs_change_the_next_rerun_and_reruns_compare(live: Dashboard) -> None:
    status, info = live.call("GET", "/api/cases/recipes/engine")
    assert status == 200 and info["knobs"]["title_boost"] == 2.0 and info["kind"] == "embedded"
    status, started = live.call("POST", "/api/cases/recipes/rerun", {"knobs": {"title_boost": 0}, "note": "text only"})
    assert status == 202, started
    job = live.job(started)
    assert job["state"] == "done", job["message"]
    _, case = live.call("GET", "/api/cases/recipes")
    assert case["try"] == {"knobs": {"title_boost": 0}}
    _, snapshots = live.call("GET", "/api/cases/recipes/snapshots")
    assert [(s["name"], s["knobs"]["title_boost"], s["note"]) for s in snapshots] == [
        ("recipes #1", 2.0, "first run"), ("recipes #2", 0.0, "text only")]
    status, cmp = live.call("GET", "/api/cases/recipes/compare", params={"snapshot": ["recipes #1", "recipes #2"],
                                                                         "scorer": "nDCG@10"})
    assert status == 200, cmp
    ndcg = cmp["by_scorer"]["nDCG@10"]
    assert [s["name"] for s in ndcg["snapshots"]] == ["recipes #1", "recipes #2"]
    rows = {r["query"]: r for r in ndcg["queries"]}
    for row in rows.values():
        a, b = row["scores"]["recipes #1"], row["scores"]["recipes #2"]
        assert row["deltas"]["recipes #2"] == pytest.approx(b - a)
    significance = ndcg["significance"]["rows"]
    assert {r["run"] for r in significance} == {"recipes #1", "recipes #2"}
    # the change since a snapshot, per query, on the case page's data
    _, detail = live.call("GET", "/api/cases/recipes", params={"baseline": "recipes #1", "sort": "change",
                                                                "scorer": "nDCG@10"})
    changes = [q["change"]["nDCG@10"] for q in detail["queries"]]
    assert changes == sorted(changes, key=lambda v: (v is None, v))
    by_text = {q["text"]: q["change"]["nDCG@10"] for q in detail["queries"]}
    assert by_text["chocolate cake"] == pytest.approx(rows["chocolate cake"]["deltas"]["recipes #2"])
    status, answer = live.call("POST", "/api/cases/recipes/rerun", {"knobs": {"title_bost": 1}})
    assert status == 400 and "has no knob 'title_bost' (did you mean 'title_boost'?)" in answer["error"]


def test_a_query_shows_the_results_of_a_snapshot_with_its_scores(live: Dashboard, recipes: Path) -> None:
    # after the two reruns above: recipes #1 (title_boost 2) and recipes #2 (title_boost 0, the results in force)
    _, now = live.call("GET", "/api/cases/recipes/queries/1")
    status, then = live.call("GET", "/api/cases/recipes/queries/1", params={"snapshot": "recipes #1"})
    assert status == 200, then
    engine = EmbeddedEngine(recipes / "index")
    expected = engine.search("chocolate cake", {"title_boost": 2}, top=10)
    assert then["snapshot"] == "recipes #1" and then["snapshots"] == ["recipes #1", "recipes #2"]
    assert [d["doc"] for d in then["results"]] == expected.ids != [d["doc"] for d in now["results"]]
    assert then["results"][0]["title"] == expected.hits[0].fields["title"]  # the fields the snapshot recorded
    # its scores are the snapshot's with today's ratings: those of the comparison of snapshots
    _, cmp = live.call("GET", "/api/cases/recipes/compare", params={"snapshot": ["recipes #1", "recipes #2"],
                                                                     "scorer": "nDCG@10"})
    ndcg = cmp["by_scorer"]["nDCG@10"]
    row = next(r for r in ndcg["queries"] if r["query"] == "chocolate cake")
    assert then["scores"]["nDCG@10"]["value"] == row["scores"]["recipes #1"]
    assert then["case_scores"]["nDCG@10"]["score"] == ndcg["snapshots"][0]["score"]
    _, explained = live.call("GET", "/api/cases/recipes/queries/1/explain",
                             params={"scorer": "nDCG@10", "snapshot": "recipes #1"})
    assert [p["doc"] for p in explained["positions"]] == expected.ids
    assert explained["score"] == row["scores"]["recipes #1"]
    status, page = live.call("GET", "/cases/recipes/queries/1", params={"snapshot": "recipes #1"})
    assert status == 200 and 'id="snapshot-banner"' in page and "?snapshot=recipes%20%231" in page
    status, answer = live.call("GET", "/api/cases/recipes/queries/1", params={"snapshot": "recipes #9"})
    assert status == 404 and answer["error"] == ("case 'recipes' has no snapshot 'recipes #9'; its snapshots: "
                                                 "recipes #1, recipes #2")


def test_find_and_rate_missing_documents(live: Dashboard) -> None:
    _, query = live.call("GET", "/api/cases/recipes/queries/1")
    returned = {d["doc"] for d in query["results"]}
    status, found = live.call("POST", "/api/cases/recipes/search", {"q": "spaghetti pasta", "query_id": "1", "top": 40})
    assert status == 200, found
    missing = next(h for h in found["hits"] if not h["returned"])
    assert missing["doc"] not in returned and missing["title"]
    status, answer = live.call("PUT", "/api/cases/recipes/ratings", {"query_id": "1", "doc": missing["doc"],
                                                                      "rating": 3})
    assert status == 200 and answer["changed"]
    _, query = live.call("GET", "/api/cases/recipes/queries/1")
    listed = {d["doc"]: d for d in query["rated_not_returned"]}
    assert listed[missing["doc"]]["rating"] == 3 and listed[missing["doc"]]["title"] == missing["title"]
    status, answer = live.call("POST", "/api/cases/recipes/search", {"q": "x", "top": 0})
    assert status == 400 and "'top' is between 1 and 200" in answer["error"]


def test_a_rerun_that_fails_keeps_the_results(live: Dashboard, tmp_path: Path) -> None:
    failing = tmp_path / "engines.toml"
    # an address of the dashboard itself that answers 404: a refusal that would repeat, so the run stops at once
    failing.write_text(f'[engines.down]\nkind = "http"\nurl = "{live.url}/no-such-search"\n'
                       'params = { q = "{{query}}" }\ndocs = "hits"\nid = "id"\ntimeout = 5\n', encoding="utf-8")
    _, before = live.call("GET", "/api/cases/recipes/queries/1")
    status, case = live.call("PATCH", "/api/cases/recipes", {"engine": f"{failing}:down", "try": {}})
    assert status == 200, case
    status, started = live.call("POST", "/api/cases/recipes/rerun", {"concurrency": 2})
    assert status == 202
    job = live.job(started)
    assert job["state"] == "failed" and "the run stopped" in job["message"] and "404" in job["message"]
    assert "the case keeps its results (a failed query never becomes an empty list)" in job["message"]
    _, after = live.call("GET", "/api/cases/recipes/queries/1")
    assert after["results"] == before["results"]
    status, answer = live.call("PATCH", "/api/cases/recipes", {"engine": str(tmp_path / "nothing-here")})
    assert status == 400 and "nothing-here" in answer["error"]
    live.call("PATCH", "/api/cases/recipes", {"engine": "engines.toml:recipes", "try": {"knobs": {"title_boost": 2}}})
    assert json.loads(json.dumps(live.call("GET", "/api/cases/recipes/engine")[1]))["kind"] == "embedded"
