"""Lines read as Spark's text source reads them (blocks of a file, lines in Arrow batches) give the TREC and JSON
Lines readers' rows and errors, with the same line numbers and byte offsets: checked without Spark."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gainscope.errors import FormatError, GainscopeError
from gainscope.io.jsonl import load_json_table
from gainscope.io.text import TextFile
from gainscope.io.trec import LAYOUTS, careful_table, check_rank_sequences
from gainscope.spark.assemble import RunInfo, _check_presence, _check_rank_runs, raise_problem
from gainscope.spark.facts import Facts
from gainscope.spark.parse import FILE_SHIFT, LineIndex, LinePlan, parse_lines


def spark_blocks(data: bytes, split: int) -> list[tuple[int, bytes]]:
    """(block start, line) as Hadoop's line reader gives them with lineSep '\\n': a block starting at s > 0
    skips the line under way at s; every block reads the lines that start at or before its end."""
    out: list[tuple[int, bytes]] = []
    for start in range(0, max(len(data), 1), split):
        end = start + split
        pos = start
        if start:
            nl = data.find(b"\n", start)
            if nl < 0:
                break
            pos = nl + 1
        while pos < len(data) and pos <= end:
            nl = data.find(b"\n", pos)
            line = data[pos:] if nl < 0 else data[pos:nl]
            out.append((start, line))
            pos = len(data) if nl < 0 else nl + 1
    return out


def batches_of(blocks: list[tuple[int, bytes]], file: int, rnd: random.Random) -> list[pa.RecordBatch]:
    out, i = [], 0
    while i < len(blocks):
        n = rnd.randint(1, 5)
        part = blocks[i:i + n]
        out.append(pa.record_batch([pa.array([v for _, v in part], pa.binary()), pa.array([file] * len(part)),
                                    pa.array([s for s, _ in part], pa.int64())],
                                   names=["value", "file", "file_block_start"]))
        i += n
    return out


def read_like_spark(path: Path, fmt: str, split: int, seed: int, *,
                    check_ranks: bool = False) -> tuple[pl.DataFrame, Facts, LineIndex]:
    data = path.read_bytes()
    blocks = spark_blocks(data, split)
    counts: dict[int, list[int]] = {}
    for start, line in blocks:
        c = counts.setdefault(start, [0, 0])
        c[0] += 1
        c[1] += len(line) + 1
    index = LineIndex([(3, start, n, size) for start, (n, size) in counts.items()])
    rows, facts = [], Facts()
    for batch in parse_lines(iter(batches_of(blocks, 3, random.Random(seed))), LinePlan(fmt, check_ranks=check_ranks)):
        frame = pl.DataFrame(pl.from_arrow(batch))
        for text in frame.filter(pl.col("_kind") == 2)["doc_id"].to_list():
            facts = facts.merge(Facts.from_json(text))
        rows.append(frame.filter(pl.col("_kind") == 0))
    sort = ["_ord", "_sub"] if fmt == "jsonl" else ["_ord"]
    plan = LinePlan(fmt)
    empty = pl.DataFrame(schema={n: pl.Int8 if n == "_kind" else pl.Int64 if n == "_ord" else
                                 pl.Int32 if n == "_sub" else pl.String for n in plan.names})
    table = pl.concat([empty.cast(rows[0].schema), *rows], how="vertical") if rows else empty
    return table.sort(sort), facts, index


def local_table(path: Path, fmt: str) -> Any:
    try:
        if fmt == "jsonl":
            return load_json_table(TextFile(path), "run", "jsonl").frame
        return careful_table(TextFile(path), LAYOUTS[("run", fmt)]).frame
    except GainscopeError as exc:
        return type(exc), str(exc)


def spark_outcome(path: Path, fmt: str, split: int, seed: int) -> Any:
    table, facts, index = read_like_spark(path, fmt, split, seed)
    info = RunInfo(label=str(path), name=None, default_name=None, unit="line",
                   locate=lambda o: (str(path), index.line(o)[1]), block_offset=index.block_offset)
    problem = facts.first_problem()
    try:  # the order of assemble(): line problems, then the JSON Lines values check, then the rest
        if problem is not None and problem.phase == "line":
            raise_problem(problem, facts, info)
        _check_presence(facts, info)
    except GainscopeError as exc:
        return type(exc), str(exc)
    if problem is None:
        lines = [index.line(o)[1] for o in table["_ord"].to_list()]
        columns = [c for c in table.columns if c not in ("_kind", "_ord", "_sub")]
        return table.select(columns).with_columns(pl.Series("_loc", lines, dtype=pl.Int64))
    try:
        raise_problem(problem, facts, info)
    except GainscopeError as exc:
        return type(exc), str(exc)
    raise AssertionError("raise_problem did not raise")


def same(local: Any, spark: Any) -> None:
    if isinstance(local, tuple) or isinstance(spark, tuple):
        assert isinstance(spark, tuple) and spark == local, (spark, local)
        return
    assert isinstance(spark, pl.DataFrame), spark
    columns = [c for c in local.columns if c in ("query_id", "doc_id", "score", "rank", "tag", "_loc")]
    expect = local.select(columns)
    got = spark.select(columns)
    if "score" in got.columns and expect.get_column("score", default=None) is None:
        got = got.drop("score")
    assert got.to_dicts() == expect.to_dicts()


TREC_LINES = st.lists(st.one_of(
    st.builds(lambda q, d, r, s, sep, end: sep.join([f"q{q}", "Q0", f"d{d}", str(r), s, "tag"]) + end,
              st.integers(0, 4), st.integers(0, 30), st.integers(1, 9), st.sampled_from(["1.5", "2", "-0.25", "nan"]),
              st.sampled_from([" ", "\t", "  ", " \t "]), st.sampled_from(["", "\r", " ", " extra col"])),
    st.sampled_from(["# comment", "", "   ", "q1 Q0 d1 1 2.5", "qid Q0 docno rank score run", "  # indented",
                     "q2 Q0 d\udcff 1 1 tag", "q3 Q0 d2\r1 1 tag", "# a comment\rwith a lone CR",
                     "q4 Q0 d5 1 1 t\r \r"]),
), min_size=1, max_size=40)


@settings(max_examples=200, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lines=TREC_LINES, bom=st.booleans(), split=st.integers(1, 120), seed=st.integers(0, 1000),
       final_newline=st.booleans())
def test_trec_lines_in_blocks_give_the_readers_tokens_and_errors(tmp_path: Path, lines: list[str], bom: bool,
                                                                 split: int, seed: int, final_newline: bool) -> None:
    path = tmp_path / "run.txt"
    data = "\n".join(lines).encode("utf-8", "surrogateescape") + (b"\n" if final_newline else b"")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    same(local_table(path, "trec"), spark_outcome(path, "trec", split, seed))


JSON_LINES = st.lists(st.one_of(
    st.builds(lambda q, d, s: f'{{"query_id": "q{q}", "doc_id": "d{d}", "score": {s}}}', st.integers(0, 3),
              st.integers(0, 9), st.sampled_from(["1.5", "2", '"3"', "null"])),
    st.builds(lambda q, ds: f'{{"qid": "q{q}", "retrieved_document_ids": {ds}}}', st.integers(0, 3),
              st.lists(st.sampled_from(['"a"', '"b"', '"c"', "7"]), max_size=4)
              .map(lambda x: "[" + ", ".join(x) + "]")),
    st.sampled_from(["", "  ", "[1, 2]", "{not json", '{"query_id": "q1"}', '{"query_id": 1.5, "doc_id": "a", '
                     '"score": 1}']),
), min_size=1, max_size=20)


@settings(max_examples=150, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lines=JSON_LINES, split=st.integers(1, 200), seed=st.integers(0, 1000))
def test_json_lines_in_blocks_give_the_readers_rows_and_errors(tmp_path: Path, lines: list[str], split: int,
                                                               seed: int) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    local = local_table(path, "jsonl")
    spark = spark_outcome(path, "jsonl", split, seed)
    if isinstance(local, pl.DataFrame) and not isinstance(spark, tuple):
        # the reader's table has a score (or rank) column only when some line gives one
        for role in ("score", "rank"):
            if role not in local.columns and role in spark.columns:
                assert spark[role].null_count() == spark.height
                spark = spark.drop(role)
    same(local, spark)


@pytest.mark.parametrize("split", [7, 64, 10_000])
def test_ordinals_grow_in_file_order_across_blocks(tmp_path: Path, split: int) -> None:
    path = tmp_path / "run.txt"
    path.write_text("".join(f"q{i % 5} Q0 d{i} 1 1.0 t\n" + ("\n" if i % 3 == 0 else "") for i in range(200)),
                    encoding="utf-8")
    table, facts, index = read_like_spark(path, "trec", split, 1)
    assert not facts.problems
    ordinals = table["_ord"].to_list()
    assert ordinals == sorted(ordinals) and len(set(ordinals)) == len(ordinals)
    assert all(o >> FILE_SHIFT == 3 for o in ordinals)
    # line i of data sits on file line i + (blank lines before it) + 1
    expected = [i + (i + 2) // 3 + 1 for i in range(200)]
    assert [index.line(o)[1] for o in ordinals] == expected


@pytest.mark.parametrize("fmt", ["trec", "jsonl"])
def test_a_line_beyond_the_length_limit_is_the_readers_error(tmp_path: Path, fmt: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # a line longer than the readers' limit (MAX_LINE_BYTES; MAX_RECORD_BYTES for JSON Lines, lowered here to
    # 1 MiB on both sides) is refused with the reader's message and line, in whichever block it falls
    import gainscope.io.jsonl
    import gainscope.spark.parse
    from gainscope.io.text import MAX_LINE_BYTES

    monkeypatch.setattr(gainscope.io.jsonl, "MAX_RECORD_BYTES", MAX_LINE_BYTES)
    monkeypatch.setattr(gainscope.spark.parse, "MAX_RECORD_BYTES", MAX_LINE_BYTES)
    good = "q1 Q0 d1 1 2.5 t\n" if fmt == "trec" else '{"query_id": "q1", "doc_id": "d1", "score": 1}\n'
    path = tmp_path / f"run.{'txt' if fmt == 'trec' else 'jsonl'}"
    path.write_bytes((good * 3 + "x" * (MAX_LINE_BYTES + 1) + "\n" + good).encode("ascii"))
    local = local_table(path, fmt)
    assert local == (FormatError, f"{path}:4: the line is longer than {MAX_LINE_BYTES:,} bytes, the limit of a line; "
                                  "is this a text file with one record per line?")
    for split in (1 << 16, 1 << 27):
        assert spark_outcome(path, fmt, split, 0) == local


MSMARCO_GROUPS = st.lists(st.tuples(st.integers(0, 4), st.integers(1, 6),
                                    st.sampled_from([None, None, None, "0", "9", "x", "2"]), st.integers(0, 5),
                                    st.booleans()), min_size=1, max_size=12)


@settings(max_examples=60, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(groups=MSMARCO_GROUPS, split=st.integers(1, 80), seed=st.integers(0, 1000))
def test_a_detected_msmarco_run_has_rank_sequences_checked_as_the_reader_does(tmp_path: Path, groups: list[Any],
                                                                              split: int, seed: int) -> None:
    # runs of lines of one query (a query may come back later), ranks 1..n with now and then a wrong one at a
    # random place, comments between: the reader's check (every line, in file order) and the one the Spark
    # parser and the driver share (runs of lines per block and batch, joined in ordinal order) agree
    lines = []
    for q, n, wrong, at, comment in groups:
        for i in range(n):
            lines.append(f"q{q} d{len(lines)} {wrong if wrong is not None and i == min(at, n - 1) else i + 1}")
            if comment and i == 0:
                lines.append("# between")
    path = tmp_path / "run.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = careful_table(TextFile(path), LAYOUTS[("run", "msmarco")])
    try:
        check_rank_sequences(table, str(path))
        local: Any = None
    except GainscopeError as exc:
        local = (type(exc), str(exc))
    _, facts, index = read_like_spark(path, "msmarco", split, seed, check_ranks=True)
    info = RunInfo(label=str(path), name=None, default_name=None, unit="line",
                   locate=lambda o: (str(path), index.line(o)[1]))
    try:
        _check_rank_runs(facts, info)
        spark: Any = None
    except GainscopeError as exc:
        spark = (type(exc), str(exc))
    assert spark == local
