"""Quepid JavaScript scorers in the V8 sandbox: the blog's scripts run as printed, Quepid's API, the sandbox
(no host objects, time and memory limits) and errors that quote the script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gainscope.cases import Case, CaseQuery, RatingScale, ScorerError, score_case
from gainscope.cases.javascript import JavaScriptRuntime, JavaScriptScorer
from gainscope.cases.view import QueryView

pytest.importorskip("py_mini_racer")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "cases"
ONE_TO_TEN = RatingScale.parse("1-10")


def blog_query() -> CaseQuery:
    # the blog's first example on 1-10: [10, 8, 9, -, 5, 1, 4, -, -, -] (- = not rated)
    ratings = dict(zip("abcefg", [10, 8, 9, 5, 1, 4], strict=True))
    return CaseQuery("star trek", ratings, tuple("abcdefghij"))


def wiki_query() -> CaseQuery:
    # Wikipedia's [3, 2, 3, 0, 1, 2] (the 0 unrated) and two rated documents not returned: best [3, 3, 3, 2, 2, 2, 1]
    ratings = {"d1": 3, "d2": 2, "d3": 3, "d5": 1, "d6": 2, "x1": 3, "x2": 2}
    return CaseQuery("wikipedia", ratings, ("d1", "d2", "d3", "d4", "d5", "d6"))


def run(code: str, query: CaseQuery | None = None, scale: RatingScale = ONE_TO_TEN, **options: object):
    scorer = JavaScriptScorer(code, name="test.js", **options)  # type: ignore[arg-type]
    return scorer.score_all([QueryView.of(query or blog_query(), scale)])[0]


# ------------------------------------------------------------------------------------ the blog's scripts
SCRIPT_1 = """// Gets the average score over a scale of 100
var score = avgRating100();
if (score !== null) {
  // Adds a distance penalty to the score
  score -= editDistanceFromBest();
}

// (Added by the blog's author) Return the score to Quepid
setScore(score);
"""

SCRIPT_2 = """// Explore 'docs'
console.log(docs)

// Explore 'bestDocs'
console.log(bestDocs)

// Gets the average score over a scale of 100
var score = avgRating100();
console.log('avgRating100=' + score)

