"""The driver side: partition outputs become one :class:`~gainscope.results.Results`, as the local engine's.

:func:`assemble` merges every partition's :class:`~gainscope.spark.facts.Facts`, raises the error the local
engine would raise on the same input (the first problem of the earliest phase, located by file and line or
row), emits the same warnings in the same order with the totals of every partition (reading, query coverage,
ties, rank contradictions, undefined values), and builds the Results: queries in bytewise id order, the
values the partitions computed, the aggregates computed by :class:`~gainscope.results.Results` itself.

Nothing here imports pyspark: the partition outputs are an Arrow table.
"""

from __future__ import annotations

import base64
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from gainscope import errors
from gainscope.core.judged_run import (  # the same coverage rules and warnings as the local builders
    Coverage,
    _bytewise_sorted,
    _query_universe,
    _warn_if_distances,
    _warn_ties,
)
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.errors import FormatError, InputError, InputWarning
from gainscope.evaluation import warn_undefined
from gainscope.io.detect import not_ranks_error
from gainscope.io.frames import (
    Origin,
    duplicate_error,
    duplicates_resolved_note,
    empty_error,
    infinite_scores_warning,
    nan_scores_note,
    run_tags_warning,
)
from gainscope.io.jsonl import inconsistent_values_error
from gainscope.io.text import _decode_error, not_nfc_warning
from gainscope.metrics.base import Metric
from gainscope.metrics.profiles import ProfileUse
from gainscope.metrics.trec_eval import TrecOverrides
from gainscope.results import Results
from gainscope.spark.facts import Facts, Problem
from gainscope.spark.parse import first_rank_problem

__all__ = ["Locator", "RunInfo", "assemble", "merged_facts", "raise_problem", "trec_overrides"]

#: an input position (ordinal) -> (file as shown in messages, line or row number); None, None when the input
#: has no positions to show (a DataFrame)
Locator = Callable[[int], tuple[str | None, int | None]]


def _nowhere(ordinal: int) -> tuple[str | None, int | None]:
    return None, None


@dataclass(frozen=True)
class RunInfo:
    """What the driver knows about a run input: ``label`` (the path(s) as given, for messages), the name given
    (``name=``), the reader's default name (a file stem), the location unit (``line``, ``row`` or None), how to
    locate an ordinal, and the reading options that matter here."""

    label: str | None
    name: str | None
    default_name: str | None
    unit: str | None
    locate: Locator = _nowhere
    block_offset: Callable[[int], int] | None = None  # text: the file offset of the first line of an ordinal's block
    nan_score: float | None = None
    on_duplicate: str = "error"
    allow_empty: bool = False


def merged_facts(table: pa.Table) -> Facts:
    """Every partition's facts, merged."""
    facts = Facts()
    for text in table.column("facts").drop_null().to_pylist():
        facts = facts.merge(Facts.from_json(text))
    return facts


def raise_problem(problem: Problem, facts: Facts, run: RunInfo) -> None:
    """Raise the error of ``problem`` with its location, as the local readers word it."""
    where = f"{run.label}: " if run.label else ""
    if problem.phase == "schema":
        raise InputError(where + problem.message)
    if problem.phase == "metric":
        cls = getattr(errors, str(problem.detail.get("error")), None)
        if isinstance(cls, type) and issubclass(cls, (errors.MetricError, errors.PolicyError)):
            raise cls(problem.message)
        raise errors.MetricError(problem.message)
    if problem.phase == "memory":
        raise errors.SparkError(problem.message)
    path, loc = run.locate(problem.ordinal) if problem.ordinal is not None else (None, None)
    if problem.phase == "duplicate":
        path2, loc2 = run.locate(int(problem.detail["second"]))
        first: Any = loc if path == path2 else f"{path}:{loc}"
        raise duplicate_error(Origin(path2, run.unit if loc2 is not None else None), problem.detail["query_id"],
                              problem.detail["doc_id"], first, loc2, facts.duplicates)  # type: ignore[arg-type]
    if "raw" in problem.detail and problem.ordinal is not None:
        # not UTF-8: the reader's message, with the line's offset in the file
        raw = base64.b64decode(problem.detail["raw"])
        base = int(problem.detail["start"]) + (run.block_offset(problem.ordinal) if run.block_offset else 0)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _decode_error(path or "", raw, exc, encoding="UTF-8", base=base, line=loc) from None
    if problem.phase == "line":
        raise FormatError(problem.message, path=path, line=loc, text=problem.text)
    raise Origin(path, run.unit if loc is not None else None).error(problem.message, loc, problem.text)


