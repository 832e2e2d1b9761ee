"""The C scanner of TREC run files gives exactly the judged run of the Python readers + build_judged_run, with
the same warnings, or hands the file over to them (and then the user sees exactly their error or result)."""

from __future__ import annotations

import gzip
import itertools
import os
import random
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.helpers import outcome as shared_outcome

from gainscope.core.judged_run import JudgedRun, PreparedJudgments, build_judged_run
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.io import arrow_tables, compressed, read_run, scan_stream
from gainscope.io.compressed import Buffers
from gainscope.io.scan import judged_run_of, judged_run_of_run, native_available, scan_run, scan_trec_run
from gainscope.io.scan_stream import query_pieces
from gainscope.io.text import TextFile
from gainscope.testing import strategies as gst

needs_native = pytest.mark.skipif(not native_available(), reason="the C scanner is not built")

ARRAYS = ("num_ret", "offsets", "rank", "grades", "scores", "group_start", "group_kept", "group_size",
          "tail_grades", "tail_query", "tail_start", "tail_kept", "tail_size", "judged_offsets", "judged_grades",
          "missing")


def test_native_scanner_is_built_where_required() -> None:
    # dev.py (and so CI) builds the extension with GAINSCOPE_REQUIRE_NATIVE=1: its absence is a failure there
    if os.environ.get("GAINSCOPE_REQUIRE_NATIVE") == "1":
        assert native_available()


def assert_same(a: JudgedRun, b: JudgedRun) -> None:
    assert a.query_ids == b.query_ids
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape, name
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name
    assert a.doc_ids is not None and b.doc_ids is not None
    assert a.doc_ids.to_list() == b.doc_ids.to_list()
    assert a.judged_doc_ids.to_list() == b.judged_doc_ids.to_list()
    assert a.coverage == b.coverage
    assert a.run_name == b.run_name


def outcome(fn):  # type: ignore[no-untyped-def]
    """What a reading gives: (result, warnings in any order) or (the error's type and message, warnings)."""
    return shared_outcome(fn, any_order=True)


def both(prepared: PreparedJudgments, path: Path, policies: Policies, **read: object) -> tuple:  # type: ignore[type-arg]
    fast = outcome(lambda: judged_run_of(prepared, path, policies, **read)[0])
    slow = outcome(lambda: build_judged_run(prepared, read_run(path, **read), policies, sparse=True))
    return fast, slow


def agree(prepared: PreparedJudgments, path: Path, policies: Policies, **read: object) -> None:
    """The scanner's path and the readers' give the same judged run (or the same error, with its file and line) and
    the same warnings."""
    (fast, fast_warnings), (slow, slow_warnings) = both(prepared, path, policies, **read)
    if isinstance(slow, JudgedRun):
        assert isinstance(fast, JudgedRun)
        assert_same(fast, slow)
    else:
        assert fast == slow  # the same error, with its file and line
    assert fast_warnings == slow_warnings


def score_text(value: float, style: int) -> str:
    if style == 0:
        return repr(value)
    if style == 1:
        return f"{value:.6f}"
    if style == 2:
        return f"{value:e}"
    return f"+{value}" if value >= 0 else str(value)


def write_run(path: Path, run_frame, rnd: random.Random, *, messy: bool,  # type: ignore[no-untyped-def]
              extra: bool = False) -> None:
    """Write a TREC run grouped by query, lines shuffled within each query; ``messy`` adds comments,
    blank lines, tabs and CRLF, ``extra`` columns after the tag, all of which the scanner takes as the readers
    do (extra columns with ``extra_columns="ignore"``)."""
    lines: list[str] = []
    rows = run_frame.rows(named=True)
    queries: dict[str, list[dict]] = {}  # type: ignore[type-arg]
    for row in rows:
        queries.setdefault(row["query_id"], []).append(row)
    for qid, qrows in queries.items():
        rnd.shuffle(qrows)
        for i, row in enumerate(qrows):
            score = row["score"] if row["score"] is not None else float(len(qrows) - i)
            rank = row["rank"] if row["rank"] is not None else i + 1
            sep = rnd.choice([" ", "\t", "  "]) if messy else " "
            fields = [qid, "Q0", row["doc_id"], str(rank), score_text(score, rnd.randrange(4)), "tag"]
            line = sep.join(fields)
            if extra and rnd.random() < 0.2:
                line += " extra column"
            if messy and rnd.random() < 0.1:
                lines.append("# a comment")
            if messy and rnd.random() < 0.1:
                lines.append("   ")
            lines.append(line + ("\r" if messy and rnd.random() < 0.3 else ""))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.slow
