"""Agent evaluations as text tables, JSON and CSV, and de-duplication explanations as text.

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
"""

from __future__ import annotations

import io
import json
import math

from gainscope.agents.dedup import Deduplication, DedupSettings, explain
from gainscope.agents.evaluate import ALL_GOOD, SUMMARY_METRICS, AgentReport, Aggregate, ConversationResult
from gainscope.agents.metrics import ITERATION_COLUMNS
from gainscope.agents.trace import Conversation
from gainscope.errors import UnknownFormatError
from gainscope.render.text import CsvWriter, fmt_number, text_table

__all__ = ["CSV_COLUMNS", "FORMATS", "render_explanations", "render_report"]

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
    out.extend(_all_good_line(a, report.settings.cap) for a in report.aggregates if a.metric == ALL_GOOD)
    out.append("conventions:")
    out.extend(f"  {name:<10} {text}" for name, text in report.settings.describe(report.source))
    return "\n".join(out) + "\n"


def _all_good_line(a: Aggregate, cap: int) -> str:
    """What the IterationsForAllGoodResults row is over: the conversations that retrieved every good result."""
    over = f"{a.n} conversation{'s' if a.n != 1 else ''}"
    return (f"{ALL_GOOD}: over the {over} that retrieved every good result by iteration {cap}; {a.capped} "
            f"capped at {cap} (left out, not averaged in)")


CSV_COLUMNS = ("scope", "conversation_id", "query_id", "i", "metric", "statistic", "value")


def _csv(report: AgentReport, per_conversation: bool) -> str:
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
        if a.metric == ALL_GOOD:
            writer.writerow(["aggregate", "", "", "", a.metric, "capped", a.capped])
    for c in report.conversations:
        head = ["conversation", c.conversation_id, c.query_id, ""]
        for m in SUMMARY_METRICS:
            writer.writerow([*head, m, "value", number(c.summary[m])])
        flag = "" if c.all_good_found is None else str(c.all_good_found).lower()
        facts: list[tuple[str, object]] = [("turn", c.turn), ("unique_results", len(c.dedup.unique)),
                                           ("all_good_found", flag),
                                           ("all_good_capped", str(c.all_good_capped).lower())]
        facts += [(f"grades_{status}", sum(1 for g in c.grades if g.status == status))
                  for status in ("ok", "unjudged", "failed", "missing")]
        for name, v in facts:
            writer.writerow([*head, name, "value", v])
        for k, note in enumerate(c.notes, start=1):
            writer.writerow([*head, "note", k, note])
        if per_conversation:
            for it in c.curve:
                for m in ITERATION_COLUMNS:
                    writer.writerow(["iteration", c.conversation_id, c.query_id, it.i, m, "value",
                                     number(it.values[m])])
    for name, text in report.settings.describe(report.source):
        writer.writerow(["convention", "", "", "", name, "", text])
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
