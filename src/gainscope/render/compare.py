"""A :class:`~gainscope.compare.Comparison` rendered as a text table, markdown, LaTeX, JSON or CSV.

The text and markdown tables have one row per (metric, system): mean and interval, then, for systems other
than the baseline, the paired delta and its interval, the *corrected* p-value of every test, the effect size
``d_z`` and wins/ties/losses. A significant difference is marked ``▲`` (better) or ``▼`` (worse). Raw p-values
are in the JSON and CSV output. The LaTeX table is the one IR papers print: a row per system, a column per
metric, the mean with a dagger where the difference with the baseline is significant, the best mean in bold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from gainscope.compare import CORRECTION_NAMES, TESTS, Comparison, ComparisonRow
from gainscope.errors import UnknownFormatError
from gainscope.render.text import csv_text, fmt_number, markdown_table, text_table

__all__ = ["COMPARE_FORMATS", "SHORT_TEST_NAMES", "comparison_lines", "fmt_p", "mark", "render_comparison"]

COMPARE_FORMATS = ("table", "markdown", "latex", "json", "csv")

#: column titles of the tests
SHORT_TEST_NAMES = {"t": "p(t)", "wilcoxon": "p(W)", "randomization": "p(rand)", "bootstrap": "p(boot)"}


def fmt_p(p: float | None) -> str:
    """A p-value for display: 4 decimals, ``<0.0001`` below that, ``-`` when absent."""
    if p is None or math.isnan(p):
        return "-"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def _signed(x: float | None) -> str:
    if x is None or math.isnan(x):
        return "-"
    return f"{round(x, 12) + 0.0:+.4f}"  # no "-0.0000" for a difference that is zero up to rounding


def _interval(low: float | None, high: float | None, signed: bool = False) -> str:
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return "-"
    f = _signed if signed else fmt_number
    return f"[{f(low)}, {f(high)}]"


def mark(row: ComparisonRow) -> str:
    """``▲`` for a significant gain over the baseline, ``▼`` for a significant loss, else empty."""
    if not row.significant or row.delta is None:
        return ""
    return "▲" if row.delta > 0 else "▼"


def _effect(x: float | None) -> str:
    if x is None or math.isnan(x):
        return "-"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{round(x, 12) + 0.0:+.2f}"


def _detail_rows(c: Comparison) -> tuple[list[str], list[list[str]]]:
    pct = f"{c.settings.level * 100:g}%"
    header = ["metric", "run", "mean", f"{pct} CI", "delta", f"delta {pct} CI",
              *[SHORT_TEST_NAMES[t] for t in c.settings.tests], "d_z", "W/T/L", "sig"]
    rows = []
    for r in c.rows:
        cells = [r.metric, r.run + (" (baseline)" if r.is_baseline else ""), fmt_number(r.mean),
                 _interval(r.ci_low, r.ci_high)]
        if r.is_baseline:
            cells += [""] * (len(header) - len(cells))
        else:
            wtl = r.wins_ties_losses
            cells += [_signed(r.delta), _interval(r.delta_ci_low, r.delta_ci_high, signed=True),
                      *[fmt_p(r.p_corrected.get(t)) for t in c.settings.tests], _effect(r.effect_size),
                      "-" if wtl is None else "/".join(map(str, wtl)), mark(r)]
        rows.append(cells)
    return header, rows


def comparison_lines(c: Comparison) -> list[str]:
    """The settings, pairing notes and evaluation conventions, under a ``conventions`` title."""
    from gainscope.render.results import conventions_lines

    pairs = list(c.settings.describe())
    pairs.append(("p-values", "shown corrected; raw p-values are in the JSON and CSV output"))
    pairs.extend(("pairing", n) for n in c.notes)
    width = max(len(k) for k, _ in pairs)
    lines = ["comparison:"] + [f"  {k.ljust(width)}  {v}" for k, v in pairs]
    return lines + conventions_lines(list(c.results)) if c.results else lines


_LATEX = str.maketrans({"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                        "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                        "^": r"\textasciicircum{}"})


def _latex_escape(text: str) -> str:
    return text.translate(_LATEX)


def _latex(c: Comparison) -> str:
    """Rows = systems, columns = metrics; ``$^\\dagger$`` significant gain, ``$^\\ddagger$`` significant loss."""
    cols = "l" + "r" * len(c.metrics)
    lines = [r"% needs \usepackage{booktabs}", r"\begin{table}", r"\centering", rf"\begin{{tabular}}{{{cols}}}",
             r"\toprule",
             "System & " + " & ".join(_latex_escape(m) for m in c.metrics) + r" \\", r"\midrule"]
    best = {m: max((r.mean for r in c.rows if r.metric == m and not math.isnan(r.mean)), default=math.nan)
            for m in c.metrics}
    for run in c.runs:
        cells = [_latex_escape(run) + (" (baseline)" if run == c.baseline else "")]
        for m in c.metrics:
            r = c.row(m, run)
            text = fmt_number(r.mean)
            if not math.isnan(r.mean) and r.mean == best[m]:
                text = rf"\textbf{{{text}}}"
            if r.significant:
                text += r"$^{\dagger}$" if (r.delta or 0) > 0 else r"$^{\ddagger}$"
            cells.append(text)
        lines.append(" & ".join(cells) + r" \\")
    s = c.settings
    caption = (rf"Means over queries. $^{{\dagger}}$/$^{{\ddagger}}$: significantly better/worse than "
               rf"{_latex_escape(c.baseline)} ({TESTS[s.significance]} test, {CORRECTION_NAMES[s.correction]} "
               rf"correction over {_count(sum(1 for r in c.rows if r.p_value), 'comparison')}, "
               rf"$\alpha = {s.alpha:g}$). "
               "Best mean in bold.")
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{caption}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _csv(c: Comparison) -> str:
    records = c.to_records()
    if not records:
        return ""
    return csv_text([list(records[0]), *([
        "" if v is None or (isinstance(v, float) and math.isnan(v)) else (repr(v) if isinstance(v, float) else v)
        for v in rec.values()] for rec in records)])


def render_comparison(c: Comparison, fmt: str) -> str:
    """Render ``c`` in ``fmt``, one of :data:`COMPARE_FORMATS`."""
    if fmt in ("table", "markdown"):
        header, rows = _detail_rows(c)
        md = fmt == "markdown"
        conv = comparison_lines(c)
        body = markdown_table(header, rows) if md else text_table(header, rows, align=_align(header))
        if md:
            notes = "\n".join(f"- {line.strip()}" for line in conv if not line.endswith(":"))
            return body + "\n\n**settings and conventions**\n\n" + notes + "\n"
        return body + "\n\n" + "\n".join(conv) + "\n"
    if fmt == "latex":
        return _latex(c)
    if fmt == "json":
        return c.to_json(indent=2) + "\n"
    if fmt == "csv":
        return _csv(c)
    raise UnknownFormatError(f"unknown format {fmt!r}; use one of {', '.join(COMPARE_FORMATS)}")


def _align(header: Sequence[str]) -> list[str]:
    return ["l", "l"] + ["r"] * (len(header) - 3) + ["l"]