@needs_native
@settings(max_examples=150, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
@given(data=gst.judgments_and_runs(max_docs=14), policies=gst.policies(ties=st.sampled_from(("trec_eval", "rank"))),
       seed=st.integers(0, 2**16), messy=st.booleans(), extra=st.booleans(), parts=st.integers(1, 4))
def test_scanner_equals_readers(tmp_path: Path, data, policies: Policies, seed: int, messy: bool,  # type: ignore[no-untyped-def]
                                extra: bool, parts: int) -> None:
    judgments, run = data
    path = tmp_path / f"run-{seed}.txt"
    write_run(path, run.frame, random.Random(seed), messy=messy, extra=extra)
    prepared = PreparedJudgments.of(judgments, policies.negative_grades)
    read = {"extra_columns": "ignore"} if extra else {}
    scanned = scan_trec_run(prepared, path, policies, parts=parts, **read)
    assert not isinstance(scanned, str), scanned  # a plain file (UTF-8 ids included): the scanner takes it
    (fast, fast_warnings), (slow, slow_warnings) = both(prepared, path, policies, **read)
    assert isinstance(fast, JudgedRun) and isinstance(slow, JudgedRun), (fast, slow)
    assert_same(fast, slow)
    assert fast_warnings == slow_warnings


def _prepared(**grades: dict[str, int]) -> PreparedJudgments:
    return PreparedJudgments.of(Judgments.from_dict(grades))


PREPARED = {"q1": {"d1": 2, "d2": 0, "d3": 1, "d4": -1}, "q2": {"d1": 1, "d5": 3}}
GOOD = ["q1 Q0 d1 1 3.5 tag", "q1 Q0 d2 2 3.5 tag", "q1 Q0 d9 3 1 tag", "q2 Q0 d5 1 2 tag"]

UNUSUAL = {
    "duplicate doc": [*GOOD, "q2 Q0 d5 2 1 tag"],
    "five columns": ["q1 Q0 d1 1 3.5", *GOOD[1:]],
    "NaN score": ["q1 Q0 d1 1 nan tag", *GOOD[1:]],
    "infinite score": ["q1 Q0 d1 1 inf tag", *GOOD[1:]],
    "overflowing score": ["q1 Q0 d1 1 1e999 tag", *GOOD[1:]],
    "decimal comma": ["q1 Q0 d1 1 3,5 tag", *GOOD[1:]],
    "rank not an integer": ["q1 Q0 d1 1.0 3.5 tag", *GOOD[1:]],
    "bytes that are not UTF-8": ["q1 Q0 d\udce9 1 3.5 tag", *GOOD[1:]],
    "a C1 control character": ["q1 Q0 d\u0085 1 3.5 tag", *GOOD[1:]],
    "an id NFC would change, with normalize_ids=NFC": ["q1 Q0 de\u0301 1 3.5 tag", *GOOD[1:]],
    "tags differ": [*GOOD[:3], "q2 Q0 d5 1 2 other"],
    "query lines apart": [GOOD[0], GOOD[3], GOOD[1]],
    "header row": ["qid Q0 docno rank score tag", *GOOD],
    "only comments": ["# nothing here"],
    "qrels given as a run": ["q1 0 d1 1", "q1 0 d2 0"],
    "seven columns": [*GOOD[:2], "q1 Q0 d9 3 1 tag more"],
    "lines ended by CR alone": ["\r".join(GOOD)],
    "a CR, a space, then data": [GOOD[0], "q1 Q0 d2 2\r 3.5 tag", *GOOD[2:]],
    "a CR in a comment, then data": ["# note\rq1 Q0 d7 1 1 tag", *GOOD],
    "a NUL in a doc id": [GOOD[0], "q1 Q0 d\x002 2 3.5 tag", *GOOD[2:]],
    "a control character in a tag": [*GOOD[:3], "q2 Q0 d5 1 2 ta\x07g"],
    "DEL in a query id": ["q\x7f1 Q0 d1 1 3.5 tag", *GOOD[1:]],
    "a line over 1 MiB": [GOOD[0], "q1 Q0 d2 2 3.5 tag" + " " * (1 << 20), *GOOD[2:]],
    "a comment over 1 MiB": ["#" * ((1 << 20) + 1), *GOOD],
}


PLAIN_ENOUGH = {"a CR in trailing whitespace": [GOOD[0] + " \r \r", *GOOD[1:]],
                "a comment of exactly 1 MiB": ["#" * (1 << 20), *GOOD],
                "a non-ASCII doc id": ["q1 Q0 dé 1 3.5 tag", *GOOD[1:]],
                "a non-ASCII id on the last line only": [*GOOD, "q2 Q0 dé 2 1 tag"],
                "an id not in NFC (a warning)": ["q1 Q0 de\u0301 1 3.5 tag", *GOOD[1:]],
                "a byte order mark": ["\ufeff" + GOOD[0], *GOOD[1:]]}


@needs_native
@pytest.mark.parametrize("case", sorted(UNUSUAL) + sorted(PLAIN_ENOUGH))
def test_unusual_files_go_to_the_readers_with_the_same_outcome(tmp_path: Path, case: str) -> None:
    """Files the scanner must refuse (and then give the readers' outcome), and files near its limits that it
    takes (with the readers' result)."""
    path = tmp_path / "run.txt"
    text = "\n".join(UNUSUAL.get(case) or PLAIN_ENOUGH[case]) + "\n"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    prepared = _prepared(**PREPARED)
    policies = Policies()
    read = {"normalize_ids": "NFC"} if "normalize_ids" in case else {}
    scanned = scan_trec_run(prepared, path, policies, **read)
    assert isinstance(scanned, str) == (case in UNUSUAL)  # a refusal says why
    agree(prepared, path, policies, **read)


@needs_native
def test_options_are_left_to_the_readers(tmp_path: Path) -> None:
    prepared = _prepared(**PREPARED)
    path = tmp_path / "run.txt.gz"
    path.write_bytes(gzip.compress(("\n".join(GOOD) + "\n").encode()))
    (fast, _), (slow, _) = both(prepared, path, Policies())
    assert_same(fast, slow)
    plain = tmp_path / "dup.txt"
    plain.write_text("\n".join(UNUSUAL["duplicate doc"]) + "\n", encoding="utf-8")
    (fast, _), (slow, _) = both(prepared, plain, Policies(), on_duplicate="max")
    assert isinstance(fast, JudgedRun)
    assert_same(fast, slow)


@pytest.mark.slow
@needs_native
@settings(max_examples=300, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.from_regex(r"\A[+-]?(?:[0-9]{1,25}\.?[0-9]{0,25}|\.[0-9]{1,25})(?:[eE][+-]?[0-9]{1,3})?\Z"),
                      min_size=1, max_size=30))
