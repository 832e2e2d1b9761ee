"""Writers: exact TREC text, trec_eval ordering, formats from extensions, round trips, refusals."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from gainscope.core.judgments import Judgments
from gainscope.core.run import Run
from gainscope.errors import InputError, UnknownFormatError
from gainscope.io import read_judgments, read_run, write_judgments, write_run

JUDGMENTS = Judgments.from_columns(["q2", "q2", "q1"], ["d1", "d#2", "d3"], [2, 0, -1])
RUN = Run.from_columns(["q2", "q2", "q2", "q1"], ["a", "c", "b", "z"], scores=[0.5, 0.5, 0.9, float("-inf")],
                       ranks=[1, 2, 3, 1], name="bm25")


def test_trec_qrels_text(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    write_judgments(JUDGMENTS, path)
    assert path.read_text() == "q2 0 d1 2\nq2 0 d#2 0\nq1 0 d3 -1\n"
    write_judgments(JUDGMENTS, tmp_path / "q3.txt", format="qrels3")
    assert (tmp_path / "q3.txt").read_text() == "q2 d1 2\nq2 d#2 0\nq1 d3 -1\n"
    write_judgments(JUDGMENTS, tmp_path / "beir.tsv", format="beir")
    expected = "query-id\tcorpus-id\tscore\nq2\td1\t2\nq2\td#2\t0\nq1\td3\t-1\n"
    assert (tmp_path / "beir.tsv").read_text() == expected
    assert_frame_equal(read_judgments(tmp_path / "beir.tsv").frame, JUDGMENTS.frame)


def test_trec_run_is_written_in_trec_eval_order(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    write_run(RUN, path)
    # q2 first (first seen), score descending, ties by doc id descending; ranks renumbered
    assert path.read_text() == ("q2 Q0 b 1 0.9 bm25\nq2 Q0 c 2 0.5 bm25\nq2 Q0 a 3 0.5 bm25\nq1 Q0 z 1 -inf "
                                "bm25\n")
    write_run(RUN, path, tag="other")
    assert path.read_text().splitlines()[0] == "q2 Q0 b 1 0.9 other"


def test_run_without_scores_keeps_its_order(tmp_path: Path) -> None:
    ranked = Run.from_dict({"q": ["x", "a", "m"]}, name="agent")
    path = tmp_path / "run.txt"
    write_run(ranked, path)
    assert path.read_text() == "q Q0 x 1 3 agent\nq Q0 a 2 2 agent\nq Q0 m 3 1 agent\n"
    write_run(ranked, tmp_path / "ms.tsv", format="msmarco")
    assert (tmp_path / "ms.tsv").read_text() == "q\tx\t1\nq\ta\t2\nq\tm\t3\n"
    back = read_run(tmp_path / "ms.tsv", format="msmarco")
    assert back.frame.select("doc_id", "rank").rows() == [("x", 1), ("a", 2), ("m", 3)]


def test_jsonl_and_json_records(tmp_path: Path) -> None:
    write_judgments(JUDGMENTS, tmp_path / "j.jsonl")
    lines = (tmp_path / "j.jsonl").read_text().splitlines()
    assert json.loads(lines[0]) == {"query_id": "q2", "doc_id": "d1", "relevance": 2}
    write_run(RUN, tmp_path / "r.jsonl")
    last = (tmp_path / "r.jsonl").read_text().splitlines()[-1]
    assert last == '{"query_id": "q1", "doc_id": "z", "score": -Infinity, "rank": 1}'
    write_run(RUN, tmp_path / "r.json")
    assert len(json.loads((tmp_path / "r.json").read_text())) == 4


@pytest.mark.parametrize("name", ["r.jsonl", "r.json", "r.csv", "r.tsv", "r.parquet", "r.pq", "r.csv.gz",
                                  "r.jsonl.gz"])
def test_run_round_trips(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    with pytest.warns(UserWarning, match="infinite score"):
        write_run(RUN, path)
        back = read_run(path)
    assert_frame_equal(back.frame, RUN.frame)


@pytest.mark.parametrize("name", ["j.txt", "j.qrels.gz", "j.jsonl", "j.json", "j.csv", "j.tsv", "j.parquet"])
def test_judgment_round_trips_with_float_grades_and_provenance(tmp_path: Path, name: str) -> None:
    judgments = Judgments.from_columns(["q", "q"], ["a", "b"], [0.5, 1.0], judge=["x", "y"])
    path = tmp_path / name
    write_judgments(judgments, path)
    back = read_judgments(path, float_grades=True)
    expected = judgments.frame if back.provenance_columns else judgments.frame.drop("judge")
    assert_frame_equal(back.frame, expected)


def test_gzip_output_is_compressed(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt.gz"
    write_judgments(JUDGMENTS, path)
    assert gzip.decompress(path.read_bytes()).decode() == "q2 0 d1 2\nq2 0 d#2 0\nq1 0 d3 -1\n"


def test_scores_are_written_exactly(tmp_path: Path) -> None:
    scores = [0.1, 1 / 3, 1e-300, 123456789.12345679, 2.5e22, -0.0]
    run = Run.from_columns(["q"] * 6, [f"d{i}" for i in range(6)], scores=scores, name="r")
    write_run(run, tmp_path / "r.txt")
    back = read_run(tmp_path / "r.txt")
    assert sorted(back.frame["score"].to_list()) == sorted(scores)


def test_ids_trec_cannot_hold_are_refused(tmp_path: Path) -> None:
    spaced = Judgments.from_columns(["q"], ["a b"], [1])
    message = ("cannot write trec format: doc id 'a b' is empty or contains whitespace; write JSONL, CSV or "
               "Parquet instead (format='jsonl')")
    with pytest.raises(InputError, match=re.escape(message)):
        write_judgments(spaced, tmp_path / "q.txt")
    hashed = Run.from_columns(["#1"], ["a"], scores=[1.0])
    with pytest.raises(InputError, match=re.escape("query id '#1' starts with '#' and would read back as "
                                                   "a comment line")):
        write_run(hashed, tmp_path / "r.txt")
    write_judgments(spaced, tmp_path / "q.jsonl")
    assert read_judgments(tmp_path / "q.jsonl").to_dict() == {"q": {"a b": 1}}
    with pytest.raises(InputError, match=re.escape("the run tag must be a non-empty word without "
                                                   "whitespace; got 'my run' (pass tag=)")):
        write_run(RUN, tmp_path / "r.txt", tag="my run")
    # the whitespace a TREC line is split at is ASCII's: a tag and ids holding a no-break space read back as written
    odd = Run.from_columns(["q\u00a01"], ["d\u2003a"], scores=[1.0])
    write_run(odd, tmp_path / "r.txt", tag="my\u00a0run")
    back = read_run(tmp_path / "r.txt")
    assert (back.name, back.frame["query_id"].to_list(), back.frame["doc_id"].to_list()) == (
        "my\u00a0run", ["q\u00a01"], ["d\u2003a"])


def test_unknown_write_format(tmp_path: Path) -> None:
    message = ("unknown format 'xml' for writing run; valid formats: trec, msmarco, jsonl, json, csv, tsv, "
               "parquet (or None to use the file extension)")
    with pytest.raises(UnknownFormatError, match=re.escape(message)):
        write_run(RUN, tmp_path / "r.xml", format="xml")


def test_empty_objects_write_empty_files(tmp_path: Path) -> None:
    empty = Judgments(pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String, "grade": pl.Int64}))
    write_judgments(empty, tmp_path / "q.txt")
    assert (tmp_path / "q.txt").read_bytes() == b""
    write_judgments(empty, tmp_path / "q.json")
    assert (tmp_path / "q.json").read_text() == "[]\n"
