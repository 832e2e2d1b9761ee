"""Curves over iterations of an agent evaluation: cumulative good gain (CG@i), search result efficiency (SRE@i)
and redundancy (SRR@i).

Each figure has one line per conversation (coloured and in the legend up to :data:`LEGEND_MAX` conversations,
thin grey lines beyond) and, with two conversations or more, their mean at each iteration in black. A
conversation that stopped before iteration i keeps its last value in the mean (its CG, SRE and SRR do not
change after its last search), so the mean is over every conversation at every i; undefined values (NaN, from
results without a gain) leave gaps and are left out of the mean.

Figures are built with :mod:`gainscope.render.plots`' helpers (no pyplot, deterministic bytes) and written
with its :func:`~gainscope.render.plots.save` as PNG and SVG.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gainscope.agents.evaluate import AgentReport
from gainscope.errors import InputError
from gainscope.io.writers import make_folder
from gainscope.render.plots import CURVE_SIZE, FORMATS, finish_axes, new_figure, run_label, save, series_color

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["CURVES", "LEGEND_MAX", "iteration_curve", "save_curves"]

#: metric at iteration i -> (file stem, title, y label)
CURVES = {
    "CG@i": ("agent-cumulative-good-gain", "Cumulative good gain CG@i", "CG@i"),
    "SRE@i": ("agent-sre", "Search result efficiency SRE@i = GR@i / R@i", "SRE@i"),
    "SRR@i": ("agent-srr", "Search result redundancy SRR@i = DupR@i / R@i", "SRR@i"),
}
LEGEND_MAX = 8


def _matrix(report: AgentReport, metric: str) -> np.ndarray:
    """Conversations x iterations, carried forward after each conversation's N (NaN before any iteration)."""
    n = max((len(c.curve) for c in report.conversations), default=0)
    out = np.full((len(report.conversations), n), np.nan)
    for k, c in enumerate(report.conversations):
        values = [it.values[metric] for it in c.curve]
        out[k, : len(values)] = values
        if values:
            out[k, len(values):] = values[-1]
    return out


def iteration_curve(report: AgentReport, metric: str) -> Figure:
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
        with np.errstate(invalid="ignore"):
            defined = ~np.isnan(data)
            counts = defined.sum(axis=0)
            sums = np.where(defined, data, 0.0).sum(axis=0)
            mean = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        ax.plot(np.arange(1, data.shape[1] + 1), mean, color="#000000", linewidth=2.2,
                label=f"mean of {len(report.conversations)}")
    ax.set_xlim(left=0.8)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    finish_axes(ax, title=title, xlabel="iteration i", ylabel=ylabel,
            legend=not many or len(report.conversations) >= 2)
    return fig


def save_curves(report: AgentReport, directory: str | Path, formats: tuple[str, ...] = FORMATS) -> list[Path]:
    """Write every curve of :data:`CURVES` into ``directory`` (created if needed); returns the files."""
    out_dir = make_folder(directory)
    paths: list[Path] = []
    for metric, (stem, _, _) in CURVES.items():
        paths.extend(save(iteration_curve(report, metric), out_dir / stem, formats))
    return paths