def test_scores_parse_exactly_as_python_floats(tmp_path: Path, texts: list[str]) -> None:
    docs = {f"d{i}": 1 for i in range(len(texts))}
    prepared = _prepared(q=docs)
    path = tmp_path / "scores.txt"
    path.write_text("".join(f"q Q0 d{i} {i + 1} {t} tag\n" for i, t in enumerate(texts)), encoding="utf-8")
    scanned = scan_trec_run(prepared, path, Policies(ties="rank"))
    values = [float(t) for t in texts]
    if not all(np.isfinite(values)):
        assert isinstance(scanned, str)  # overflow to infinity: the readers warn about it
        return
    assert not isinstance(scanned, str), scanned
    assert scanned.positions.hit_score.tolist() == values  # bit for bit, in rank order


@needs_native
def test_many_queries_cut_into_parts(tmp_path: Path) -> None:
    rnd = random.Random(5)
    judged: dict[str, dict[str, int]] = {}
    lines = []
    for q in range(400):
        qid = f"q{q:04d}"
        judged[qid] = {f"d{d}": rnd.choice([0, 1, 2, 3, 4, -1]) for d in rnd.sample(range(300), 20)}
        for rank, d in enumerate(rnd.sample(range(300), 150), start=1):
            lines.append(f"{qid} Q0 d{d} {rank} {rnd.choice([1.0, 2.0, 2.5, 3.0]) - rank / 1000:.3f} run")
    judged["q9999"] = {"d1": 1}  # judged, not ranked
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    prepared = PreparedJudgments.of(Judgments.from_dict(judged))
    for policies in (Policies(), Policies(depth=50), Policies(judged_only=True), Policies(missing_queries="skip")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            slow = build_judged_run(prepared, read_run(path), policies, sparse=True)
            for parts in (1, 2, 3, 8):
                scanned = scan_trec_run(prepared, path, policies, parts=parts)
                assert not isinstance(scanned, str), scanned
                fast, _ = judged_run_of(prepared, path, policies)
                assert_same(fast, slow)


@pytest.mark.slow
@needs_native
@settings(max_examples=200, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=gst.judgments_and_runs(max_docs=14), policies=gst.policies(ties=st.sampled_from(("trec_eval", "rank"))))
def test_in_memory_scan_equals_build(data, policies: Policies) -> None:  # type: ignore[no-untyped-def]
    judgments, run = data
    prepared = PreparedJudgments.of(judgments, policies.negative_grades)
    assert not isinstance(scan_run(prepared, run, policies), str)  # grouped, complete: the scanner takes it
    fast, fast_warnings = outcome(lambda: judged_run_of_run(prepared, run, policies))
    slow, slow_warnings = outcome(lambda: build_judged_run(prepared, run, policies, sparse=True))
    assert isinstance(fast, JudgedRun) and isinstance(slow, JudgedRun)
    assert_same(fast, slow)
    assert fast_warnings == slow_warnings


@needs_native
def test_in_memory_runs_the_scanner_cannot_take() -> None:
    prepared = _prepared(**PREPARED)
    apart = Run(pl.DataFrame({"query_id": ["q1", "q2", "q1"], "doc_id": ["d1", "d5", "d2"],
                              "score": [3.0, 2.0, 1.0]}))
    unranked = Run(pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "rank": [1, None]}))
    for run, reason in ((apart, "not all together"), (unranked, "missing ranks")):
        scanned = scan_run(prepared, run, Policies())
        assert isinstance(scanned, str) and reason in scanned
        fast, fast_warnings = outcome(lambda: judged_run_of_run(prepared, run, Policies()))  # noqa: B023
        slow, slow_warnings = outcome(lambda: build_judged_run(prepared, run, Policies(), sparse=True))  # noqa: B023
        assert_same(fast, slow)
        assert fast_warnings == slow_warnings


