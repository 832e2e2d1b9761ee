"""Explain a metric value position by position: rank, doc id, grade, gain, discount, contribution and
running total, for the run and (where the metric has one) for the ideal ranking, then the division that
gives the value.

>>> import gainscope
>>> qrels = gainscope.Judgments.from_dict({"q1": {"a": 2, "b": 1}})
>>> run = gainscope.Run.from_dict({"q1": {"b": 2.0, "a": 1.0}})
>>> e = gainscope.explain(qrels, run, "q1", "nDCG@2")
>>> round(e.value, 4)
0.8597
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gainscope.core.judged_run import build_judged_run
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.errors import MetricError
from gainscope.evaluation import _read_inputs, _setup, compute, ranked_query
from gainscope.metrics.base import Explanation, Metric, generic_explanation
from gainscope.metrics.profiles import Profile

__all__ = ["explain", "explanation_frame"]


def explain(judgments: Judgments | Any, run: Run | Any, query_id: str, metric: str | Metric, *,
            policies: Policies | None = None, profile: str | Profile | None = None,
            **policy_kwargs: Any) -> Explanation:
    """Explain one metric for one query; the explanation's value equals the evaluated value.

    Every registered metric explains itself: position by position where its value is a sum over positions
    (nDCG, AP, P, ERR, ...), otherwise with the value and the inputs it used (the ranked documents, the query's
    totals; set measures, counts, curves, edit distances). ``policies``, ``profile`` and ``**policy_kwargs``
    as for :func:`gainscope.evaluate`.
    """
    pol, mets, use = _setup(metric, policies, profile, policy_kwargs)
    if len(mets) != 1:
        raise MetricError(f"explain takes one metric at a time; {metric!r} names {len(mets)}")
    m = mets[0]
    j, r = _read_inputs(judgments, run)
    jr = build_judged_run(j, r, pol)
    index = jr.index_of(query_id)
    q = ranked_query(jr, index)
    explanation = m.explain(q, pol)
    if explanation is None:
        explanation = generic_explanation(m, q, pol, float(compute(jr, [m], warn=False).values[index, 0]))
    if use is not None:
        given = f"; given over it: {'; '.join(use.overridden)}" if use.overridden else ""
        explanation = replace(explanation, notes=(*explanation.notes,
                                                  f"profile {use.name}: {'; '.join(use.profile.settings())}"
                                                  + given))
    if jr.missing[index] and m.missing_scores_zero and not m.judgment_property and pol.missing_queries == "zero":
        explanation = Explanation(explanation.metric, explanation.query_id, (), explanation.ideal, 0.0,
                                  explanation.denominator, 0.0, explanation.formula, explanation.columns,
                                  (*explanation.notes, "the run has no ranking for this query: it scores 0"))
    return explanation


def explanation_frame(e: Explanation) -> Any:
    """The explanation as a polars frame: ``ranking`` (run or ideal), rank, doc_id, grade, then the
    metric's three columns (for nDCG: gain, discount, contribution) and the running total."""
    import polars as pl

    rows = []
    for section, steps in (("run", e.run), ("ideal", e.ideal)):
        for s in steps:
            rows.append({"ranking": section, "rank": s.rank, "doc_id": s.doc_id, "grade": s.grade,
                         e.columns[0]: s.gain, e.columns[1]: s.discount, e.columns[2]: s.contribution,
                         "total": s.total})
    schema = {"ranking": pl.String, "rank": pl.Int64, "doc_id": pl.String, "grade": pl.Float64,
              e.columns[0]: pl.Float64, e.columns[1]: pl.Float64, e.columns[2]: pl.Float64,
              "total": pl.Float64}
    return pl.DataFrame(rows, schema=schema)

