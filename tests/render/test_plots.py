"""Plots (gainscope.render.plots) and the ``plot`` command: the artists each figure holds, the position
sensitivity values against hand arithmetic, the files written (PNG size, SVG as XML), byte-identical output,
and the errors for bad requests."""

from __future__ import annotations

import functools
import math
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.colors import to_hex
from tests.helpers import invoke

import gainscope
from gainscope.cli.plot import plot_cmd
from gainscope.errors import (
    GainscopeWarning,
    InputError,
    MetricError,
    MissingDependencyError,
    QueryCoverageWarning,
    UnknownFormatError,
)
from gainscope.render import plots
from gainscope.stats import wins_ties_losses

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
QRELS, BM25, HYBRID = str(EX / "qrels.txt"), str(EX / "bm25.run"), str(EX / "hybrid.run")
CUTOFFS = [1, 3, 5, 10, 20]
METRICS = ["nDCG@10", "AP", "RR", "P@5", *plots.cutoff_metrics("nDCG", CUTOFFS), *plots.pr_metrics()]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def examples() -> list[gainscope.Results]:
    """bm25 and hybrid on the example judgments (6 judged queries; bm25 has ties, hybrid misses MQ005)."""
    with pytest.warns(GainscopeWarning):
        return gainscope.evaluate_runs(QRELS, [BM25, HYBRID], METRICS)


@pytest.fixture(scope="module")
def partial() -> list[gainscope.Results]:
    """Three small runs that rank different queries; missing queries are skipped, so pairing matters:
    base defines q1 q2 q3, long defines q1 q2 q4, third defines all four."""
    judgments = gainscope.Judgments.from_dict({"q1": {"a": 1, "b": 0}, "q2": {"a": 2}, "q3": {"c": 1}, "q4": {"a": 1}})
    runs = [
        gainscope.Run.from_dict({"q1": {"a": 2, "b": 1}, "q2": {"b": 1, "a": 0.5}, "q3": {"c": 1}}, name="base"),
        gainscope.Run.from_dict({"q1": {"b": 2, "a": 1}, "q2": {"a": 1}, "q4": {"a": 1}},
                                name="a-very-long-run-name-that-is-shortened-in-legends"),
        gainscope.Run.from_dict({"q1": {"b": 2, "a": 1}, "q2": {"a": 1}, "q3": {"x": 1}, "q4": {"a": 1}},
                                name="third"),
    ]
    with pytest.warns(QueryCoverageWarning):
        return gainscope.evaluate_runs(judgments, runs, ["RR", "nDCG@10", "AP"], missing_queries="skip")


def _png_size(data: bytes) -> tuple[int, int]:
    """Width and height from the IHDR chunk, which follows the signature."""
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


# ------------------------------------------------------------------------------------------------ names
def test_cutoff_metrics_are_canonical_names_of_the_family() -> None:
    assert plots.cutoff_metrics("nDCG", [1, 3, 10]) == ["nDCG@1", "nDCG@3", "nDCG@10"]
    assert plots.cutoff_metrics("P(rel=2)", [5]) == ["P(rel=2)@5"]
    assert plots.cutoff_metrics("nDCG(gain=exponential)", [3]) == ["nDCG(gain=exponential)@3"]


@pytest.mark.parametrize(("family", "message"), [
    ("nDCG@10", "without its '@' value"),
    ("IPrec", "IPrec's '@' value is not a cutoff"),
    ("nDGC", "'nDGC' is not a metric family with a cutoff: unknown metric 'nDGC'"),
])
def test_cutoff_metrics_rejects_what_is_not_a_cutoff_family(family: str, message: str) -> None:
    with pytest.raises(MetricError, match=message):
        plots.cutoff_metrics(family, [1, 5])


def test_pr_metrics_are_the_eleven_recall_levels() -> None:
    names = plots.pr_metrics()
    assert names == ["IPrec@0", "IPrec@0.1", "IPrec@0.2", "IPrec@0.3", "IPrec@0.4", "IPrec@0.5", "IPrec@0.6",
                     "IPrec@0.7", "IPrec@0.8", "IPrec@0.9", "IPrec@1"]
    assert [str(gainscope.parse_metric(n)) for n in names] == names


