"""Plots of evaluation results with matplotlib: curves over cutoffs and recall levels, per-query differences,
score distributions, radar charts and the position sensitivity of metrics.

Every function returns a :class:`matplotlib.figure.Figure` built directly (never through ``pyplot``, so there is
no global state and no display is needed); :func:`save` writes PNG and SVG files, :func:`svg_text` and
:func:`png_bytes` give the bytes for an HTML report. The output is deterministic: the same figure gives the
same bytes on every run (no dates or software versions in the PNG metadata, fixed SVG ids, seeded bootstrap
resamples and jitter).

The numbers drawn are the ones :func:`gainscope.evaluate` computed: per-query values from
:meth:`Results.per_query` (NaN values, undefined and skipped, are left out) and aggregates from
``results[metric]``. Metric names in titles and legends are canonical (``nDCG@10``, ``IPrec@0.5``).

A figure's size does not grow with the number of queries: beyond :data:`BARS_MAX` queries the per-query
differences are one filled area instead of a bar per query, and beyond :data:`POINTS_MAX` values per run the
points of a distribution, like that area, are drawn as a bitmap (``rasterized``) inside the SVG, whose pixels
are set by the figure's size, not by the number of queries.

matplotlib is an optional dependency (``pip install 'gainscope[plots]'``); it is imported only when a figure
is built, and a :class:`~gainscope.errors.MissingDependencyError` says how to install it when it is missing.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from gainscope.core.judgments import Judgments
from gainscope.core.run import Run
from gainscope.errors import InputError, MetricError, MissingDependencyError, UnknownFormatError
from gainscope.evaluation import evaluate, resolve_metrics
from gainscope.metrics.base import Metric
from gainscope.metrics.names import parse_metric
from gainscope.results import Results
from gainscope.stats import bootstrap_cis, wins_ties_losses

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.projections.polar import PolarAxes

    from gainscope.core.policies import Policies

__all__ = [
    "COLORS",
    "FORMATS",
    "cutoff_curve",
    "cutoff_metrics",
    "delta_bars",
    "distributions",
    "finish_axes",
    "new_figure",
    "png_bytes",
    "position_sensitivity",
    "position_sensitivity_values",
    "pr_curves",
    "pr_metrics",
    "radar",
    "run_label",
    "save",
    "series_color",
    "svg_text",
]

#: Okabe & Ito's colour-blind-safe palette, yellow last (it is hard to see on white)
COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
POSITIVE, NEGATIVE, NEUTRAL = "#0072B2", "#D55E00", "#999999"
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", ":", "-.")  # lines of metrics that coincide (RR and AP in position sensitivity) stay visible
#: file formats :func:`save` writes, with the metadata that keeps their bytes reproducible
FORMATS = ("png", "svg")
_METADATA: dict[str, dict[str, Any]] = {"png": {"Software": None}, "svg": {"Date": None}}
DPI = 100
SVG_SALT = "gainscope"  # seeds the ids matplotlib gives clip paths and other SVG definitions
RECALL_LEVELS = tuple(i / 10 for i in range(11))
CI_LEVEL = 0.95
CI_RESAMPLES = 2000
CI_SEED = 0
JITTER_SEED = 0
LABEL_MAX = 28  # legend labels longer than this are shortened in the middle
TICK_LABELS_MAX = 40  # query ids are written under delta bars up to this many queries
BARS_MAX = 500  # a bar per query up to this many; beyond, the sorted differences as one rasterised filled area
POINTS_MAX = 1000  # the points of a distribution are vector marks up to this many per run; beyond, rasterised

CURVE_SIZE = (7.0, 4.5)
RADAR_SIZE = (6.5, 6.5)


# ------------------------------------------------------------------------------------------------ helpers
def new_figure(size: tuple[float, float]) -> Figure:
    """An empty figure with constrained layout (matplotlib imported here, and only here)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError("plots need matplotlib; install it with: pip install 'gainscope[plots]'") \
            from None
    return Figure(figsize=size, dpi=DPI, layout="constrained")


def series_color(i: int) -> str:
    return COLORS[i % len(COLORS)]


