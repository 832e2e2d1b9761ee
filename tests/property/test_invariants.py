"""Invariants every metric must keep, checked on random data (``gainscope.testing.strategies``):

* values lie within the metric's declared ``bounds``;
* documents appended after rank k that are non-relevant or unjudged leave every @k value unchanged;
* the order of queries in the input does not matter;
* under ``ties="average"`` the input order of tied documents does not matter;
* under ``ties="trec_eval"`` the order is fully determined by (score desc, doc id desc bytewise): the value
  equals the one of the run given explicitly in that order, and survives an order-preserving renaming;
* the ideal ranking (judged documents by decreasing gain) scores 1.0 on ``normalized`` metrics.

Concrete regression cases for violations found (and fixed) are at the end of the file.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from gainscope.core.judged_run import build_judged_run
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.errors import GainscopeWarning, InputWarning, InvalidParameterError, PolicyError
from gainscope.evaluation import compute, evaluate
from gainscope.metrics import all_metric_classes
from gainscope.metrics.gains import gain_value
from gainscope.testing import strategies as gst

CLASSES = all_metric_classes()
LINEAR = [c for c in CLASSES if c.linear_in_gains]
CUTOFF_CLASSES = [c for c in CLASSES if c.at_param() == "cutoff"]
NORMALIZED = [c for c in CLASSES if c.normalized]

PROPERTY = settings(max_examples=60, derandomize=True, deadline=None, database=None,
                    phases=[Phase.explicit, Phase.reuse, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _values(judgments: Judgments, run: Run, metric, policies: Policies) -> dict[str, float]:
    """Per-query values after the policies (missing queries, undefined values), quietly."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GainscopeWarning)
        jr = build_judged_run(judgments, run, policies)
    res = compute(jr, [metric], warn=False)
    return dict(zip(res.query_ids, res.values[:, 0].tolist(), strict=True))


def _raw(judgments: Judgments, run: Run, metric, policies: Policies) -> dict[str, float]:
    """Per-query kernel values (NaN = undefined, missing queries not yet zeroed)."""
    from gainscope.metrics.context import Context

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GainscopeWarning)
        jr = build_judged_run(judgments, run, policies)
    return dict(zip(jr.query_ids, np.asarray(metric.compute(Context(jr)), dtype=float).tolist(), strict=True))


def _assert_same_values(a: dict[str, float], b: dict[str, float], what: str) -> None:
    assert a.keys() == b.keys(), what
    for q in a:
        if math.isnan(a[q]) or math.isnan(b[q]):
            assert math.isnan(a[q]) and math.isnan(b[q]), f"{what}: query {q!r}: {a[q]} vs {b[q]}"
        else:
            assert a[q] == pytest.approx(b[q], rel=1e-12, abs=1e-12), f"{what}: query {q!r}"


def _rows(run: Run) -> list[tuple[str, str, float | None, int | None]]:
    return list(run.frame.select("query_id", "doc_id", "score", "rank").iter_rows())


def _run_from_rows(rows, like: Run) -> Run:
    q, d, s, r = (list(x) for x in zip(*rows, strict=True)) if rows else ([], [], [], [])
    return Run.from_columns(q, d, scores=s if like.has_scores else None, ranks=r if like.has_ranks else None)


def _supports(metric, policies: Policies) -> bool:
    return policies.ties != "average" or type(metric).linear_in_gains


def _maybe_value(judgments, run, metric, policies):
    """Values, or None when the metric rejects the data (ERR with a grade above its max_grade)."""
    try:
        return _values(judgments, run, metric, policies)
    except InvalidParameterError:
        return None


# ---------------------------------------------------------------------------------------------- bounds
@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.name)
@settings(PROPERTY, max_examples=20)
@given(data=st.data())
def test_values_within_declared_bounds(cls, data):
    metric = data.draw(gst.metrics_of(cls))
    judgments, run = data.draw(gst.judgments_and_runs())
    # judged_grades="truncated" (Quepid's stored ratings) can make the ideal smaller than the ranking it
    # normalises, so bounds hold for judged grades as given (see test_policy_effects.py for the other case)
    policies = data.draw(gst.policies(judged_grades="as_is"))
    if not _supports(metric, policies):
        policies = replace(policies, ties="rank")
    values = _maybe_value(judgments, run, metric, policies)
    if values is None:  # ERR with a grade above its max_grade
        return
    low, high = cls.bounds
    for q, v in values.items():
        if math.isnan(v):
            assert policies.undefined == "skip", f"{metric}: NaN for {q!r} although undefined='zero'"
            continue
        assert low is None or v >= low - 1e-12, f"{metric} = {v} < {low} for query {q!r}"
        assert high is None or v <= high + 1e-12, f"{metric} = {v} > {high} for query {q!r}"


