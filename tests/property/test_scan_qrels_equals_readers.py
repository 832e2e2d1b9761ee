"""The C reader of TREC qrels (gainscope.io.scan_qrels) gives exactly the Judgments of the Python readers, or
hands the file over to them (and then the user sees exactly their error, warning or result); judgments it
read are prepared and evaluated as any others."""

from __future__ import annotations

import contextlib
import os
import re
import unicodedata
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gainscope.core.judged_run import PreparedJudgments
from gainscope.core.judgments import Judgments
from gainscope.errors import GainscopeError
from gainscope.evaluation import evaluate
from gainscope.io import read_judgments, scan_polars, scan_qrels
from gainscope.io.frames import JudgmentOptions
from gainscope.io.scan import native_available
from gainscope.io.scan_qrels import scan_trec_judgments
from gainscope.io.text import TextFile

needs_native = pytest.mark.skipif(not native_available(), reason="the C scanner is not built")

SETTINGS = settings(max_examples=300, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def outcome(path: Path, native: bool, **options: object) -> tuple[object, list[str]]:
    """``read_judgments(path)`` with the C reader on or off: (frame, notes, source) or (error type and text),
    and the warnings."""
    saved = os.environ.get("GAINSCOPE_NATIVE")
    os.environ["GAINSCOPE_NATIVE"] = "1" if native else "0"
    try:  # without the C reader, its vectorised twin off too: the readers alone
        with warnings.catch_warnings(record=True) as caught, readers_only(not native):
            warnings.simplefilter("always")
            try:
                j = read_judgments(path, **options)
                result: object = (j.frame.to_dict(as_series=False), j.frame.schema, j.notes, j.source,
                                  j.arrays is not None)
            except GainscopeError as exc:
                result = (type(exc), str(exc))
    finally:
        if saved is None:
            del os.environ["GAINSCOPE_NATIVE"]
        else:
            os.environ["GAINSCOPE_NATIVE"] = saved
    return result, sorted(str(w.message) for w in caught)


@contextlib.contextmanager
def readers_only(on: bool = True) -> Iterator[None]:
    """The C reader's vectorised twin (``scan_polars.read_qrels``) hands every file to the readers."""
    real = scan_polars.read_qrels
    if on:
        scan_polars.read_qrels = lambda *args: {"fallback": "turned off", "line": 0}  # type: ignore[assignment]
    try:
        yield
    finally:
        scan_polars.read_qrels = real  # type: ignore[misc]


def same_outcome(path: Path, **options: object) -> bool:
    """Asserts that both readings agree; returns True when the C reader took the file."""
    fast, fast_warnings = outcome(path, True, **options)
    slow, slow_warnings = outcome(path, False, **options)
    assert fast_warnings == slow_warnings
    if isinstance(fast, tuple) and len(fast) == 5:
        assert isinstance(slow, tuple) and len(slow) == 5, (fast, slow)
        assert fast[:4] == slow[:4]
        assert slow[4] is False
        return bool(fast[4])
    assert fast == slow
    return False


QUERIES = ["q1", "q2", "301", "Q-03", "q\u00e9", "x"]
DOCS = ["d1", "d2", "doc#3", "D0001", "msmarco_v2.1_doc_00_0#0_1", "d\u00e8", "d\x01", "a"]
GRADES = ["0", "1", "2", "4", "-1", "+3", "007", "-0", "999999999999999999", "9999999999999999999",
          "1.0", "0.5", "high", "1e2"]
SEPARATORS = [" ", "\t", "  ", " \t "]


@st.composite
def qrels_text(draw: st.DrawFn) -> bytes:
    """A qrels file: half of them plain (what the C reader takes: distinct (query, doc) pairs, integer grades,
    comments, blank lines, tabs, CRLF), half with what it must leave to the readers."""
    columns = draw(st.sampled_from([4, 4, 4, 3]))
    unusual = draw(st.booleans())
    queries = QUERIES if unusual else QUERIES[:4]
    docs = DOCS if unusual else DOCS[:5]
    grades = GRADES if unusual else GRADES[:9]
    pairs = st.tuples(st.sampled_from(queries), st.sampled_from(docs))
    chosen = draw(st.lists(pairs, max_size=25) if unusual else st.lists(pairs, max_size=20, unique=True))
    lines: list[str] = []
    for q, d in chosen:
        g = draw(st.sampled_from(grades))
        fields = [q, "0", d, g] if columns == 4 else [q, d, g]
        sep = draw(st.sampled_from(SEPARATORS))
        line = sep.join(fields)
        kind = draw(st.integers(0, 30))
        if kind == 0:
            lines.append("# a comment")
        elif kind == 1:
            lines.append("")
        elif kind == 2 and unusual:
            line += " extra"
        elif kind == 3 and unusual:
            line = line.rsplit(sep, 1)[0]  # a column short
        lines.append(line + draw(st.sampled_from(["", "", "", " "] + (["\r"] if unusual else []))))
    end = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"] if unusual else ["\n", "\r\n"]))
    text = end.join(lines) + draw(st.sampled_from([end, ""]))
    if unusual and draw(st.integers(0, 10)) == 0:
        text = "\ufeff" + text
    return text.encode("utf-8")


@needs_native
@SETTINGS
@given(data=qrels_text(), detect=st.booleans())
def test_c_reader_equals_readers(tmp_path: Path, data: bytes, detect: bool) -> None:
    path = tmp_path / "judgments.qrels"
    path.write_bytes(data)
    took = same_outcome(path) if detect else same_outcome(path, format="trec")
    if took:  # what the C reader takes is plain: UTF-8 without control characters, no repeated document
        assert not re.search(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]", data.decode("utf-8"))


def plain_file(path: Path, judgments: dict[str, dict[str, int]]) -> Path:
    lines = [f"{q} 0 {d} {g}" for q, docs in judgments.items() for d, g in docs.items()]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


@needs_native
@pytest.mark.parametrize(
    ("text", "taken"),
    [
        ("q1 0 d1 1\nq1 0 d2 0\n# comment\n\nq2 0 d1 2\n", True),
        ("q1 0 d1 1\r\nq2\t0\td1\t2\r\n", True),
        ("q1 d1 1\nq2 d1 0\n", True),  # 3 columns, detected
        ("q1 0 d1 1\nq1 0 d1 1\n", False),  # the same judgment twice: the readers collapse it, with a warning
        ("q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 0\n", False),  # conflicting grades, lines apart: the readers' error
        ("q1 0 d1 1\rq1 0 d2 1\n", False),  # a lone carriage return
        ("q1 0 d1 1\n# note\rq1 0 d2 1\n", False),  # ... inside a comment too
        ("q1 0 d\u00e9 1\n", True),  # UTF-8, in NFC
        ("q1 0 de\u0301 1\n", True),  # UTF-8, not in NFC: the readers' warning
        ("\ufeffq1 0 d1 1\n", True),  # a byte order mark, dropped
        ("q1 0 d\u0085 1\n", False),  # a C1 control character: the readers' error
        ("q1 0 d1 1\n" + "q2 0 " + "d" * (1 << 20) + " 1\n", False),  # a line beyond the limit
        ("q1 0 d1 1.0\n", False),  # a float grade: the readers' error
        ("q1 0 d1 9999999999999999999\n", False),  # 19 digits
        ("qid iter docno rel\nq1 0 d1 1\n", False),  # a header row
        ("q1 0 d1 1 extra\n", False),
        ("# nothing\n\n", False),  # empty
        ("q1 0 d\x001 1\n", False),  # a NUL byte
    ],
)
def test_unusual_files_go_to_the_readers_with_the_same_outcome(tmp_path: Path, text: str, taken: bool) -> None:
    path = tmp_path / "judgments.txt"
    path.write_bytes(text.encode("utf-8"))
    assert same_outcome(path) is taken
    assert same_outcome(path, allow_empty=True, on_conflict="max") is taken


@needs_native
def test_options_gzip_encodings_and_other_files_are_left_to_the_readers(tmp_path: Path) -> None:
    import gzip

    path = plain_file(tmp_path / "j.qrels", {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}})
    src = TextFile(path)
    assert scan_trec_judgments(src, "trec", JudgmentOptions()) is not None
    for opts in (JudgmentOptions(float_grades=True), JudgmentOptions(scale=(0, 1)),
                 JudgmentOptions(normalize_ids="NFKC")):
        assert scan_trec_judgments(src, "trec", opts) is None
        assert same_outcome(path, float_grades=opts.float_grades, scale=opts.scale,
                            normalize_ids=opts.normalize_ids) is False
    assert scan_trec_judgments(src, "jsonl", JudgmentOptions()) is None
    assert scan_trec_judgments(TextFile(path, "latin-1"), "trec", JudgmentOptions()) is None
    packed = tmp_path / "j.qrels.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert same_outcome(packed) is False


