"""Agent evaluations as text tables, JSON and CSV, and de-duplication explanations as text.

* ``table``: the conventions, then one row per value at N over conversations (mean, median, interval of the
  mean, conversations with a value, conversations where it is undefined). Per conversation (``per_conversation``):
  a table of every value of seed 003 at each iteration, the summary at N and the notes (unjudged, failed or
  missing grades; good results never all found; turns not evaluated).
* ``json``: :meth:`AgentReport.to_dict` (undefined values are ``null``).
* ``csv``: the aggregate rows; per conversation, one row per conversation with its values at N.
"""

from __future__ import annotations

import csv
import io
import json
import math

from gainscope.agents.dedup import Deduplication, DedupSettings, explain
from gainscope.agents.evaluate import SUMMARY_METRICS, AgentReport, ConversationResult
from gainscope.agents.metrics import ITERATION_COLUMNS
from gainscope.agents.trace import Conversation
from gainscope.errors import UnknownFormatError
from gainscope.render.text import fmt_number, text_table

__all__ = ["FORMATS", "render_explanations", "render_report"]

FORMATS = ("table", "json", "csv")
_COUNTS = {"N", "R@N", "UR@N", "DupR@N", "|R^i|", "|UR^i|", "|Dup^i|", "R@i", "UR@i", "DupR@i", "|R^N|", "|UR^N|",
           "|Dup^N|", "IterationsForAllGoodResults"}
_SHORT = {"IterationsForAllGoodResults": "IterAllGood"}


def _cell(name: str, x: float) -> str:
    if isinstance(x, float) and not math.isnan(x) and (name in _COUNTS or name.startswith(("|GR", "GR@"))):
        return f"{x:.0f}"
    return fmt_number(x)


def _conversation_table(c: ConversationResult) -> str:
    header = ["i", *ITERATION_COLUMNS]
    rows = [[str(it.i), *(_cell(n, it.values[n]) for n in ITERATION_COLUMNS)] for it in c.curve]
    if not rows:
        return "(no iteration with a search)"
    return text_table(header, rows)


def _summary_line(c: ConversationResult) -> str:
    return "  ".join(f"{_SHORT.get(m, m)}={_cell(m, c.summary[m])}" for m in SUMMARY_METRICS)


def _table(report: AgentReport, per_conversation: bool) -> str:
    out = []
    if per_conversation:
        for c in report.conversations:
            out.append(f"conversation {c.conversation_id} (query {c.query_id}, turn {c.turn}, "
                       f"{len(c.dedup.unique)} unique results)")
            out.append(_conversation_table(c))
            out.append("at N: " + _summary_line(c))
            out.extend(f"note: {n}" for n in c.notes)
            out.append("")
    n = len(report.conversations)
    level = f"{report.settings.level * 100:g}%"
    rows = [[a.metric, fmt_number(a.mean),
             fmt_number(a.median), fmt_number(a.ci_low), fmt_number(a.ci_high), str(a.n), str(a.undefined)]
            for a in report.aggregates]
    out.append(f"over {n} conversation{'s' if n != 1 else ''} (values at N)")
    out.append(text_table(["metric", "mean", "median", f"{level} CI low", "high", "n", "undefined"], rows))
    out.append("conventions:")
    out.extend(f"  {name:<10} {text}" for name, text in report.settings.describe(report.source))
    return "\n".join(out) + "\n"


def _csv(report: AgentReport, per_conversation: bool) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")

    def value(x: float) -> str:
        return "" if math.isnan(x) else repr(float(x))

    if per_conversation:
        writer.writerow(["conversation_id", "query_id", *SUMMARY_METRICS])
        for c in report.conversations:
            writer.writerow([c.conversation_id, c.query_id, *(value(c.summary[m]) for m in SUMMARY_METRICS)])
    else:
        writer.writerow(["metric", "mean", "median", "ci_low", "ci_high", "n", "undefined"])
        for a in report.aggregates:
            writer.writerow([a.metric, value(a.mean), value(a.median), value(a.ci_low), value(a.ci_high), a.n,
                             a.undefined])
    return buffer.getvalue()


def render_report(report: AgentReport, fmt: str = "table", *, per_conversation: bool = False) -> str:
    """The report in ``fmt`` (see the module docstring)."""
    if fmt == "table":
        return _table(report, per_conversation)
    if fmt == "json":
        return json.dumps(report.to_dict(conversations=per_conversation), indent=2, ensure_ascii=False,
                          allow_nan=False) + "\n"
    if fmt == "csv":
        return _csv(report, per_conversation)
    raise UnknownFormatError(f"unknown output format {fmt!r}; formats: {', '.join(FORMATS)}")


def render_explanations(items: list[tuple[Conversation, Deduplication]], settings: DedupSettings) -> str:
    """Every merge decision of every conversation (last turn), with a header of counts per conversation."""
    out = []
    for conv, dedup in items:
        total = len(dedup.decisions)
        dups = sum(1 for d in dedup.decisions if not d.new)
        turns = len(conv.turns)
        scope = f"turn {turns} of {turns}" if turns > 1 else "single turn"
        out.append(f"conversation {conv.conversation_id} ({scope}): {dedup.n_iterations} iteration(s), "
                   f"{total} results, {len(dedup.unique)} unique, {dups} duplicates")
        out.extend("  " + line for line in explain(dedup, settings))
        out.append("")
    return "\n".join(out)