# ---------------------------------------------------------------------- edge cases found in review
@needs_native
def test_long_scores_are_read_in_the_c_locale_whatever_the_users_locale(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import locale
    import shutil
    import subprocess

    # a locale whose decimal separator is a comma, compiled here (glibc reads LOCPATH at setlocale)
    if not shutil.which("localedef") or not Path("/usr/share/i18n/locales/de_DE").exists():
        pytest.skip("no localedef or no de_DE locale source on this machine")
    subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", str(tmp_path / "de_DE.UTF-8")], check=False,
                   capture_output=True)
    monkeypatch.setenv("LOCPATH", str(tmp_path))
    prepared = _prepared(q={"d": 1})
    path = tmp_path / "run.txt"
    path.write_text("q Q0 d 1 0.12345678901234567890123 tag\n", encoding="utf-8")
    before = locale.setlocale(locale.LC_NUMERIC)
    try:
        locale.setlocale(locale.LC_NUMERIC, "de_DE.UTF-8")
        assert locale.localeconv()["decimal_point"] == ","
        scanned = scan_trec_run(prepared, path, Policies())
    finally:
        locale.setlocale(locale.LC_NUMERIC, before)
    assert not isinstance(scanned, str)
    assert scanned.positions.hit_score.tolist() == [float("0.12345678901234567890123")]


@needs_native
def test_depth_beyond_int64_name_and_options_as_the_readers(tmp_path: Path) -> None:
    prepared = _prepared(**PREPARED)
    path = tmp_path / "run.txt"
    path.write_text("\n".join(GOOD) + "\n", encoding="utf-8")
    (fast, _), (slow, _) = both(prepared, path, Policies(depth=10**20))
    assert_same(fast, slow)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tie in GOOD
        fast_run, _ = judged_run_of(prepared, path, Policies(), name="")
    assert fast_run.run_name == read_run(path, name="").name == "run"
    with pytest.raises(TypeError, match="on_duplicte"):
        judged_run_of(prepared, path, Policies(), on_duplicte="first")
    fast_error, _ = outcome(lambda: judged_run_of(prepared, path, Policies(), on_duplicate="bogus"))
    slow_error, _ = outcome(lambda: read_run(path, on_duplicate="bogus"))
    assert fast_error == slow_error


@needs_native
def test_ranks_beyond_float_precision_warn_alike(tmp_path: Path) -> None:
    prepared = _prepared(q={"a": 1, "b": 0})
    path = tmp_path / "run.txt"
    path.write_text("q Q0 a 9007199254740993 2 t\nq Q0 b 9007199254740992 1 t\n", encoding="utf-8")
    (fast, fast_warnings), (slow, slow_warnings) = both(prepared, path, Policies())
    assert_same(fast, slow)
    assert fast_warnings == slow_warnings
    assert any("contradicts the scores" in w for w in fast_warnings)


@needs_native
def test_one_huge_query_is_not_cut_and_the_search_stays_linear(tmp_path: Path) -> None:
    import time

    from gainscope.io.scan import _parts

    path = tmp_path / "run.txt"
    with open(path, "w") as f:
        for i in range(400_000):  # about 9 MB, one query
            f.write(f"q Q0 d{i} {i + 1} {1e6 - i} t\n")
    started = time.perf_counter()
    assert _parts(str(path), path.stat().st_size, 4) == [(0, path.stat().st_size)]
    assert time.perf_counter() - started < 5  # each line parsed once (it was quadratic)


@needs_native
def test_float32_scores_in_the_scanner_as_in_the_readers(tmp_path: Path) -> None:
    """score_precision='float32' (trec_eval 9, pytrec_eval): 1.00000001 and 1.0 tie, ordered by doc id."""
    prepared = _prepared(q={"a": 1, "b": 0, "c": 2})
    path = tmp_path / "run.txt"
    path.write_text("q Q0 a 1 1.00000001 t\nq Q0 b 2 1.0 t\nq Q0 c 3 1e39 t\n", encoding="utf-8")
    for precision in ("float64", "float32"):
        policies = Policies(score_precision=precision)
        (fast, fast_warnings), (slow, slow_warnings) = both(prepared, path, policies)
        assert_same(fast, slow)
        assert fast_warnings == slow_warnings
        memory = outcome(lambda: judged_run_of_run(prepared, read_run(path), policies))[0]  # noqa: B023
        assert_same(memory, slow)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tie, announced
        order32 = judged_run_of(prepared, path, Policies(score_precision="float32"))[0]
        order64 = judged_run_of(prepared, path, Policies())[0]
    assert order64.scores.tolist() == [1e39, 1.00000001, 1.0]
    assert order64.grades.tolist() == [2, 1, 0]  # c, a, b
    assert order32.scores.tolist() == [float("inf"), 1.0, 1.0]  # 1e39 is beyond float32: inf, as a C float
    assert order32.grades.tolist() == [2, 0, 1]  # c, then the tie by doc id descending: b, a


