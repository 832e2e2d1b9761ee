"""A temporal batch whose inputs match nothing is an error, never a table of zeros; a system they match nothing
for, or that shares only some queries with the baseline, is a warning (gainscope.temporal.overlap)."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest

from gainscope.errors import InconsistentInputError, InputWarning, QueryCoverageWarning
from gainscope.temporal.batch import evaluate_records, read_records

from .helpers import invoke, write


def evaluate(tmp_path: Path, lines: list[dict[str, Any]], metrics: list[str], **kw: Any) -> Any:
    path = write(tmp_path, lines)
    return evaluate_records(read_records(path), metrics, path=path, **kw)


# ------------------------------------------------------------------------------------------------ gold
def test_gold_that_no_line_retrieves_is_refused(tmp_path: Path) -> None:
    # the gold uses other ids than the rankings: every value was 0 (nDCG, precision) with exit 0
    lines = [{"query_id": "q1", "retrieved_ids": ["doc-1", "doc-2"], "gold": ["D1", "D9"]},
             {"query_id": "q2", "retrieved_ids": ["doc-3"], "gold": {"D3": 2}}]
    with pytest.raises(InconsistentInputError) as info:
        evaluate(tmp_path, lines, ["TemporalNDCG@10", "TemporalPrecision@10"])
    assert str(info.value) == (
        f"{tmp_path / 'runs.jsonl'}: no retrieved document is in the gold of its line, on any of the 2 lines it "
        "applies to (e.g. line 1 (query 'q1'): gold D1, D9; retrieved doc-1, doc-2); every value of "
        "TemporalNDCG@10, TemporalPrecision@10 would be 0 or undefined. Check that the gold and the rankings spell "
        "document ids the same.")


def test_gold_near_ids_are_named(tmp_path: Path) -> None:
    lines = [{"query_id": "q1", "retrieved_ids": ["007", "8"], "gold": ["7"]}]
    with pytest.raises(InconsistentInputError, match=re.escape(
            "Some ids match after removing whitespace and leading zeros (for example '007' and '7'); fix the ids so "
            "that the gold and the rankings spell them the same.")):
        evaluate(tmp_path, lines, ["TemporalMRR@10"])


def test_gold_lines_it_cannot_apply_to_are_left_out(tmp_path: Path) -> None:
    # q2 has an empty gold (undefined: the undefined policy says so) and q3 retrieved nothing; q1 matches
    lines = [{"query_id": "q1", "retrieved_ids": ["a"], "gold": ["a"]},
             {"query_id": "q2", "retrieved_ids": ["b"], "gold": []},
             {"query_id": "q3", "retrieved_ids": [], "gold": ["c"]}]
    ev = evaluate(tmp_path, lines, ["TemporalPrecision@10"], undefined="skip")
    assert ev.per_query("run", "TemporalPrecision@10")["q1"] == 1.0
    # nothing but those: nothing the join applies to, so nothing to refuse (the values are undefined, not 0)
    ev = evaluate(tmp_path, lines[1:2], ["TemporalNDCG@10"], undefined="skip")
    assert math.isnan(ev.per_query("run", "TemporalNDCG@10")["q2"])


def test_a_system_that_matches_nothing_is_warned_about(tmp_path: Path) -> None:
    lines = [{"query_id": "q1", "system": "bm25", "retrieved_ids": ["a", "b"], "gold": ["a"]},
             {"query_id": "q1", "system": "dense", "retrieved_ids": ["A", "B"], "gold": ["a"]}]
    with pytest.warns(InputWarning) as caught:
        ev = evaluate(tmp_path, lines, ["TemporalPrecision@2"])
    assert [str(w.message) for w in caught] == [
        f"{tmp_path / 'runs.jsonl'}: system 'dense': no retrieved document is in the gold of its line, on its one "
        "line (e.g. line 2 (query 'q1'): gold a; retrieved A, B), while other systems match; its values of "
        "TemporalPrecision@2 are 0 or undefined. Check that the gold and the rankings spell document ids the same."]
    assert ev.per_query("dense", "TemporalPrecision@2") == {"q1": 0.0}


# ------------------------------------------------------------------------------------------------ focus times
def test_focus_times_that_share_no_year_are_refused(tmp_path: Path) -> None:
    lines = [{"query_id": "q1", "qft": [2020], "retrieved_ids": ["a", "b"], "dfts": [[1990], "2001-2003"]},
             {"query_id": "q2", "qft": "1980s", "retrieved_ids": ["c"], "dfts": [[]]}]
    with pytest.raises(InconsistentInputError) as info:
        evaluate(tmp_path, lines, ["TemporalPrecision@10", "TemporalYearRecall@10"])
    assert str(info.value) == (
        f"{tmp_path / 'runs.jsonl'}: no retrieved document's focus time shares a year with its query's focus time, on "
        "any of the 2 lines it applies to (e.g. line 1 (query 'q1'): qft {2020}; documents a: {1990}, b: "
        "{2001-2003}); every value of TemporalPrecision@10, TemporalYearRecall@10 would be 0 or undefined. "
        "--show-focus-times shows the focus times every line was evaluated with.")


def test_documents_without_focus_times_are_named_as_the_cause(tmp_path: Path) -> None:
    # the texts have no years: nothing was extracted, every Jaccard was 0
    lines = [{"query_id": "q1", "query": "the 2020 election", "retrieved": [
        {"doc_id": "a", "text": "A long report."}, {"doc_id": "b", "text": "Another one."}]}]
    with pytest.raises(InconsistentInputError, match=re.escape(
            "(e.g. line 1 (query 'q1'): qft {2020}; documents a: no years, b: no years); every value of "
            "TemporalNDCG@10 would be 0 or undefined. No retrieved document has a focus time: give each a \"dft\", "
            "or a \"text\" with years; --show-focus-times shows what every line was evaluated with.")):
        evaluate(tmp_path, lines, ["TemporalNDCG@10"])


def test_empty_query_focus_times_are_left_to_the_undefined_policy(tmp_path: Path) -> None:
    # an empty QFT makes the value undefined (warned as such), not a failed join
    lines = [{"query_id": "q1", "qft": [], "retrieved_ids": ["a"], "dfts": [[2000]]}]
    ev = evaluate(tmp_path, lines, ["TemporalYearRecall@5"], undefined="skip")
    assert ev.reasons["run"][("q1", "TemporalYearRecall@5")] == "the query has no focus time (an empty QFT)"


def test_anchors_and_scope_that_nothing_covers_are_refused(tmp_path: Path) -> None:
    lines = [{"query_id": "q1", "retrieved_ids": ["a"], "dfts": [[2001]], "anchors": ["1990s", [1985]],
              "scope": "1950-1969"}]
    with pytest.raises(InconsistentInputError, match=re.escape(
            "no retrieved document's focus time shares a year with an anchor of its line, on the one line it "
            "applies to (e.g. line 1 (query 'q1'): anchors {1990-1999}, {1985}; documents a: {2001}); every value "
            "of TemporalCoverage@3 would be 0 or undefined.")):
        evaluate(tmp_path, lines, ["TemporalCoverage@3"])
    with pytest.raises(InconsistentInputError, match=re.escape(
            "no retrieved document's years fall in the scope of its line, on the one line it applies to (e.g. "
            "line 1 (query 'q1'): scope 1950-1969; documents a: {2001}); every value of "
            "TemporalDiversity(granularity=10)@3 would be 0 or undefined.")):
        evaluate(tmp_path, lines, ["TemporalDiversity(granularity=10)@3"])
    # by decade, 2001 is in the scope 2000-2009 though not a year of it: the bucket is what diversity counts
    lines[0]["scope"] = "2005-2009"
    ev = evaluate(tmp_path, lines, ["TemporalDiversity(granularity=10)@3"])
    assert ev.per_query("run", "TemporalDiversity(granularity=10)@3") == {"q1": 1.0}
    # with total_scope the join is whether any document has a focus time
    lines = [{"query_id": "q1", "retrieved_ids": ["a"], "dfts": [[]], "total_scope": 3}]
    with pytest.raises(InconsistentInputError, match=re.escape("(query 'q1'): total_scope 3; documents a: no years)")):
        evaluate(tmp_path, lines, ["TemporalDiversity@3"])


# ------------------------------------------------------------------------------------------------ systems
def test_systems_that_share_no_query_are_refused(tmp_path: Path) -> None:
    lines = [{"query_id": "q1", "system": "a", "retrieved_ids": ["d1"], "gold": ["d1"]},
             {"query_id": "q2", "system": "a", "retrieved_ids": ["d2"], "gold": ["d2"]},
             {"query_id": "Q1", "system": "b", "retrieved_ids": ["d1"], "gold": ["d1"]}]
    with pytest.raises(InconsistentInputError) as info:
        evaluate(tmp_path, lines, ["TemporalNDCG@10"])
    assert str(info.value) == (f"{tmp_path / 'runs.jsonl'}: system 'b' and the baseline 'a' share no query, so nothing "
                               "can be compared: 'a' has q1, q2; 'b' has Q1.")
    lines[2]["query_id"] = "q1"
    with pytest.warns(QueryCoverageWarning) as caught:
        evaluate(tmp_path, lines, ["TemporalNDCG@10"])
    assert [str(w.message) for w in caught] == [
        f"{tmp_path / 'runs.jsonl'}: system 'b' and the baseline 'a' rank different queries; they are compared over "
        "the 1 they share (only 'a' has q2)"]


# ------------------------------------------------------------------------------------------------ CLI
def test_cli_exit_3_and_warning(tmp_path: Path) -> None:
    path = write(tmp_path, [{"query_id": "q1", "retrieved_ids": ["x"], "gold": ["y"]}])
    code, out, err = invoke("evaluate", path)
    assert code == 3 and out == ""
    assert err.startswith(f"error: {path}: no retrieved document is in the gold of its line")
    path = write(tmp_path, [{"query_id": "q1", "system": "s1", "retrieved_ids": ["y"], "gold": ["y"]},
                            {"query_id": "q1", "system": "s2", "retrieved_ids": ["x"], "gold": ["y"]}])
    code, out, err = invoke("evaluate", path, "-f", "json")
    assert code == 0 and f"warning: {path}: system 's2': no retrieved document is in the gold" in err
