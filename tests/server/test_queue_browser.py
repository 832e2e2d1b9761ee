"""The rating queue in a real browser (headless Chromium, tests/render/browser.py): a pairs file written by
``gainscope pool`` is added on the queues page, rated with the keyboard (grades, s, u, the arrows), the page is
reloaded and resumes where it stopped, and the exported qrels hold exactly the ratings given. A screenshot of the
queue is kept (copied to $GAINSCOPE_SCREENSHOTS when set)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Dashboard, add_case, load_test_module, serve

pytestmark = pytest.mark.slow

_driver = load_test_module("render/browser.py")
CASE = "recipes"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, recipes: Path) -> Iterator[Dashboard]:
    for dashboard in serve(tmp_path_factory.mktemp("queue-browser") / "ws"):
        add_case(dashboard.workspace, recipes / "recipes_case.json")
        yield dashboard


def _item(browser: Any) -> tuple[str, str]:
    """The query and the document shown."""
    return tuple(browser.evaluate("[document.getElementById('pair-query').textContent, "
                            "document.getElementById('pair-doc').textContent]"))


def _acted(browser: Any, key: str, n: int) -> None:
    browser.press(key)
    browser.wait_for(f"document.getElementById('queue').dataset.acted === '{n}'")
    assert browser.evaluate("document.getElementById('status').className") != "error", \
        browser.evaluate("document.getElementById('status').textContent")


def test_rate_a_pool_with_the_keyboard_reload_and_export(site: Dashboard, cli_runner: Any, tmp_path: Path) -> None:
    # two runs over two queries of the recipes case, pooled against the case's ratings by gainscope pool
    (tmp_path / "a.run").write_text("q01 Q0 r01 1 3 a\nq01 Q0 r03 2 2 a\nq01 Q0 r06 3 1 a\n"
                                    "q02 Q0 r07 1 3 a\nq02 Q0 r11 2 2 a\nq02 Q0 r08 3 1 a\n")
    (tmp_path / "b.run").write_text("q01 Q0 r02 1 3 b\nq01 Q0 r06 2 2 b\nq01 Q0 r01 3 1 b\n"
                                    "q02 Q0 r08 1 3 b\nq02 Q0 r12 2 2 b\nq02 Q0 r07 3 1 b\n")
    (tmp_path / "case.qrels").write_text(site.workspace.export_case(CASE, "qrels"))
    pairs = tmp_path / "pairs.txt"
    code, _, err = cli_runner("pool", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--judgments",
                              str(tmp_path / "case.qrels"), "--budget", "4", "-o", str(pairs))
    assert code == 0, err
    order = [tuple(line.split()) for line in pairs.read_text().splitlines()[1:]]
    assert sorted(order) == [("q01", "r03"), ("q01", "r06"), ("q02", "r11"), ("q02", "r12")]
    texts = {"q01": "chocolate cake", "q02": "vegetarian pasta"}
    shown = [(texts[q], d) for q, d in order]

    with _driver.Browser(_driver.chromium_or_skip(), width=1280, height=900) as browser:
        browser.open(f"{site.url}/cases/{CASE}/queues?token={site.workspace.token}")
        browser.wait_for("document.body.dataset.ready === 'yes'")
        browser.set_files("#add-queue input[name=file]", [pairs])
        browser.click("#add-queue button[type=submit]")
        browser.wait_for_load()
        browser.wait_for("document.body.dataset.ready === 'yes'")
        assert browser.evaluate("location.pathname") == f"/cases/{CASE}/queues/pairs"
        assert browser.evaluate("document.getElementById('queue-note').textContent").startswith("gainscope pool: 4 of")
        assert _item(browser) == shown[0]
        # the document's text comes from the case's engine (the embedded index)
        title = browser.evaluate("document.getElementById('pair-title').textContent")
        assert title and browser.evaluate("document.getElementById('pair-unknown').hidden")
        # the case has no results yet: no score cards of zeros, the sentence that says why instead (rendered,
        # not only the attribute: a class's display once showed the hidden cards)
        assert browser.evaluate("getComputedStyle(document.getElementById('queue-scores')).display") == "none"
        assert browser.evaluate("getComputedStyle(document.getElementById('queue-no-results')).display") != "none"
        browser.type_into("#author", "tester")
        browser.evaluate("document.getElementById('author').dispatchEvent(new Event('change')); "
                         "document.activeElement.blur()")
        _acted(browser, "2", 1)         # shown[0] = 2, on to shown[1]
        assert _item(browser) == shown[1]
        _acted(browser, "s", 2)         # shown[1] skipped
        assert _item(browser) == shown[2]
        _acted(browser, "3", 3)         # shown[2] = 3
        assert _item(browser) == shown[3]
        _acted(browser, "u", 4)         # undone: back to shown[2], unrated
        assert _item(browser) == shown[2]
        assert browser.evaluate("document.querySelectorAll('#pair-grades button.active').length") == 0
        _acted(browser, "1", 5)         # shown[2] = 1
        _acted(browser, "ArrowLeft", 6)  # back to look at it
        assert _item(browser) == shown[2]
        assert browser.evaluate("document.querySelector('#pair-grades button.active').dataset.grade") == "1"
        assert browser.evaluate("document.getElementById('queue-counts').textContent") == (
            "pair 3 of 4 \u00b7 2 rated \u00b7 2 remaining (1 skipped)")
        shots = tmp_path / "shots"
        shots.mkdir()
        data = browser.screenshot(shots / "9-queue.png", full_page=True)
        assert data.startswith(b"\x89PNG") and len(data) > 10000
        extra = os.environ.get("GAINSCOPE_SCREENSHOTS")
        if extra:
            Path(extra).mkdir(parents=True, exist_ok=True)
            shutil.copy(shots / "9-queue.png", Path(extra) / "9-queue.png")

        # a reload resumes where the person stopped
        browser.open(f"{site.url}/cases/{CASE}/queues/pairs")
        browser.wait_for("document.body.dataset.ready === 'yes'")
        assert _item(browser) == shown[2]
        _acted(browser, "ArrowRight", 1)
        assert _item(browser) == shown[3]
        _acted(browser, "0", 2)         # shown[3] = 0; only the skipped one is left: it comes back
        assert _item(browser) == shown[1]
        _acted(browser, "2", 3)         # shown[1] = 2: done
        assert browser.evaluate("document.getElementById('pair').hidden")
        assert not browser.evaluate("document.getElementById('queue-done').hidden")
        assert browser.console_errors == [] and browser.failed_requests == []

    ratings = {shown[0]: 2, shown[2]: 1, shown[3]: 0, shown[1]: 2}
    grouped = sorted(order, key=lambda pair: [q for q, _ in order].index(pair[0]))  # a query's lines together
    expected = "".join(f"{q} 0 {d} {ratings[(texts[q], d)]}\n" for q, d in grouped)
    response = site.client.get(f"/api/cases/{CASE}/queues/pairs/export")
    assert response.text == expected
    given = [(d, r.author) for q in site.workspace.store.queries(CASE) for d, r in q.ratings.items()
             if r.source == "human"]
    assert sorted(given) == sorted((d, "tester") for _, d in order)
    assert site.call("GET", f"/api/cases/{CASE}/queues")[1][0]["rated"] == 4
