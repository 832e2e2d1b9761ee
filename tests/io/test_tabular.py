"""CSV, TSV, BEIR and Parquet tables: column aliases, ids as strings, errors listing the columns."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from tests.helpers import write

from gainscope.errors import FormatError, InconsistentInputError, UnknownFormatError
from gainscope.io import read_judgments, read_run


@pytest.mark.parametrize(("header", "sep", "suffix"), [
    ("query_id,doc_id,relevance", ",", "csv"),
    ("qid,docno,label", ",", "csv"),
    ("query,docid,rating", ",", "csv"),
    ("Topic,DOC,Gain", ",", "csv"),
    ("q_id\tpid\tgrade", "\t", "tsv"),
    ("query-id\tcorpus-id\tscore", "\t", "tsv"),
    ("query_id\t_id\trel", "\t", "tsv"),
])
def test_judgment_column_aliases(tmp_path: Path, header: str, sep: str, suffix: str) -> None:
    rows = sep.join(["001", "d1", "2"]) + "\n" + sep.join(["001", "d2", "0"]) + "\n"
    judgments = read_judgments(write(tmp_path, f"j.{suffix}", header + "\n" + rows))
    assert judgments.to_dict() == {"001": {"d1": 2, "d2": 0}}


def test_beir_qrels(tmp_path: Path) -> None:
    path = write(tmp_path, "test.tsv", "query-id\tcorpus-id\tscore\n0001\t5\t1\n0001\t07\t2\n")
    judgments = read_judgments(path)
    assert judgments.to_dict() == {"0001": {"5": 1, "07": 2}}
    assert read_judgments(path, format="beir").frame.equals(judgments.frame)


def test_run_csv_with_scores_ranks_and_aliases(tmp_path: Path) -> None:
    run = read_run(write(tmp_path, "bm25.csv", "qid,docno,score,rank\nq1,d1,0.5,1\nq1,d2,0.25,2\n"))
    assert run.name == "bm25"
    assert run.frame.rows() == [("q1", "d1", 0.5, 1), ("q1", "d2", 0.25, 2)]
    ranked = read_run(write(tmp_path, "r.tsv", "query_id\tdoc_id\trank\nq1\td1\t1\n"))
    assert not ranked.has_scores and ranked.has_ranks
    similar = read_run(write(tmp_path, "s.csv", "topic,pid,similarity\nq1,d1,0.3\n"))
    assert similar.to_dict() == {"q1": {"d1": 0.3}}


def test_quoted_fields_and_spaces_around_numbers(tmp_path: Path) -> None:
    content = 'query_id,doc_id,relevance\n"q,1","d ""x""", 2 \n'
    assert read_judgments(write(tmp_path, "j.csv", content)).to_dict() == {"q,1": {'d "x"': 2}}


def test_quepid_ratings_export(tmp_path: Path) -> None:
    content = "\ufeffquery,docid,rating\nstar wars,doc1,3\nstar trek,,\nstar wars,doc2,0"  # no final LF
    judgments = read_judgments(write(tmp_path, "ratings.csv", content))
    assert judgments.to_dict() == {"star wars": {"doc1": 3, "doc2": 0}}
    assert judgments.notes == ("1 row(s) with neither doc id nor relevance skipped (queries without "
                               "ratings)",)


def test_provenance_columns_are_kept(tmp_path: Path) -> None:
    content = "query_id,iteration,doc_id,relevance,judge\nq1,0,d1,1,alice\nq1,0,d2,0,bob\n"
    judgments = read_judgments(write(tmp_path, "j.csv", content))
    assert judgments.provenance_columns == ["judge"]
    assert judgments.frame["judge"].to_list() == ["alice", "bob"]


def test_canonical_column_wins_over_an_alias(tmp_path: Path) -> None:
    content = "query_id,query,doc_id,relevance,score\nq1,star wars,d1,2,0.7\n"
    judgments = read_judgments(write(tmp_path, "j.csv", content))
    assert judgments.to_dict() == {"q1": {"d1": 2}}


def test_ambiguous_column_lists_columns(tmp_path: Path) -> None:
    path = write(tmp_path, "j.csv", "qid,topic,doc_id,relevance\nq1,t,d1,1\n")
    message = (f"{path}: ambiguous query id column: ['qid', 'topic'] all match; keep one, or rename the "
               "right one to 'query_id' (columns found: ['qid', 'topic', 'doc_id', 'relevance']; accepted "
               "names: query_id, qid, query-id, q_id, query, topic)")
    with pytest.raises(UnknownFormatError, match=re.escape(message)):
        read_judgments(path)


def test_missing_column_lists_accepted_names(tmp_path: Path) -> None:
    path = write(tmp_path, "j.csv", "query_id,doc_id,value\nq1,d1,1\n")
    message = (f"{path}: no relevance column; accepted names: relevance, rel, grade, label, rating, gain, "
               "score (columns found: ['query_id', 'doc_id', 'value'])")
    with pytest.raises(UnknownFormatError, match=re.escape(message)):
        read_judgments(path)
    run_path = write(tmp_path, "r.csv", "query_id,doc_id,relevance\nq1,d1,1\n")
    message = (f"{run_path}: no score or rank column; accepted names: score, sim, similarity, rank (columns "
               "found: ['query_id', 'doc_id', 'relevance'])")
    with pytest.raises(UnknownFormatError, match=re.escape(message)):
        read_run(run_path)


