"""The executor side: one partition of whole queries evaluated by the local engine's own code.

Nothing here imports pyspark: a partition is an iterator of Arrow record batches in, an iterator of Arrow
record batches out (what ``DataFrame.mapInArrow`` calls), so the tests run it without Spark.

Input rows (:data:`INPUT_KINDS`), sorted by query id, then kind (markers first), then input position:

* ``_kind = 1``: a *marker*, one per judged query (``query_id`` only). Every judged query has one, hashed to
  the partition of its query like the run's rows, so a partition knows its judged queries, including those
  the run does not rank (``missing_queries="zero"`` scores them; they live in no run row);
* ``_kind = 0``: a run row: ``query_id``, ``doc_id``, ``score`` and/or ``rank`` (typed, or text tokens as
  a line reader split them), ``tag`` (TREC run tag), ``_ord`` (the input position; see
  :mod:`gainscope.spark.sources`) and ``_sub`` (the position inside one JSON record);
* ``_kind = 2``: :class:`~gainscope.spark.facts.Facts` of an earlier stage (a line reader's problems) in
  ``doc_id``, passed on.

The partition is cut into blocks of whole queries of about ``block_rows`` rows (a query is never cut, so the
largest query bounds the memory a block needs). Each block goes through exactly what
:func:`gainscope.evaluate` does: :func:`~gainscope.io.frames.finish_run` (every check, conversion and
duplicate rule of the readers), :class:`~gainscope.core.judged_run.PreparedJudgments` of the block's judged
queries, :func:`~gainscope.io.scan.judged_run_of_run` (the C scanner, or the polars builder) and
:func:`~gainscope.evaluation.compute` with the whole evaluation's ``max_grade``. Every per-query value depends
on its query alone (and on that one global number), so the values are the local engine's, bit for bit;
``tests/spark/test_partitioned.py`` checks it on random inputs cut at random.

Output: one row per evaluated query of the partition (``query_id``, ``missing``, ``values``, ``undefined``,
``relstring``, ``trec_nan``: the trec_eval items whose line reads ``-nan`` for the query, see
:func:`~gainscope.metrics.trec_eval.trec_eval_overrides`), then one row holding the partition's
:class:`~gainscope.spark.facts.Facts` as JSON.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from gainscope.core.judged_run import PreparedJudgments
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.errors import DuplicateError, FormatError, InputError, MetricError, PolicyError
from gainscope.evaluation import compute
from gainscope.io.frames import WS_CHARS, Origin, RunOptions, TokenTable, finish_run
from gainscope.io.scan import judged_run_of_run
from gainscope.io.text import changed_ids
from gainscope.metrics.base import Metric
from gainscope.metrics.trec_eval import TrecItem, relstrings, trec_eval_overrides
from gainscope.spark.facts import Facts, First, Problem

__all__ = ["INPUT_KINDS", "OUTPUT_DDL", "OUTPUT_SCHEMA", "JudgmentShard", "PartPlan", "evaluate_block",
           "evaluate_partition", "marker_batches"]

INPUT_KINDS = {"run": 0, "marker": 1, "facts": 2}

#: the output of a partition, as Spark DDL and as an Arrow schema
OUTPUT_DDL = ("query_id string, missing boolean, values array<double>, undefined array<boolean>, relstring string, "
              "trec_nan array<int>, facts string")
OUTPUT_SCHEMA = pa.schema([
    ("query_id", pa.string()), ("missing", pa.bool_()), ("values", pa.list_(pa.float64())),
    ("undefined", pa.list_(pa.bool_())), ("relstring", pa.string()), ("trec_nan", pa.list_(pa.int32())),
    ("facts", pa.string()),
])

BLOCK_ROWS = 1_000_000


class JudgmentShard:
    """Judgments checked on the driver, shipped to the executors once (a Spark broadcast) as Arrow IPC bytes,
    grouped by query. Each worker process decodes them once and hands each block the judgments of its queries.
    """

    def __init__(self, judgments: Judgments) -> None:
        frame = judgments.frame.select("query_id", "doc_id", "grade").sort("query_id", maintain_order=True)
        sink = pa.BufferOutputStream()
        table = frame.to_arrow()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        self.key = uuid.uuid4().hex
        self.data = sink.getvalue().to_pybytes()
        self.source = judgments.source

    def _index(self) -> tuple[pl.DataFrame, dict[str, tuple[int, int]], list[str]]:
        cached = _SHARDS.get(self.key)
        if cached is None:
            table = pa.ipc.open_stream(self.data).read_all()
            frame = pl.DataFrame(pl.from_arrow(table))
            ids = frame["query_id"]
            starts = (ids != ids.shift(1)).fill_null(True).arg_true().to_list()
            ends = [*starts[1:], frame.height]
            names = [ids[i] for i in starts]
            cached = frame, {q: (a, b - a) for q, a, b in zip(names, starts, ends, strict=True)}, names
            _SHARDS.clear()  # one evaluation at a time per worker: keep only the latest judgments
            _SHARDS[self.key] = cached
        return cached

    def query_ids(self) -> list[str]:
        """Every judged query id (in the shard's order)."""
        return self._index()[2]

    def subset(self, query_ids: Sequence[str]) -> Judgments:
        """The judgments of ``query_ids`` (each a judged query)."""
        frame, where, _ = self._index()
        parts = [frame.slice(*where[q]) for q in query_ids]
        part = pl.concat(parts) if parts else frame.clear()
        return Judgments(part, source=self.source)


_SHARDS: dict[str, tuple[pl.DataFrame, dict[str, tuple[int, int]], list[str]]] = {}


@dataclass(frozen=True)
class PartPlan:
    """Everything a partition needs, shipped with the function: metrics, policies, reading options, the
    judgments, the whole evaluation's ``max_grade``, the relstring length (trec_eval's ``relstring``; None
    when not asked), whether text tokens are already stripped (line readers), and, for trec_eval's text,
    its items and ``-c`` as given (``trec_eval``: what :func:`~gainscope.metrics.trec_eval.trec_eval_overrides`
    takes; None when not asked)."""

    metrics: tuple[Metric, ...]
    policies: Policies
    options: RunOptions
    judgments: Any  # a JudgmentShard, or a Spark broadcast of one
    max_grade: float | None
    tokens_clean: bool = False
    optional_values: bool = False  # JSON Lines: a score or rank column no row gives is not there
    relstring: int | None = None
    block_rows: int = BLOCK_ROWS
    trec_eval: tuple[tuple[TrecItem, ...], bool] | None = None

    def shard(self) -> JudgmentShard:
        """The judgments (read from the broadcast on an executor)."""
        shard = self.judgments
        return shard if isinstance(shard, JudgmentShard) else shard.value


def marker_batches(batches: Iterable[pa.RecordBatch], shard: JudgmentShard) -> Iterator[pa.RecordBatch]:
    """Markers (``_kind = 1``) of the judged queries whose positions in ``shard.query_ids()`` the ``id``
    column of ``batches`` holds (a ``spark.range`` over the number of judged queries)."""
    names = shard.query_ids()
    for batch in batches:
        index = batch.column("id").to_numpy()
        yield pa.record_batch([pa.array([names[i] for i in index.tolist()], pa.string()),
                               pa.array(np.full(len(index), INPUT_KINDS["marker"], dtype=np.int8))],
                              names=["query_id", "_kind"])


# ---------------------------------------------------------------------- a partition
def evaluate_partition(batches: Iterable[pa.RecordBatch], plan: PartPlan) -> Iterator[pa.RecordBatch]:
    """Evaluate one partition (see the module docstring): per-query rows, block by block, then its facts."""
    facts = Facts()
    pending = _Pending()
    for batch in batches:
        frame = pl.DataFrame(pl.from_arrow(batch))
        if frame.height == 0:
            continue
        kinds = frame["_kind"]
        if (kinds == INPUT_KINDS["facts"]).any():
            for text in frame.filter(kinds == INPUT_KINDS["facts"])["doc_id"].to_list():
                facts = facts.merge(Facts.from_json(text))
            frame = frame.filter(pl.col("_kind") != INPUT_KINDS["facts"])
        if pending.rows >= plan.block_rows and frame.height:
            change = (frame["query_id"] != pending.last).arg_true()
            if len(change):  # a block ends where a new query starts
                cut = int(change[0])
                pending.add(frame.slice(0, cut))
                out, part = _block(pending, plan)
                facts = facts.merge(part)
                if out is not None:
                    yield out
                frame = frame.slice(cut)
        pending.add(frame)
    if pending.rows or pending.judged:
        out, part = _block(pending, plan)
        facts = facts.merge(part)
        if out is not None:
            yield out
    yield _facts_batch(facts)


class _Pending:
    """The rows of the block being gathered: run rows (markers taken out batch by batch, so that no copy of the
    whole block is ever made) and the judged queries' markers."""

    def __init__(self) -> None:
        self.frames: list[pl.DataFrame] = []
        self.judged: list[str] = []
        self.rows = 0
        self.first: str | None = None
        self.last: str | None = None

    def add(self, frame: pl.DataFrame) -> None:
        if frame.height == 0:
            return
        if self.first is None:
            self.first = frame["query_id"][0]
        self.last = frame["query_id"][-1]
        markers = frame["_kind"] == INPUT_KINDS["marker"]
        if markers.any():
            self.judged += frame.filter(markers)["query_id"].to_list()
            frame = frame.filter(~markers)
        if frame.height:
            self.frames.append(frame)
            self.rows += frame.height

    def take(self) -> tuple[pl.DataFrame | None, list[str]]:
        """The block's run rows and judged queries; the block starts anew (nothing here keeps them alive)."""
        runs = pl.concat(self.frames, rechunk=False) if self.frames else None
        judged = self.judged
        self.frames, self.judged, self.rows, self.first = [], [], 0, None
        return runs, judged


def _facts_batch(facts: Facts) -> pa.RecordBatch:
    return pa.record_batch([pa.array([None], pa.string()), pa.array([None], pa.bool_()),
                            pa.array([None], pa.list_(pa.float64())), pa.array([None], pa.list_(pa.bool_())),
                            pa.array([None], pa.string()), pa.array([None], pa.list_(pa.int32())),
                            pa.array([facts.to_json()], pa.string())],
                           schema=OUTPUT_SCHEMA)


def _block(pending: _Pending, plan: PartPlan) -> tuple[pa.RecordBatch | None, Facts]:
    """:func:`evaluate_block` on the pending block (handed over, not kept: its rows can be freed as soon as
    they are read), with running out of memory reported as a problem naming the block's queries."""
    first, last, rows = pending.first, pending.last, pending.rows
    try:
        return evaluate_block(*pending.take(), plan)
    except MemoryError:
        which = f"query {first!r}" if first == last else f"queries {first!r} to {last!r}"
        facts = Facts()
        facts.add_problem(Problem(
            "memory", f"{which} ({rows} ranked documents in all) do not fit in the memory of a Spark Python worker "
            "(the largest query needs about 200 bytes per document); give the workers more "
            "(spark.executor.pyspark.memory, or spark.executor.memoryOverhead), or cut the run at a depth before "
            "evaluating it"))
        return None, facts


def evaluate_block(runs: pl.DataFrame | None, judged: list[str], plan: PartPlan) -> tuple[pa.RecordBatch | None,
                                                                                         Facts]:
    """Evaluate whole queries: ``runs`` their run rows (as described in the module docstring, in input order
    within each query; None when there are none), ``judged`` the judged ones (their markers). Returns the
    per-query output rows (None when there are none, or a problem stops the block) and the block's facts."""
    ranked = runs if runs is not None else pl.DataFrame()
    facts = Facts(rows=ranked.height)
    run = _finished_run(ranked, plan, facts) if ranked.height else None
    if ranked.height and run is None:
        return None, facts
    del ranked, runs  # the run holds what it needs: the input tokens can go before the judged run is built
    judged_set = set(judged)
    frame = run.frame if run is not None else None
    if frame is not None:
        ids = frame["query_id"].unique(maintain_order=True).to_list()
        facts.ignored = [q for q in ids if q not in judged_set]
        if facts.ignored:
            frame = frame.filter(pl.col("query_id").is_in(judged))
    del run
    if not judged:
        return None, facts
    if frame is None:
        frame = pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64,
                                     "rank": pl.Int64})
    part = Run._from_validated(frame, name="run", source=None, notes=())
    del frame
    prepared = PreparedJudgments.of(plan.shard().subset(judged), plan.policies.negative_grades)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the driver warns once, with the totals of every partition
            jr = judged_run_of_run(prepared, part, plan.policies)
            results = compute(jr, plan.metrics, warn=False, max_grade=plan.max_grade)
    except (MetricError, PolicyError) as exc:
        facts.add_problem(Problem("metric", str(exc), detail={"error": type(exc).__name__}))
        return None, facts
    coverage = jr.coverage
    facts.tied_groups, facts.rank_steps, facts.rank_down = (coverage.tied_groups, coverage.rank_steps,
                                                            coverage.rank_down)
    if jr.num_queries:
        facts.max_grade = jr.top_grade  # the local engine's scale: the largest grade judged or ranked
    facts.notes = list(results.notes)
    strings = relstrings(jr, plan.relstring) if plan.relstring is not None else {}
    nq = jr.num_queries
    trec_nan: list[list[int]] | None = None
    if plan.trec_eval is not None:
        items, complete = plan.trec_eval
        overrides = trec_eval_overrides(list(items), jr, complete=complete)
        trec_nan = [[i for i, mask in sorted(overrides.nan.items()) if mask[q]] for q in range(nq)]
        facts.trec_summary = {str(i): value for i, value in overrides.summary.items()}
    out = pa.record_batch([
        pa.array(list(jr.query_ids), pa.string()), pa.array(jr.missing.astype(bool)),
        pa.FixedSizeListArray.from_arrays(pa.array(results.values.reshape(-1)), len(plan.metrics))
        .cast(pa.list_(pa.float64())),
        pa.FixedSizeListArray.from_arrays(pa.array(results.undefined.reshape(-1)), len(plan.metrics))
        .cast(pa.list_(pa.bool_())),
        pa.array([strings.get(q) for q in jr.query_ids] if strings else [None] * nq, pa.string()),
        pa.array(trec_nan if trec_nan is not None else [None] * nq, pa.list_(pa.int32())),
        pa.array([None] * nq, pa.string()),
    ], schema=OUTPUT_SCHEMA)
    return out, facts