def _check_rank_runs(facts: Facts, run: RunInfo) -> None:
    """A detected MS MARCO run: each query's ranks 1, 2, ..., n, its lines together, or the refusal of the
    format, as the reader's check words it (:func:`gainscope.io.trec.check_rank_sequences`)."""
    if not facts.rank_runs:
        return
    found = first_rank_problem(facts.rank_runs)
    if found is not None:
        ordinal, qid, value, want = found
        path, line = run.locate(ordinal)
        raise not_ranks_error(path or run.label or "", line, qid, value, want)  # type: ignore[arg-type]


def _check_presence(facts: Facts, run: RunInfo) -> None:
    """JSON Lines: scores (and ranks) given for every document or for none, as the reader requires."""
    for role in ("score", "rank"):
        states = facts.presence.get(role, {})
        if "given" in states and "missing" in states:
            first = min(states, key=lambda s: tuple(states[s][:2]))  # the run's first row: one or the other
            row0, other = states[first], states["missing" if first == "given" else "given"]
            _, loc0 = run.locate(int(row0[0]))
            path, loc = run.locate(int(other[0]))
            raise inconsistent_values_error(Origin(path, run.unit if loc is not None else None), role,
                                            first == "given", loc0, row0[2], loc)  # type: ignore[arg-type]


def _reading_messages(facts: Facts, run: RunInfo, name: str | None) -> tuple[list[str], list[str]]:
    """The warnings and notes the readers give for the whole run, in their order."""
    where = f"{run.label}: " if run.label else ""
    warns: list[str] = []
    for column in ("query_id", "doc_id"):
        changed = facts.not_nfc.get(column)
        if changed:
            example = min(changed, key=lambda k: (changed[k], k))
            warns.append(not_nfc_warning(where, column, len(changed), example))
            break
    if facts.infinite is not None:
        score, query, doc = facts.infinite.example
        warns.append(infinite_scores_warning(where, facts.infinite.count, float(score), query, doc))
    tags = sorted(facts.tags, key=lambda t: (facts.tags[t], t))
    if len(tags) > 1:
        warns.append(run_tags_warning(where, len(tags), tags[0], tags[1], name))
    notes: list[str] = []
    if facts.nan_scores and run.nan_score is not None:
        notes.append(nan_scores_note(facts.nan_scores, run.nan_score))
    if run.on_duplicate != "error" and (facts.dropped or facts.duplicates):
        notes.append(duplicates_resolved_note(run.on_duplicate, facts.dropped))
    return warns, notes


def run_name(facts: Facts, run: RunInfo) -> str:
    """The run's name as the readers give it: ``name=``, else the tag of its first line, else the default."""
    if run.name is not None:
        return run.name
    if facts.tags:
        return min(facts.tags, key=lambda t: (facts.tags[t], t))
    return run.default_name or "run"


