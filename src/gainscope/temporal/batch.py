"""Many queries at once: a JSONL file of queries, retrieved documents and gold, evaluated with temporal metrics
per query, aggregated with bootstrap intervals, and compared across systems when the file holds several.

One JSON object per line, one (system, query) ranking each::

    {"query_id": "q1", "system": "bm25",                       # system (or run) optional: one system "run"
     "query": "Who won the election in 2020?",                 # text: for LLM mode, or to extract the QFT
     "qft": [2020],                                            # optional: else extracted from "query"
     "reference_date": "2024-06-01",                           # optional: resolves "last year" (else --reference-date)
     "retrieved": [{"doc_id": "d1", "text": "...", "dft": ["2019-2020"], "publication_year": 2021}, ...],
     "gold": ["d1"]}                                           # or {"d1": 2}: gold mode

``retrieved`` may also be given as parallel lists ``retrieved_ids``, ``retrieved_docs`` (texts) and ``dfts``;
``gold_ids`` is accepted for ``gold``. A document's focus time is its ``dft``, else extracted from its ``text``
(as a document: its publication year, given or found, is kept apart). Metric inputs ``other_dfts``,
``total_relevant``, ``scope``, ``total_scope``, ``anchors``, ``baseline_anchor`` and ``comparison_anchor`` are
read when present, and each metric is given only the inputs it takes in the mode
(:meth:`~gainscope.temporal.base.TemporalMetric.inputs`: ``total_relevant`` goes to recall, ``scope`` to
diversity, ``anchors`` to coverage); an input that no metric asked for takes is ignored and named in the notes.
A query's focus time is only read (or extracted) when a metric takes it: diversity and coverage need the documents'
focus times only. A relative expression ("last year") in a text, with no reference date on the line nor given for
the file (and, for a document, no publication date), is an error naming the line and the query or document, or,
with ``unresolved="report"``, gives no years and is listed in the notes. Any input a metric rejects is an
:class:`~gainscope.errors.InputError` naming the file, the line and the metric.

The mode is the same for the whole file: ``gold`` when every line has gold, ``focus_time`` when none has; gold
on some lines only is an error naming the first line without (ask for ``focus_time`` to leave the gold aside);
or as asked (``llm`` needs a judge). Undefined values (NaN with a reason) follow ``undefined``: ``"zero"`` scores
them 0 with an :class:`~gainscope.errors.UndefinedMetricWarning` naming the queries (as the other gainscope metrics
by default), ``"skip"`` leaves them out of the mean. A failed LLM grade is never scored: the query has no value for that
metric (left out of the mean) and is listed in :attr:`Evaluation.failures`. In LLM mode the judge is wrapped in a
:class:`~gainscope.temporal.judging.SharedJudge` (unless it is one already): each (query, document) is graded once
per evaluation and every metric reads that grade; the judge is asked with the line's query id.

Input that matches nothing never becomes a table of zeros (:mod:`gainscope.temporal.overlap`): gold ids that no
line retrieves, query and document focus times (or anchors, or a scope) that share no year on any line, and a
system that shares no query with the baseline are an :class:`~gainscope.errors.InconsistentInputError` naming the
file and an example line; a system they match nothing for while others match, or that shares only some queries
with the baseline, is a warning.

The values are the core's (:mod:`gainscope.temporal.engine`): each metric prepares every line of a system -- the
first ``k`` documents and the judged pool, or the derived ranking of a year measure -- and its core metric
computes them all at once. The result is one :class:`~gainscope.results.Results` per system (the core's type; its
columns are labelled with the temporal names and hold the core metrics, its policies the order given, the mode's
relevance level and ``undefined``), viewed by :class:`Evaluation` with the reasons, failures and conventions, and
rendered by :mod:`gainscope.render.temporal`. ``profile="tempoeval"`` gives the names TempoEval's conventions in
the file's mode (:mod:`gainscope.temporal.names`).

Statistics are those of :mod:`gainscope.compare`: each system's mean with a bootstrap interval, and, for every
system but the baseline (the first in the file unless named), paired differences over the queries both systems
have a value for, paired tests corrected over every comparison, effect size and wins/ties/losses.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from gainscope.core.judged_run import Coverage
from gainscope.core.policies import Policies
from gainscope.errors import (
    FileAccessError,
    FormatError,
    InputError,
    PolicyError,
    UndefinedMetricWarning,
    format_ids,
)
from gainscope.io.texts import Document, Query
from gainscope.metrics.profiles import Profile, ProfileUse
from gainscope.results import Results
from gainscope.temporal.base import MODE_LEVELS, Mode, TemporalMetric
from gainscope.temporal.engine import Prepared, evaluate_prepared
from gainscope.temporal.extraction import Extraction, UnresolvedTimeError, extract_focus_time
from gainscope.temporal.extraction import reference_date as checked_reference
from gainscope.temporal.focus_time import FocusTime, as_focus_time
from gainscope.temporal.judging import SharedJudge
from gainscope.temporal.names import METRICS, MetricSpec, parse_metric, temporal_profile
from gainscope.temporal.overlap import Line, check_overlap, check_systems

if TYPE_CHECKING:
    from gainscope.compare import CompareSettings, Comparison
    from gainscope.judges.labeling import Judge

__all__ = ["METRICS", "DocumentFocusTime", "Evaluation", "LineFocusTimes", "MetricSpec", "Record", "aevaluate_records",
           "evaluate_records", "parse_metric", "read_records"]

_EXTRA_INPUTS = ("other_dfts", "total_relevant", "scope", "total_scope", "anchors", "baseline_anchor",
                 "comparison_anchor")


@dataclass(frozen=True)
class Record:
    """One (system, query) line of the file, as read."""

    line: int
    system: str
    query_id: str
    query: str
    qft: object
    reference: dt.date | int | str | None  # as given (checked): relative expressions use every part of it
    docs: tuple[dict[str, Any], ...]
    gold: object
    extras: dict[str, Any]


def _docs(obj: dict[str, Any], where: str) -> tuple[dict[str, Any], ...]:
    """The line's ranking, each document id once (in every mode: a ranking lists a document once)."""
    docs = _ranking(obj, where)
    seen: set[str] = set()
    for i, d in enumerate(docs):
        if d["doc_id"] in seen:
            raise InputError(f"{where}: document {d['doc_id']!r} is retrieved twice (again at rank {i + 1}); a "
                             "ranking lists each document once")
        seen.add(d["doc_id"])
    return docs


