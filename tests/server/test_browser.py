"""The dashboard in a real browser (Debian's headless Chromium, driven by our DevTools driver tests/render/browser.py):
import a case on the cases page, rate documents with the keyboard and see the query and case scores become what
gainscope.cases.score_case computes, rerun a live case from the tune page and compare the snapshots side by side,
take a snapshot, run a JavaScript scorer ad hoc, label with an LLM judge, export and import again without loss, and
hostile text that shows as text. A screenshot of every page is kept (the folder is printed; also copied to
$GAINSCOPE_SCREENSHOTS when set)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests.chat_server import FakeChatServer, Reply

from gainscope.cases import read_case, resolve_scorer, score_case
from gainscope.search.store import SnapshotStore

from .conftest import HOSTILE, MOVIES, Dashboard, add_case, load_test_module, serve

pytestmark = pytest.mark.slow

_driver = load_test_module("render/browser.py")
CASE = "movies-baseline-snapshot"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, recipes: Path) -> Iterator[Dashboard]:
    for dashboard in serve(tmp_path_factory.mktemp("browser") / "ws"):
        add_case(dashboard.workspace, recipes / "recipes_case.json")
        yield dashboard


@pytest.fixture(scope="module")
def browser(site: Dashboard) -> Iterator[Any]:
    with _driver.Browser(_driver.chromium_or_skip(), width=1280, height=900) as started:
        started.open(f"{site.url}/?token={site.workspace.token}")  # the start-up URL: the cookie, then /
        yield started


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("screenshots")
    print(f"\ndashboard screenshots: {folder}")
    yield folder
    extra = os.environ.get("GAINSCOPE_SCREENSHOTS")
    if extra:
        Path(extra).mkdir(parents=True, exist_ok=True)
        for png in folder.glob("*.png"):
            shutil.copy(png, Path(extra) / png.name)


def _shot(browser: Any, folder: Path, name: str) -> None:
    data = browser.screenshot(folder / f"{name}.png", full_page=True)
    assert data.startswith(b"\x89PNG") and len(data) > 10000


def _clean(browser: Any) -> None:
    assert browser.console_errors == [] and browser.failed_requests == []


def _ready(browser: Any) -> None:
    browser.wait_for("document.body.dataset.ready === 'yes'")


def _value(browser: Any, selector: str) -> float | None:
    raw = browser.evaluate(f"document.querySelector({json.dumps(selector)}).dataset.value")
    return None if raw in ("", None) else float(raw)


def _expected(changes: dict[str, float | None], scorer: str) -> Any:
    """score_case of the movies case with ``changes`` to the ratings of 'star wars'."""
    case = read_case(MOVIES)
    wars = case.queries[0]
    ratings = dict(wars.ratings)
    for doc, rating in changes.items():
        if rating is None:
            ratings.pop(doc, None)
        else:
            ratings[doc] = rating
    case = replace(case, queries=(replace(wars, ratings=ratings), *case.queries[1:]))
    return score_case(case, resolve_scorer(scorer))


def test_import_a_case_on_the_cases_page(site: Dashboard, browser: Any, shots: Path) -> None:
    browser.open(f"{site.url}/")
    _ready(browser)
    browser.set_files("#import input[name=file]", [MOVIES])
    browser.click("#import button[type=submit]")
    browser.wait_for_load()
    _ready(browser)
    assert browser.evaluate("location.pathname") == f"/cases/{CASE}"
    for scorer in ("nDCG@10", "P@5", "ERR@10"):
        assert _value(browser, f'.case-score[data-scorer="{scorer}"]') == _expected({}, scorer).score
    rows = browser.evaluate("Array.from(document.querySelectorAll('#queries tbody tr'), "
                            "r => r.cells[1].querySelector('a').textContent)")
    assert rows == ["star wars", "star trek", "the godfather", "rom com"]
    _clean(browser)
    _shot(browser, shots, "2-case")
    browser.open(f"{site.url}/")
    _ready(browser)
    assert browser.evaluate("document.querySelectorAll('#cases tbody tr').length") == 2
    _clean(browser)
    _shot(browser, shots, "1-cases")


def test_rate_three_documents_with_the_keyboard(site: Dashboard, browser: Any, shots: Path) -> None:
    browser.open(f"{site.url}/cases/{CASE}/queries/1")
    _ready(browser)
    browser.type_into("#author", "tester")
    browser.evaluate("document.getElementById('author').dispatchEvent(new Event('change')); "
                     "document.activeElement.blur()")
    # results: sw1 (2), spaceballs (1), sw4 (3), startrek2 (0), sw6 (3), sw2 (unrated); the first is selected
    assert browser.evaluate("document.querySelector('li.doc.selected').dataset.doc") == "sw1"
    changes: dict[str, float | None] = {}
    for moves, key, doc, rating in ((["j"] * 5, "2", "sw2", 2), (["k"], "1", "sw6", 1),
                                    (["ArrowUp"] * 3, "3", "spaceballs", 3), (["ArrowDown"] * 2, "u", "startrek2",
                                                                             None)):
        for move in moves:
            browser.press(move)
        assert browser.evaluate("document.querySelector('li.doc.selected').dataset.doc") == doc
        browser.press(key)
        want = "" if rating is None else str(rating)
        browser.wait_for(f"document.querySelector('li.doc[data-doc=\"{doc}\"]').dataset.rating === {want!r}")
        changes[doc] = rating
        for scorer in ("nDCG@10", "P@5", "ERR@10"):
            expected = _expected(changes, scorer)
            box = f'#query-scores [data-scorer="{scorer}"]'
            browser.wait_for(f"document.querySelector('{box} .case-value').dataset.value === "
                             f"{json.dumps(repr(expected.score))}")
            assert _value(browser, f"{box} .query-value") == expected.query("star wars").value
            assert _value(browser, f"{box} .case-value") == expected.score
    assert browser.evaluate("document.querySelector('li.doc[data-doc=\"spaceballs\"] button.grade.active')"
                            ".dataset.grade") == "3"
    _clean(browser)
    _shot(browser, shots, "3-query")
    _, events = site.call("GET", f"/api/cases/{CASE}/ratings/events", params={"query_id": "1"})
    assert [(e["doc"], e["previous"], e["rating"], e["author"]) for e in events[:4]] == [
        ("startrek2", 0, None, "tester"), ("spaceballs", 1, 3, "tester"), ("sw6", 3, 1, "tester"),
        ("sw2", None, 2, "tester")]
    # the case page shows the same numbers
    browser.open(f"{site.url}/cases/{CASE}")
    assert _value(browser, '.case-score[data-scorer="nDCG@10"]') == _expected(changes, "nDCG@10").score


def test_take_a_snapshot_and_rerun_and_compare_snapshots(site: Dashboard, browser: Any, shots: Path,
                                                        recipes: Path) -> None:
    browser.open(f"{site.url}/cases/{CASE}/snapshots")
    _ready(browser)
    browser.type_into("#take-snapshot input[name=note]", "from the page")
    browser.click("#take-snapshot button[type=submit]")
    browser.wait_for_load()
    assert browser.evaluate("document.querySelector('#snapshot-list tbody tr:nth-child(2)').textContent").count(
        "from the page") == 1
    # the live case: two reruns from the tune page with different knobs
    for boost, note in (("2", "titles twice"), ("0", "text only")):
        browser.open(f"{site.url}/cases/recipes/tune")
        _ready(browser)
        browser.type_into('#rerun input[data-knob="title_boost"]', boost)
        browser.type_into("#rerun input[name=note]", note)
        browser.click("#rerun button[type=submit]")
        browser.wait_for("document.querySelector('#rerun-result p.ok')")
        assert browser.evaluate("document.getElementById('progress-text').textContent") == "12 of 12 \u2014 done"
        _clean(browser)
    _shot(browser, shots, "4-tune")
    browser.open(f"{site.url}/cases/recipes/snapshots")
    _ready(browser)
    for name in ("recipes #1", "recipes #2"):
        browser.evaluate(f"document.querySelector('input[name=snapshot][value=\"{name}\"]').checked = true")
    browser.click("#compare button[type=submit]")
    browser.wait_for_load()
    _ready(browser)
    section = 'section.comparison[data-scorer="nDCG@10"]'
    shown = browser.evaluate(f"Array.from(document.querySelectorAll('{section} table.case-scores td[data-value]'), "
                             "c => Number(c.dataset.value))")
    ratings = read_case(recipes / "recipes_case.json")
    with SnapshotStore(site.workspace.connect(), path="browser") as store:
        expected, recorded = [], {}
        for name in ("recipes #1", "recipes #2"):
            results = recorded[name] = {r.query: [h.id for h in r.hits] for r in store.results(store.get(name))}
            case = replace(ratings, queries=tuple(replace(q, results=tuple(results[q.query]))
                                                  for q in ratings.queries))
            expected.append(score_case(case, resolve_scorer("nDCG@10")).score)
    assert shown == expected and expected[0] != expected[1]
    assert browser.evaluate(f"document.querySelectorAll('{section} table.per-query tbody tr').length") == 12
    assert browser.evaluate(f"document.querySelectorAll('{section} table.significance tbody tr').length") == 1
    _clean(browser)
    _shot(browser, shots, "5-snapshots")
    # a query as recipes #1 recorded it: its results and that snapshot's scores, which a rating changes at once
    browser.open(f"{site.url}/cases/recipes/queries/1?snapshot=recipes%20%231")
    _ready(browser)
    assert browser.evaluate("document.getElementById('snapshot-banner') !== null")
    docs = browser.evaluate("Array.from(document.querySelectorAll('#results li.doc'), li => li.dataset.doc)")
    assert docs == recorded["recipes #1"]["chocolate cake"][:10]
    box = '#query-scores [data-scorer="nDCG@10"]'
    assert _value(browser, f"{box} .case-value") == expected[0]
    old = next(q for q in ratings.queries if q.query == "chocolate cake").ratings.get(docs[0])
    new = 0 if old == 3 else 3
    browser.press(str(new))
    browser.wait_for(f"document.querySelector('li.doc[data-doc=\"{docs[0]}\"]').dataset.rating === '{new}'")
    rated = replace(ratings, queries=tuple(
        replace(q, results=tuple(recorded["recipes #1"][q.query]),
                ratings={**q.ratings, docs[0]: new} if q.query == "chocolate cake" else q.ratings)
        for q in ratings.queries))
    now = score_case(rated, resolve_scorer("nDCG@10"))
    browser.wait_for(f"document.querySelector('{box} .case-value').dataset.value === {json.dumps(repr(now.score))}")
    assert _value(browser, f"{box} .query-value") == now.query("chocolate cake").value
    _clean(browser)
    _shot(browser, shots, "5-snapshot-query")
    browser.press("u" if old is None else str(old))  # as it was, for the tests that follow
    browser.wait_for(f"document.querySelector('li.doc[data-doc=\"{docs[0]}\"]').dataset.rating === "
                     f"{json.dumps('' if old is None else str(old))}")
    browser.open(f"{site.url}/cases/recipes/history")
    assert browser.evaluate("document.querySelectorAll('section.history svg circle.noted').length") >= 2
    _clean(browser)
    _shot(browser, shots, "6-history")


def test_run_a_javascript_scorer_ad_hoc(site: Dashboard, browser: Any, shots: Path) -> None:
    browser.open(f"{site.url}/scorers")
    _ready(browser)
    code = "// ten points per result, plus the first one's rating\nvar first = docRating(0) || 0;\n" \
           "console.log('first rated ' + first);\nsetScore(numReturned() * 10 + first);\n"
    browser.type_into("#code", code)
    browser.type_into("#scorer-editor input[name=name]", "ten per result")
    browser.evaluate(f"(() => {{ const s = document.getElementById('test-case'); s.value = {json.dumps(CASE)}; "
                     "s.dispatchEvent(new Event('change')); })()")
    browser.wait_for("document.querySelector('#test-query option')")
    browser.click("#test")
    browser.wait_for("!document.getElementById('test-result').hidden")
    # star wars: 6 results, the first (sw1) rated 2: 6 * 10 + 2
    assert _value(browser, "#test-value") == 62.0
    assert browser.evaluate("document.getElementById('test-logs').textContent") == "first rated 2"
    _clean(browser)
    _shot(browser, shots, "7-scorers")
    browser.click("#scorer-editor button[type=submit]")
    browser.wait_for_load()
    assert browser.evaluate("document.querySelector('#saved-scorers tbody tr').dataset.scorer") == "ten per result"


def test_label_with_an_llm_judge_and_see_the_agreement(site: Dashboard, browser: Any, shots: Path) -> None:
    def judge(body: dict[str, Any], attempt: int) -> Any:
        return Reply("ok", grade=2 if "butter" in body["messages"][-1]["content"].lower() else 0)

    with FakeChatServer(judge) as chat:
        browser.open(f"{site.url}/cases/recipes/judges")
        _ready(browser)
        browser.type_into("#judge input[name=base_url]", chat.url)
        browser.type_into("#judge input[name=model]", "fake-model")
        browser.evaluate("document.querySelector('#judge select[name=scope]').value = 'shown'")
        browser.click("#judge button[type=submit]")
        browser.wait_for("document.querySelector('#judge-result p.ok')")
    browser.open(f"{site.url}/cases/recipes/judges")
    assert browser.evaluate("document.querySelectorAll('#coefficients tbody tr').length") == 6
    assert browser.evaluate("document.querySelectorAll('#confusion tbody tr').length") == 4
    _clean(browser)
    _shot(browser, shots, "8-judges")


def test_export_and_import_again_without_loss(site: Dashboard, browser: Any, shots: Path,
                                              tmp_path: Path) -> None:
    browser.open(f"{site.url}/cases/{CASE}/io")
    _ready(browser)
    _shot(browser, shots, "9-import-export")
    downloaded = browser.download("a[href$='format=case']", tmp_path)
    assert downloaded.name == f"{CASE}.json"
    browser.open(f"{site.url}/")
    _ready(browser)
    browser.set_files("#import input[name=file]", [downloaded])
    browser.type_into("#import input[name=name]", "Reimported")
    browser.click("#import button[type=submit]")
    browser.wait_for_load()
    assert browser.evaluate("location.pathname") == "/cases/reimported"
    original = site.client.get(f"/api/cases/{CASE}/export").json()
    again = site.client.get("/api/cases/reimported/export").json()
    assert {**again, "name": original["name"]} == original
    shown = {s: _value(browser, f'.case-score[data-scorer="{s}"]') for s in ("nDCG@10", "P@5", "ERR@10")}
    assert shown == {s: v["score"] for s, v in site.call("GET", f"/api/cases/{CASE}")[1]["scores"].items()}
    _clean(browser)


def test_hostile_text_shows_as_text_and_never_runs(site: Dashboard, browser: Any, shots: Path,
                                                  tmp_path: Path) -> None:
    payload = HOSTILE.replace("alert(2)", "window.__pwned=2").replace("alert(1)", "window.__pwned=1")
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({"name": payload, "scale": "graded", "queries": [
        {"query": payload, "ratings": {payload: 3}, "results": [payload, "plain"]}]}), encoding="utf-8")
    record = add_case(site.workspace, path)
    site.workspace.store.remember_fields(record.id, {payload: {"title": payload}, "plain": {"title": payload}})
    for page in ("/", f"/cases/{record.id}", f"/cases/{record.id}/queries/1"):
        browser.open(f"{site.url}{page}")
        _ready(browser)
        assert browser.evaluate("window.__pwned === undefined && document.querySelectorAll('img').length === 0")
        assert payload in browser.evaluate("document.body.textContent")
        _clean(browser)
    # rating the hostile document with the keyboard works like any other
    browser.press("2")
    browser.wait_for("document.querySelector('li.doc.selected').dataset.rating === '2'")
    assert browser.evaluate("document.querySelector('li.doc.selected .doc-id').textContent") == payload
    assert browser.evaluate("window.__pwned === undefined")
    _shot(browser, shots, "10-hostile")
