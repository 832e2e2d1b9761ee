"""The quepid profile against Quepid's built-in scorers written in JavaScript (``gainscope case scorer-js``, run
in the V8 sandbox with gainscope's implementation of Quepid's scorer API: an implementation independent of
gainscope's metrics), query by query, for every Quepid built-in: a hand-made case is exported as TREC qrels and
run (``case export``), read back, evaluated with ``profile="quepid"`` and compared with the script of each query.

The case has decimal ratings (kept by the ranked documents, truncated in the judged pool as Quepid's
``bestDocs``), unrated returned documents, rated documents that were not returned, a zero-result query (rated,
nothing returned: "missing" from the run, an empty list under the profile) and an unrated query (results, no
rating: absent from the qrels).

How values compare: a number from the script equals gainscope's value (after ``undefined="zero"``); a script's
null, NaN or infinity is undefined in gainscope. The unrated query is not evaluated by ``evaluate`` (a query
without judgments is not in the judged pool); ``case score`` gives Quepid's number there. The end-to-end
equality of the two commands is tests/cases/test_evaluate_parity.py.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest

from gainscope import evaluate
from gainscope.cases.builtin_js import builtin_source
from gainscope.cases.model import Case, CaseQuery
from gainscope.cases.scale import RatingScale
from gainscope.cases.trec import trec_ids, write_trec_qrels, write_trec_run
from gainscope.cases.view import QueryView
from gainscope.errors import GainscopeWarning
from gainscope.io import read_judgments, read_run

pytestmark = pytest.mark.parity
pytest.importorskip("py_mini_racer")

from gainscope.cases.javascript import JavaScriptRuntime  # noqa: E402

GRADED = Case((
    # rated and returned, decimals and an unrated document (u2) in the ranking, a rated document not returned
    CaseQuery("star wars", {"a": 3, "b": 2.5, "c": 0, "d": 1.5, "x": 2}, ("a", "u2", "b", "c", "d", "e")),
    # decimals below 1 that are > 0: relevant in the ranking, 0 in bestDocs (AP's R) -> Quepid's AP divides
    # 2 hits by R = 1
    CaseQuery("tiny", {"p": 0.5, "r": 1.5, "s": 0}, ("p", "s", "r")),
    # only rating 0: every ideal is 0 (nDCG undefined in gainscope, 0 in Quepid), AP's R = 0 (undefined)
    CaseQuery("zeros", {"z1": 0, "z2": 0}, ("z1", "u", "z2")),
    # a long list: cutoffs cut through it; more rated documents than k
    CaseQuery("long", {f"l{i}": [3, 2, 2.5, 1, 0, 3, 1.5, 2, 0, 1, 3, 2][i] for i in range(12)},
              tuple(f"l{i}" for i in (11, 0, 3, 5, 20, 7, 1, 9, 2, 8, 4, 6))),
    # zero results: rated documents, nothing returned
    CaseQuery("nothing found", {"n1": 2, "n2": 1}, ()),
    # no rating at all: not in the qrels
    CaseQuery("unrated", {}, ("w1", "w2")),
), RatingScale.parse("graded"))

LEGACY = Case((
    CaseQuery("blog", {"d1": 10, "d2": 8, "d3": 9, "d5": 5, "d6": 1, "d7": 4},
              ("d1", "d2", "d3", "u4", "d5", "d6", "d7", "u8", "u9", "u10")),
    CaseQuery("decimals", {"a": 7.5, "b": 9.9, "c": 1.2, "x": 10}, ("b", "a", "u", "c")),
    CaseQuery("missed", {"m1": 9, "m2": 8, "m3": 1}, ("m3", "v1", "v2")),
    CaseQuery("all ones", {"o1": 1, "o2": 1, "o3": 10, "o4": 10}, ("o1", "o2")),
    CaseQuery("nothing found", {"n1": 6}, ()),
    CaseQuery("unrated", {}, ("w1",)),
), RatingScale.parse("1-10"))

# (the name under the quepid profile, the JavaScript runtime's edit distance)
GRADED_NAMES = [("CG", None), ("DCG", None), ("nDCG", None), ("NDCG_CUT", None), ("P", None), ("AP", None),
                ("RR", None), ("ERR", None)]
LEGACY_NAMES = [("avgRating100", None), ("editDistanceFromBest", "quepid-legacy"),
                ("editDistanceFromBest(distance=levenshtein)", "levenshtein"), ("default", "quepid-legacy"),
                ("v1(distance=levenshtein)", "levenshtein"), ("blogNDCG", None)]
SCRIPT = {"v1(distance=levenshtein)": "default", "editDistanceFromBest(distance=levenshtein)": "editDistanceFromBest"}


@pytest.fixture(scope="module")
def runtime():
    with JavaScriptRuntime() as rt:
        yield rt


def _script(runtime: JavaScriptRuntime, name: str, distance: str | None, k: int, view: QueryView) -> float | None:
    """What Quepid's script of ``name@k`` gives on ``view``: a number, or None for null, NaN and infinities."""
    source = builtin_source(f"{SCRIPT.get(name, name)}@{k}")
    result = runtime.run(source, view, name=f"{name}@{k}.js", edit_distance=distance or "quepid-legacy")
    assert not result.failed, result.reason
    return result.value


