"""Without the C module (no compiler, or GAINSCOPE_NATIVE=0) a plain TREC qrels file is read by the C reader's
vectorised twin, gainscope.io.scan_polars.read_qrels: it gives exactly the Judgments and warnings of the Python
readers, or hands the file over to them, whose error, warning or result the user then sees."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.property.test_scan_qrels_equals_readers import SETTINGS, qrels_text, readers_only

import gainscope.io
from gainscope.core.judged_run import PreparedJudgments
from gainscope.errors import GainscopeError
from gainscope.io import read_judgments
from gainscope.io.scan import native_available


@pytest.fixture(autouse=True)
def no_native(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GAINSCOPE_NATIVE", "0")


def outcome(path: Path, **options: object) -> tuple[object, list[str]]:
    """``read_judgments(path)``: (frame, schema, notes, source) or (error type and text), and the warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            j = read_judgments(path, **options)
            result: object = (j.frame.to_dict(as_series=False), j.frame.schema, j.notes, j.source)
        except GainscopeError as exc:
            result = (type(exc), str(exc))
    return result, [str(w.message) for w in caught]


def agree(path: Path, **options: object) -> bool:
    """Asserts that the twin gives the readers' outcome; returns True when the twin took the file."""
    calls: list[bool] = []
    real = gainscope.io.scan_trec_judgments

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        calls.append(out is not None)
        return out

    gainscope.io.scan_trec_judgments = spy
    try:
        fast = outcome(path, **options)
    finally:
        gainscope.io.scan_trec_judgments = real
    with readers_only():
        slow = outcome(path, **options)
    assert fast == slow
    return bool(calls) and calls[0]


def test_the_twin_serves_when_the_c_module_is_off(tmp_path: Path) -> None:
    path = tmp_path / "j.qrels"
    path.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n", encoding="ascii")
    assert not native_available()
    assert agree(path)
    j = read_judgments(path)
    assert j.arrays is None and j.to_dict() == {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}


@SETTINGS
@given(data=qrels_text(), detect=st.booleans())
def test_twin_equals_readers(tmp_path: Path, data: bytes, detect: bool) -> None:
    path = tmp_path / "judgments.qrels"
    path.write_bytes(data)
    if detect:
        agree(path)
    else:
        agree(path, format="trec")


@pytest.mark.parametrize(
    ("text", "taken"),
    [
        ("q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n", True),
        ("q1\t0\td1\t1\nq2\t0\td1\t2\n", True),  # tabs
        ("q1 0 d1 1\r\nq2 0 d1 2\r\n", True),  # CRLF throughout
        ("q1 0 d1 1\nq2 0 d1 2", True),  # no final line end
        ("\ufeffq1 0 d1 1\n", True),  # a byte order mark, dropped
        ("q1 d1 1\nq2 d1 0\n", True),  # 3 columns, detected
        ("q1 0 d1 +3\nq1 0 d2 007\nq1 0 d3 -0\nq1 0 d4 -1\n", True),  # integers as the readers cast them
        ("q1 0 d1 999999999999999999\n", True),  # 18 digits
        ("q1 0 d#1 1\nq1# 0 d1 1\n", True),  # a hash inside an id
        ("q1 0 d\u00e9 1\n", True),  # UTF-8, in NFC
        ("q1 0 de\u0301 1\nq\u212b 0 d1 1\n", True),  # not in NFC: the readers' warnings
        ("q2 0 d1 1\nq1 0 d1 1\nq2 0 d2 1\n", True),  # a query's lines apart
        ("q1 0 d1 1\nq1 0 d1 1\n", False),  # the same judgment twice: the readers collapse it, with a warning
        ("q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 0\n", False),  # conflicting grades, lines apart: the readers' error
        ("q1 0 d1 1\rq1 0 d2 1\n", False),  # a lone carriage return
        ("q1 0 d1 1\r\nq1 0 d2 1\n", False),  # CRLF on one line only
        ("q1  0 d1 1\n", False),  # two spaces
        ("q1  d1 1 x\n", False),  # an empty iteration column, the fields counted right
        ("q1  d1 1\n", False),  # an empty iteration column, four fields
        ("q1 0 d1 1\nq1 0 d2\nq1 0 d3 1 1\n", False),  # a line short, another long: as many separators
        ("q1 0 d1 1 \n", False),  # a trailing space
        (" q1 0 d1 1\n", False),  # a leading space
        ("q1 0 d1 1\n\nq1 0 d2 1\n", False),  # a blank line
        ("q1 0 d1 1\n# note\nq1 0 d2 1\n", False),  # a comment
        ("#q1 0 d1 1\nq1 0 d2 1\n", False),  # a comment that looks like data
        ("q1 0\td1 1\n", False),  # a tab in a space file
        ("q1 0 d\x0b1 1\n", False),  # a vertical tab
        ("q1 0 d\u0085 1\n", False),  # a C1 control character
        ("q1 0 d1 1\n" + "q2 0 " + "d" * (1 << 20) + " 1\n", False),  # a line beyond the limit
        ("q1 0 d1 1.0\n", False),  # a float grade: the readers' error
        ("q1 0 d1 1e2\n", False),
        ("q1 0 d1 0x10\n", False),
        ("q1 0 d1 1_0\n", False),
        ("q1 0 d1 high\n", False),
        ("q1 0 d1 9999999999999999999\n", False),  # beyond int64
        ("qid iter docno rel\nq1 0 d1 1\n", False),  # a header row
        ("q1 0 d1 1 extra\n", False),
        ("q1 0 d1\n", False),
        ("# nothing\n\n", False),  # empty
        ("", False),
        ("q1 0 d\x001 1\n", False),  # a NUL byte
    ],
)
def test_unusual_files_give_the_readers_outcome(tmp_path: Path, text: str, taken: bool) -> None:
    path = tmp_path / "judgments.txt"
    path.write_bytes(text.encode("utf-8"))
    assert agree(path) is taken
    assert agree(path, allow_empty=True, on_conflict="max") is taken
    assert agree(path, normalize_ids="NFC") is (taken and "\u0301" not in text)


@pytest.mark.parametrize("column", range(4))
@pytest.mark.parametrize("bad", [b"\xff", b"\xed\xa0\x80", b"\xc0\x80", b"\xe2\x82", b"\xc2\x85"])
def test_bytes_that_are_not_utf8_give_the_readers_error(tmp_path: Path, column: int, bad: bytes) -> None:
    fields = [b"q1", b"0", b"d2", b"2"]
    fields[column] = fields[column][:1] + bad + fields[column][1:]
    path = tmp_path / "judgments.qrels"
    path.write_bytes(b"q1 0 d1 1\n" + b" ".join(fields) + b"\nq2 0 d1 0\n")
    assert agree(path, format="trec") is False


def test_prepared_and_evaluated_as_the_readers_judgments(tmp_path: Path) -> None:
    lines = [f"q{q} 0 d{(q * 7 + d * 3) % 50} {(q + d) % 4 - 1}" for q in range(30) for d in range(12)]
    path = tmp_path / "j.qrels"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    assert agree(path)
    fast = PreparedJudgments.of(read_judgments(path))
    with readers_only():
        slow = PreparedJudgments.of(read_judgments(path))
    assert fast.query_ids == slow.query_ids
    assert fast.offsets.tolist() == slow.offsets.tolist() and fast.grades.tolist() == slow.grades.tolist()
    assert fast.doc_ids.to_list() == slow.doc_ids.to_list()
