"""Compare systems: per-system means with bootstrap intervals, and paired tests of each system against a baseline.

For each metric ``m`` and each system ``s`` other than the baseline ``b``, over the queries ``Q`` that both have
a value for (queries are paired by id; see *Pairing* below):

* ``delta = mean_{q in Q} (s_q - b_q)``, with a bootstrap interval of the mean difference;
* paired tests of ``H0: no difference`` (two-sided, :mod:`gainscope.stats`): Student's t, Wilcoxon signed-rank,
  Fisher's randomisation (sign-flip) test and the paired bootstrap test;
* the p-values of each test are corrected for multiple comparisons over *every* comparison of the report
  (all metrics times all systems): Holm by default, Bonferroni or Benjamini-Hochberg on request;
* the effect size ``d_z = mean(d) / sd(d)`` and wins / ties / losses over the paired queries.

A comparison is *significant* when the corrected p-value of the ``significance`` test (paired t by default, as
ranx; Smucker, Allan & Carterette 2007 found t, randomisation and bootstrap to agree) is below ``alpha``.

Pairing. Every system is evaluated with the same judgments and policies, so by default (``missing_queries =
"zero"``, trec_eval ``-c``) every system has a value for every judged query and the pairs are complete. With
``missing_queries="skip"`` a system has no value for a judged query it did not rank, and with
``undefined="skip"`` no value where the metric is undefined: such queries cannot be paired and are left out of
that comparison. The number of paired queries is reported with every comparison, and a note names the queries
left out, so a delta is never computed over silently different query sets.

>>> import gainscope
>>> qrels = gainscope.Judgments.from_dict({"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}})
>>> base = gainscope.Run.from_dict({"q1": {"x": 2, "a": 1}, "q2": {"b": 1}, "q3": {"x": 2, "c": 1}}, name="base")
>>> new = gainscope.Run.from_dict({"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}, name="new")
>>> table = compare(qrels, [base, new], "RR")
>>> row = table.row("RR", "new")
>>> row.delta, row.wins_ties_losses
(0.3333333333333333, (2, 1, 0))
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from gainscope import stats
from gainscope.core.policies import Policies
from gainscope.core.run import run_list
from gainscope.errors import InputError, PolicyError, format_ids, option, spell
from gainscope.evaluation import MetricsArg, evaluate_runs
from gainscope.metrics.profiles import Profile
from gainscope.results import Results

__all__ = ["CORRECTION_NAMES", "TESTS", "CompareSettings", "Comparison", "ComparisonRow", "SystemValues", "compare",
           "compare_results", "compare_values"]

#: test keys, in display order, and the :mod:`gainscope.stats` test each runs
TESTS: dict[str, str] = {"t": "paired t", "wilcoxon": "Wilcoxon signed-rank", "randomization":
                         "Fisher randomisation", "bootstrap": "paired bootstrap"}


@dataclass(frozen=True)
class CompareSettings:
    """How a comparison is computed; echoed with every report.

    ``tests``: the paired tests to run (keys of :data:`TESTS`). ``significance``: the test whose corrected
    p-value decides significance. ``correction``: ``holm``, ``bonferroni``, ``bh`` or ``none``, over all
    comparisons of the report. ``ci_method``: ``percentile`` or ``bca`` bootstrap intervals at ``level``.
    ``resamples`` and ``seed`` drive every resampling (intervals, randomisation and bootstrap tests).
    """

    tests: tuple[str, ...] = tuple(TESTS)
    significance: str = "t"
    correction: str = "holm"
    alpha: float = 0.05
    level: float = 0.95
    ci_method: str = "percentile"
    resamples: int = 10000
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = [t for t in self.tests if t not in TESTS]
        if unknown or not self.tests:
            raise PolicyError(f"unknown test {unknown[0]!r}; the tests are: {', '.join(TESTS)}" if unknown
                              else "name at least one test: " + ", ".join(TESTS))
        if len(set(self.tests)) != len(self.tests):
            raise PolicyError(f"{option('tests', ..., cli='--test')} names a test twice: {', '.join(self.tests)}")
        if self.significance not in self.tests:
            raise PolicyError(f"the significance test {self.significance!r} must be one of the tests run: "
                              f"{', '.join(self.tests)}")
        stats._choice(self.correction, "correction", stats.CORRECTIONS)
        stats._choice(self.ci_method, "bootstrap interval method", stats.CI_METHODS)
        stats.check_fraction(self.alpha, "alpha")
        stats.check_fraction(self.level, "level")
        stats._count(self.resamples, "resamples", 1)
        stats._count(self.seed, "seed", 0)

    def describe(self) -> list[tuple[str, str]]:
        """``(name, text)`` pairs for rendering next to the results."""
        pct = f"{self.level * 100:g}%"
        return [
            ("intervals", f"{pct} bootstrap ({self.ci_method}), {self.resamples} resamples, seed {self.seed}"),
            ("tests", ", ".join(TESTS[t] for t in self.tests) + " (paired, two-sided)"),
            ("correction", f"{CORRECTION_NAMES[self.correction]} over all comparisons of the report"),
            ("significance", f"corrected p of the {TESTS[self.significance]} test < {self.alpha:g}"),
        ]


#: display names of the corrections
CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", "none": "no"}


@dataclass(frozen=True)
class ComparisonRow:
    """One system under one metric; the comparison fields are None for the baseline itself."""

    metric: str
    run: str
    baseline: str
    queries: int
    mean: float
    ci_low: float
    ci_high: float
    paired: int | None = None
    #: the run's and the baseline's means over the paired queries (their means when every query is paired)
    paired_mean: float | None = None
    baseline_mean: float | None = None
    delta: float | None = None
    delta_ci_low: float | None = None
    delta_ci_high: float | None = None
    effect_size: float | None = None
    wins: int | None = None
    ties: int | None = None
    losses: int | None = None
    #: per test key: the statistic, the raw p-value and the corrected p-value
    statistic: dict[str, float] = field(default_factory=dict)
    p_value: dict[str, float] = field(default_factory=dict)
    p_corrected: dict[str, float] = field(default_factory=dict)
    significant: bool | None = None

    @property
    def is_baseline(self) -> bool:
        """True for the baseline's own row."""
        return self.run == self.baseline

    @property
    def wins_ties_losses(self) -> tuple[int, int, int] | None:
        """``(wins, ties, losses)`` against the baseline."""
        return None if self.wins is None else (self.wins, self.ties or 0, self.losses or 0)

    @property
    def relative_delta(self) -> float | None:
        """``delta / (baseline mean over the paired queries)``; None for the baseline row or a zero mean."""
        if self.delta is None or not self.baseline_mean:
            return None
        return self.delta / self.baseline_mean


