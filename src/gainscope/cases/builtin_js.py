"""The built-in scorers written as Quepid JavaScript scorers, with ``k`` filled in.

Each script uses only Quepid's scorer API and computes the same number as the built-in scorer, gainscope's
metric under the quepid profile (:mod:`gainscope.cases.scorers`; a property test runs both on random rating
lists). They are text for Quepid, not gainscope's arithmetic: they can be pasted into Quepid as custom scorers
(``gainscope case scorer-js nDCG@5`` prints one), and they run in gainscope's sandbox through
:func:`builtin_javascript`. (So the JavaScript below holds Quepid's formulas; gainscope's own live in
:mod:`gainscope.metrics`.)
"""

from __future__ import annotations

from typing import Any

from gainscope.cases.javascript import JavaScriptScorer
from gainscope.cases.scorers import BuiltinScorer, builtin_scorer
from gainscope.errors import InvalidParameterError

__all__ = ["SOURCES", "builtin_javascript", "builtin_source"]

_DCG_EXP = """function dcg(ratings) {
  var total = 0;
  for (var i = 0; i < ratings.length; i++) {
    total += (Math.pow(2, ratings[i]) - 1) / Math.log2(i + 2);
  }
  return total;
}
function topK() {
  var ratings = [];
  eachDoc(function (doc, i) { ratings.push(hasDocRating(i) ? docRating(i) : 0); }, k);
  return ratings;
}
"""

SOURCES: dict[str, str] = {
    "CG": """var k = {k}; // @Rank
var score = 0;
eachDoc(function (doc, i) {
  if (hasDocRating(i)) { score += docRating(i); }
}, k);
setScore(score);
""",
    "DCG": """var k = {k}; // @Rank
""" + _DCG_EXP + """setScore(dcg(topK()));
""",
    "nDCG": """var k = {k}; // @Rank
""" + _DCG_EXP + """var ideal = [];
eachDocWithRating(function (doc) { ideal.push(doc.rating); });
ideal.sort(function (a, b) { return b - a; });
var idcg = dcg(ideal); // every rated document, not cut at k
setScore(idcg ? dcg(topK()) / idcg : 0);
""",
    "NDCG_CUT": """var k = {k}; // @Rank
""" + _DCG_EXP + """var idcg = dcg(topRatings(k)); // the best k ratings (fewer when fewer are rated: padding adds 0)
setScore(idcg ? dcg(topK()) / idcg : 0);
""",
    "P": """var k = {k}; // @Rank
var relevant = 0, examined = 0;
eachDoc(function (doc, i) {
  if (hasDocRating(i) && docRating(i) > 0) { relevant += 1; }
  examined += 1;
}, k);
setScore(examined ? relevant / examined : 0);
""",
    "AP": """var k = {k}; // @Rank
var hits = 0, total = 0, totalRel = 0;
eachDoc(function (doc, i) {
  if (hasDocRating(i) && docRating(i) > 0) {
    hits += 1;
    total += hits / (i + 1);
  }
}, k);
eachDocWithRating(function (doc) { if (doc.rating > 0) { totalRel += 1; } });
setScore(total / totalRel); // NaN (undefined) when nothing is relevant
""",
    "RR": """var k = {k}; // @Rank
var rank = 0;
eachDoc(function (doc, i) {
  if (rank === 0 && hasDocRating(i) && docRating(i) > 0) { rank = i + 1; }
}, k);
setScore(rank > 0 ? 1 / rank : 0);
""",
    "ERR": """var k = {k}; // @Rank
var total = 0, trust = 1, top = Math.pow(2, max);
eachDoc(function (doc, i) {
  var r = hasDocRating(i) ? docRating(i) : 0;
  var useful = (Math.pow(2, r) - 1) / top;
  total += trust * useful / (i + 1);
  trust *= 1 - useful;
}, k);
setScore(total);
""",
    "avgRating100": """var k = {k}; // @Rank
setScore(avgRating100(k));
""",
    "editDistanceFromBest": """var k = {k}; // @Rank
setScore(editDistanceFromBest(k));
""",
    "default": """var k = {k}; // @Rank
// Gets the average score over a scale of 100
var score = avgRating100(k);
if (score !== null) {
  // Adds a distance penalty to the score
  score -= editDistanceFromBest(k);
}
setScore(score);
""",
    "blogNDCG": """var k = {k}; // @Rank
function dcg(ratings) {
  var total = 0;
  for (var i = 0; i < ratings.length; i++) { total += ratings[i] / Math.log2(i + 2); }
  return total;
}
var actual = [];
for (var i = 0; i < k; i++) { actual.push(hasDocRating(i) ? docRating(i) : 0); }
var ideal = topRatings(k);
while (ideal.length < k) { ideal.push(0); }
setScore(dcg(actual) / dcg(ideal) * 100);
""",
}


def builtin_source(scorer: BuiltinScorer | str) -> str:
    """The JavaScript of one of Quepid's built-in scorers at its ``k`` (InvalidParameterError for any other
    metric: Quepid has no script for it)."""
    s = builtin_scorer(scorer) if isinstance(scorer, str) else scorer
    if s.definition is None:
        raise InvalidParameterError(f"{s.name} is not one of Quepid's built-in scorers, which have a JavaScript "
                                    f"form: {', '.join(f'{name}@k' for name in SOURCES)}")
    return SOURCES[s.definition.name].replace("{k}", str(s.k))


def builtin_javascript(scorer: BuiltinScorer | str, **options: Any) -> JavaScriptScorer:
    """A built-in scorer as a :class:`JavaScriptScorer` (same numbers, computed in V8)."""
    s = builtin_scorer(scorer) if isinstance(scorer, str) else scorer
    return JavaScriptScorer(builtin_source(s), name=f"{s.name} (JavaScript)", scale=s.default_scale,
                            edit_distance=s.edit_distance or "quepid-legacy", **options)
