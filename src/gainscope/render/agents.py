"""The agent view (:class:`gainscope.agents.evaluate.AgentReport`) as text tables, JSON and CSV, and its curves over
iterations as figures.

* ``table``: one row per value at N over conversations (mean, median, interval of the mean, conversations with a
  value, conversations where it is undefined), a line saying how many conversations IterationsForAllGoodResults
  is aggregated over and how many were capped (left out), then the conventions. Per conversation (``per_conversation``):
  a table of every value of seed 003 at each iteration, the summary at N and the notes (unjudged, failed or
  missing grades; good results never all found; turns not evaluated).
* ``json``: :meth:`AgentReport.to_dict` (undefined values are ``null``).
* ``csv``: one long ("tidy") table, one value per row, with the columns :data:`CSV_COLUMNS`:

  ==================  ==========================================================================================
  ``scope``           ``aggregate``, ``conversation``, ``iteration`` or ``convention``
  ``conversation_id`` the conversation (empty for aggregates and conventions)
  ``query_id``        its query id (empty for aggregates and conventions)
  ``i``               the iteration, 1..N (``iteration`` rows only)
  ``metric``          the value's name: a value at N (``CG@N``, ``|R^N|``, ``IterationsForAllGoodResults``,
                      ``sDCG`` ...) for ``aggregate`` and ``conversation`` rows; a value at i (``CG@i``,
                      ``|Dup^i|`` ...) for ``iteration`` rows; for ``conversation`` rows also ``turn``,
                      ``unique_results``, ``all_good_found``, ``all_good_capped``, ``grades_ok`` /
                      ``_unjudged`` / ``_failed`` / ``_missing`` and ``note``; the convention's name for
                      ``convention`` rows
  ``statistic``       ``mean``, ``median``, ``ci_low``, ``ci_high`` (the bootstrap interval of the mean), ``n``
                      (conversations where the value is defined) or ``undefined`` (where it is not) for
                      ``aggregate`` rows, and for IterationsForAllGoodResults ``capped`` (conversations at the
                      cap, left out of its mean, median, interval and ``n``); ``value`` for ``conversation``
                      and ``iteration`` values; the note's
                      number (1, 2 ...) for notes; empty for conventions
  ``value``           the number (empty when undefined), ``true`` / ``false`` (empty: undefined) for
                      ``all_good_found`` and ``all_good_capped``, or text (notes, conventions)
  ==================  ==========================================================================================

  ``(scope, conversation_id, i, metric, statistic)`` is unique. Aggregate and conversation rows are always
  written; ``iteration`` rows with ``per_conversation`` (``-q``), so that the CSV then holds the same numbers
  as the JSON.

Curves over iterations (:func:`save_curves`): cumulative good gain (CG@i), search result efficiency (SRE@i)
and redundancy (SRR@i).

Each figure has one line per conversation (coloured and in the legend up to :data:`LEGEND_MAX` conversations,
thin grey lines beyond) and, with two conversations or more, their mean at each iteration in black. A
conversation that stopped before iteration i keeps its last value in the mean (its CG, SRE and SRR do not
change after its last search), so the mean is over every conversation at every i; undefined values (NaN, from
results without a gain) leave gaps and are left out of the mean.

Figures are built with :mod:`gainscope.render.plots`' helpers (no pyplot, deterministic bytes) and written
with its :func:`~gainscope.render.plots.save` as PNG and SVG.

This module knows the view only by its shape (:class:`ReportView`, a Protocol), so that renderers import
nothing from the adapters above them.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from gainscope.errors import InputError, UnknownFormatError
from gainscope.io.writers import make_folder
from gainscope.render.plots import CURVE_SIZE, finish_axes, new_figure, run_label, save, series_color
from gainscope.render.plots import FORMATS as FIGURE_FORMATS
from gainscope.render.text import CsvWriter, fmt_number, text_table
from gainscope.results import aggregate_values

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["CSV_COLUMNS", "CURVES", "FORMATS", "LEGEND_MAX", "AggregateView", "ConversationView", "IterationView",
           "ReportView", "iteration_curve", "render_report", "save_curves"]


class IterationView(Protocol):
    """The values of one conversation at iteration ``i``, by seed 003's names."""

    @property
    def i(self) -> int: ...
    @property
    def values(self) -> Mapping[str, float]: ...


class ConversationView(Protocol):
    """One conversation of the agent view."""

    @property
    def conversation_id(self) -> str: ...
    @property
    def query_id(self) -> str: ...
    @property
    def turn(self) -> int: ...
    @property
    def unique_results(self) -> int: ...
    @property
    def grade_counts(self) -> Mapping[str, int]: ...
    @property
    def curve(self) -> Sequence[IterationView]: ...
    @property
    def summary(self) -> Mapping[str, float]: ...
    @property
    def all_good_found(self) -> bool | None: ...
    @property
    def all_good_capped(self) -> bool: ...
    @property
    def notes(self) -> Sequence[str]: ...