@dataclass(frozen=True, eq=False)
class Comparison:
    """The comparison report: one :class:`ComparisonRow` per (metric, system), the settings, pairing notes and
    the evaluation conventions."""

    metrics: tuple[str, ...]
    runs: tuple[str, ...]
    baseline: str
    rows: tuple[ComparisonRow, ...]
    settings: CompareSettings
    policies: Policies
    notes: tuple[str, ...] = ()
    results: tuple[Results, ...] = ()

    def row(self, metric: str, run: str) -> ComparisonRow:
        """The row of ``run`` under ``metric`` (canonical or any accepted spelling of the metric)."""
        use = self.results[0].profile if self.results else None
        key = _canonical(metric, self.metrics, self.policies, use.profile if use else None)
        for r in self.rows:
            if r.metric == key and r.run == run:
                return r
        raise InputError(f"no run {run!r} in this comparison; the runs are: {', '.join(self.runs)}")

    @property
    def comparisons(self) -> list[ComparisonRow]:
        """The rows that compare a system with the baseline (every row but the baseline's)."""
        return [r for r in self.rows if not r.is_baseline]

    def to_records(self) -> list[dict[str, Any]]:
        """One flat dict per row: ``p_<test>`` / ``p_<test>_corrected`` / ``stat_<test>`` columns."""
        out = []
        for r in self.rows:
            rec = {k: v for k, v in asdict(r).items() if k not in ("statistic", "p_value", "p_corrected")}
            for t in self.settings.tests:
                rec[f"stat_{t}"] = r.statistic.get(t)
                rec[f"p_{t}"] = r.p_value.get(t)
                rec[f"p_{t}_corrected"] = r.p_corrected.get(t)
            out.append(rec)
        return out

    def to_polars(self) -> Any:
        """The rows as a polars DataFrame (one row per metric and system)."""
        import polars as pl

        records = self.to_records()
        return pl.DataFrame(records, schema=_schema(self.settings.tests), orient="row") if records else \
            pl.DataFrame(schema=_schema(self.settings.tests))

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            from gainscope.errors import MissingDependencyError

            raise MissingDependencyError("to_pandas needs pandas; install it with: pip install pandas") from None
        return pd.DataFrame.from_records(self.to_records(), columns=list(_schema(self.settings.tests)))

    def to_dict(self) -> dict[str, Any]:
        """Plain data: settings, rows, notes and the evaluation policies (NaN as None)."""
        return {"metrics": list(self.metrics), "runs": list(self.runs), "baseline": self.baseline,
                "settings": asdict(self.settings), "rows": [_jsonable(r) for r in self.to_records()],
                "policies": self.policies.as_dict(), "notes": [spell(n) for n in self.notes]}

    def to_json(self, **kwargs: Any) -> str:
        """JSON text of :meth:`to_dict`."""
        return json.dumps(self.to_dict(), **kwargs)


