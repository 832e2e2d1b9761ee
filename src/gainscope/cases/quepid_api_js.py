'''The JavaScript side of gainscope's Quepid scorer runtime, written from Quepid's documented scorer API.

:data:`HARNESS` is evaluated once in each V8 context. It defines ``__gs_run(input_json, code)``, which builds
Quepid's scorer API for one query as local variables (in ``__gs_score``) and runs the user's script with a
*direct* ``eval`` inside that function, as Quepid's browser does, so that

* the script sees ``docs``, ``bestDocs``, ``eachDoc``, ``docRating``, ``setScore``, ``max``, ... as free
  variables, exactly as in Quepid, and runs unchanged;
* errors carry the line and column within the script (V8 reports eval frames as ``<anonymous>:LINE:COL``).

What carries over from one query to the next. One context scores every query of a case (a fresh V8 context
per query would cost about 5 ms each). The script's ``var``/``let``/``const`` declarations and functions are
fresh for every query, and global variables it creates (``total = 0`` without ``var``, ``globalThis.n``)
are deleted after each query. What it does to objects that exist before it runs is **not** undone: a
property added to or changed on ``Array.prototype``, ``Math``, ``JSON`` or any other built-in, or a
reassigned built-in global, is still there for the queries scored after it. Quepid's browser is no
different (every scorer run shares the page and its built-ins; it does not even delete globals), but a
script that changes built-ins can give a query a score that depends on the queries scored before it. The
harness's own functions are read-only globals and keep their own references to the built-ins they use.

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
``avgRating100(count)``       ``Math.floor(avgRating * (100 / max))``; null when the mean is null or 0
``editDistanceFromBest(count)``  see :mod:`gainscope.cases.edit_distance` (variant chosen by the caller)
``qOption(key)``              the query's option, ``null`` when absent
``max``                       the top of the rating scale
``setScore(x)``, ``pass()`` (100), ``fail()``, ``assert(cond)``, ``assertOrScore(cond, x)``: the first call wins,
                              as with Quepid's promise
``recordDepthOfRanking(k)``   records ``k``; a top-level ``k`` variable is recorded too, as Quepid does
``console.log(...)``          collected (up to 500 lines per query) and returned with the score

``eachRatedDoc`` and ``refreshRatedDocs`` need Quepid's live search ("show only rated"); here they throw an
error that says so. There is nothing else: no ``require``, ``fetch``, ``XMLHttpRequest``, ``process``, timers
or file access exist in a bare V8 context, and the harness removes ``WebAssembly`` and ``SharedArrayBuffer``.

Typed arrays and ``ArrayBuffer`` work, within a per-query budget of bytes (``bufferBudget`` in the query's
JSON): their memory lies outside the V8 heap that mini-racer's limit bounds, so the constructors, and the
methods that allocate without them (``slice``, ``map``, ``filter``, ``toReversed``, ``toSorted``, ``with``,
``transfer``, ``transferToFixedLength``), are wrapped to charge the bytes before allocating and throw a
``RangeError`` past the budget (a resizable ``ArrayBuffer`` is charged its ``maxByteLength``). The original
constructors are reachable only from the harness's closure (``constructor`` properties point to the wrappers).
'''

from __future__ import annotations

__all__ = ["CHECKED_MARKER", "CHECK_FUNCTION", "HARNESS", "LAST_FUNCTION", "RUN_FUNCTION", "STRICT_FUNCTION"]

RUN_FUNCTION = "__gs_run"
LAST_FUNCTION = "__gs_last"
STRICT_FUNCTION = "__gs_strict"
CHECK_FUNCTION = "__gs_check"
CHECKED_MARKER = "__gs_compiled__"

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

