"""DataFrames (polars, pandas), pyarrow tables, dicts and ready-made objects as input; pandas and pyarrow stay
optional."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

from gainscope.core.judgments import Judgments
from gainscope.core.run import Run
from gainscope.errors import (
    FormatError,
    InconsistentInputError,
    InputError,
    InputWarning,
    PolicyError,
    UnknownFormatError,
)
from gainscope.io import read_judgments, read_run


# ---------------------------------------------------------------------- ready-made objects
def test_judgments_and_runs_are_returned_as_is() -> None:
    judgments = Judgments.from_dict({"q": {"d": 1}})
    run = Run.from_dict({"q": {"d": 0.5}})
    assert read_judgments(judgments) is judgments
    assert read_run(run) is run


def test_wrong_source_types() -> None:
    message = ("cannot read judgments from a list; give a path, a binary file object, a polars or pandas "
               "DataFrame, a pyarrow Table, a dict {query_id: {doc_id: grade}} or a Judgments")
    with pytest.raises(InputError, match=re.escape(message)):
        read_judgments([("q", "d", 1)])
    with pytest.raises(InputError, match=re.escape("cannot read a run from a Judgments")):
        read_run(Judgments.from_dict({"q": {"d": 1}}))


def test_options_are_checked() -> None:
    with pytest.raises(PolicyError, match=re.escape("on_conflict must be one of 'error', 'max', 'min', "
                                                    "'first', 'last'; got 'mean'")):
        read_judgments({"q": {"d": 1}}, on_conflict="mean")
    with pytest.raises(PolicyError, match=re.escape("on_duplicate must be one of 'error', 'first', 'max'")):
        read_run({"q": {"d": 1.0}}, on_duplicate="last")
    with pytest.raises(PolicyError, match=re.escape("nan_score must be 'error' or a number to put in "
                                                    "place of NaN scores (for example '-inf'); got 'low'")):
        read_run({"q": {"d": 1.0}}, nan_score="low")
    with pytest.raises(PolicyError, match=re.escape("normalize_ids must be None or one of 'NFC', 'NFKC', "
                                                    "'NFD', 'NFKD'; got 'nfx'")):
        read_run({"q": {"d": 1.0}}, normalize_ids="nfx")
    with pytest.raises(PolicyError, match=re.escape("scale must be a pair of numbers")):
        read_judgments({"q": {"d": 1}}, scale=(3, 0))
    with pytest.raises(UnknownFormatError, match=re.escape("unknown encoding 'utf9'")):
        read_judgments("whatever.txt", encoding="utf9")


# ---------------------------------------------------------------------- dicts
def test_judgment_dicts() -> None:
    judgments = read_judgments({"q1": {"a": 2, "b": 0.0}, 7: ["c", "d"]})
    assert judgments.to_dict() == {"q1": {"a": 2, "b": 0}, "7": {"c": 1, "d": 1}}
    with pytest.raises(FormatError, match=re.escape("relevance must be an integer; got '0.5' for query "
                                                    "'q', doc 'x'; use float_grades=True")):
        read_judgments({"q": {"x": 0.5}})
    assert read_judgments({"q": {"x": 0.5}}, float_grades=True).to_dict() == {"q": {"x": 0.5}}


def test_run_dicts() -> None:
    assert read_run({"q": {"a": 0.5, "b": 2}}).to_dict() == {"q": {"a": 0.5, "b": 2.0}}
    ranked = read_run({"q": ["a", "b"]})
    assert ranked.frame.select("doc_id", "rank").rows() == [("a", 1), ("b", 2)]
    with pytest.raises(InconsistentInputError, match=re.escape("duplicate doc 'a' for query 'q' (1 "
                                                               "duplicate row(s) in all)")):
        read_run({"q": ["a", "b", "a"]})
    with pytest.raises(InputError, match=re.escape("a run must give either scores for every query")):
        read_run({"q": {"a": 1.0}, "r": ["b"]})
    with pytest.raises(InputError, match=re.escape("the entry of query 'q' must be a mapping doc -> score "
                                                   "or a list of doc ids; got a string 'abc'")):
        read_run({"q": "abc"})
    with pytest.raises(FormatError, match=re.escape("score is NaN for query 'q', doc 'a'")):
        read_run({"q": {"a": float("nan")}})


def test_dict_with_bad_ids_and_values() -> None:
    with pytest.raises(InputError, match=re.escape("a doc id of query 'q' must be a string or an integer; "
                                                   "got 1.5")):
        read_judgments({"q": {1.5: 1}})
    with pytest.raises(FormatError, match=re.escape("relevance must be an integer; got 'true'")):
        read_judgments({"q": {"a": True}})
    with pytest.raises(InconsistentInputError, match=re.escape("the judgments are empty (0 rows)")):
        read_judgments({})


# ---------------------------------------------------------------------- polars
def test_polars_frames_with_aliases() -> None:
    frame = pl.DataFrame({"qid": ["001", "001"], "docno": ["a", "b"], "label": [2, 0], "judge": ["x", "y"]})
    judgments = read_judgments(frame)
    assert judgments.to_dict() == {"001": {"a": 2, "b": 0}}
    assert judgments.provenance_columns == ["judge"]
    run = read_run(pl.DataFrame({"query_id": [1, 1], "doc_id": ["a", "b"], "score": [0.5, 0.25],
                                 "rank": [1, 2]}))
    assert run.frame.rows() == [("1", "a", 0.5, 1), ("1", "b", 0.25, 2)]


def test_polars_lazy_frames() -> None:
    lazy = pl.LazyFrame({"qid": ["q"], "docno": ["a"], "sim": [0.5]})
    assert read_run(lazy).to_dict() == {"q": {"a": 0.5}}


def test_polars_frame_errors_name_the_row() -> None:
    frame = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", None], "relevance": [1, 0]})
    message = "row 2: missing doc id (with query id 'q'); every entry needs a query id and a doc id"
    with pytest.raises(FormatError, match=re.escape(message)) as info:
        read_judgments(frame)
    assert info.value.line == 2
    strings = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": ["high"]})
    with pytest.raises(FormatError, match=re.escape("row 1: score must be a number; got 'high'")):
        read_run(strings)
    typed = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [[1]]})
    with pytest.raises(InputError, match=re.escape("the relevance column has type List(Int64)")):
        read_judgments(typed)


def test_polars_missing_column() -> None:
    message = ("no doc id column; accepted names: doc_id, docno, docid, corpus-id, pid, _id, doc (columns "
               "found: ['query_id', 'relevance'])")
    with pytest.raises(UnknownFormatError, match=re.escape(message)):
        read_judgments(pl.DataFrame({"query_id": ["q"], "relevance": [1]}))


def test_float_grade_columns_with_whole_values_are_integers() -> None:
    frame = pl.DataFrame({"query-id": ["q", "q"], "corpus-id": ["a", "b"], "score": [1.0, 0.0]})
    judgments = read_judgments(frame)
    assert judgments.frame.schema["grade"] == pl.Int64
    assert read_judgments(frame, float_grades=True).frame.schema["grade"] == pl.Float64


# ---------------------------------------------------------------------- pandas
def test_pandas_frames() -> None:
    frame = pd.DataFrame({"qid": ["001", "001"], "docno": ["a", "b"], "score": [0.5, float("nan")]})
    with pytest.raises(FormatError, match=re.escape("row 2: score is NaN for query '001', doc 'b'")):
        read_run(frame)
    run = read_run(frame, nan_score=-1.0)
    assert run.to_dict() == {"001": {"a": 0.5, "b": -1.0}}
    assert run.notes == ("1 NaN score(s) replaced with -1 (nan_score='-1')",)
    judgments = read_judgments(pd.DataFrame({"query": [1, 2], "doc": ["x", "y"], "rel": [1, 0]}))
    assert judgments.to_dict() == {"1": {"x": 1}, "2": {"y": 0}}


def test_pandas_mixed_object_ids_and_index() -> None:
    frame = pd.DataFrame({"doc_id": ["a", "b"], "relevance": [1, 2]},
                         index=pd.Index(["q1", 2], name="query_id", dtype=object))
    assert read_judgments(frame).to_dict() == {"q1": {"a": 1}, "2": {"b": 2}}


def test_pandas_float_ids_are_refused() -> None:
    frame = pd.DataFrame({"qid": [1.0, None], "docno": ["a", "b"], "label": [1, 0]})
    message = ("the query id column holds floats (Float64); ids must be strings (floats usually mean "
               "missing values or ids already turned into numbers)")
    with pytest.raises(InputError, match=re.escape(message)):
        read_judgments(frame)


# ---------------------------------------------------------------------- pyarrow
def test_pyarrow_tables_and_batches_read_as_their_polars_twins() -> None:
    pa = pytest.importorskip("pyarrow")
    run = pl.DataFrame({"qid": ["001", "001", "002"], "docno": ["a", "b", "a"], "score": [0.5, 0.25, 1.0]})
    for source in (run.to_arrow(), run.to_arrow().to_batches()[0]):
        assert read_run(source).to_dict() == read_run(run).to_dict() == {"001": {"a": 0.5, "b": 0.25},
                                                                          "002": {"a": 1.0}}
    judgments = pa.table({"query": [1, 2], "doc": ["x", "y"], "rel": [1, 0]})  # integer ids become text
    assert read_judgments(judgments).to_dict() == {"1": {"x": 1}, "2": {"y": 0}}
    bad = pa.table({"qid": ["q", "q"], "docno": ["a", "b"], "score": [0.5, float("nan")]})
    with pytest.raises(FormatError, match=re.escape("row 2: score is NaN for query 'q', doc 'b'")):
        read_run(bad)


def test_pyarrow_is_not_imported_by_gainscope_io() -> None:
    code = "import sys, gainscope.io, gainscope.io.scan; print('pyarrow' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_a_parquet_run_is_evaluated_without_importing_pandas(tmp_path: Path) -> None:
    """pyarrow imports pandas when asked to convert Python or numpy values (a third of a second): the Parquet
    path, score-only and rank-only, never asks."""
    for values in ({"score": [2.0, 1.0, 1.0]}, {"rank": [1, 2, 1]}):
        pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], **values}).write_parquet(
            tmp_path / "run.parquet")
        code = ("import sys, gainscope; from gainscope.io.arrow_tables import parquet_run, pieces; "
                f"path = {str(tmp_path / 'run.parquet')!r}; "
                "print(len(list(pieces(parquet_run(path, path, 'run')))), 'pandas' in sys.modules)")
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert result.stdout.split() == ["2", "False"], result


def test_non_nfc_ids_in_frames_warn() -> None:
    frame = pl.DataFrame({"query_id": ["q"], "doc_id": ["cafe\u0301"], "relevance": [1]})
    with pytest.warns(InputWarning, match=re.escape("1 distinct doc id(s) are not in Unicode NFC form")):
        read_judgments(frame)


def test_pandas_is_not_imported_by_gainscope_io() -> None:
    code = "import sys, gainscope.io; print('pandas' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_an_id_with_a_lone_surrogate_is_an_input_error_naming_where_it_is() -> None:
    # Python strings may hold lone surrogates (errors="surrogateescape"); Arrow and polars refuse them with a raw
    # UnicodeEncodeError, which used to escape as a traceback
    from gainscope.io import read_judgments, read_run

    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d2", "d\ud800"], "score": [1.0, 0.5]}, dtype=object)
    frame["score"] = frame["score"].astype(float)
    with pytest.raises(InputError, match=r"^column 'doc_id', row 2: 'd\\ud800' is not valid Unicode text: it holds "
                                         r"a lone surrogate \(U\+D800\) at character 2; decode the bytes"):
        read_run(frame)
    with pytest.raises(InputError, match=r"^a doc id of query 'q1' 'd\\ud800' is not valid Unicode text"):
        read_run({"q1": {"d\ud800": 1.0}})
    with pytest.raises(InputError, match=r"^a query id 'q\\udcff' is not valid Unicode text: .*\(U\+DCFF\)"):
        read_judgments({"q\udcff": {"d1": 1}})
