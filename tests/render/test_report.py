"""The HTML report: what it holds, that it is deterministic and offline, and that it renders in headless Chromium
(tables, figures, sorting, no errors, a screenshot)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import gainscope
from gainscope.compare import CompareSettings, compare_results
from gainscope.render.report import ReportFigures, render_report, report_metrics

from .browser import Browser

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS, BM25, HYBRID = (str(EXAMPLES / n) for n in ("qrels.txt", "bm25.run", "hybrid.run"))
METRICS = ["nDCG@10", "AP", "RR", "P@5"]


def _comparison(figures: ReportFigures) -> tuple[gainscope.Comparison, list[gainscope.Results]]:
    with pytest.warns(gainscope.errors.GainscopeWarning):
        results = gainscope.evaluate_runs(QRELS, [BM25, HYBRID], report_metrics(METRICS, figures))
    c = compare_results([r.select(METRICS) for r in results], settings=CompareSettings(resamples=500))
    return c, results


@pytest.mark.slow
def test_report_holds_comparison_figures_per_query_tables_and_conventions() -> None:
    figures = ReportFigures(cutoffs=(1, 5, 10))
    c, results = _comparison(figures)
    html = render_report(c, curves=results, figures=figures, sources=["qrels.txt", "bm25.run", "hybrid.run"])
    assert html.count("<svg") == 2 * len(METRICS) + 4  # delta + distribution per metric, cutoff, PR, radar, sens.
    assert 'id="comparison"' in html and html.count("<details") == len(METRICS)
    assert "Holm over all comparisons of the report" in html and "missing queries" in html
    assert "Inputs: qrels.txt, bm25.run, hybrid.run" in html
    assert "No difference with the baseline is significant" in html  # 6 queries: nothing survives Holm
    # the per-query nDCG@10 table: a row per query with both values and the difference
    row = re.search(r"<tr><td>MQ001</td>(.*?)</tr>", html.split("nDCG@10 per query")[1]).group(1)
    values = [float(v) for v in re.findall(r'data-value="([^"]+)"', row)]
    pq = {r.run_name: r.per_query("nDCG@10")["MQ001"] for r in results}
    assert values == pytest.approx([pq["bm25"], pq["hybrid"], pq["hybrid"] - pq["bm25"]])
    assert html == render_report(c, curves=results, figures=figures,
                                 sources=["qrels.txt", "bm25.run", "hybrid.run"])  # deterministic
    assert not re.search(r'(?:src|href)\s*=\s*"(?!data:|#)', html)  # nothing external
    # a strict policy: the figures' styling is in the one hashed style block, nothing is 'unsafe-inline'
    assert "unsafe-inline" not in html and not re.search(r"<[^>]*\sstyle\s*=", html)
    assert html.count("<style>") == 1 and html.count("<script>") == 1 and ".gs-s1 {" in html


@pytest.mark.slow
def test_report_without_plots_and_in_png() -> None:
    c, _ = _comparison(ReportFigures(enabled=False))
    html = render_report(c, figures=ReportFigures(enabled=False))
    assert "<svg" not in html and "<img" not in html and 'id="comparison"' in html
    c, results = _comparison(ReportFigures(cutoffs=(1, 10)))
    html = render_report(c, curves=results, figures=ReportFigures(cutoffs=(1, 10), format="png"))
    assert html.count('src="data:image/png;base64,') == 2 * len(METRICS) + 4


@pytest.mark.slow
def test_report_command(cli_runner, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    code, stdout, _ = cli_runner("report", QRELS, BM25, HYBRID, "-m", " ".join(METRICS), "-o", str(out),
                                 "--resamples", "500", "--cutoffs", "1,5,10", "--title", "bm25 vs hybrid")
    assert code == 0 and stdout.strip() == str(out)
    assert "<title>bm25 vs hybrid</title>" in out.read_text(encoding="utf-8")
    code, _, err = cli_runner("report", QRELS, BM25, "-o", str(out))
    assert code == 2 and "at least two runs" in err
    code, _, err = cli_runner("report", QRELS, BM25, HYBRID, "-m", "nDCG@x", "-o", str(out))
    assert code == 2
    code, _, err = cli_runner("report", QRELS, BM25, HYBRID, "--cutoffs", "10", "-o", str(out))
    assert code == 2 and "at least two cutoffs" in err


# ---------------------------------------------------------------------------------------------- in a browser
@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from click.testing import CliRunner

    from gainscope.cli import cli

    path = tmp_path_factory.mktemp("report") / "report.html"
    result = CliRunner().invoke(cli, ["report", QRELS, BM25, HYBRID, "-m", " ".join(METRICS), "-o", str(path),
                                      "--resamples", "500"])
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture
def opened(browser: Browser, report_file: Path) -> Iterator[Browser]:
    browser.open(report_file)
    yield browser


def test_report_renders_tables_and_figures(opened: Browser, report_file: Path, tmp_path: Path) -> None:
    assert opened.evaluate("document.querySelectorAll('#comparison tbody tr').length") == 2 * len(METRICS)
    assert opened.evaluate("document.querySelectorAll('details table').length") == len(METRICS)
    assert opened.evaluate("document.querySelector('details table').tBodies[0].rows.length") == 6
    sizes = opened.evaluate("Array.from(document.querySelectorAll('figure svg'), s => { "
                            "const b = s.getBoundingClientRect(); return [b.width, b.height]; })")
    assert len(sizes) == 2 * len(METRICS) + 4 and all(w > 200 and h > 150 for w, h in sizes)
    # bars of the nDCG@10 per-query differences: six queries, six bars
    assert opened.evaluate("document.querySelector('figure svg').querySelectorAll('g[id^=patch]').length") >= 6
    assert opened.console_errors == [] and opened.failed_requests == []
    assert [u for u in opened.requests if not u.startswith("data:")] == [report_file.resolve().as_uri()]
    shot = opened.screenshot(tmp_path / "report.png")
    assert shot.startswith(b"\x89PNG") and len(shot) > 20000


def test_report_per_query_table_sorts_by_difference(opened: Browser) -> None:
    opened.evaluate("document.querySelector('details').open = true")
    table = "document.querySelector('details table')"
    last = opened.evaluate(f"{table}.tHead.rows[0].cells.length") - 1  # hybrid - bm25
    opened.evaluate(f"{table}.tHead.rows[0].cells[{last}].querySelector('button').click()")
    shown = opened.evaluate(f"Array.from({table}.tBodies[0].rows, r => r.cells[{last}].getAttribute('data-value'))")
    numbers = [float(v) for v in shown if v is not None]
    assert numbers == sorted(numbers) and len(numbers) == 6
    classes = opened.evaluate(f"Array.from({table}.tBodies[0].rows, r => r.cells[{last}].className)")
    assert any("worse" in c for c in classes) and any("better" in c for c in classes)


# ---------------------------------------------------------------------------------------------- many queries
def _synthetic(n: int, seed: int = 0) -> list[gainscope.Results]:
    """Two runs' AP and RR on n queries (values drawn, not evaluated: the report only reads them)."""
    import numpy as np

    from gainscope.core.judged_run import Coverage

    rng = np.random.default_rng(seed)
    metrics = tuple(gainscope.resolve_metrics(["AP", "RR"]))
    ids = tuple(f"q{i}" for i in range(n))
    base = rng.integers(0, 21, size=(n, 2)) / 20
    runs = {"base": base, "new": np.clip(base + rng.integers(-4, 5, size=(n, 2)) / 20, 0, 1)}
    return [gainscope.Results(run_name=name, metrics=metrics, query_ids=ids, values=v,
                              undefined=np.zeros_like(v, dtype=bool), policies=gainscope.Policies(),
                              coverage=Coverage(n, n, n)) for name, v in runs.items()]


