"""TREC qrels and runs: trec_eval's own files, the two parsers, format detection, a property test."""

from __future__ import annotations

import gzip
import os
import re
import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from tests.helpers import write

from gainscope.errors import FormatError, InputWarning, UnknownFormatError, spell
from gainscope.io import detect_format, read_judgments, read_run, trec, write_judgments, write_run
from gainscope.io.frames import JudgmentOptions, RunOptions
from gainscope.io.text import TextFile
from gainscope.io.trec import (
    LAYOUTS,
    FastPathUnavailable,
    data_line_count,
    fast_table,
    normalise_whitespace,
    read_trec_judgments,
    read_trec_run,
)
from gainscope.io.writers import trec_order


def both_judgments(path: Path, fmt: str = "trec") -> tuple[pl.DataFrame, pl.DataFrame]:
    careful, _ = read_trec_judgments(TextFile(path), fmt, JudgmentOptions(), engine="careful")
    fast, _ = read_trec_judgments(TextFile(path), fmt, JudgmentOptions(), engine="fast")
    return careful.frame, fast.frame


def both_runs(path: Path, fmt: str = "trec", options: RunOptions | None = None
              ) -> tuple[pl.DataFrame, pl.DataFrame]:
    options = options or RunOptions()
    careful, _ = read_trec_run(TextFile(path), fmt, options, engine="careful")
    fast, _ = read_trec_run(TextFile(path), fmt, options, engine="fast")
    assert careful.name == fast.name
    return careful.frame, fast.frame


# ---------------------------------------------------------------------- trec_eval's test files
def test_fixture_qrels_row_counts(trec_fixtures: Path) -> None:
    for name in ("qrels.test", "qrels.rel_level"):  # 3681 lines each (wc -l), no comment or blank line
        judgments = read_judgments(trec_fixtures / name)
        assert len(judgments) == 3681
        assert judgments.query_ids() == ["301", "302", "303"]
    grades = read_judgments(trec_fixtures / "qrels.rel_level").frame["grade"]
    assert grades.min() == -1 and grades.max() == 4
    assert (grades == -1).sum() == 304


def test_fixture_qrels_with_comments(trec_fixtures: Path) -> None:
    plain = read_judgments(trec_fixtures / "qrels.test")
    commented = read_judgments(trec_fixtures / "qrels.test.with-comments")  # 3684 lines, 3 comments
    assert len(commented) == 3681
    docs = commented.for_query("301")
    assert docs["CR#93E-1860"] == 0  # the line after '# comment in docno' is data: '#' inside an id
    assert "CR93E-1860" not in docs
    renamed = plain.frame.with_columns(pl.col("doc_id").replace("CR93E-1860", "CR#93E-1860"))
    assert_frame_equal(commented.frame, renamed)


def test_fixture_runs(trec_fixtures: Path) -> None:
    run = read_run(trec_fixtures / "results.test")  # tab + spaces before the score
    assert len(run) == 1500
    assert run.name == "STANDARD"
    assert run.frame.row(0) == ("301", "FR940202-2-00150", 2.129133, 104)
    # junk after the tag ("more junk at end of lines reserved for future expansion"), not grouped by query:
    # trec_eval ignores the extra columns; gainscope refuses them unless told to ignore them
    message = ("results.trunc:1: expected 6 whitespace-separated columns (query_id Q0 doc_id rank score run_tag); "
               "got 9: '301 Q0 FBIS3-27619 99 2.138276 STANDARD more junk at'; remove the columns after the 6th "
               "(an id with a space in it, or two lines run together?), or, if they are notes after the run tag "
               "(trec_eval ignores them), read with extra_columns='ignore'")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_run(trec_fixtures / "results.trunc")
    trunc = read_run(trec_fixtures / "results.trunc", extra_columns="ignore")
    assert len(trunc) == 584
    assert trunc.name == "STANDARD"
    assert trunc.frame["query_id"].head(3).to_list() == ["301", "303", "301"]
    assert trunc.frame.row(0) == ("301", "FBIS3-27619", 2.138276, 99)