# ------------------------------------------------------------------ compressed runs (gzip, zstd)
# Compressed runs take the scanner's path, decompressed in blocks and cut into pieces at query boundaries, and give
# exactly what their plain twin gives, and what the Python readers give for the compressed file itself -- warnings
# and errors (damaged data) included.

zstandard = pytest.importorskip("zstandard")


def compress(data: bytes, kind: str, members: int) -> bytes:
    """``data`` compressed as ``members`` gzip members or zstd frames one after another (cut anywhere, even
    inside a line: the members join into one content)."""
    cuts = sorted({0, len(data), *(len(data) * k // members for k in range(1, members))})
    pieces = [data[a:b] for a, b in itertools.pairwise(cuts)] or [b""]
    if kind == "gzip":
        return b"".join(gzip.compress(p, mtime=0) for p in pieces)
    return b"".join(zstandard.ZstdCompressor().compress(p) for p in pieces)


@needs_native
@settings(max_examples=80, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
@given(data=gst.judgments_and_runs(max_docs=14), policies=gst.policies(ties=st.sampled_from(("trec_eval", "rank"))),
       seed=st.integers(0, 2**16), messy=st.booleans(), kind=st.sampled_from(("gzip", "zstd")),
       members=st.integers(1, 3), chunk=st.sampled_from((64, 200, 1 << 20)), headroom=st.sampled_from((16, 1 << 20)),
       zlib_only=st.booleans())
def test_compressed_run_equals_its_plain_twin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data,  # type: ignore[no-untyped-def]
                                              policies: Policies, seed: int, messy: bool, kind: str, members: int,
                                              chunk: int, headroom: int, zlib_only: bool) -> None:
    judgments, run = data
    plain = tmp_path / f"run-{seed}.txt"
    write_run(plain, run.frame, random.Random(seed), messy=messy)
    packed = tmp_path / f"run-{seed}.txt.{'gz' if kind == 'gzip' else 'zst'}"
    packed.write_bytes(compress(plain.read_bytes(), kind, members))
    monkeypatch.setattr(scan_stream, "CHUNK_BYTES", chunk)  # small pieces: queries cut by chunks, many pieces
    monkeypatch.setattr(scan_stream, "HEADROOM", headroom)  # 16: the carried lines joined with the next chunk
    if zlib_only:  # ISA-L is an optional extra: zlib alone must give the same
        monkeypatch.setattr(compressed, "_isal", lambda: None)
    prepared = PreparedJudgments.of(judgments, policies.negative_grades)
    scanned = scan_trec_run(prepared, TextFile(packed), policies)
    assert not isinstance(scanned, str), scanned  # the scanner takes it: no fallback
    (fast, fast_warnings), (slow, slow_warnings) = both(prepared, packed, policies)
    (twin, twin_warnings), _ = both(prepared, plain, policies)
    assert isinstance(fast, JudgedRun) and isinstance(slow, JudgedRun), (fast, slow)
    assert_same(fast, slow)
    assert_same(fast, twin)
    assert fast_warnings == slow_warnings == [w.replace(plain.name, packed.name) for w in twin_warnings]


@given(lines=st.lists(st.tuples(st.sampled_from(("q1", "q2", "q3", "#", "")), st.integers(0, 30)), max_size=40),
       block=st.integers(1, 50), headroom=st.integers(0, 40))
@settings(max_examples=300, derandomize=True, database=None, deadline=None)
def test_pieces_are_whole_queries_and_join_into_the_content(lines: list[tuple[str, int]], block: int,
                                                            headroom: int) -> None:
    """query_pieces: the pieces join into the content (BOM dropped), no query's lines span two pieces unless the
    query was already split in the content itself, and every chunk's buffer is given back once: by query_pieces,
    or with the piece that ends in it."""
    text = "".join(f"{q} Q0 {'d' * n} 1 1 t\n" if q not in ("#", "") else " " * n + "\n" if q == "" else f"#{'c' * n}\n"
                   for q, n in lines)  # data lines, blank lines, comments
    data = b"\xef\xbb\xbf" + text.encode()
    chunks = [(bytearray(headroom) + data[i:i + block], len(data[i:i + block])) for i in range(0, len(data), block)]
    buffers = Buffers(0)
    cut = list(query_pieces(chunks, buffers, headroom))
    assert all(not isinstance(p, str) for p in cut)
    pieces = [bytes(d[start:end]) for d, start, end, _ in cut]  # type: ignore[misc]
    assert b"".join(pieces) == text.encode()
    given_back = [buffers.take(0) for _ in range(buffers._free.qsize())] + [c for *_, c in cut if c is not None]  # type: ignore[misc]
    assert sorted(map(id, given_back)) == sorted(id(b) for b, _ in chunks)
    runs = [q for q, _ in lines if q not in ("#", "")]
    split_in_content = {q for q in runs if len([g for g in _groups(runs) if g == q]) > 1}
    seen: dict[str, int] = {}
    for i, piece in enumerate(pieces):
        for line in piece.decode().splitlines():
            q = line.split(" ", 1)[0]
            if q.startswith("#") or not q:
                continue
            if q in seen and seen[q] != i:
                assert q in split_in_content, (q, pieces)
            seen[q] = i


def _groups(ids: list[str]) -> list[str]:
    return [q for i, q in enumerate(ids) if i == 0 or ids[i - 1] != q]


def _damaged() -> dict[str, bytes]:
    body = ("\n".join(GOOD * 50) + "\n").encode()
    good = gzip.compress(body, mtime=0)
    bad_crc = good[:-8] + bytes([good[-8] ^ 1]) + good[-7:]
    deflate = bytearray(good)
    deflate[20] ^= 0xFF
    frame = zstandard.ZstdCompressor(write_checksum=True).compress(body)
    return {"truncated gzip": good[: len(good) // 2], "bad CRC": bad_crc, "corrupt deflate": bytes(deflate),
            "bad length": good[:-4] + b"\0\0\0\0", "truncated zstd": frame[: len(frame) // 2],
            "corrupt zstd": frame[:20] + bytes(b ^ 0x55 for b in frame[20:40]) + frame[40:]}


@pytest.mark.parametrize("zlib_only", [False, True])
@pytest.mark.parametrize("size", [1, 4096, 1 << 22])
def test_gzip_is_inflated_as_pythons_gzip_inflates_it(monkeypatch: pytest.MonkeyPatch, size: int,
                                                      zlib_only: bool) -> None:
    """Members, zero padding and output cut into blocks of ``size``: the content of gzip.decompress, with zlib as
    with ISA-L. (Regression: with zlib alone, a stream whose end came in a call cut at ``size`` had its trailer
    read twice, and a sound file was called corrupt.)"""
    import io

    if zlib_only:
        monkeypatch.setattr(compressed, "_isal", lambda: None)
    body = b"".join(f"q{i} Q0 d{j} {j + 1} {100 - j} t\n".encode() for i in range(300) for j in range(50))
    for blob in (gzip.compress(body), gzip.compress(body[:1000]) + gzip.compress(body[1000:]),
                 gzip.compress(body) + b"\0\0" + gzip.compress(b"")):
        assert b"".join(compressed.decompressed(io.BytesIO(blob), "gzip", size)) == gzip.decompress(blob) == body


@needs_native
@pytest.mark.parametrize("zlib_only", [False, True])
@pytest.mark.parametrize("case", list(_damaged()))
def test_damaged_compressed_runs_give_the_readers_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str,
                                                        zlib_only: bool) -> None:
    if zlib_only:
        monkeypatch.setattr(compressed, "_isal", lambda: None)
    path = tmp_path / "run.txt.gz"
    path.write_bytes(_damaged()[case])
    prepared = _prepared(**PREPARED)
    (fast, fast_warnings), (slow, slow_warnings) = both(prepared, path, Policies())
    assert isinstance(fast, tuple) and fast == slow, (fast, slow)  # (error type, message), the same
    assert fast_warnings == slow_warnings
    assert "run.txt.gz" in fast[1]


@needs_native
@pytest.mark.parametrize("kind", ["gzip", "zstd"])
@pytest.mark.parametrize("where", [3, 250, 499])
def test_a_refused_piece_hands_the_compressed_run_to_the_readers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 kind: str, where: int) -> None:
    """A line the scanner refuses in one piece of many (a duplicate in query ``where`` of 500): the rest need not be
    decompressed, and the user gets the readers' error, as for the plain file."""
    lines = [f"q{q} Q0 d{d} {d + 1} {50 - d} tag" for q in range(500) for d in range(20)]
    lines.insert(where * 20 + 5, f"q{where} Q0 d3 99 0.5 tag")
    plain = tmp_path / "run.txt"
    plain.write_text("\n".join(lines) + "\n")
    packed = tmp_path / f"run.txt.{'gz' if kind == 'gzip' else 'zst'}"
    packed.write_bytes(compress(plain.read_bytes(), kind, 3))
    monkeypatch.setattr(scan_stream, "CHUNK_BYTES", 4096)  # about 60 pieces
    prepared = _prepared(q3={"d1": 1}, q250={"d2": 1})
    assert isinstance(scan_trec_run(prepared, TextFile(packed), Policies()), str)  # refused
    (fast, fast_warnings), (slow, slow_warnings) = both(prepared, packed, Policies())
    (twin, _), _ = both(prepared, plain, Policies())
    assert isinstance(fast, tuple) and fast == slow, (fast, slow)
    assert fast[1] == twin[1].replace(str(plain), str(packed)) and f"q{where}" in fast[1]
    assert fast_warnings == slow_warnings


@needs_native
def test_a_gzip_run_through_a_file_object(tmp_path: Path) -> None:
    prepared = _prepared(**PREPARED)
    path = tmp_path / "run.txt.gz"
    path.write_bytes(gzip.compress(("\n".join(GOOD) + "\n").encode()))
    with open(path, "rb") as f:
        fast = outcome(lambda: judged_run_of(prepared, f, Policies())[0])
    (slow, _), _ = both(prepared, path, Policies())
    assert isinstance(fast[0], JudgedRun)
    assert_same(fast[0], slow)


# ------------------------------------------------------------------ UTF-8 ids
# Any Unicode id the readers take, the scanner takes with the readers' warnings (ids not in NFC); under
# normalize_ids="NFC" an id NFC changes sends the file to the readers.

_ID_TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp"), blacklist_characters="#\ufeff"),
                   min_size=1, max_size=4)


@needs_native
@settings(max_examples=150, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(queries=st.lists(_ID_TEXT, min_size=1, max_size=3, unique=True), docs=st.lists(_ID_TEXT, min_size=1, max_size=6,
                                                                                       unique=True),
       nfc=st.booleans())
def test_unicode_ids_give_the_readers_warnings(tmp_path: Path, queries: list[str], docs: list[str],
                                               nfc: bool) -> None:
    from gainscope.io import read_judgments

    lines = [f"{q} Q0 {d} {r + 1} {len(docs) - r} t" for q in queries for r, d in enumerate(docs)]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    read = {"normalize_ids": "NFC"} if nfc else {}
    judged = outcome(lambda: read_judgments(Judgments.from_dict({q: {d: i % 3 for i, d in enumerate(docs[:3])}
                                                                 for q in queries}), **read))
    assert not isinstance(judged[0], tuple), judged
    prepared = PreparedJudgments.of(judged[0])
    (fast, fast_warnings), (slow, slow_warnings) = both(prepared, path, Policies(), format="trec", **read)
    assert isinstance(fast, JudgedRun) and isinstance(slow, JudgedRun), (fast, slow)
    assert_same(fast, slow)
    assert fast_warnings == slow_warnings


# ------------------------------------------------------------------ DataFrames and Parquet
# A polars or pandas DataFrame, or a Parquet file, is scanned before the readers' checks (the scanner does them):
# what it takes gives the judged run of read_run + build_judged_run, and anything else goes to the readers, so
# every error and warning is theirs.

def _table_problem(frame: pl.DataFrame, problem: str) -> pl.DataFrame:
    """``frame`` (query_id, doc_id, score, rank) with one thing the readers refuse or warn about."""
    first = frame.head(1)
    if problem == "duplicate":
        return pl.concat([frame, first])
    if problem in ("nan", "inf", "-inf"):
        return frame.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(float(problem))
                                  .otherwise(pl.col("score")).alias("score"))
    if problem in ("", "d\x07", "d\u0085", None, "de\u0301"):
        return frame.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.lit(problem, pl.String))
                                  .otherwise(pl.col("doc_id")).alias("doc_id"))
    if problem == "rows apart":
        return pl.concat([frame, first.with_columns(pl.lit("fresh-doc").alias("doc_id"))])
    if problem == "float ranks":
        return frame.with_columns(pl.col("rank").cast(pl.Float64))
    if problem == "int ids":
        return frame.with_columns(pl.col("query_id").str.len_bytes().cast(pl.Int64))
    if problem == "string scores":
        return frame.with_columns(pl.col("score").cast(pl.String))
    if problem == "aliases":
        return frame.rename({"query_id": "qid", "doc_id": "docno"})
    return frame


