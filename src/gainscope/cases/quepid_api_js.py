'''The JavaScript side of gainscope's Quepid scorer runtime: Quepid's scorer API as Quepid's browser gives it to
a scorer, so that a scorer that runs in Quepid runs here unchanged and gives the same number.

Written from Quepid's ``ScorerFactory`` (o19s/quepid, ``app/assets/javascripts/factories/ScorerFactory.js``)
and its ratings store (``services/ratingsStoreSvc.js``): Quepid evaluates the scorer's code with a direct
``eval`` inside ``runCode``, so the code sees every variable of ``runCode`` and of the scorer object around
it. :data:`HARNESS` gives it the same names with the same behaviour.

How the code runs (as in Quepid's browser):

* in **strict mode** (Quepid's bundle starts with ``'use strict'``): assigning an undeclared variable is a
  ``ReferenceError``, ``with`` is a syntax error, ``var`` declarations stay inside the script;
* with ``this`` null at the top level (Quepid runs it from an AngularJS ``$timeout`` callback);
* followed by ``if (typeof k !== 'undefined') { recordDepthOfRanking(k); }``, as Quepid appends;
* ``setScore``, ``pass`` and ``fail`` settle the score once, the first call wins (Quepid's ``$q`` deferred); a
  call from a promise callback counts, since the query's promise jobs run before its score is read.

The API (positions are 0-based; ``count`` defaults to ``DEFAULT_NUM_DOCS``, 10):

===============================  ==============================================================================
``docs``                         the returned documents: ``{doc, id, hasRating(), getRating()}``; ``doc`` is the
                                 document itself (``{id}``: a case holds no fields)
``bestDocs``                     every rated document, returned or not, ``{id, rating, getRating()}`` with
                                 ``rating = parseInt(rating)``, rating descending; ties in the order of the
                                 ratings object (JavaScript's: integer-like ids first, ascending)
``total``, ``numFound()``        the engine's hit count (``numFound()`` reads ``total``: AP@10's ``total = 0``
                                 sets it to 0, as in Quepid)
``numReturned()``                ``docs.length``
``docExistsAt(i)``               ``!(i >= docs.length)``, so ``docExistsAt(-1)`` is true, as in Quepid
``docAt(i)``                     ``docs[i].doc``; ``{}`` when ``i >= docs.length``; a TypeError for a position
                                 that holds no document (negative, fractional: Quepid reads a property of
                                 ``undefined`` there)
``hasDocRating(i)``              ``docExistsAt(i) && docs[i].hasRating()`` (a TypeError likewise)
``docRating(i)``                 ``docs[i].getRating()``: the rating as stored (decimals kept), ``null`` when
                                 unrated; ``undefined`` when ``i >= docs.length``
``eachDoc(f, count)``            ``f(docAt(i), i)`` for ``i < count`` where ``docExistsAt(i)``
``avgRating(count)``             ``baseAvg(docs, count)``: the mean of ``parseInt(rating)`` over the rated
                                 documents among the first ``count``; ``null`` when none is rated
``avgRating100(count)``          ``avg100(docs, count)``: ``Math.floor(avg * (100 / max))``; ``null`` when the
                                 average is ``null`` or 0
``editDistanceFromBest(count)``  ``distanceFromBest(docs, bestDocs, count)``: the edit distance between the
                                 ``parseInt`` ratings of the first ``count`` documents (``null`` when unrated)
                                 and the first ``count`` best ratings padded with ``null`` to as many; the
                                 distance is Quepid's shipped ``editDistance`` unless the scorer was given
                                 ``edit_distance="levenshtein"`` (see :mod:`gainscope.metrics.edit_distance`)
``topRatings(count)``            ``getBestRatings(count, bestDocs)``: ``bestDocs.slice(0, count)``'s ratings
``eachDocWithRating(f)``         ``f(bestDoc)`` for every rated document
``eachDocWithRatingEqualTo(r, f)``  ``f(bestDoc)`` for those with ``rating === r``
``ratedDocs``: ``query.ratedDocs``, ``ratedDocExistsAt(i)``, ``ratedDocAt(i)``, ``eachRatedDoc(f, count)``,
``refreshRatedDocs(k)``          Quepid's "show only rated" documents: the results of a second search, which a
                                 stored case does not have. They hold none, as in Quepid until "show only
                                 rated" is used (``ratedDocExistsAt(i)`` is ``!(i >= 0)``, ``ratedDocAt(i)``
                                 ``{}``; ``refreshRatedDocs`` returns a resolved promise), and the query's
                                 result says that the script looked at them
``qOption(key)``                 ``options[key]`` when ``options.hasOwnProperty(key)``, else ``null``
``options``, ``query``           the query's options; the query: ``{queryText, options, numFound, docs,
                                 ratedDocs, ratedDocsFound, refreshRatedDocs(k)}``
``scale``, ``max``, ``mode``     the scorer's scale (a list), its last value, ``undefined``
``recordDepthOfRanking(k)``      records ``k`` (``query.depthOfRating``, ``self.depthOfRating``)
``setScore(x)``, ``pass()`` (100), ``fail()``, ``assert(cond)``, ``assertOrScore(cond, x)``
``self``                         the scorer: ``{name, code, scale, depthOfRating}`` and the functions below
``DEFAULT_NUM_DOCS``             10 (a constant)
``baseAvg(docs, count)``, ``baseAvgRounded(docs, count)`` (``Math.floor`` of it, so 0 for ``null``),
``avg100(docs, count)`` (reads ``self.scale``; calls ``self.baseAvg``), ``editDistance(a, b)`` (strings too),
``distanceFromBest(docs, bestDocs, count)`` (calls ``self.editDistance``), ``getBestRatings(count, bestDocs)``,
``maxScore()`` (``self.scale[-1]``: ``undefined``, as in Quepid), ``scaleToArray(text)`` (``"0, 1,2"`` ->
``[0, 1, 2]``)
``console.log(...)``             collected (up to 500 lines per query) and returned with the score
===============================  ==============================================================================

The API's functions call one another by name, as Quepid's do (``hasDocRating`` calls ``docExistsAt``,
``avg100`` calls ``self.baseAvg``), so a script that replaces one changes the others as it would in Quepid.
They use their own copies of the built-ins (``Math.floor``, ``parseInt``, ``Array.prototype.slice``...), as
does the harness that reports the score: a script that changes ``Array.prototype`` or ``Math`` changes its own
code only. Quepid's page around the scorer (``angular``, ``$q``, ``$timeout``, ``window``) is not there, nor
is what only Quepid's screens use (``getColors``, ``checkCode``, ``teamNames``...).

Isolation: every query runs in a V8 isolate of its own (see :mod:`gainscope.cases.js_worker`), created with this
harness, so nothing a script does (globals, changes to built-ins, promises left pending) reaches another query
or the harness. There is no ``require``, ``fetch``, ``XMLHttpRequest``, ``process``, timer or file access in a
bare V8 context; the harness also removes mini-racer's ``setTimeout``, ``WebAssembly`` and
``SharedArrayBuffer``.

Typed arrays and ``ArrayBuffer`` work, within a per-query budget of bytes (``bufferBudget`` in the query's
JSON): their memory lies outside the V8 heap that mini-racer's limit bounds, so the constructors, and the
methods that allocate without them (``slice``, ``map``, ``filter``, ``toReversed``, ``toSorted``, ``with``,
``transfer``, ``transferToFixedLength``), are wrapped to charge the bytes before allocating and throw a
``RangeError`` naming the line past the budget (a resizable ``ArrayBuffer`` is charged its ``maxByteLength``).
The worker's memory cap would stop such a script too, but only by killing its process, with no line to show.
'''