// Memory outside the V8 heap: mini-racer's memory limit bounds the heap only, and ArrayBuffer backing stores
// (every typed array's) live outside it. WebAssembly and SharedArrayBuffer are removed; ArrayBuffer and the
// typed-array constructors are replaced by wrappers that charge the bytes they allocate to a per-query budget
// before allocating, and so are the methods that allocate without going through a constructor (slice, map,
// filter, toReversed, toSorted, with, transfer). The originals stay reachable only from this closure.
var __gs_guard = (function () {
  "use strict";
  var G = globalThis;
  var construct = Reflect.construct, apply = Reflect.apply, defineProperty = Object.defineProperty;
  var getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor, getPrototypeOf = Object.getPrototypeOf;
  var setPrototypeOf = Object.setPrototypeOf, arrayFrom = Array.from, OriginalArray = Array;
  var toNumber = Number, floor = Math.floor, ceil = Math.ceil, max = Math.max, MiB = 1048576;
  var RangeErr = RangeError, TypeErr = TypeError, iteratorSymbol = Symbol.iterator;
  var used = 0, budget = 0, running = null;

  ["WebAssembly", "SharedArrayBuffer"].forEach(function (name) {
    try { delete G[name]; } catch (e) { /* not configurable */ }
    if (typeof G[name] !== "undefined") { G[name] = undefined; }
  });

  function integer(n) {  // ToIntegerOrInfinity of a number
    return n !== n ? 0 : (n < 0 ? ceil(n) : floor(n));
  }

  function charge(bytes, what) {
    if (!(bytes > 0)) { return; }  // 0, negative or NaN: nothing to allocate (the original throws if invalid)
    if (used + bytes > budget) {
      throw new RangeErr(what + " of " + bytes + " bytes would take this query's typed arrays and ArrayBuffers "
                         + "to " + (used + bytes) + " bytes, over the sandbox's budget of " + floor(budget / MiB)
                         + " MiB (memory_limit= / --js-memory-limit)");
    }
    used += bytes;
  }

  function getter(obj, name) { return getOwnPropertyDescriptor(obj, name).get; }

  function replaceGlobal(name, wrapper) {
    var d = getOwnPropertyDescriptor(G, name);
    defineProperty(G, name, { value: wrapper, writable: d.writable, enumerable: d.enumerable,
                              configurable: d.configurable });
  }

  function wrapMethod(proto, name, bytesOf) {
    var original = proto[name];
    if (typeof original !== "function") { return; }
    var wrapped = {
      [name]: function () {
        var args = arguments;
        charge(bytesOf(this, args), name + "()");
        return apply(original, this, args);
      }
    }[name];
    defineProperty(proto, name, { value: wrapped, writable: true, enumerable: false, configurable: true });
  }

  function species(wrapper) {
    defineProperty(wrapper, Symbol.species, { get: function () { return this; }, configurable: true });
  }

  // ArrayBuffer
  var OriginalArrayBuffer = ArrayBuffer;
  var abProto = OriginalArrayBuffer.prototype;
  var abByteLength = getter(abProto, "byteLength");
  var abMaxByteLength = getter(abProto, "maxByteLength");
  var abResizable = getter(abProto, "resizable");
  function byteLength(buffer) { return apply(abByteLength, buffer, []); }
  function isArrayBuffer(x) {
    try { apply(abByteLength, x, []); return true; } catch (e) { return false; }
  }
  var ArrayBufferGuarded = function ArrayBuffer(length, options) {
    if (new.target === undefined) { throw new TypeErr("Constructor ArrayBuffer requires 'new'"); }
    var n = toNumber(length);
    var args = [n];
    var bytes = integer(n);
    if (options !== null && typeof options === "object") {
      var m = options.maxByteLength;
      if (m !== undefined) {
        m = toNumber(m);
        args.push({ maxByteLength: m });
        bytes = max(bytes, integer(m));  // resize() commits up to maxByteLength without a constructor
      }
    }
    charge(bytes, "new ArrayBuffer");
    return construct(OriginalArrayBuffer, args, new.target === ArrayBufferGuarded ? OriginalArrayBuffer
                                                                                    : new.target);
  };
  defineProperty(ArrayBufferGuarded, "prototype", { value: abProto });
  defineProperty(abProto, "constructor", { value: ArrayBufferGuarded, writable: true, configurable: true });
  defineProperty(ArrayBufferGuarded, "isView", { value: OriginalArrayBuffer.isView, writable: true,
                                                 configurable: true });
  species(ArrayBufferGuarded);
  replaceGlobal("ArrayBuffer", ArrayBufferGuarded);
  wrapMethod(abProto, "slice", function (self) { return byteLength(self); });
  function transferBytes(self, args) {
    var n = args.length > 0 && args[0] !== undefined ? integer(toNumber(args[0])) : byteLength(self);
    return apply(abResizable, self, []) ? max(n, apply(abMaxByteLength, self, [])) : n;
  }
  wrapMethod(abProto, "transfer", transferBytes);
  wrapMethod(abProto, "transferToFixedLength", function (self, args) {
    return args.length > 0 && args[0] !== undefined ? integer(toNumber(args[0])) : byteLength(self);
  });

  // typed arrays
  var TypedArray = getPrototypeOf(Int8Array);
  var taProto = TypedArray.prototype;
  var taByteLength = getter(taProto, "byteLength");
  var taLength = getter(taProto, "length");
  function typedLength(x) {
    try { return apply(taLength, x, []); } catch (e) { return -1; }
  }
  ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Float16Array", "Int32Array",
   "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"].forEach(function (name) {
    var Original = G[name];
    if (typeof Original !== "function") { return; }
    var size = Original.BYTES_PER_ELEMENT;
    var Guarded = {
      [name]: function (source, offset, length) {
        if (new.target === undefined) { throw new TypeErr("Constructor " + name + " requires 'new'"); }
        var args;
        if (source === null || (typeof source !== "object" && typeof source !== "function")) {
          var n = typeof source === "bigint" || typeof source === "symbol" ? source : toNumber(source);
          if (typeof n === "number") { charge(integer(n) * size, "new " + name); }
          args = [n];
        } else if (isArrayBuffer(source)) {
          args = arguments.length > 2 ? [source, offset, length] : arguments.length > 1 ? [source, offset]
                                                                                        : [source];
        } else {
          // the source is read once, into a plain array when it is not a typed array, so the length charged
          // is the length used: an iterable is collected on the heap (under its limit), an array-like's length
          // is charged before its elements are copied
          var count = typedLength(source), list = source;
          if (count < 0 && source[iteratorSymbol] != null) {
            list = apply(arrayFrom, OriginalArray, [source]);
            count = list.length;
          } else if (count < 0) {
            var like = source;
            count = integer(toNumber(like.length));
            charge(count * size, "new " + name);
            list = new OriginalArray();
            for (var i = 0; i < count; i++) { list.push(like[i]); }
            count = 0;  // charged already
          }
          charge(count * size, "new " + name);
          args = [list];
        }
        return construct(Original, args, new.target === Guarded ? Original : new.target);
      }
    }[name];
    setPrototypeOf(Guarded, TypedArray);  // from, of and Symbol.species, which construct through `this`
    defineProperty(Guarded, "prototype", { value: Original.prototype });
    defineProperty(Guarded, "BYTES_PER_ELEMENT", { value: size });
    defineProperty(Original.prototype, "constructor", { value: Guarded, writable: true, configurable: true });
    replaceGlobal(name, Guarded);
  });
  function ownBytes(self) { return apply(taByteLength, self, []); }
  ["slice", "map", "filter", "toReversed", "toSorted", "with"].forEach(function (name) {
    wrapMethod(taProto, name, ownBytes);  // at most a copy of the array (map and slice may also construct)
  });

  return Object.freeze({
    // the budget is set by __gs_run only: a nested call is refused, and leave() needs enter()'s token
    enter: function (bytes) {
      if (running !== null) { throw new TypeErr("the scorer runtime is already running a query"); }
      running = {};
      used = 0;
      budget = bytes;
      return running;
    },
    leave: function (token) {
      if (token === running) { running = null; }
    }
  });
})();

