"""The dashboard's JSON API over a real server (uvicorn in a thread, httpx as the client): cases, queries, ratings
with provenance, the scores they answer (equal to what gainscope.cases.score_case computes), import and export,
history, scorers, errors, and the OpenAPI document that describes it all."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gainscope.cases import read_case, resolve_scorer, score_case

from .conftest import HOSTILE, MOVIES, MOVIES_AFTER, Dashboard, add_case

CASE = "movies-baseline-snapshot"


@pytest.fixture(scope="module")
def movies(dashboard: Dashboard) -> Dashboard:
    add_case(dashboard.workspace, MOVIES)
    return dashboard


def _expected(case_path: Path, scorer: str, changes: dict[tuple[str, str], float | None] | None = None) -> object:
    """score_case on the case file with ``changes`` to its ratings applied: what the dashboard must show."""
    from dataclasses import replace

    case = read_case(case_path)
    queries = []
    for q in case.queries:
        ratings = dict(q.ratings)
        for (text, doc), rating in (changes or {}).items():
            if text == q.query:
                if rating is None:
                    ratings.pop(doc, None)
                else:
                    ratings[doc] = rating
        queries.append(replace(q, ratings=ratings))
    return score_case(replace(case, queries=tuple(queries)), resolve_scorer(scorer), allow_unrated=True)


def _summary(dashboard: Dashboard, case_id: str) -> dict:
    """The case's entry in GET /api/cases."""
    return next(c for c in dashboard.call("GET", "/api/cases")[1] if c["id"] == case_id)


def test_cases_list_has_id_name_and_a_score_per_scorer(movies: Dashboard) -> None:
    status, cases = movies.call("GET", "/api/cases")
    assert status == 200
    [case] = cases
    assert (case["id"], case["name"]) == (CASE, "Movies (baseline snapshot)")
    assert set(case["scores"]) == {"nDCG@10", "P@5", "ERR@10"}  # the case's scorer first, then the defaults
    for scorer, value in case["scores"].items():
        assert value == _expected(MOVIES, scorer).score
    assert case["queries"] == 4 and case["rated_queries"] == 3


def test_case_has_its_queries_with_a_score_per_scorer(movies: Dashboard) -> None:
    status, case = movies.call("GET", f"/api/cases/{CASE}")
    assert status == 200
    assert [q["text"] for q in case["queries"]] == ["star wars", "star trek", "the godfather", "rom com"]
    expected = _expected(MOVIES, "nDCG@10")
    for q in case["queries"]:
        want = expected.query(q["text"])
        got = q["scores"]["nDCG@10"]
        assert (got["value"], got["status"], got["counted"]) == (want.value, want.status, want.counted)
    godfather = case["queries"][2]
    assert godfather["result_count"] == 0 and godfather["rated"] == 3
    rom = case["queries"][3]
    assert rom["unrated_shown"] == 2 and rom["rated"] == 0


def test_a_rating_answers_the_new_query_and_case_scores_and_keeps_its_provenance(movies: Dashboard) -> None:
    status, answer = movies.call("PUT", f"/api/cases/{CASE}/ratings",
                                 {"query": "star wars", "doc": "sw2", "rating": 2, "author": "alice"})
    assert status == 200, answer
    assert (answer["previous"], answer["rating"], answer["changed"]) == (None, 2, True)
    for scorer in ("nDCG@10", "P@5", "ERR@10"):
        expected = _expected(MOVIES, scorer, {("star wars", "sw2"): 2})
        assert answer["scores"][scorer]["case"] == expected.score
        assert answer["scores"][scorer]["query"]["value"] == expected.query("star wars").value
    # change it, then remove it: every change is an event with who, when and the value before
    movies.call("PUT", f"/api/cases/{CASE}/ratings", {"query_id": "1", "doc": "sw2", "rating": 0, "author": "bob"})
    status, answer = movies.call("PUT", f"/api/cases/{CASE}/ratings", {"query": "star wars", "doc": "sw2",
                                                                         "rating": None})
    assert answer["previous"] == 0 and answer["rating"] is None
    assert answer["scores"]["nDCG@10"]["case"] == _expected(MOVIES, "nDCG@10").score
    status, events = movies.call("GET", f"/api/cases/{CASE}/ratings/events", params={"doc": "sw2"})
    assert [(e["previous"], e["rating"], e["source"], e["author"]) for e in events] == [
        (0, None, "human", None), (2, 0, "human", "bob"), (None, 2, "human", "alice")]
    assert all(e["at"] for e in events)
    # the same value again changes nothing and records nothing
    status, answer = movies.call("PUT", f"/api/cases/{CASE}/ratings", {"query": "star wars", "doc": "sw4",
                                                                         "rating": 3})
    assert answer["changed"] is False
    _, events = movies.call("GET", f"/api/cases/{CASE}/ratings/events", params={"doc": "sw4"})
    assert [(e["previous"], e["rating"], e["source"]) for e in events] == [
        (None, 3, f"import:{MOVIES.resolve()}")]


