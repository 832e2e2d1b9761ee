"""Every convention that changes a number is printed with the results; the extracted focus times can be shown."""

from __future__ import annotations

import json
from pathlib import Path

from .helpers import invoke, write

LINES = [
    {"query_id": "q1", "qft": [2020], "retrieved": [{"doc_id": "a", "dft": [2019]}, {"doc_id": "b", "dft": [2020]}]},
    {"query_id": "q2", "query": "What happened last year?", "reference_date": "2024-06-01",
     "retrieved": [{"doc_id": "c", "text": "Published 2024. In 2023 prices rose."},
                   {"doc_id": "d", "text": "2000 items sold"}]},
]


METRICS = ("-m", "TemporalNDCG@2 TemporalPrecision(denominator=k)@2 TemporalRecall@2 TemporalMRR@2 TemporalMAP@2",
           "--resamples", "20")


def test_the_table_prints_each_metric_conventions(tmp_path: Path) -> None:
    code, out, err = invoke("evaluate", write(tmp_path, LINES), *METRICS)
    assert code == 0, err
    lines = [" ".join(x.split()) for x in out.splitlines()]
    assert "TemporalNDCG@2 grades: 4 x Jaccard(QFT, DFT); gain linear (g); ideal judged (the 2 best grades of every " \
           "judged document)" in lines
    assert "TemporalPrecision(denominator=k)@2 relevant: Jaccard(QFT, DFT) > 0 (min_jaccard); denominator k (2)" \
        in lines
    assert "TemporalRecall@2 relevant: Jaccard(QFT, DFT) > 0 (min_jaccard); R: total_relevant when given, else the " \
           "relevant judged documents" in lines
    assert "TemporalMRR@2 relevant: Jaccard(QFT, DFT) > 0 (min_jaccard); 0 when none is in the top 2" in lines
    assert "TemporalMAP@2 relevant: Jaccard(QFT, DFT) > 0 (min_jaccard); denominator judged (R, the relevant " \
           "judged documents)" in lines


def test_gold_mode_conventions_and_json_policies(tmp_path: Path) -> None:
    path = write(tmp_path, [{"query_id": "q1", "retrieved_ids": ["a", "b"], "gold": {"b": 2}}])
    code, out, err = invoke("evaluate", path, "-m", "TemporalNDCG(gain=exponential)@2 TemporalPrecision(rel=2)@2",
                            "-f", "json", "--resamples", "20")
    assert code == 0, err
    data = json.loads(out)
    conventions = data["conventions"]
    assert conventions["TemporalNDCG(gain=exponential)@2"] == (
        "grades: the gold grades (0 for a document not in the gold); gain exponential (2^g - 1); ideal judged "
        "(the 2 best grades of every judged document)")
    assert conventions["TemporalPrecision(rel=2)@2"] == "relevant: gold grade >= 2 (rel); denominator retrieved " \
                                                        "(min(2, documents retrieved))"
    # the comparison's trec_eval policies (relevance_level 1, ties ...) do not apply: the temporal conventions do
    assert "relevance_level" not in json.dumps(data)
    assert data["comparison"]["policies"] == conventions


def test_show_focus_times(tmp_path: Path) -> None:
    path = write(tmp_path, LINES)
    code, out, err = invoke("evaluate", path, "-m", "TemporalNDCG@2", "--show-focus-times", "-f", "json",
                            "--resamples", "20")
    assert code == 0, err
    shown = json.loads(out)["focus_times"]["run"]
    assert shown["q1"] == {"qft": [2020], "qft_source": "given", "qft_explain": [],
                           "documents": [{"doc_id": "a", "dft": [2019], "source": "given", "publication_year": None,
                                          "explain": []},
                                         {"doc_id": "b", "dft": [2020], "source": "given", "publication_year": None,
                                          "explain": []}]}
    assert shown["q2"]["qft"] == [2023] and shown["q2"]["qft_source"] == "extracted"
    assert shown["q2"]["qft_explain"] == ["14-23 relative 'last year' -> {2023} (against reference date 2024-06-01)"]
    c, d = shown["q2"]["documents"]
    assert (c["dft"], c["source"], c["publication_year"]) == ([2023], "extracted", 2024)
    assert d["explain"] == ["rejected 0-4 year '2000' (a count of 'items', not a year)"] and d["dft"] == []
    code, out, _ = invoke("evaluate", path, "-m", "TemporalNDCG@2", "--show-focus-times", "--resamples", "20")
    text = [" ".join(x.replace("\u2502", " ").split()) for x in out.splitlines()]
    assert "q2 qft {2023} extracted: 14-23 relative 'last year' -> {2023} (against reference date 2024-06-01)" in text
    assert "d {} extracted: rejected 0-4 year '2000' (a count of 'items', not a year)" in text
    code, _, err = invoke("evaluate", path, "--show-focus-times", "-f", "csv")
    assert code == 2 and "--show-focus-times" in err