def _ranking(obj: dict[str, Any], where: str) -> tuple[dict[str, Any], ...]:
    if "retrieved" in obj:
        items = obj["retrieved"]
        if not isinstance(items, list):
            raise InputError(f"{where}: 'retrieved' is a list of documents")
        out = []
        for i, d in enumerate(items):
            if isinstance(d, str):
                d = {"doc_id": d}
            if not isinstance(d, dict) or ("doc_id" not in d and "id" not in d):
                raise InputError(f"{where}: retrieved[{i}] needs a doc_id (or id)")
            out.append({"doc_id": str(d.get("doc_id", d.get("id"))), **{k: d[k] for k in
                        ("text", "dft", "publication_year") if k in d}})
        return tuple(out)
    ids, texts, dfts = obj.get("retrieved_ids"), obj.get("retrieved_docs"), obj.get("dfts")
    lists = [x for x in (ids, texts, dfts) if x is not None]
    if not lists:
        raise InputError(f"{where}: no ranking; give 'retrieved' (a list of documents) or 'retrieved_ids' / "
                         "'retrieved_docs' / 'dfts'")
    if any(not isinstance(x, list) for x in lists) or len({len(x) for x in lists}) > 1:
        raise InputError(f"{where}: retrieved_ids, retrieved_docs and dfts are lists of the same length")
    n = len(lists[0])
    return tuple({"doc_id": str(ids[i]) if ids is not None else f"d{i + 1}",
                  **({"text": texts[i]} if texts is not None else {}),
                  **({"dft": dfts[i]} if dfts is not None else {})} for i in range(n))