def _finished_run(ranked: pl.DataFrame, plan: PartPlan, facts: Facts) -> Run | None:
    """The block's run rows read by the readers' own rules (:func:`finish_run`), or None with the problem
    recorded; the facts the readers turn into warnings and notes are recorded too."""
    columns = [c for c in ("query_id", "doc_id", "score", "rank", "tag") if c in ranked.columns]
    if plan.optional_values:  # as the JSON Lines reader builds its table: only values some row gives
        columns = [c for c in columns if c not in ("score", "rank") or ranked[c].null_count() < ranked.height]
    table = ranked.select([*columns, pl.col("_ord").alias("_loc")])
    try:
        run, warns = finish_run(TokenTable(table, Origin(None, None), tokens_clean=plan.tokens_clean), plan.options)
    except FormatError as exc:
        facts.add_problem(Problem("row", str(exc), exc.line, exc.text))
        return None
    except DuplicateError as exc:
        first, second = exc.locations
        facts.duplicates = exc.extra
        facts.add_problem(Problem("duplicate", str(exc), first, detail={
            "query_id": exc.query_id, "doc_id": exc.doc_id, "second": second}))
        return None
    except InputError as exc:  # a column of the wrong type: no row to point at
        facts.add_problem(Problem("schema", str(exc)))
        return None
    _record_reading_facts(table, run, plan, facts, warned=bool(warns))
    return run


