"""Evaluate runs against judgments: resolve metric names, build the judged run once, run every kernel.

>>> import gainscope
>>> qrels = gainscope.Judgments.from_dict({"q1": {"d1": 2, "d2": 0, "d3": 1}})
>>> run = gainscope.Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})
>>> round(gainscope.evaluate(qrels, run, ["nDCG@10", "AP"])["AP"], 4)
0.8333
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from gainscope.core.judged_run import JudgedRun, PreparedJudgments
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.errors import MetricError, UndefinedMetricWarning, format_ids
from gainscope.metrics.base import Metric, RankedQuery
from gainscope.metrics.context import Context
from gainscope.metrics.names import parse_metric
from gainscope.results import Results

__all__ = ["compute", "evaluate", "evaluate_runs", "ranked_query", "resolve_metrics", "warn_undefined"]

MetricsArg = str | Metric | Iterable[str | Metric]


def resolve_metrics(metrics: MetricsArg) -> list[Metric]:
    """Turn names (ir_measures style or trec_eval style, including ``official`` and ``all_trec``) and
    metric objects into a de-duplicated list of metric objects, in request order."""
    from gainscope.metrics.trec_eval import is_trec_name, trec_metrics

    items: list[str | Metric] = [metrics] if isinstance(metrics, (str, Metric)) else list(metrics)
    if not items:
        raise MetricError("no metric requested; name at least one, for example 'nDCG@10'")
    out: list[Metric] = []
    seen: set[str] = set()
    for item in items:
        if isinstance(item, Metric):
            found = [item]
        elif isinstance(item, str):
            text = item.strip()
            found = [m for _, m in trec_metrics([text])] if is_trec_name(text) else [parse_metric(text)]
        else:
            raise MetricError(f"a metric must be a name or a Metric object; got {item!r}")
        for m in found:
            if str(m) not in seen:
                seen.add(str(m))
                out.append(m)
    return out


def _as_policies(policies: Policies | None, kwargs: dict[str, Any]) -> Policies:
    if policies is not None and kwargs:
        return Policies.from_kwargs(**{**policies.as_dict(), **kwargs})
    return policies if policies is not None else Policies.from_kwargs(**kwargs)


def compute(jr: JudgedRun, metrics: Sequence[Metric], *, notes: Iterable[str] = (),
            warn: bool = True, max_grade: float | None = None) -> Results:
    """Run every metric's kernel on a judged run and apply the ``missing_queries`` and ``undefined``
    policies. Warns (UndefinedMetricWarning) when undefined values were filled with 0.

    ``max_grade``: the largest judged grade of every evaluated query, for an evaluation that computes a part
    of its queries at a time (:mod:`gainscope.spark`); None takes ``jr``'s own. Every other value of a query
    depends on that query alone."""
    policies = jr.policies
    for m in metrics:
        m.check_policies(policies)
    ctx = Context(jr, max_grade=max_grade)
    nq = jr.num_queries
    values = np.zeros((nq, len(metrics)))
    undefined = np.zeros((nq, len(metrics)), dtype=bool)
    extra_notes: list[str] = []
    for j, m in enumerate(metrics):
        v = np.asarray(m.compute(ctx), dtype=np.float64)
        if not m.judgment_property:
            v = np.where(jr.missing, 0.0, v)  # a judged query without a ranking scores 0 (trec_eval -c)
        undefined[:, j] = np.isnan(v)
        values[:, j] = v
        if type(m).name == "ERR" and getattr(m, "max_grade", 1) is None:
            extra_notes.append(f"{m}: grades scaled by the largest judged grade, {ctx.max_grade:g}")
    if policies.undefined == "zero":
        values[undefined] = 0.0
        if warn and undefined.any():
            warn_undefined(jr.query_ids, metrics, undefined)
    return Results(run_name=jr.run_name, metrics=tuple(metrics), query_ids=jr.query_ids, values=values,
                   undefined=undefined, policies=policies, coverage=jr.coverage,
                   notes=tuple(notes) + tuple(extra_notes))


def warn_undefined(query_ids: Sequence[str], metrics: Sequence[Metric], undefined: np.ndarray) -> None:
    """The UndefinedMetricWarning of values filled with 0 (``undefined`` is queries x metrics)."""
    groups: dict[tuple[int, ...], list[str]] = {}
    for j, m in enumerate(metrics):
        rows = tuple(np.flatnonzero(undefined[:, j]).tolist())
        if rows:
            groups.setdefault(rows, []).append(str(m))
    for rows, names in groups.items():
        ids = [query_ids[i] for i in rows]
        what = ", ".join(names)
        warnings.warn(UndefinedMetricWarning(
            f"{what} {'is' if len(names) == 1 else 'are'} undefined for {len(ids)} quer"
            f"{'y' if len(ids) == 1 else 'ies'} (no relevant document, or nothing retrieved): "
            f"{format_ids(ids)}; scored as 0 as trec_eval does. Pass undefined='skip' to leave them out "
            "of the mean."), stacklevel=3)


def _as_judgments(judgments: Any) -> Judgments:
    if isinstance(judgments, Judgments):
        return judgments
    from gainscope.io import read_judgments

    return read_judgments(judgments)


def _read_inputs(judgments: Any, run: Any) -> tuple[Judgments, Run]:
    """Judgments and Run objects of anything the readers accept (explanations need the whole run)."""
    from gainscope.io import read_run

    return _as_judgments(judgments), run if isinstance(run, Run) else read_run(run)


def _judged(prepared: PreparedJudgments, run: Run | Any, policies: Policies) -> tuple[JudgedRun, tuple[str, ...]]:
    """The sparse judged run of ``run`` (a Run, or anything :func:`~gainscope.io.read_run` reads; TREC run
    files go through the C scanner when it applies) and the run's notes."""
    from gainscope.io.scan import judged_run_of, judged_run_of_run

    if isinstance(run, Run):
        return judged_run_of_run(prepared, run, policies), tuple(run.notes)
    return judged_run_of(prepared, run, policies)