@pytest.mark.parametrize("name", ["qrels.test", "qrels.test.with-comments", "qrels.rel_level"])
def test_fast_reader_agrees_on_fixture_qrels(trec_fixtures: Path, name: str) -> None:
    careful, fast = both_judgments(trec_fixtures / name)
    assert_frame_equal(careful, fast)


@pytest.mark.parametrize("name", ["results.test", "results.trunc"])
def test_fast_reader_agrees_on_fixture_runs(trec_fixtures: Path, name: str) -> None:
    careful, fast = both_runs(trec_fixtures / name, options=RunOptions(extra_columns="ignore"))
    assert_frame_equal(careful, fast)


# ---------------------------------------------------------------------- the fast reader
def test_polars_handles_crlf_bom_and_comments_like_the_careful_parser(tmp_path: Path) -> None:
    text = "\ufeff# comment\r\nq1\tQ0\td#1\t1\t2.5\tr\r\n#q1 Q0 d9 9 9 r\r\nq1\tQ0\td2\t2\t1.5\tr\r\n"
    path = write(tmp_path, "run.txt", text)
    assert fast_table(TextFile(path), LAYOUTS[("run", "trec")]) is not None
    careful, fast = both_runs(path)
    assert_frame_equal(careful, fast)
    assert fast["query_id"].to_list() == ["q1", "q1"]
    assert fast["doc_id"].to_list() == ["d#1", "d2"]


def test_fast_reader_normalises_messy_whitespace(tmp_path: Path) -> None:
    text = "\n\n  q1  0 d1\t 1 \r\n\t\nq1 0\td2 0\n   \nq2 0 d3 2"
    path = write(tmp_path, "qrels.txt", text)
    careful, fast = both_judgments(path)
    assert_frame_equal(careful, fast)
    assert fast.rows() == [("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d3", 2)]


def test_normalise_whitespace_keeps_indented_hash_for_the_careful_parser() -> None:
    assert normalise_whitespace(b"\xef\xbb\xbf a\t b \r\n\n\nc  d\n") == b"a b\nc d\n"
    assert normalise_whitespace(b"a b\n  # x\n") is None


@pytest.mark.parametrize("name", ["messy.txt", "messy.txt.gz"])
def test_normalising_in_pieces_equals_normalising_whole(tmp_path: Path, name: str) -> None:
    text = b"\xef\xbb\xbf" + b"  q1  0 d1 1 \r\n\n\n q1\t0\td2\t0\n\n" * 50 + b"q2 0 d3 2 "
    path = write(tmp_path, name, gzip.compress(text) if name.endswith(".gz") else text)
    whole = normalise_whitespace(text)
    assert whole is not None and whole.startswith(b"q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 1\n")
    assert normalise_whitespace(TextFile(path).chunks(size=7)) == whole
    assert normalise_whitespace(TextFile(path).chunks()) == whole


def test_polars_one_line_quirk_is_worked_around(tmp_path: Path) -> None:
    """polars 2.1 raises on a one-line file without final newline whose first field has '#' at index 1."""
    path = write(tmp_path, "qrels.txt", "0# 0 0 0")
    careful, fast = both_judgments(path)
    assert_frame_equal(careful, fast)


def test_data_line_count_matches_what_polars_returns() -> None:
    assert data_line_count([b"\xef\xbb\xbf#c\na\n\n#d\nb"]) == 3
    assert data_line_count([b"a\n", b"#x\nb\n"]) == 2
    assert data_line_count([b""]) == 0


def test_fast_reader_gives_up_on_problems(tmp_path: Path) -> None:
    for content in ("q1 0 d1 1\n  # indented\n", "q1 0 d1 x\n", "q1 0 d1 1\nq1 0 d1 2\n"):
        path = write(tmp_path, "qrels.txt", content)
        with pytest.raises(FastPathUnavailable):
            read_trec_judgments(TextFile(path), "trec", JudgmentOptions(), engine="fast")


