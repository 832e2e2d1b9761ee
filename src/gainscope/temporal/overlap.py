"""What the inputs of a temporal batch must share, and what happens when they share nothing.

A batch (:mod:`gainscope.temporal.batch`) joins inputs in five places; when one of them matches nothing in the
whole file, every value that depends on it is 0 or undefined -- a table of zeros that says nothing -- so it is an
:class:`~gainscope.errors.InconsistentInputError` naming the file, an example line and the likely cause. When it
matches nothing for one system only, while other systems match, one warning names that system.

==========  ===================================================  =====================================================
join        a line matches when                                  metrics
==========  ===================================================  =====================================================
``gold``    a retrieved id is a gold id (gold mode)              every metric in gold mode
``qft``     a retrieved document's focus time shares a year      the metrics that take ``qft`` (nDCG, precision,
            with the query's                                     recall, MRR, MAP, year precision and recall)
``anchors`` a retrieved document's focus time shares a year      :class:`~gainscope.temporal.years.TemporalCoverage`
            with an anchor
``scope``   a retrieved document's years fall in a bucket of     :class:`~gainscope.temporal.years.TemporalDiversity`
            ``scope`` (with ``total_scope``: a retrieved         (focus-time mode)
            document has a focus time)
``systems`` every system shares a query with the baseline        the comparison
==========  ===================================================  =====================================================

A line where a join cannot apply -- no gold or no ranking, an empty query focus time (the value is undefined, and
the ``undefined`` policy says so) -- is left out of it. In LLM mode the judge grades every document: nothing to
join. The gold sits on its query's line, so there is no query id to join between gold and rankings; the systems
join by query id, and a system that shares only some queries with the baseline is one
:class:`~gainscope.errors.QueryCoverageWarning` naming the queries each has alone. :func:`check_systems` runs before
anything is scored, so no judge request is spent on a comparison that cannot be made; :func:`check_overlap` after.

Matching uses every retrieved document, not only the top ``k``: a file whose relevant documents all sit below the
cutoff is a ranking problem the values show, not a join that failed.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gainscope.errors import InconsistentInputError, InputWarning, QueryCoverageWarning, format_ids, loose_match
from gainscope.temporal.base import Mode, TemporalMetric
from gainscope.temporal.focus_time import FocusTime, as_focus_time
from gainscope.temporal.years import TemporalCoverage, TemporalDiversity

__all__ = ["Line", "check_overlap", "check_systems"]

_SHOWN = 4  # documents shown for an example line


@dataclass(frozen=True)
class Line:
    """One evaluated line of a batch: its system, line number, query id, retrieved ids and the inputs the metrics
    were given (focus times already given or extracted)."""

    system: str
    line: int
    query_id: str
    doc_ids: tuple[str, ...]
    inputs: Mapping[str, Any]


def _kind(metric: TemporalMetric, mode: Mode) -> str | None:
    if mode == "gold":
        return "gold"
    if mode != "focus_time":
        return None
    if isinstance(metric, TemporalCoverage):
        return "anchors"
    if isinstance(metric, TemporalDiversity):
        return "scope"
    return "qft" if "qft" in metric.inputs() else None


def _ids(values: object) -> set[str]:
    return {str(v) for v in values} if isinstance(values, Mapping | list | tuple | set | frozenset) else set()


def _anchors(inputs: Mapping[str, Any]) -> list[FocusTime]:
    anchors = inputs.get("anchors")
    if anchors is None:
        anchors = [a for a in (inputs.get("baseline_anchor"), inputs.get("comparison_anchor")) if a is not None]
    return [as_focus_time(a, "anchors") for a in anchors]


def _match(kind: str, metric: TemporalMetric, inputs: Mapping[str, Any]) -> bool | None:
    """Whether the line's inputs meet for this join; None when the join does not apply to the line."""
    if kind == "gold":
        gold, retrieved = _ids(inputs.get("gold_ids")), _ids(inputs.get("retrieved_ids"))
        return bool(gold & retrieved) if gold and retrieved else None
    dfts: list[FocusTime] = list(inputs.get("dfts") or [])
    if not dfts:
        return None
    if kind == "qft":
        qft = inputs.get("qft")
        return any(qft & d for d in dfts) if isinstance(qft, FocusTime) and qft else None
    if kind == "anchors":
        anchors = _anchors(inputs)
        return any(a & d for a in anchors for d in dfts) if anchors else None
    assert isinstance(metric, TemporalDiversity)
    if inputs.get("scope") is None:
        return any(dfts)
    g = metric.granularity
    buckets = {y // g for y in as_focus_time(inputs["scope"], "scope").years}
    return any(y // g in buckets for d in dfts for y in d.years) if buckets else None


def _example(kind: str, line: Line) -> str:
    """What one line holds for a join, for a message."""
    head = f"line {line.line} (query {line.query_id!r}"
    inputs = line.inputs
    if kind == "gold":
        return (f"{head}): gold {format_ids(sorted(_ids(inputs.get('gold_ids'))), _SHOWN)}; retrieved "
                f"{format_ids([str(i) for i in inputs.get('retrieved_ids') or []], _SHOWN)}")
    docs = [f"{d}: {ft if ft else 'no years'}" for d, ft in zip(line.doc_ids, inputs.get("dfts") or [], strict=False)]
    given = {"qft": f"qft {inputs.get('qft')}", "anchors": f"anchors {', '.join(map(str, _anchors(inputs)))}",
             "scope": f"scope {inputs['scope']}" if inputs.get("scope") is not None else
             f"total_scope {inputs.get('total_scope')}"}[kind]
    return f"{head}): {given}; documents {format_ids(docs, _SHOWN)}"


_WHAT = {
    "gold": "no retrieved document is in the gold of its line",
    "qft": "no retrieved document's focus time shares a year with its query's focus time",
    "anchors": "no retrieved document's focus time shares a year with an anchor of its line",
    "scope": "no retrieved document's years fall in the scope of its line",
}


def _hint(kind: str, lines: Sequence[Line]) -> str:
    if kind == "gold":
        gold = sorted({g for x in lines for g in _ids(x.inputs.get("gold_ids"))})
        retrieved = list(dict.fromkeys(str(i) for x in lines for i in x.inputs.get("retrieved_ids") or []))
        near = loose_match(retrieved, gold)
        if near is not None:
            return (f"Some ids match after removing whitespace and leading zeros (for example {near[0]!r} and "
                    f"{near[1]!r}); fix the ids so that the gold and the rankings spell them the same.")
        return "Check that the gold and the rankings spell document ids the same."
    if not any(d for x in lines for d in x.inputs.get("dfts") or []):
        return ("No retrieved document has a focus time: give each a \"dft\", or a \"text\" with years; "
                "--show-focus-times shows what every line was evaluated with.")
    return "--show-focus-times shows the focus times every line was evaluated with."


def _lines(n: int, whose: str) -> str:
    """``"the one line"``, ``"any of the 3 lines"``."""
    return f"{whose} one line" if n == 1 else f"any of {whose} {n} lines"


def check_overlap(lines: Sequence[Line], metrics: Sequence[TemporalMetric], names: Sequence[str], mode: Mode,
                  path: str) -> None:
    """Refuse joins that match nothing in the file and warn about systems they match nothing for (see the module
    docstring)."""
    kinds: dict[str, list[tuple[TemporalMetric, str]]] = {}
    for metric, name in zip(metrics, names, strict=True):
        kind = _kind(metric, mode)
        if kind is not None:
            kinds.setdefault(kind, []).append((metric, name))
    for kind, members in kinds.items():
        # per line, whether some metric of this kind finds a match (None: the join applies to no metric there)
        found: list[tuple[Line, bool]] = []
        for x in lines:
            verdicts = [v for v in (_match(kind, m, x.inputs) for m, _ in members) if v is not None]
            if verdicts:
                found.append((x, any(verdicts)))
        if not found:
            continue
        metric_names = ", ".join(n for _, n in members)
        if not any(ok for _, ok in found):
            applied = [x for x, _ in found]
            raise InconsistentInputError(
                f"{path}: {_WHAT[kind]}, on {_lines(len(applied), 'the')} it applies to (e.g. "
                f"{_example(kind, applied[0])}); every value of {metric_names} would be 0 or undefined. "
                f"{_hint(kind, applied)}")
        for system in dict.fromkeys(x.system for x, _ in found):
            mine = [x for x, _ in found if x.system == system]
            if not any(ok for x, ok in found if x.system == system):
                warnings.warn(InputWarning(
                    f"{path}: system {system!r}: {_WHAT[kind]}, on {_lines(len(mine), 'its')} (e.g. "
                    f"{_example(kind, mine[0])}), while other systems match; its values of {metric_names} are 0 or "
                    f"undefined. {_hint(kind, mine)}"), stacklevel=3)


def check_systems(queries: Mapping[str, Sequence[str]], path: str, baseline: str | None = None) -> None:
    """Refuse a system that shares no query with the baseline (``baseline``, else the first system), and warn
    about one that shares only some; ``queries`` maps each system, in file order, to its query ids."""
    systems = list(queries)
    base = baseline if baseline is not None else systems[0] if systems else None
    if base is None or base not in queries:
        return  # an unknown baseline is the comparison's error
    mine = list(queries[base])
    for system in systems:
        if system == base:
            continue
        theirs = list(queries[system])
        shared = set(mine) & set(theirs)
        if not shared:
            near = loose_match(theirs, mine)
            hint = (f" Some ids match after removing whitespace and leading zeros (for example {near[0]!r} and "
                    f"{near[1]!r}); fix the ids so that every system spells them the same." if near else "")
            raise InconsistentInputError(
                f"{path}: system {system!r} and the baseline {base!r} share no query, so nothing can be compared: "
                f"{base!r} has {format_ids(mine, 3)}; {system!r} has {format_ids(theirs, 3)}.{hint}")
        only_base = [q for q in mine if q not in shared]
        only_system = [q for q in theirs if q not in shared]
        if only_base or only_system:
            parts = [f"only {name!r} has {format_ids(qs)}" for name, qs in ((base, only_base), (system, only_system))
                     if qs]
            warnings.warn(QueryCoverageWarning(
                f"{path}: system {system!r} and the baseline {base!r} rank different queries; they are compared "
                f"over the {len(shared)} they share ({'; '.join(parts)})"), stacklevel=3)