TABLE_KINDS = ("polars", "pandas", "pandas-object", "pandas-pyarrow", "arrow", "arrow-batch", "parquet",
               "polars-categorical", "pandas-category", "arrow-dictionary", "parquet-dictionary")
_ID_NAMES = ("query_id", "doc_id", "qid", "docno")


def table_source(frame: pl.DataFrame, kind: str, tmp_path: Path) -> object:
    """``frame`` as a source of ``kind``: a polars frame, a pandas DataFrame (its default strings, object strings,
    or ``dtype_backend="pyarrow"``), a pyarrow Table or RecordBatch, or a Parquet file; or, with string ids held as
    codes, a polars frame of ``Categorical`` ids, a pandas one of ``category`` ids, a pyarrow Table of
    dictionary-encoded ids or a Parquet file of them."""
    ids = [c for c in frame.columns if c in _ID_NAMES and frame.schema[c] == pl.String]
    if kind == "polars-categorical":
        return frame.with_columns(pl.col(c).cast(pl.Categorical) for c in ids)
    if kind == "pandas-category":
        df = frame.to_pandas()
        return df.astype({c: "category" for c in ids})
    if kind in ("arrow-dictionary", "parquet-dictionary"):
        import pyarrow.compute as pc

        table = frame.to_arrow()
        for c in ids:
            table = table.set_column(table.schema.get_field_index(c), c, pc.dictionary_encode(table.column(c)))
        if kind == "arrow-dictionary":
            return table
        import pyarrow.parquet as pq

        path = tmp_path / "run.parquet"
        pq.write_table(table, path, row_group_size=3)
        return path
    if kind == "pandas":
        return frame.to_pandas()
    if kind == "pandas-object":
        df = frame.to_pandas()
        return df.astype({c: object for c in df.columns if frame.schema[c] == pl.String})
    if kind == "pandas-pyarrow":
        return frame.to_pandas(use_pyarrow_extension_array=True)
    if kind == "arrow":
        return frame.to_arrow()
    if kind == "arrow-batch":
        batches = frame.to_arrow().to_batches()
        return batches[0] if len(batches) == 1 else frame.to_arrow()
    if kind == "parquet":
        path = tmp_path / "run.parquet"
        frame.write_parquet(path, row_group_size=3)
        return path
    return frame