def test_ratings_are_checked(movies: Dashboard) -> None:
    path = f"/api/cases/{CASE}/ratings"
    status, answer = movies.call("PUT", path, {"query": "star wars", "doc": "sw1", "rating": 4})
    assert status == 400
    assert answer["error"] == ("query 'star wars', document 'sw1': rating 4 is outside the scale 0-3 (0=Poor, 1=Fair, "
                               "2=Good, 3=Perfect); ratings are never clamped, fix the rating or the scale")
    status, answer = movies.call("PUT", path, {"query": "star wars", "doc": "sw1", "rating": "3"})
    assert (status, answer["error"]) == (400, "query 'star wars', document 'sw1': a rating is a number (or null to "
                                              "remove it); got '3'")
    status, answer = movies.call("PUT", path, {"query": "star warz", "doc": "sw1", "rating": 1})
    assert status == 404 and "has no query 'star warz'" in answer["error"]
    status, answer = movies.call("PUT", path, {"query": "star wars", "doc": "sw1"})
    assert status == 400 and "needs 'rating'" in answer["error"]
    status, answer = movies.call("PUT", "/api/cases/nope/ratings", {"query": "x", "doc": "d", "rating": 1})
    assert status == 404 and answer["error"].startswith("no case 'nope' in this workspace; its cases: ")
    response = movies.client.put(path, content=b"{not json", headers={"Content-Type": "application/json"})
    assert response.status_code == 400 and response.json()["error"].startswith("the request body is not JSON")
    response = movies.client.put(path, content=b"[1, 2]", headers={"Content-Type": "application/json"})
    assert (response.status_code, response.json()["error"]) == (400, "the request body must be a JSON object; got an "
                                                                       "array")
    # a misspelt optional field would be ignored without a word (the rating kept without its author): refused, and
    # nothing is written
    _, before = movies.call("GET", f"/api/cases/{CASE}/ratings/events")
    status, answer = movies.call("PUT", path, {"query": "star wars", "doc": "sw1", "rating": 2, "autor": "ann"})
    assert movies.call("GET", f"/api/cases/{CASE}/ratings/events")[1] == before
    assert (status, answer["error"]) == (400, "the request body has a field this route does not take: 'autor' (did "
                                              "you mean 'author'?); it takes 'query', 'query_id', 'doc', 'rating', "
                                              "'author'")
    status, answer = movies.call("POST", f"/api/cases/{CASE}/snapshots", {"note": "x", "label": "y"})
    assert (status, answer["error"]) == (400, "the request body has a field this route does not take: 'label'; it "
                                              "takes 'note'")


