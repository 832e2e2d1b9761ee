"""Agreement between two label sets (:class:`gainscope.agreement.Agreement`) as a text table, markdown or JSON:
coverage, the kappas and alphas, the confusion matrix, and per metric both leaderboards with their correlations."""

from __future__ import annotations

from gainscope.agreement import Agreement, LabelAgreement, RankingAgreement
from gainscope.errors import UnknownFormatError
from gainscope.render.text import fmt_number, markdown_table, text_table

__all__ = ["AGREEMENT_FORMATS", "render_agreement"]

AGREEMENT_FORMATS = ("table", "markdown", "json")

DEFINITIONS = (
    "kappa = 1 - sum(w O) / sum(w E) over category indices i, j of k: unweighted w = [i != j], "
    "linear |i - j| / (k - 1), quadratic ((i - j) / (k - 1))^2",
    "alpha: Krippendorff (2011) from the coincidence matrix; ordinal distances from the pairable-value frequencies",
    "tau-b: Kendall's tau with the tie correction; tau_AP: Yilmaz et al. (2008), symmetric (mean of both "
    "directions), ties as tau_AP-b (Urbano & Marrero 2017); rho: Pearson correlation of average ranks",
)


# ---------------------------------------------------------------------------------------------- rendering
def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _grade(c: float) -> str:
    return f"{c:g}"


def coverage_lines(labels: LabelAgreement, names: tuple[str, str]) -> list[str]:
    """How many pairs were compared and which were judged by one set only."""
    lab = labels
    lines = [f"pairs judged in both: {lab.n} ({_share(lab.n, lab.judged_a)} of {names[0]}'s {lab.judged_a}, "
             f"{_share(lab.n, lab.judged_b)} of {names[1]}'s {lab.judged_b})"]
    for name, count, examples in ((names[0], lab.only_in_a, lab.only_in_a_examples),
                                  (names[1], lab.only_in_b, lab.only_in_b_examples)):
        shown = f": {', '.join(examples)}{', ...' if count > len(examples) else ''}" if count else ""
        lines.append(f"only in {name}: {_plural(count, 'pair')}{shown} (not compared)")
    return lines


def _statistic_rows(labels: LabelAgreement) -> list[list[str]]:
    rows = [["observed agreement", fmt_number(labels.observed_agreement)]]
    rows += [[c.name, fmt_number(c.value)] for c in labels.coefficients]
    return rows


def _undefined_lines(labels: LabelAgreement, rankings: tuple[RankingAgreement, ...]) -> list[str]:
    lines = [f"{c.name}: undefined: {c.reason}" for c in labels.coefficients if not c.defined]
    for r in rankings:
        lines += [f"{r.metric}: {c.name}: undefined: {c.reason}" for c in (r.kendall, r.tau_ap, r.spearman)
                  if not c.defined]
    return lines


def _confusion_rows(labels: LabelAgreement, names: tuple[str, str]) -> tuple[list[str], list[list[str]]]:
    header = [f"{names[0]} \\ {names[1]}", *[_grade(c) for c in labels.categories], "total"]
    rows = [[_grade(c), *[str(v) for v in labels.confusion[i].tolist()], str(int(labels.confusion[i].sum()))]
            for i, c in enumerate(labels.categories)]
    rows.append(["total", *[str(v) for v in labels.confusion.sum(axis=0).tolist()], str(labels.n)])
    return header, rows


def _leaderboard_rows(r: RankingAgreement, names: tuple[str, str]) -> tuple[list[str], list[list[str]]]:
    header = ["#", names[0], r.metric, "#", names[1], r.metric]
    rows = [[str(ra), sa, fmt_number(ma), str(rb), sb, fmt_number(mb)]
            for (ra, sa, ma), (rb, sb, mb) in zip(r.leaderboard("a"), r.leaderboard("b"), strict=True)]
    return header, rows


def correlation_line(r: RankingAgreement, names: tuple[str, str]) -> str:
    """``Kendall tau-b 0.6667 · tau_AP 0.5556 · Spearman rho 0.8000 (4 systems; tau-b: 5 concordant, ...)``."""
    parts = [f"{c.name} {fmt_number(c.value)}" for c in (r.kendall, r.tau_ap, r.spearman)]
    pairs = r.kendall.detail.replace("tied in x", f"tied under {names[0]}").replace("tied in y",
                                                                                   f"tied under {names[1]}")
    return " · ".join(parts) + f" ({_plural(len(r.systems), 'system')}; {pairs})"


def _settings_lines(a: Agreement) -> list[str]:
    pairs: list[tuple[str, str]] = [("threshold", f"binarised kappa counts grade >= "
                                                  f"{_grade(a.labels.threshold)} as relevant")]
    pairs += [("definition", d) for d in DEFINITIONS]
    if a.policies is not None:
        pairs += a.policies.describe()
    pairs += [("note", n) for n in a.notes]
    width = max(len(k) for k, _ in pairs)
    return ["conventions:"] + [f"  {k.ljust(width)}  {v}" for k, v in pairs]


def _table(a: Agreement) -> str:
    blocks = ["\n".join(coverage_lines(a.labels, a.names)),
              text_table(["label agreement", "value"], _statistic_rows(a.labels))]
    undefined = _undefined_lines(a.labels, a.rankings)
    if undefined:
        blocks.append("\n".join(undefined))
    header, rows = _confusion_rows(a.labels, a.names)
    blocks.append(f"confusion matrix (rows {a.names[0]}, columns {a.names[1]}):\n" + text_table(header, rows))
    for r in a.rankings:
        header, rows = _leaderboard_rows(r, a.names)
        table = text_table(header, rows, align=["r", "l", "r", "r", "l", "r"])
        blocks.append(f"systems by {r.metric}:\n{table}\n{correlation_line(r, a.names)}")
    blocks.append("\n".join(_settings_lines(a)))
    return "\n\n".join(blocks) + "\n"


def _markdown_report(a: Agreement) -> str:
    blocks = ["**coverage**\n\n" + "\n".join(f"- {line}" for line in coverage_lines(a.labels, a.names)),
              markdown_table(["label agreement", "value"], _statistic_rows(a.labels))]
    undefined = _undefined_lines(a.labels, a.rankings)
    if undefined:
        blocks.append("\n".join(f"- {line}" for line in undefined))
    header, rows = _confusion_rows(a.labels, a.names)
    blocks.append(f"**confusion matrix** (rows {a.names[0]}, columns {a.names[1]})\n\n" + markdown_table(header, rows))
    for r in a.rankings:
        header, rows = _leaderboard_rows(r, a.names)
        blocks.append(f"**systems by {r.metric}**\n\n{markdown_table(header, rows)}\n\n{correlation_line(r, a.names)}")
    conv = _settings_lines(a)
    blocks.append("**conventions**\n\n" + "\n".join(f"- {line.strip()}" for line in conv[1:]))
    return "\n\n".join(blocks) + "\n"


def render_agreement(a: Agreement, fmt: str) -> str:
    """Render ``a`` as ``table``, ``markdown`` or ``json``."""
    if fmt == "table":
        return _table(a)
    if fmt == "markdown":
        return _markdown_report(a)
    if fmt == "json":
        return a.to_json(indent=2) + "\n"
    raise UnknownFormatError(f"unknown format {fmt!r}; use one of {', '.join(AGREEMENT_FORMATS)}")
