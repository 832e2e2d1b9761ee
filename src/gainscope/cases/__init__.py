"""Quepid-style cases and scorers: score queries the way Quepid does, outside the browser.

* :mod:`~gainscope.cases.scorers`: Quepid's built-in scorers (CG, DCG, nDCG, NDCG_CUT, P, AP, RR, ERR,
  avgRating100, editDistanceFromBest, the default scorer, the 2018 blog's NDCG) as gainscope's metrics under
  the ``quepid`` profile, every one ``@k``; :mod:`~gainscope.cases.evaluation`: a case through the one
  pipeline (its results in order, its ratings as the judged pool);
* :mod:`~gainscope.cases.scoring`: per-query scores and the case score, a view with Quepid's rules over the
  metric's Results (or a custom scorer's values), with every convention reported;
* :mod:`~gainscope.cases.custom`: Python scorers, and :func:`resolve_scorer` for names, ``.js`` files and
  ``module:function``;
* :mod:`~gainscope.cases.javascript`: Quepid JavaScript scorers run unchanged in a V8 sandbox (a worker process
  per scorer, :mod:`~gainscope.cases.js_process`; an isolate per query with Quepid's scorer API,
  :mod:`~gainscope.cases.quepid_api_js`);
* :mod:`~gainscope.cases.overlap`: input that matches nothing (ratings and results, two files joined by
  query) is an error, never a table of zeros;
* :mod:`~gainscope.cases.files`, :mod:`~gainscope.cases.quepid_csv`, :mod:`~gainscope.cases.rre`,
  :mod:`~gainscope.cases.rank_eval`, :mod:`~gainscope.cases.trec`: case files, importers and exporters;
* :mod:`~gainscope.cases.compare`: two cases (two snapshots) query by query.

::

    from gainscope.cases import read_case, resolve_scorer, score_case

    case = read_case("movies.json")
    result = score_case(case, resolve_scorer("nDCG@10"))
    result.score, result.per_query(), result.conventions
"""

from __future__ import annotations

from gainscope.cases.compare import CaseComparison, compare_cases
from gainscope.cases.custom import PythonScorer, python_scorer, resolve_scorer
from gainscope.cases.errors import ScorerError
from gainscope.cases.files import case_from_dict, read_case, write_case
from gainscope.cases.javascript import JavaScriptScorer
from gainscope.cases.model import Case, CaseQuery
from gainscope.cases.quepid_csv import case_from_quepid, write_quepid_ratings
from gainscope.cases.rank_eval import read_rank_eval
from gainscope.cases.rre import read_rre
from gainscope.cases.scale import RatingScale
from gainscope.cases.scorers import BUILTINS, BuiltinScorer, Scorer, ScorerResult, builtin_scorer
from gainscope.cases.scoring import CaseScore, QueryScore, score_case
from gainscope.cases.trec import write_trec_qrels, write_trec_run
from gainscope.cases.view import QueryView
from gainscope.metrics.edit_distance import edit_distance, levenshtein, quepid_legacy_distance

__all__ = [
    "BUILTINS",
    "BuiltinScorer",
    "Case",
    "CaseComparison",
    "CaseQuery",
    "CaseScore",
    "JavaScriptScorer",
    "PythonScorer",
    "QueryScore",
    "QueryView",
    "RatingScale",
    "Scorer",
    "ScorerError",
    "ScorerResult",
    "builtin_scorer",
    "case_from_dict",
    "case_from_quepid",
    "compare_cases",
    "edit_distance",
    "levenshtein",
    "python_scorer",
    "quepid_legacy_distance",
    "read_case",
    "read_rank_eval",
    "read_rre",
    "resolve_scorer",
    "score_case",
    "write_case",
    "write_quepid_ratings",
    "write_trec_qrels",
    "write_trec_run",
]