def test_headerless_table(tmp_path: Path) -> None:
    path = write(tmp_path, "j.csv", "q1,d1,1\nq1,d2,0\n")
    message = (f"{path}: the first line must be a header naming the columns (for example "
               "'query_id,doc_id,relevance'); got ['q1', 'd1', '1'] (for whitespace-separated TREC files "
               "use format='trec')")
    with pytest.raises(UnknownFormatError, match=re.escape(message)):
        read_judgments(path)


def test_bad_values_name_the_row(tmp_path: Path) -> None:
    path = write(tmp_path, "r.csv", "query_id,doc_id,score\nq1,d1,0.5\nq1,d2,\"0,5\"\n")
    message = (f"{path}: row 2: score must be a number; got '0,5' for query 'q1', doc 'd2': decimal commas "
               "are not accepted, write '0.5'")
    with pytest.raises(FormatError, match=re.escape(message)) as info:
        read_run(path)
    assert (info.value.path, info.value.line) == (str(path), 2)
    empty = write(tmp_path, "e.csv", "query_id,doc_id,score\nq1,,0.5\n")
    message = (f"{empty}: row 1: missing doc id (with query id 'q1'); every entry needs a query id and a doc "
               "id")
    with pytest.raises(FormatError, match=re.escape(message)):
        read_run(empty)


def test_duplicates_name_the_rows(tmp_path: Path) -> None:
    path = write(tmp_path, "r.csv", "query_id,doc_id,score\nq1,d1,0.5\nq1,d2,0.4\nq1,d1,0.3\n")
    message = f"{path}: row 3: duplicate doc 'd1' for query 'q1' (rows 1 and 3; 1 duplicate row(s) in all)"
    with pytest.raises(InconsistentInputError, match=re.escape(message)):
        read_run(path)


def test_ragged_csv(tmp_path: Path) -> None:
    path = write(tmp_path, "j.csv", "query_id,doc_id,relevance\nq1,d1,1,extra,more\n")
    with pytest.raises(FormatError, match=re.escape(f"{path}: cannot read as CSV: ")):
        read_judgments(path)


def test_empty_and_header_only_tables(tmp_path: Path) -> None:
    for content in ("", "query_id,doc_id,relevance\n"):
        path = write(tmp_path, "j.csv", content)
        with pytest.raises(InconsistentInputError, match=re.escape(f"{path}: no judgments found")):
            read_judgments(path)
        assert len(read_judgments(path, allow_empty=True)) == 0


def test_parquet_keeps_types_and_converts_integer_ids(tmp_path: Path) -> None:
    path = tmp_path / "qrels.parquet"
    frame = pl.DataFrame({"query-id": [1, 1, 2], "corpus-id": ["a", "b", "c"], "score": [1.0, 0.0, 2.0]})
    frame.write_parquet(path)
    judgments = read_judgments(path)
    assert judgments.to_dict() == {"1": {"a": 1, "b": 0}, "2": {"c": 2}}
    assert judgments.frame.schema["grade"] == pl.Int64


def test_parquet_fractional_grades_and_nan_scores(tmp_path: Path) -> None:
    path = tmp_path / "j.parquet"
    pl.DataFrame({"qid": ["q"], "docno": ["d"], "label": [0.5]}).write_parquet(path)
    with pytest.raises(FormatError, match=re.escape(f"{path}: row 1: relevance must be an integer; got 0.5")):
        read_judgments(path)
    assert read_judgments(path, float_grades=True).to_dict() == {"q": {"d": 0.5}}
    run_path = tmp_path / "r.parquet"
    frame = pl.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"], "score": [1.0, float("nan")]})
    frame.write_parquet(run_path)
    message = f"{run_path}: row 2: score is NaN for query 'q', doc 'b'"
    with pytest.raises(FormatError, match=re.escape(message)):
        read_run(run_path)


def test_parquet_errors(tmp_path: Path) -> None:
    path = write(tmp_path, "x.parquet", b"PAR1 not really")
    with pytest.raises(FormatError, match=re.escape(f"{path}: cannot read as Parquet: ")):
        read_judgments(path)
    floats = tmp_path / "f.parquet"
    pl.DataFrame({"qid": [1.0], "docno": ["d"], "label": [1]}).write_parquet(floats)
    message = (f"{floats}: the query id column holds floats (Float64); ids must be strings (floats usually "
               "mean missing values or ids already turned into numbers)")
    with pytest.raises(Exception, match=re.escape(message)):
        read_judgments(floats)


def test_latin1_csv(tmp_path: Path) -> None:
    path = write(tmp_path, "j.csv", "query_id,doc_id,relevance\nq1,caf\u00e9,1\n".encode("latin-1"))
    with pytest.raises(FormatError, match=re.escape(f"{path}:2: cannot decode byte 0xe9 at byte offset 32")):
        read_judgments(path)
    assert read_judgments(path, encoding="latin-1").to_dict() == {"q1": {"caf\u00e9": 1}}
