"""Arrow tables in pieces of whole queries for the scanner (gainscope.io.arrow_tables); that the scanner then gives the
readers' judged run is tests/property/test_scan_equals_readers.py's."""

from __future__ import annotations

import pandas as pd
import polars as pl
import pytest

from gainscope.io import arrow_tables
from gainscope.io.arrow_tables import arrow_run, pieces

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")


def test_the_last_query_is_found_however_long_it_is() -> None:
    # windows of 4096 rows from the end, widened 4 times each time: a last query of 10,000 rows needs three
    ids = pa.chunked_array([pa.array(["a"] * 5000 + ["b"] * 10_000)])
    assert arrow_tables._last_query_start(pc, ids) == 5000
    assert arrow_tables._last_query_start(pc, pa.chunked_array([pa.array(["a"] * 20_000)])) == 0
    # rows before start are one query (the carried rows): the search stops there
    assert arrow_tables._last_query_start(pc, pa.chunked_array([pa.array(["a", "a", "b", "b"])]), 1) == 2
    assert arrow_tables._last_query_start(pc, pa.chunked_array([pa.array(["a"])])) == 0


def test_pieces_are_whole_queries_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    queries = ["q1"] * 5 + ["q2"] + ["q3"] * 3
    frame = pl.DataFrame({"query_id": queries, "doc_id": [f"d{i}" for i in range(9)], "score": [1.0] * 9})
    for size in (1, 2, 4, 100):
        monkeypatch.setattr(arrow_tables, "PIECE_ROWS", size)
        run = arrow_run(frame.to_arrow())
        assert run is not None
        got = [p.to_pydict() for p in pieces(run)]
        seen = [q for p in got for q in set(p["query_id"])]
        assert sorted(seen) == ["q1", "q2", "q3"]  # each query in one piece, whole
        assert [q for p in got for q in p["query_id"]] == queries
        assert all(p["rank"] == [0] * len(p["rank"]) for p in got)  # no rank column: 0, as a Run's missing ranks


@pytest.mark.parametrize(("columns", "reason"), [
    ({"query_id": [1, 2]}, "ids that are not strings"),
    ({"score": ["0.5", "0.2"]}, "scores that are not numbers"),
    ({"rank": [1.0, 2.0]}, "ranks that are not integers"),
    ({"doc_id": ["d1", None]}, "missing values in the doc_id column"),
])
def test_what_the_scanner_does_not_take_is_a_reason(columns: dict[str, list[object]], reason: str) -> None:
    table = {"query_id": ["q", "q"], "doc_id": ["d1", "d2"], "score": [0.5, 0.2], **columns}
    run = arrow_run(pa.table(table))
    assert run is not None
    assert list(pieces(run)) == [reason]
    assert list(pieces(arrow_run(pa.table({k: v[:0] for k, v in table.items()})))) == ["an empty table"]  # type: ignore[arg-type]


def test_pandas_object_strings_are_converted_and_other_objects_refused() -> None:
    frame = pd.DataFrame({"qid": pd.Series(["q", "q"], dtype=object), "docno": pd.Series(["a", "b"], dtype=object),
                          "score": [0.5, 0.2]})
    run = arrow_run(frame)
    assert run is not None and [p.to_pydict()["doc_id"] for p in pieces(run)] == [["a", "b"]]
    mixed = frame.assign(docno=pd.Series(["a", 2], dtype=object))
    assert list(pieces(arrow_run(mixed))) == [  # type: ignore[arg-type]
        "an object column 'docno' that does not hold only strings Arrow takes"]
    assert arrow_run(frame.set_index("qid")) is None  # a named index: the readers' conversion makes it a column
