"""The bad-input table: one test per row, each run through both TREC parsers with identical messages.

The ``parser`` fixture runs every test twice: once with the careful line-by-line parser only, and once
with the fast polars reader tried first (it must fall back and produce exactly the same error).
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from tests.helpers import write

from gainscope.errors import FormatError, InconsistentInputError, InputWarning
from gainscope.io import read_judgments, read_run, trec


@pytest.fixture(params=["careful", "fast-first"], autouse=True)
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    threshold = 0 if request.param == "fast-first" else 10**18
    monkeypatch.setattr(trec, "FAST_MIN_BYTES", threshold)
    return str(request.param)


RUN = "q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 d3 3 1.0 r\nq2 Q0 d5 1 1.0 r\nq2 Q0 d4 2 0.5 r\n"
QRELS = "q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq2 0 d4 1\n"


# ---------------------------------------------------------------------- duplicates
def test_duplicate_doc_in_run_names_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", RUN + "q1 Q0 d1 4 0.1 r\n")
    message = (f"{path}:6: duplicate doc 'd1' for query 'q1' (lines 1 and 6; 1 duplicate row(s) in all); "
               "keep one line per document, or read with on_duplicate='first' or 'max'")
    with pytest.raises(InconsistentInputError, match=re.escape(message)):
        read_run(path)


@pytest.mark.parametrize(("policy", "kept"), [("first", 3.0), ("max", 3.0)])
def test_duplicate_doc_in_run_resolved_on_request(tmp_path: Path, policy: str, kept: float) -> None:
    path = write(tmp_path, "run.txt", RUN + "q1 Q0 d1 4 0.1 r\n")
    run = read_run(path, on_duplicate=policy)
    assert len(run) == 5
    assert run.to_dict()["q1"]["d1"] == kept
    assert run.notes == (f"duplicate docs resolved with on_duplicate={policy!r} (1 row(s) dropped)",)


def test_duplicate_max_keeps_the_highest_score(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 0.1 r\nq1 Q0 d2 2 0.5 r\nq1 Q0 d1 3 0.9 r\n")
    assert read_run(path, on_duplicate="max").to_dict() == {"q1": {"d2": 0.5, "d1": 0.9}}
    assert read_run(path, on_duplicate="first").to_dict() == {"q1": {"d1": 0.1, "d2": 0.5}}


def test_conflicting_duplicate_qrels_name_both_lines_and_grades(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", QRELS + "q1 0 d1 0\n")
    message = (f"{path}:5: conflicting judgments for query 'q1', doc 'd1': grade 0 here, grade 2 on line 1 "
               "(1 conflicting pair(s) in all); give each document one grade per query, or read with "
               "on_conflict='max', 'min', 'first' or 'last'")
    with pytest.raises(InconsistentInputError, match=re.escape(message)):
        read_judgments(path)


@pytest.mark.parametrize(("policy", "grade"), [("max", 2), ("min", 0), ("first", 2), ("last", 0)])
def test_conflicting_duplicate_qrels_resolved_on_request(tmp_path: Path, policy: str, grade: int) -> None:
    path = write(tmp_path, "qrels.txt", QRELS + "q1 0 d1 0\n")
    judgments = read_judgments(path, on_conflict=policy)
    assert judgments.for_query("q1")["d1"] == grade
    assert len(judgments) == 4
    assert judgments.notes == (f"conflicting duplicate judgments resolved with on_conflict={policy!r} (1 "
                               "row(s) dropped)",)


def test_identical_duplicate_qrels_warn_and_collapse(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", QRELS + "q1 0 d2 1\n")
    message = (f"{path}: 1 duplicate judgment row(s) repeat the same grade (first: query 'q1', doc 'd2'); "
               "collapsed to one judgment per document")
    with pytest.warns(InputWarning, match=re.escape(message)):
        judgments = read_judgments(path)
    assert len(judgments) == 4
    assert judgments.notes == ("identical duplicate judgments collapsed (1 row(s) dropped)",)


# ---------------------------------------------------------------------- scores
def test_nan_score_is_an_error_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 nan r\n")
    message = (f"{path}:2: score is NaN for query 'q1', doc 'd2'; give a number, or read with "
               "nan_score='-inf' to rank such documents last")
    with pytest.raises(FormatError, match=re.escape(message)) as info:
        read_run(path)
    assert (info.value.path, info.value.line, info.value.text) == (str(path), 2, "nan")


@pytest.mark.parametrize(("option", "value", "note"), [
    ("-inf", float("-inf"), "1 NaN score(s) replaced with -inf (nan_score='-inf')"),
    (0.0, 0.0, "1 NaN score(s) replaced with 0 (nan_score='0')"),
])
def test_nan_score_replaced_on_request(tmp_path: Path, option: str | float, value: float, note: str) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 NaN r\n")
    run = read_run(path, nan_score=option)
    assert run.to_dict()["q1"]["d2"] == value
    assert run.notes == (note,)


@pytest.mark.parametrize("token", ["inf", "-inf", "Infinity"])
def test_infinite_scores_are_accepted_with_a_warning(tmp_path: Path, token: str) -> None:
    path = write(tmp_path, "run.txt", f"q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 {token} r\n")
    value = float(token)
    message = (f"{path}: 1 infinite score(s) accepted (first: {value} for query 'q1', doc 'd2'); they rank "
               "before (inf) or after (-inf) every finite score")
    with pytest.warns(InputWarning, match=re.escape(message)):
        run = read_run(path)
    assert run.to_dict()["q1"]["d2"] == value


def test_non_numeric_score_is_an_error_never_zero(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 abc r\n")
    message = (f"{path}:2: score must be a number; got 'abc' for query 'q1', doc 'd2'; fix the value (it is "
               "never read as 0)")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_run(path)


def test_comma_decimal_score_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 0,9 r\n")
    message = (f"{path}:1: score must be a number; got '0,9' for query 'q1', doc 'd1': decimal commas are "
               "not accepted, write '0.9'")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_run(path)


def test_the_first_bad_line_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\nq1 Q0 d2 x 2.0 r\nq1 Q0 d3 3 abc r\n")
    with pytest.raises(FormatError, match=re.escape(f"{path}:2: rank must be an integer; got 'x'")):
        read_run(path)


# ---------------------------------------------------------------------- grades
def test_non_numeric_relevance_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "q1 0 d1 2\nq1 0 d2 high\n")
    message = (f"{path}:2: relevance must be an integer; got 'high' for query 'q1', doc 'd2'; fix the value "
               "or remove the entry")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_judgments(path)


@pytest.mark.parametrize("token", ["0.9", "1.0", "1e2"])
def test_float_relevance_is_refused_never_truncated(tmp_path: Path, token: str) -> None:
    path = write(tmp_path, "qrels.txt", f"q1 0 d1 2\nq1 0 d2 {token}\n")
    message = (f"{path}:2: relevance must be an integer; got {token!r} for query 'q1', doc 'd2'; use "
               "float_grades=True to keep fractional grades (they are never truncated)")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_judgments(path)


def test_float_grades_keeps_fractions_as_float64(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "q1 0 d1 2\nq1 0 d2 0.9\n")
    judgments = read_judgments(path, float_grades=True)
    assert judgments.frame.schema["grade"] == pl.Float64
    assert judgments.for_query("q1") == {"d1": 2.0, "d2": 0.9}


def test_non_finite_float_grade_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "q1 0 d1 inf\n")
    message = f"{path}:1: relevance must be a finite number; got 'inf' for query 'q1', doc 'd1'"
    with pytest.raises(FormatError, match=re.escape(message)):
        read_judgments(path, float_grades=True)


def test_negative_relevance_is_kept_as_given(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "q1 0 d1 -2\nq1 0 d2 1\n")
    assert read_judgments(path).for_query("q1") == {"d1": -2, "d2": 1}


def test_relevance_above_the_declared_scale_warns(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "q1 0 d1 4\nq1 0 d2 1\nq1 0 d3 -1\n")
    assert len(read_judgments(path)) == 3  # no scale declared: no warning
    message = (f"{path}: 1 grade(s) outside the declared scale 0..3 (first: 4 for query 'q1', doc 'd1'); "
               "kept as given")
    with pytest.warns(InputWarning, match=re.escape(message)):
        judgments = read_judgments(path, scale=(0, 3))
    assert judgments.for_query("q1")["d1"] == 4


# ---------------------------------------------------------------------- empty input
@pytest.mark.parametrize("content", ["", "# only a comment\n", "\n\n  \n", "# a\n\n# b\n"])
def test_empty_files_are_errors_unless_allowed(tmp_path: Path, content: str) -> None:
    qrels = write(tmp_path, "qrels.txt", content)
    run = write(tmp_path, "run.txt", content)
    message = (f"{qrels}: no judgments found: the file is empty or holds only comments and blank lines; pass "
               "allow_empty=True to accept an empty input")
    with pytest.raises(InconsistentInputError, match=re.escape(message)):
        read_judgments(qrels, format="trec")
    with pytest.raises(InconsistentInputError, match=re.escape(f"{run}: no ranked documents found")):
        read_run(run, format="trec")
    assert len(read_judgments(qrels, format="trec", allow_empty=True)) == 0
    empty_run = read_run(run, format="trec", allow_empty=True)
    assert len(empty_run) == 0
    assert empty_run.notes == ("empty input accepted (allow_empty=True)",)


# ---------------------------------------------------------------------- whitespace, BOM, comments
def test_messy_whitespace_is_accepted_silently(tmp_path: Path) -> None:
    messy = ("\n  q1 \t Q0\t\td1 1   3.0 r  \r\n\r\nq1\tQ0\td2\t2\t2.0\tr\nq1 Q0 d3 3 1.0 r\t\n\n\tq2 Q0 d5 "
             "1 1.0 r\r\nq2  Q0  d4  2  0.5  r")
    clean = read_run(write(tmp_path, "clean.txt", RUN))
    run = read_run(write(tmp_path, "messy.txt", messy))
    assert run.frame.equals(clean.frame)
    assert run.name == "r"


def test_crlf_and_tabs_in_qrels(tmp_path: Path) -> None:
    judgments = read_judgments(write(tmp_path, "qrels.txt", QRELS.replace(" ", "\t").replace("\n", "\r\n")))
    assert judgments.frame.equals(read_judgments(write(tmp_path, "plain.txt", QRELS)).frame)


def test_bom_is_stripped_from_the_first_query_id(tmp_path: Path) -> None:
    run = read_run(write(tmp_path, "run.txt", "\ufeff" + RUN))
    qrels = read_judgments(write(tmp_path, "qrels.txt", "\ufeff" + QRELS))
    assert run.frame["query_id"][0] == "q1"
    assert qrels.frame["query_id"][0] == "q1"


def test_hash_at_column_zero_is_a_comment_elsewhere_data(tmp_path: Path) -> None:
    content = ("\ufeff# header comment\nq1 0 msmarco_v2.1_doc_00_0#0_1 1\n#q1 0 d9 1\nq1 0 d#2 0\n# "
               "trailing comment\n")
    judgments = read_judgments(write(tmp_path, "qrels.txt", content))
    assert judgments.for_query("q1") == {"msmarco_v2.1_doc_00_0#0_1": 1, "d#2": 0}


def test_indented_hash_is_data_and_fails_the_column_check(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "q1 0 d1 1\n  # not a comment\n")
    message = f"{path}:2: relevance must be an integer; got 'comment'"
    with pytest.raises(FormatError, match=re.escape(message)):
        read_judgments(path, format="trec")
    path = write(tmp_path, "qrels2.txt", "q1 0 d1 1\n\t# a comment\n")
    message = (f"{path}:2: expected 4 whitespace-separated columns (query_id iteration doc_id relevance); "
               "got 3: '# a comment'; for 3-column qrels (query_id doc_id relevance) read with "
               "format='qrels3'")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_judgments(path, format="trec")


# ---------------------------------------------------------------------- headers and column counts
def test_beir_header_in_a_trec_qrels_file(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    message = (f"{path}:1: this looks like a BEIR qrels header (query-id corpus-id score); TREC qrels files "
               "have none: read it with format='beir'")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_judgments(path, format="trec")
    judgments = read_judgments(path)  # detected as BEIR
    assert judgments.for_query("q1") == {"d1": 1}


def test_three_column_qrels_are_detected_and_noted(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "q1 d1 2\nq1 d2 0\n")
    judgments = read_judgments(path)
    assert judgments.for_query("q1") == {"d1": 2, "d2": 0}
    assert judgments.notes == ("3-column qrels detected (query_id doc_id relevance, without the TREC "
                               "iteration column)",)
    message = (f"{path}:1: expected 4 whitespace-separated columns (query_id iteration doc_id relevance); "
               "got 3: 'q1 d1 2'; for 3-column qrels (query_id doc_id relevance) read with format='qrels3'")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_judgments(path, format="trec")


def test_five_column_run_says_the_tag_seems_missing(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\nq1 Q0 d7 3 0.12\n")
    message = (f"{path}:2: expected 6 whitespace-separated columns (query_id Q0 doc_id rank score run_tag); "
               "got 5: 'q1 Q0 d7 3 0.12'; the run tag column seems missing: add a run name as the 6th "
               "column of every line")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_run(path)


def test_five_column_qrels_line_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "q1 0 d1 1\nq1 0 d2 1 extra\n")
    message = (f"{path}:2: expected 4 whitespace-separated columns (query_id iteration doc_id relevance); "
               "got 5: 'q1 0 d2 1 extra'")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_judgments(path)


# ---------------------------------------------------------------------- Unicode
NFC = "caf\u00e9"
NFD = "cafe\u0301"


def test_non_nfc_ids_warn_once_with_an_example(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", f"q1 0 {NFD} 1\nq1 0 d2 1\nq2 0 {NFD}2 1\n")
    message = (f"{path}: 2 distinct doc id(s) are not in Unicode NFC form, e.g. {NFD!r} (code points U+0063 "
               "U+0061 U+0066 U+0065 U+0301); ids that look the same may not match; read with "
               "normalize_ids='NFC' to normalise them")
    with pytest.warns(InputWarning, match=re.escape(message)) as record:
        read_judgments(path)
    assert len(record) == 1


def test_normalize_ids_nfc(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", f"q1 0 {NFD} 1\nq1 0 d2 1\n")
    judgments = read_judgments(path, normalize_ids="NFC")
    assert judgments.for_query("q1") == {NFC: 1, "d2": 1}
    assert judgments.notes == ("ids normalised to NFC (1 distinct id(s) changed)",)


def test_normalising_can_reveal_duplicates(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", f"q1 Q0 {NFD} 1 2.0 r\nq1 Q0 {NFC} 2 1.0 r\n")
    with pytest.raises(InconsistentInputError, match=re.escape(f"duplicate doc {NFC!r} for query 'q1'")):
        read_run(path, normalize_ids="NFC")


# ---------------------------------------------------------------------- encodings
def test_non_utf8_bytes_name_line_and_byte_offset(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", b"q1 Q0 d1 1 3.0 r\nq1 Q0 d\xe92 2 2.0 r\n")
    message = (f"{path}:2: cannot decode byte 0xe9 at byte offset 24 as UTF-8; if the file uses another "
               "encoding, name it, for example encoding='latin-1' or encoding='cp1252'")
    with pytest.raises(FormatError, match=re.escape(message)) as info:
        read_run(path)
    assert info.value.line == 2
    run = read_run(path, encoding="latin-1")
    assert run.frame["doc_id"].to_list() == ["d1", "d\u00e92"]


def test_undecodable_bytes_in_another_encoding(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "q1 0 d1 1\n".encode("utf-16"))
    assert read_judgments(path, encoding="utf-16").for_query("q1") == {"d1": 1}
    bad = write(tmp_path, "bad.txt", b"q1 0 d1 1\nq1 0 d\x81 1\n")
    message = f"{bad}:2: cannot decode byte 0x81 at byte offset 16 as cp1252"
    with pytest.raises(FormatError, match=re.escape(message)):
        read_judgments(bad, encoding="cp1252")