def _record_reading_facts(table: pl.DataFrame, run: Run, plan: PartPlan, facts: Facts, *, warned: bool) -> None:
    """Counts and first examples behind the readers' warnings and notes, with input positions (those behind
    warnings only when the reader ``warned`` about this block)."""
    facts.dropped = table.height - run.frame.height
    if "tag" in table.columns:
        facts.tags = dict(table.group_by("tag").agg(pl.col("_loc").min()).iter_rows())
    if plan.options.nan_score is not None and "score" in table.columns:
        score = pl.col("score")
        if table.schema["score"] == pl.String:
            score = score.str.strip_chars(WS_CHARS)
        facts.nan_scores = int(table.select(score.cast(pl.Float64, strict=False).is_nan().sum()).item() or 0)
    if not warned:
        return
    if "score" in table.columns:
        score = pl.col("score")
        if table.schema["score"] == pl.String:
            score = score.str.strip_chars(WS_CHARS)
        scores = table.select(score.cast(pl.Float64, strict=False).alias("s"), "query_id", "doc_id", "_loc")
        infinite = scores.filter(pl.col("s").is_infinite())
        if infinite.height:
            s, q, d, loc = infinite.row(0)
            facts.infinite = First(infinite.height, loc, (s, q, d))
    for column in ("query_id", "doc_id"):
        changed = changed_ids(table[column], "NFC")
        if changed.len():
            firsts = (table.filter(pl.col(column).is_in(changed)).group_by(column)
                      .agg(pl.col("_loc").min()))
            facts.not_nfc[column] = dict(firsts.iter_rows())

