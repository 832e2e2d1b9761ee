"""Without the C scanner (no compiler, or GAINSCOPE_NATIVE=0) a TREC run file is scanned by its vectorised twin,
gainscope.io.scan_polars: it gives exactly the judged run and the warnings of the Python readers + build_judged_run
(and of the C scanner), or hands the file over to the readers, whose error or result the user then sees."""

from __future__ import annotations

import gzip
import io
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.property import test_scan_equals_readers as with_c
from tests.property.test_scan_equals_readers import (
    GOOD,
    PLAIN_ENOUGH,
    PREPARED,
    UNUSUAL,
    _prepared,
    agree,
    assert_same,
    both,
    outcome,
    write_run,
)

from gainscope.core.judged_run import JudgedRun, PreparedJudgments, build_judged_run
from gainscope.core.policies import Policies
from gainscope.io import read_run, scan_polars
from gainscope.io.scan import judged_run_of, native_available, scan_trec_run
from gainscope.testing import strategies as gst

SETTINGS = {"derandomize": True, "database": None, "deadline": None,
            "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                                      HealthCheck.function_scoped_fixture]}


@pytest.fixture(autouse=True)
def no_native(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GAINSCOPE_NATIVE", "0")


def test_the_twin_serves_when_the_c_scanner_is_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = scan_polars.scan_piece
    monkeypatch.setattr(scan_polars, "scan_piece", lambda *a, **k: calls.append(1) or real(*a, **k))
    path = tmp_path / "run.txt"
    path.write_text("\n".join(GOOD) + "\n", encoding="utf-8")
    assert not native_available()
    (fast, _), (slow, _) = both(_prepared(**PREPARED), path, Policies())
    assert calls == [1]
    assert_same(fast, slow)


@pytest.mark.slow
@settings(max_examples=150, **SETTINGS)  # type: ignore[arg-type]
@given(data=gst.judgments_and_runs(max_docs=14), policies=gst.policies(ties=st.sampled_from(("trec_eval", "rank"))),
       seed=st.integers(0, 2**16), messy=st.booleans(), extra=st.booleans())
def test_twin_equals_readers(tmp_path: Path, data, policies: Policies, seed: int, messy: bool,  # type: ignore[no-untyped-def]
                             extra: bool) -> None:
    judgments, run = data
    path = tmp_path / f"run-{seed}.txt"
    write_run(path, run.frame, random.Random(seed), messy=messy, extra=extra)
    prepared = PreparedJudgments.of(judgments, policies.negative_grades)
    read = {"extra_columns": "ignore"} if extra else {}
    scanned = scan_trec_run(prepared, path, policies, **read)
    if not messy:  # one space between fields: the twin takes it
        assert not isinstance(scanned, str), scanned
    (fast, fast_warnings), (slow, slow_warnings) = both(prepared, path, policies, **read)
    assert isinstance(fast, JudgedRun) and isinstance(slow, JudgedRun), (fast, slow)
    assert_same(fast, slow)
    assert fast_warnings == slow_warnings


# Files the twin takes (plain) and files it must hand to the readers, beyond the C scanner's cases.
TWIN_PLAIN = {
    "tabs throughout": ["\t".join(line.split()) for line in GOOD],
    "CRLF throughout": [line + "\r" for line in GOOD],
    "no final line end": GOOD,  # written without the last \n below
    "ties, scores not sorted": ["q1 Q0 d3 1 1 tag", "q1 Q0 d9 2 3.5 tag", "q1 Q0 d1 3 3.5 tag", "q1 Q0 d2 4 3.5 tag",
                                "q2 Q0 d5 1 2 tag"],
    "zero and negative zero tie": ["q1 Q0 d1 1 0.0 tag", "q1 Q0 d3 2 -0.0 tag", "q1 Q0 d2 3 0 tag"],
    "a hash inside an id": ["q1 Q0 d#1 1 3.5 tag", "q1# Q0 d1 1 3.5 tag"],
    "signed and bare numbers": ["q1 Q0 d1 +1 +3. tag", "q1 Q0 d2 2 .5 tag", "q1 Q0 d3 03 1e2 tag",
                                "q1 Q0 d4 4 -1E-3 tag"],
    "non-ASCII ids throughout": ["qé Q0 dé 1 3.5 tag", "qé Q0 d\u00e91 2 3.5 tag", "q2 Q0 d\u4e2d 1 2 tag"],
    "an id not in NFC": ["q1 Q0 de\u0301 1 3.5 tag", "q1 Q0 e\u0301 2 3 tag", *GOOD[1:]],
    "a query id not in NFC": ["qe\u0301 Q0 d1 1 3.5 tag", "q\u212b Q0 d1 1 3 tag", *GOOD],
    "ids in NFC from U+0300 on": ["q\u4e2d Q0 d\u00e9\u4e2d 1 3.5 tag", "q\u4e2d Q0 d\uac00 2 3.5 tag", *GOOD],
    "a doc id not in NFC twice, in two queries": ["q1 Q0 de\u0301 1 3.5 tag", "q2 Q0 de\u0301 1 3 tag",
                                                  "q2 Q0 \u212b 2 3 tag"],
}
TWIN_REFUSED = {
    "two spaces once": [GOOD[0], "q1 Q0 d2  2 3.5 tag", *GOOD[2:]],
    "two spaces before Q0": [GOOD[0], "q1  Q0 d2 2 3.5 tag", *GOOD[2:]],
    "an empty Q0 column": [GOOD[0], "q1  d2 2 3.5 tag x", *GOOD[2:]],
    "an empty Q0 column, six fields": [GOOD[0], "q1  d2 2 3.5 tag", *GOOD[2:]],
    "an empty Q0 column in a tab file": ["\t".join(GOOD[0].split()), "q1\t\td2\t2\t3.5\ttag"],
    "a tab in a space file": [GOOD[0], "q1 Q0\td2 2 3.5 tag", *GOOD[2:]],
    "a space in a tab file": ["\t".join(GOOD[0].split()), "q1\tQ0\td2 2\t3.5\ttag"],
    "a leading space": [GOOD[0], " " + GOOD[1], *GOOD[2:]],
    "a trailing space": [GOOD[0], GOOD[1] + " ", *GOOD[2:]],
    "a trailing tab": [GOOD[0], GOOD[1] + "\t", *GOOD[2:]],
    "a blank line": [GOOD[0], "", *GOOD[1:]],
    "a blank CRLF line": [GOOD[0] + "\r", "\r", *[g + "\r" for g in GOOD[1:]]],
    "a comment that looks like data": ["#q1 Q0 d7 1 9 tag", *GOOD],
    "a comment": [GOOD[0], "# q1 Q0 d7 1 9 tag", *GOOD[1:]],
    "CRLF on one line only": [GOOD[0] + "\r", *GOOD[1:]],
    "a CR alone as the tag": [GOOD[0], "q1 Q0 d2 2 3.5 \r", *GOOD[2:]],
    "a vertical tab": [GOOD[0], "q1 Q0 d2 2 3.5\x0btag", *GOOD[2:]],
    "a form feed in an id": [GOOD[0], "q1 Q0 d\x0c2 2 3.5 tag", *GOOD[2:]],
    "a hex score": [GOOD[0], "q1 Q0 d2 2 0x10 tag", *GOOD[2:]],
    "an underscore in a score": [GOOD[0], "q1 Q0 d2 2 1_0 tag", *GOOD[2:]],
    "an infinite score spelled out": [GOOD[0], "q1 Q0 d2 2 -Infinity tag", *GOOD[2:]],
    "a rank beyond int64": [GOOD[0], "q1 Q0 d2 99999999999999999999 3.5 tag", *GOOD[2:]],
    "a score with a plus in its exponent only": [GOOD[0], "q1 Q0 d2 2 1e+ tag", *GOOD[2:]],
    "a duplicate in another query's piece": [*GOOD, "q2 Q0 d1 2 1 tag", "q2 Q0 d1 3 0.5 tag"],
}


@pytest.mark.parametrize("case", sorted(UNUSUAL) + sorted(PLAIN_ENOUGH) + sorted(TWIN_PLAIN) + sorted(TWIN_REFUSED))
def test_unusual_files_give_the_readers_outcome(tmp_path: Path, case: str) -> None:
    """Every file the twin refuses gives the readers' error, warning or result, and every file it takes their
    result and warnings."""
    lines = UNUSUAL.get(case) or PLAIN_ENOUGH.get(case) or TWIN_PLAIN.get(case) or TWIN_REFUSED[case]
    path = tmp_path / "run.txt"
    text = "\n".join(lines) + ("" if case == "no final line end" else "\n")
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    prepared = _prepared(**PREPARED, **{"q1#": {"d1": 1}, "qé": {"dé": 2}})
    read = {"normalize_ids": "NFC"} if "normalize_ids" in case else {}
    scanned = scan_trec_run(prepared, path, Policies(), **read)
    if case in UNUSUAL or case in TWIN_REFUSED:
        assert isinstance(scanned, str)  # a refusal says why
    if case in TWIN_PLAIN:
        assert not isinstance(scanned, str), scanned
    agree(prepared, path, Policies(), **read)


@pytest.mark.parametrize("column", range(6))
@pytest.mark.parametrize("bad", [b"\xff", b"\xed\xa0\x80", b"\xc0\x80", b"\xe2\x82", b"\xf4\x90\x80\x80",
                                 b"\xc2\x85"])
def test_bytes_that_are_not_utf8_or_a_c1_control_give_the_readers_error(tmp_path: Path, column: int,
                                                                         bad: bytes) -> None:
    """Bytes Python's decoder refuses (a bad byte, a surrogate, an overlong form, a cut or too large character),
    or a C1 control character, in any column: the twin refuses the file and the readers name the line."""
    fields = [b"q1", b"Q0", b"d2", b"2", b"3.5", b"tag"]
    fields[column] = fields[column][:1] + bad + fields[column][1:]
    path = tmp_path / "run.txt"
    path.write_bytes(GOOD[0].encode() + b"\n" + b" ".join(fields) + b"\n" + "\n".join(GOOD[1:]).encode() + b"\n")
    prepared = _prepared(**PREPARED)
    assert isinstance(scan_trec_run(prepared, path, Policies()), str)
    (fast, fast_warnings), (slow, slow_warnings) = both(prepared, path, Policies())
    assert fast == slow and not isinstance(slow, JudgedRun)
    assert fast_warnings == slow_warnings


_TOKEN = st.text(alphabet="0123456789+-.eEinfatyINFATY_x,", min_size=1, max_size=10)


@pytest.mark.slow
@settings(max_examples=400, **SETTINGS)  # type: ignore[arg-type]
@given(scores=st.lists(_TOKEN, min_size=1, max_size=6), ranks=st.lists(_TOKEN, min_size=1, max_size=6),
       f32=st.booleans())
def test_scores_and_ranks_are_read_as_the_readers_read_them(tmp_path: Path, scores: list[str], ranks: list[str],
                                                           f32: bool) -> None:
    """polars' typed CSV parser takes no score or rank the readers refuse, and reads each as they do (bit for bit);
    tokens it refuses send the file to the readers."""
    lines = [f"q Q0 d{i} {i + 1} {s} tag" for i, s in enumerate(scores)]
    lines += [f"q Q0 r{i} {r} {i}.5 tag" for i, r in enumerate(ranks)]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    prepared = _prepared(q={**{f"d{i}": 1 for i in range(len(scores))}, **{f"r{i}": i % 3 for i in range(len(ranks))}})
    policies = Policies(score_precision="float32" if f32 else "float64")
    for ties in ("trec_eval", "rank"):
        policies = Policies(ties=ties, score_precision="float32" if f32 else "float64")
        agree(prepared, path, policies)


def test_decimal_scores_are_taken_bit_for_bit(tmp_path: Path) -> None:
    """The C scanner's test of decimal scores (read bit for bit as Python's float(); an overflow to infinity goes to
    the readers), run through the twin."""
    with_c.test_scores_parse_exactly_as_python_floats(tmp_path)


def test_many_queries_in_many_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gainscope.io import scan, scan_stream
    from gainscope.io.text import TextFile

    monkeypatch.setattr(scan, "PIECE_BYTES", 4096)  # ranges of a few queries each
    monkeypatch.setattr(scan_stream, "CHUNK_BYTES", 4096)  # and pieces of a compressed run
    rnd = random.Random(7)
    judged: dict[str, dict[str, int]] = {}
    lines = []
    for q in range(300):
        qid = f"q{q:04d}"
        judged[qid] = {f"d{d}": rnd.choice([0, 1, 2, 3, -1]) for d in rnd.sample(range(200), 20)}
        for rank, d in enumerate(rnd.sample(range(200), 60), start=1):
            lines.append(f"{qid} Q0 d{d} {rank} {rnd.choice([1.0, 2.0, 2.5]) - (rank // 3) / 100:.3f} run")
    judged["q9999"] = {"d1": 1}
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    from gainscope.core.judgments import Judgments

    prepared = PreparedJudgments.of(Judgments.from_dict(judged))
    for policies in (Policies(), Policies(depth=25), Policies(judged_only=True), Policies(ties="rank", depth=7),
                     Policies(missing_queries="skip")):
        assert not isinstance(scan_trec_run(prepared, path, policies), str)
        from_bytes = scan_trec_run(prepared, path.read_bytes(), policies)
        assert not isinstance(from_bytes, str) and len(from_bytes.positions.query_ids) == 300
        packed = tmp_path / "run.txt.gz"
        packed.write_bytes(gzip.compress(path.read_bytes(), mtime=0))
        from_gzip = scan_trec_run(prepared, TextFile(packed), policies)
        assert not isinstance(from_gzip, str)
        assert from_gzip.positions.query_ids == from_bytes.positions.query_ids
        (fast, fast_warnings), (slow, slow_warnings) = both(prepared, path, policies)
        assert isinstance(fast, JudgedRun)
        assert_same(fast, slow)
        assert fast_warnings == slow_warnings
    lines.append("q0000 Q0 d999 61 0.1 run")  # the first query comes back at the end: not together
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert scan_trec_run(prepared, path, Policies()) == "a query whose lines are not all together"


def test_standard_input_is_scanned_by_the_twin(tmp_path: Path) -> None:
    prepared = _prepared(**PREPARED)
    data = ("\n".join(GOOD) + "\n").encode()
    fast = outcome(lambda: judged_run_of(prepared, io.BytesIO(data), Policies())[0])
    slow = outcome(lambda: build_judged_run(prepared, read_run(io.BytesIO(data)), Policies(), sparse=True))
    assert isinstance(fast[0], JudgedRun)
    assert_same(fast[0], slow[0])
    assert fast[1] == slow[1]
    assert not isinstance(scan_trec_run(prepared, data, Policies()), str)


def test_a_file_shorter_than_when_its_ranges_were_cut_is_an_error(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The C scanner's test of a file rewritten between cutting it and reading it, run through the twin."""
    from tests.io import test_hostile_files as hostile

    hostile.test_a_file_shorter_than_when_its_parts_were_cut_is_an_error(tmp_path, monkeypatch)


def test_unicode_ids_give_the_readers_warnings(tmp_path: Path) -> None:
    """The C scanner's property test of Unicode ids (any id the readers take, with their warnings about ids not in
    NFC; under normalize_ids="NFC" an id NFC changes goes to the readers), run through the twin."""
    with_c.test_unicode_ids_give_the_readers_warnings(tmp_path)


@pytest.mark.parametrize("bad", [b"\xff", b"\xed\xa0\x80", b"\xe2\x82"])
def test_bytes_that_are_not_utf8_deep_in_the_q0_column_give_the_readers_error(tmp_path: Path, bad: bytes) -> None:
    """polars does not read the Q0 column but checks its bytes: a bad one far into a piece still refuses it."""
    lines = [f"q1 Q0 d{i} {i + 1} {10000 - i} tag".encode() for i in range(6000)]
    lines[5000] = lines[5000].replace(b"Q0", b"Q" + bad + b"0")
    path = tmp_path / "run.txt"
    path.write_bytes(b"\n".join(lines) + b"\n")
    prepared = _prepared(**PREPARED)
    assert isinstance(scan_trec_run(prepared, path, Policies()), str)
    (fast, fast_warnings), (slow, slow_warnings) = both(prepared, path, Policies())
    assert fast == slow and not isinstance(slow, JudgedRun)
    assert fast_warnings == slow_warnings


@pytest.mark.parametrize(("data", "sep", "doubled"), [
    (b"ab  c", b" ", True), (b"a  bc", b" ", True), (b"a b c ", b" ", False), (b"  ", b" ", True), (b" ", b" ", False),
    (b"", b" ", False), (b"a\t\tb", b"\t", True), (b"a\t b", b"\t", False), (b"a \tb\t", b"\t", False)])
def test_a_separator_twice_in_a_row_is_found_at_either_offset(data: bytes, sep: bytes, doubled: bool) -> None:
    assert scan_polars._doubled(data, sep) is doubled