def _schema(tests: Sequence[str]) -> dict[str, Any]:
    import polars as pl

    schema: dict[str, Any] = {
        "metric": pl.String, "run": pl.String, "baseline": pl.String, "queries": pl.Int64, "mean": pl.Float64,
        "ci_low": pl.Float64, "ci_high": pl.Float64, "paired": pl.Int64, "paired_mean": pl.Float64,
        "baseline_mean": pl.Float64,
        "delta": pl.Float64,
        "delta_ci_low": pl.Float64, "delta_ci_high": pl.Float64, "effect_size": pl.Float64, "wins": pl.Int64,
        "ties": pl.Int64, "losses": pl.Int64, "significant": pl.Boolean}
    for t in tests:
        schema[f"stat_{t}"] = pl.Float64
        schema[f"p_{t}"] = pl.Float64
        schema[f"p_{t}_corrected"] = pl.Float64
    return schema


def _jsonable(rec: dict[str, Any]) -> dict[str, Any]:
    """NaN and infinite values (an effect size when every difference is equal) become None."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in rec.items()}


def _canonical(metric: str, known: Sequence[str], policies: Policies, profile: Profile | None) -> str:
    """The compared metric's name for any spelling of it, resolved as the evaluation resolved names."""
    if metric in known:
        return metric
    from gainscope.errors import MetricError
    from gainscope.metrics.resolve import resolve_metrics

    found = [str(m) for m in resolve_metrics(metric, profile=profile, policies=policies)]
    if len(found) != 1 or found[0] not in known:
        raise MetricError(f"{metric!r} is not among the compared metrics: {', '.join(known)}")
    return found[0]


# ---------------------------------------------------------------------------------------------- computing
def compare(judgments: Any, runs: Sequence[Any], metrics: MetricsArg = ("nDCG@10", "AP", "RR", "P@10"), *,
            baseline: str | None = None, names: Sequence[str] | None = None,
            settings: CompareSettings | None = None, policies: Policies | None = None,
            profile: str | Profile | None = None, **policy_kwargs: Any) -> Comparison:
    """Evaluate ``runs`` (at least two) against ``judgments`` and compare each with the baseline.

    ``runs`` are :class:`~gainscope.Run` objects or anything the readers accept; ``names`` overrides their
    names (which must be unique). ``baseline`` is a run name (default: the first run). ``settings`` set the
    tests, correction and bootstrap; ``policies`` / ``profile`` / ``**policy_kwargs`` the evaluation
    conventions, as for :func:`~gainscope.evaluate`.

    The new run finds q2's relevant document at rank 1 instead of 2: RR 1 instead of 1/2 there, the same on q1,
    so the mean paired difference is (0 + 1/2) / 2 = 0.25, with one win and one tie:

    >>> import gainscope
    >>> qrels = gainscope.Judgments.from_dict({"q1": {"d1": 1}, "q2": {"d4": 1}})
    >>> base = gainscope.Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0}, "q2": {"d5": 2.0, "d4": 1.0}}, name="base")
    >>> new = gainscope.Run.from_dict({"q1": {"d1": 3.0}, "q2": {"d4": 2.0}}, name="new")
    >>> table = gainscope.compare(qrels, [base, new], ["RR"])
    >>> table.baseline, table.row("RR", "new").delta, table.row("RR", "new").wins_ties_losses
    ('base', 0.25, (1, 1, 0))
    """
    runs = run_list(runs)
    if len(runs) < 2:
        raise InputError(f"a comparison needs at least two runs; got {len(runs)}")
    results = evaluate_runs(judgments, runs, metrics, policies=policies, profile=profile, **policy_kwargs)
    if names is not None:
        if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
            raise InputError(f"names takes one non-empty name per run, e.g. names=['bm25', 'dense']; got {names!r}")
        if len(names) != len(results):
            raise InputError(f"{len(names)} names for {len(results)} runs; give one name per run")
        results = [_renamed(r, n) for r, n in zip(results, names, strict=True)]
    return compare_results(results, baseline=baseline, settings=settings)


def _renamed(r: Results, name: str) -> Results:
    return replace(r, run_name=name)


