"""The sklearn and ranx profiles against the real libraries (PyPI, in the test extras), at full precision.

scikit-learn: ``ndcg_score``/``dcg_score`` on dense rows (every candidate has a label), with tied scores
(averaged by default, McSherry & Najork 2008) and rows without a positive label (scored 0 and averaged in).

ranx: ``ndcg``, ``ndcg_burges``, ``precision``, ``recall``, ``mrr``, ``map``, ``r-precision``, ``hit_rate``
at cutoffs and relevance levels (``-l``), with negative labels and judged documents never retrieved. ranx sorts
runs with an unstable sort and documents no tie rule, so its runs here have no tied scores. ranx compiles its
metrics with numba on first use (tens of seconds without numba's cache): those tests are marked slow.
"""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from gainscope import Judgments, Run, evaluate
from gainscope.errors import GainscopeWarning

pytestmark = pytest.mark.parity


# ---------------------------------------------------------------------------------------------- scikit-learn
def _dense_rows(seed: int, rows: int = 40, labels: int = 8) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, 4, size=(rows, labels)).astype(float)
    y_true[::7] = 0.0  # some rows without a positive label
    y_score = rng.integers(0, 4, size=(rows, labels)).astype(float)  # few values: many ties
    return y_true, y_score


def _as_gainscope(y_true: np.ndarray, y_score: np.ndarray) -> tuple[Judgments, Run]:
    qrels = {f"q{i:02d}": {f"d{j}": float(g) for j, g in enumerate(row)} for i, row in enumerate(y_true)}
    run = {f"q{i:02d}": {f"d{j}": float(s) for j, s in enumerate(row)} for i, row in enumerate(y_score)}
    return Judgments.from_dict(qrels), Run.from_dict(run)


@pytest.mark.parametrize("k", [None, 1, 3, 5])
@pytest.mark.parametrize("seed", [0, 1])
def test_sklearn_profile_equals_ndcg_score_and_dcg_score(k, seed):
    metrics = pytest.importorskip("sklearn.metrics")
    y_true, y_score = _dense_rows(seed)
    judgments, run = _as_gainscope(y_true, y_score)
    at = "" if k is None else f"@{k}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GainscopeWarning)  # the rows without a positive label: nDCG undefined
        res = evaluate(judgments, run, [f"nDCG{at}", f"DCG{at}"], profile="sklearn")
    assert res.metric_names == [f"nDCG(ideal=retrieved){at}", f"DCG{at}"]
    per_row_ndcg = [metrics.ndcg_score(y_true[i:i + 1], y_score[i:i + 1], k=k) for i in range(len(y_true))]
    per_row_dcg = [metrics.dcg_score(y_true[i:i + 1], y_score[i:i + 1], k=k) for i in range(len(y_true))]
    np.testing.assert_allclose(res.values[:, 0], per_row_ndcg, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res.values[:, 1], per_row_dcg, rtol=1e-12, atol=1e-12)
    assert res[f"nDCG{at}"] == pytest.approx(metrics.ndcg_score(y_true, y_score, k=k), rel=1e-12)


def test_sklearn_profile_averages_ties_where_trec_eval_breaks_them():
    metrics = pytest.importorskip("sklearn.metrics")
    # two documents tie at the top, one relevant: scikit-learn's tie-averaged nDCG@1 is 1/2 (the relevant one
    # is first in half of the orders); trec_eval's order (doc id descending: "b" first) gives 0
    y_true, y_score = np.array([[1.0, 0.0]]), np.array([[1.0, 1.0]])
    judgments, run = Judgments.from_dict({"q": {"a": 1, "b": 0}}), Run.from_dict({"q": {"a": 1.0, "b": 1.0}})
    assert evaluate(judgments, run, ["nDCG@1"], profile="sklearn")["nDCG@1"] == \
        metrics.ndcg_score(y_true, y_score, k=1) == 0.5
    with pytest.warns(GainscopeWarning, match="equal scores"):
        assert evaluate(judgments, run, ["nDCG@1"])["nDCG@1"] == 0.0


# ---------------------------------------------------------------------------------------------- ranx
def _ranx_data(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Graded and negative labels, unjudged retrieved and unretrieved judged documents, queries without a
    relevant document; scores distinct within each query (no ties); the same queries on both sides."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(25):
        qid = f"q{q:02d}"
        docs = rng.sample(range(40), rng.randint(1, 12))
        qrels[qid] = {f"d{d}": rng.choice([-1, 0, 0, 1, 1, 2, 3]) for d in docs}
        ranked = rng.sample(range(50), rng.randint(1, 20))
        scores = rng.sample(range(1000), len(ranked))
        run[qid] = {f"d{d}": float(s) / 7 for d, s in zip(ranked, scores, strict=True)}
    return qrels, run


#: (ranx name, gainscope name under the ranx profile), {k} a cutoff
PAIRS = [("ndcg@{k}", "nDCG@{k}"), ("ndcg_burges@{k}", "nDCG(gain=exponential)@{k}"),
         ("precision@{k}", "P@{k}"), ("recall@{k}", "R@{k}"), ("mrr@{k}", "RR@{k}"), ("map@{k}", "AP@{k}"),
         ("hit_rate@{k}", "Success@{k}"), ("r-precision", "Rprec"), ("map", "AP"), ("mrr", "RR"),
         ("ndcg", "nDCG")]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:unsafe cast")  # numba's NumbaTypeSafetyWarning inside ranx
@pytest.mark.parametrize("level", [1, 2])
def test_ranx_profile_equals_ranx(level):
    ranx = pytest.importorskip("ranx")
    qrels, run = _ranx_data(level)
    suffix = "" if level == 1 else f"-l{level}"
    for k in (1, 5, 10):
        pairs = [(r.format(k=k) + suffix, g.format(k=k)) for r, g in PAIRS]
        theirs = ranx.Run(run)
        ranx.evaluate(ranx.Qrels(qrels), theirs, [r for r, _ in pairs], return_mean=False)  # fills .scores
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GainscopeWarning)  # undefined values (no relevant document): 0
            ours = evaluate(Judgments.from_dict(qrels), Run.from_dict(run), [g for _, g in pairs], profile="ranx",
                            relevance_level=level)
        for ranx_name, name in pairs:
            mine = ours.per_query(name)
            assert mine.keys() == theirs.scores[ranx_name].keys()
            for q, value in mine.items():
                assert value == pytest.approx(float(theirs.scores[ranx_name][q]), rel=1e-12, abs=1e-12), \
                    f"{ours.select([name]).metric_names[0]} (ranx {ranx_name}), query {q}"