def test_fast_reader_resolves_duplicates_without_line_numbers(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 0.1 r\nq1 Q0 d2 2 0.5 r\nq1 Q0 d1 3 0.9 r\n")
    fast, _ = read_trec_run(TextFile(path), "trec", RunOptions(on_duplicate="max"), engine="fast")
    assert fast.to_dict() == {"q1": {"d2": 0.5, "d1": 0.9}}


def test_gzip_files_are_read_transparently(tmp_path: Path, trec_fixtures: Path) -> None:
    data = (trec_fixtures / "qrels.test").read_bytes()
    path = write(tmp_path, "qrels.test.gz", gzip.compress(data))
    plain = read_judgments(trec_fixtures / "qrels.test")
    assert_frame_equal(read_judgments(path).frame, plain.frame)
    careful, fast = both_judgments(path)
    assert_frame_equal(careful, fast)


# ---------------------------------------------------------------------- runs
def test_run_name_is_the_first_tag_and_differing_tags_warn(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 2.0 alpha\nq1 Q0 d2 2 1.0 beta\n")
    message = (f"{path}: the run tags differ (2 distinct: 'alpha', 'beta'); using the first line's tag "
               "'alpha' as the run name (pass name=... to choose one)")
    with pytest.warns(InputWarning, match=re.escape(message)):
        assert read_run(path).name == "alpha"
    with pytest.warns(InputWarning, match=re.escape("using 'mine' (name=)")):
        assert read_run(path, name="mine").name == "mine"


def test_msmarco_runs(tmp_path: Path) -> None:
    path = write(tmp_path, "dev.small.tsv", "1048585\t7187158\t1\n1048585\t7187157\t2\n2\t001\t1\n")
    assert detect_format(path, kind="run") == "msmarco"
    run = read_run(path)
    assert run.name == "dev.small"
    assert not run.has_scores
    assert run.frame.rows() == [("1048585", "7187158", None, 1), ("1048585", "7187157", None, 2),
                                ("2", "001", None, 1)]
    careful, fast = both_runs(path, "msmarco")
    assert_frame_equal(careful, fast)


def test_msmarco_with_trec_lines_points_to_format_trec(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 2.0 r\n")
    message = (f"{path}:1: expected 3 whitespace-separated columns (query_id doc_id rank); got 6: 'q1 Q0 d1 "
               "1 2.0 r'; this looks like a TREC run: read with format='trec'")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_run(path, format="msmarco")


def test_header_row_in_a_run_file(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "qid Q0 docno rank score tag\nq1 Q0 d1 1 2.0 r\n")
    message = (f"{path}:1: this looks like a header row (qid Q0 docno rank score tag); TREC run files have "
               "none: delete it, or read the file as a table with format='tsv' or format='csv'")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_run(path)


# ---------------------------------------------------------------------- MS MARCO only on evidence (issue 13, item 2)
NOT_RANKS = ("cannot tell this run's format: its lines have 3 columns as MS MARCO runs (query_id doc_id rank), "
             "but the third column is not each query's rank sequence 1, 2, 3 ... ({found}); if it holds ranks, "
             "read with format='msmarco'; if it holds scores, write the run in TREC format (query_id Q0 doc_id "
             "rank score run_tag) or as a table with a header line (query_id, doc_id, score) and read it with "
             "format='tsv' or format='csv'")


@pytest.mark.parametrize(("content", "line", "found"), [
    ("q1 d1 30\nq1 d2 20\n", 1, "query 'q1' has '30' where rank 1 belongs"),  # scores: was read as ranks, reversed
    ("q1 d1 1\nq1 d2 3\n", 2, "query 'q1' has '3' where rank 2 belongs"),
    ("q1 d1 2\nq1 d2 1\n", 1, "query 'q1' has '2' where rank 1 belongs"),
    ("q1 d1 1\nq2 d1 1\nq1 d2 2\n", 3, "query 'q1' comes back after other queries"),
    ("q1 d1 1\nq1 d2 0.5\n", 2, "query 'q1' has '0.5' where rank 2 belongs"),
])
def test_three_columns_that_are_not_rank_sequences_are_refused(tmp_path: Path, content: str, line: int,
                                                               found: str) -> None:
    path = write(tmp_path, "run.txt", content)
    message = f"{path}:{line}: " + NOT_RANKS.format(found=found)
    with pytest.raises(UnknownFormatError, match=re.escape(message)):
        detect_format(path, kind="run")
    with pytest.raises(UnknownFormatError, match=re.escape(message)):
        read_run(path)
    if "0.5" not in content:
        assert read_run(path, format="msmarco").frame["rank"].to_list()  # told they are ranks: read as ranks


def test_rank_sequences_are_checked_beyond_what_detection_reads(tmp_path: Path) -> None:
    lines = [f"q{q:04d}\td{d}\t{d + 1}" for q in range(4000) for d in range(10)]  # about 500 KB, 40,000 lines
    lines[39_990] = "q3999\td0\t30"  # the last query's first line: far beyond the 64 KB detection reads
    path = write(tmp_path, "run.tsv", "\n".join(lines) + "\n")
    assert detect_format(path, kind="run") == "msmarco"  # the first lines are rank sequences
    message = f"{path}:39991: " + NOT_RANKS.format(found="query 'q3999' has '30' where rank 1 belongs")
    for threshold in (0, 10**18):  # the fast reader (no line numbers: it hands over) and the careful one
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(trec, "FAST_MIN_BYTES", threshold)
            with pytest.raises(UnknownFormatError, match=re.escape(message)):
                read_run(path)
    lines[39_990] = "q3999\td0\t1"
    write(tmp_path, "run.tsv", "\n".join(lines) + "\n")
    assert len(read_run(path)) == 40_000


def test_spelling_of_the_format_fix_on_the_command_line(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 d1 30\nq1 d2 20\n")
    with pytest.raises(UnknownFormatError) as info:
        read_run(path)
    assert "read with --run-format msmarco; if it holds scores" in spell(info.value, "cli")
    assert "read it with --run-format tsv or --run-format csv" in spell(info.value, "cli")


# ---------------------------------------------------------------------- format detection
@pytest.mark.parametrize(("name", "content", "kind", "expected"), [
    ("qrels.txt", "q1 0 d1 1\n", "judgments", "trec"),
    ("qrels", "# c\n\nq1 d1 1\n", "judgments", "qrels3"),
    ("run.txt", "q1 Q0 d1 1 2.0 r\n", "run", "trec"),
    ("run.txt", "q1 Q0 d1 1 2.0\n", "run", "trec"),
    ("run.txt", "q1 d1 1\n", "run", "msmarco"),
    ("qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\n", "judgments", "beir"),
    ("qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\n", "run", "tsv"),
    ("qrels.dev.tsv", "1\t0\t2\t1\n", "judgments", "trec"),
    ("x.txt", "query_id,doc_id,relevance\nq1,d1,1\n", "judgments", "csv"),
    ("x.txt", "qid\tdocno\tscore\n", "run", "tsv"),
    ("x.csv", "a,b\n", "judgments", "csv"),
    ("x.jsonl", '{"query_id": "q"}\n', "run", "jsonl"),
    ("x.json", '[{"query_id": "q"}]', "run", "json"),
    ("x.json", '{"query_id": "q"}\n{"query_id": "r"}\n', "run", "jsonl"),
    ("x.data", '\ufeff[{"query_id": "q"}]', "judgments", "json"),
    ("x.data", '{"query_id": "q"}\n', "judgments", "jsonl"),
    # mtime=0: the bytes are in the test ids, which both pytest-xdist workers must collect alike
    ("x.jsonl.gz", gzip.compress(b'{"query_id": "q"}\n', mtime=0), "judgments", "jsonl"),
    ("x.gz", gzip.compress(b"q1 0 d1 1\n", mtime=0), "judgments", "trec"),
    ("x.parquet", b"", "judgments", "parquet"),
    ("", "", "judgments", "trec"),
])
def test_detect_format(tmp_path: Path, name: str, content: str | bytes, kind: str, expected: str) -> None:
    path = write(tmp_path, name or "noname", content)
    assert detect_format(path, kind=kind) == expected


def test_parquet_detected_by_content(tmp_path: Path) -> None:
    path = tmp_path / "judgments.bin"
    pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "relevance": [1]}).write_parquet(path)
    assert detect_format(path, kind="judgments") == "parquet"
    assert read_judgments(path).for_query("q") == {"d": 1}


def test_unknown_format_lists_valid_names(tmp_path: Path) -> None:
    path = write(tmp_path, "q.txt", "q1 0 d1 1\n")
    message = ("unknown format 'xml' for judgments; valid formats: trec, qrels3, jsonl, json, csv, tsv, "
               "beir, parquet (or None to detect it)")
    with pytest.raises(UnknownFormatError, match=re.escape(message)):
        read_judgments(path, format="xml")
    with pytest.raises(UnknownFormatError, match=re.escape("valid formats: trec, msmarco, jsonl, json, csv")):
        read_run(path, format="qrels3")


def test_forced_format_overrides_detection(tmp_path: Path) -> None:
    path = write(tmp_path, "data.json", "q1 0 d1 1\n")
    assert read_judgments(path, format="trec").for_query("q1") == {"d1": 1}


# ---------------------------------------------------------------------- property: fast == careful, round trip
ID_CHARS = "abxyzAB0129#-_.:,/\u00e9"
ids = st.text(ID_CHARS, min_size=1, max_size=6).filter(lambda s: not s.startswith("#"))
gaps = st.sampled_from([" ", "\t", "  ", " \t ", "\t\t", "\x0b"])
score_tokens = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6).map(lambda x: f"{x:.6f}"),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"{x:e}"),
    st.integers(-1000, 1000).map(str),
)