var __gs_tools = (function () {
  "use strict";
  var stringify = JSON.stringify;
  var MAX_LOGS = 500;
  var MAX_CHARS = 2000;
  var EVAL_FRAME = /eval at __gs_score \([^)]*\), <anonymous>:(\d+):(\d+)/;

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
    var type = error === null ? "null" : Array.isArray(error) ? "an array" : typeof error === "object"
      ? "an object" : "a " + typeof error;
    return { name: null, thrown: type, message: typeof error === "string" ? stringify(error) : show(error),
             line: null, column: null };
  }

  var current = null;  // the state of the query being scored, for a report after a time limit stopped it

  function track(state) { current = state; }

  function last() { return stringify(current); }

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
    cleanGlobals: cleanGlobals, unavailable: unavailable, track: track, last: last,
    suffix: "\n;if (typeof k !== 'undefined') { recordDepthOfRanking(k); }"
  });
})();

var __gs_run = (function () {
  "use strict";
  var parse = JSON.parse, guard = __gs_guard, score = __gs_score;
  return function __gs_run(json, code) {
    var q = parse(json);
    var token = guard.enter(q.bufferBudget);
    try {
      return score(q, code);
    } finally {
      guard.leave(token);
    }
  };
})();

function __gs_score(__gs_q, __gs_code) {
  var __gs_state = { done: false, failed: false, score: null, at: null, depth: null, logs: [], error: null };
  var __gs_before = Object.getOwnPropertyNames(globalThis);
  __gs_tools.track(__gs_state);
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
    return avg ? Math.floor(avg * (100 / __gs_q.max)) : null;  // Quepid's order: avg * multiplier
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
  if (__gs_q.uncaught) {
    // run again to locate a thrown value that is not an Error (it has no stack): uncaught, it leaves with
    // V8's message, which names the line of the throw
    try {
      eval(__gs_code + __gs_tools.suffix);
    } finally {
      __gs_tools.cleanGlobals(__gs_before);
    }
    return __gs_tools.stringify(__gs_state);
  }
  try {
    eval(__gs_code + __gs_tools.suffix);
  } catch (__gs_error) {
    __gs_state.error = __gs_tools.describe(__gs_error);
  } finally {
    __gs_tools.cleanGlobals(__gs_before);
  }
  return __gs_tools.stringify(__gs_state);
}

// What the last query had logged and set, after a time limit stopped it.
function __gs_last() { return __gs_tools.last(); }

// The syntax check, which never runs the script. __gs_strict compiles it as the body of a function that is
// never called (new Function parses the body on its own, so it cannot close the function early) and tells
// whether it opens with a "use strict" directive (a strict function refuses .caller). __gs_check then has the
// script parsed as eval parses it when scoring, a script, where a top-level return is an error, behind a
// first statement that throws before anything of it runs: a parse error leaves with V8's message (the line is
// one more than in the script); a script that parses leaves with the marker.
function __gs_strict(code) {
  var compiled = new Function(code + __gs_tools.suffix);
  try {
    return compiled.caller === undefined;  // null for a function that is not running
  } catch (e) {
    return true;
  }
}

function __gs_check(__gs_code, __gs_strict_mode) {
  eval((__gs_strict_mode ? "'use strict'; " : "") + "throw '__gs_compiled__';\n" + __gs_code + __gs_tools.suffix);
}

["__gs_guard", "__gs_tools", "__gs_run", "__gs_score", "__gs_last", "__gs_strict",
 "__gs_check"].forEach(function (name) {
  Object.defineProperty(globalThis, name, { writable: false, configurable: false });
});
"""
