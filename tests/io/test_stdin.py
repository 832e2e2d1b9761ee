"""Standard input (``-``) gives exactly what the same content gives as a file -- the judged run, the warnings, the
error with its line -- whether it comes through a pipe, from a redirected file or from an in-memory stream,
plain, gzip- or zstd-compressed, with the C scanner or without it; and it is never held whole in memory: a
redirected file is read where it is, a pipe's content is scanned as it arrives and copied to a temporary file
(deleted afterwards) for the readers, should the scanner hand it over to them."""

from __future__ import annotations

import gzip
import io
import os
import random
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.helpers import outcome, write
from tests.property.test_scan_equals_readers import assert_same

from gainscope.core.judged_run import JudgedRun, PreparedJudgments
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.errors import FileAccessError
from gainscope.io import read_judgments, read_run, scan_stream, text
from gainscope.io.scan import judged_run_of
from gainscope.io.text import TextFile

QUERIES = [f"q{i}" for i in range(40)]
PREPARED = PreparedJudgments.of(Judgments.from_dict(
    {q: {f"d{j}": (i + j) % 3 for j in range(0, 30, 2)} for i, q in enumerate(QUERIES)}))


def run_lines(seed: int = 0, docs: int = 30) -> list[bytes]:
    """A run of 40 queries of ``docs`` documents each (ties, unjudged documents, one id with an accent)."""
    rng = random.Random(seed)
    lines = []
    for q in QUERIES:
        for j in range(docs):
            doc = "dé5" if (q, j) == ("q7", 5) else f"d{j}"
            lines.append(f"{q} Q0 {doc} {j + 1} {rng.choice([1.5, 1.0, 0.5, 0.25])} tag\n".encode())
    return lines


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inputs of a few KB are kept in a temporary file and scanned in many pieces (as 64 KiB and 4 MiB are)."""
    monkeypatch.setattr(text, "SPOOL_BYTES", 512)
    monkeypatch.setattr(scan_stream, "CHUNK_BYTES", 2048)


@pytest.fixture(params=["native", "no-native"])
def native(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    from gainscope.io.scan import native_available

    if request.param == "native" and not native_available():
        pytest.skip("the C scanner is not built")
    monkeypatch.setenv("GAINSCOPE_NATIVE", "1" if request.param == "native" else "0")
    return str(request.param)


def compress(content: bytes, kind: str) -> bytes:
    if kind == "gzip":
        return gzip.compress(content)
    if kind == "zstd":
        return zstandard.ZstdCompressor().compress(content)
    return content


class Stdin:
    """``sys.stdin`` whose binary stream is ``buffer``."""

    def __init__(self, buffer: BinaryIO) -> None:
        self.buffer = buffer


def pipe(data: bytes) -> tuple[BinaryIO, threading.Thread]:
    """The read end of a real pipe that a thread fills with ``data`` (then closes)."""
    r, w = os.pipe()

    def feed() -> None:
        with open(w, "wb") as f:
            try:
                f.write(data)
            except BrokenPipeError:  # the reader stopped early (closed its end)
                pass

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return open(r, "rb"), thread


def from_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes, mode: str, tmp_path: Path,
               read: Callable[[], Any]) -> tuple[Any, list[str]]:
    """What ``read()`` gives with ``data`` on standard input: through a pipe, redirected from a file, or an in-memory
    stream (as click's test runner gives)."""
    thread = None
    if mode == "pipe":
        stream, thread = pipe(data)
    elif mode == "redirect":
        stream = open(write(tmp_path, f"redirected{len(os.listdir(tmp_path))}", data), "rb")
    else:
        stream = io.BytesIO(data)
    monkeypatch.setattr(sys, "stdin", Stdin(stream))
    try:
        return outcome(read, any_order=True)
    finally:
        stream.close()
        if thread is not None:
            thread.join()


def same(fast: tuple[Any, list[str]], reference: tuple[Any, list[str]], path: Path) -> None:
    """The same judged run (or error) and warnings, the file named ``<stdin>`` where the reference names its path."""
    result, warns = reference
    assert fast[1] == [w.replace(str(path), "<stdin>") for w in warns]
    if isinstance(result, JudgedRun):
        assert isinstance(fast[0], JudgedRun), fast[0]
        assert_same(fast[0], result)
    else:
        assert fast[0] == (result[0], result[1].replace(str(path), "<stdin>"))


def bad_middle(lines: list[bytes]) -> list[bytes]:
    return [*lines[:600], b"q20 Q0 d99 1 r\n", *lines[600:]]  # a line of 5 columns, line 601


def apart(lines: list[bytes]) -> list[bytes]:
    return [*lines[30:], *lines[:30]]  # q0's lines at the end, after the others: a valid run the readers read


def duplicate_last(lines: list[bytes]) -> list[bytes]:
    return [*lines, lines[-1]]


def bom(lines: list[bytes]) -> list[bytes]:
    return [b"\xef\xbb\xbf" + lines[0], *lines[1:]]


CASES = {"plain": lambda lines: lines, "bad line in the middle": bad_middle, "a query apart": apart,
         "duplicate on the last line": duplicate_last, "byte order mark": bom}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("compression", [None, "gzip", "zstd"])
@pytest.mark.parametrize("mode", ["pipe", "redirect", "memory"])
def test_standard_input_gives_what_the_file_gives(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, native: str,
                                                  case: str, compression: str | None, mode: str) -> None:
    content = b"".join(CASES[case](run_lines()))
    data = compress(content, compression or "")
    path = write(tmp_path, "run.txt", data)
    reference = outcome(lambda: judged_run_of(PREPARED, path, Policies())[0], any_order=True)
    if case == "plain":
        assert isinstance(reference[0], JudgedRun) and reference[0].run_name == "tag"
    if case == "bad line in the middle":  # the readers' error, with its line
        assert reference[0][1].startswith(f"{path}:601: expected 6 whitespace-separated columns")
    fast = from_stdin(monkeypatch, data, mode, tmp_path, lambda: judged_run_of(PREPARED, "-", Policies())[0])
    same(fast, reference, path)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), at=st.integers(0, 1200), bad=st.sampled_from(
    [b"q3 Q0 d1 1 x tag\n", b"q3 Q0 d1 1 1.0\n", b"q1 Q0 d1 1 1.0 tag\n", b"q9 Q0 d\xff 1 1.0 tag\n", b""]))