# ---------------------------------------------------------------------------------------------- cutoffs
def _cutoff_metrics() -> st.SearchStrategy:
    return st.sampled_from(CUTOFF_CLASSES).flatmap(gst.metrics_of).filter(lambda m: m.cutoff is not None)


@PROPERTY
@given(data=gst.judgments_and_runs(scored=False), metric=_cutoff_metrics(),
       policies=gst.policies(relevance_level=st.sampled_from((0.5, 1, 2, 3))),
       extra=st.lists(st.sampled_from(("new-1", "new-2", "new-3", "judged-0", "judged-neg")), min_size=1,
                      max_size=5))
def test_appending_nonrelevant_after_k_keeps_at_k_values(data, metric, policies, extra):
    judgments, run = data
    if not _supports(metric, policies):
        policies = replace(policies, ties="rank")
    k = metric.cutoff
    # the same judged non-relevant documents (grade 0 and a negative grade) in every query
    jdict = judgments.to_dict()
    for docs in jdict.values():
        docs.setdefault("judged-0", 0)
        docs.setdefault("judged-neg", -1)
    judgments = Judgments.from_dict(jdict, source=None)
    rankings: dict[str, list[str]] = {}
    for q, d, _, _ in _rows(run):
        rankings.setdefault(q, []).append(d)
    def kept(q: str, docs: list[str]) -> int:
        """How many of ``docs`` the ranking keeps: under judged_only only the judged ones (a negative grade is
        judged when negative_grades='nonrelevant'), so that what is appended really lands after rank k."""
        if not policies.judged_only:
            return len(docs)
        grades = jdict.get(q, {})
        return sum(1 for d in docs if d in grades
                   and (grades[d] >= 0 or policies.negative_grades == "nonrelevant"))

    longer = {q: docs + [x for x in dict.fromkeys(extra) if x not in docs] if kept(q, docs) >= k else docs
              for q, docs in rankings.items()}
    before = _maybe_value(judgments, Run.from_dict(rankings), metric, policies)
    after = _maybe_value(judgments, Run.from_dict(longer), metric, policies)
    if before is None:
        assert after is None
        return
    _assert_same_values(before, after, f"{metric} after appending {extra} past rank {k} under {policies}")


# ---------------------------------------------------------------------------------------------- query order
@PROPERTY
@given(data=gst.judgments_and_runs(), metric=st.sampled_from(CLASSES).flatmap(gst.metrics_of),
       policies=gst.policies(), seed=st.randoms(use_true_random=False))
def test_query_order_does_not_matter(data, metric, policies, seed):
    judgments, run = data
    if not _supports(metric, policies):
        policies = replace(policies, ties="rank")
    rows = _rows(run)
    order = list(dict.fromkeys(r[0] for r in rows))
    seed.shuffle(order)
    shuffled_rows = [r for q in order for r in rows if r[0] == q]  # blocks moved, each block's order kept
    jrows = list(judgments.frame.select("query_id", "doc_id", "grade").iter_rows())
    jorder = list(dict.fromkeys(r[0] for r in jrows))
    seed.shuffle(jorder)
    jrows = [r for q in jorder for r in jrows if r[0] == q]
    judgments2 = Judgments.from_columns(*zip(*jrows, strict=True))
    before = _maybe_value(judgments, run, metric, policies)
    after = _maybe_value(judgments2, _run_from_rows(shuffled_rows, run), metric, policies)
    if before is None:
        assert after is None
        return
    assert list(before) == list(after), "queries are reported in bytewise id order whatever the input order"
    _assert_same_values(before, after, f"{metric} with queries reordered under {policies}")


# ---------------------------------------------------------------------------------------------- ties
def _shuffle_within_queries(run: Run, rnd) -> Run:
    """The same run with the input order of each query's documents permuted (None: reversed)."""
    rows = _rows(run)
    out = []
    for q in dict.fromkeys(r[0] for r in rows):
        block = [r for r in rows if r[0] == q]
        if rnd is None:
            block.reverse()
        else:
            rnd.shuffle(block)
        out.extend(block)
    return _run_from_rows(out, run)


@PROPERTY
@given(data=gst.judgments_and_runs(scored=True),
       metric=st.sampled_from(LINEAR).flatmap(gst.metrics_of),
       policies=gst.policies(ties="average"), rnd=st.randoms(use_true_random=False))
def test_average_ties_ignore_the_order_of_tied_documents(data, metric, policies, rnd):
    judgments, run = data
    before = _values(judgments, run, metric, policies)
    for permuted in (_shuffle_within_queries(run, None), _shuffle_within_queries(run, rnd)):
        after = _values(judgments, permuted, metric, policies)
        _assert_same_values(before, after, f"{metric} with tied documents permuted under {policies}")


