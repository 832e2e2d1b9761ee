"""Files a hostile or unlucky user gives the readers (issue 13): each ends with the right result or a clear
gainscope error naming the file (and line), never a silent guess, a traceback, a crash or a hang.

Every test runs with the careful parser alone and with the fast reader tried first (``parser`` fixture); the
C scanner must hand such files to the readers and then give exactly their outcome (``scanned``).
"""

from __future__ import annotations

import gzip
import io
import os
import re
import resource
import subprocess
import sys
import warnings
import zlib
from pathlib import Path

import pytest
from tests.helpers import write

from gainscope.core.judged_run import PreparedJudgments, build_judged_run
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.errors import FileAccessError, FormatError, GainscopeError, spell
from gainscope.io import read_judgments, read_run, trec
from gainscope.io.scan import judged_run_of, native_available, scan_trec_run
from gainscope.io.text import MAX_LINE_BYTES, TextFile


@pytest.fixture(params=["careful", "fast-first"], autouse=True)
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(trec, "FAST_MIN_BYTES", 0 if request.param == "fast-first" else 10**18)
    return str(request.param)


PREPARED = PreparedJudgments.of(Judgments.from_dict({"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}))


def scanned(path: Path, **read: object) -> tuple[str, str]:
    """The error the evaluation path (C scanner, then the readers) gives: its type and message."""
    with pytest.raises(GainscopeError) as info:
        judged_run_of(PREPARED, path, Policies(), **read)
    return type(info.value).__name__, str(info.value)


def refused(reader, path: Path, **read: object) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    with pytest.raises(GainscopeError) as info:
        reader(path, **read)
    return type(info.value).__name__, str(info.value)


# ---------------------------------------------------------------------- item 3: line ends, column counts
LONE_CR = ("a carriage return (\\r) followed by more data on the same line: lines must end with \\n (or \\r\\n); "
           "if the file's lines end with \\r alone (old Mac line ends), convert them to \\n")


def test_cr_only_line_ends_are_refused_not_read_as_one_line(tmp_path: Path) -> None:
    # read as one line, the first six tokens were kept and the rest dropped: one document instead of three
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\rq1 Q0 d2 2 2.0 r\rq2 Q0 d1 1 1.0 r\r")
    error = ("FormatError", f"{path}:1: {LONE_CR}")
    assert refused(read_run, path) == error
    assert refused(read_run, path, extra_columns="ignore") == error
    assert scanned(path) == error
    qrels = write(tmp_path, "qrels.txt", "q1 0 d1 1\rq1 0 d2 0\r")
    assert refused(read_judgments, qrels) == ("FormatError", f"{qrels}:1: {LONE_CR}")


def test_a_lone_cr_inside_a_comment_is_refused_too(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "# made on a Mac\rq1 Q0 d1 1 3.0 r\r")  # else the whole file is a comment
    assert refused(read_run, path) == ("FormatError", f"{path}:1: {LONE_CR}")
    assert scanned(path) == ("FormatError", f"{path}:1: {LONE_CR}")


def test_crlf_and_trailing_carriage_returns_stay_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\r\nq1 Q0 d2 2 2.0 r \r \r\nq2 Q0 d1 1 1.0 r\r")
    assert len(read_run(path)) == 3
    jr, _ = judged_run_of(PREPARED, path, Policies())
    assert jr.num_ret.tolist() == [2, 1]


def test_more_columns_than_the_format_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\nq1 Q0 d 2 2 2.0 r\n")  # an id with a space
    message = (f"{path}:2: expected 6 whitespace-separated columns (query_id Q0 doc_id rank score run_tag); got 7: "
               "'q1 Q0 d 2 2 2.0 r'; remove the columns after the 6th (an id with a space in it, or two lines run "
               "together?), or, if they are notes after the run tag (trec_eval ignores them), read with "
               "extra_columns='ignore'")
    assert refused(read_run, path) == ("FormatError", message)
    assert scanned(path) == ("FormatError", message)
    qrels = write(tmp_path, "qrels.txt", "q1 0 d1 1 extra\n")
    assert refused(read_judgments, qrels)[1] == (
        f"{qrels}:1: expected 4 whitespace-separated columns (query_id iteration doc_id relevance); got 5: "
        "'q1 0 d1 1 extra'; remove the columns after the 4th (an id with a space in it, or two lines run together?)")


def test_extra_columns_ignored_on_request_by_readers_and_scanner(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r notes here\nq1 Q0 d2 2 2.0 r\nq2 Q0 d1 1 1.0 r x\n")
    assert read_run(path, extra_columns="ignore").frame.rows() == [
        ("q1", "d1", 3.0, 1), ("q1", "d2", 2.0, 2), ("q2", "d1", 1.0, 1)]
    if native_available():
        assert not isinstance(scan_trec_run(PREPARED, path, Policies(), extra_columns="ignore"), str)
    jr, _ = judged_run_of(PREPARED, path, Policies(), extra_columns="ignore")
    assert jr.num_ret.tolist() == [2, 1]


# ---------------------------------------------------------------------- item 4: control characters in ids
@pytest.mark.parametrize(("doc", "code"), [("d\x001", "U+0000"), ("d\x7f1", "U+007F"), ("d\x0e1", "U+000E"),
                                           ("d\u00851", "U+0085"), ("d\u009b1", "U+009B")])
def test_control_characters_in_ids_are_errors_with_file_and_line(tmp_path: Path, doc: str, code: str) -> None:
    path = write(tmp_path, "run.txt", f"q1 Q0 d2 1 3.0 r\nq1 Q0 {doc} 2 2.0 r\n")
    message = (f"{path}:2: a control character ({code}) in the doc id {doc!r}; ids must be text without control "
               "characters: is the file binary or damaged?")
    assert refused(read_run, path) == ("FormatError", message)
    assert scanned(path) == ("FormatError", message)
    qrels = write(tmp_path, "qrels.txt", f"q{doc} 0 d1 1\n")
    assert refused(read_judgments, qrels)[1] == (
        f"{qrels}:1: a control character ({code}) in the query id {'q' + doc!r}; ids must be text without control "
        "characters: is the file binary or damaged?")


def test_control_characters_in_run_tags_and_other_sources(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\x01\n")
    assert refused(read_run, path)[1] == (
        f"{path}:1: a control character (U+0001) in the run tag 'r\\x01' (query 'q1', doc 'd1'); ids must be text "
        "without control characters: is the file binary or damaged?")
    jsonl = write(tmp_path, "run.jsonl", '{"query_id": "q1", "doc_id": "a\\u0000b", "score": 1}\n')
    assert refused(read_run, jsonl)[1].startswith(f"{jsonl}:1: a control character (U+0000) in the doc id 'a\\x00b'")
    with pytest.raises(FormatError, match=re.escape("a control character (U+0009) in the query id 'q\\t1'")):
        read_judgments({"q\t1": {"d": 1}})


# ---------------------------------------------------------------------- item 12: a file that changes while read
@pytest.mark.skipif(not native_available(), reason="the C scanner is not built")
def test_a_file_truncated_while_the_scanner_reads_it_is_an_error_not_sigbus(tmp_path: Path) -> None:
    from gainscope import _scan
    from gainscope.io.scan import _index

    path = tmp_path / "run.txt"
    lines = "".join(f"q{q:05d} Q0 d{d} {d + 1} {100 - d} r\n" for q in range(3000) for d in range(50))
    path.write_text(lines)  # about 4.5 MB: more than one 4 MB read
    size = path.stat().st_size
    truncated: list[int] = []

    def truncate_once(reached: int) -> None:  # fault injection: someone rewrites the file after the first read
        if not truncated:
            truncated.append(reached)
            os.truncate(path, 1000)

    result = _scan.scan_trec_run(str(path), _index(PREPARED), 0, -1, False, 0, size, on_block=truncate_once)
    assert truncated and result == {"changed": 1000}  # with the memory map of old: SIGBUS, the process killed


@pytest.mark.skipif(not native_available(), reason="the C scanner is not built")
def test_a_file_shorter_than_when_its_parts_were_cut_is_an_error(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from gainscope.io import scan

    path = write(tmp_path, "run.txt", "".join(f"q1 Q0 d{d} {d + 1} {100 - d} r\n" for d in range(2000)))
    real_parts = scan._parts

    def parts_then_shrink(name: str, size: int, count: int | None = None, start: int = 0) -> list[tuple[int, int]]:
        ranges = real_parts(name, size, count, start)
        os.truncate(name, size // 2)  # rewritten between measuring and reading
        return ranges

    monkeypatch.setattr(scan, "_parts", parts_then_shrink)
    size = path.stat().st_size
    with pytest.raises(FileAccessError, match=re.escape(f"{path} changed while it was read ({size} bytes when "
                                                        f"reading began, {size // 2} now); read it again once "
                                                        "nothing writes to it")):
        scan_trec_run(PREPARED, path, Policies())


def test_the_readers_refuse_a_file_that_changed_while_read(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\n")
    src = TextFile(path)  # its size is taken when it is opened
    path.write_text("q1 Q0 d1 1 3.0 r\n")
    with pytest.raises(FileAccessError, match="changed while it was read"):
        read_run(src)


# ---------------------------------------------------------------------- item 13: damaged gzip data
RUN = b"".join(b"q%d Q0 d%d %d %d.5 r\n" % (q, d, d, 90 - d) for q in range(40) for d in range(30))


def test_truncated_gzip(tmp_path: Path) -> None:
    data = gzip.compress(RUN)
    path = write(tmp_path, "run.txt.gz", data[: len(data) // 2])
    message = (f"{path}: the gzip data ends before the end of its compressed stream: the file is truncated; "
               "copy or download it again")
    assert refused(read_run, path) == ("FormatError", message)
    assert scanned(path) == ("FormatError", message)


def test_corrupt_deflate_data(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(RUN))
    data[30:40] = b"\xff" * 10
    path = write(tmp_path, "run.txt.gz", bytes(data))
    kind, message = refused(read_run, path)
    assert kind == "FormatError"
    assert message.startswith(f"{path}: the gzip data is corrupt (Error -3 while decompressing data: ")
    assert message.endswith("); copy or download the file again")


def test_bad_crc(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(RUN))
    data[-8] ^= 0xFF  # the CRC-32 of the trailer
    path = write(tmp_path, "qrels.gz", bytes(data))
    kind, message = refused(read_run, path)
    assert kind == "FormatError"
    assert re.fullmatch(re.escape(f"{path}: the gzip data is corrupt (CRC check failed ") + r"0x[0-9a-f]+ != "
                        r"0x[0-9a-f]+" + re.escape("); copy or download the file again"), message)
    assert zlib.crc32(RUN) != int.from_bytes(data[-8:-4], "little")


# ---------------------------------------------------------------------- item 14: not regular files, huge lines
def test_a_symlink_to_dev_zero_is_refused_before_reading(tmp_path: Path) -> None:
    link = tmp_path / "run.txt"
    link.symlink_to("/dev/zero")
    message = f"{link} is a character device, not a regular file; give the path of a file, or read standard input as -"
    assert refused(read_run, link) == ("FileAccessError", message)
    assert refused(read_judgments, link) == ("FileAccessError", message)
    assert scanned(link) == ("FileAccessError", message)


def test_a_fifo_without_a_writer_is_refused_not_waited_for(tmp_path: Path) -> None:
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)  # opening it for reading would block until someone writes
    assert refused(read_run, fifo) == ("FileAccessError", f"{fifo} is a FIFO (named pipe), not a regular file; "
                                                          "give the path of a file, or read standard input as -")


def test_missing_files_and_folders(tmp_path: Path) -> None:
    assert refused(read_run, tmp_path / "absent.txt") == ("FileAccessError",
                                                          f"no such file: {str(tmp_path / 'absent.txt')!r}")
    assert refused(read_run, tmp_path)[0] == "FileAccessError"
    assert isinstance(FileAccessError("x"), OSError)


def test_a_line_longer_than_the_limit(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", b"q1 Q0 d1 1 3.0 r\n" + b"0" * (MAX_LINE_BYTES + 1) + b"\nq1 Q0 d2 2 2 r\n")
    message = (f"{path}:2: the line is longer than 1,048,576 bytes, the limit of a line; is this a text file with "
               "one record per line?")
    assert refused(read_run, path) == ("FormatError", message)
    assert scanned(path) == ("FormatError", message)
    exact = write(tmp_path, "ok.txt", b"q1 Q0 d" + b"1" * (MAX_LINE_BYTES - 13) + b" 1 3 r\n")
    assert len(exact.read_bytes()) == MAX_LINE_BYTES + 1  # a line of exactly the limit, and its line end
    assert len(read_run(exact)) == 1


def test_a_long_line_of_carriage_returns_says_so(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", b"q1 Q0 d1 1 3.0 r\r" * 70_000)  # 1.2 MB, CR-only line ends
    assert refused(read_run, path)[1] == (
        f"{path}:1: the line is longer than 1,048,576 bytes, the limit of a line; it holds carriage returns (\\r) "
        "but no line feed: if its lines end with \\r alone (old Mac line ends), convert them to \\n")


def test_a_first_line_of_many_columns_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """The fast reader made one polars column per field of the first line: 5 GB for a million columns."""
    path = tmp_path / "run.txt"
    script = f"""
import resource, sys
from gainscope.io import read_run, trec
trec.FAST_MIN_BYTES = 0
with open({str(path)!r}, "w") as f:
    f.write("q1 Q0 d1 1 3.0 r" + " x" * 400_000 + "\\n")
    f.write("q1 Q0 d2 2 2.0 r\\n" * 500_000)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    read_run({str(path)!r})
except Exception as exc:
    print(type(exc).__name__, str(exc)[:200])
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    error, grown = done.stdout.strip().splitlines()
    assert error.startswith(f"FormatError {path}:1: expected 6 whitespace-separated columns (query_id Q0 doc_id rank "
                            "score run_tag); got 400006")
    assert int(grown) < 400  # MB above what the interpreter and polars took at start


# ---------------------------------------------------------------------- item 23: standard input
def test_dash_reads_standard_input_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(gzip.compress(b"q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\n")))
    monkeypatch.setattr(sys, "stdin", stdin)
    run = read_run("-")
    assert (run.name, run.source, len(run)) == ("r", "<stdin>", 2)
    with pytest.raises(FileAccessError, match=re.escape("standard input was already read for another input; only "
                                                        "one input can be read from it (given as -)")):
        read_run("-")


def test_binary_file_objects_and_their_names(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\nq1 Q0 d1 2 2.0 r\n")
    with open(path, "rb") as f, pytest.raises(GainscopeError, match=re.escape(f"{path}:2: duplicate doc 'd1'")):
        read_run(f)
    with pytest.raises(GainscopeError, match=re.escape("<stdin>:2: duplicate doc 'd1'")):
        read_run(io.BytesIO(path.read_bytes()))


@pytest.mark.skipif(not native_available(), reason="the C scanner is not built")
def test_standard_input_goes_through_the_scanner_with_the_readers_outcome(monkeypatch: pytest.MonkeyPatch) -> None:
    text = b"q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 3.0 r\nq2 Q0 d1 1 1.0 r\n"
    assert not isinstance(scan_trec_run(PREPARED, text, Policies()), str)
    for content in (text, text + b"q2 Q0 d1 2 0.5 r\n"):  # plain, then a duplicate: the readers' error
        with warnings.catch_warnings(record=True) as fast_warnings:
            warnings.simplefilter("always")
            try:
                fast = judged_run_of(PREPARED, io.BytesIO(content), Policies())[0].num_ret.tolist()
            except GainscopeError as exc:
                fast = str(exc)
        with warnings.catch_warnings(record=True) as slow_warnings:
            warnings.simplefilter("always")
            try:
                slow_run = build_judged_run(PREPARED, read_run(io.BytesIO(content)), Policies(), sparse=True)
                slow = slow_run.num_ret.tolist()
            except GainscopeError as exc:
                slow = str(exc)
        assert fast == slow
        assert sorted(str(w.message) for w in fast_warnings) == sorted(str(w.message) for w in slow_warnings)


# ---------------------------------------------------------------------- item 20: fixes in both spellings
@pytest.mark.parametrize(("content", "read", "python", "cli"), [
    ("q1 Q0 d1 1 1 r\nq1 Q0 d1 2 0 r\n", {}, "on_duplicate='first' or 'max'", "--on-duplicate first or max"),
    ("q1 Q0 d1 1 nan r\n", {}, "nan_score='-inf'", "--nan-score -inf"),
    ("# empty\n", {}, "allow_empty=True", "--allow-empty"),
    (b"q1 Q0 d\xe91 1 1 r\n", {}, "encoding='latin-1' or encoding='cp1252'", "--encoding latin-1 or --encoding cp1252"),
    ("q1 Q0 d1 1 1 r x\n", {}, "extra_columns='ignore'", "--extra-columns ignore"),
])
def test_one_message_two_spellings(tmp_path: Path, content: str | bytes, read: dict[str, object], python: str,
                                   cli: str) -> None:
    path = write(tmp_path, "run.txt", content)
    with pytest.raises(GainscopeError) as info:
        read_run(path, **read)  # type: ignore[arg-type]
    assert python in str(info.value) and cli not in str(info.value)
    assert cli in spell(info.value, "cli") and python not in spell(info.value, "cli")


def test_memory_use_of_the_interpreter_is_measurable() -> None:
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0  # the bounded-memory test relies on it


def test_query_and_document_texts_follow_the_same_file_rules(tmp_path: Path) -> None:
    from gainscope.io.texts import read_documents, read_queries

    with pytest.raises(FileAccessError, match=re.escape(f"no such file: {str(tmp_path / 'q.jsonl')!r}")):
        read_queries(tmp_path / "q.jsonl")
    fifo = tmp_path / "corpus.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(FileAccessError, match="is a FIFO"):  # not opened: no writer would be waited for
        read_documents(fifo)
    with pytest.raises(FileAccessError, match=re.escape("is a folder without queries.jsonl")):
        read_queries(tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_a_file_access_error(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\n")
    path.chmod(0)
    assert refused(read_run, path) == ("FileAccessError", f"cannot read {path}: Permission denied")
    assert scanned(path) == ("FileAccessError", f"cannot read {path}: Permission denied")