@st.composite
def trec_files(draw: st.DrawFn, kind: str) -> str:
    """A valid TREC qrels or run file with messy but legal formatting."""
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    tag = draw(ids)
    lines: list[str] = []
    for qid in draw(st.lists(ids, min_size=1, max_size=4, unique=True)):
        for doc in draw(st.lists(ids, min_size=1, max_size=6, unique=True)):
            if kind == "run":
                tokens = [qid, "Q0", doc, str(draw(st.integers(-5, 10**6))), draw(score_tokens), tag]
                tokens += draw(st.lists(ids, max_size=2))  # junk after the tag: ignored with extra_columns
            else:
                tokens = [qid, draw(st.sampled_from(["0", "Q0", "1"])), doc, str(draw(st.integers(-2, 4)))]
            text = tokens[0]
            for token in tokens[1:]:
                text += draw(gaps) + token
            lead = draw(st.sampled_from(["", "", " ", "\t"]))
            trail = draw(st.sampled_from(["", "", " ", "\t ", "\r"]))
            lines.append(lead + text + trail)
            lines += draw(st.lists(st.sampled_from(["", "  ", "\t", "# a comment", "#q1 0 d 1", "#"]),
                                   max_size=1))
    body = eol.join(draw(st.lists(st.sampled_from(["# head", ""]), max_size=2)) + lines)
    if draw(st.booleans()):
        body += eol
    return ("\ufeff" if draw(st.booleans()) else "") + body