PROBLEMS = (None, "duplicate", "nan", "inf", "-inf", "", "d\x07", "d\u0085", "null id", "de\u0301", "rows apart",
            "float ranks", "int ids", "string scores", "aliases")


@needs_native
@settings(max_examples=200, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=gst.judgments_and_runs(max_docs=14), policies=gst.policies(ties=st.sampled_from(("trec_eval", "rank"))),
       problem=st.sampled_from(PROBLEMS), kind=st.sampled_from(TABLE_KINDS),
       columns=st.sampled_from(("both", "score", "rank")), nfc=st.booleans(), piece=st.integers(1, 4))
def test_tables_equal_the_readers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data, policies: Policies,  # type: ignore[no-untyped-def]
                                  problem: str | None, kind: str, columns: str, nfc: bool, piece: int) -> None:
    monkeypatch.setattr(arrow_tables, "PIECE_ROWS", piece)  # Arrow tables cut into pieces of whole queries
    judgments, run = data
    frame = run.frame
    if columns != "both" or frame["score"].null_count() or frame["rank"].null_count():
        keep = "rank" if columns == "rank" or frame["score"].null_count() else "score"
        frame = frame.drop("score" if keep == "rank" else "rank")
    needs = {"nan": "score", "inf": "score", "-inf": "score", "string scores": "score", "float ranks": "rank"}
    if problem is not None and needs.get(problem, "doc_id") in frame.columns:
        frame = _table_problem(frame, None if problem == "null id" else problem)
    source = table_source(frame, kind, tmp_path)
    prepared = PreparedJudgments.of(judgments, policies.negative_grades)
    read = {"normalize_ids": "NFC"} if nfc else {}
    fast, fast_warnings = outcome(lambda: judged_run_of(prepared, source, policies, **read))
    slow, slow_warnings = outcome(lambda: (build_judged_run(prepared, (r := read_run(source, **read)), policies,
                                                            sparse=True), tuple(r.notes)))
    assert fast_warnings == slow_warnings
    if isinstance(slow, tuple) and isinstance(slow[0], JudgedRun):
        assert isinstance(fast, tuple) and isinstance(fast[0], JudgedRun), fast
        assert_same(fast[0], slow[0])
        assert fast[1] == slow[1]  # the notes
    else:
        assert fast == slow  # the readers' error