@dataclass(frozen=True)
class SystemValues:
    """One system's per-query values for :func:`compare_values`: ``values[i, j]`` is metric ``j`` on
    ``query_ids[i]``; NaN means no value (the query is left out of that metric's mean and pairings)."""

    name: str
    query_ids: tuple[str, ...]
    values: np.ndarray


def compare_results(results: Sequence[Results], *, baseline: str | None = None,
                    settings: CompareSettings | None = None) -> Comparison:
    """Compare already evaluated runs (same metrics and policies, unique run names)."""
    if len(results) < 2:
        raise InputError(f"a comparison needs at least two runs; got {len(results)}")
    metric_names = results[0].metric_names
    not_means = [str(m) for m in results[0].metrics if m.aggregate == "gmean"]
    if not_means:
        raise PolicyError(f"{', '.join(not_means)} {'is' if len(not_means) == 1 else 'are'} aggregated by a geometric "
                          "mean; compare reports and tests arithmetic means of per-query values, which for these "
                          "metrics would be another metric's number under their name. Compare the per-query "
                          "metric instead (AP for GMAP, Bpref for GMBpref), or use evaluate for the geometric mean")
    for r in results[1:]:
        if r.metric_names != metric_names or r.policies != results[0].policies:
            raise InputError(f"run {r.run_name!r} was evaluated with other metrics or policies than "
                             f"{results[0].run_name!r}; compare results of one evaluation")
    c = compare_values(metric_names, [SystemValues(r.run_name, r.query_ids, r.values) for r in results],
                       baseline=baseline, settings=settings, policies=results[0].policies)
    by_name = {r.run_name: r for r in results}
    return replace(c, results=tuple(by_name[n] for n in c.runs))


def compare_values(metrics: Sequence[str], systems: Sequence[SystemValues], *, baseline: str | None = None,
                   settings: CompareSettings | None = None, policies: Policies | None = None) -> Comparison:
    """Compare systems given as per-query values (any producer of values: gainscope's metrics, temporal
    metrics, agent metrics). ``policies`` are echoed with the report. See the module docstring. A single system
    gives its means and intervals only."""
    settings = settings or CompareSettings()
    if not systems:
        raise InputError("nothing to compare: no system given")
    names = [s.name for s in systems]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"two runs are named {dup[0]!r}; runs are told apart by name. Give each a unique name "
                         f"({option('names', ..., cli='--name')})")
    base_name = names[0] if baseline is None else baseline
    if base_name not in names:
        raise InputError(f"the baseline {base_name!r} is not among the runs: {', '.join(names)}")
    base = systems[names.index(base_name)]
    order = [base] + [s for s in systems if s is not base]
    rows: list[ComparisonRow] = []
    finite: list[np.ndarray] = []  # per row: the defined values
    pairs: list[tuple[int, np.ndarray, np.ndarray]] = []  # per comparison: its row, the run's and the baseline's
    notes: list[str] = []
    for j, metric in enumerate(metrics):
        for system in order:
            values = system.values[:, j]
            defined = values[~np.isnan(values)]
            rows.append(ComparisonRow(metric=metric, run=system.name, baseline=base_name, queries=len(defined),
                                      mean=float(defined.mean()) if len(defined) else math.nan, ci_low=math.nan,
                                      ci_high=math.nan))
            finite.append(defined)
            if system is not base:
                a, b, note = _paired(system, base, j, metric)
                if note:
                    notes.append(note)
                pairs.append((len(rows) - 1, a, b))
    _fill_statistics(rows, finite, pairs, settings)
    return Comparison(metrics=tuple(metrics), runs=tuple(s.name for s in order), baseline=base_name, rows=tuple(rows),
                      settings=settings, policies=policies or Policies(), notes=tuple(notes))