# ------------------------------------------------------------------------------------------------ cutoff curve
def test_cutoff_curve_has_a_line_and_a_band_per_run(examples: list[gainscope.Results]) -> None:
    fig = plots.cutoff_curve(examples, "nDCG")
    (ax,) = fig.axes
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["bm25", "hybrid"]
    for line, res in zip(lines, examples, strict=True):
        assert list(line.get_xdata()) == CUTOFFS
        assert list(line.get_ydata()) == pytest.approx([res[f"nDCG@{k}"] for k in CUTOFFS])
    bands = ax.collections
    assert len(bands) == 2
    for band, res in zip(bands, examples, strict=True):  # the 95% interval contains each mean
        ys = band.get_paths()[0].vertices[:, 1]
        assert ys.min() <= min(res[f"nDCG@{k}"] for k in CUTOFFS) <= max(res[f"nDCG@{k}"] for k in CUTOFFS) <= ys.max()
    assert ax.get_title() == "nDCG@k: mean over 6 queries, 95% bootstrap interval"
    assert ax.get_xlabel() == "cutoff k" and ax.get_ylabel() == "mean nDCG@k"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["bm25", "hybrid"]


def test_cutoff_curve_keeps_the_family_parameters() -> None:
    judgments = gainscope.Judgments.from_dict({"q1": {"a": 2, "b": 1}, "q2": {"c": 1}})
    run = gainscope.Run.from_dict({"q1": {"b": 2, "a": 1}, "q2": {"c": 1}}, name="r")
    names = ["nDCG@1", "nDCG@3", *plots.cutoff_metrics("nDCG(gain=exponential)", [1, 2, 5])]
    results = [gainscope.evaluate(judgments, run, names)]
    (ax,) = plots.cutoff_curve(results, "nDCG(gain=exponential)").axes
    assert list(ax.get_lines()[0].get_xdata()) == [1, 2, 5]
    assert ax.get_title().startswith("nDCG(gain=exponential)@k: mean over 2 queries")


def test_cutoff_curve_needs_two_cutoffs(examples: list[gainscope.Results]) -> None:
    with pytest.raises(MetricError, match=r"a cutoff curve of P needs at least 2 cutoffs in the results; "
                                          r"found P@5\. Evaluate for example cutoff_metrics"):
        plots.cutoff_curve(examples, "P")
    with pytest.raises(MetricError, match="found none"):
        plots.cutoff_curve(examples, "R")


# ------------------------------------------------------------------------------------------------ delta bars
def test_delta_bars_one_bar_per_paired_query_sorted(examples: list[gainscope.Results]) -> None:
    bm25, hybrid = examples
    fig = plots.delta_bars(examples, "bm25", "nDCG@10")
    (ax,) = fig.axes
    heights = [bar.get_height() for bar in ax.patches]
    deltas = [hybrid.per_query("nDCG@10")[q] - bm25.per_query("nDCG@10")[q] for q in bm25.query_ids]
    assert len(heights) == 6
    assert heights == pytest.approx(sorted(deltas, reverse=True))
    wins, ties, losses = wins_ties_losses([hybrid.per_query("nDCG@10")[q] for q in bm25.query_ids],
                                          [bm25.per_query("nDCG@10")[q] for q in bm25.query_ids])
    title = ax.get_title()
    assert title.startswith("hybrid \N{MINUS SIGN} bm25, 6 queries\n")
    assert f"mean Δ {np.mean(deltas):+.4f}, wins/ties/losses {wins}/{ties}/{losses}" in title
    assert "paired" not in title  # every query of both runs was paired
    colors = [to_hex(bar.get_facecolor()) for bar in ax.patches]
    assert (colors.count(plots.POSITIVE.lower()), colors.count(plots.NEGATIVE.lower())) == (wins, losses)
    assert ax.get_xticklabels()[0].get_text() == "MQ006"  # the largest gain first
    assert ax.get_ylabel() == "Δ nDCG@10"
    assert fig.get_suptitle() == "nDCG@10: per-query difference against bm25"