def _gold(obj: dict[str, Any], where: str) -> object:
    """The line's gold (None when it has none), checked: a list of ids or ``{id: grade}`` with grades >= 0."""
    key = "gold" if "gold" in obj else "gold_ids"
    gold = obj.get(key)
    if gold is None:
        return None
    if isinstance(gold, dict):
        for doc, grade in gold.items():
            if isinstance(grade, bool) or not isinstance(grade, int | float) or not math.isfinite(grade) or grade < 0:
                raise InputError(f"{where}: {key}[{doc!r}]: a grade is a finite number >= 0; got {grade!r}")
        return gold
    if not isinstance(gold, list):
        raise InputError(f"{where}: {key} is a list of document ids or a {{id: grade}} object; got "
                         f"{type(gold).__name__} {gold!r}")
    for i, doc in enumerate(gold):
        if isinstance(doc, bool) or not isinstance(doc, str | int):
            raise InputError(f"{where}: {key}[{i}]: a document id is a string or a number; got {doc!r}")
    return gold


def read_records(path: str | Path, *, reference_date: object = None) -> list[Record]:
    """The records of a JSONL file (see the module docstring); every problem names the file and line."""
    p = Path(path)
    if not p.exists():
        raise FileAccessError(f"{p}: no such file", path=str(p))
    default_ref = checked_reference(reference_date, "--reference-date")  # type: ignore[arg-type]
    out: list[Record] = []
    seen: set[tuple[str, str]] = set()
    with p.open(encoding="utf-8-sig") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise FormatError(f"not a JSON object ({exc.msg})", path=str(p), line=number,
                                  text=line.rstrip()[:200]) from None
            if not isinstance(obj, dict):
                raise FormatError("expected one JSON object per line", path=str(p), line=number)
            where = f"{p}:{number}"
            qid = next((obj[k] for k in ("query_id", "qid", "id") if k in obj), None)
            if qid is None:
                raise FormatError("a line needs a query_id", path=str(p), line=number)
            system = str(obj.get("system", obj.get("run", "run")))
            if (system, str(qid)) in seen:
                raise FormatError(f"query {qid!r} of system {system!r} is given twice", path=str(p), line=number)
            seen.add((system, str(qid)))
            try:
                ref = checked_reference(obj.get("reference_date"), f"{where}: reference_date")
                docs = _docs(obj, where)
                gold = _gold(obj, where)
            except InputError as exc:
                raise InputError(str(exc)) from None
            out.append(Record(number, system, str(qid), str(obj.get("query", "")), obj.get("qft"),
                              ref if ref is not None else default_ref, docs, gold,
                              {k: obj[k] for k in _EXTRA_INPUTS if k in obj}))
    if not out:
        raise InputError(f"{p}: no records (the file is empty)")
    return out


@dataclass(frozen=True)
class DocumentFocusTime:
    """A retrieved document's focus time as evaluated: given on the line (``extraction`` None) or extracted."""

    doc_id: str
    focus_time: FocusTime
    extraction: Extraction | None = None


@dataclass(frozen=True)
class LineFocusTimes:
    """The focus times one line was evaluated with (``--show-focus-times``): the query's (None when no metric
    took it), given or extracted, and each retrieved document's."""

    qft: FocusTime | None
    qft_extraction: Extraction | None
    documents: tuple[DocumentFocusTime, ...]


def _unresolved_error(exc: UnresolvedTimeError, where: str, what: str, document: bool) -> InputError:
    """The extraction's complaint, reworded with what the command line offers."""
    publication = (", a \"publication_year\" on the document (a document's relative expressions use its "
                   "publication date first)") if document else ""
    return InputError(f"{where}: {what} has {exc.expression!r} (characters {exc.start}-{exc.end}), a relative time "
                      "expression, and there is no reference date to resolve it against (the current date is never "
                      f"used); give --reference-date YYYY-MM-DD, a \"reference_date\" on the line{publication}, or "
                      "--unresolved report to give it no years (listed in the notes)")