def evaluate(judgments: Judgments | Any, run: Run | Any, metrics: MetricsArg, *,
             policies: Policies | None = None, **policy_kwargs: Any) -> Results:
    """Evaluate one run.

    Parameters
    ----------
    judgments, run:
        :class:`Judgments` / :class:`Run` objects, or anything the readers accept: a path (TREC, JSON,
        JSONL, CSV/TSV, Parquet, BEIR), a polars or pandas DataFrame, a dict.
    metrics:
        Names (``"nDCG@10"``, ``"P(rel=2)@5"``, trec_eval's ``"ndcg_cut.10"``, ``"official"``) or metric
        objects.
    policies, **policy_kwargs:
        The conventions (see :class:`~gainscope.core.policies.Policies`): ``ties``, ``missing_queries``,
        ``depth``, ``judged_only``, ``relevance_level``, ``negative_grades``, ``undefined``.

    Returns
    -------
    Results
        Per-query values, aggregates and the conventions used.
    """
    pol = _as_policies(policies, policy_kwargs)
    mets = resolve_metrics(metrics)
    for m in mets:
        m.check_policies(pol)
    j = _as_judgments(judgments)
    jr, run_notes = _judged(PreparedJudgments.of(j, pol.negative_grades), run, pol)
    return compute(jr, mets, notes=tuple(j.notes) + run_notes)


def evaluate_runs(judgments: Judgments | Any, runs: Iterable[Run | Any], metrics: MetricsArg, *,
                  policies: Policies | None = None, **policy_kwargs: Any) -> list[Results]:
    """Evaluate several runs against the same judgments (read and prepared once)."""
    pol = _as_policies(policies, policy_kwargs)
    mets = resolve_metrics(metrics)
    for m in mets:
        m.check_policies(pol)
    j = _as_judgments(judgments)
    prepared = PreparedJudgments.of(j, pol.negative_grades)  # once, whatever the number of runs
    out = []
    for run in runs:
        jr, run_notes = _judged(prepared, run, pol)
        out.append(compute(jr, mets, notes=tuple(j.notes) + run_notes))
    return out


def ranked_query(jr: JudgedRun, index: int) -> RankedQuery:
    """One query of a judged run in the plain form the reference implementations and explanations use:
    every position from 1 to ``num_ret``, None for unjudged documents (absent from a sparse judged run)."""
    s = jr.query_slice(index)
    n = int(jr.num_ret[index])
    ranks = jr.rank[s].tolist()
    grades: list[float | None] = [None] * n
    for r, g in zip(ranks, jr.grades[s].tolist(), strict=True):
        grades[r - 1] = None if np.isnan(g) else float(g)
    doc_ids = [""] * n
    if jr.doc_ids is not None:
        for r, d in zip(ranks, jr.doc_ids[s.start:s.stop].to_list(), strict=True):
            doc_ids[r - 1] = d
    scores = [float("nan")] * n
    for r, v in zip(ranks, jr.scores[s].tolist(), strict=True):
        scores[r - 1] = v
    ties: tuple[bool, ...] = ()
    tail: tuple[float | None, ...] = ()
    if jr.policies.ties == "average":
        starts = [True] * n
        groups = set(zip(jr.group_start[s].tolist(), jr.group_kept[s].tolist(), jr.group_size[s].tolist(),
                         strict=True))
        mine = jr.tail_query == index
        cut = jr.tail_grades[mine]
        groups |= set(zip(jr.tail_start[mine].tolist(), jr.tail_kept[mine].tolist(), jr.tail_size[mine].tolist(),
                          strict=True))
        for start, kept, size in groups:
            for pos in range(start + 1, start + kept):
                starts[pos - 1] = False
            if start + kept - 1 == n and size > kept:  # the group a depth cut through: its cut members
                tail = tuple(float(g) for g in cut) + (None,) * (size - kept - len(cut))
        ties = tuple(starts)
    top = jr.judged_grades.max() if len(jr.judged_grades) else 0.0
    return RankedQuery(
        query_id=jr.query_ids[index], grades=tuple(grades), judged=tuple(float(g) for g in
                                                                         jr.judged_grades[jr.judged_slice(index)]),
        doc_ids=tuple(doc_ids), scores=tuple(scores), tie_start=ties, max_grade=float(top) if top > 0 else 0.0,
        judged_doc_ids=tuple(jr.judged_doc_ids[jr.judged_slice(index)].to_list()), tail=tail)