def test_delta_bars_pairs_queries_by_id_and_says_so(partial: list[gainscope.Results]) -> None:
    fig = plots.delta_bars(partial, "base", "RR")
    long_panel, third_panel = fig.axes
    # long and base share q1 and q2; third and base share q1 q2 q3
    assert len(long_panel.patches) == 2 and len(third_panel.patches) == 3
    assert long_panel.get_title().endswith(
        "paired by query id: 2 of 3 (a-very-long-r…ed-in-legends) and 3 (base)")
    assert third_panel.get_title().endswith("paired by query id: 3 of 4 (third) and 3 (base)")
    # RR: third - base = q1 0.5 - 1, q2 1 - 0.5, q3 0 - 1 -> sorted 0.5, -0.5, -1
    assert [b.get_height() for b in third_panel.patches] == pytest.approx([0.5, -0.5, -1.0])
    assert "mean Δ -0.3333, wins/ties/losses 1/0/2" in third_panel.get_title()


def test_delta_bars_rejects_bad_baselines(examples: list[gainscope.Results]) -> None:
    with pytest.raises(InputError, match=r"no run is named 'bm52'; the runs are 'bm25', 'hybrid'"):
        plots.delta_bars(examples, "bm52", "AP")
    with pytest.raises(InputError, match=r"2 runs are named 'bm25'"):
        plots.delta_bars([examples[0], examples[0]], "bm25", "AP")
    with pytest.raises(InputError, match="need a run besides the baseline 'bm25'"):
        plots.delta_bars(examples[:1], "bm25", "AP")
    with pytest.raises(MetricError, match="'R@10' is not among the evaluated metrics"):
        plots.delta_bars(examples, "bm25", "R@10")


# ------------------------------------------------------------------------------------------------ distributions
def test_distributions_box_points_and_mean_per_run(examples: list[gainscope.Results],
                                                   partial: list[gainscope.Results]) -> None:
    fig = plots.distributions(examples, "AP")
    (ax,) = fig.axes
    points = ax.collections
    assert len(points) == 2 and [len(p.get_offsets()) for p in points] == [6, 6]
    for p, res in zip(points, examples, strict=True):
        assert sorted(p.get_offsets()[:, 1]) == pytest.approx(sorted(res.per_query("AP").values()))
    means = [line for line in ax.get_lines() if line.get_marker() == "D" and len(line.get_ydata())]
    assert [line.get_ydata()[0] for line in means] == pytest.approx([r["AP"] for r in examples])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["bm25", "hybrid"]
    assert ax.get_title() == "AP per query (6 queries)" and ax.get_ylabel() == "AP"
    # undefined values (skipped queries) are left out; the legend shortens a long run name
    (ax,) = plots.distributions(partial, "RR").axes
    assert [len(p.get_offsets()) for p in ax.collections] == [3, 3, 4]
    assert ax.get_title() == "RR per query (3\N{EN DASH}4 queries)"
    assert ax.get_xticklabels()[1].get_text() == "a-very-long-r…ed-in-legends"


def test_distributions_jitter_is_deterministic(examples: list[gainscope.Results]) -> None:
    first, second = (plots.distributions(examples, "RR").axes[0].collections[0].get_offsets() for _ in range(2))
    assert np.array_equal(first, second)


# ------------------------------------------------------------------------------------------------ pr and radar
def test_pr_curves_a_line_per_run_over_recall_levels(examples: list[gainscope.Results]) -> None:
    (ax,) = plots.pr_curves(examples).axes
    assert [line.get_label() for line in ax.get_lines()] == ["bm25", "hybrid"]
    for line, res in zip(ax.get_lines(), examples, strict=True):
        assert list(line.get_xdata()) == pytest.approx([i / 10 for i in range(11)])
        assert list(line.get_ydata()) == pytest.approx([res[n] for n in plots.pr_metrics()])
    assert ax.get_title() == "Interpolated precision-recall (IPrec@r): mean over 6 queries"
    assert ax.get_xlabel() == "recall r" and ax.get_ylabel() == "interpolated precision"
    with pytest.warns(QueryCoverageWarning):
        only_ap = gainscope.evaluate_runs(QRELS, [HYBRID], ["AP"])
    with pytest.raises(MetricError, match="need at least 2 recall levels of IPrec in the results; found 0"):
        plots.pr_curves(only_ap)


