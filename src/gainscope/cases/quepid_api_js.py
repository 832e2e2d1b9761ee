'''The JavaScript side of gainscope's Quepid scorer runtime, written from Quepid's documented scorer API.

:data:`HARNESS` is evaluated once in each V8 context. It defines ``__gs_run(input_json, code)``, which builds
Quepid's scorer API for one query as local variables and runs the user's script with a *direct* ``eval``
inside that function, as Quepid's browser does, so that

* the script sees ``docs``, ``bestDocs``, ``eachDoc``, ``docRating``, ``setScore``, ``max``, ... as free
  variables, exactly as in Quepid, and runs unchanged;
* its ``var``/``let``/``const`` declarations are fresh for every query (global variables it creates by
  assignment are deleted after each query, so nothing leaks from one query to the next);
* errors carry the line and column within the script (V8 reports eval frames as ``<anonymous>:LINE:COL``).

The API (positions are 0-based; ``count`` defaults to 10, Quepid's ``DEFAULT_NUM_DOCS``):

``docs``                      returned documents: ``{doc, id, rating, hasRating(), getRating()}``
``bestDocs``                  every rated document, rating descending: ``{id, rating, getRating()}``, the rating
                              truncated to an integer (``parseInt``, as Quepid's ratings store; ``docRating`` keeps
                              decimals)
``eachDoc(f, count)``         ``f(doc.doc, i)`` for each returned document within ``count``
``hasDocRating(i)``           a document at ``i`` that is rated
``docRating(i)``              its rating; ``null`` when unrated, ``undefined`` when there is no document at ``i``
``numFound()``                the engine's hit count; ``numReturned()``: the number of returned documents
``topRatings(count)``         the first ``count`` ratings of ``bestDocs`` (not padded)
``eachDocWithRating(f)``      ``f(bestDoc)`` for every rated document
``eachDocWithRatingEqualTo(r, f)``  ``f(bestDoc)`` for the rated documents with rating ``=== r``
``avgRating(count)``          mean of ``parseInt(rating)`` over the rated documents within ``count``, or null
``avgRating100(count)``       ``Math.floor(avgRating * 100 / max)``; null when the mean is null or 0
``editDistanceFromBest(count)``  see :mod:`gainscope.cases.edit_distance` (variant chosen by the caller)
``qOption(key)``              the query's option, ``null`` when absent
``max``                       the top of the rating scale
``setScore(x)``, ``pass()`` (100), ``fail()``, ``assert(cond)``, ``assertOrScore(cond, x)``: the first call wins,
                              as with Quepid's promise
``recordDepthOfRanking(k)``   records ``k``; a top-level ``k`` variable is recorded too, as Quepid does
``console.log(...)``          collected (up to 500 lines per query) and returned with the score

``eachRatedDoc`` and ``refreshRatedDocs`` need Quepid's live search ("show only rated"); here they throw an
error that says so. There is nothing else: no ``require``, ``fetch``, ``XMLHttpRequest``, ``process``, timers
or file access exist in a bare V8 context.
'''

from __future__ import annotations

__all__ = ["HARNESS", "RUN_FUNCTION"]

RUN_FUNCTION = "__gs_run"

