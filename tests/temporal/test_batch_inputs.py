"""The batch gives each metric the inputs it takes, and every bad input of a line is an error naming the file and
line (exit 3), never a traceback; invoked through ``gainscope temporal evaluate`` (click's CliRunner)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from .helpers import invoke, write

L3 = math.log2(3)


def run(*args: str) -> tuple[int, dict[str, Any] | str, str]:
    """Exit code, the JSON output (or the raw output when it is not JSON), stderr. A traceback fails the test."""
    code, out, err = invoke(*args)
    try:
        return code, json.loads(out), err
    except json.JSONDecodeError:
        return code, out, err


def per_query(data: dict[str, Any] | str, system: str = "run") -> dict[str, dict[str, float | None]]:
    assert isinstance(data, dict)
    return data["per_query"][system]  # type: ignore[no-any-return]


def test_diversity_and_coverage_from_the_command_line(tmp_path: Path) -> None:
    # no qft: diversity and coverage need the documents' focus times only
    path = write(tmp_path, [
        {"query_id": "q1", "dfts": [[2020], [2019, 2020], [1990]], "total_scope": 10, "anchors": [2019, "2024"]},
        {"query_id": "q2", "dfts": [["2015-2016"]], "scope": "2015-2024", "anchors": ["2010s"]},
    ])
    code, data, err = run("evaluate", path, "-m", "TemporalDiversity@2", "-m", "TemporalCoverage@2", "-f", "json",
                          "-q", "--resamples", "20")
    assert code == 0, err
    # q1: top 2 cover {2019, 2020}: 2 of 10 years; anchor 2019 covered, 2024 not -> 1/2
    # q2: {2015, 2016} of the scope 2015..2024: 2/10; the 2010s anchor is covered -> 1
    assert per_query(data) == {"q1": {"TemporalDiversity@2": 0.2, "TemporalCoverage@2": 0.5},
                               "q2": {"TemporalDiversity@2": 0.2, "TemporalCoverage@2": 1.0}}


def test_lines_with_extras_give_each_metric_its_own_inputs(tmp_path: Path) -> None:
    path = write(tmp_path, [
        # total_relevant is recall's, scope diversity's, anchors coverage's; nDCG takes none of them
        {"query_id": "q1", "qft": [2020], "dfts": [[2020], [2019]], "total_relevant": 4, "scope": "2019-2020",
         "anchors": [2019]},
    ])
    code, data, err = run("evaluate", path, "-m", "TemporalNDCG@2 TemporalRecall@2 TemporalDiversity@2",
                          "-f", "json", "-q", "--resamples", "20")
    assert code == 0, err
    # nDCG: grades 4, 0 -> 1; recall: 1 relevant of total_relevant 4; diversity: {2019, 2020} of the scope -> 1
    assert per_query(data) == {"q1": {"TemporalNDCG@2": 1.0, "TemporalRecall@2": 0.25,
                                      "TemporalDiversity@2": 1.0}}
    assert isinstance(data, dict)
    assert "inputs no metric asked for takes, ignored (1): anchors" in data["notes"]


def test_gold_lines_with_focus_time_extras(tmp_path: Path) -> None:
    # other_dfts is a focus-time input: in gold mode it is ignored (and said so), not an error
    path = write(tmp_path, [{"query_id": "q1", "retrieved_ids": ["a", "b"], "gold": ["b"], "other_dfts": [[2020]],
                             "anchors": [2020]}])
    code, data, err = run("evaluate", path, "-m", "TemporalNDCG@2", "-f", "json", "-q", "--resamples", "20")
    assert code == 0, err
    assert per_query(data) == {"q1": {"TemporalNDCG@2": pytest.approx(1 / L3)}}
    assert isinstance(data, dict)
    assert "inputs no metric asked for takes, ignored (2): other_dfts, anchors" in data["notes"]


def test_a_focus_time_metric_in_gold_mode_is_a_usage_error(tmp_path: Path) -> None:
    path = write(tmp_path, [{"query_id": "q1", "retrieved_ids": ["a"], "gold": ["a"], "anchors": [2020]}])
    code, _, err = run("evaluate", path, "-m", "TemporalCoverage@2")
    assert code == 2 and "TemporalCoverage has no gold mode" in err and "--mode focus-time" in err


@pytest.mark.parametrize(("line", "message"), [
    # a metric's own input checks, reached during the batch
    ({"query_id": "q1", "dfts": [[2020]]}, "TemporalDiversity@2: TemporalDiversity needs a temporal scope"),
    ({"query_id": "q1", "dfts": [[2020]], "total_scope": 0}, "TemporalDiversity@2: total_scope must be an integer"),
    ({"query_id": "q1", "dfts": [[2020]], "scope": "soon"}, "TemporalDiversity@2: scope: 'soon' is not a year"),
])
def test_bad_metric_inputs_name_the_line(tmp_path: Path, line: dict[str, Any], message: str) -> None:
    path = write(tmp_path, [{"query_id": "q0", "dfts": [[2020]], "total_scope": 3}, line])
    code, _, err = run("evaluate", path, "-m", "TemporalDiversity@2")
    assert code == 3 and f"error: {path}:2: {message}" in err, err


@pytest.mark.parametrize(("gold", "extra", "message"), [
    ({"a": -1}, {}, "gold['a']: a grade is a finite number >= 0; got -1"),
    ({"a": "high"}, {}, "gold['a']: a grade is a finite number >= 0; got 'high'"),
    ("a", {}, "gold is a list of document ids or a {id: grade} object; got str 'a'"),
    (5, {}, "gold is a list of document ids or a {id: grade} object; got int 5"),
    ([["a"]], {}, "gold[0]: a document id is a string or a number; got ['a']"),
    (["a"], {"total_relevant": -1}, "TemporalRecall@2: total_relevant must be an integer >= 0; got -1"),
    (["a", "b"], {"total_relevant": 1}, "TemporalRecall@2: total_relevant=1 but 2 relevant documents are in the "
                                        "top 2"),
])
def test_gold_mode_errors_name_the_line(tmp_path: Path, gold: Any, extra: dict[str, Any], message: str) -> None:
    path = write(tmp_path, [{"query_id": "q1", "retrieved_ids": ["a", "b"], "gold": ["a"]},
                            {"query_id": "q2", "retrieved_ids": ["a", "b"], "gold": gold, **extra}])
    code, _, err = run("evaluate", path, "-m", "TemporalRecall@2")
    assert code == 3 and f"error: {path}:2: {message}" in err, err


def test_library_gold_of_the_wrong_type() -> None:
    from gainscope.errors import InputError
    from gainscope.temporal import TemporalNDCG

    with pytest.raises(InputError, match=r"gold_ids is a list of document ids or a \{id: grade\} dict; got int 5"):
        TemporalNDCG().compute(retrieved_ids=["a"], gold_ids=5, k=2)


@pytest.mark.parametrize(("line", "mode"), [
    ({"retrieved": [{"doc_id": "a", "dft": [2020]}, {"doc_id": "a", "dft": [2019]}], "qft": [2020]}, "auto"),
    ({"retrieved_ids": ["a", "b", "a"], "dfts": [[2020], [2019], [2018]], "qft": [2020]}, "focus-time"),
    ({"retrieved_ids": ["a", "a"], "gold": ["a"]}, "gold"),
    ({"query": "2020?", "retrieved": [{"id": "a", "text": "x"}, {"doc_id": "a", "text": "y"}]}, "llm"),
])
def test_duplicate_document_ids_are_rejected_in_every_mode(tmp_path: Path, line: dict[str, Any], mode: str) -> None:
    path = write(tmp_path, [{"query_id": "q0", "qft": [2020], "dfts": [[2020]]}, {"query_id": "q1", **line}])
    code, _, err = run("evaluate", path, "--mode", mode, "--model", "m")
    assert code == 3 and f"error: {path}:2: document 'a' is retrieved twice" in err, err


def test_auto_mode_with_gold_on_some_lines_names_the_line_without(tmp_path: Path) -> None:
    path = write(tmp_path, [{"query_id": "q1", "retrieved_ids": ["a"], "gold": ["a"]},
                            {"query_id": "q2", "retrieved_ids": ["a"]},
                            {"query_id": "q3", "retrieved_ids": ["a"], "gold": {"a": 2}}])
    code, _, err = run("evaluate", path)
    assert code == 3, err
    assert f"error: {path}:2: query 'q2' has no gold while 2 other lines have gold; give gold on every line, or " \
           "--mode focus-time (gold is then ignored)" in err
    # every line with focus times: --mode focus-time evaluates them, the gold of q1 and q3 left aside
    path = write(tmp_path, [{"query_id": "q1", "qft": [2020], "dfts": [[2020]], "gold": ["a"]},
                            {"query_id": "q2", "qft": [2020], "dfts": [[2019]]}])
    code, data, err = run("evaluate", path, "--mode", "focus-time", "-f", "json", "-q", "--resamples", "20")
    assert code == 0 and per_query(data) == {"q1": {"TemporalNDCG@10": 1.0}, "q2": {"TemporalNDCG@10": 0.0}}


def test_the_batch_resolves_against_the_full_reference_date(tmp_path: Path) -> None:
    path = write(tmp_path, [
        {"query_id": "q1", "query": "What happened yesterday?", "dfts": [[2023], [2024]]},
        {"query_id": "q2", "query": "Sales two months ago", "reference_date": "2024-03-15", "dfts": [[2023], [2024]]},
    ])
    # q1 against --reference-date 2024-01-01: 2023; q2 against its own 2024-03-15: 2024
    code, data, err = run("evaluate", path, "--reference-date", "2024-01-01", "-m", "TemporalMRR@2", "-f", "json",
                          "-q", "--resamples", "20")
    assert code == 0, err
    assert per_query(data) == {"q1": {"TemporalMRR@2": 1.0}, "q2": {"TemporalMRR@2": 0.5}}


def test_a_relative_expression_without_reference_points_at_the_command_line_fixes(tmp_path: Path) -> None:
    path = write(tmp_path, [{"query_id": "q1", "qft": [2020], "dfts": [[2020]]},
                            {"query_id": "q2", "query": "What was inflation last year?", "dfts": [[2020]]}])
    code, _, err = run("evaluate", path)
    assert code == 3, err
    assert f"error: {path}:2: the query text has 'last year' (characters 19-28), a relative time expression, and " \
           "there is no reference date to resolve it against (the current date is never used); give " \
           "--reference-date YYYY-MM-DD, a \"reference_date\" on the line, or --unresolved report to give it no " \
           "years (listed in the notes)" in err
    path = write(tmp_path, [{"query_id": "q1", "qft": [2023],
                             "retrieved": [{"doc_id": "a", "dft": [2023]},
                                           {"doc_id": "b", "text": "Sales fell last year."}]}])
    code, _, err = run("evaluate", path)
    assert code == 3 and f"error: {path}:1: retrieved document 'b' (rank 2) has 'last year' (characters 11-20)" in err
    assert "a \"publication_year\" on the document" in err
    # --unresolved report: no years from it, and said so
    code, data, err = run("evaluate", path, "--unresolved", "report", "-m", "TemporalPrecision@2", "-f", "json", "-q",
                          "--resamples", "20")
    assert code == 0 and per_query(data) == {"q1": {"TemporalPrecision@2": 0.5}}
    assert isinstance(data, dict)
    assert "relative expressions without a reference date, given no years (1): q1 document b 'last year'" in \
        data["notes"]