def run_label(name: str) -> str:
    """A run name for a legend, shortened in the middle when it is long."""
    if len(name) <= LABEL_MAX:
        return name
    half = (LABEL_MAX - 1) // 2
    return name[:half] + "…" + name[-half:]


def _canonical(metric: str | Metric) -> str:
    """The canonical name of one metric, given in any spelling ``evaluate`` accepts (``map`` -> ``AP``)."""
    found = resolve_metrics(metric)
    if len(found) != 1:
        raise MetricError(f"{metric!r} names {len(found)} metrics ({', '.join(map(str, found))}); give one")
    return str(found[0])


def _defined(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """The values that are not NaN (undefined values the ``undefined="skip"`` policy left out)."""
    v = np.asarray(values, dtype=np.float64)
    return v[~np.isnan(v)]


def _column(results: Results, metric: str) -> np.ndarray:
    return np.fromiter(results.per_query(metric).values(), dtype=np.float64)


def _queries_text(results: Sequence[Results], metrics: Sequence[str]) -> str:
    """``"6 queries"``, or ``"5-6 queries"`` when runs or metrics have different numbers of defined values."""
    counts = sorted({len(_defined(_column(r, m))) for r in results for m in metrics})
    span = str(counts[0]) if len(counts) == 1 else f"{counts[0]}\N{EN DASH}{counts[-1]}"
    return f"{span} quer{'y' if counts == [1] else 'ies'}"


def _check_results(results: Sequence[Results]) -> list[Results]:
    runs = list(results)
    if not runs:
        raise InputError("nothing to plot: pass the Results of at least one run")
    return runs


def finish_axes(ax: Axes, *, title: str, xlabel: str, ylabel: str, legend: bool = True) -> None:
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if legend:
        ax.legend(loc="best", fontsize="small")


# ------------------------------------------------------------------------------------------------ curves
def _template(family: str, at: str) -> Metric:
    """The metric ``family@1`` (``nDCG`` -> ``nDCG@1``), checked to be a family whose ``@`` value is ``at``."""
    if "@" in family:
        raise MetricError(f"a family is a metric name without its '@' value, e.g. 'nDCG' or "
                          f"'nDCG(gain=exponential)'; got {family!r}")
    try:
        metric = parse_metric(f"{family.strip()}@1")
    except MetricError as exc:
        raise MetricError(f"{family!r} is not a metric family with a{'n' if at[0] in 'aeiou' else ''} {at}: "
                          f"{exc}") from None
    if type(metric).at_param() != at:
        raise MetricError(f"{type(metric).name}'s '@' value is not a {at}; a {at} curve needs a family such as "
                          f"{'nDCG, P, R or RR' if at == 'cutoff' else 'IPrec'}")
    return metric


def _family_name(template: Metric) -> str:
    """The canonical name of a family: its template's name without the ``@`` value (``P(rel=2)@1`` -> ``P(rel=2)``)."""
    return str(template).rsplit("@", 1)[0]


def _with(metric: Metric, at: str, value: Any) -> Metric:
    """``metric`` with its ``@`` parameter ``at`` set to ``value`` (validated as when parsed)."""
    return replace(metric, **{at: value})


def _points(results: Sequence[Results], template: Metric, at: str) -> list[tuple[float, str]]:
    """``(value of at, metric name)`` for every metric evaluated in all ``results`` that is ``template`` with
    another ``at`` value (same class, same other parameters), sorted by the value."""
    common = set.intersection(*(set(r.metric_names) for r in results))
    found = {float(getattr(m, at)): str(m) for m in results[0].metrics
             if str(m) in common and type(m) is type(template) and _with(m, at, getattr(template, at)) == template}
    return sorted(found.items())


def _intervals(columns: Sequence[np.ndarray]) -> list[tuple[float, float]]:
    """Seeded percentile bootstrap interval of the mean of each column's defined values (NaN when fewer than 2),
    all from one pass over the resamples (:func:`gainscope.stats.bootstrap_cis`)."""
    defined = [_defined(c) for c in columns]
    enough = [v for v in defined if len(v) >= 2]
    found = iter(bootstrap_cis(enough, level=CI_LEVEL, resamples=CI_RESAMPLES, seed=CI_SEED) if enough else [])
    return [next(found) if len(v) >= 2 else (math.nan, math.nan) for v in defined]


def _curves(results: Sequence[Results], points: Sequence[tuple[float, str]], *, band: bool) -> tuple[Figure, Axes]:
    """One line per run through the aggregates of the metrics in ``points``, with a bootstrap band if asked."""
    fig = new_figure(CURVE_SIZE)
    ax = fig.add_subplot()
    xs = [x for x, _ in points]
    for i, r in enumerate(results):
        ax.plot(xs, [r[name] for _, name in points], marker=MARKERS[i % len(MARKERS)], color=series_color(i),
                label=run_label(r.run_name))
        if band:
            low, high = zip(*_intervals([_column(r, name) for _, name in points]), strict=True)
            ax.fill_between(xs, low, high, color=series_color(i), alpha=0.18, linewidth=0)
    ax.set_xticks(xs)
    return fig, ax


def cutoff_metrics(family: str, ks: Sequence[int]) -> list[str]:
    """The canonical names of ``family`` at each cutoff: ``cutoff_metrics("nDCG", [1, 5])`` is
    ``["nDCG@1", "nDCG@5"]``; other parameters are kept (``"P(rel=2)"`` gives ``P(rel=2)@1`` ...)."""
    template = _template(family, "cutoff")
    return [str(_with(template, "cutoff", k)) for k in ks]


def cutoff_curve(results: Sequence[Results], family: str) -> Figure:
    """Metric versus cutoff: the aggregate (mean over queries) of ``family@k`` for every cutoff ``k`` the
    results hold (metrics of the family's class with the same other parameters; evaluate the names
    :func:`cutoff_metrics` gives), one line per run.

    The shaded band is a 95% percentile bootstrap interval of the mean over queries (2,000 resamples, seed 0,
    :func:`gainscope.stats.bootstrap_ci`); it is drawn only for metrics aggregated by the mean (not GMAP).
    Raises MetricError when the results hold fewer than 2 cutoffs of the family.
    """
    runs = _check_results(results)
    template = _template(family, "cutoff")
    points = _points(runs, template, "cutoff")
    label = _family_name(template)
    if len(points) < 2:
        held = ", ".join(name for _, name in points) or "none"
        raise MetricError(f"a cutoff curve of {label} needs at least 2 cutoffs in the results; found {held}. "
                          f"Evaluate for example cutoff_metrics({family!r}, [1, 3, 5, 10, 20])")
    how = template.aggregate
    fig, ax = _curves(runs, points, band=how == "mean")
    band = ", 95% bootstrap interval" if how == "mean" else ""
    finish_axes(ax, title=f"{label}@k: {how} over {_queries_text(runs, [n for _, n in points])}{band}",
            xlabel="cutoff k", ylabel=f"{how} {label}@k")
    return fig


def pr_metrics(family: str = "IPrec") -> list[str]:
    """The 11 canonical names of interpolated precision at recall 0.0, 0.1, ..., 1.0: ``IPrec@0``,
    ``IPrec@0.1``, ..., ``IPrec@1`` (``family`` may carry parameters, e.g. ``"IPrec(rel=2)"``)."""
    template = _template(family, "recall")
    return [str(_with(template, "recall", level)) for level in RECALL_LEVELS]


def pr_curves(results: Sequence[Results], family: str = "IPrec") -> Figure:
    """Interpolated precision-recall curves: the mean over queries of ``IPrec@r`` (the highest precision at
    any rank whose recall is at least ``r``, as trec_eval's ``iprec_at_recall``) at every recall level the
    results hold (evaluate :func:`pr_metrics`), one line per run. Raises MetricError with fewer than 2 levels."""
    runs = _check_results(results)
    template = _template(family, "recall")
    label = _family_name(template)
    points = _points(runs, template, "recall")
    if len(points) < 2:
        raise MetricError(f"precision-recall curves need at least 2 recall levels of {label} in the results; "
                          f"found {len(points)}. Evaluate pr_metrics() ({', '.join(pr_metrics(family)[:3])}, ...)")
    fig, ax = _curves(runs, points, band=False)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    finish_axes(ax, title=f"Interpolated precision-recall ({label}@r): mean over "
                      f"{_queries_text(runs, [n for _, n in points])}",
            xlabel="recall r", ylabel="interpolated precision")
    return fig


# ------------------------------------------------------------------------------------------------ deltas
def _find_run(runs: Sequence[Results], name: str) -> Results:
    matches = [r for r in runs if r.run_name == name]
    if len(matches) != 1:
        names = ", ".join(repr(r.run_name) for r in runs)
        problem = "no run is named" if not matches else f"{len(matches)} runs are named"
        raise InputError(f"{problem} {name!r}; the runs are {names}. Pass one of them as the baseline "
                         "(run names come from the run files' tag column or the name given to Run)")
    return matches[0]


def _defined_by_query(results: Results, metric: str) -> dict[str, float]:
    return {q: v for q, v in results.per_query(metric).items() if not math.isnan(v)}


def _delta_panel(ax: Axes, run: Results, base: Results, metric: str) -> None:
    """Bars of ``run - base`` per query, over the queries both define, sorted from the largest gain."""
    a, b = _defined_by_query(run, metric), _defined_by_query(base, metric)
    ids = [q for q in base.query_ids if q in a and q in b]
    if not ids:
        raise InputError(f"{run.run_name!r} and {base.run_name!r} share no query with a defined {metric} value")
    ours, theirs = np.array([a[q] for q in ids]), np.array([b[q] for q in ids])
    delta = ours - theirs
    order = np.argsort(-delta, kind="stable")
    x, y = np.arange(len(ids)), delta[order]
    if len(ids) <= BARS_MAX:
        colors = [POSITIVE if d > 0 else NEGATIVE if d < 0 else NEUTRAL for d in y]
        ax.bar(x, y, color=colors)
    else:  # the same sorted differences, as an area whose size does not depend on the number of queries
        for where, color in ((y > 0, POSITIVE), (y < 0, NEGATIVE)):
            ax.fill_between(x, y, 0.0, where=where, step="mid", color=color, linewidth=0, rasterized=True)
        ax.set_xlim(-0.5, len(ids) - 0.5)
    ax.axhline(0.0, color="black", linewidth=0.8)
    if len(ids) <= TICK_LABELS_MAX:
        ax.set_xticks(np.arange(len(ids)), [ids[i] for i in order], rotation=60, ha="right", fontsize="small")
    else:
        ax.set_xticks([])
    wins, ties, losses = wins_ties_losses(ours, theirs)
    lines = [f"{run_label(run.run_name)} \N{MINUS SIGN} {run_label(base.run_name)}, {len(ids)} queries",
             f"mean Δ {delta.mean():+.4f}, wins/ties/losses {wins}/{ties}/{losses}"]
    if len(ids) < max(len(a), len(b)):
        lines.append(f"paired by query id: {len(ids)} of {len(a)} ({run_label(run.run_name)}) "
                     f"and {len(b)} ({run_label(base.run_name)})")
    finish_axes(ax, title="\n".join(lines), xlabel="query (sorted by difference)", ylabel=f"Δ {metric}", legend=False)


def delta_bars(results: Sequence[Results], baseline: str, metric: str) -> Figure:
    """Per-query differences against a baseline: one panel per other run, a bar per query of
    ``run - baseline`` for ``metric``, sorted from the largest gain to the largest loss (gains blue, losses
    orange-red, ties grey). Beyond :data:`BARS_MAX` paired queries the same sorted differences are one filled
    area (gains blue, losses orange-red), drawn as a bitmap. The panel title gives the mean difference and the
    wins/ties/losses (:func:`gainscope.stats.wins_ties_losses`).

    Queries are paired by query id: those where both runs have a defined (non-NaN) value. When that leaves
    out queries of either run, the panel says how many were paired. Raises InputError for an unknown or
    ambiguous baseline name, or when no run besides the baseline is given.
    """
    runs = _check_results(results)
    name = _canonical(metric)
    base = _find_run(runs, baseline)
    others = [r for r in runs if r is not base]
    if not others:
        raise InputError(f"per-query differences need a run besides the baseline {baseline!r}")
    fig = new_figure((min(12.0, max(7.0, 0.25 * len(base.query_ids) + 2)), 3.8 * len(others) + 0.4))
    for ax, run in zip(fig.subplots(len(others), 1, squeeze=False)[:, 0], others, strict=True):
        _delta_panel(ax, run, base, name)
    fig.suptitle(f"{name}: per-query difference against {run_label(base.run_name)}")
    return fig


# ------------------------------------------------------------------------------------------------ distributions
def _jitter(n: int) -> np.ndarray:
    """Horizontal offsets for ``n`` points, the same on every call."""
    return np.random.default_rng(JITTER_SEED).uniform(-0.12, 0.12, n)


def distributions(results: Sequence[Results], metric: str) -> Figure:
    """The per-query values of ``metric`` for each run: a box (quartiles, whiskers at 1.5 IQR) with every
    query's value as a point (jittered sideways by a seeded generator; drawn as a bitmap beyond
    :data:`POINTS_MAX` values) and the mean as a black diamond. Undefined (NaN) values are left out; a run with
    no defined value is an InputError."""
    runs = _check_results(results)
    name = _canonical(metric)
    data = [_defined(_column(r, name)) for r in runs]
    for r, values in zip(runs, data, strict=True):
        if not len(values):
            raise InputError(f"{r.run_name!r} has no defined {name} value to plot")
    fig = new_figure((max(5.0, 1.3 * len(runs) + 2.5), 4.8))
    ax = fig.add_subplot()
    boxes = ax.boxplot(data, tick_labels=[run_label(r.run_name) for r in runs], widths=0.5, patch_artist=True,
                       showfliers=False, showmeans=True,
                       meanprops={"marker": "D", "markerfacecolor": "black", "markeredgecolor": "black"},
                       medianprops={"color": "black"})
    for i, (box, values) in enumerate(zip(boxes["boxes"], data, strict=True)):
        box.set(facecolor=series_color(i), alpha=0.35)
        ax.scatter(i + 1 + _jitter(len(values)), values, s=16, color=series_color(i), zorder=3, linewidths=0,
                   rasterized=len(values) > POINTS_MAX)
    ax.plot([], [], "D", color="black", label="mean")
    finish_axes(ax, title=f"{name} per query ({_queries_text(runs, [name])})", xlabel="run", ylabel=name)
    return fig


# ------------------------------------------------------------------------------------------------ radar
def radar(results: Sequence[Results], metrics: Sequence[str]) -> Figure:
    """A polar chart of several metrics' aggregates (means over queries) per run: one spoke per metric, one
    closed, filled line per run. The radius runs from 0 to 1 (further when an aggregate exceeds 1). Needs at
    least 3 distinct metrics (MetricError otherwise)."""
    runs = _check_results(results)
    names = list(dict.fromkeys(_canonical(m) for m in metrics))
    if len(names) < 3:
        raise MetricError(f"a radar chart needs at least 3 metrics; got {len(names)}: {', '.join(names) or 'none'}")
    fig = new_figure(RADAR_SIZE)
    ax = cast("PolarAxes", fig.add_subplot(projection="polar"))
    ax.set_theta_offset(math.pi / 2)
    ax.set_theta_direction(-1)
    angles = np.linspace(0, 2 * math.pi, len(names), endpoint=False)
    closed = np.append(angles, angles[0])
    top = 1.0
    for i, r in enumerate(runs):
        values = [r[n] for n in names]
        top = max([top, *(v for v in values if not math.isnan(v))])
        ax.plot(closed, [*values, values[0]], marker="o", color=series_color(i), label=run_label(r.run_name))
        ax.fill(closed, [*values, values[0]], color=series_color(i), alpha=0.15)
    ax.set_xticks(angles, names)
    ax.set_ylim(0, top)
    ax.set_title(f"Aggregates over {_queries_text(runs, names)}", pad=18)
    fig.legend(loc="outside lower center", ncols=min(len(runs), 3), fontsize="small")
    return fig


# ------------------------------------------------------------------------------------------------ sensitivity
def position_sensitivity_values(metrics: Sequence[str], depth: int = 10, grade: float = 1, *,
                                policies: Policies | None = None) -> dict[str, list[float]]:
    """Each metric's value when a single relevant document sits at position ``p = 1 .. depth``.

    For every position ``p`` a query ``p<p>`` is judged with one relevant document (``grade``) and ``depth - 1``
    documents judged 0, and ranked with the relevant document at ``p`` (scores ``depth`` down to 1, no ties);
    all positions are evaluated by :func:`gainscope.evaluate` in one call (queries are independent). Returns
    ``{canonical metric name: [value at p = 1, ..., value at p = depth]}``.
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise InputError(f"depth must be an int >= 1; got {depth!r}")
    if isinstance(grade, bool) or not isinstance(grade, int | float) or not grade > 0 or not math.isfinite(grade):
        raise InputError(f"grade must be a finite number > 0 (the relevant document's grade); got {grade!r}")
    others = [f"nonrel-{i:03d}" for i in range(1, depth)]
    judgments = {f"p{p}": {"relevant": grade, **dict.fromkeys(others, 0)} for p in range(1, depth + 1)}
    rankings: dict[str, dict[str, float]] = {}
    for p in range(1, depth + 1):
        order = [*others[: p - 1], "relevant", *others[p - 1:]]
        rankings[f"p{p}"] = {doc: float(depth - i) for i, doc in enumerate(order)}
    results = evaluate(Judgments.from_dict(judgments), Run.from_dict(rankings, name="sensitivity"), list(metrics),
                       policies=policies)
    return {name: [results.per_query(name)[f"p{p}"] for p in range(1, depth + 1)] for name in results.metric_names}


def position_sensitivity(metrics: Sequence[str], depth: int = 10, grade: float = 1, *,
                         policies: Policies | None = None) -> Figure:
    """How each metric falls as the only relevant document moves down the ranking: one line per metric over
    positions 1 .. ``depth``, with the values gainscope computes (:func:`position_sensitivity_values`)."""
    values = position_sensitivity_values(metrics, depth, grade, policies=policies)
    fig = new_figure(CURVE_SIZE)
    ax = fig.add_subplot()
    positions = list(range(1, depth + 1))
    for i, (name, ys) in enumerate(values.items()):
        ax.plot(positions, ys, marker=MARKERS[i % len(MARKERS)], linestyle=LINESTYLES[i % len(LINESTYLES)],
                color=series_color(i), label=name)
    ax.set_xticks(positions)
    finish_axes(ax, title=f"Position sensitivity: 1 relevant document (grade {grade:g}) of {depth} judged",
            xlabel="position of the relevant document", ylabel="value")
    return fig


# ------------------------------------------------------------------------------------------------ output
def _render(fig: Figure, fmt: str) -> bytes:
    """The bytes of ``fig`` as PNG (Agg) or SVG, at 100 dpi, without dates or versions that would vary."""
    if fmt not in FORMATS:
        raise UnknownFormatError(f"plots are written as {' or '.join(FORMATS)}; got {fmt!r}")
    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": SVG_SALT}):
        fig.savefig(buffer, format=fmt, dpi=DPI, metadata=_METADATA[fmt])
    return buffer.getvalue()


def save(fig: Figure, stem: Path | str, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Write ``stem.png`` and/or ``stem.svg`` (``formats``); returns the paths written. The pixel size of the
    PNG is the figure size in inches times 100."""
    stem = Path(stem)
    paths = []
    for fmt in dict.fromkeys(formats):
        data = _render(fig, fmt)
        path = stem.with_name(f"{stem.name}.{fmt}")  # not with_suffix: a stem may hold a dot (IPrec@0.5)
        path.write_bytes(data)
        paths.append(path)
    return paths


def svg_text(fig: Figure) -> str:
    """The figure as an ``<svg>`` element to place inline in HTML (the XML declaration and DOCTYPE that a
    standalone file has are left out)."""
    text = _render(fig, "svg").decode("utf-8")
    return text[text.index("<svg"):]


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG bytes (for a ``data:image/png;base64,...`` URL)."""
    return _render(fig, "png")
