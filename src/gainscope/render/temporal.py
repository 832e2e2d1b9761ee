"""A temporal batch's :class:`~gainscope.temporal.batch.Evaluation` as a text table, markdown, JSON or CSV.

The summary is :mod:`gainscope.render.compare`'s table (each system's mean and bootstrap interval; with several
systems, the paired comparison with the baseline), followed by the temporal conventions (mode, undefined values,
extraction and failure notes) and each metric's conventions (relevance, gain, ideal, denominators, at their values,
defaults included). ``per_query`` adds one table per system (query x metric, ``-`` = no value) and, in JSON and
CSV, the per-query values; ``focus_times`` the focus times each line was evaluated with. In JSON the comparison's
``policies`` block holds these temporal conventions (``gainscope compare``'s trec_eval policies do not apply).
"""

from __future__ import annotations

import io
import json
import math
from typing import TYPE_CHECKING, Any

from gainscope.errors import PolicyError, UnknownFormatError
from gainscope.render.compare import render_comparison
from gainscope.render.text import CsvWriter, fmt_number, markdown_table, text_table

if TYPE_CHECKING:  # the adapter's types only: renderers import no adapter
    from gainscope.temporal.batch import Evaluation
    from gainscope.temporal.extraction import Extraction

__all__ = ["TEMPORAL_FORMATS", "render_evaluation"]

TEMPORAL_FORMATS = ("table", "markdown", "json", "csv")


def _per_query_rows(ev: Evaluation, system: str) -> list[list[str]]:
    rows = [[q, *[fmt_number(v) for v in ev.values[system][i]]] for i, q in enumerate(ev.query_ids[system])]
    means = [r.mean for m in ev.metrics for r in ev.comparison.rows if r.metric == m and r.run == system]
    return [*rows, ["mean", *[fmt_number(v) for v in means]]]


def _conventions(ev: Evaluation) -> list[str]:
    pairs = ev.conventions()
    width = max(len(k) for k, _ in pairs)
    return ["temporal:"] + [f"  {k.ljust(width)}  {v}" for k, v in pairs]


def _none(x: float) -> float | None:
    return None if math.isnan(x) else x


def _explain(e: Extraction | None) -> list[str]:
    """The decisions of an extraction (its last line, the resulting focus time, is shown apart)."""
    return [] if e is None else e.explain()[:-1]


def _focus_times_json(ev: Evaluation) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for system, lines in ev.focus_times.items():
        out[system] = {q: {"qft": None if f.qft is None else sorted(f.qft.years),
                           "qft_source": "not used" if f.qft is None else
                           "given" if f.qft_extraction is None else "extracted",
                           "qft_explain": _explain(f.qft_extraction),
                           "documents": [{"doc_id": d.doc_id, "dft": sorted(d.focus_time.years),
                                          "source": "given" if d.extraction is None else "extracted",
                                          "publication_year": None if d.extraction is None
                                          else d.extraction.publication_year,
                                          "explain": _explain(d.extraction)} for d in f.documents]}
                       for q, f in lines.items()}
    return out


def _focus_times_text(ev: Evaluation, md: bool) -> str:
    blocks = []
    for system, lines in ev.focus_times.items():
        rows: list[list[str]] = []
        for q, f in lines.items():
            how = ("not used" if f.qft is None else "given" if f.qft_extraction is None
                   else "extracted: " + "; ".join(_explain(f.qft_extraction)))
            rows.append([q, "qft", "-" if f.qft is None else str(f.qft), how])
            for d in f.documents:
                how = "given" if d.extraction is None else "extracted: " + "; ".join(
                    _explain(d.extraction) or ["nothing found"])
                rows.append(["", d.doc_id, str(d.focus_time), how])
        header = ["query", "of", "focus time", "how"]
        title = f"### focus times, {system}" if md else f"focus times, system {system}"
        blocks.append(title + "\n" + (markdown_table(header, rows) if md else text_table(header, rows, align="llll")))
    return "\n\n".join(blocks)


def render_evaluation(ev: Evaluation, fmt: str, *, per_query: bool = False, focus_times: bool = False) -> str:
    """Render ``ev`` in ``fmt``, one of :data:`TEMPORAL_FORMATS`; ``focus_times`` adds the focus times each line was
    evaluated with, given or extracted (with every extraction decision), in table, markdown and JSON."""
    if focus_times and fmt == "csv":
        raise PolicyError("focus times are shown in table, markdown or JSON output, not CSV")
    if fmt in ("table", "markdown"):
        md = fmt == "markdown"
        blocks = [render_comparison(ev.comparison, fmt).rstrip("\n")]
        if per_query:
            for system in ev.systems:
                header = ["query", *ev.metrics]
                table = markdown_table(header, _per_query_rows(ev, system)) if md else \
                    text_table(header, _per_query_rows(ev, system))
                blocks.append((f"### {system}" if md else f"system {system}") + "\n" + table)
        if focus_times and ev.focus_times:
            blocks.append(_focus_times_text(ev, md))
        conv = _conventions(ev)
        blocks.append("**temporal**\n\n" + "\n".join(f"- {c.strip()}" for c in conv[1:]) if md else "\n".join(conv))
        return "\n\n".join(blocks) + "\n"
    if fmt == "json":
        conventions = dict((k, v) for k, v in ev.conventions() if k != "note")
        comparison = ev.comparison.to_dict()
        # gainscope compare's policies are trec_eval's (relevance_level, ties, ...): not what made these numbers
        comparison["policies"] = conventions
        payload: dict[str, Any] = {"mode": ev.mode, "comparison": comparison,
                   "undefined": {s: [{"query_id": q, "metric": m, "reason": why} for (q, m), why in r.items()]
                                 for s, r in ev.reasons.items()},
                   "failures": {s: [{"query_id": q, "metric": m, "documents": [{"doc_id": d, "reason": why}
                                                                               for d, why in fs]}
                                    for (q, m), fs in f.items()] for s, f in ev.failures.items()},
                   "conventions": conventions,
                   "notes": [v for k, v in ev.conventions() if k == "note"]}
        if ev.profile is not None:
            payload["profile"] = ev.profile.as_dict()
        if focus_times:
            payload["focus_times"] = _focus_times_json(ev)
        if per_query:
            payload["per_query"] = {s: {q: {m: _none(float(ev.values[s][i, j])) for j, m in enumerate(ev.metrics)}
                                        for i, q in enumerate(ev.query_ids[s])} for s in ev.systems}
        return json.dumps(payload, indent=2) + "\n"
    if fmt == "csv":
        if not per_query:
            return render_comparison(ev.comparison, "csv")
        buf = io.StringIO()
        w = CsvWriter(buf)
        w.writerow(["run", "query_id", "metric", "value"])
        for s in ev.systems:
            for i, q in enumerate(ev.query_ids[s]):
                for j, m in enumerate(ev.metrics):
                    v = float(ev.values[s][i, j])
                    w.writerow([s, q, m, "" if math.isnan(v) else repr(v)])
            for m in ev.metrics:
                mean = ev.comparison.row(m, s).mean
                w.writerow([s, "all", m, "" if math.isnan(mean) else repr(mean)])
        return buf.getvalue()
    raise UnknownFormatError(f"unknown format {fmt!r}; use one of {', '.join(TEMPORAL_FORMATS)}")