def test_every_body_field_a_handler_reads_is_in_the_openapi_document() -> None:
    # the body's fields are checked against the document: a field read but not listed would be refused
    import ast
    import inspect

    from gainscope.server import api
    from gainscope.server.openapi import ROUTES

    def names(schema: dict) -> set[str]:  # the fields of a body and of the objects in it
        fields = schema.get("properties", {})
        return set(fields).union(*(names(f) for f in fields.values()))

    documented = set().union(*(names(body) for _, _, _, body, _, _ in ROUTES if body))
    read = set()
    for node in ast.walk(ast.parse(inspect.getsource(api))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_field" and len(node.args) > 1:
            arg = node.args[1]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                read.add(arg.value)
    assert read and read <= documented, read - documented


def test_writes_need_the_token_and_refuse_other_origins(movies: Dashboard) -> None:
    body = {"query": "star wars", "doc": "sw1", "rating": 1}
    response = movies.anonymous.put(f"/api/cases/{CASE}/ratings", json=body)
    assert response.status_code == 403
    assert response.json()["error"].startswith("a write needs the workspace token in the X-Gainscope-Token header; "
                                               "it is missing")
    response = movies.anonymous.put(f"/api/cases/{CASE}/ratings", json=body, headers={"X-Gainscope-Token": "wrong"})
    assert response.status_code == 403 and "is not this workspace's token" in response.json()["error"]
    response = movies.client.put(f"/api/cases/{CASE}/ratings", json=body, headers={"Origin": "http://evil.example"})
    assert response.status_code == 403 and "from another site (http://evil.example)" in response.json()["error"]
    # reads are open on 127.0.0.1, but only to requests for a loopback host (no DNS rebinding)
    assert movies.anonymous.get("/api/cases").status_code == 200
    response = movies.anonymous.get("/api/cases", headers={"Host": "attacker.example:8765"})
    assert response.status_code == 403 and "127.0.0.1 or localhost only" in response.json()["error"]
    # nothing was written by the refused requests
    _, events = movies.call("GET", f"/api/cases/{CASE}/ratings/events", params={"doc": "sw1"})
    assert [e["rating"] for e in events] == [2]


def test_the_start_up_url_sets_a_cookie_and_pages_then_carry_the_token(movies: Dashboard) -> None:
    token = movies.workspace.token
    response = movies.anonymous.get(f"/cases/{CASE}?token={token}&sort=score", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == f"/cases/{CASE}?sort=score"
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    movies.anonymous.cookies.clear()  # the client kept it, as a browser would: first look without it
    page = movies.anonymous.get(f"/cases/{CASE}").text
    assert token not in page and "Read-only" in page
    movies.anonymous.cookies.set("gainscope_token", token)
    page = movies.anonymous.get(f"/cases/{CASE}").text
    movies.anonymous.cookies.clear()
    assert f'<meta name="gainscope-token" content="{token}">' in page and "Read-only" not in page
    response = movies.anonymous.get("/?token=wrong", follow_redirects=False)
    assert response.status_code == 403


def test_every_page_has_a_strict_csp_with_a_fresh_nonce(movies: Dashboard) -> None:
    nonces = set()
    for path in ("/", f"/cases/{CASE}", f"/cases/{CASE}/queries/1", f"/cases/{CASE}/tune", f"/cases/{CASE}/snapshots",
                 f"/cases/{CASE}/history", f"/cases/{CASE}/judges", f"/cases/{CASE}/io", "/scorers"):
        response = movies.client.get(path)
        assert response.status_code == 200, path
        csp = response.headers["content-security-policy"]
        nonce = csp.split("'nonce-")[1].split("'")[0]
        nonces.add(nonce)
        assert csp.startswith("default-src 'none'; script-src 'nonce-") and "'unsafe-inline'" not in csp
        html = response.text
        assert html.count("<script") == 1 and f'<script type="module" src="/static/app.js" nonce="{nonce}">' in html
        for handler in ("onclick=", "onload=", "onerror=", "onsubmit=", "javascript:"):
            assert handler not in html.lower(), (path, handler)
        assert response.headers["x-content-type-options"] == "nosniff"
    assert len(nonces) == 9


def test_hostile_text_is_escaped_in_pages_and_kept_as_is_in_json(dashboard: Dashboard, tmp_path: Path) -> None:
    case = {"name": HOSTILE, "scale": "graded",
            "queries": [{"query": HOSTILE, "ratings": {HOSTILE: 3, "ok": 1}, "results": [HOSTILE, "ok"],
                         "options": {"x": HOSTILE}}]}
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    record = add_case(dashboard.workspace, path)
    dashboard.workspace.store.remember_fields(record.id, {HOSTILE: {"title": HOSTILE}, "ok": {"title": HOSTILE}})
    assert record.id == "script-alert-1-script-img-src-x-onerror"  # a slug (40 characters at most), safe in a URL
    for page in ("/", f"/cases/{record.id}", f"/cases/{record.id}/queries/1", f"/cases/{record.id}/io"):
        html = dashboard.client.get(page).text
        assert "<script>alert" not in html and "<img src=x" not in html, page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;&#34;&gt;&lt;img src=x onerror=alert(2)&gt;" in html, page
    _, detail = dashboard.call("GET", f"/api/cases/{record.id}/queries/1")
    assert detail["text"] == HOSTILE and detail["results"][0]["doc"] == HOSTILE
    assert detail["results"][0]["title"] == HOSTILE
    status, answer = dashboard.call("PUT", f"/api/cases/{record.id}/ratings", {"query": HOSTILE, "doc": HOSTILE,
                                                                                "rating": 2})
    assert status == 200 and answer["doc"] == HOSTILE


def test_patch_selects_several_scorers_and_the_number_of_results_shown(movies: Dashboard) -> None:
    status, case = movies.call("PATCH", f"/api/cases/{CASE}", {"scorers": ["nDCG@10", "P@5", "ERR@10", "AP@10",
                                                                            "NDCG_CUT@10"], "depth": 3})
    assert status == 200, case
    assert list(case["scores"]) == ["nDCG@10", "P@5", "ERR@10", "AP@10", "NDCG_CUT@10"]
    assert case["settings"]["depth"] == 3
    _, query = movies.call("GET", f"/api/cases/{CASE}/queries/1")
    assert [d["doc"] for d in query["results"]] == ["sw1", "spaceballs", "sw4"] and query["result_count"] == 6
    assert query["scores"]["AP@10"]["value"] == _expected(MOVIES, "AP@10").query("star wars").value
    status, answer = movies.call("PATCH", f"/api/cases/{CASE}", {"scorers": ["nDCG@10", "ndgc@10"]})
    assert status == 400 and "unknown metric 'ndgc'. Did you mean" in answer["error"]
    status, answer = movies.call("PATCH", f"/api/cases/{CASE}", {"depth": 0})
    assert status == 400 and "between 1 and 1000" in answer["error"]
    status, answer = movies.call("PATCH", f"/api/cases/{CASE}", {"unscored": "never"})
    assert (status, answer["error"]) == (400, "'unscored' is one of quepid, skip, zero; got 'never'")
    movies.call("PATCH", f"/api/cases/{CASE}", {"scorers": ["nDCG@10", "P@5", "ERR@10"], "depth": 10})


def test_sorting_by_score(movies: Dashboard) -> None:
    _, case = movies.call("GET", f"/api/cases/{CASE}", params={"sort": "score", "scorer": "nDCG@10",
                                                               "order": "desc"})
    values = [q["scores"]["nDCG@10"]["value"] for q in case["queries"]]
    assert values == sorted(values, reverse=True)
    status, answer = movies.call("GET", f"/api/cases/{CASE}", params={"sort": "colour"})
    assert status == 400 and answer["error"] == "sort is one of position, score, change, text; got 'colour'"


def test_explain_scores_each_prefix_with_the_scorer_itself(movies: Dashboard) -> None:
    status, answer = movies.call("GET", f"/api/cases/{CASE}/queries/1/explain", params={"scorer": "nDCG@10"})
    assert status == 200, answer
    rows = answer["positions"]
    assert [r["doc"] for r in rows] == ["sw1", "spaceballs", "sw4", "startrek2", "sw6", "sw2"]
    assert rows[-1]["score"] == pytest.approx(answer["score"]) and answer["score"] == _expected(
        MOVIES, "nDCG@10").query("star wars").value
    # the rank 1 document rated 2: DCG = (2^2 - 1) / log2(2) = 3; the ideal (3, 3, 3, 2, 1, 0) has DCG
    # 7 + 7/log2(3) + 7/log2(4) + 3/log2(5) + 1/log2(6) = 7 + 4.4165 + 3.5 + 1.2920 + 0.3869 = 16.5954
    assert rows[0]["score"] == pytest.approx(3 / 16.5954, abs=1e-4)
    assert rows[1]["change"] == pytest.approx(rows[1]["score"] - rows[0]["score"])


def test_export_and_import_again_without_loss(movies: Dashboard) -> None:
    response = movies.client.get(f"/api/cases/{CASE}/export", params={"format": "case"})
    assert response.status_code == 200 and "attachment" in response.headers["content-disposition"]
    exported = response.json()
    status, created = movies.call("POST", "/api/cases", {"filename": "again.json", "content": response.text})
    assert status == 201, created
    assert created["id"] == f"{CASE}-2" and created["scores"] == _summary(movies, CASE)["scores"]
    again = movies.client.get(f"/api/cases/{CASE}-2/export", params={"format": "case"}).json()
    assert again == exported
    original = read_case(MOVIES)
    assert [(q["query"], q["ratings"], q["results"]) for q in again["queries"]] == [
        (q.query, dict(q.ratings), list(q.results)) for q in original.queries]
    for fmt, start in (("quepid", "query,docid,rating\n"), ("qrels", "q1 0 sw4 3\n"), ("run", "q1 Q0 sw1 1 6 ")):
        text = movies.client.get(f"/api/cases/{CASE}/export", params={"format": fmt}).text
        assert text.startswith(start), fmt
    status, answer = movies.call("GET", f"/api/cases/{CASE}/export", params={"format": "xml"})
    assert status == 400 and "unknown export format 'xml'" in answer["error"]


def test_import_other_formats(movies: Dashboard) -> None:
    ratings = "query,docid,rating\nstar wars,sw4,3\nstar wars,sw1,2\nstar trek,st2,3\n"
    status, created = movies.call("POST", "/api/cases", {"filename": "ratings.csv", "content": ratings,
                                                         "name": "From Quepid"})
    assert status == 201, created
    assert created["name"] == "From Quepid" and created["queries"] == 2
    qrels = "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n"
    run = "q1 Q0 d2 1 9 r\nq1 Q0 d1 2 8 r\nq2 Q0 d3 1 5 r\n"
    status, created = movies.call("POST", "/api/cases", {"filename": "judged.qrels", "content": qrels,
                                                         "results": {"kind": "run", "filename": "r.run",
                                                                     "content": run}})
    assert status == 201, created
    _, detail = movies.call("GET", f"/api/cases/{created['id']}/queries/1")
    assert [d["doc"] for d in detail["results"]] == ["d2", "d1"]
    status, answer = movies.call("POST", "/api/cases", {"filename": "bad.json", "content": '{"queries": [{"query": '
                                                                                           '"a", "ratingz": {}}]}'})
    assert (status, answer["error"]) == (400, "bad.json:1: unknown key 'ratingz' in query 1; did you mean 'ratings'?")
    status, answer = movies.call("POST", "/api/cases", {"filename": "big.json", "content": json.dumps(
        {"queries": [{"query": "a", "ratings": {"d": 7}}]})})
    assert status == 400 and answer["error"] == ("big.json names no rating scale and has ratings outside 0-3 (such as "
                                                 "7); give the scale (for example --scale 1-10)")
    status, created = movies.call("POST", "/api/cases", {"filename": "big.json", "scale": "1-10", "content": json.dumps(
        {"queries": [{"query": "a", "ratings": {"d": 7}, "results": ["d"]}]})})
    assert status == 201 and created["scores"]


def test_snapshots_history_and_annotations(movies: Dashboard) -> None:
    status, first = movies.call("POST", f"/api/cases/{CASE}/snapshots", {"note": "before"})
    assert status == 201 and first["name"] == f"{CASE} #1"
    movies.call("PUT", f"/api/cases/{CASE}/ratings", {"query": "star trek", "doc": "st9", "rating": 3})
    status, listed = movies.call("GET", f"/api/cases/{CASE}/snapshots")
    assert [(s["name"], s["note"]) for s in listed] == [(f"{CASE} #1", "before")]
    status, cmp = movies.call("GET", f"/api/cases/{CASE}/compare", params={"snapshot": f"{CASE} #1", "current": "1"})
    assert status == 200, cmp
    ndcg = cmp["by_scorer"]["nDCG@10"]
    assert [s["name"] for s in ndcg["snapshots"]] == [f"{CASE} #1", "current"]
    # both are scored with today's ratings, and their results are the same: no change anywhere
    assert all(d == 0 for q in ndcg["queries"] for d in q["deltas"].values() if d is not None)
    status, annotated = movies.call("POST", f"/api/cases/{CASE}/annotations", {"note": "rated st9"})
    assert status == 201 and set(annotated["scores"]) == {"nDCG@10", "P@5", "ERR@10"}
    _, history = movies.call("GET", f"/api/cases/{CASE}/history")
    ndcg_points = history["scorers"]["nDCG@10"]
    assert ndcg_points[0]["event"] == "import" and ndcg_points[-1]["note"] == "rated st9"
    assert ndcg_points[-1]["score"] == _summary(movies, CASE)["scores"]["nDCG@10"]
    status, answer = movies.call("GET", f"/api/cases/{CASE}/compare", params={"snapshot": "nope"})
    assert status == 404 and answer["error"].startswith(f"case '{CASE}' has no snapshot 'nope'")


def test_scorers_saved_tested_and_selected(movies: Dashboard) -> None:
    code = "var k = 3;\nconsole.log('rated: ' + (hasDocRating(0) ? docRating(0) : 'none'));\nsetScore(avgRating(k));\n"
    status, answer = movies.call("POST", "/api/scorers/test", {"language": "javascript", "code": code,
                                                               "case": CASE, "query": "star wars"})
    assert status == 200, answer
    # avgRating(3) over the rated of sw1 (2), spaceballs (1), sw4 (3): 2
    assert (answer["value"], answer["status"], answer["logs"]) == (2.0, "scored", ["rated: 2"])
    status, answer = movies.call("POST", "/api/scorers/test", {"language": "javascript", "code": "setScore(\n",
                                                               "case": CASE, "query": "star wars"})
    assert status == 400 and "ad hoc scorer:" in answer["error"] and "setScore(" in answer["error"]
    status, saved = movies.call("PUT", "/api/scorers/avg3", {"language": "javascript", "code": code})
    assert status == 201, saved
    status, case = movies.call("PATCH", f"/api/cases/{CASE}", {"scorers": ["nDCG@10", "avg3"]})
    assert status == 200 and case["scores"]["avg3"]["error"] is None
    assert case["queries"][0]["scores"]["avg3"]["value"] == 2.0
    status, answer = movies.call("PUT", "/api/scorers/nDCG@5", {"language": "javascript", "code": code})
    assert status == 400 and "a built-in scorer's name" in answer["error"]
    status, listed = movies.call("GET", "/api/scorers")
    assert [s["name"] for s in listed["saved"]] == ["avg3"] and any(b["name"] == "ERR@10" for b in listed["builtin"])
    status, answer = movies.call("POST", "/api/scorers/test", {
        "language": "python", "name": "top1", "case": CASE, "query_id": "2",
        "code": "def score(q):\n    return q.doc_rating(0)\n"})
    assert (status, answer["value"]) == (200, 1.0)  # galaxyquest, rated 1
    status, answer = movies.call("POST", "/api/scorers/test", {"language": "python", "name": "broken", "case": CASE,
                                                               "query_id": "2", "code": "def score(q)\n"})
    assert (status, answer["error"]) == (400, "broken.py:1: expected ':'\n    def score(q)")
    movies.call("PATCH", f"/api/cases/{CASE}", {"scorers": ["nDCG@10", "P@5", "ERR@10"]})
    assert movies.call("DELETE", "/api/scorers/avg3")[0] == 200
    assert movies.call("DELETE", "/api/scorers/avg3")[0] == 404


def test_engine_less_cases_say_so(movies: Dashboard) -> None:
    status, answer = movies.call("POST", f"/api/cases/{CASE}/rerun", {})
    assert status == 400 and "names no engine" in answer["error"]
    status, answer = movies.call("POST", f"/api/cases/{CASE}/search", {"q": "star"})
    assert status == 400 and "names no engine" in answer["error"]
    status, answer = movies.call("GET", "/api/jobs/nope")
    assert status == 404


def test_the_openapi_document_describes_every_api_route(movies: Dashboard) -> None:
    status, doc = movies.call("GET", "/api")
    assert status == 200 and doc["openapi"].startswith("3.1")
    documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    routes = {(m, r.path) for r in movies.server.app.routes if getattr(r, "path", "").startswith("/api")
              for m in (r.methods or ()) if m != "HEAD"}
    assert documented == routes
    put = doc["paths"]["/api/cases/{case_id}/ratings"]["put"]
    assert put["security"] == [{"token": []}]
    assert set(put["requestBody"]["content"]["application/json"]["schema"]["properties"]) >= {"query", "doc", "rating"}


def test_a_second_case_compares_with_the_first(movies: Dashboard) -> None:
    record = add_case(movies.workspace, MOVIES_AFTER)
    _, summary = movies.call("GET", "/api/cases")
    after = next(c for c in summary if c["id"] == record.id)
    assert after["scores"]["nDCG@10"] == _expected(MOVIES_AFTER, "nDCG@10").score
    assert movies.call("DELETE", f"/api/cases/{record.id}")[0] == 200
    assert movies.call("GET", f"/api/cases/{record.id}")[0] == 404


def test_a_team_server_needs_the_token_for_reads_too(tmp_path: Path) -> None:
    from .conftest import serve

    for team in serve(tmp_path / "team", token="team-secret-1", allow_code=False, loopback=False):
        response = team.anonymous.get("/api/cases")
        assert response.status_code == 401 and "needs the workspace token" in response.json()["error"]
        assert team.anonymous.get("/").status_code == 401
        assert team.client.get("/api/cases").status_code == 200
        response = team.anonymous.get("/?token=team-secret-1", follow_redirects=False)
        assert response.status_code == 303
        assert team.anonymous.get("/").status_code == 200  # the cookie the redirect set
        # Python scorers would run as the server's code: refused unless the server was started to allow them
        add_case(team.workspace, MOVIES)
        status, answer = team.call("POST", "/api/scorers/test", {"language": "python", "code": "def score(q): return 1",
                                                                 "case": CASE, "query": "star wars"})
        assert status == 400 and "with --allow-code" in answer["error"]
        # the Host header is not checked on a team server (its name is the machine's): the token guards it
        assert team.client.get("/api/cases", headers={"Host": "dashboard.example:80"}).status_code == 200


def test_scorer_names_never_read_files_of_the_server(movies: Dashboard, tmp_path: Path) -> None:
    # a JavaScript file on the server: cases' resolve_scorer would run it (and quote its lines in errors)
    secret = tmp_path / "secret.js"
    secret.write_text("var password = 'hunter2'; setScore(1)\n", encoding="utf-8")
    for name in (str(secret), "gainscope.cases:score_case"):
        status, answer = movies.call("PATCH", f"/api/cases/{CASE}", {"scorers": [name]})
        assert status == 400 and "never a file of the server" in answer["error"] and "hunter2" not in answer["error"]
        status, answer = movies.call("POST", "/api/scorers/test", {"name": name, "case": CASE, "query": "star wars"})
        assert status == 400 and "never a file of the server" in answer["error"]
    # an uploaded case naming a scorer file: the file is not read, the case says so
    content = json.dumps({"scorer": str(secret), "scale": "graded", "queries": [{"query": "q", "ratings": {"d": 1},
                                                                                  "results": ["d"]}]})
    status, created = movies.call("POST", "/api/cases", {"filename": "named.json", "content": content})
    assert status == 201, created
    _, detail = movies.call("GET", f"/api/cases/{created['id']}")
    assert list(detail["scores"]) == ["nDCG@10", "P@5", "ERR@10"]
    assert any("does not read from a file of the server" in note for note in detail["notes"])
    assert movies.call("GET", "/api/scorers")[1]["saved"] == []
    status, answer = movies.call("PUT", "/api/scorers/a%2Fb", {"language": "javascript", "code": "setScore(1)"})
    assert status in (400, 404)


def test_case_add_saves_the_javascript_scorer_a_case_file_names(cli_runner, tmp_path: Path) -> None:
    case = tmp_path / "case.json"
    shutil.copy(MOVIES.parent / "blog_ndcg_at_10.js", tmp_path / "blog.js")
    data = json.loads(MOVIES.read_text(encoding="utf-8"))
    case.write_text(json.dumps({**data, "scorer": "blog.js"}), encoding="utf-8")
    code, out, err = cli_runner("case", "add", str(tmp_path / "ws"), str(case))
    assert code == 0, err
    from gainscope.server.workspace import Workspace

    with Workspace.open(tmp_path / "ws") as ws:
        [saved] = ws.store.scorers()
        assert (saved.name, saved.language) == ("blog.js", "javascript")
        assert saved.code == (tmp_path / "blog.js").read_text(encoding="utf-8")
        record = ws.store.case(out.strip())
        assert record.settings.scorers[0] == "blog.js"
        assert ws.scoreboard.scores(record.id).by_scorer["blog.js"].error is None


def test_a_team_server_runs_no_code_given_through_the_page(tmp_path: Path, recipes: Path) -> None:
    from .conftest import serve

    for team in serve(tmp_path / "team", token="team-secret-1", allow_code=False, loopback=False):
        record = add_case(team.workspace, recipes / "recipes_case.json")
        status, answer = team.call("PATCH", f"/api/cases/{record.id}", {"engine": "os:system"})
        assert status == 400 and "is a Python function, which runs as the server's own code" in answer["error"]
        status, answer = team.call("PATCH", f"/api/cases/{record.id}", {
            "try": {"headers": {"X-Leak": "{{ env.HOME }}"}}})
        assert status == 400 and "read the server's environment" in answer["error"]
        status, answer = team.call("POST", f"/api/cases/{record.id}/rerun", {"knobs": {"title_boost": 1}})
        assert status == 202, answer  # an index folder or a TOML engine is fine
        assert team.job(answer)["state"] == "done"
