"""The command line and bad inputs (issue 13, items 13, 14, 16, 20, 21, 23): exit codes by the one rule
(2 usage, 3 invalid data, 4 I/O), fixes spelled as flags, warnings naming their run, standard input."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from tests.helpers import invoke, write

from gainscope.cli import cli

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
QRELS, BM25, HYBRID = str(EX / "qrels.txt"), str(EX / "bm25.run"), str(EX / "hybrid.run")


run_cli = partial(invoke, cli)


# ---------------------------------------------------------------------- item 16: exit codes, one rule
FULL = ("error: cannot write /dev/full: No space left on device; free disk space (or raise the quota or file size "
        "limit), or write to another disk")

def test_a_missing_input_file_is_an_io_failure(tmp_path: Path) -> None:
    absent = str(tmp_path / "absent.run")
    code, _, err = run_cli("evaluate", QRELS, absent, "-m", "AP")
    assert (code, err) == (4, f"error: no such file: {absent!r}\n")
    code, _, err = run_cli("evaluate", absent, BM25, "-m", "AP")
    assert code == 4


def test_a_folder_or_a_device_is_an_io_failure(tmp_path: Path) -> None:
    assert run_cli("evaluate", QRELS, str(tmp_path), "-m", "AP")[0] == 4
    link = tmp_path / "zero.run"
    link.symlink_to("/dev/zero")
    code, _, err = run_cli("evaluate", QRELS, str(link), "-m", "AP")
    assert code == 4
    assert err == (f"error: {link} is a character device, not a regular file; give the path of a file, or read "
                   "standard input as -\n")


def test_writing_to_a_full_disk_names_the_path_and_exits_4() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    code, _, err = run_cli("evaluate", QRELS, BM25, "-m", "AP", "-o", "/dev/full")
    assert (code, err.splitlines()[-1]) == (4, FULL)


def test_writing_into_a_missing_folder_names_the_path_and_exits_4(tmp_path: Path) -> None:
    out = tmp_path / "no" / "such" / "folder" / "out.csv"
    code, _, err = run_cli("evaluate", QRELS, BM25, "-m", "AP", "--format", "csv", "-o", str(out))
    assert (code, err.splitlines()[-1]) == (4, f"error: cannot write {out}: No such file or directory; create the "
                                               f"folder {out.parent} first, or give another path")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_writing_without_permission_exits_4(tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir(mode=0o500)
    code, _, err = run_cli("evaluate", QRELS, BM25, "-m", "AP", "-o", str(folder / "out.txt"))
    assert code == 4 and "Permission denied" in err


# ---------------------------------------------------------------------- item 13: damaged gzip, exit 3
GZ = gzip.compress(Path(BM25).read_bytes())


@pytest.mark.parametrize(("name", "damage", "what"), [
    ("truncated", lambda b: b[: len(b) // 2], "the gzip data ends before the end of its compressed stream: the "
                                              "file is truncated; copy or download it again"),
    ("corrupt", lambda b: b[:20] + b"\xff" * 12 + b[32:], "the gzip data is corrupt (Error -3 while decompressing"),
    ("bad-crc", lambda b: b[:-8] + bytes([b[-8] ^ 0xFF]) + b[-7:], "the gzip data is corrupt (CRC check failed "),
])
def test_damaged_gzip_is_invalid_input_naming_the_file(tmp_path: Path, name: str, damage, what: str) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, f"{name}.run.gz", damage(GZ))
    code, _, err = run_cli("evaluate", QRELS, path, "-m", "AP")
    assert code == 3, err  # was: "Aborted!" (exit 1), a zlib traceback, "error: None: None"
    assert err.startswith(f"error: {path}: {what}")
    assert "Traceback" not in err and "None: None" not in err


# ---------------------------------------------------------------------- damaged zstd, exit 3 (issue 13 and 19)
def _zstd(data: bytes, frames: int = 1) -> bytes:
    """``data`` as zstd with checksums: one frame, or several each after a skippable frame (as pzstd writes)."""
    zstandard = pytest.importorskip("zstandard")
    size = -(-len(data) // frames)
    out = b""
    for i in range(0, len(data), size):
        frame = zstandard.ZstdCompressor(write_checksum=True).compress(data[i:i + size])
        out += (b"\x50\x2a\x4d\x18\x04\0\0\0" + len(frame).to_bytes(4, "little") if frames > 1 else b"") + frame
    return out


@pytest.mark.parametrize("frames", [1, 3])
@pytest.mark.parametrize(("name", "damage", "what"), [
    ("truncated", lambda b: b[: len(b) - 7], "the zstd data ends before the end of its last frame: the file is "
                                             "truncated; copy or download it again"),
    ("corrupt", lambda b: b[:40] + bytes(x ^ 0x55 for x in b[40:60]) + b[60:], "the zstd data is corrupt ("),
    ("bad-checksum", lambda b: b[:-1] + bytes([b[-1] ^ 1]), "the zstd data is corrupt ("),
])
def test_damaged_zstd_is_invalid_input_naming_the_file(tmp_path: Path, name: str, damage, what: str,  # type: ignore[no-untyped-def]
                                                       frames: int) -> None:
    path = write(tmp_path, f"{name}.run.zst", damage(_zstd(Path(BM25).read_bytes(), frames)))
    code, _, err = run_cli("evaluate", QRELS, path, "-m", "AP")
    assert code == 3, err
    assert err.startswith(f"error: {path}: {what}")
    assert "Traceback" not in err


def test_a_pzstd_run_gives_what_the_plain_run_gives(tmp_path: Path) -> None:
    """pzstd's files start with a skippable frame (was: not known as zstd, refused as bytes that are not UTF-8)."""
    path = write(tmp_path, "bm25.run.zst", _zstd(Path(BM25).read_bytes(), 3))
    packed = run_cli("evaluate", QRELS, path, "-m", "nDCG@10 AP", "--format", "csv")
    plain = run_cli("evaluate", QRELS, BM25, "-m", "nDCG@10 AP", "--format", "csv")
    assert packed[0] == 0, packed[2]
    assert packed[1] == plain[1] and packed[2] == plain[2]