def test_a_pipe_gives_what_the_file_gives_wherever_the_bad_line_is(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                   seed: int, at: int, bad: bytes) -> None:
    lines = run_lines(seed)
    content = b"".join([*lines[:at], bad, *lines[at:]])
    path = write(tmp_path, "run.txt", content)
    reference = outcome(lambda: judged_run_of(PREPARED, path, Policies())[0], any_order=True)
    fast = from_stdin(monkeypatch, content, "pipe", tmp_path, lambda: judged_run_of(PREPARED, "-", Policies())[0])
    same(fast, reference, path)


@pytest.mark.parametrize("mode", ["pipe", "redirect"])
def test_the_readers_and_the_judgments_read_standard_input_as_a_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                     mode: str) -> None:
    content = b"".join(run_lines())
    path = write(tmp_path, "run.txt", content)
    run = from_stdin(monkeypatch, content, mode, tmp_path, lambda: read_run("-"))[0]
    assert (run.name, run.source, run.frame.equals(read_run(path).frame)) == ("tag", "<stdin>", True)
    qrels = b"".join(f"{q} 0 d{j} {j % 3}\n".encode() for q in QUERIES for j in range(20))
    judgments = from_stdin(monkeypatch, qrels, mode, tmp_path, lambda: read_judgments("-"))[0]
    reference = read_judgments(write(tmp_path, "qrels.txt", qrels))
    assert (judgments.source, judgments.frame.equals(reference.frame)) == ("<stdin>", True)


