"""Evaluate runs against judgments: resolve metric names, build the judged run once, run every kernel.

The one pipeline: read (:func:`_as_judgments`, the readers) -> prepare the judgments once
(:class:`~gainscope.core.judged_run.PreparedJudgments`) -> the judged run of each run (:func:`_judged`: the C
scanner when it applies) -> the kernels (:func:`compute`) -> :class:`~gainscope.results.Results`.
:func:`evaluate_prepared` is that path after the metrics and policies are settled; :func:`evaluate`,
:func:`evaluate_runs` (and so ``compare``, ``agreement``, the judges' decision tools) and the commands that
evaluate files (``evaluate``, ``compare``, ``gate``, ``report``, ``plot``: ``gainscope.cli.common.evaluate_files``)
go through it. The adapters (cases, temporal) build their judged run from rankings
(:func:`~gainscope.core.rankings.judged_run_of_rankings`) and join the path at :func:`compute`.

>>> import gainscope
>>> qrels = gainscope.Judgments.from_dict({"q1": {"d1": 2, "d2": 0, "d3": 1}})
>>> run = gainscope.Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})
>>> round(gainscope.evaluate(qrels, run, ["nDCG@10", "AP"])["AP"], 4)
0.8333
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gainscope.core.judged_run import JudgedRun, PreparedJudgments
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run, run_list
from gainscope.errors import PolicyError, UndefinedMetricWarning, about, format_ids, option
from gainscope.metrics.base import Metric, RankedQuery
from gainscope.metrics.context import Context
from gainscope.metrics.profiles import Profile, ProfileUse, get_profile, profiled_policies
from gainscope.metrics.resolve import MetricsArg, resolve_metrics, resolve_metrics_noting
from gainscope.results import Results

__all__ = ["MetricsArg", "compute", "evaluate", "evaluate_prepared", "evaluate_runs", "ranked_query", "resolve_metrics",
           "run_label", "warn_undefined"]


def _setup(metrics: MetricsArg, policies: Policies | None, profile: str | Profile | None,
           policy_kwargs: dict[str, Any]) -> tuple[Policies, list[Metric], ProfileUse | None]:
    """The policies (a profile's, with the given ones over them), the metrics resolved under the profile and
    the record of what was given over the profile."""
    prof = get_profile(profile) if profile is not None else None
    pol, use = profiled_policies(prof, policy_kwargs, policies)
    mets, overridden = resolve_metrics_noting(metrics, profile=prof, policies=pol)
    for m in mets:
        m.check_policies(pol)
    return pol, mets, use.plus(overridden) if use is not None else None


def compute(jr: JudgedRun, metrics: Sequence[Metric], *, notes: Iterable[str] = (),
            warn: bool = True, profile: ProfileUse | None = None, max_grade: float | None = None) -> Results:
    """Run every metric's kernel on a judged run and apply the ``missing_queries`` and ``undefined``
    policies. Warns (UndefinedMetricWarning) when undefined values were filled with 0. ``profile`` is the
    profile the metrics and policies come from, echoed with the results.

    ``max_grade``: the largest judged grade of every evaluated query, for an evaluation that computes a part
    of its queries at a time (:mod:`gainscope.spark`); None takes ``jr``'s own. Every other value of a query
    depends on that query alone."""
    policies = jr.policies
    for m in metrics:
        m.check_policies(policies)
        if jr.session is not None and not m.reads_sessions:
            raise PolicyError(f"{m} is not a session metric: it reads a ranking of distinct documents, and a session "
                              "repeats them; ask for the session metrics (iterCG, iterDCG, RG, ..., sDCG: `gainscope "
                              "metrics` lists them)")
    ctx = Context(jr, max_grade=max_grade)
    nq = jr.num_queries
    values = np.zeros((nq, len(metrics)))
    undefined = np.zeros((nq, len(metrics)), dtype=bool)
    censored: np.ndarray | None = None
    extra_notes: list[str] = []
    for j, (m, v) in enumerate(zip(metrics, _kernel_values(ctx, metrics), strict=True)):
        zeroed = m.missing_scores_zero and not m.judgment_property and policies.missing_queries == "zero"
        if zeroed:
            v = np.where(jr.missing, 0.0, v)  # a judged query without a ranking scores 0 (trec_eval -c)
        undefined[:, j] = np.isnan(v)
        values[:, j] = v
        c = m.censored(ctx)
        if c is not None:
            censored = np.zeros((nq, len(metrics)), dtype=bool) if censored is None else censored
            censored[:, j] = c & ~jr.missing if zeroed else c
            if censored[:, j].any():
                ids = [jr.query_ids[i] for i in np.flatnonzero(censored[:, j]).tolist()]
                extra_notes.append(f"{m}: {len(ids)} quer{'y' if len(ids) == 1 else 'ies'} censored (at the cap, "
                                   f"a stand-in, not a measurement) and left out of the mean: {format_ids(ids)}")
        if m.uses_max_grade and getattr(m, "max_grade", 1) is None and policies.max_grade is None:
            extra_notes.append(f"{m}: grades scaled by the largest judged grade, {ctx.max_grade:g}")
    if policies.undefined == "zero":
        kept = undefined & np.array([not m.undefined_scores_zero for m in metrics], dtype=bool)
        values[undefined & ~kept] = 0.0
        if warn and (undefined & ~kept).any():
            warn_undefined(jr.query_ids, metrics, undefined & ~kept)
        for j in np.flatnonzero(kept.any(axis=0)).tolist():
            ids = [jr.query_ids[i] for i in np.flatnonzero(kept[:, j]).tolist()]
            extra_notes.append(f"{metrics[j]}: undefined for {len(ids)} quer{'y' if len(ids) == 1 else 'ies'}, "
                               f"left out of the mean rather than scored 0 (its best value): {format_ids(ids)}")
    return Results(run_name=jr.run_name, metrics=tuple(metrics), query_ids=jr.query_ids, values=values,
                   undefined=undefined, policies=policies, coverage=jr.coverage,
                   notes=tuple(notes) + tuple(extra_notes), profile=profile, censored=censored)


PARALLEL_HITS = 1 << 20  # judged runs of at least this many ranked positions have their kernels run on two threads


def _kernel_values(ctx: Context, metrics: Sequence[Metric]) -> list[np.ndarray]:
    """Each metric's kernel on ``ctx``, as float64: on two threads for a judged run of ``PARALLEL_HITS`` ranked
    positions or more and several metrics (numpy releases the GIL in its loops; W200k's five metrics 0.32 -> 0.17 s
    of wall), else in turn. A kernel's values do not depend on the thread, nor on which kernel made the Context's
    shared arrays first (a cached array two threads both make is the same array); the kernels warn about nothing
    (the warnings are :func:`compute`'s, after them, in order); each runs in a copy of the caller's context
    (numpy's error state); the first metric's error, in order, is the one raised. Only gainscope's own metrics
    are run on threads: a metric class defined elsewhere (a plugin's) may warn or hold state, so with one of them
    every kernel runs in turn, in the caller's thread."""
    if (len(metrics) < 2 or len(ctx.jr.rank) < PARALLEL_HITS or (os.cpu_count() or 1) < 2
            or not all(type(m).__module__.startswith("gainscope.") for m in metrics)):
        return [np.asarray(m.compute(ctx), dtype=np.float64) for m in metrics]
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(contextvars.copy_context().run, m.compute, ctx) for m in metrics]
        try:
            return [np.asarray(f.result(), dtype=np.float64) for f in futures]
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise


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
            f"{format_ids(ids)}; scored as 0 as trec_eval does. Pass {option('undefined', 'skip')} to leave them "
            "out of the mean."), stacklevel=3)


def _as_judgments(judgments: Any) -> Judgments:
    if isinstance(judgments, Judgments):
        return judgments
    from gainscope.io import read_judgments

    return read_judgments(judgments)


def _read_inputs(judgments: Any, run: Any) -> tuple[Judgments, Run]:
    """Judgments and Run objects of anything the readers accept (explanations need the whole run)."""
    from gainscope.io import read_run

    return _as_judgments(judgments), run if isinstance(run, Run) else read_run(run)


def _judged(prepared: PreparedJudgments, run: Run | Any, policies: Policies, *, name: str | None = None,
            **read_options: Any) -> tuple[JudgedRun, tuple[str, ...]]:
    """The sparse judged run of ``run`` (a Run, or anything :func:`~gainscope.io.read_run` reads, with its reading
    options and ``name``; TREC run files go through the C scanner when it applies) and the run's notes."""
    from gainscope.io.scan import judged_run_of, judged_run_of_run

    if isinstance(run, Run):
        return judged_run_of_run(prepared, run, policies), tuple(run.raw_notes)
    return judged_run_of(prepared, run, policies, name=name, **read_options)


def evaluate_prepared(judgments: Judgments, runs: Sequence[Run | Any], metrics: Sequence[Metric],
                      policies: Policies, *, profile: ProfileUse | None = None, names: Sequence[str] = (),
                      each: Callable[[JudgedRun, Results], None] | None = None,
                      **read_options: Any) -> list[Results]:
    """The pipeline after reading the judgments and settling the metrics: the judgments prepared once, then for
    each run its judged run and every kernel. ``names`` (none, or one per run given as a source) name the runs,
    ``read_options`` are :func:`~gainscope.io.read_run`'s for runs given as sources; ``each(judged_run, results)``
    is called for every run (the trec_eval text needs the judged run). With several runs each warning names its
    run (:func:`run_label`)."""
    if any(isinstance(run, (str, os.PathLike)) for run in runs):  # files, which the scanner may read
        from gainscope.io.scan import prepared_for_scan

        prepared = prepared_for_scan(judgments, policies)  # once, whatever the number of runs
    else:
        prepared = PreparedJudgments.of(judgments, policies.negative_grades)
    out = []
    for i, run in enumerate(runs):
        with about(run_label(run, i)) if len(runs) > 1 else contextlib.nullcontext():
            jr, run_notes = _judged(prepared, run, policies, name=names[i] if names else None, **read_options)
            results = compute(jr, metrics, notes=tuple(judgments.notes) + run_notes, profile=profile)
        if each is not None:
            each(jr, results)
        out.append(results)
    return out


def evaluate(judgments: Judgments | Any, run: Run | Any, metrics: MetricsArg, *,
             policies: Policies | None = None, profile: str | Profile | None = None,
             **policy_kwargs: Any) -> Results:
    """Evaluate one run.

    Parameters
    ----------
    judgments, run:
        :class:`Judgments` / :class:`Run` objects, or anything the readers accept: a path (TREC, JSON,
        JSONL, CSV/TSV, Parquet, BEIR), a polars or pandas DataFrame, a pyarrow Table, a dict.
    metrics:
        Names (``"nDCG@10"``, ``"P(rel=2)@5"``, trec_eval's ``"ndcg_cut.10"``, ``"official"``) or metric
        objects.
    policies, **policy_kwargs:
        The conventions (see :class:`~gainscope.core.policies.Policies`): ``ties``, ``missing_queries``,
        ``depth``, ``judged_only``, ``relevance_level``, ``negative_grades``, ``undefined``,
        ``judged_grades``, ``max_grade``,
        ``score_precision`` (``"float32"`` gives pytrec_eval's numbers, see ``Policies``).
    profile:
        A named set of conventions (:mod:`gainscope.metrics.profiles`): ``"trec_eval"``, ``"quepid"``,
        ``"tempoeval"``, ``"sklearn"``, ``"ranx"``, ``"es_rank_eval"``. It sets policies and the parameters of
        the metrics named without them; keyword policies override it (a ``Policies`` object cannot be
        combined with a profile). The profile and every override are echoed with the results.

    Returns
    -------
    Results
        Per-query values, aggregates and the conventions used.

    Examples
    --------
    q1 ranks d1 (grade 2), d2 (0), d3 (1): AP = (1/1 + 2/3) / 2 = 0.8333; q2 ranks the unjudged d5, then d4:
    AP = (1/2) / 1 = 0.5. A result is looked up under any spelling of its metric (trec_eval's ``map`` is AP):

    >>> import gainscope
    >>> qrels = gainscope.Judgments.from_dict({"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1}})
    >>> run = gainscope.Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d5": 2.0, "d4": 1.0}})
    >>> results = gainscope.evaluate(qrels, run, ["ndcg_cut.10", "map"])
    >>> results.metric_names
    ['nDCG@10', 'AP']
    >>> round(results["map"], 4), results.per_query("AP")
    (0.6667, {'q1': 0.8333333333333333, 'q2': 0.5})

    Under Quepid's conventions P@10 divides by the documents returned (q1: 2/3, q2: 1/2):

    >>> quepid = gainscope.evaluate(qrels, run, ["P@10"], profile="quepid")
    >>> quepid.metric_names, round(quepid["P@10"], 4)
    (['P(denominator=retrieved)@10'], 0.5833)
    """
    pol, mets, use = _setup(metrics, policies, profile, policy_kwargs)
    return evaluate_prepared(_as_judgments(judgments), [run], mets, pol, profile=use)[0]


def evaluate_runs(judgments: Judgments | Any, runs: Iterable[Run | Any], metrics: MetricsArg, *,
                  policies: Policies | None = None, profile: str | Profile | None = None,
                  **policy_kwargs: Any) -> list[Results]:
    """Evaluate several runs against the same judgments (read and prepared once); arguments as
    :func:`evaluate`. Each warning names the run it is about (its path, or its name)."""
    pol, mets, use = _setup(metrics, policies, profile, policy_kwargs)
    return evaluate_prepared(_as_judgments(judgments), run_list(runs), mets, pol, profile=use)


def run_label(run: Any, index: int) -> str:
    """How warnings name a run when there are several: its path as given, else its name, else its number."""
    if isinstance(run, (str, os.PathLike)):
        return "<stdin>" if run == "-" else os.fspath(run)
    name = getattr(run, "name", None)
    return name if isinstance(name, str) and name else f"run {index + 1}"


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
    q = RankedQuery(
        query_id=jr.query_ids[index], grades=tuple(grades), judged=tuple(float(g) for g in
                                                                         jr.judged_grades[jr.judged_slice(index)]),
        doc_ids=tuple(doc_ids), scores=tuple(scores), tie_start=ties, max_grade=jr.top_grade,
        judged_doc_ids=tuple(jr.judged_doc_ids[jr.judged_slice(index)].to_list()), tail=tail)
    if jr.session is None:
        return q
    sl = jr.session  # a session is dense: its positions are ranks 1..num_ret in order
    return replace(q, iterations=tuple(sl.iteration[s].tolist()), searches=tuple(sl.search[s].tolist()),
                   first=tuple(sl.first[s].tolist()), unknown=tuple(sl.unknown[s].tolist()),
                   num_iterations=int(sl.num_iterations[index]),
                   judged_iterations=tuple(sl.judged_iteration[jr.judged_slice(index)].tolist()))