def _focus_inputs(r: Record, path: str, notes: list[str], need_qft: bool,
                  unresolved: Literal["error", "report"]) -> tuple[dict[str, Any], LineFocusTimes]:
    where = f"{path}:{r.line}"

    def extract(text: str, what: str, label: str, **kwargs: Any) -> Extraction:
        try:
            e = extract_focus_time(text, reference_date=r.reference, unresolved=unresolved, **kwargs)
        except UnresolvedTimeError as exc:
            raise _unresolved_error(exc, where, what, kwargs.get("kind") == "document") from None
        for m in e.unresolved:
            notes.append(f"relative expressions without a reference date, given no years: {r.query_id} {label} "
                         f"{m.text!r}")
        return e

    try:
        qft: FocusTime | None = None
        query_extraction: Extraction | None = None
        if r.qft is not None:
            qft = as_focus_time(r.qft, f"{where}: qft")
        elif not need_qft:
            pass
        elif r.query:
            query_extraction = extract(r.query, "the query text", "query")
            qft = query_extraction.focus_time
            notes.append(f"qft extracted from the query text: {r.query_id}")
        else:
            raise InputError(f"{where}: no qft and no query text to extract it from")
        shown: list[DocumentFocusTime] = []
        for i, d in enumerate(r.docs):
            if "dft" in d:
                shown.append(DocumentFocusTime(d["doc_id"], as_focus_time(d["dft"], f"{where}: retrieved[{i}].dft")))
            elif isinstance(d.get("text"), str):
                pub = d.get("publication_year")
                e = extract(d["text"], f"retrieved document {d['doc_id']!r} (rank {i + 1})", f"document {d['doc_id']}",
                            kind="document", publication_year=pub if isinstance(pub, int) else None)
                shown.append(DocumentFocusTime(d["doc_id"], e.focus_time, e))
                notes.append(f"dft extracted from the document text: {d['doc_id']}")
            else:
                raise InputError(f"{where}: retrieved[{i}] ({d['doc_id']}) has neither a dft nor a text")
    except InputError as exc:
        message = str(exc)
        raise InputError(message if message.startswith(where) else f"{where}: {message}") from None
    return ({"qft": qft, "dfts": [d.focus_time for d in shown], **r.extras},
            LineFocusTimes(qft, query_extraction, tuple(shown)))


@dataclass(frozen=True, eq=False)
class Evaluation:
    """The temporal view of a batch: one :class:`~gainscope.results.Results` per system (file order), the reasons
    of undefined values, the failures of LLM grades, the comparison, notes on how the numbers were made, each
    metric's conventions (:meth:`~gainscope.temporal.base.TemporalMetric.convention`) and, in focus-time mode, the
    focus times every line was evaluated with (``focus_times[system][query id]``). ``values[system]`` is the
    system's queries x metrics matrix (NaN = no value)."""

    results: dict[str, Results]
    mode: Mode
    reasons: dict[str, dict[tuple[str, str], str]]
    failures: dict[str, dict[tuple[str, str], tuple[tuple[str, str], ...]]]
    comparison: Comparison
    undefined: Literal["zero", "skip"]
    notes: tuple[str, ...]
    metric_conventions: tuple[tuple[str, str], ...] = ()
    focus_times: dict[str, dict[str, LineFocusTimes]] = field(default_factory=dict)
    profile: ProfileUse | None = None

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metric names, as the columns are labelled."""
        return tuple(next(iter(self.results.values())).metric_names)

    @property
    def systems(self) -> tuple[str, ...]:
        """The systems, the baseline first."""
        return self.comparison.runs

    @property
    def query_ids(self) -> dict[str, tuple[str, ...]]:
        """Each system's query ids, in file order."""
        return {s: r.query_ids for s, r in self.results.items()}

    @property
    def values(self) -> dict[str, np.ndarray]:
        """Each system's queries x metrics values (NaN = no value)."""
        return {s: r.values for s, r in self.results.items()}

    def per_query(self, system: str, metric: str) -> dict[str, float]:
        """``{query id: value}`` (NaN: no value)."""
        return self.results[system].per_query(metric)

    def conventions(self) -> list[tuple[str, str]]:
        """``(name, text)`` pairs describing the evaluation."""
        rows = [("mode", {"gold": "gold ids", "focus_time": "focus times (Jaccard x 4 grades)",
                          "llm": "LLM judge grades"}[self.mode]),
                ("undefined", "0, with a warning naming the queries" if self.undefined == "zero"
                 else "left out of the mean"),
                ("ranking", "the order given in the file; a metric at k reads the first k documents"),
                *([("profile", f"{self.profile.name}: {self.profile.profile.description}")] if self.profile else []),
                *self.metric_conventions]
        return rows + [("note", n) for n in self.notes]