def _fill_statistics(rows: list[ComparisonRow], finite: list[np.ndarray],
                     pairs: list[tuple[int, np.ndarray, np.ndarray]], settings: CompareSettings) -> None:
    """Put in ``rows`` the intervals of every row, and the delta, its interval, the tests (corrected), the effect
    size and wins/ties/losses of every comparison. The resampling statistics of all of them are computed together
    (:func:`gainscope.stats.bootstrap`, :func:`gainscope.stats.randomizations`): the vectors of one length share
    one pass over the draws, and each gets the numbers it would get alone."""
    with_ci = [i for i, x in enumerate(finite) if len(x) >= 2]
    tested = [k for k, (_, a, _) in enumerate(pairs) if len(a) >= 2]  # fewer than 2 pairs: nothing to test
    differences = [pairs[k][1] - pairs[k][2] for k in tested]
    intervals, boot = stats.bootstrap([finite[i] for i in with_ci] + differences,
                                      differences if "bootstrap" in settings.tests else [], level=settings.level,
                                      resamples=settings.resamples, seed=settings.seed, method=settings.ci_method)
    for i, (low, high) in zip(with_ci, intervals, strict=False):
        rows[i] = _with(rows[i], ci_low=low, ci_high=high)
    randomized = stats.randomizations(differences, resamples=settings.resamples, seed=settings.seed) \
        if "randomization" in settings.tests else []
    pending: list[tuple[ComparisonRow, dict[str, stats.TestResult]]] = \
        [(_compared(rows[row], a, b), {}) for row, a, b in pairs]
    for slot, k in enumerate(tested):
        _, a, b = pairs[k]
        low, high = intervals[len(with_ci) + slot]
        results = {}
        for test in settings.tests:
            if test == "t":
                results[test] = stats.paired_t(a, b)
            elif test == "wilcoxon":
                results[test] = stats.wilcoxon(a, b)
            else:
                results[test] = (randomized if test == "randomization" else boot)[slot]
        pending[k] = (_with(pending[k][0], delta_ci_low=low, delta_ci_high=high), results)
    _correct(pending, settings)
    for (row, _, _), (compared, _) in zip(pairs, pending, strict=True):
        rows[row] = compared


def _paired(r: SystemValues, base: SystemValues, j: int, metric: str) -> tuple[np.ndarray, np.ndarray, str]:
    """The values of ``r`` and ``base`` on the queries both have a value for, in the baseline's query order,
    and a note naming the queries left out (empty when none is)."""
    va, vb = r.values[:, j], base.values[:, j]
    pos = {q: i for i, q in enumerate(r.query_ids)}
    ia = np.array([pos.get(q, -1) for q in base.query_ids], dtype=np.int64)
    a = np.where(ia >= 0, va[np.maximum(ia, 0)] if len(va) else np.nan, np.nan)
    keep = ~np.isnan(a) & ~np.isnan(vb)
    left_out = [q for q, k in zip(base.query_ids, keep.tolist(), strict=True) if not k]
    in_base = set(base.query_ids)
    only_run = [q for q in r.query_ids if q not in in_base]
    note = ""
    if left_out or only_run:
        dropped = left_out + only_run
        note = (f"{metric}: {r.name} vs {base.name}: {len(dropped)} quer"
                f"{'y' if len(dropped) == 1 else 'ies'} without a value in both runs left out of the pairing "
                f"({int(keep.sum())} paired): {format_ids(dropped)}")
    return a[keep], vb[keep], note


def _compared(row: ComparisonRow, a: np.ndarray, b: np.ndarray) -> ComparisonRow:
    """A comparison's descriptive numbers: the paired count and means, delta, effect size and wins/ties/losses
    (its interval and tests come from :func:`_fill_statistics`)."""
    n = len(a)
    if n < 2:  # nothing to test; the row says why (paired < 2) and the tests stay empty
        delta = float((a - b).mean()) if n else math.nan
        w = stats.wins_ties_losses(a, b) if n else (0, 0, 0)
        return _with(row, paired=n, paired_mean=float(a.mean()) if n else math.nan,
                     baseline_mean=float(b.mean()) if n else math.nan, delta=delta, wins=w[0], ties=w[1],
                     losses=w[2])
    wins, ties, losses = stats.wins_ties_losses(a, b, tol=stats.TOL)
    return _with(row, paired=n, paired_mean=float(a.mean()), baseline_mean=float(b.mean()),
                 delta=float((a - b).mean()), effect_size=stats.effect_size(a, b), wins=wins, ties=ties,
                 losses=losses)


def _with(row: ComparisonRow, **changes: Any) -> ComparisonRow:
    return replace(row, **changes)


def _correct(pending: list[tuple[ComparisonRow, dict[str, stats.TestResult]]], settings: CompareSettings) -> None:
    """Fill in corrected p-values and significance, per test over every comparison that could be tested."""
    tested = [i for i, (_, t) in enumerate(pending) if t]
    corrected: dict[str, np.ndarray] = {}
    for key in settings.tests:
        raw = [pending[i][1][key].p_value for i in tested]
        corrected[key] = stats.correct(raw, settings.correction) if raw else np.zeros(0)
    for slot, i in enumerate(tested):
        row, tests = pending[i]
        p_adj = {k: float(corrected[k][slot]) for k in settings.tests}
        pending[i] = (_with(row, statistic={k: tests[k].statistic for k in settings.tests},
                            p_value={k: tests[k].p_value for k in settings.tests}, p_corrected=p_adj,
                            significant=p_adj[settings.significance] < settings.alpha), tests)