#: a few queries of a few judged documents, grades -2..4 (negative ones included), ids that sort differently as
#: strings and as numbers
SMALL_JUDGMENTS = st.dictionaries(st.sampled_from(["q1", "q10", "q2", "Q", "301"]),
                                  st.dictionaries(st.sampled_from(["a", "b", "c", "d", "e", "b0", "B"]),
                                                  st.integers(-2, 4), min_size=1),
                                  min_size=1)

@needs_native
@SETTINGS
@given(judgments=SMALL_JUDGMENTS,
       negative=st.sampled_from(["unjudged", "nonrelevant"]))
def test_prepared_from_arrays_equals_prepared_from_the_frame(tmp_path: Path, judgments: dict[str, dict[str, int]],
                                                             negative: str) -> None:
    fast, slow = _prepared_both_ways(plain_file(tmp_path / "j.qrels", judgments), negative)
    assert fast.frame.equals(slow.frame)


def _prepared_both_ways(path: Path, negative: str) -> tuple[PreparedJudgments, PreparedJudgments]:
    """The judgments of ``path`` prepared from the C reader's arrays and from their frame, checked array for array
    (query ids, offsets, grades, each row's grade, doc ids)."""
    scanned = read_judgments(path)
    assert scanned.arrays is not None
    framed = Judgments(scanned.frame.clone())
    fast, slow = PreparedJudgments.of(scanned, negative), PreparedJudgments.of(framed, negative)
    assert fast.query_ids == slow.query_ids
    for name in ("offsets", "grades", "row_grades"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    assert fast.doc_ids.to_list() == slow.doc_ids.to_list()
    return fast, slow


@needs_native
def test_judgments_read_in_c_evaluate_as_the_readers_judgments(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    qrels = plain_file(tmp_path / "j.qrels", {f"q{q}": {f"d{d}": int(rng.integers(-1, 4)) for d in
                                                        rng.choice(60, 15, replace=False)} for q in range(40)})
    run = tmp_path / "r.run"
    run.write_text("".join(f"q{q} Q0 d{d} {r + 1} {round(float(rng.normal()), 1)} t\n" for q in range(42)
                           for r, d in enumerate(rng.choice(60, 30, replace=False))), encoding="ascii")
    metrics = ["nDCG@10", "AP", "RR", "P@5", "R@20", "bpref", "ERR@10", "Judged@10"]
    for policies in ({}, {"judged_only": True, "negative_grades": "nonrelevant"}, {"missing_queries": "skip"}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ties and coverage
            fast = evaluate(read_judgments(qrels), run, metrics, **policies)
            slow = evaluate(Judgments(read_judgments(qrels).frame), run, metrics, **policies)
        assert fast.query_ids == slow.query_ids
        assert np.array_equal(fast.values, slow.values)


@needs_native
def test_the_frame_is_made_only_when_asked_for(tmp_path: Path) -> None:
    path = plain_file(tmp_path / "j.qrels", {"q2": {"b": 1, "a": 0}, "q1": {"c": 2}})
    j = read_judgments(path)
    assert j.arrays is not None and j.arrays.query_ids == ["q2", "q1"]
    assert j.arrays.doc_ids() == ["b", "a", "c"] and j.arrays.grades.tolist() == [1, 0, 2]
    assert len(j) == 3 and j.query_ids() == ["q1", "q2"] and j.for_query("q2") == {"b": 1, "a": 0}
    assert j.to_dict() == {"q2": {"b": 1, "a": 0}, "q1": {"c": 2}}
    assert repr(j) == f"Judgments(3 judgments, 2 queries, source={str(path)!r})"


_ID_TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp"), blacklist_characters="#\ufeff"),
                   min_size=1, max_size=4)


@needs_native
@SETTINGS
@given(queries=st.lists(_ID_TEXT, min_size=1, max_size=3, unique=True),
       docs=st.lists(_ID_TEXT, min_size=1, max_size=5, unique=True), nfc=st.booleans())
def test_unicode_ids_are_read_with_the_readers_warnings(tmp_path: Path, queries: list[str], docs: list[str],
                                                        nfc: bool) -> None:
    """Any UTF-8 id: the C reader takes the file (unless NFC changes an id under normalize_ids="NFC") and gives the
    readers' judgments and warnings (ids not in NFC)."""
    path = tmp_path / "judgments.qrels"
    path.write_text("".join(f"{q} 0 {d} {i % 3}\n" for q in queries for i, d in enumerate(docs)), encoding="utf-8")
    changed = any(unicodedata.normalize("NFC", i) != i for i in queries + docs)
    read = {"normalize_ids": "NFC"} if nfc else {}
    took = same_outcome(path, format="trec", **read)
    assert took == (not (nfc and changed))


def _shuffled_file(path: Path, judgments: dict[str, dict[str, int]], seed: int) -> Path:
    """``judgments`` as a qrels file whose lines are in a random order: a query's lines apart."""
    lines = [f"{q} 0 {d} {g}" for q, docs in judgments.items() for d, g in docs.items()]
    np.random.default_rng(seed).shuffle(lines)
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


@needs_native
@SETTINGS
@given(judgments=SMALL_JUDGMENTS,
       negative=st.sampled_from(["unjudged", "nonrelevant"]), seed=st.integers(0, 3))
def test_prepared_from_arrays_equals_prepared_from_the_frame_lines_apart(
        tmp_path: Path, judgments: dict[str, dict[str, int]], negative: str, seed: int) -> None:
    """As above, the lines of a query apart (the reader checks duplicates at the end, the index groups the rows)."""
    _prepared_both_ways(_shuffled_file(tmp_path / "j.qrels", judgments, seed), negative)


@needs_native
def test_judgments_read_in_c_with_lines_apart_evaluate_as_the_readers_judgments(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    qrels = _shuffled_file(tmp_path / "j.qrels", {f"q{q}": {f"d{d}": int(rng.integers(-1, 4)) for d in
                                                            rng.choice(60, 15, replace=False)} for q in range(40)}, 1)
    run = tmp_path / "r.run"
    run.write_text("".join(f"q{q} Q0 d{d} {r + 1} {round(float(rng.normal()), 1)} t\n" for q in range(42)
                           for r, d in enumerate(rng.choice(60, 30, replace=False))), encoding="ascii")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ties and coverage
        for policies in ({}, {"judged_only": True, "negative_grades": "nonrelevant"}):
            judged = read_judgments(qrels)
            assert judged.arrays is not None
            fast = evaluate(judged, run, ["nDCG@10", "AP", "R@20", "bpref"], **policies)
            slow = evaluate(Judgments(read_judgments(qrels).frame), run, ["nDCG@10", "AP", "R@20", "bpref"],
                            **policies)
            assert np.array_equal(fast.values, slow.values)


def _big_query_file(path: Path, *, end: str = "\n", tail: str = "", bom: bool = False) -> Path:
    """About 5 MB of qrels: 0.5 MB of small queries, then one query of 300,000 documents whose lines cross the
    reader's first block of 4 MB, then ``tail``."""
    small = "".join(f"s{q} 0 d{d} {d % 3}{end}" for q in range(4000) for d in range(10))
    big = "".join(f"big 0 d{d} {d % 5}{end}" for d in range(300_000))
    path.write_bytes(("\ufeff" if bom else "").encode() + (small + big + tail).encode("ascii"))
    return path


@needs_native
@pytest.mark.slow  # 5 MB read by both readers, six times
@pytest.mark.parametrize(("end", "tail", "bom", "taken"), [
    ("\n", "", False, True),
    ("\r\n", "last 0 d1 1", True, True),  # the last line without its newline
    ("\n", "big 0 d7 2\n", False, False),  # a document judged twice, 4 MB apart in one query: the readers' error
    ("\n", "s3 0 d1 1\n", False, False),  # ... in a query whose lines are apart
    ("\n", "s3 0 d99 1\n", False, True),  # a query whose lines are apart, no document twice
    ("\n", "x 0 " + "d" * (1 << 20) + " 1\n", False, False),  # a line beyond the limit, across blocks
])
def test_files_larger_than_a_block_are_read_whole(tmp_path: Path, end: str, tail: str, bom: bool,
                                                    taken: bool) -> None:
    path = _big_query_file(tmp_path / "j.qrels", end=end, tail=tail, bom=bom)
    assert same_outcome(path) is taken


@needs_native
@SETTINGS
@given(data=qrels_text())
def test_c_reader_in_two_parts_equals_readers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    # every file read in two parts (two threads), cut near its middle where a query's lines end: queries of
    # both parts, repeats across the cut, comments and CRLF there give what the readers give
    monkeypatch.setattr(scan_qrels, "SPLIT_BYTES", 1)
    path = tmp_path / "judgments.qrels"
    path.write_bytes(data)
    same_outcome(path)


@needs_native
@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize(("middle", "tail", "wide"), [
    ("", "", False),  # grades of -128..127 (qrels' own): one byte each
    ("j 0 d9 -128\n", "t 0 d9 127\n", False),
    ("j 0 d9 128\n", "", True),  # a grade beyond int8 in the first part: every grade int64, the same values
    ("", "t 0 d9 -129\n", True),  # ... in the second part (read on its own thread when split)
    ("j 0 d9 1000\n", "t 0 d9 -999999999999999999\n", True),  # ... in both
])
def test_grades_are_kept_in_one_byte_while_they_fit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, split: bool,
                                                    middle: str, tail: str, wide: bool) -> None:
    if split:
        monkeypatch.setattr(scan_qrels, "SPLIT_BYTES", 1)
    path = _parts_file(tmp_path / "j.qrels", tail, middle=middle)
    assert same_outcome(path) is True  # taken, with the readers' judgments
    arrays = read_judgments(path).arrays
    assert arrays is not None
    assert arrays.grades.dtype == (np.int64 if wide else np.int8)
    assert arrays.grades.tolist() == [int(line.split()[-1]) for line in path.read_text().splitlines()]


def _parts_file(path: Path, tail: str, *, middle: str = "") -> Path:
    """Queries a..t of 5 documents each, ``middle`` after query j (near the file's middle), then ``tail``."""
    lines = [f"{q} 0 d{d} {d % 3}\n" for q in "abcdefghij" for d in range(5)]
    lines += [middle] + [f"{q} 0 d{d} {d % 3}\n" for q in "klmnopqrst" for d in range(5)]
    path.write_text("".join(lines) + tail, encoding="utf-8")
    return path


@needs_native
@pytest.mark.parametrize(("middle", "tail", "taken"), [
    ("", "", True),
    ("", "a 0 d9 1\n", True),  # a query of both parts (its lines apart), no document twice
    ("", "a 0 d1 1\n", False),  # ... a document of the first part judged again in the second: the readers' error
    ("", "t 0 d1 1\n", False),  # a document judged twice within the second part
    ("j 0 d1 2\n", "", False),  # ... within the first part
    ("", "q\u00e9 0 d1 1\nk 0 de\u0301 1\nq\u00e9 0 d2 1\n", True),  # ids Python checks, of the second part
    ("", "a\u0301 0 d1 1\n", True),  # a query id Python checks, in the second part only
    ("a\u0301 0 d1 1\n", "a\u0301 0 d2 1\n", True),  # ... in both parts: read in one pass
    ("", "u 0 d1 1.5\n", False),  # a line the readers must read, in the second part
])
def test_files_read_in_two_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, middle: str, tail: str,
                                 taken: bool) -> None:
    monkeypatch.setattr(scan_qrels, "SPLIT_BYTES", 1)
    path = _parts_file(tmp_path / "j.qrels", tail, middle=middle)
    assert same_outcome(path) is taken