@PROPERTY
@given(data=gst.judgments_and_runs(scored=True), metric=st.sampled_from(CLASSES).flatmap(gst.metrics_of),
       policies=gst.policies(ties="trec_eval"), rnd=st.randoms(use_true_random=False))
def test_trec_eval_ties_follow_doc_ids_whatever_the_input_order(data, metric, policies, rnd):
    judgments, run = data
    # the order trec_eval uses: score descending, then doc id descending compared as bytes
    rows = sorted(_rows(run), key=lambda r: (r[0], r[2], r[1].encode("utf-8")), reverse=True)
    explicit = Run.from_columns([r[0] for r in rows], [r[1] for r in rows], ranks=range(1, len(rows) + 1))
    a = _maybe_value(judgments, run, metric, policies)
    b = _maybe_value(judgments, _shuffle_within_queries(run, rnd), metric, policies)
    b_reversed = _maybe_value(judgments, _shuffle_within_queries(run, None), metric, policies)
    c = _maybe_value(judgments, explicit, metric, replace(policies, ties="rank"))
    if a is None:
        assert b is None and b_reversed is None and c is None
        return
    # renaming every document with an order-preserving prefix keeps the tie order, hence every value
    jrows = judgments.frame.select("query_id", "doc_id", "grade").iter_rows()
    prefixed_j = Judgments.from_columns(*zip(*[(q, "x-" + d, g) for q, d, g in jrows], strict=True))
    prefixed_r = _run_from_rows([(q, "x-" + d, sc, rk) for q, d, sc, rk in _rows(run)], run)
    d = _maybe_value(prefixed_j, prefixed_r, metric, policies)
    _assert_same_values(a, d, f"{metric} with every doc id prefixed")
    _assert_same_values(a, b, f"{metric} with the input order of documents changed")
    _assert_same_values(a, b_reversed, f"{metric} with the input order of documents reversed")
    _assert_same_values(a, c, f"{metric} against the explicit (score desc, doc id desc) order")


# ---------------------------------------------------------------------------------------------- ideal
def _ideal_key(metric):
    """How the ideal ranking sorts judged documents: by the metric's gain when it has one, else by grade."""
    gain = getattr(metric, "gain", None)
    if gain is None:
        return lambda g: g
    return lambda g: gain_value(g, gain, getattr(metric, "rel", None))


def _ideal_expected(metric, judged: list[float], policies: Policies) -> float:
    """1.0, except where the metric's definition caps the ideal below 1 (AP@k with R > k: min(R, k) / R;
    Rprec(mult): min(R, c) / c with c = floor(mult * R + 0.9); nDCG(ideal_depth=all)@k: the ideal's DCG@k
    over its uncut DCG)."""
    level = metric.level(policies)
    r = sum(g >= level for g in judged)
    name = type(metric).name
    if name in ("AP", "GMAP") and metric.cutoff is not None and metric.denominator == "judged":
        return min(r, metric.cutoff) / r
    if name == "nDCG" and metric.ideal_depth == "all" and metric.cutoff is not None:
        gains = sorted((gain_value(g, metric.gain, metric.rel) for g in judged), reverse=True)
        dcg = [g / math.log2(i + 2) for i, g in enumerate(gains)]
        return sum(dcg[: metric.cutoff]) / sum(dcg)
    if name == "Rprec" and metric.mult != 1.0:
        c = math.floor(metric.mult * r + 0.9)
        return min(r, c) / c if c else 0.0
    return 1.0


@pytest.mark.parametrize("cls", NORMALIZED, ids=lambda c: c.name)
@settings(PROPERTY, max_examples=25)
@given(data=st.data())
def test_ideal_ranking_scores_one(cls, data):
    metric = data.draw(gst.metrics_of(cls))
    judgments, _ = data.draw(gst.judgments_and_runs(run_only_queries=False))
    policies = Policies(relevance_level=data.draw(st.sampled_from((1, 2, 0.5))))
    key = _ideal_key(metric)
    jdict = judgments.to_dict()
    # judged documents by decreasing gain (grade); negative grades (pooled, unjudged) are left out
    ideal = {q: [d for d, g in sorted(docs.items(), key=lambda t: -key(t[1])) if g >= 0]
             for q, docs in jdict.items()}
    ideal = {q: docs for q, docs in ideal.items() if docs}
    if not ideal:
        return
    values = _raw(judgments, Run.from_dict(ideal), metric, policies)
    tol = 1e-5 if cls.name == "infAP" else 1e-12  # infAP's epsilon (1e-5) keeps its ideal just below 1
    for q, v in values.items():
        judged = [g for g in jdict[q].values() if g >= 0]
        if math.isnan(v) or q not in ideal:
            continue
        expected = _ideal_expected(metric, judged, policies)
        assert v == pytest.approx(expected, abs=tol), f"{metric}, query {q!r}"