def test_a_redirected_file_is_read_where_it_is(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", b"".join(run_lines()))
    with open(path, "rb") as stream:
        monkeypatch.setattr(sys, "stdin", Stdin(stream))
        src = TextFile("-")
        assert (src.name, src.piped, src.stored) == ("<stdin>", False, f"/proc/self/fd/{stream.fileno()}")
    with open(path, "rb") as stream:  # reading has begun: the rest is standard input, copied as a pipe's
        stream.readline()
        monkeypatch.setattr(sys, "stdin", Stdin(stream))
        src = TextFile("-")
        rest = b"".join(run_lines()[1:])
        assert src.piped and src.head(20) == rest[:20]
        assert src.read_bytes() == rest


def test_a_pipe_is_streamed_and_its_copy_deleted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    content = b"".join(run_lines())
    stream, thread = pipe(content)
    monkeypatch.setattr(sys, "stdin", Stdin(stream))
    src = TextFile("-")
    assert src.piped and src.head(100) == content[:100]  # the format is detected without reading the rest
    copy = src._pipe.path  # type: ignore[union-attr]
    assert os.path.exists(copy)
    assert src.stored == copy and not src.piped and src.read_bytes() == content  # read to the end for the readers
    del src
    assert not os.path.exists(copy)
    stream.close()
    thread.join()


def test_small_standard_input_is_held_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", Stdin(io.BytesIO(b"q1 Q0 d1 1 1 r\n")))
    src = TextFile("-")
    assert (src.piped, src.stored, src.read_bytes()) == (False, None, b"q1 Q0 d1 1 1 r\n")


def test_no_room_for_the_copy_is_an_error_naming_tmpdir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    monkeypatch.setattr(sys, "stdin", Stdin(io.BytesIO(b"".join(run_lines()))))
    with pytest.raises(FileAccessError) as caught:
        TextFile("-")
    assert caught.value.path == "<stdin>"
    assert str(caught.value) == (f"cannot keep standard input in a temporary file in {tmp_path / 'missing'}: "
                                 f"No such file or directory; set TMPDIR to a directory with room for it")


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_the_copy_through_the_page_cache_where_o_direct_is_not_taken(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                     compression: str | None) -> None:
    content = compress(b"".join(bad_middle(run_lines())), compression or "")
    path = write(tmp_path, "run.txt", content)
    reference = outcome(lambda: judged_run_of(PREPARED, path, Policies())[0], any_order=True)
    monkeypatch.delattr(os, "O_DIRECT", raising=False)  # as on macOS
    fast = from_stdin(monkeypatch, content, "pipe", tmp_path, lambda: judged_run_of(PREPARED, "-", Policies())[0])
    same(fast, reference, path)


def test_a_failed_write_of_the_copy_is_an_error_naming_tmpdir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import errno
    import tempfile

    def full(*args: object) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "pwrite", full)
    content = b"".join(run_lines())
    error = from_stdin(monkeypatch, content, "pipe", tmp_path, lambda: judged_run_of(PREPARED, "-", Policies())[0])[0]
    assert error == (FileAccessError, f"cannot keep standard input in a temporary file in {tempfile.gettempdir()}: "
                                      f"No space left on device; set TMPDIR to a directory with room for it")


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="no /proc here")
def test_a_shell_pipe_and_redirect_give_the_files_output_byte_for_byte(tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels.txt", b"".join(f"{q} 0 d{j} {j % 3}\n".encode() for q in QUERIES
                                                   for j in range(20)))
    lines = run_lines(docs=80)  # more than the 64 KiB held in memory
    for content in (b"".join(lines), gzip.compress(b"".join(bad_middle(lines)))):
        path = write(tmp_path, "run.txt", content)
        command = [sys.executable, "-m", "gainscope", "evaluate", str(qrels)]
        metrics = ["-m", "nDCG@10 AP", "--format", "csv"]
        file = subprocess.run([*command, str(path), *metrics], capture_output=True, check=False)
        shell = f"cat {path} | {' '.join(command)} - -m 'nDCG@10 AP' --format csv"
        piped = subprocess.run(shell, shell=True, capture_output=True, check=False)
        with open(path, "rb") as stdin:
            redirected = subprocess.run([*command, "-", *metrics], stdin=stdin, capture_output=True, check=False)
        for done in (piped, redirected):
            assert (done.returncode, done.stdout) == (file.returncode, file.stdout)
            assert done.stderr == file.stderr.replace(str(path).encode(), b"<stdin>")
    assert file.returncode == 3 and b"<stdin>:601: expected 6" in piped.stderr