def _located(exc: Exception, where: str, name: str) -> InputError:
    """A metric's complaint about one line's inputs, naming the file, the line and the metric."""
    return InputError(f"{where}: {name}: {exc}")


async def _prepare_all(metrics: list[TemporalMetric], names: tuple[str, ...], ks: list[int],
                       inputs: list[dict[str, Any]], wheres: list[str], mode: Mode) -> list[list[Prepared]]:
    """Every metric on every line (``[line][metric]``), each given only the inputs it takes
    (:meth:`TemporalMetric.inputs`); in LLM mode the lines and metrics are graded concurrently."""
    taken = [m.inputs() for m in metrics]

    def own(inp: dict[str, Any], j: int) -> dict[str, Any]:
        return {key: value for key, value in inp.items() if key in taken[j]}

    def one(m: TemporalMetric, name: str, inp: dict[str, Any], where: str) -> Prepared:
        try:
            return m.prepare(inp)
        except (InputError, TypeError) as exc:
            raise _located(exc, where, name) from None

    async def aone(m: TemporalMetric, name: str, inp: dict[str, Any], where: str) -> Prepared:
        try:
            return await m.aprepare(inp)
        except (InputError, TypeError) as exc:
            raise _located(exc, where, name) from None

    if mode != "llm":
        return [[one(m, name, {**own(inp, j), "k": k}, where)
                 for j, (m, name, k) in enumerate(zip(metrics, names, ks, strict=True))]
                for inp, where in zip(inputs, wheres, strict=True)]
    rows = await asyncio.gather(*(asyncio.gather(*(aone(m, name, {**own(inp, j), "k": k}, where)
                                                   for j, (m, name, k) in enumerate(zip(metrics, names, ks,
                                                                                        strict=True))))
                                  for inp, where in zip(inputs, wheres, strict=True)))
    return [list(row) for row in rows]


def _grouped(notes: list[str]) -> list[str]:
    """"<what>: <id>" notes folded into one note per <what> listing the distinct ids (first few and a count)."""
    groups: dict[str, list[str]] = {}
    for n in notes:
        what, _, ident = n.rpartition(": ")
        groups.setdefault(what, [])
        if ident not in groups[what]:
            groups[what].append(ident)
    return [f"{what} ({len(ids)}): {format_ids(ids)}" for what, ids in groups.items()]


def evaluate_records(records: Sequence[Record], metric_names: Sequence[str], *, path: str = "input",
                     mode: Literal["auto", "gold", "focus_time", "llm"] = "auto", judge: Judge | None = None,
                     undefined: Literal["zero", "skip"] = "zero", baseline: str | None = None,
                     settings: CompareSettings | None = None,
                     unresolved: Literal["error", "report"] = "error",
                     profile: str | Profile | None = None) -> Evaluation:
    """Evaluate every record with every metric and compare the systems (see the module docstring); from async
    code (LLM mode with a client open on the running loop) use :func:`aevaluate_records`. ``unresolved``: a
    relative time expression with no reference date is an error (default), or gives no years and is listed in the
    notes (``"report"``). ``profile``: ``"tempoeval"`` for TempoEval's conventions in the file's mode (or
    ``"trec_eval"``, the temporal metrics' own defaults)."""
    return asyncio.run(aevaluate_records(records, metric_names, path=path, mode=mode, judge=judge,
                                         undefined=undefined, baseline=baseline, settings=settings,
                                         unresolved=unresolved, profile=profile))


def _mode_of(records: Sequence[Record], mode: str, path: str) -> Mode:
    """The file's mode: as asked, or gold when every line has gold and focus time when none has."""
    if mode != "auto":
        return mode  # type: ignore[return-value]
    without = [r for r in records if r.gold is None]
    if without and len(without) < len(records):
        r = without[0]
        others = len(records) - len(without)
        raise InputError(f"{path}:{r.line}: query {r.query_id!r} has no gold while {others} other "
                         f"line{'s' if others > 1 else ''} ha{'ve' if others > 1 else 's'} gold; give gold on "
                         "every line, or --mode focus-time (gold is then ignored)")
    return "focus_time" if without else "gold"