def test_radar_spokes_per_metric_and_a_line_per_run(examples: list[gainscope.Results]) -> None:
    names = ["nDCG@10", "AP", "RR", "P@5"]
    fig = plots.radar(examples, names)
    (ax,) = fig.axes
    assert ax.name == "polar"
    assert [t.get_text() for t in ax.get_xticklabels()] == names
    lines = ax.get_lines()
    assert len(lines) == 2
    for line, res in zip(lines, examples, strict=True):
        assert list(line.get_ydata()) == pytest.approx([res[n] for n in [*names, names[0]]])  # closed
    assert ax.get_title() == "Aggregates over 6 queries"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["bm25", "hybrid"]


def test_radar_needs_three_distinct_metrics(examples: list[gainscope.Results]) -> None:
    with pytest.raises(MetricError, match="a radar chart needs at least 3 metrics; got 2: AP, RR"):
        plots.radar(examples, ["AP", "RR", "map"])  # trec_eval's map is AP
    with pytest.raises(MetricError, match=r"'P.5,10' names 2 metrics \(P@5, P@10\); give one"):
        plots.radar(examples, ["AP", "RR", "P.5,10"])


# ------------------------------------------------------------------------------------------------ sensitivity
def test_position_sensitivity_values_match_hand_arithmetic() -> None:
    values = plots.position_sensitivity_values(["RR", "nDCG@10", "P@5", "AP", "R@3"], depth=10)
    positions = range(1, 11)
    # RR: the first relevant document is at p -> 1/p
    assert values["RR"] == pytest.approx([1 / p for p in positions])
    # nDCG@10: DCG = 1/log2(p + 1); the ideal ranking puts the one relevant document first, IDCG = 1/log2(2) = 1
    assert values["nDCG@10"] == pytest.approx([1 / math.log2(p + 1) for p in positions])
    # P@5: one relevant document among the first 5 when p <= 5 -> 1/5, else 0
    assert values["P@5"] == pytest.approx([0.2 if p <= 5 else 0.0 for p in positions])
    # AP: R = 1, precision at the relevant document's rank is 1/p -> AP = (1/p) / 1
    assert values["AP"] == pytest.approx([1 / p for p in positions])
    # R@3: the only relevant document is found within 3 when p <= 3
    assert values["R@3"] == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]