@needs_native
@pytest.mark.parametrize("piece", [1, 2, 3, 4, 1000])
def test_a_plain_table_takes_the_scanner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, piece: int) -> None:
    """No readers' checks for a plain table of any kind: the scanner does them (finish_run is never called), and
    tables cut into pieces of ``piece`` rows are cut between queries, never inside one (both queries span pieces)."""
    from gainscope.io import frames

    prepared = _prepared(**PREPARED)
    frame = pl.DataFrame({"query_id": ["q1", "q1", "q1", "q1", "q2", "q2", "q2"],
                          "doc_id": ["d1", "d\u00e9", "d2", "d4", "d5", "d1", "d2"],
                          "score": [4.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0], "rank": [1, 2, 3, 4, 1, 2, 3]})
    reference = build_judged_run(prepared, read_run(frame), Policies(), sparse=True)

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("finish_run called")

    monkeypatch.setattr(frames, "finish_run", never)
    import gainscope.io as gio

    monkeypatch.setattr(gio, "finish_run", never)
    monkeypatch.setattr(arrow_tables, "PIECE_ROWS", piece)
    sources = [table_source(frame, kind, tmp_path) for kind in TABLE_KINDS] + [frame.lazy()]
    for source in sources:
        jr, notes = judged_run_of(prepared, source, Policies())
        assert list(jr.query_ids) == ["q1", "q2"] and notes == (), source
        assert_same(jr, reference)