class AggregateView(Protocol):
    """One value at N over conversations; ``censors`` for the value whose capped conversations count apart."""

    @property
    def metric(self) -> str: ...
    @property
    def mean(self) -> float: ...
    @property
    def median(self) -> float: ...
    @property
    def ci_low(self) -> float: ...
    @property
    def ci_high(self) -> float: ...
    @property
    def n(self) -> int: ...
    @property
    def undefined(self) -> int: ...
    @property
    def capped(self) -> int: ...
    @property
    def censors(self) -> bool: ...


class ReportView(Protocol):
    """The agent view: conversations, aggregates, the interval level, the cap and the conventions."""

    @property
    def conversations(self) -> Sequence[ConversationView]: ...
    @property
    def aggregates(self) -> Sequence[AggregateView]: ...
    @property
    def level(self) -> float: ...
    @property
    def cap(self) -> int: ...
    def conventions(self) -> list[tuple[str, str]]: ...
    def to_dict(self, *, conversations: bool = True) -> dict[str, Any]: ...


FORMATS = ("table", "json", "csv")
_COUNTS = {"N", "R@N", "UR@N", "DupR@N", "|R^i|", "|UR^i|", "|Dup^i|", "R@i", "UR@i", "DupR@i", "|R^N|", "|UR^N|",
           "|Dup^N|", "IterationsForAllGoodResults"}
_SHORT = {"IterationsForAllGoodResults": "IterAllGood"}


def _cell(name: str, x: float) -> str:
    if isinstance(x, float) and not math.isnan(x) and (name in _COUNTS or name.startswith(("|GR", "GR@"))):
        return f"{x:.0f}"
    return fmt_number(x)


def _conversation_table(c: ConversationView) -> str:
    if not c.curve:
        return "(no iteration with a search)"
    columns = list(c.curve[0].values)
    rows = [[str(it.i), *(_cell(n, it.values[n]) for n in columns)] for it in c.curve]
    return text_table(["i", *columns], rows)


def _summary_line(c: ConversationView) -> str:
    return "  ".join(f"{_SHORT.get(m, m)}={_cell(m, x)}" for m, x in c.summary.items())


def _table(report: ReportView, per_conversation: bool) -> str:
    out = []
    if per_conversation:
        for c in report.conversations:
            out.append(f"conversation {c.conversation_id} (query {c.query_id}, turn {c.turn}, "
                       f"{c.unique_results} unique results)")
            out.append(_conversation_table(c))
            out.append("at N: " + _summary_line(c))
            out.extend(f"note: {n}" for n in c.notes)
            out.append("")
    n = len(report.conversations)
    level = f"{report.level * 100:g}%"
    rows = [[a.metric, fmt_number(a.mean),
             fmt_number(a.median), fmt_number(a.ci_low), fmt_number(a.ci_high), str(a.n), str(a.undefined)]
            for a in report.aggregates]
    out.append(f"over {n} conversation{'s' if n != 1 else ''} (values at N)")
    out.append(text_table(["metric", "mean", "median", f"{level} CI low", "high", "n", "undefined"], rows))
    out.extend(_all_good_line(a, report.cap) for a in report.aggregates if a.censors)
    out.append("conventions:")
    out.extend(f"  {name:<10} {text}" for name, text in report.conventions())
    return "\n".join(out) + "\n"


def _all_good_line(a: AggregateView, cap: int) -> str:
    """What the IterationsForAllGoodResults row is over: the conversations that retrieved every good result."""
    over = f"{a.n} conversation{'s' if a.n != 1 else ''}"
    return (f"{a.metric}: over the {over} that retrieved every good result by iteration {cap}; {a.capped} "
            f"capped at {cap} (left out, not averaged in)")


CSV_COLUMNS = ("scope", "conversation_id", "query_id", "i", "metric", "statistic", "value")


