"""``gainscope serve-engine`` as a real server in a subprocess, searched through the generic HTTP adapter: the same
hits as the embedded engine itself; and the API's answers to bad requests."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gainscope.search import RunSettings, SearchQuery, SnapshotStore, load_engine, run_queries
from gainscope.search.embedded import EmbeddedEngine


@pytest.fixture(scope="module")
def served(films_index: Path) -> Iterator[str]:
    """The films index served on a free port by a real `gainscope serve-engine` process; yields its search URL."""
    process = subprocess.Popen([sys.executable, "-m", "gainscope", "serve-engine", str(films_index), "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/search"), process.stderr.read()
        yield url
    finally:
        process.terminate()
        process.wait(30)
        process.stdout.close()
        process.stderr.close()


def test_the_generic_adapter_against_a_real_served_index(served: str, films_index: Path, tmp_path: Path) -> None:
    (tmp_path / "engines.toml").write_text(f'''
[engines.local]
kind = "http"
url = "{served}"
params = {{ q = "{{{{query}}}}", top = "{{{{top}}}}", title_boost = "{{{{title_boost}}}}" }}
docs = "hits"
id = "id"
score = "score"
total = "total"
fields = {{ title = "fields.title" }}
[engines.local.knobs]
title_boost = 2
''')
    engine = load_engine(f"{tmp_path / 'engines.toml'}:local")
    queries = [SearchQuery("q1", "star wars"), SearchQuery("q2", "crime saga"), SearchQuery("q3", "nothing")]
    with SnapshotStore.open(tmp_path / "s.sqlite") as store:
        outcome = asyncio.run(run_queries(engine, queries, store, knobs={"title_boost": 3},
                                          settings=RunSettings(top=3)))
    direct = EmbeddedEngine(films_index)
    for result, query in zip(outcome.results, queries, strict=True):
        expected = direct.search(query.text, {"title_boost": 3}, top=3)
        assert [(h.id, h.score, dict(h.fields)) for h in result.hits] == [
            (h.id, pytest.approx(h.score), dict(h.fields)) for h in expected.hits]
        assert result.total == expected.total
    assert outcome.results[2].hits == () and outcome.results[2].status == "ok"
    assert json.loads(outcome.results[0].response)["knobs"]["title_boost"] == 3


def test_post_documents_and_errors(served: str) -> None:
    base = served.removesuffix("/search")
    with httpx.Client() as client:
        posted = client.post(served, json={"query": "godfather", "top": 1, "knobs": {"k1": 0.9}}).json()
        assert posted["hits"][0]["id"] == "d3" and posted["knobs"]["k1"] == 0.9
        assert client.get(f"{base}/documents/d1").json() == {"id": "d1", "fields": {
            "title": "Star Wars", "text": "A space opera about a galaxy far away"}}
        assert client.get(f"{base}/health").json() == {"status": "ok"}
        assert client.get(base + "/").json()["knobs"] == {"k1": 1.2, "b": 0.75, "title_boost": 2.0, "text_boost": 1.0}
        for response, status, error in [
            (client.get(served), 400, "give the query text: q=TEXT (GET) or {\"query\": TEXT} (POST)"),
            (client.get(served, params={"q": "x", "top": "0"}), 400, "top must be a positive integer; got 0"),
            (client.get(served, params={"q": "x", "tilte_boost": "2"}), 400,
             "engine 'index' has no knob 'tilte_boost' (did you mean 'title_boost'?); its knobs: k1, b, title_boost, "
             "text_boost"),
            (client.get(served, params={"q": "x", "b": "7"}), 400,
             "b must be a number between 0 and 1 (0.75 is usual); got 7"),
            (client.post(served, content=b"{not json"), 400, "the body is not JSON (Expecting property name enclosed "
                                                             "in double quotes)"),
            (client.get(f"{base}/documents/nope"), 404, "no document 'nope' in the index"),
            (client.get(f"{base}/elsewhere"), 404, "no endpoint /elsewhere; use /search, /documents/ID, / or /health"),
        ]:
            assert (response.status_code, response.json()) == (status, {"error": error})


def test_a_port_in_use_is_an_io_error(films_index: Path, served: str) -> None:
    port = served.rsplit(":", 1)[1].split("/")[0]
    done = subprocess.run([sys.executable, "-m", "gainscope", "serve-engine", str(films_index), "--port", port],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 4
    assert done.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}: ")
    assert done.stderr.endswith("; choose another --port (or --port 0)\n")