if (score !== null) {
  // Adds a distance penalty to the score
  var editDistance = editDistanceFromBest()
  console.log('editDistanceFromBest=' + editDistance)
  score -= editDistance;
}
console.log('score=' + score)
setScore(score);
"""


def test_default_scorer_script_gives_57() -> None:
    assert run(SCRIPT_1).value == 57  # 61 - 4


def test_debug_script_logs_what_the_blog_shows() -> None:
    result = run(SCRIPT_2)
    assert result.value == 57
    assert result.logs[2:] == ("avgRating100=61", "editDistanceFromBest=4", "score=57")
    assert result.logs[1] == ('[{"id":"a","rating":10},{"id":"c","rating":9},{"id":"b","rating":8},'
                              '{"id":"e","rating":5},{"id":"g","rating":4},{"id":"f","rating":1}]')


def test_script_7_with_script_4_pasted_in_runs_as_printed() -> None:
    scorer = JavaScriptScorer.from_file(EXAMPLES / "blog_ndcg_at_10.js", scale=ONE_TO_TEN)
    result = score_case(Case((wiki_query(),)), scorer)
    q = result.query("wikipedia")
    # 100 * DCG [3, 2, 3, 0, 1, 2, 0, 0, 0, 0] / DCG [3, 3, 3, 2, 2, 2, 1, 0, 0, 0] = 100 * 6.86113 / 9.07360
    assert q.status == "scored" and q.value == pytest.approx(75.6164, abs=1e-4)
    assert "Actual Ratings: 3,2,3,0,1,2,0,0,0,0" in q.logs
    assert "Ideal ratings: 3,3,3,2,2,2,1,0,0,0" in q.logs
    assert result.score == q.value


# ------------------------------------------------------------------------------------------ the API
def test_api_functions() -> None:
    query = CaseQuery("q", {"a": 3, "c": 0, "x": 2, "y": 2}, ("a", "b", "c"), {"boost": 2.5}, num_found=42)
    code = """
    var out = [numFound(), numReturned(), hasDocRating(0), hasDocRating(1), docRating(1), docRating(7),
               docRating(2), topRatings(2), avgRating(), qOption('boost'), qOption('absent'), max];
    var seen = [];
    eachDoc(function (doc, i) { seen.push(doc.id + '@' + i); }, 2);
    var twos = [];
    eachDocWithRatingEqualTo(2, function (doc) { twos.push(doc.id); });
    var all = 0;
    eachDocWithRating(function (doc) { all += 1; });
    console.log(JSON.stringify([out, seen, twos, all, typeof docRating(7)]));
    setScore(1);
    """
    result = run(code, query, RatingScale.parse("graded"))
    assert result.logs == ('[[42,3,true,false,null,null,0,[3,2],1.5,2.5,null,3],["a@0","b@1"],["x","y"],4,'
                           '"undefined"]',)


# Quepid's whole scorer API (issue 13, item 25): what ScorerFactory.runCode and the scorer object around it give
# a script. The query: results a, b, c, d; ratings a=3, c=0, d=2.5 and, not returned, x=2, "10"=1, "2"=3.
#   bestDocs: the ratings object's keys in JavaScript's order ("2", "10", a, c, d, x: integer-like keys first),
#             rating parseInt'd (d: 2), stably sorted by rating: 2:3, a:3, d:2, x:2, 10:1, c:0
#   returned ratings for the averages and the distance: [3, null, 0, 2] (parseInt(2.5) = 2)
#   avgRating() = (3 + 0 + 2) / 3 = 5/3; avgRating100() = floor(5/3 * (100 / 3)) = floor(55.56) = 55
#   avgRating(2) = 3 (b unrated); avgRating100(2) = floor(3 * 33.333333333333336) = floor(100.00000000000001) = 100
#   editDistanceFromBest(): [3, null, 0, 2] vs [3, 3, 2, 2, 1, 0] (best not cut to 4: rem = 4 - 6 < 0)
#     Quepid's table, cells outside it read 0:   [0, 0, 1, 1, 1, 1]
#                                                [1, 1, 1, 2, 2, 2]
#                                                [1, 2, 2, 2, 3, 2]
#                                                [1, 2, 2, 2, 3, 3]  -> 3 (Levenshtein: 4)
#   editDistanceFromBest(3): [3, null, 0] vs [3, 3, 2] -> 2 (both)
#   editDistance('kitten', 'sitting'): 3 (strings work too); editDistance([1, 2, 3], [3, 2, 1]): 2
API_QUERY = CaseQuery("q", {"a": 3, "c": 0, "d": 2.5, "x": 2, "10": 1, "2": 3}, ("a", "b", "c", "d"),
                      {"boost": 2.5}, num_found=42)
EVERY_FUNCTION = """var k = 7;
function t(x) { return x === undefined ? 'undefined' : x; }
function ids(each) { var out = []; each(function (doc) { out.push(doc.id); }); return out.join(); }
var walked = [];
eachDoc(function (doc, i) { walked.push(doc.id + '@' + i); });
var walked2 = [];
eachDoc(function (doc, i) { walked2.push(doc.id); }, 2);
var rated = 0;
eachRatedDoc(function () { rated += 1; });
var out = {
  docs: docs.map(function (d) { return [d.id, d.doc.id, d.hasRating(), d.getRating()]; }),
  bestDocs: bestDocs.map(function (d) { return [d.id, d.rating, d.getRating()]; }),
  total: total, numFound: numFound(), numReturned: numReturned(),
  docExistsAt: [docExistsAt(0), docExistsAt(3), docExistsAt(4), docExistsAt(-1)],
  docAt: [docAt(0), docAt(3), docAt(4)],
  hasDocRating: [hasDocRating(0), hasDocRating(1), hasDocRating(3), hasDocRating(4)],
  docRating: [docRating(0), docRating(1), docRating(2), docRating(3), t(docRating(4))],
  eachDoc: walked.join(), eachDoc2: walked2.join(),
  avgRating: [avgRating(), avgRating(2), avgRating(0)],
  avgRating100: [avgRating100(), avgRating100(2), avgRating100(0)],
  editDistanceFromBest: [editDistanceFromBest(), editDistanceFromBest(3)],
  topRatings: [topRatings(3), topRatings(), topRatings(-1)],
  eachDocWithRating: ids(eachDocWithRating),
  eachDocWithRatingEqualTo: [ids(function (f) { eachDocWithRatingEqualTo(2, f); }),
                             ids(function (f) { eachDocWithRatingEqualTo(2.5, f); })],
  qOption: [qOption('boost'), qOption('absent')],
  ratedDocs: [ratedDocExistsAt(0), ratedDocAt(0), rated, query.ratedDocs.length, query.ratedDocsFound,
              refreshRatedDocs(10) instanceof Promise],
  query: [query.queryText, query.numFound, query.docs === docs, query.options === options],
  scale: scale, max: max, mode: t(mode), options: options, DEFAULT_NUM_DOCS: DEFAULT_NUM_DOCS,
  baseAvg: [baseAvg(docs, 2), baseAvg(docs)], baseAvgRounded: [baseAvgRounded(docs), baseAvgRounded(docs, 0)],
  avg100: avg100(docs), editDistance: [editDistance('kitten', 'sitting'), editDistance([1, 2, 3], [3, 2, 1])],
  getBestRatings: getBestRatings(2, bestDocs), distanceFromBest: distanceFromBest(docs, bestDocs),
  maxScore: t(maxScore()), scaleToArray: scaleToArray(' 0, 1,2 '),
  self: [self.name, self.scale === scale, self.baseAvg === baseAvg, self.editDistance === editDistance]
};
console.log(JSON.stringify(out));
setScore(out.avgRating100[0] - out.editDistanceFromBest[0]);
"""


def test_every_function_of_quepids_scorer_api() -> None:
    result = run(EVERY_FUNCTION, API_QUERY, RatingScale.parse("graded"))
    got = json.loads(result.logs[0])
    assert got == {
        "docs": [["a", "a", True, 3], ["b", "b", False, None], ["c", "c", True, 0], ["d", "d", True, 2.5]],
        "bestDocs": [["2", 3, 3], ["a", 3, 3], ["d", 2, 2], ["x", 2, 2], ["10", 1, 1], ["c", 0, 0]],
        "total": 42, "numFound": 42, "numReturned": 4,
        "docExistsAt": [True, True, False, True],  # Quepid's docExistsAt is posn < docs.length: -1 "exists"
        "docAt": [{"id": "a"}, {"id": "d"}, {}],
        "hasDocRating": [True, False, True, False],
        "docRating": [3, None, 0, 2.5, "undefined"],
        "eachDoc": "a@0,b@1,c@2,d@3", "eachDoc2": "a,b",
        "avgRating": [5 / 3, 3, None],
        "avgRating100": [55, 100, None],
        "editDistanceFromBest": [3, 2],
        "topRatings": [[3, 3, 2], [3, 3, 2, 2, 1, 0], [3, 3, 2, 2, 1]],  # slice(0, -1): all but the last
        "eachDocWithRating": "2,a,d,x,10,c",
        "eachDocWithRatingEqualTo": ["d,x", ""],  # bestDocs hold parseInt(2.5) = 2
        "qOption": [2.5, None],
        "ratedDocs": [False, {}, 0, 0, 0, True],
        "query": ["q", 42, True, True],
        "scale": [0, 1, 2, 3], "max": 3, "mode": "undefined", "options": {"boost": 2.5}, "DEFAULT_NUM_DOCS": 10,
        "baseAvg": [3, 5 / 3], "baseAvgRounded": [1, 0],  # Math.floor(null) is 0
        "avg100": 55, "editDistance": [3, 2],
        "getBestRatings": [3, 3], "distanceFromBest": 3,
        "maxScore": "undefined", "scaleToArray": [0, 1, 2],
        "self": ["test.js", True, True, True],
    }
    assert result.value == 52 and result.depth == 7  # 55 - 3; the k declared
    assert result.reason is not None and result.reason.startswith("the script read Quepid's 'show only rated' "
                                                                  "documents")


def test_api_edge_cases_behave_as_quepids() -> None:
    graded = RatingScale.parse("graded")
    # a position that holds no document: Quepid reads a property of undefined there, a TypeError; here it says so
    with pytest.raises(ScorerError) as exc:
        run("var d = docAt(-1);\nsetScore(1);", API_QUERY, graded)
    assert str(exc.value).startswith("test.js:1: TypeError: docAt(-1): no document at position -1 (positions run "
                                     "from 0 to numReturned() - 1) (query 'q')")
    with pytest.raises(ScorerError, match=r"TypeError: hasDocRating\(1\.5\): no document at position 1\.5"):
        run("setScore(hasDocRating(1.5) ? 1 : 0);", API_QUERY, graded)
    # numFound() reads total, as Quepid's AP@10 finds when it sets total = 0; the API calls itself by name
    assert run("total = 0;\nsetScore(numFound());", API_QUERY, graded).value == 0
    assert run("docExistsAt = function () { return false; };\nsetScore(hasDocRating(0) ? 1 : 2);", API_QUERY,
               graded).value == 2
    assert run("self.editDistance = function () { return 9.5; };\nsetScore(editDistanceFromBest());", API_QUERY,
               graded).value == 9  # Math.floor of it
    with pytest.raises(ScorerError, match=r"TypeError: Assignment to constant variable"):
        run("DEFAULT_NUM_DOCS = 3;\nsetScore(1);", API_QUERY, graded)
    # Quepid's page is not the scorer API
    with pytest.raises(ScorerError, match=r"ReferenceError: angular is not defined \(angular belongs to AngularJS "
                                          r"on Quepid's page, not to Quepid's scorer API"):
        run("angular.forEach(docs, function () {});\nsetScore(1);", API_QUERY, graded)


def test_first_outcome_wins_and_pass_fail_assert() -> None:
    assert run("setScore(10); setScore(20);").value == 10
    assert run("pass();").value == 100
    failed = run("assert(numReturned() > 50); setScore(5);")
    assert failed.failed and failed.value is None
    assert run("assertOrScore(false, 7); setScore(9)").value == 7
    assert run("setScore(null)").value is None and run("setScore(null)").reason == "setScore(null)"
    assert run("setScore(0/0)").reason == "setScore(NaN)"


def test_declared_k_is_recorded_and_nothing_leaks_between_queries() -> None:
    code = """let k = 5;
    if (typeof globalThis.counter === 'undefined') { globalThis.counter = 0; }
    globalThis.counter += 1;
    setScore(globalThis.counter);
    """
    scorer = JavaScriptScorer(code)
    views = [QueryView.of(blog_query(), ONE_TO_TEN), QueryView.of(wiki_query(), ONE_TO_TEN)]
    results = scorer.score_all(views)
    assert [r.value for r in results] == [1, 1]  # each query runs in an isolate of its own
    assert [r.depth for r in results] == [5, 5]


def test_strict_mode_as_in_quepid() -> None:
    # Quepid's bundle is strict code, so its eval of the scorer is strict: an undeclared assignment throws
    with pytest.raises(ScorerError) as exc:
        run("var k = 10;\ncounter = 0;\nsetScore(counter);\n")
    assert str(exc.value).startswith(
        "test.js:2: ReferenceError: counter is not defined (scorers run in strict mode, as in Quepid: declare a "
        "variable with var, let or const before assigning it) (query 'star trek')\n    counter = 0;")
    # this is null at the top level (an AngularJS $timeout callback), and var stays inside the script
    assert run("setScore(this === null ? 1 : 0);").value == 1
    assert run("var docs = [];\nsetScore(numReturned());").value == 10  # the API's docs are untouched


# ---------------------------------------------------------------------------------------- the sandbox
def test_sandbox_has_no_host_objects() -> None:
    with JavaScriptRuntime() as rt:
        kinds = rt.eval("[typeof require, typeof fetch, typeof XMLHttpRequest, typeof process, typeof setTimeout,"
                        " typeof importScripts, typeof Deno, typeof Bun, typeof Atomics.waitAsync].join(',')")
    assert kinds == ",".join(["undefined"] * 9)
    with pytest.raises(ScorerError, match=r"test\.js:2: ReferenceError: require is not defined") as exc:
        run("var x = 1;\nvar fs = require('fs');\nsetScore(1)")
    assert "    var fs = require('fs');" in str(exc.value)
    with pytest.raises(ScorerError, match="ReferenceError: fetch is not defined"):
        run("fetch('http://127.0.0.1/').then(function () { setScore(1); });")


def test_endless_loop_stops_at_the_time_limit() -> None:
    with pytest.raises(ScorerError, match=r"test\.js: the script did not finish within the time limit of 0\.2 s "
                                          r"\(an endless loop\?\).*\(query 'star trek'\)"):
        run("var i = 0;\nwhile (true) { i++; }\nsetScore(i);", time_limit=0.2)


def test_memory_limit() -> None:
    code = "var hoard = [];\nwhile (true) { hoard.push(new Array(100000).fill(1)); }\n"
    with pytest.raises(ScorerError, match=r"went over the memory limit of 32 MiB"):
        run(code, memory_limit=32 * 1024 * 1024, time_limit=20)


def test_typed_array_bomb_is_stopped_by_the_buffer_budget() -> None:
    # ArrayBuffer memory lives outside the V8 heap, so the heap limit alone let 40 x 50 MB through (2 GB)
    bomb = ("var keep = [];\nfor (var i = 0; i < 40; i++) {\n  var a = new Uint8Array(50 * 1024 * 1024);\n"
            "  a.fill(1);\n  keep.push(a);\n}\nsetScore(keep.length);\n")
    with pytest.raises(ScorerError) as exc:
        run(bomb, memory_limit=64 * 1024 * 1024)
    assert exc.value.line == 3 and exc.value.query == "star trek"
    assert str(exc.value).startswith(
        "test.js:3: RangeError: new Uint8Array of 52428800 bytes would take this query's typed arrays and "
        "ArrayBuffers to 104857600 bytes, over the sandbox's budget of 64 MiB (memory_limit= / --js-memory-limit)")


@pytest.mark.parametrize("escape", [
    "var b = new ArrayBuffer(8);\nb.transfer(2 * 1024 * 1024 * 1024);",              # grow by transfer
    "var b = new ArrayBuffer(8, {maxByteLength: 4 * 1024 * 1024 * 1024});",         # reserve for resize()
    "var a = new Uint8Array(40e6); a.constructor = undefined;\nvar k2 = [a.slice(), a.slice()];",  # species
    "var a = new Float64Array(5e6);\nvar k2 = [a.toReversed(), a.toSorted(), a.with(0, 1)];",  # no species
    "var k2 = [];\nfor (var i = 0; i < 40; i++) { k2.push(Float64Array.from({length: 1e6})); }",
    "class Big extends Uint8Array {}\nvar k2 = [new Big(1e8)];",
    "var k2 = new Uint8Array({length: 2e9});",                                       # array-like: length first
])
def test_typed_array_escapes_are_charged(escape: str) -> None:
    with pytest.raises(ScorerError, match=r"RangeError: .* over the sandbox's budget of 64 MiB"):
        run(escape + "\nsetScore(1);", memory_limit=64 * 1024 * 1024, time_limit=30)  # the budget, not the clock


def test_small_typed_arrays_still_work_and_wasm_is_gone() -> None:
    code = """var f = new Float64Array([1, 2, 3]).map(function (x) { return x * 2; });
    var u = Uint8Array.from([1, 2, 3]).subarray(1);
    var b = new ArrayBuffer(16, {maxByteLength: 64}); b.resize(32);
    var d = new DataView(b); d.setInt16(0, 7);
    class Mine extends Int32Array {}
    var m = new Mine(4);
    console.log([f.join(), u.join(), b.byteLength, d.getInt16(0), m.length, m instanceof Int32Array,
                 m.constructor === Mine, f.constructor === Float64Array, Int8Array.of(1, 2).length,
                 f.slice(1).join(), Object.prototype.toString.call(b), typeof WebAssembly,
                 typeof SharedArrayBuffer].join(' '));
    setScore(1);
    """
    assert run(code).logs == ("2,4,6 2,3 32 7 4 true true true 2 4,6 [object ArrayBuffer] undefined undefined",)
    with pytest.raises(ScorerError, match=r"TypeError: the scorer runtime is already running a query"):
        run("__gs_run('{}', 'setScore(1)');\nsetScore(2);")


# ----------------------------------------------------------------------------------------------- errors
def test_syntax_error_quotes_the_line_and_column() -> None:
    code = "var k = 10;\nvar score = avgRating100(k;\nsetScore(score);\n"
    with pytest.raises(ScorerError) as exc:
        run(code)
    assert exc.value.line == 2 and exc.value.source_line == "var score = avgRating100(k;"
    assert str(exc.value) == ("test.js:2: SyntaxError: missing ) after argument list\n"
                              "    var score = avgRating100(k;\n"
                              "                             ^")  # V8 points at the argument


def test_syntax_error_on_the_first_line_has_the_right_column() -> None:
    with pytest.raises(ScorerError) as exc:
        run("var = 3;")
    assert exc.value.line == 1 and exc.value.column == 5


def test_unclosed_brace_points_at_the_end() -> None:
    with pytest.raises(ScorerError, match=r"test\.js:2: SyntaxError: Unexpected end of input \(at the end of "
                                          r"the script"):
        run("eachDoc(function (doc, i) {\n  setScore(1);\n")


def test_runtime_error_inside_a_callback_quotes_the_callbacks_line() -> None:
    code = "var total = 0;\neachDoc(function (doc, i) {\n  total += doc.fields.rating;\n});\nsetScore(total);\n"
    with pytest.raises(ScorerError) as exc:
        run(code)
    assert exc.value.line == 3 and exc.value.query == "star trek"
    assert str(exc.value).startswith("test.js:3: TypeError: Cannot read properties of undefined (reading "
                                     "'rating') (query 'star trek')\n      total += doc.fields.rating;")


def test_missing_api_calls() -> None:
    with pytest.raises(ScorerError, match=r"finished without calling setScore\(\), pass\(\) or fail\(\) "
                                          r"\(query 'star trek'\)"):
        run("var score = avgRating100();\n")
    with pytest.raises(ScorerError, match=r"test\.js:2: ReferenceError: setscore is not defined"):
        run("var score = avgRating100();\nsetscore(score);\n")
    with pytest.raises(ScorerError, match=r"test\.js:1: setScore\(\) needs a number; got string \"57\""):
        run("setScore('57');")


def test_error_after_the_score_keeps_the_score() -> None:
    result = run("setScore(3);\nundefinedThing();\n")
    assert result.value == 3
    assert result.reason == ("the script went on after setting its score and then threw ReferenceError: "
                             "undefinedThing is not defined at line 2")


def test_throwing_a_non_error_names_the_query_the_line_and_the_value() -> None:
    with pytest.raises(ScorerError) as exc:
        run('var a = 1;\nthrow "oops";\nsetScore(a);\n')
    assert exc.value.line == 2 and exc.value.query == "star trek"
    assert str(exc.value) == ("test.js:2: the script threw a string, not an Error: \"oops\" (throw new Error(...) "
                              "carries a message and a stack) (query 'star trek')\n    throw \"oops\";\n    ^")
    with pytest.raises(ScorerError, match=r"test\.js:3: the script threw an object, not an Error: \{\"code\":3\}"):
        run("var a = 1;\neachDoc(function (doc, i) {\n  if (i === 1) { throw {code: 3}; }\n});\nsetScore(a);\n")


def test_time_limit_names_the_query_and_the_last_console_output() -> None:
    with pytest.raises(ScorerError) as exc:
        run("console.log('scoring ' + numReturned());\nvar i = 0;\nwhile (true) { i++; }\nsetScore(i);",
            time_limit=0.2)
    assert exc.value.query == "star trek"
    assert ("V8 stops a script without saying where, so no line is known; its last console output was "
            "'scoring 10'") in str(exc.value)


def test_syntax_check_compiles_without_running_and_rejects_a_top_level_return() -> None:
    # Quepid evaluates the script as a script: a top-level return is a syntax error, found before any query
    with pytest.raises(ScorerError) as exc:
        run("var k = 10;\nif (numReturned() > 0) {\n  return;\n}\nsetScore(1);\n")
    assert exc.value.query is None and exc.value.line == 3 and exc.value.column == 3
    assert str(exc.value).startswith("test.js:3: SyntaxError: Illegal return statement\n      return;\n      ^")
    # code that closes a wrapper function early would run while being 'compiled': it is a syntax error, unrun
    with JavaScriptRuntime(time_limit=0.5) as rt:
        with pytest.raises(ScorerError, match=r"x\.js:2: SyntaxError: Unexpected token '\}'"):
            rt.check_syntax("setScore(1);\n}); globalThis.ran = true; while (true) {} (function () {", "x.js")
        with pytest.raises(ScorerError, match=r"x\.js:2: SyntaxError: Unexpected token '\}'"):
            rt.check_syntax("setScore(1);\n} globalThis.ran = true; {", "x.js")
        assert rt.eval("typeof ran") == "undefined"
        rt.check_syntax("globalThis.ran = true;\nfunction f() { return 1; }\nsetScore(f());", "ok.js")
        assert rt.eval("typeof ran") == "undefined"  # checked, not run
        # the check parses strict code, as the run runs it (as Quepid does), with or without a directive
        with pytest.raises(ScorerError, match=r"s\.js:2: SyntaxError: Strict mode code may not include a with"):
            rt.check_syntax("'use strict';\nwith (docs) { setScore(1); }", "s.js")
        with pytest.raises(ScorerError, match=r"w\.js:3: SyntaxError: Strict mode code may not include a with"):
            rt.check_syntax("'use strict'\n+ 1;\nwith (docs) { setScore(1); }", "w.js")  # not a directive


def test_best_docs_follow_javascripts_key_order_in_both_runtimes() -> None:
    # Quepid's ratings object lists array-index keys first, ascending ("01" and 2**32 - 1 are not indices), then
    # the others as inserted; its bestDocs sort that list stably by rating, so ties keep that order
    ratings = {"b": 1, "10": 1, "2": 1, "a": 2, "01": 1, "4294967295": 1, "4294967294": 1, "0": 1}
    view = QueryView.of(CaseQuery("q", ratings, ("a",)), RatingScale.parse("graded"))
    expected = ["a", "0", "2", "10", "4294967294", "b", "01", "4294967295"]
    assert [doc for doc, _ in view.best] == expected
    result = JavaScriptScorer("console.log(bestDocs.map(function (d) { return d.id; }).join());\nsetScore(1);")
    assert result.score_all([view])[0].logs == (",".join(expected),)