def _csv(report: ReportView, per_conversation: bool) -> str:
    buffer = io.StringIO()
    writer = CsvWriter(buffer)

    def number(x: float) -> str:
        return "" if math.isnan(x) else repr(float(x))

    writer.writerow(CSV_COLUMNS)
    for a in report.aggregates:
        for stat, x in (("mean", a.mean), ("median", a.median), ("ci_low", a.ci_low), ("ci_high", a.ci_high)):
            writer.writerow(["aggregate", "", "", "", a.metric, stat, number(x)])
        writer.writerow(["aggregate", "", "", "", a.metric, "n", a.n])
        writer.writerow(["aggregate", "", "", "", a.metric, "undefined", a.undefined])
        if a.censors:
            writer.writerow(["aggregate", "", "", "", a.metric, "capped", a.capped])
    for c in report.conversations:
        head = ["conversation", c.conversation_id, c.query_id, ""]
        for m, x in c.summary.items():
            writer.writerow([*head, m, "value", number(x)])
        flag = "" if c.all_good_found is None else str(c.all_good_found).lower()
        facts: list[tuple[str, object]] = [("turn", c.turn), ("unique_results", c.unique_results),
                                           ("all_good_found", flag),
                                           ("all_good_capped", str(c.all_good_capped).lower())]
        facts += [(f"grades_{status}", count) for status, count in c.grade_counts.items()]
        for name, v in facts:
            writer.writerow([*head, name, "value", v])
        for k, note in enumerate(c.notes, start=1):
            writer.writerow([*head, "note", k, note])
        if per_conversation:
            for it in c.curve:
                for m, x in it.values.items():
                    writer.writerow(["iteration", c.conversation_id, c.query_id, it.i, m, "value", number(x)])
    for name, text in report.conventions():
        writer.writerow(["convention", "", "", "", name, "", text])
    return buffer.getvalue()


def render_report(report: ReportView, fmt: str = "table", *, per_conversation: bool = False) -> str:
    """The report in ``fmt`` (see the module docstring)."""
    if fmt == "table":
        return _table(report, per_conversation)
    if fmt == "json":
        return json.dumps(report.to_dict(conversations=per_conversation), indent=2, ensure_ascii=False,
                          allow_nan=False) + "\n"
    if fmt == "csv":
        return _csv(report, per_conversation)
    raise UnknownFormatError(f"unknown output format {fmt!r}; formats: {', '.join(FORMATS)}")


#: metric at iteration i -> (file stem, title, y label)
CURVES = {
    "CG@i": ("agent-cumulative-good-gain", "Cumulative good gain CG@i", "CG@i"),
    "SRE@i": ("agent-sre", "Search result efficiency SRE@i = GR@i / R@i", "SRE@i"),
    "SRR@i": ("agent-srr", "Search result redundancy SRR@i = DupR@i / R@i", "SRR@i"),
}
LEGEND_MAX = 8


def _matrix(report: ReportView, metric: str) -> np.ndarray:
    """Conversations x iterations, carried forward after each conversation's N (NaN before any iteration)."""
    n = max((len(c.curve) for c in report.conversations), default=0)
    out = np.full((len(report.conversations), n), np.nan)
    for k, c in enumerate(report.conversations):
        values = [it.values[metric] for it in c.curve]
        out[k, : len(values)] = values
        if values:
            out[k, len(values):] = values[-1]
    return out


def iteration_curve(report: ReportView, metric: str) -> Figure:
    """One figure of ``metric`` (a key of :data:`CURVES`) by iteration."""
    if metric not in CURVES:
        raise InputError(f"no curve for {metric!r}; curves: {', '.join(CURVES)}")
    if not report.conversations:
        raise InputError("nothing to plot: no conversation")
    _, title, ylabel = CURVES[metric]
    fig = new_figure(CURVE_SIZE)
    from matplotlib.ticker import MaxNLocator

    ax = fig.add_subplot()
    data = _matrix(report, metric)
    many = len(report.conversations) > LEGEND_MAX
    for k, c in enumerate(report.conversations):
        xs = np.arange(1, len(c.curve) + 1)
        ys = data[k, : len(c.curve)]
        if many:
            ax.plot(xs, ys, color="#bbbbbb", linewidth=0.8)
        else:
            ax.plot(xs, ys, color=series_color(k), marker="o", markersize=3, linewidth=1.2,
                    label=run_label(c.conversation_id))
    if len(report.conversations) >= 2 and data.shape[1]:
        mean = [aggregate_values(data[:, i], "mean") for i in range(data.shape[1])]
        ax.plot(np.arange(1, data.shape[1] + 1), mean, color="#000000", linewidth=2.2,
                label=f"mean of {len(report.conversations)}")
    ax.set_xlim(left=0.8)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    finish_axes(ax, title=title, xlabel="iteration i", ylabel=ylabel,
                legend=not many or len(report.conversations) >= 2)
    return fig


def save_curves(report: ReportView, directory: str | Path, formats: tuple[str, ...] = FIGURE_FORMATS) -> list[Path]:
    """Write every curve of :data:`CURVES` into ``directory`` (created if needed); returns the files."""
    out_dir = make_folder(directory)
    paths: list[Path] = []
    for metric, (stem, _, _) in CURVES.items():
        paths.extend(save(iteration_curve(report, metric), out_dir / stem, formats))
    return paths