def test_ideal_caps_are_what_the_definitions_say():
    # AP@2 with R = 3 relevant, ranked first: (1/1 + 2/2) / 3 = 0.6667 (trec_eval map_cut divides by R);
    # Rprec(mult=2) with R = 3: c = floor(2*3 + 0.9) = 6, 3 relevant in the top 6 -> 3/6 = 0.5
    j = Judgments.from_dict({"q": {"a": 1, "b": 1, "c": 1, "d": 0}})
    r = Run.from_dict({"q": ["a", "b", "c", "d"]})
    res = evaluate(j, r, ["AP@2", "Rprec(mult=2)", "AP", "Rprec"])
    assert res["AP@2"] == pytest.approx(2 / 3)
    assert res["Rprec(mult=2)"] == pytest.approx(0.5)
    assert res["AP"] == 1.0 and res["Rprec"] == 1.0


# ---------------------------------------------------------------------------------------------- known bugs
def test_average_ties_judged_and_unj():
    # judged a (grade 1) and unjudged u tie at rank 1. Over both orders of the tie, Judged@1 is 1 or 0:
    # its expected value (what ties='average' promises) is 0.5, and so is Unj@1's, whatever the input order.
    # (Regression: Judged@k and Unj@k used to ignore the tie and give [1.0, 0.0] for the two input orders.)
    j = Judgments.from_dict({"q": {"a": 1}})
    got = [evaluate(j, Run.from_dict({"q": {d: 1.0 for d in order}}), ["Judged@1", "Unj@1"], ties="average")
           for order in (["a", "u"], ["u", "a"])]
    assert [g["Judged@1"] for g in got] == [0.5, 0.5]
    assert [g["Unj@1"] for g in got] == [0.5, 0.5]


def test_average_ties_with_depth():
    # a (grade 1) and b (grade 0) tie; depth=1 keeps one of them. Over the orders of the tie the expected
    # P@1 is (1 + 0) / 2 = 0.5, whatever the input order. (Regression: depth used to cut the tie by input
    # order, giving 1.0 when a was given first and 0.0 when b was.)
    j = Judgments.from_dict({"q": {"a": 1, "b": 0}})
    got = [evaluate(j, Run.from_dict({"q": {d: 1.0 for d in order}}), ["P@1", "DCG"], ties="average", depth=1)
           for order in (["a", "b"], ["b", "a"])]
    assert [g["P@1"] for g in got] == [0.5, 0.5]
    assert [g["DCG"] for g in got] == [0.5, 0.5]  # mean gain (1 + 0)/2 at rank 1, discount 1


def test_average_ties_with_depth_and_judged_only():
    # a (grade 1) and unjudged u tie. depth=1 is applied before judged_only (trec_eval: -M before -J).
    # Input [a, u]: depth keeps a -> [a] -> P@1 = 1. Input [u, a]: depth keeps u, judged_only drops it -> []
    # -> P@1 = 0. ties='average' promises that the order among equals does not matter, so the combination
    # must either give one value for both inputs or be refused.
    # (Regression: it used to give [1.0, 0.0]; it is now refused with a PolicyError.)
    j = Judgments.from_dict({"q": {"a": 1, "b": 0}})
    got = []
    try:
        for order in (["a", "u"], ["u", "a"]):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", GainscopeWarning)  # an empty ranking: undefined values
                got.append(evaluate(j, Run.from_dict({"q": {d: 1.0 for d in order}}), ["P@1"], ties="average",
                                    depth=1, judged_only=True)["P@1"])
    except PolicyError as exc:
        assert "ties='average' cannot be combined with both depth and judged_only" in str(exc)
        return
    assert got[0] == got[1]


def test_gain_map_with_negative_grade():
    # ranked: b (grade -1), a (grade 1). If a map could give grade -1 a gain of 5:
    # DCG = 5/log2(2) + 1/log2(3) = 5.6309 but IDCG from judged grades >= 0 = [1] -> 1: nDCG = 5.6309 > 1.
    # A negative grade means "pooled but unjudged": such a map must be refused (or at least not break bounds).
    # (Regression: nDCG(gain={-1: 5}) used to give 5.6309.)
    j = Judgments.from_dict({"q": {"a": 1, "b": -1}})
    r = Run.from_dict({"q": ["b", "a"]})
    try:
        value = evaluate(j, r, ["nDCG(gain={-1: 5})"])["nDCG(gain={-1: 5})"]
    except InvalidParameterError as exc:
        assert "grades >= 0" in str(exc)
        return
    assert value <= 1.0


def test_trec_eval_tie_warning_is_raised():
    # the tie order matters enough to warn about it
    j = Judgments.from_dict({"q": {"9": 1, "10": 0}})
    with pytest.warns(InputWarning, match="group"):
        evaluate(j, Run.from_dict({"q": {"10": 1.0, "9": 1.0}}), ["P@1"])