def test_position_sensitivity_graded_and_trec_names() -> None:
    # grade 3, exponential gain: DCG = (2^3 - 1)/log2(p + 1), IDCG = 7 -> the same 1/log2(p + 1)
    values = plots.position_sensitivity_values(["nDCG(gain=exponential)@5", "map"], depth=4, grade=3)
    assert values == {"nDCG(gain=exponential)@5": pytest.approx([1 / math.log2(p + 1) for p in range(1, 5)]),
                      "AP": pytest.approx([1, 1 / 2, 1 / 3, 1 / 4])}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"depth": 0}, "depth must be an int >= 1; got 0"),
    ({"grade": 0}, r"grade must be a finite number > 0 \(the relevant document's grade\); got 0"),
])
def test_position_sensitivity_rejects_bad_settings(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        plots.position_sensitivity_values(["RR"], **kwargs)


def test_position_sensitivity_figure_has_a_line_per_metric() -> None:
    (ax,) = plots.position_sensitivity(["nDCG@10", "RR", "AP"], depth=6).axes
    assert [line.get_label() for line in ax.get_lines()] == ["nDCG@10", "RR", "AP"]
    assert list(ax.get_lines()[1].get_xdata()) == [1, 2, 3, 4, 5, 6]
    assert ax.get_lines()[1].get_ydata() == pytest.approx([1, 1 / 2, 1 / 3, 1 / 4, 1 / 5, 1 / 6])
    assert ax.get_xlabel() == "position of the relevant document"
    assert ax.get_title() == "Position sensitivity: 1 relevant document (grade 1) of 6 judged"


# ------------------------------------------------------------------------------------------------ output
def test_save_writes_png_and_svg(examples: list[gainscope.Results], tmp_path: Path) -> None:
    paths = plots.save(plots.pr_curves(examples), tmp_path / "pr-IPrec@0.5")
    assert paths == [tmp_path / "pr-IPrec@0.5.png", tmp_path / "pr-IPrec@0.5.svg"]
    png, svg = (p.read_bytes() for p in paths)
    assert png.startswith(PNG_SIGNATURE)
    assert _png_size(png) == (700, 450)  # 7 x 4.5 inches at 100 dpi
    assert ET.fromstring(svg).tag == "{http://www.w3.org/2000/svg}svg"
    assert b"<svg" in svg
    assert plots.save(plots.radar(examples, ["AP", "RR", "P@5"]), tmp_path / "radar", ["svg"]) == \
        [tmp_path / "radar.svg"]


def test_output_is_byte_identical_across_builds(examples: list[gainscope.Results], tmp_path: Path) -> None:
    first, second = (plots.save(plots.cutoff_curve(examples, "nDCG"), tmp_path / name) for name in ("a", "b"))
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes()
    fig = plots.distributions(examples, "AP")
    assert plots.svg_text(fig) == plots.svg_text(plots.distributions(examples, "AP"))
    assert plots.png_bytes(fig) == plots.png_bytes(fig)


def test_svg_text_and_png_bytes_for_html(examples: list[gainscope.Results]) -> None:
    fig = plots.delta_bars(examples, "bm25", "AP")
    text = plots.svg_text(fig)
    assert text.startswith("<svg") and ET.fromstring(text).tag.endswith("svg")
    png = plots.png_bytes(fig)
    assert png.startswith(PNG_SIGNATURE) and _png_size(png) == (700, 420)  # 7 x (3.8 + 0.4) inches


def test_save_rejects_other_formats(examples: list[gainscope.Results], tmp_path: Path) -> None:
    with pytest.raises(UnknownFormatError, match="plots are written as png or svg; got 'pdf'"):
        plots.save(plots.pr_curves(examples), tmp_path / "pr", ["pdf"])


def test_missing_matplotlib_names_the_extra(examples: list[gainscope.Results],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # `import` now raises ImportError
    with pytest.raises(MissingDependencyError, match=r"install it with: pip install 'gainscope\[plots\]'"):
        plots.pr_curves(examples)


# ------------------------------------------------------------------------------------------------ command line
_plot = functools.partial(invoke, plot_cmd, QRELS)


def test_cli_writes_every_kind(tmp_path: Path) -> None:
    code, out, err = _plot(BM25, HYBRID, "-m", "nDCG@10 AP", "-m", "P(rel=2)@5", "--image-format", "png",
                           "--cutoffs", "1,5,10", "--output-dir", str(tmp_path / "plots"))
    assert code == 0, err
    stems = ["cutoff-nDCG", "delta-nDCG@10", "delta-AP", "delta-P_rel_2_@5", "distribution-nDCG@10",
             "distribution-AP", "distribution-P_rel_2_@5", "pr", "radar", "sensitivity"]
    assert out.splitlines() == [str(tmp_path / "plots" / f"{s}.png") for s in stems]
    for line in out.splitlines():
        assert Path(line).read_bytes().startswith(PNG_SIGNATURE)
    assert f"warning: {BM25}: 7 group(s) of equal scores" in err  # several runs: each warning names its run


def test_cli_kinds_formats_and_baseline(tmp_path: Path) -> None:
    code, out, _ = _plot(BM25, HYBRID, "--kind", "delta", "--kind", "cutoff", "--image-format", "svg",
                         "-m", "RR", "--baseline", "hybrid", "--output-dir", str(tmp_path))
    assert code == 0
    assert out.splitlines() == [str(tmp_path / "cutoff-nDCG.svg"), str(tmp_path / "delta-RR.svg")]
    # text is drawn as paths; matplotlib keeps each text in a comment before them
    assert "<!-- bm25 \N{MINUS SIGN} hybrid, 6 queries" in (tmp_path / "delta-RR.svg").read_text(encoding="utf-8")


def test_cli_all_skips_what_cannot_be_drawn(tmp_path: Path) -> None:
    code, out, err = _plot(BM25, "-m", "AP RR", "--kind", "all", "--format", "png", "-o", str(tmp_path))
    assert code == 0
    assert "note: skipped delta: needs at least 2 runs (the baseline and another)" in err
    assert "note: skipped radar: needs at least 3 metrics (-m); got 2" in err
    assert [Path(p).name for p in out.splitlines()] == [
        "cutoff-nDCG.png", "distribution-AP.png", "distribution-RR.png", "pr.png", "sensitivity.png"]


@pytest.mark.parametrize(("args", "message"), [
    (["-m", "nDGC@10"], "unknown metric 'nDGC'. Did you mean 'nDCG'?"),
    (["--baseline", "bm52"], "no run is named 'bm52'; the runs are bm25, hybrid"),
    (["--cutoffs", "1,x"], "expected whole numbers separated by commas"),
    (["--cutoffs", "10", "--kind", "cutoff"], "cutoff: needs at least 2 --cutoffs; got 1"),
    (["--kind", "radar", "-m", "AP RR"], "radar: needs at least 3 metrics (-m); got 2"),
    (["--family", "Bpref"], "'Bpref' is not a metric family with a cutoff: Bpref takes no @ value"),
])
def test_cli_usage_errors_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    code, out, err = _plot(BM25, HYBRID, *args, "--output-dir", str(tmp_path))
    assert code == 2
    assert message in err
    assert out == "" and not any(tmp_path.iterdir())


# ------------------------------------------------------------------------------------------------ many queries
def _many(n: int) -> list[gainscope.Results]:
    """Two runs' AP on n queries (values drawn: the figures only read them)."""
    from gainscope.core.judged_run import Coverage

    rng = np.random.default_rng(n)
    metrics = tuple(gainscope.resolve_metrics(["AP"]))
    ids = tuple(f"q{i}" for i in range(n))
    base = rng.random((n, 1))
    runs = {"base": base, "new": np.clip(base + rng.normal(0, 0.1, (n, 1)), 0, 1)}
    return [gainscope.Results(run_name=name, metrics=metrics, query_ids=ids, values=v,
                              undefined=np.zeros_like(v, dtype=bool), policies=gainscope.Policies(),
                              coverage=Coverage(n, n, n)) for name, v in runs.items()]


def _marks(svg: str) -> tuple[int, int]:
    """Vector marks (paths and uses) and bitmaps in an SVG."""
    return svg.count("<path") + svg.count("<use"), svg.count("<image")


def test_delta_bars_beyond_the_bar_limit_is_one_area_whatever_the_number_of_queries() -> None:
    small = plots.delta_bars(_many(plots.BARS_MAX), "base", "AP")
    assert len(small.axes[0].patches) == plots.BARS_MAX  # a bar per query up to the limit
    sizes = []
    for n in (plots.BARS_MAX + 1, 6 * plots.BARS_MAX):
        results = _many(n)
        fig = plots.delta_bars(results, "base", "AP")
        (ax,) = fig.axes
        assert len(ax.patches) == 0 and all(c.get_rasterized() for c in ax.collections)
        d = results[1].values[:, 0] - results[0].values[:, 0]
        gains, losses = ax.collections  # filled to the sorted differences
        assert gains.get_paths()[0].vertices[:, 1].max() == pytest.approx(d.max())
        assert losses.get_paths()[0].vertices[:, 1].min() == pytest.approx(d.min())
        assert f"{n} queries" in ax.get_title()
        svg = plots.svg_text(fig)
        assert len(svg) < 100_000
        sizes.append(_marks(svg))
    # one bitmap, and about as many vector marks (axes, ticks, text) for 6x the queries
    assert sizes[0][1] == sizes[1][1] == 1 and abs(sizes[0][0] - sizes[1][0]) < 30


def test_distribution_points_beyond_the_limit_are_a_bitmap() -> None:
    few = plots.distributions(_many(plots.POINTS_MAX), "AP")
    assert not any(c.get_rasterized() for c in few.axes[0].collections)
    counts = []
    for n in (plots.POINTS_MAX + 1, 5 * plots.POINTS_MAX):
        fig = plots.distributions(_many(n), "AP")
        assert all(c.get_rasterized() for c in fig.axes[0].collections)
        assert [len(c.get_offsets()) for c in fig.axes[0].collections] == [n, n]
        svg = plots.svg_text(fig)
        assert len(svg) < 100_000
        counts.append(_marks(svg))
    assert counts[0][1] == counts[1][1] == 1 and abs(counts[0][0] - counts[1][0]) < 30