def _evaluate_export(case: Case, names: list[str], tmp_path: Path):
    """``case export`` then ``evaluate --profile quepid --max-grade <top of the scale>``."""
    qrels, run = tmp_path / "case.qrels", tmp_path / "case.run"
    qrels.write_text(write_trec_qrels(case), encoding="utf-8")
    run.write_text(write_trec_run(case), encoding="utf-8")
    assert case.scale is not None
    with warnings.catch_warnings():
        # the zero-result query is judged without a ranking, the unrated one ranked without judgments
        warnings.simplefilter("ignore", GainscopeWarning)
        return evaluate(read_judgments(qrels, float_grades=True), read_run(run), names, profile="quepid",
                        max_grade=case.scale.max)


@pytest.mark.parametrize(("case", "pairs"), [(GRADED, GRADED_NAMES), (LEGACY, LEGACY_NAMES)],
                         ids=["graded", "legacy"])
@pytest.mark.parametrize("k", [10, 3, 1])
def test_quepid_profile_equals_quepids_scripts_query_by_query(case, pairs, k, runtime, tmp_path):
    names = [f"{name}@{k}" for name, _ in pairs]
    res = _evaluate_export(case, names, tmp_path)
    assert res.profile is not None and res.profile.name == "quepid"
    ids = trec_ids(case)
    assert case.scale is not None
    compared = 0
    for q in case.queries:
        qid = ids[q.query]
        if not q.ratings:  # the unrated query: not in the judged pool, so not evaluated
            assert qid not in res.query_ids
            continue
        view = QueryView.of(q, case.scale)
        i = res.query_ids.index(qid)
        for (name, distance), column in zip(pairs, range(len(names)), strict=True):
            expected = _script(runtime, name, distance, k, view)
            got = float(res.values[i, column])
            where = f"{name}@{k} on {q.query!r}: Quepid's script {expected}, gainscope {got}"
            if expected is None:
                assert res.undefined[i, column], where
            else:
                assert got == pytest.approx(expected, rel=1e-12, abs=1e-12), where
            compared += 1
    assert compared == (len(case.queries) - 1) * len(pairs)


def test_the_parity_case_exercises_what_it_claims(tmp_path):
    # decimals reach the ranking but not the ideal: 'star wars' nDCG@10 under the profile uses b = 2.5 in the
    # DCG and 2 in the uncut ideal [3, 2, 2, 1, 0]
    res = _evaluate_export(GRADED, ["nDCG@10", "AP@10", "avgRating100@10"], tmp_path)
    sw = res.query_ids.index("star_wars")
    dcg = 7 + 0 + (2 ** 2.5 - 1) / 2 + 0 + (2 ** 1.5 - 1) / math.log2(6)
    idcg = 7 + 3 / math.log2(3) + 3 / 2 + 1 / math.log2(5)
    assert res.values[sw, 0] == pytest.approx(dcg / idcg)
    # 'tiny': hits 0.5 (rank 1) and 1.5 (rank 3) are > 0; bestDocs [1, 0, 0]: R = 1 -> AP = (1 + 2/3) / 1
    assert res.values[res.query_ids.index("tiny"), 1] == pytest.approx(5 / 3)
    # zero results: avgRating100 is Quepid's null there (undefined), not the 0 of a missing query
    assert res.undefined[res.query_ids.index("nothing_found"), 2]