def _report(n: int) -> tuple[str, list[gainscope.Results]]:
    results = _synthetic(n)
    c = compare_results(results, settings=CompareSettings(resamples=200))
    return render_report(c, figures=ReportFigures(enabled=False)), results


def test_per_query_tables_list_every_query_up_to_the_limit() -> None:
    from gainscope.render.report import PER_QUERY_MAX

    html, _ = _report(PER_QUERY_MAX)
    table = html.split('id="per-query-AP"')[1].split("</table>")[0]
    assert table.count("<tr>") + table.count("<tr ") == PER_QUERY_MAX + 1  # the header row too
    assert "summarised" not in html


def test_per_query_tables_beyond_the_limit_list_the_largest_differences_and_stay_bounded() -> None:
    import numpy as np

    from gainscope.render.report import EXTREMES, PER_QUERY_MAX

    html, (base, new) = _report(PER_QUERY_MAX + 1)
    assert f"AP: {PER_QUERY_MAX + 1} queries, summarised" in html
    table = html.split('id="per-query-AP"')[1].split("</table>")[0]
    listed = re.findall(r"<tr><td>(q\d+)</td>", table)
    d = new.values[:, 0] - base.values[:, 0]
    order = np.argsort(d, kind="stable")
    losses = [new.query_ids[i] for i in order[:EXTREMES] if d[i] < 0]
    gains = [new.query_ids[i] for i in order[::-1] if d[i] > 0][:EXTREMES]
    assert sorted(listed) == sorted(set(losses) | set(gains)) and len(listed) <= 2 * EXTREMES
    shown = [d[new.query_ids.index(q)] for q in listed]
    assert shown == sorted(shown, reverse=True)  # by difference, largest gain first
    summary = html.split('id="summary-AP"')[1].split("</table>")[0]
    assert summary.count("<tr>") == 4  # header, base, new, new - base
    mean = re.search(r"<td>new - base</td><td class=\"num\" data-value=\"[^\"]+\">[^<]+</td>"
                     r"<td class=\"num\" data-value=\"([^\"]+)\"", summary)
    assert mean and float(mean.group(1)) == pytest.approx(d.mean())
    # the page does not grow with the number of queries
    bigger, _ = _report(4 * PER_QUERY_MAX)
    assert abs(len(bigger) - len(html)) < 0.05 * len(html)
