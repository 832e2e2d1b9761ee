"""JSON and JSON Lines: the seed's evaluation dataset, run records, long records, and their errors."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import polars as pl
import pytest
from tests.helpers import write

from gainscope.errors import FormatError, InconsistentInputError, UnknownFormatError
from gainscope.io import read_judgments, read_run

SEED = [
    {"query_id": "MQ001",
     "query_text": "What are the inspection points if abnormal noise occurs in the CNC milling machine "
                   "spindle?",
     "ground_truth_document_ids": ["CNC-SPINDLE-NOISE-TRBL-V1.2.pdf", "CNC-MAINT-CHECKLIST-SPINDLE.docx",
                                   "BEARING-SPEC-XYZ-SPINDLE.pdf", "LUBRICATION-GUIDE-CNC.html"]},
    {"query_id": "MQ002", "query_text": "How do I set up the TCP for a robotic welder?",
     "ground_truth_document_ids": ["ROBOT-WELD-TCP-SETUP-MANUAL.pdf", "ROBOT-CALIBRATION-PROC-V3.pdf",
                                   "WELDING-TIP-GUIDE.docx"]},
]


def jsonl(records: list[object]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


# ---------------------------------------------------------------------- judgments
@pytest.mark.parametrize("name", ["dataset.json", "dataset.jsonl"])
def test_seed_evaluation_dataset(tmp_path: Path, name: str) -> None:
    content = json.dumps(SEED, indent=2) if name.endswith(".json") else jsonl(SEED)
    judgments = read_judgments(write(tmp_path, name, content))
    assert len(judgments) == 7
    assert judgments.for_query("MQ002") == {"ROBOT-WELD-TCP-SETUP-MANUAL.pdf": 1,
                                            "ROBOT-CALIBRATION-PROC-V3.pdf": 1, "WELDING-TIP-GUIDE.docx": 1}
    assert judgments.query_texts["MQ002"] == "How do I set up the TCP for a robotic welder?"
    assert set(judgments.query_texts) == {"MQ001", "MQ002"}


def test_graded_ground_truth_and_long_records(tmp_path: Path) -> None:
    records = [{"query_id": "q1", "ground_truth_document_ids": {"a": 2, "b": 1.0, "c": -1}},
               {"qid": 7, "docno": "d", "rel": 3},
               {"query_id": "q2", "doc_id": "e", "grade": "2"}]
    judgments = read_judgments(write(tmp_path, "j.jsonl", jsonl(records)))
    assert judgments.to_dict() == {"q1": {"a": 2, "b": 1, "c": -1}, "7": {"d": 3}, "q2": {"e": 2}}
    assert judgments.frame.schema["grade"] == pl.Int64


def test_fractional_json_grade_needs_float_grades(tmp_path: Path) -> None:
    path = write(tmp_path, "j.jsonl", jsonl([{"query_id": "q1", "doc_id": "a", "relevance": 1},
                                             {"query_id": "q1", "doc_id": "b", "relevance": 0.5}]))
    message = (f"{path}:2: relevance must be an integer; got '0.5' for query 'q1', doc 'b'; use "
               "float_grades=True to keep fractional grades (they are never truncated)")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_judgments(path)
    assert read_judgments(path, float_grades=True).for_query("q1") == {"a": 1.0, "b": 0.5}


def test_boolean_grade_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "j.json", json.dumps([{"query_id": "q", "doc_id": "a", "relevance": True}]))
    message = f"{path}: record 1: relevance must be an integer; got 'true' for query 'q', doc 'a'"
    with pytest.raises(FormatError, match=re.escape(message)) as info:
        read_judgments(path)
    assert (info.value.path, info.value.line) == (str(path), 1)


def test_duplicate_ids_in_a_ground_truth_list_are_collapsed(tmp_path: Path) -> None:
    path = write(tmp_path, "j.json", json.dumps([{"query_id": "q", "ground_truth_document_ids": ["a", "a"]}]))
    with pytest.warns(UserWarning, match="repeat the same grade"):
        judgments = read_judgments(path)
    assert judgments.to_dict() == {"q": {"a": 1}}


def test_top_level_object_maps_queries(tmp_path: Path) -> None:
    path = write(tmp_path, "j.json", json.dumps({"q1": {"a": 2}, "q2": ["b", "c"]}))
    assert read_judgments(path).to_dict() == {"q1": {"a": 2}, "q2": {"b": 1, "c": 1}}
    run_path = write(tmp_path, "r.json", json.dumps({"q1": {"a": 0.5, "b": 0.25}}))
    run = read_run(run_path)
    assert run.to_dict() == {"q1": {"a": 0.5, "b": 0.25}}
    assert run.name == "r"


# ---------------------------------------------------------------------- runs
def test_retrieved_document_ids_give_ranks(tmp_path: Path) -> None:
    records = [{"query_id": "MQ001", "retrieved_document_ids": ["a", "b", "c"]},
               {"query_id": "MQ002", "retrieved_document_ids": []}]
    run = read_run(write(tmp_path, "agent.jsonl", jsonl(records)))
    assert run.name == "agent"
    assert not run.has_scores
    assert run.frame.select("query_id", "doc_id", "rank").rows() == [("MQ001", "a", 1), ("MQ001", "b", 2),
                                                                     ("MQ001", "c", 3)]


def test_results_with_scores_and_long_records(tmp_path: Path) -> None:
    records = [{"query_id": "q1", "results": [{"doc_id": "a", "score": 0.9}, {"docid": "b", "score": 0.1}]},
               {"query_id": "q2", "doc_id": "c", "score": 1}]
    run = read_run(write(tmp_path, "run.json", json.dumps(records)))
    assert run.to_dict() == {"q1": {"a": 0.9, "b": 0.1}, "q2": {"c": 1.0}}
    assert not run.has_ranks


def test_json_scores_read_back_exactly(tmp_path: Path) -> None:
    scores = [0.1, 1 / 3, 1e-300, 123456789.123456789, -0.0, 2.5e10]
    records = [{"query_id": "q", "doc_id": f"d{i}", "score": s} for i, s in enumerate(scores)]
    run = read_run(write(tmp_path, "run.jsonl", jsonl(records)))
    assert run.frame["score"].to_list() == scores


def test_mixing_scored_and_unscored_records_is_an_error(tmp_path: Path) -> None:
    records = [{"query_id": "q1", "results": [{"doc_id": "a", "score": 0.9}]},
               {"query_id": "q2", "retrieved_document_ids": ["b"]}]
    path = write(tmp_path, "run.jsonl", jsonl(records))
    message = (f"{path}:2: scores are missing here but given on line 1 (query 'q1'); give every document a "
               "score or none")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_run(path)


def test_duplicate_doc_in_a_retrieved_list(tmp_path: Path) -> None:
    path = write(tmp_path, "run.jsonl", jsonl([{"query_id": "q", "retrieved_document_ids": ["a", "b", "a"]}]))
    message = (f"{path}:1: duplicate doc 'a' for query 'q' (line 1, twice; 1 duplicate row(s) in all); keep "
               "one line per document, or read with on_duplicate='first' or 'max'")
    with pytest.raises(InconsistentInputError, match=re.escape(message)):
        read_run(path)
    assert read_run(path, on_duplicate="first").frame["doc_id"].to_list() == ["a", "b"]


def test_nan_in_json_scores(tmp_path: Path) -> None:
    path = write(tmp_path, "run.jsonl", '{"query_id": "q", "doc_id": "a", "score": NaN}\n')
    with pytest.raises(FormatError, match=re.escape(f"{path}:1: score is NaN for query 'q', doc 'a'")):
        read_run(path)
    assert read_run(path, nan_score="-inf").to_dict() == {"q": {"a": float("-inf")}}


# ---------------------------------------------------------------------- errors name the record and the key
def test_invalid_json_line(tmp_path: Path) -> None:
    path = write(tmp_path, "j.jsonl", jsonl(SEED[:1]) + "\n{oops\n")
    message = (f"{path}:3: invalid JSON: Expecting property name enclosed in double quotes (column 2); each "
               "line must hold one JSON object")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_judgments(path)


def test_json_lines_read_as_json_get_a_hint(tmp_path: Path) -> None:
    path = write(tmp_path, "j.txt", jsonl(SEED))
    message = (f"{path}:2: invalid JSON: Extra data (column 1); is it JSON Lines (one object per line)? read "
               "it with format='jsonl'")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_judgments(path, format="json")


def test_missing_query_id_names_the_keys(tmp_path: Path) -> None:
    path = write(tmp_path, "j.json", json.dumps([SEED[0], {"id": "x", "ground_truth_document_ids": []}]))
    message = (f"{path}: record 2: no query id key: expected one of ['query_id', 'qid', 'query-id', 'q_id', "
               "'query', 'topic']; got keys ['id', 'ground_truth_document_ids']")
    with pytest.raises(FormatError, match=re.escape(message)) as info:
        read_judgments(path)
    assert info.value.line == 2


def test_wrong_types_name_the_key(tmp_path: Path) -> None:
    cases = [
        ({"query_id": "q", "ground_truth_document_ids": "a.pdf"},
         "'ground_truth_document_ids' must be a list of doc ids or an object {doc_id: grade}; got a string"),
        ({"query_id": 1.5, "ground_truth_document_ids": []}, "'query_id' must be a string or an integer; "
                                                             "got 1.5"),
        ({"query_id": "q", "ground_truth_document_ids": ["a", None]},
         "'ground_truth_document_ids[1]' must be a string or an integer; got null"),
        ({"query_id": "q", "query_text": 3, "ground_truth_document_ids": []},
         "'query_text' must be a string"),
        ({"query_id": "q", "docs": ["a"]}, "cannot tell what this record holds: expected "
                                           "'ground_truth_document_ids'"),
        ([1, 2], "expected a JSON object; got an array"),
    ]
    for record, message in cases:
        path = write(tmp_path, "j.jsonl", jsonl([record]))
        with pytest.raises(FormatError, match=re.escape(f"{path}:1: {message}")):
            read_judgments(path)


def test_run_record_errors(tmp_path: Path) -> None:
    cases = [
        ({"query_id": "q", "retrieved_document_ids": "a"},
         "'retrieved_document_ids' must be a list of doc ids in rank order; got a string"),
        ({"query_id": "q", "results": [{"doc_id": "a"}]},
         "results[0].no score or rank key: expected one of ['score', 'sim', 'similarity', 'rank']; got "
         "keys ['doc_id']"),
        ({"query_id": "q", "results": ["a"]}, "results[0] must be an object {doc_id, score}; got a string"),
        ({"query_id": "q"}, "cannot tell what this record holds: expected 'retrieved_document_ids'"),
    ]
    for record, message in cases:
        path = write(tmp_path, "r.jsonl", jsonl([record]))
        with pytest.raises(FormatError, match=re.escape(f"{path}:1: {message}")):
            read_run(path)


def test_not_an_array(tmp_path: Path) -> None:
    path = write(tmp_path, "j.json", '"hello"')
    message = f"{path}: expected a JSON array of records or an object {{query_id: ...}}; got a string"
    with pytest.raises(FormatError, match=re.escape(message)):
        read_judgments(path)


def test_ambiguous_keys(tmp_path: Path) -> None:
    path = write(tmp_path, "j.jsonl", jsonl([{"qid": "a", "topic": "b", "ground_truth_document_ids": []}]))
    with pytest.raises(FormatError, match=re.escape(f"{path}:1: ambiguous keys ['qid', 'topic']")):
        read_judgments(path)


def test_gzip_bom_and_blank_lines(tmp_path: Path) -> None:
    content = ("\ufeff" + jsonl(SEED[:1]) + "\n\n" + jsonl(SEED[1:])).encode("utf-8")
    judgments = read_judgments(write(tmp_path, "d.jsonl.gz", gzip.compress(content)))
    assert len(judgments) == 7


def test_empty_json_inputs(tmp_path: Path) -> None:
    path = write(tmp_path, "j.json", "[]")
    with pytest.raises(InconsistentInputError, match=re.escape(f"{path}: no judgments found")):
        read_judgments(path)
    assert len(read_run(write(tmp_path, "r.jsonl", "\n"), allow_empty=True)) == 0


def test_invalid_utf8_in_json(tmp_path: Path) -> None:
    path = write(tmp_path, "j.json", b'[{"query_id": "q\xff", "ground_truth_document_ids": []}]')
    with pytest.raises(FormatError, match=re.escape(f"{path}:1: cannot decode byte 0xff at byte offset 16")):
        read_judgments(path)


def test_unknown_table_format_name_for_json(tmp_path: Path) -> None:
    with pytest.raises(UnknownFormatError, match="unknown format 'yaml' for runs"):
        read_run(write(tmp_path, "r.json", "[]"), format="yaml")