from __future__ import annotations

__all__ = ["CHECKED_MARKER", "CHECK_FUNCTION", "FINISH_FUNCTION", "HARNESS", "LAST_FUNCTION", "RUN_FUNCTION"]

RUN_FUNCTION = "__gs_run"
FINISH_FUNCTION = "__gs_finish"
LAST_FUNCTION = "__gs_last"
CHECK_FUNCTION = "__gs_check"
CHECKED_MARKER = "__gs_compiled__"

HARNESS = r"""
// mini-racer's timers (built on Atomics.waitAsync) would call back after a query is scored: none here
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

// Helpers of the harness and of the API, on copies of the built-ins taken before any script runs.
var __gs_tools = (function () {
  "use strict";
  var apply = Reflect.apply, defineProperty = Object.defineProperty, keys = Object.keys;
  var stringify = JSON.stringify, toStr = String, floor = Math.floor, parseNumber = parseInt;
  var slice = Array.prototype.slice, sort = Array.prototype.sort, join = Array.prototype.join;
  var split = String.prototype.split, replace = String.prototype.replace, exec = RegExp.prototype.exec;
  var hasOwn = Object.prototype.hasOwnProperty, isPrototypeOf = Object.prototype.isPrototypeOf;
  var isArray = Array.isArray, ErrorCtor = Error, ErrorProto = Error.prototype, TypeErr = TypeError;
  var PromiseCtor = Promise, resolve = Promise.resolve;
  var MAX_LOGS = 500;
  var MAX_CHARS = 2000;
  var EVAL_FRAME = /eval at __gs_body \([^)]*\), <anonymous>:(\d+):(\d+)/;
  var TRIM = /^\s+|\s+$/g, COMMA = /\s*,\s*/;

  function append(list, value) {  // never through a setter a script put on Array.prototype
    defineProperty(list, list.length, { value: value, writable: true, enumerable: true, configurable: true });
  }

  function show(value) {
    if (typeof value === "string") { return value; }
    if (value === undefined) { return "undefined"; }
    if (typeof value === "function") { return "[function]"; }
    try {
      var text = stringify(value);
      return text === undefined ? toStr(value) : text;
    } catch (e) {
      try { return toStr(value); } catch (e2) { return "[unprintable]"; }
    }
  }

  function makeConsole(logs) {
    function write() {
      if (logs.length >= MAX_LOGS) {
        if (logs.length === MAX_LOGS) { append(logs, "... (further console output dropped)"); }
        return;
      }
      var parts = [];
      for (var i = 0; i < arguments.length; i++) { append(parts, show(arguments[i])); }
      var line = apply(join, parts, [" "]);
      append(logs, line.length > MAX_CHARS ? apply(slice, line, [0, MAX_CHARS]) + "..." : line);
    }
    return { log: write, info: write, warn: write, error: write, debug: write };
  }

  function location(stack) {
    var m = null;
    try { m = apply(exec, EVAL_FRAME, [toStr(stack || "")]); } catch (e) { m = null; }
    return m ? { line: +m[1], column: +m[2] } : { line: null, column: null };
  }

  function describe(error) {
    var isError = false;
    try { isError = error !== null && typeof error === "object" && apply(isPrototypeOf, ErrorProto, [error]); }
    catch (e) { isError = false; }
    if (isError) {
      var name = "Error", message = "", stack = "";
      try { name = toStr(error.name); message = toStr(error.message); stack = error.stack; } catch (e) { /* */ }
      var where = location(stack);
      return { name: name, message: message, line: where.line, column: where.column };
    }
    var type = error === null ? "null" : isArray(error) ? "an array" : typeof error === "object"
      ? "an object" : "a " + typeof error;
    return { name: null, thrown: type, message: typeof error === "string" ? stringify(error) : show(error),
             line: null, column: null };
  }

  function encodeScore(value) {
    if (value === null) { return { kind: "null", text: "null" }; }
    if (value === undefined) { return { kind: "undefined", text: "undefined" }; }
    if (typeof value === "number") {
      if (value !== value) { return { kind: "nan", text: "NaN" }; }
      if (value === Infinity || value === -Infinity) { return { kind: "infinite", text: toStr(value) }; }
      return { kind: "number", value: value };
    }
    return { kind: "invalid", text: typeof value === "string" ? stringify(value) : show(value), type: typeof value };
  }

  var current = null;  // the state of the query being scored

  function newState() {
    current = { done: false, failed: false, score: null, at: null, depth: null, logs: [], error: null,
                ratedDocs: false };
    return current;
  }

  function settle(state, failed, value) {
    if (state.done) { return; }
    state.done = true;
    state.failed = failed;
    state.score = encodeScore(value);
    var stack = "";
    try { stack = new ErrorCtor().stack; } catch (e) { stack = ""; }
    state.at = location(stack);
  }

  // the state as JSON, written out here: JSON.stringify would call a toJSON a script put on Object.prototype or
  // Array.prototype (it only gets strings and numbers here, which it prints without asking them anything)
  function encode(value) {
    if (value === null || value === undefined) { return "null"; }
    if (typeof value === "boolean") { return value ? "true" : "false"; }
    if (typeof value === "number") { return value === value && value !== Infinity && value !== -Infinity
                                            ? stringify(value) : "null"; }
    if (typeof value === "string") { return stringify(value); }
    var out = "";
    if (isArray(value)) {
      for (var i = 0; i < value.length; i++) { out += (i ? "," : "") + encode(value[i]); }
      return "[" + out + "]";
    }
    var names = keys(value);
    for (var j = 0; j < names.length; j++) {
      out += (j ? "," : "") + stringify(names[j]) + ":" + encode(value[names[j]]);
    }
    return "{" + out + "}";
  }

  function report() { return encode(current); }

  // the ratings store: bestDocs as Quepid builds them (ratings object in JavaScript's key order, parseInt,
  // a stable sort by rating descending) and the returned documents with the store's hasRating/getRating
  function makeBest(ratings) {
    var ids = keys(ratings), list = [];
    for (var i = 0; i < ids.length; i++) {
      append(list, { id: ids[i], rating: parseNumber(ratings[ids[i]], 10) });
    }
    apply(sort, list, [function (a, b) { return b.rating - a.rating; }]);
    for (i = 0; i < list.length; i++) {
      (function (entry) { entry.getRating = function () { return entry.rating; }; })(list[i]);
    }
    return list;
  }

  function makeDocs(results, ratings) {
    var list = [];
    for (var i = 0; i < results.length; i++) {
      append(list, {
        doc: { id: results[i] }, id: results[i],
        hasRating: function () { return apply(hasOwn, ratings, [this.id]); },
        getRating: function () {
          if (!apply(hasOwn, ratings, [this.id])) { return null; }
          var r = ratings[this.id];
          return typeof r === "string" ? parseNumber(r, 10) : r;
        }
      });
    }
    return list;
  }

  function at(list, posn, what) {  // the entry at a position, or the TypeError Quepid's code would meet
    var entry = list[posn];
    if (entry === undefined || entry === null) {
      throw new TypeErr(what + "(" + show(posn) + "): no document at position " + show(posn) + " (positions run "
                        + "from 0 to numReturned() - 1)");
    }
    return entry;
  }

  function legacyEditDistance(a, b) {
    // Quepid's editDistance: Levenshtein's recurrence with every cell outside the table read as 0 (rows are
    // filled left to right, so each cell is appended)
    var d = [];
    for (var i = 0; i < a.length; i++) { append(d, []); }
    function cell(i, j) { return (i < 0 || j < 0 || d.length === 0) ? 0 : d[i][j]; }
    for (i = 0; i < a.length; i++) {
      for (var j = 0; j < b.length; j++) {
        var cost = a[i] === b[j] ? 0 : 1;
        var best = cell(i - 1, j) + 1, other = cell(i, j - 1) + 1, diagonal = cell(i - 1, j - 1) + cost;
        if (other < best) { best = other; }
        if (diagonal < best) { best = diagonal; }
        append(d[i], best);
      }
    }
    return cell(a.length - 1, b.length - 1);
  }

  function levenshtein(a, b) {
    var prev = [];
    for (var j = 0; j <= b.length; j++) { append(prev, j); }
    for (var i = 1; i <= a.length; i++) {
      var row = [i];
      for (j = 1; j <= b.length; j++) {
        var best = prev[j] + 1, other = row[j - 1] + 1, diagonal = prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
        if (other < best) { best = other; }
        if (diagonal < best) { best = diagonal; }
        append(row, best);
      }
      prev = row;
    }
    return prev[b.length];
  }

  function firstRatings(bestDocs, count) {
    var kept = apply(slice, bestDocs, [0, count]), out = [];
    for (var i = 0; i < kept.length; i++) { append(out, kept[i].rating); }
    return out;
  }

  function scaleToArray(text) {
    var parts = apply(split, apply(replace, text, [TRIM, ""]), [COMMA]), out = [];
    for (var i = 0; i < parts.length; i++) { append(out, parseNumber(parts[i], 10)); }
    return out;
  }

  function resolved() { return apply(resolve, PromiseCtor, [undefined]); }

  return Object.freeze({
    append: append, makeConsole: makeConsole, describe: describe, newState: newState, settle: settle,
    report: report, makeBest: makeBest, makeDocs: makeDocs, at: at, floor: floor, parseInt: parseNumber,
    editDistance: function (variant) { return variant === "levenshtein" ? levenshtein : legacyEditDistance; },
    firstRatings: firstRatings, scaleToArray: scaleToArray, resolved: resolved, hasOwn: hasOwn, apply: apply,
    defineProperty: defineProperty,
    suffix: "\n\nif (typeof k !== 'undefined') {\n  recordDepthOfRanking(k);\n}"
  });
})();

// One query: Quepid's runCode. Its variables and those of the scorer object around it are the script's API.
function __gs_score(__gs_q, __gs_code) {
  "use strict";
  var __gs_t = __gs_tools;
  var __gs_state = __gs_t.newState();
  var __gs_ratings = __gs_q.ratings;

  // the scorer object (Quepid's ScorerFactory)
  const DEFAULT_NUM_DOCS = 10;
  function baseAvg(docs, count) {
    var sum = 0.0, rated = 0;
    if (count === undefined) { count = DEFAULT_NUM_DOCS; }
    if (count > docs.length) { count = docs.length; }
    for (var i = 0; i < count; i++) {
      if (docs[i].hasRating()) {
        sum += __gs_t.parseInt(docs[i].getRating(), 10);
        rated += 1;
      }
    }
    return rated > 0 ? sum / rated : null;
  }
  function baseAvgRounded(docs, count) { return __gs_t.floor(self.baseAvg(docs, count)); }
  function avg100(docs, count) {
    var top = self.scale[self.scale.length - 1];
    var multiplier = 100 / top;
    var avg = self.baseAvg(docs, count);
    return avg ? __gs_t.floor(avg * multiplier) : null;  // Quepid's order: avg * multiplier; 0 counts as none
  }
  var editDistance = __gs_t.editDistance(__gs_q.editDistance);
  function getBestRatings(count, bestDocs) { return __gs_t.firstRatings(bestDocs, count); }
  function distanceFromBest(docs, bestDocs, count) {
    if (count === undefined) { count = DEFAULT_NUM_DOCS; }
    var bestCount = count;
    if (count > docs.length) { count = docs.length; }
    if (bestCount > bestDocs.length) { bestCount = bestDocs.length; }
    var got = [], want = [];
    for (var i = 0; i < count; i++) {
      __gs_t.append(got, docs[i].hasRating() ? __gs_t.parseInt(docs[i].getRating(), 10) : null);
    }
    for (i = 0; i < bestCount; i++) { __gs_t.append(want, bestDocs[i].rating); }
    for (i = 0; i < count - bestCount; i++) { __gs_t.append(want, null); }
    return __gs_t.floor(self.editDistance(got, want));
  }
  function maxScore() { return self.scale[-1]; }  // undefined, as in Quepid: its upper clamp never applies
  function scaleToArray(text) { return __gs_t.scaleToArray(text); }
  var self = {
    name: __gs_q.name, code: __gs_code, scale: __gs_q.scale, depthOfRating: undefined,
    avg100: avg100, baseAvg: baseAvg, baseAvgRounded: baseAvgRounded, distanceFromBest: distanceFromBest,
    editDistance: editDistance, getBestRatings: getBestRatings, maxScore: maxScore, scaleToArray: scaleToArray
  };

  // runCode's arguments and variables
  var docs = __gs_t.makeDocs(__gs_q.results, __gs_ratings);
  var bestDocs = __gs_t.makeBest(__gs_ratings);
  var total = __gs_q.numFound;
  var options = __gs_q.options;
  var mode;
  var scale = self.scale;
  var max = scale[scale.length - 1];
  var __gs_rated = [];
  var query = { queryText: __gs_q.query, options: options, numFound: total, docs: docs, ratedDocsFound: 0,
                refreshRatedDocs: function (pageSize) { __gs_state.ratedDocs = true; return __gs_t.resolved(); } };
  __gs_t.defineProperty(query, "ratedDocs", {
    get: function () { __gs_state.ratedDocs = true; return __gs_rated; },
    set: function (value) { __gs_rated = value; }, enumerable: true, configurable: true
  });
  var console = __gs_t.makeConsole(__gs_state.logs);

  var docAt = function (posn) {
    return posn >= docs.length ? {} : __gs_t.at(docs, posn, "docAt").doc;
  };
  var docExistsAt = function (posn) { return !(posn >= docs.length); };
  var ratedDocAt = function (posn) {
    return posn >= query.ratedDocs.length ? {} : query.ratedDocs[posn];
  };
  var ratedDocExistsAt = function (posn) { return !(posn >= query.ratedDocs.length); };
  var hasDocRating = function (posn) {
    return docExistsAt(posn) && __gs_t.at(docs, posn, "hasDocRating").hasRating();
  };
  var docRating = function (posn) {
    return docExistsAt(posn) ? __gs_t.at(docs, posn, "docRating").getRating() : undefined;
  };
  var numFound = function () { return total; };
  var numReturned = function () { return docs.length; };
  var avgRating = function (count) { return baseAvg(docs, count); };
  var avgRating100 = function (count) { return avg100(docs, count); };
  var editDistanceFromBest = function (count) { return distanceFromBest(docs, bestDocs, count); };
  var eachDoc = function (f, count) {
    if (count === undefined) { count = DEFAULT_NUM_DOCS; }
    for (var i = 0; i < count; i++) {
      if (docExistsAt(i)) { f(docAt(i), i); }
    }
  };
  var eachRatedDoc = function (f, count) {
    if (count === undefined) { count = DEFAULT_NUM_DOCS; }
    for (var i = 0; i < count; i++) {
      if (ratedDocExistsAt(i)) { f(ratedDocAt(i), i); }
    }
  };
  var refreshRatedDocs = function (k) { return query.refreshRatedDocs(k); };
  var eachDocWithRatingEqualTo = function (score, f) {
    for (var i = 0; i < bestDocs.length; i++) {
      if (bestDocs[i].rating === score) { f(bestDocs[i]); }
    }
  };
  var eachDocWithRating = function (f) {
    for (var i = 0; i < bestDocs.length; i++) { f(bestDocs[i]); }
  };
  var topRatings = function (count) { return getBestRatings(count, bestDocs); };
  var qOption = function (key) {
    return (options !== undefined && options !== null && options.hasOwnProperty(key)) ? options[key] : null;
  };
  var recordDepthOfRanking = function (k) {
    query.depthOfRating = k;
    self.depthOfRating = k;
    __gs_state.depth = typeof k === "number" ? k : null;
  };
  function pass() { __gs_t.settle(__gs_state, false, 100); }
  function fail() { __gs_t.settle(__gs_state, true, 0); }
  function setScore(score) { __gs_t.settle(__gs_state, false, score); }
  function assert(cond) { if (!cond) { fail(); } }
  function assertOrScore(cond, score) { if (!cond) { setScore(score); } }

  var __gs_body = function __gs_body() { eval(__gs_code + __gs_t.suffix); };
  if (__gs_q.uncaught) {
    // run again to locate a thrown value that is not an Error (it has no stack): uncaught, it leaves with
    // V8's message, which names the line of the throw
    __gs_t.apply(__gs_body, null, []);
    return;
  }
  try {
    __gs_t.apply(__gs_body, null, []);
  } catch (__gs_error) {
    __gs_state.error = __gs_t.describe(__gs_error);
  }
}

var __gs_run = (function () {
  "use strict";
  var parse = JSON.parse, guard = __gs_guard, score = __gs_score, tools = __gs_tools, apply = Reflect.apply;
  var token = null;
  return {
    // start one query: the script runs, and returns; the promise jobs it queued run when this call is over.
    // Returns the state so far (what is known should the promise jobs never end)
    run: function __gs_run(json, code) {
      var q = parse(json);
      token = guard.enter(q.bufferBudget);
      apply(score, null, [q, code]);
      return tools.report();
    },
    // the query's outcome, once its promise jobs have run
    finish: function __gs_finish() {
      guard.leave(token);
      return tools.report();
    },
    // what the query had logged and set when the time limit stopped it
    last: function __gs_last() { return tools.report(); }
  };
})();
var __gs_finish = __gs_run.finish, __gs_last = __gs_run.last;
__gs_run = __gs_run.run;

// The syntax check, which never runs the script: the script is parsed as Quepid's eval parses it (strict,
// a script: a top-level return is an error) behind a first statement that throws before anything of it runs.
// A parse error leaves with V8's message (the line is one more than in the script); a script that parses
// leaves with the marker.
function __gs_check(__gs_code) {
  "use strict";
  eval("throw '__gs_compiled__';\n" + __gs_code + __gs_tools.suffix);
}

["__gs_guard", "__gs_tools", "__gs_run", "__gs_finish", "__gs_last", "__gs_score",
 "__gs_check"].forEach(function (name) {
  Object.defineProperty(globalThis, name, { writable: false, configurable: false });
});
"""
