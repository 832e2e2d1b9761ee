"""HTTP engines against servers on 127.0.0.1 that answer in the shapes the engines document, asserting the exact
request each adapter sends.

Shapes (tests/search/server.py builds them):

* Elasticsearch 7.x and 8.x, ``POST /<index>/_search`` with a JSON body; response ``took``, ``timed_out``,
  ``_shards``, ``hits.total`` ``{"value", "relation"}``, ``hits.max_score``, ``hits.hits[]`` with ``_index``,
  ``_id``, ``_score``, ``_source`` -- Elasticsearch Guide 8.15, "Search API", response body
  (https://www.elastic.co/guide/en/elasticsearch/reference/8.15/search-search.html) and 7.17 (same page). 6.x gives
  ``hits.total`` as a number (Elasticsearch Guide 6.8, "Request Body Search"). Errors: ``{"error": {"root_cause",
  "type", "reason"}, "status"}``.
* OpenSearch 1.x and 2.x, same request and response -- OpenSearch documentation 2.x, "Search" API
  (https://opensearch.org/docs/2.x/api-reference/search/).
* Solr 8.x and 9.x, ``GET /solr/<collection>/select?q=...&rows=...&fl=id,score&wt=json``; response
  ``responseHeader`` ``{status, QTime, params}``, ``response`` ``{numFound, start, maxScore, docs}`` (9.x adds
  ``numFoundExact``) -- Solr Reference Guide 8.10 and 9.x, "Response Writers", JSON Response Writer
  (https://solr.apache.org/guide/8_10/response-writers.html); errors ``{"error": {"msg", "code"}}``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from gainscope.errors import EngineConfigError
from gainscope.search import RetryPolicy, RunSettings, SearchQuery, SnapshotStore, load_engine, run_queries

from .server import FakeSearchServer, Recorded, Reply, es_response, solr_response

FAST = RunSettings(top=3, concurrency=1, retry=RetryPolicy(max_attempts=3, backoff_base=0.001, backoff_max=0.002),
                   max_consecutive_failures=3)


def engine_from(tmp_path: Path, toml: str, name: str):
    path = tmp_path / "engines.toml"
    path.write_text(toml, encoding="utf-8")
    return load_engine(f"{path}:{name}")


def run(engine, queries, store, **kwargs):
    return asyncio.run(run_queries(engine, queries, store, **{"settings": FAST, **kwargs}))


@pytest.fixture
def store(tmp_path: Path):
    with SnapshotStore.open(tmp_path / "snap.sqlite") as opened:
        yield opened


# ---------------------------------------------------------------------------------------------- Elasticsearch
@pytest.mark.parametrize("kind", ["elasticsearch", "opensearch"])
def test_elasticsearch_and_opensearch_request_and_response(tmp_path: Path, kind: str, monkeypatch) -> None:
    monkeypatch.setenv("GS_TEST_ES_KEY", "s3cr3t-key")
    with FakeSearchServer(lambda request, n: Reply(200, es_response(["p7", "p3", "p9"], total=120,
                                                                    relation="gte"))) as server:
        engine = engine_from(tmp_path, f'''
[engines.es]
kind = "{kind}"
url = "{server.url}/products/_search"
body = \'\'\'{{"size": {{{{top}}}}, "query": {{"multi_match": {{"query": "{{{{query}}}}",
          "fields": ["title^{{{{title_boost}}}}", "text"]}}}}}}\'\'\'
display = ["title"]
headers = {{ Authorization = "ApiKey {{{{env.GS_TEST_ES_KEY}}}}" }}
[engines.es.knobs]
title_boost = 2
''', "es")
        response = engine.search('star "wars"', {"title_boost": 3}, top=3)
    [request] = server.requests
    assert (request.method, request.path, request.params) == ("POST", "/products/_search", [])
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["Accept"] == "application/json"
    assert request.headers["Authorization"] == "ApiKey s3cr3t-key"
    assert request.json() == {"size": 3, "query": {"multi_match": {"query": 'star "wars"',
                                                                    "fields": ["title^3", "text"]}}}
    assert [(h.id, h.score, dict(h.fields)) for h in response.hits] == [
        ("p7", 10.0, {"title": "p7"}), ("p3", 9.0, {"title": "p3"}), ("p9", 8.0, {"title": "p9"})]
    assert response.total == 120
    assert json.loads(response.raw)["hits"]["total"] == {"value": 120, "relation": "gte"}
    # the recorded request hides the credential
    assert response.request["headers"]["Authorization"] == "***"
    assert "s3cr3t-key" not in json.dumps(response.request)


def test_elasticsearch_default_body_and_six_x_total(tmp_path: Path) -> None:
    body = es_response(["a", "b"])
    body["hits"]["total"] = 12  # Elasticsearch 6.x: a number
    with FakeSearchServer(lambda request, n: Reply(200, body)) as server:
        engine = engine_from(tmp_path, f'[engines.es]\nkind = "elasticsearch"\nurl = "{server.url}/idx/_search"\n',
                             "es")
        response = engine.search("x y", top=7)
    assert server.requests[0].json() == {"size": 7, "query": {"multi_match": {"query": "x y"}}}
    assert response.total == 12 and response.ids == ["a", "b"]


# ---------------------------------------------------------------------------------------------- Solr
def test_solr_select_parameters_and_response(tmp_path: Path) -> None:
    with FakeSearchServer(lambda request, n: Reply(200, solr_response(["f1", "f2"], num_found=57))) as server:
        engine = engine_from(tmp_path, f'''
[engines.films]
kind = "solr"
url = "{server.url}/solr/films/select"
params = {{ defType = "edismax", qf = "title^{{{{title_boost}}}} text", fq = ["type:film", "lang:{{{{opt.lang}}}}"] }}
[engines.films.knobs]
title_boost = 1.5
''', "films")
        response = engine.search(SearchQuery("q1", "star & wars", {"lang": "en"}), top=10)
    [request] = server.requests
    assert (request.method, request.path) == ("GET", "/solr/films/select")
    assert request.params == [("q", "star & wars"), ("rows", "10"), ("fl", "id,score"), ("wt", "json"),
                              ("defType", "edismax"), ("qf", "title^1.5 text"), ("fq", "type:film"),
                              ("fq", "lang:en")]
    assert request.body == b""
    assert [(h.id, h.score) for h in response.hits] == [("f1", 5.0), ("f2", 4.9)] and response.total == 57


def test_solr_post_sends_the_parameters_as_a_form(tmp_path: Path) -> None:
    with FakeSearchServer(lambda request, n: Reply(200, solr_response(["f1"]))) as server:
        toml = f'[engines.s]\nkind = "solr"\nmethod = "POST"\nurl = "{server.url}/solr/c/select"\n'
        engine = engine_from(tmp_path, toml, "s")
        engine.search("a b", top=2)
    [request] = server.requests
    assert request.method == "POST" and request.params == []
    assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert request.body == b"q=a+b&rows=2&fl=id%2Cscore&wt=json"


# ---------------------------------------------------------------------------------------------- generic HTTP
def test_generic_http_with_jmespath_mapping(tmp_path: Path) -> None:
    answer = {"hits": {"total": 41, "items": [
        {"pid": "sku-1", "score": 0.9, "name": "Red shoe", "offer": {"price": 10}},
        {"pid": 2, "score": "0.5", "name": "Blue hat", "offer": {"price": 12}}]}}
    with FakeSearchServer(lambda request, n: Reply(200, answer)) as server:
        engine = engine_from(tmp_path, f'''
[engines.shop]
kind = "http"
url = "{server.url}/search/{{{{opt.store}}}}"
method = "GET"
params = {{ q = "{{{{query}}}}", boost = "{{{{title_boost}}}}", n = "{{{{top}}}}" }}
docs = "hits.items"
id = "pid"
score = "score"
total = "hits.total"
fields = {{ title = "name", price = "offer.price" }}
[engines.shop.knobs]
title_boost = 2
''', "shop")
        response = engine.search(SearchQuery("q", "red/blue shoe", {"store": "eu west"}), top=5)
    [request] = server.requests
    assert request.path == "/search/eu%20west"
    assert request.params == [("q", "red/blue shoe"), ("boost", "2"), ("n", "5")]
    assert [(h.id, h.score, dict(h.fields)) for h in response.hits] == [
        ("sku-1", 0.9, {"title": "Red shoe", "price": 10}), ("2", 0.5, {"title": "Blue hat", "price": 12})]
    assert response.total == 41


# ---------------------------------------------------------------------------------------------- bad input (item 7)
SHOP = '''
[engines.shop]
kind = "http"
url = "{url}/search"
params = {{ q = "{{{{query}}}}" }}
docs = "hits.items"
id = "pid"
{extra}
'''


def shop(tmp_path: Path, url: str, extra: str = ""):
    return engine_from(tmp_path, SHOP.format(url=url, extra=extra), "shop")


QUERIES = [SearchQuery("q1", "red shoe"), SearchQuery("q2", "blue hat"), SearchQuery("q3", "green scarf")]


def answer_items(items: list) -> Reply:
    return Reply(200, {"hits": {"items": items}})


@pytest.mark.parametrize(("reply", "message"), [
    (Reply(200, {"results": []}),
     "engine 'shop', query 'q3' ('green scarf'): the mapping docs = 'hits.items' finds nothing in the response (its "
     "top-level keys: results); set docs in the engine's declaration to the JMESPath of the list of hits"),
    (answer_items([{"sku": "x"}]),
     "engine 'shop', query 'q3' ('green scarf'): hit 1 has no id: id = 'pid' finds nothing in it (its keys: sku); set "
     "id to the JMESPath of the document id inside one hit"),
    (answer_items([{"pid": "a"}, {"pid": None}]),
     "engine 'shop', query 'q3' ('green scarf'): hit 2 has no id: id = 'pid' finds nothing in it (its keys: pid); set "
     "id to the JMESPath of the document id inside one hit"),
    (answer_items([{"pid": "a"}, {"pid": "b"}, {"pid": "a"}]),
     "engine 'shop', query 'q3' ('green scarf'): document 'a' is returned twice (ranks 1 and 3); a ranking names each "
     "document once. Check that the id mapping picks the document's unique id (not a field shared by several "
     "documents) and that the engine does not return several parts of one document"),
    (Reply(200, "<!DOCTYPE html><html><body>Login</body></html>", {"Content-Type": "text/html"}),
     "engine 'shop', query 'q3' ('green scarf'): GET {url}/search answered something that is not JSON (Content-Type "
     "text/html; it starts '<!DOCTYPE html><html><body>Login</body></html>'): an HTML page: the url probably points at "
     "a web page or a login form, not at the search API"),
    (Reply(200, b"{\"hits\": {\"items\": [" + b" " * (10 * 1024 * 1024) + b"]}}"),
     "engine 'shop', query 'q3' ('green scarf'): GET {url}/search answered more than 8 MiB (max_response_mb); ask for "
     "fewer fields or fewer results (Elasticsearch: \"_source\" filtering; Solr: fl), or raise max_response_mb"),
    (answer_items([{"pid": {"nested": 1}}]),
     "engine 'shop', query 'q3' ('green scarf'): hit 1: id = 'pid' finds {\"nested\": 1}, not a document id (a "
     "non-empty text or an integer)"),
])
def test_bad_answers_fail_the_query_with_engine_query_and_fix_and_keep_what_was_recorded(
        tmp_path: Path, store: SnapshotStore, reply: Reply, message: str) -> None:
    def behaviour(request: Recorded, n: int) -> Reply:
        return answer_items([{"pid": request.param("q").split()[0]}]) if request.param("q") != "green scarf" else reply

    with FakeSearchServer(behaviour) as server:
        outcome = run(shop(tmp_path, server.url), QUERIES, store)
        url = server.url
    [ok1, ok2, bad] = outcome.results
    assert (ok1.status, ok1.hits[0].id, ok2.status, ok2.hits[0].id) == ("ok", "red", "ok", "blue")
    assert bad.status == "failed" and bad.hits == () and bad.error == message.replace("{url}", url)
    assert outcome.stopped is None
    # recorded in the store, the good ones included
    snapshot = store.get(outcome.snapshot.name)
    assert [r.status for r in store.results(snapshot)] == ["ok", "ok", "failed"]


def test_a_template_that_does_not_render_stops_before_the_first_request(tmp_path: Path,
                                                                           store: SnapshotStore) -> None:
    with FakeSearchServer() as server:
        engine = engine_from(tmp_path, SHOP.format(url=server.url, extra="").replace(
            'q = "{{query}}"', 'q = "{{query}}", lang = "{{opt.lang}}"'), "shop")
        queries = [SearchQuery("q1", "a", {"lang": "en"}), SearchQuery("q2", "b")]
        with pytest.raises(EngineConfigError) as caught:
            run(engine, queries, store)
        assert server.requests == []
    assert str(caught.value) == ("engine 'shop', query 'q2' ('b'): params.lang uses {{opt.lang}} but the query has no "
                                 "option 'lang'; give it in the queries file (\"options\": {...}) or remove it from "
                                 "the template")
    assert store.snapshots() == []  # nothing recorded either


def test_a_body_that_is_not_json_once_rendered_is_refused_before_sending(tmp_path: Path) -> None:
    engine = engine_from(tmp_path, '''
[engines.es]
kind = "elasticsearch"
url = "http://127.0.0.1:9/idx/_search"
body = \'\'\'{"size": {{top}}, "query": {"match": {"title": {{query}}}}, "boost": {{b}}}\'\'\'
knobs = { b = "two" }
''', "es")
    prepared = engine.prepare(SearchQuery("q1", "x"), {"b": 2}, 3)  # the text lands as a JSON string: fine
    assert json.loads(prepared.request["body"])["query"] == {"match": {"title": "x"}}
    engine = engine_from(tmp_path, '''
[engines.es]
kind = "elasticsearch"
url = "http://127.0.0.1:9/idx/_search"
body = \'\'\'{"size": {{top}}, "q": "{{query}}" "x"}\'\'\'
''', "es")
    with pytest.raises(EngineConfigError) as caught:
        engine.prepare(SearchQuery("q1", "x"), {}, 3)
    assert str(caught.value) == ("engine 'es', query 'q1' ('x'): the body is not JSON once rendered (Expecting ',' "
                                 "delimiter at character 22: '{\"size\": 3, \"q\": \"x\" \"x\"}'); a placeholder "
                                 "outside quotes is written as a JSON value, inside quotes as string content")


def test_an_engine_that_is_down_stops_the_run_after_consecutive_failures(tmp_path: Path,
                                                                        store: SnapshotStore) -> None:
    with FakeSearchServer() as server:
        url = server.url  # the server is stopped when the block ends: nothing listens there any more
    engine = shop(tmp_path, url)
    queries = [SearchQuery(f"q{i}", f"text {i}") for i in range(6)]
    outcome = run(engine, queries, store)
    # three failures in a row stop the run; a query already past the slot when it stopped may fail too
    failed = [r.query_id for r in outcome.failed]
    assert 3 <= len(failed) <= 4 and sorted(failed + list(outcome.unsent)) == [q.id for q in queries]
    first = outcome.failed[0]
    assert first.attempts == 3 and first.http_status is None
    assert first.error.startswith(f"engine 'shop', query 'q0' ('text 0'): GET {url}/search: connection failed "
                                  "(ConnectError: ")
    assert first.error.endswith("); check that the engine runs at this address (after 3 attempts)")
    assert str(outcome.stopped).startswith("engine 'shop': 3 queries in a row failed (the last, 'q")
    assert str(outcome.stopped).endswith("; the engine may be down or the mapping wrong")


# ---------------------------------------------------------------------------------------------- retries
def test_retryable_failures_are_retried_and_recorded_with_their_attempts(tmp_path: Path, store: SnapshotStore) -> None:
    plan = {"q1": [Reply(503, {"error": "busy"}), Reply(200)], "q2": [Reply(drop=True), Reply(200)],
            "q3": [Reply(429, {"error": "slow"}, {"Retry-After": "0"}), Reply(500), Reply(200)]}
    seen: dict[str, int] = {}

    def behaviour(request: Recorded, n: int) -> Reply:
        qid = {"red": "q1", "blue": "q2", "green": "q3"}[request.param("q").split()[0]]
        seen[qid] = seen.get(qid, 0) + 1
        reply = plan[qid][seen[qid] - 1]
        return answer_items([{"pid": qid}]) if reply.status == 200 and not reply.drop else reply

    with FakeSearchServer(behaviour) as server:
        outcome = run(shop(tmp_path, server.url), QUERIES, store)
    assert [(r.query_id, r.status, r.attempts) for r in outcome.results] == [("q1", "ok", 2), ("q2", "ok", 2),
                                                                             ("q3", "ok", 3)]
    assert outcome.requests == 7 and len(server.requests) == 7


def test_a_400_fails_that_query_only_and_a_404_stops_the_run(tmp_path: Path, store: SnapshotStore) -> None:
    def behaviour(request: Recorded, n: int) -> Reply:
        word = request.param("q").split()[0]
        if word == "red":
            return Reply(400, {"error": {"root_cause": [], "type": "query_shard_exception",
                                         "reason": "Failed to parse query [red shoe]"}, "status": 400})
        return Reply(404, {"error": {"type": "index_not_found_exception", "reason": "no such index [x]"}})

    with FakeSearchServer(behaviour) as server:
        outcome = run(shop(tmp_path, server.url), QUERIES, store)
        url = server.url
    assert [(r.query_id, r.status, r.attempts, r.http_status) for r in outcome.results] == [
        ("q1", "failed", 1, 400), ("q2", "failed", 1, 404)]
    assert outcome.results[0].error == (
        f"engine 'shop', query 'q1' ('red shoe'): GET {url}/search answered HTTP 400: query_shard_exception: Failed to "
        "parse query [red shoe]; the engine refused this query (its message says why): check the template for this "
        "query")
    assert outcome.unsent == ("q3",)
    assert str(outcome.stopped) == (
        f"engine 'shop' refused a request in a way that would repeat for every query: engine 'shop', query 'q2' "
        f"('blue hat'): GET {url}/search answered HTTP 404: index_not_found_exception: no such index [x]; check the "
        "url (host, index or collection name, path)")


# ---------------------------------------------------------------------------------------------- credentials
def test_credentials_only_from_the_environment_and_never_shown(tmp_path: Path, monkeypatch,
                                                               store: SnapshotStore) -> None:
    with pytest.raises(EngineConfigError) as caught:
        shop(tmp_path, "http://127.0.0.1:9", 'headers = { Authorization = "Bearer abc123" }')
    assert str(caught.value) == ("engine 'shop': headers.Authorization looks like a credential written into the file; "
                                 "credentials come from environment variables only: write it as \"... "
                                 "{{env.VARIABLE}}\" and export VARIABLE")
    with pytest.raises(EngineConfigError) as caught:
        shop(tmp_path, "http://user:pw@127.0.0.1:9")
    assert str(caught.value) == ("engine 'shop': the url holds a user name or password "
                                 "(http://***@127.0.0.1:9/search); credentials come from environment variables only: "
                                 "basic_auth = [\"USER_VARIABLE\", \"PASSWORD_VARIABLE\"]")
    engine = shop(tmp_path, "http://127.0.0.1:9", 'basic_auth = ["GS_TEST_USER", "GS_TEST_PASSWORD"]')
    monkeypatch.delenv("GS_TEST_USER", raising=False)
    with pytest.raises(EngineConfigError) as caught:
        engine.prepare(SearchQuery("q1", "x"), {}, 3)
    assert str(caught.value) == ("engine 'shop': basic_auth names the environment variable GS_TEST_USER, which is not "
                                 "set; export it before running")
    monkeypatch.setenv("GS_TEST_USER", "alice")
    monkeypatch.setenv("GS_TEST_PASSWORD", "pa55word-xyz")
    # a server that echoes the credentials in its error: the recorded error shows *** instead
    with FakeSearchServer(lambda request, n: Reply(401, {"error": f"bad {request.headers['Authorization']} for "
                                                                  "alice:pa55word-xyz"})) as server:
        engine = shop(tmp_path, server.url, 'basic_auth = ["GS_TEST_USER", "GS_TEST_PASSWORD"]')
        outcome = run(engine, QUERIES[:1], store)
    [request] = server.requests
    assert request.headers["Authorization"] == "Basic YWxpY2U6cGE1NXdvcmQteHl6"  # base64("alice:pa55word-xyz")
    [result] = outcome.results
    assert "pa55word-xyz" not in result.error and "YWxpY2U6cGE1NXdvcmQteHl6" not in result.error
    assert "bad Basic *** for ***:***" in result.error
    assert result.request["headers"]["Authorization"] == "***"
    assert str(outcome.stopped).startswith("engine 'shop' refused a request in a way that would repeat for every query")


def test_declaration_errors(tmp_path: Path) -> None:
    cases = [
        ('[engines.x]\nkind = "elastic"\n', "engine 'x': kind = 'elastic' is not a kind of engine; did you mean "
                                            "'elasticsearch'?"),
        ('[engines.x]\nkind = "http"\nurl = "http://h/s"\ndocs = "a"\nid = "b"\nscroe = "c"\n',
         "engine 'x' (http): unknown key 'scroe'; did you mean 'score'?"),
        ('[engines.x]\nkind = "http"\nurl = "http://h/s"\nid = "b"\n',
         "engine 'x': docs = \"JMESPath\" is required for an http engine (the path of the list of hits in the "
         "response, e.g. \"hits.items\")"),
        ('[engines.x]\nkind = "http"\nurl = "http://h/s"\ndocs = "hits[?"\nid = "b"\n',
         "engine 'x': docs = 'hits[?' is not a JMESPath expression (Invalid jmespath expression: Incomplete "
         "expression:); see https://jmespath.org/specification.html"),
        ('[engines.x]\nkind = "elasticsearch"\nurl = "http://h:9200/products"\n',
         "engine 'x': an elasticsearch url ends in /_search (for example http://127.0.0.1:9200/INDEX/_search); got "
         "'http://h:9200/products'"),
        ('[engines.x]\nkind = "http"\nurl = "http://h/s"\ndocs = "a"\nid = "b"\n[engines.x.knobs]\nquery = 1\n',
         "engine 'x': 'query' cannot be a knob name; use letters, digits and _ (not starting with a digit), and none "
         "of query, top, opt, env"),
    ]
    for toml, message in cases:
        with pytest.raises(EngineConfigError) as caught:
            engine_from(tmp_path, toml, "x")
        assert str(caught.value) == message
    with pytest.raises(EngineConfigError) as caught:
        engine_from(tmp_path, '[engines.shop]\nkind = "python"\nfunction = "m:f"\n', "shpo")
    assert str(caught.value) == f"{tmp_path / 'engines.toml'} declares no engine 'shpo'; did you mean 'shop'?"