# ---------------------------------------------------------------------- item 20: fixes spelled as flags
@pytest.mark.parametrize(("run", "flag", "keyword"), [
    ("q1 Q0 d1 1 1 r\nq1 Q0 d1 2 0 r\n", "--on-duplicate first or max", "on_duplicate="),
    ("MQ001 Q0 d1 1 nan r\n", "--nan-score -inf", "nan_score="),
    ("# nothing\n", "--allow-empty", "allow_empty="),
    (b"MQ001 Q0 d\xe91 1 1 r\n", "--encoding latin-1 or --encoding cp1252", "encoding="),
    ("MQ001 Q0 d1 1 1 r note\n", "--extra-columns ignore", "extra_columns="),
    ("q1 d1 30\nq1 d2 20\n", "--run-format msmarco", "format="),
])
def test_errors_give_the_flag_not_the_keyword(tmp_path: Path, run: str | bytes, flag: str, keyword: str) -> None:
    code, _, err = run_cli("evaluate", QRELS, write(tmp_path, "run.txt", run), "-m", "AP")
    assert code == 3
    assert flag in err and keyword not in err


def test_judgment_errors_give_the_flag(tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels.txt", "MQ001 0 d1 0.5\n")
    code, _, err = run_cli("evaluate", qrels, BM25, "-m", "AP")
    assert code == 3 and "use --float-grades to keep fractional grades" in err and "float_grades=" not in err
    conflict = write(tmp_path, "conflict.txt", "MQ001 0 d1 1\nMQ001 0 d1 2\n")
    code, _, err = run_cli("evaluate", conflict, BM25, "-m", "AP")
    assert code == 3 and "--on-conflict max, min, first or last" in err


def test_the_new_reading_flags_work(tmp_path: Path) -> None:
    run = write(tmp_path, "run.txt", "MQ001 Q0 d\xe91 1 1 r\n".encode("latin-1"))
    assert run_cli("evaluate", QRELS, run, "-m", "AP", "--encoding", "latin-1")[0] == 0
    empty = write(tmp_path, "empty.run", "# this system retrieved nothing\n")
    code, out, _ = run_cli("evaluate", QRELS, empty, "-m", "AP", "--allow-empty", "--format", "csv")
    assert code == 0 and out.splitlines()[1].endswith(",AP,0.0,mean")
    notes = write(tmp_path, "notes.run", "".join(line.rstrip("\n") + " a note\n"
                                                 for line in Path(BM25).read_text().splitlines(keepends=True)))
    plain = run_cli("evaluate", QRELS, BM25, "-m", "AP", "--format", "csv")
    assert run_cli("evaluate", QRELS, notes, "-m", "AP", "--format", "csv", "--extra-columns", "ignore") == plain


def test_warnings_give_the_flag(tmp_path: Path) -> None:
    run = write(tmp_path, "run.txt", "MQ001 Q0 d1 1 1 r\nMQ001 Q0 d2 2 1 r\n")
    code, _, err = run_cli("evaluate", QRELS, run, "-m", "AP")
    assert code == 0
    assert "(--ties trec_eval); use --ties rank for the order given or --ties average" in err
    assert "ties='rank'" not in err


# ---------------------------------------------------------------------- item 21: warnings name their run
def test_with_several_runs_each_warning_names_its_run(tmp_path: Path) -> None:
    tied = write(tmp_path, "tied.run", "MQ001 Q0 d1 1 1 r\nMQ001 Q0 d2 2 1 r\n")
    code, _, err = run_cli("evaluate", QRELS, BM25, tied, "-m", "AP")
    assert code == 0
    lines = err.splitlines()
    assert any(line.startswith(f"warning: {tied}: 1 group(s) of equal scores") for line in lines)
    assert any(line.startswith(f"warning: {tied}: ") and "have no ranking" in line for line in lines)
    assert any(line.startswith(f"warning: {BM25}: ") for line in lines)
    assert all(line.startswith((f"warning: {tied}: ", f"warning: {BM25}: ")) for line in lines), lines
    code, _, err = run_cli("compare", QRELS, BM25, tied, "-m", "AP", "--resamples", "10")
    assert any(line.startswith(f"warning: {tied}: 1 group(s) of equal scores") for line in err.splitlines())


def test_one_run_keeps_its_warnings_as_they_were(tmp_path: Path) -> None:
    tied = write(tmp_path, "tied.run", "MQ001 Q0 d1 1 1 r\nMQ001 Q0 d2 2 1 r\n")
    _, _, err = run_cli("evaluate", QRELS, tied, "-m", "AP")
    assert any(line.startswith("warning: 1 group(s) of equal scores") for line in err.splitlines())


def test_python_evaluate_runs_names_runs_in_warnings(tmp_path: Path) -> None:
    import warnings

    import gainscope

    tied = write(tmp_path, "tied.run", "MQ001 Q0 d1 1 1 r\nMQ001 Q0 d2 2 1 r\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gainscope.evaluate_runs(QRELS, [BM25, tied], ["AP"])
    texts = [str(w.message) for w in caught]
    assert any(t.startswith(f"{tied}: 1 group(s) of equal scores") for t in texts)
    assert all(t.startswith((f"{tied}: ", f"{BM25}: ")) for t in texts), texts


# ---------------------------------------------------------------------- item 23: '-' is standard input
def test_dash_reads_the_run_from_standard_input() -> None:
    from_file = run_cli("evaluate", QRELS, BM25, "-m", "nDCG@10 AP", "--format", "csv")
    from_stdin = run_cli("evaluate", QRELS, "-", "-m", "nDCG@10 AP", "--format", "csv",
                         input=Path(BM25).read_bytes())
    assert from_stdin[0] == 0
    assert from_stdin[1] == from_file[1]
    gz = run_cli("evaluate", QRELS, "-", "-m", "nDCG@10 AP", "--format", "csv", input=GZ)
    assert gz[1] == from_file[1]


def test_only_one_input_can_be_standard_input() -> None:
    code, _, err = run_cli("evaluate", QRELS, "-", "-", "-m", "AP", input=b"")
    assert code == 2 and "only one input can be read from standard input (-); give the others as files" in err
    assert run_cli("compare", "-", "-", BM25, "-m", "AP", input=b"")[0] == 2


def test_standard_input_errors_name_it(tmp_path: Path) -> None:
    code, _, err = run_cli("evaluate", QRELS, "-", "-m", "AP", input=b"MQ001 Q0 d1 1 1 r\nMQ001 Q0 d1 2 1 r\n")
    assert code == 3 and err.startswith("error: <stdin>:2: duplicate doc 'd1' for query 'MQ001'")


def test_dash_from_a_real_shell_pipe() -> None:
    with open(BM25, "rb") as run:
        done = subprocess.run([sys.executable, "-m", "gainscope", "evaluate", QRELS, "-", "-m", "AP", "--format",
                               "csv"], stdin=run, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    plain = subprocess.run([sys.executable, "-m", "gainscope", "evaluate", QRELS, BM25, "-m", "AP", "--format", "csv"],
                           capture_output=True, check=False)
    assert done.stdout == plain.stdout


def test_report_and_junit_writes_name_the_path_on_a_full_disk(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    code, _, err = run_cli("gate", QRELS, BM25, "--fail-if", "AP < 0.01", "--junit", "/dev/full")
    assert (code, err.splitlines()[-1]) == (4, FULL)


# every command that writes names the path it could not write and what to do (issue 13 review)
def test_plots_name_the_file_they_could_not_write(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    (tmp_path / "pr.png").symlink_to("/dev/full")
    code, _, err = run_cli("plot", QRELS, BM25, "-m", "AP", "--kind", "pr", "-o", str(tmp_path))
    assert (code, err.splitlines()[-1]) == (4, FULL.replace("/dev/full", str(tmp_path / "pr.png"), 1))


def test_plots_into_a_device_name_it_as_not_a_folder(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    code, _, err = run_cli("plot", QRELS, BM25, "-m", "AP", "--kind", "pr", "-o", "/dev/full")
    assert (code, err.splitlines()[-1]) == (4, "error: cannot write into /dev/full: it is a file, not a folder; give "
                                               "the path of a folder (it is created when missing)")
    code, _, err = run_cli("plot", QRELS, BM25, "-m", "AP", "--kind", "pr", "-o", str(tmp_path / "a" / "b"))
    assert code == 0 and (tmp_path / "a" / "b" / "pr.svg").is_file()


def test_case_export_names_the_file_it_could_not_write(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    case = str(EX / "cases" / "movies_before.json")
    for flag in ("--qrels", "--run", "--quepid-ratings"):
        code, _, err = run_cli("case", "export", case, flag, "/dev/full")
        assert (code, err.splitlines()[-1]) == (4, FULL), flag
    out = tmp_path / "none" / "q.txt"
    code, _, err = run_cli("case", "export", case, "--qrels", str(out))
    assert (code, err.splitlines()[-1]) == (4, f"error: cannot write {out}: No such file or directory; create the "
                                               f"folder {out.parent} first, or give another path")


def test_write_case_and_write_pairs_raise_file_access_errors_naming_the_path(tmp_path: Path) -> None:
    from gainscope.cases import Case, CaseQuery, write_case
    from gainscope.errors import FileAccessError
    from gainscope.judges.pool import write_pairs

    out = tmp_path / "none" / "x"
    with pytest.raises(FileAccessError, match=f"^cannot write {out}: No such file or directory; create the folder"):
        write_case(Case(name="c", queries=(CaseQuery(query="q", results=("d",)),)), out)
    with pytest.raises(FileAccessError, match=f"^cannot write {out}: No such file or directory; create the folder"):
        write_pairs([("q1", "d1")], out)


# ---------------------------------------------------------------------- without the C scanner (GAINSCOPE_NATIVE=0)
_NO_NATIVE_QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d5 3\nq3 0 d1 1\n"
_NO_NATIVE_RUNS = {
    "plain": "q1 Q0 d1 1 3.5 r\nq1 Q0 d2 2 3.5 r\nq1 Q0 d9 3 1 r\nq2 Q0 d5 1 2 r\nq2 Q0 d6 2 2 r\n",
    "messy": "q1\tQ0 d1 1 3.5 r\r\n# note\nq1 Q0  d2 2 3.5 r\n\nq2 Q0 d5 1 2 r\n",
    "duplicate": "q1 Q0 d1 1 3.5 r\nq1 Q0 d1 2 3 r\n",
    "bad score": "q1 Q0 d1 1 3,5 r\n",
}


@pytest.mark.parametrize("case", sorted(_NO_NATIVE_RUNS))
def test_evaluate_without_the_c_scanner_says_what_it_says_with_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   case: str) -> None:
    from gainscope.io import scan_polars

    qrels = write(tmp_path, "qrels.txt", _NO_NATIVE_QRELS)
    run = write(tmp_path, "run.txt", _NO_NATIVE_RUNS[case])
    args = ("evaluate", qrels, run, "-m", "nDCG@10 AP RR P@10")
    calls: list[int] = []
    real = scan_polars.scan_piece
    monkeypatch.setattr(scan_polars, "scan_piece", lambda *a, **k: calls.append(1) or real(*a, **k))
    without = invoke(cli, *args, env={"GAINSCOPE_NATIVE": "0"})
    assert calls  # the vectorised twin read it (or refused it, and the readers read it)
    with_native = invoke(cli, *args, env={"GAINSCOPE_NATIVE": "1"})
    assert without == with_native
    assert without[0] == (3 if case in ("duplicate", "bad score") else 0)