def assemble(table: pa.Table, facts: Facts, *, judgments: Judgments, metrics: Sequence[Metric],
             policies: Policies, run: RunInfo, profile: ProfileUse | None = None) -> Results:
    """The Results of one run from its partition outputs (``table``) and merged ``facts``; raises and warns as
    the local engine does (see the module docstring). ``profile``: the profile the metrics and policies come
    from, echoed with the results."""
    problem = facts.first_problem()
    if problem is not None and problem.phase == "line":
        raise_problem(problem, facts, run)
    _check_rank_runs(facts, run)
    _check_presence(facts, run)
    if problem is not None:
        raise_problem(problem, facts, run)
    notes: list[str] = []
    if facts.rows == 0:
        if not run.allow_empty:
            raise empty_error("run", Origin(run.label, run.unit))
        notes.append("empty input accepted (allow_empty=True)")
    name = run_name(facts, run)
    warns, reading_notes = _reading_messages(facts, run, run.name)
    for message in warns:
        warnings.warn(message, InputWarning, stacklevel=3)
    notes += reading_notes

    values = table.filter(table.column("facts").is_null())
    ids: list[str] = values.column("query_id").to_pylist()
    missing = np.asarray(values.column("missing").to_numpy(zero_copy_only=False), dtype=bool)
    judged_q = _bytewise_sorted(judgments.frame["query_id"].unique().to_list())
    ranked_q = _bytewise_sorted([q for q, m in zip(ids, missing.tolist(), strict=True) if not m] + facts.ignored)
    universe, gone, ignored = _query_universe(judged_q, ranked_q, policies, judgments.source, run.label)
    order = {q: i for i, q in enumerate(ids)}
    if len(order) != len(ids) or sorted(order) != sorted(universe):
        raise errors.SparkError("the partitions did not return each evaluated query once; this is a bug in "
                                "gainscope.spark: please report it")
    rows = np.array([order[q] for q in universe], dtype=np.int64)
    nm = len(metrics)
    matrix = _matrix(values.column("values"), nm)[rows] if len(rows) else np.zeros((0, nm))
    undefined = _matrix(values.column("undefined"), nm, bool)[rows] if len(rows) else np.zeros((0, nm), bool)
    _warn_ties(facts.tied_groups, policies)
    _warn_if_distances(facts.rank_down, facts.rank_steps)
    if policies.undefined == "zero" and undefined.any():
        warn_undefined(universe, metrics, undefined)
    coverage = Coverage(len(judged_q), len(ranked_q), len(universe), gone, ignored,
                        facts.tied_groups, facts.rank_steps, facts.rank_down)
    extras: dict[str, dict[str, str]] = {}
    strings = values.column("relstring")
    if strings.null_count < len(strings):
        texts = strings.to_pylist()
        extras["relstring"] = {q: texts[order[q]] or "" for q in universe}
    return Results(run_name=name, metrics=tuple(metrics), query_ids=tuple(universe), values=matrix,
                   undefined=undefined, policies=policies, coverage=coverage,
                   notes=tuple(judgments.notes) + tuple(notes) + tuple(facts.notes), extras=extras,
                   profile=profile)


def trec_overrides(table: pa.Table, facts: Facts, query_ids: Sequence[str]) -> TrecOverrides:
    """:func:`~gainscope.metrics.trec_eval.trec_eval_overrides` of the whole run, from the partitions' per-query
    ``trec_nan`` lists and summed summary values, for ``query_ids`` (the Results' order)."""
    values = table.filter(table.column("facts").is_null())
    ids: list[str] = values.column("query_id").to_pylist()
    marked: list[list[int] | None] = values.column("trec_nan").to_pylist()
    order = {q: i for i, q in enumerate(query_ids)}
    nan: dict[int, np.ndarray] = {}
    for q, items in zip(ids, marked, strict=True):
        for item in items or ():
            nan.setdefault(item, np.zeros(len(query_ids), dtype=bool))[order[q]] = True
    return TrecOverrides(dict(sorted(nan.items())), {int(k): v for k, v in sorted(facts.trec_summary.items(),
                                                                                   key=lambda kv: int(kv[0]))})


def _matrix(column: pa.ChunkedArray, width: int, dtype: Any = np.float64) -> np.ndarray:
    """A list<...> column of fixed length ``width`` as a 2-D array (exact values: no conversion)."""
    flat = column.combine_chunks().flatten()
    array = flat.to_numpy(zero_copy_only=False)
    return np.asarray(array, dtype=dtype).reshape(-1, width)