async def aevaluate_records(records: Sequence[Record], metric_names: Sequence[str], *, path: str = "input",
                            mode: Literal["auto", "gold", "focus_time", "llm"] = "auto", judge: Judge | None = None,
                            undefined: Literal["zero", "skip"] = "zero", baseline: str | None = None,
                            settings: CompareSettings | None = None,
                            unresolved: Literal["error", "report"] = "error",
                            profile: str | Profile | None = None) -> Evaluation:
    """:func:`evaluate_records`, awaiting the judge in LLM mode."""
    from gainscope.compare import CompareSettings, SystemValues, compare_values

    settings = settings or CompareSettings()
    if undefined not in ("zero", "skip"):
        raise PolicyError(f"undefined must be 'zero' or 'skip'; got {undefined!r}")
    if unresolved not in ("error", "report"):
        raise PolicyError(f"unresolved must be 'error' or 'report'; got {unresolved!r}")
    prof = temporal_profile(profile)
    specs = [parse_metric(n) for n in metric_names]
    if not specs:
        raise PolicyError("name at least one metric, e.g. -m TemporalNDCG@10")
    chosen = _mode_of(records, mode, path)
    overridden: list[str] = []
    for i, spec in enumerate(specs):
        specs[i], notes_i = spec.under(prof, chosen)
        overridden += notes_i
    names = tuple(str(s) for s in specs)
    if len(set(names)) != len(names):
        raise PolicyError(f"a metric is named twice: {', '.join(names)}")
    if chosen == "llm" and judge is None:
        raise PolicyError("LLM mode needs a judge")
    if judge is not None and chosen == "llm" and not isinstance(judge, SharedJudge):
        judge = SharedJudge(judge)  # each (query, document) graded once, the grade shared by every metric
    metrics = [s.build(chosen, judge) for s in specs]
    ks = [s.k for s in specs]
    if chosen == "gold":
        bad = [r for r in records if r.gold is None]
        if bad:
            raise InputError(f"{path}:{bad[0].line}: gold mode, but query {bad[0].query_id!r} has no gold")
    notes: list[str] = []
    systems = tuple(dict.fromkeys(r.system for r in records))
    prepared: dict[str, list[list[Prepared]]] = {}
    query_ids: dict[str, tuple[str, ...]] = {}
    taken = frozenset().union(*(m.inputs() for m in metrics))
    need_qft = "qft" in taken
    focus_times: dict[str, dict[str, LineFocusTimes]] = {}
    check_systems({s: [r.query_id for r in records if r.system == s] for s in systems}, path, baseline)
    lines: list[Line] = []
    for system in systems:
        recs = [r for r in records if r.system == system]
        inputs: list[dict[str, Any]] = []
        focus_times[system] = {}
        for r in recs:
            for extra in r.extras:
                if extra not in taken:
                    notes.append(f"inputs no metric asked for takes, ignored: {extra}")
            if chosen == "gold":
                inputs.append({"retrieved_ids": [d["doc_id"] for d in r.docs], "gold_ids": r.gold, **r.extras})
            elif chosen == "focus_time":
                line_inputs, focus_times[system][r.query_id] = _focus_inputs(r, path, notes, need_qft, unresolved)
                inputs.append(line_inputs)
            else:
                if not r.query or any(not isinstance(d.get("text"), str) for d in r.docs):
                    raise InputError(f"{path}:{r.line}: LLM mode needs the query text and every document's text")
                inputs.append({"query": Query(r.query_id, r.query),
                               "retrieved_docs": [Document(d["doc_id"], d["text"]) for d in r.docs],
                               **r.extras})
        lines += [Line(system, r.line, r.query_id, tuple(d["doc_id"] for d in r.docs), inp)
                  for r, inp in zip(recs, inputs, strict=True)]
        prepared[system] = await _prepare_all(metrics, names, ks, inputs, [f"{path}:{r.line}" for r in recs], chosen)
        query_ids[system] = tuple(r.query_id for r in recs)
    check_overlap(lines, metrics, names, chosen, path)
    policies = Policies(ties="rank", relevance_level=MODE_LEVELS[chosen], undefined=undefined)
    use = ProfileUse(prof, tuple(overridden)) if prof is not None else None
    results, reasons, failures = _results(systems, query_ids, prepared, metrics, names, ks, policies, use)
    notes = _grouped(notes) + list(overridden)
    undefined_queries: dict[str, list[str]] = {}
    for system in systems:
        for (q, name) in reasons[system]:
            undefined_queries.setdefault(name, []).append(f"{system}/{q}" if len(systems) > 1 else q)
    for name, qs in undefined_queries.items():
        what = "scored 0" if undefined == "zero" else "left out of the mean"
        if undefined == "zero":
            warnings.warn(f"{name} is undefined for {len(qs)} quer{'y' if len(qs) == 1 else 'ies'}, {what}: "
                          f"{format_ids(qs)}", UndefinedMetricWarning, stacklevel=2)
        notes.append(f"{name}: undefined for {len(qs)} {'query' if len(qs) == 1 else 'queries'} ({what}): "
                     f"{format_ids(qs)}")
    for system in systems:
        for (q, name), fs in failures[system].items():
            notes.append(f"{name}: {system}/{q}: no value, the judge could not grade {', '.join(d for d, _ in fs)}")
    comparison = compare_values(names, [SystemValues(s, results[s].query_ids, results[s].values) for s in systems],
                                baseline=baseline, settings=settings, policies=policies)
    conventions = [(name, m.convention(s.k)) for name, m, s in zip(names, metrics, specs, strict=True)]
    conventions += [(f"{name} (core)", m.describe_core(s.k)) for name, m, s in zip(names, metrics, specs, strict=True)]
    return Evaluation(results, chosen, reasons, failures, comparison, undefined, tuple(notes), tuple(conventions),
                      focus_times if chosen == "focus_time" else {}, use)