HARNESS = r"""
// mini-racer's timers (built on Atomics.waitAsync) would call back after a query is scored, or after the
// context is closed: none here
(function () {
  var names = ["setTimeout", "clearTimeout", "__timer_manager"];
  for (var i = 0; i < names.length; i++) {
    try { delete globalThis[names[i]]; } catch (e) { /* not configurable */ }
    if (typeof globalThis[names[i]] !== "undefined") { globalThis[names[i]] = undefined; }
  }
  try { delete Atomics.waitAsync; } catch (e) { /* not configurable */ }
})();

var __gs_tools = (function () {
  "use strict";
  var stringify = JSON.stringify;
  var MAX_LOGS = 500;
  var MAX_CHARS = 2000;
  var EVAL_FRAME = /eval at __gs_run \([^)]*\), <anonymous>:(\d+):(\d+)/;

  function show(value) {
    if (typeof value === "string") { return value; }
    if (value === undefined) { return "undefined"; }
    if (typeof value === "function") { return "[function]"; }
    try {
      var text = stringify(value);
      return text === undefined ? String(value) : text;
    } catch (e) {
      return String(value);
    }
  }

  function makeConsole(logs) {
    function write() {
      if (logs.length >= MAX_LOGS) {
        if (logs.length === MAX_LOGS) { logs.push("... (further console output dropped)"); }
        return;
      }
      var parts = [];
      for (var i = 0; i < arguments.length; i++) { parts.push(show(arguments[i])); }
      var line = parts.join(" ");
      logs.push(line.length > MAX_CHARS ? line.slice(0, MAX_CHARS) + "..." : line);
    }
    return { log: write, info: write, warn: write, error: write, debug: write };
  }

  function location(stack) {
    var m = EVAL_FRAME.exec(String(stack || ""));
    return m ? { line: Number(m[1]), column: Number(m[2]) } : { line: null, column: null };
  }

  function describe(error) {
    if (error instanceof Error) {
      var where = location(error.stack);
      return { name: String(error.name), message: String(error.message), line: where.line, column: where.column };
    }
    return { name: "thrown value", message: show(error), line: null, column: null };
  }

  function makeDocs(list) {
    return list.map(function (d) {
      var doc = { id: d.id };
      return {
        doc: doc, id: d.id, rating: d.rating,
        hasRating: function () { return d.rating !== null; },
        getRating: function () { return d.rating; }
      };
    });
  }

  function makeBest(list) {
    return list.map(function (d) {
      return { id: d.id, rating: d.rating, getRating: function () { return d.rating; } };
    });
  }

  function depth(count, n) {
    if (count === undefined) { count = 10; }
    return Math.max(0, Math.min(count, n));
  }

  function avgRating(docs, count) {
    var n = depth(count, docs.length);
    var sum = 0;
    var rated = 0;
    for (var i = 0; i < n; i++) {
      if (docs[i].hasRating()) {
        sum += parseInt(docs[i].getRating(), 10);
        rated += 1;
      }
    }
    return rated > 0 ? sum / rated : null;
  }

  function levenshtein(a, b) {
    var prev = [];
    for (var j = 0; j <= b.length; j++) { prev.push(j); }
    for (var i = 1; i <= a.length; i++) {
      var cur = [i];
      for (j = 1; j <= b.length; j++) {
        var cost = a[i - 1] === b[j - 1] ? 0 : 1;
        cur.push(Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost));
      }
      prev = cur;
    }
    return prev[b.length];
  }

  function legacyDistance(a, b) {
    if (a.length === 0 || b.length === 0) { return 0; }
    var d = [];
    for (var i = 0; i < a.length; i++) { d.push([]); }
    function get(i, j) { return (i < 0 || j < 0) ? 0 : d[i][j]; }
    for (i = 0; i < a.length; i++) {
      for (var j = 0; j < b.length; j++) {
        var cost = a[i] === b[j] ? 0 : 1;
        d[i][j] = Math.min(get(i - 1, j) + 1, get(i, j - 1) + 1, get(i - 1, j - 1) + cost);
      }
    }
    return d[a.length - 1][b.length - 1];
  }

  function distanceFromBest(docs, bestDocs, count, variant) {
    if (count === undefined) { count = 10; }
    var legacy = variant === "quepid-legacy";
    var n = depth(count, docs.length);
    var results = [];
    for (var i = 0; i < n; i++) {
      results.push(docs[i].hasRating() ? parseInt(docs[i].getRating(), 10) : null);
    }
    var best = bestDocs.slice(0, Math.max(0, count)).map(function (d) { return d.rating; });
    while (best.length < results.length) { best.push(null); }
    return Math.floor(legacy ? legacyDistance(results, best) : levenshtein(results, best));
  }

  function encodeScore(value) {
    if (value === null) { return { kind: "null", text: "null" }; }
    if (value === undefined) { return { kind: "undefined", text: "undefined" }; }
    if (typeof value === "number") {
      if (value !== value) { return { kind: "nan", text: "NaN" }; }
      if (!isFinite(value)) { return { kind: "infinite", text: String(value) }; }
      return { kind: "number", value: value };
    }
    return { kind: "invalid", text: typeof value === "string" ? stringify(value) : show(value), type: typeof value };
  }

  function settle(state, failed, value) {
    if (state.done) { return; }
    state.done = true;
    state.failed = failed;
    state.score = encodeScore(value);
    state.at = location(new Error().stack);
  }

  function cleanGlobals(before) {
    var keep = {};
    for (var i = 0; i < before.length; i++) { keep[before[i]] = true; }
    var now = Object.getOwnPropertyNames(globalThis);
    for (i = 0; i < now.length; i++) {
      if (!keep[now[i]]) {
        try { delete globalThis[now[i]]; } catch (e) { /* not configurable: leave it */ }
      }
    }
  }

  function unavailable(name, instead) {
    return function () {
      throw new Error(name + "() needs Quepid's live search ('show only rated'); gainscope scores a stored case. "
                      + instead);
    };
  }

  return Object.freeze({
    stringify: stringify, show: show, makeConsole: makeConsole, describe: describe, makeDocs: makeDocs,
    makeBest: makeBest, avgRating: avgRating, distanceFromBest: distanceFromBest, settle: settle,
    cleanGlobals: cleanGlobals, unavailable: unavailable
  });
})();

function __gs_run(__gs_json, __gs_code) {
  var __gs_q = JSON.parse(__gs_json);
  var __gs_state = { done: false, failed: false, score: null, at: null, depth: null, logs: [], error: null };
  var __gs_before = Object.getOwnPropertyNames(globalThis);
  var console = __gs_tools.makeConsole(__gs_state.logs);
  var docs = __gs_tools.makeDocs(__gs_q.docs);
  var bestDocs = __gs_tools.makeBest(__gs_q.best);
  var max = __gs_q.max;
  var hasDocRating = function (posn) { return posn >= 0 && posn < docs.length && docs[posn].hasRating(); };
  var docRating = function (posn) {
    return (posn >= 0 && posn < docs.length) ? docs[posn].getRating() : undefined;
  };
  var numFound = function () { return __gs_q.numFound; };
  var numReturned = function () { return docs.length; };
  var avgRating = function (count) { return __gs_tools.avgRating(docs, count); };
  var avgRating100 = function (count) {
    var avg = __gs_tools.avgRating(docs, count);
    return avg ? Math.floor(avg * 100 / __gs_q.max) : null;
  };
  var editDistanceFromBest = function (count) {
    return __gs_tools.distanceFromBest(docs, bestDocs, count, __gs_q.editDistance);
  };
  var eachDoc = function (f, count) {
    var n = Math.min(count === undefined ? 10 : count, docs.length);
    for (var i = 0; i < n; i++) { f(docs[i].doc, i); }
  };
  var eachDocWithRating = function (f) {
    for (var i = 0; i < bestDocs.length; i++) { f(bestDocs[i]); }
  };
  var eachDocWithRatingEqualTo = function (score, f) {
    for (var i = 0; i < bestDocs.length; i++) { if (bestDocs[i].rating === score) { f(bestDocs[i]); } }
  };
  var topRatings = function (count) {
    return bestDocs.slice(0, count).map(function (d) { return d.rating; });
  };
  var qOption = function (key) {
    var o = __gs_q.options;
    return (o !== null && Object.prototype.hasOwnProperty.call(o, key)) ? o[key] : null;
  };
  var recordDepthOfRanking = function (k) { __gs_state.depth = typeof k === "number" ? k : null; };
  var eachRatedDoc = __gs_tools.unavailable("eachRatedDoc", "Use eachDocWithRating(f) for every rated document.");
  var refreshRatedDocs = __gs_tools.unavailable("refreshRatedDocs", "Use bestDocs for every rated document.");
  var setScore = function (score) { __gs_tools.settle(__gs_state, false, score); };
  var pass = function () { __gs_tools.settle(__gs_state, false, 100); };
  var fail = function () { __gs_tools.settle(__gs_state, true, 0); };
  var assert = function (cond) { if (!cond) { fail(); } };
  var assertOrScore = function (cond, score) { if (!cond) { setScore(score); } };
  try {
    eval(__gs_code + "\n;if (typeof k !== 'undefined') { recordDepthOfRanking(k); }");
  } catch (__gs_error) {
    __gs_state.error = __gs_tools.describe(__gs_error);
  } finally {
    __gs_tools.cleanGlobals(__gs_before);
  }
  return __gs_tools.stringify(__gs_state);
}
"""