EXAMPLES = int(os.environ.get("GAINSCOPE_IO_EXAMPLES", "60"))  # raise it locally for a longer search
PROPERTY = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(text=trec_files("run"))
def test_random_runs_fast_equals_careful_and_round_trip(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder), "run.txt", text)
        options = RunOptions(extra_columns="ignore")  # the junk after some tags
        careful, _ = read_trec_run(TextFile(path), "trec", options, engine="careful")
        fast, _ = read_trec_run(TextFile(path), "trec", options, engine="fast")
        assert_frame_equal(careful.frame, fast.frame)
        assert careful.name == fast.name
        written = Path(folder) / "out.run"
        write_run(careful, written)
        back = read_run(written)
        assert_frame_equal(back.frame, trec_order(careful).select(back.frame.columns))
        assert back.name == careful.name
        for suffix in ("jsonl", "json", "csv", "tsv", "parquet"):
            other = Path(folder) / f"out.{suffix}"
            write_run(careful, other)
            assert_frame_equal(read_run(other).frame, careful.frame)


@PROPERTY
@given(text=trec_files("judgments"))
def test_random_qrels_fast_equals_careful_and_round_trip(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder), "qrels.txt", text)
        careful, fast = both_judgments(path)
        assert_frame_equal(careful, fast)
        judgments = read_judgments(path)
        for suffix in ("txt", "jsonl", "json", "csv", "tsv", "parquet", "txt.gz"):
            other = Path(folder) / f"out.{suffix}"
            write_judgments(judgments, other)
            assert_frame_equal(read_judgments(other).frame, judgments.frame)