def _results(systems: tuple[str, ...], query_ids: dict[str, tuple[str, ...]],
             prepared: dict[str, list[list[Prepared]]], metrics: list[TemporalMetric], names: tuple[str, ...],
             ks: list[int], policies: Policies, profile: ProfileUse | None
             ) -> tuple[dict[str, Results], dict[str, dict[tuple[str, str], str]],
                        dict[str, dict[tuple[str, str], tuple[tuple[str, str], ...]]]]:
    """Each system's Results -- every column computed by its core metric over the prepared lines, then the
    ``undefined`` policy applied to the core's undefined values and the adapter's alike; failed values stay NaN
    (no value) -- with the reasons of the undefined values and the failures."""
    cores = tuple(m.core(k) for m, k in zip(metrics, ks, strict=True))
    results: dict[str, Results] = {}
    reasons: dict[str, dict[tuple[str, str], str]] = {}
    failures: dict[str, dict[tuple[str, str], tuple[tuple[str, str], ...]]] = {}
    for system in systems:
        rows, qids = prepared[system], query_ids[system]
        values = np.full((len(qids), len(metrics)), np.nan)
        failed = np.zeros(values.shape, dtype=bool)
        reasons[system], failures[system] = {}, {}
        for j, (m, core) in enumerate(zip(metrics, cores, strict=True)):
            values[:, j] = evaluate_prepared([row[j] for row in rows], core, m.level())
        for i, row in enumerate(rows):  # line by line, as the notes and warnings list them
            for j, (p, m, name, k) in enumerate(zip(row, metrics, names, ks, strict=True)):
                if p.failures:
                    failures[system][(qids[i], name)] = p.failures
                    failed[i, j] = True
                elif math.isnan(values[i, j]):
                    reasons[system][(qids[i], name)] = p.reason or m.reason(k)
        undefined = np.isnan(values) & ~failed
        if policies.undefined == "zero":
            values[undefined] = 0.0
        n = len(qids)
        results[system] = Results(run_name=system, metrics=cores, query_ids=qids, values=values, undefined=undefined,
                                  policies=policies, coverage=Coverage(n, n, n), profile=profile, labels=names)
    return results, reasons, failures
