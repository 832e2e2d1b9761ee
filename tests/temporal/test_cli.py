"""``gainscope temporal evaluate``: the JSONL batch in every mode, the output formats, statistics across
systems, undefined values and judge failures; invoked on ``temporal_group`` with click's CliRunner."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from tests.chat_server import FakeChatServer, Reply, default_behaviour, user_text

from gainscope.errors import InputError, InvalidParameterError, UndefinedMetricWarning
from gainscope.stats import bootstrap_ci
from gainscope.temporal.batch import evaluate_records, parse_metric, read_records

from .helpers import invoke, write

L3 = math.log2(3)

LINES = [
    # q1: QFT {2020}; bm25 ranks the 2019 document first (grades 0, 4): nDCG@2 = (4 / log2 3) / 4 = 1 / log2 3
    {"query_id": "q1", "system": "bm25", "qft": [2020], "retrieved": [{"doc_id": "a", "dft": [2019]},
                                                                      {"doc_id": "b", "dft": [2020]}]},
    # q2: the QFT is extracted ("last year" against 2024-06-01 -> {2023}); document c's text gives {2023} (its
    # publication year 2024 is kept apart), d's "2000 items" is a count: no focus time. Grades 4, 0: nDCG 1
    {"query_id": "q2", "system": "bm25", "query": "What happened last year?", "reference_date": "2024-06-01",
     "retrieved": [{"doc_id": "c", "text": "Published 2024. In 2023 prices rose."},
                   {"doc_id": "d", "text": "2000 items sold"}]},
    {"query_id": "q3", "system": "bm25", "qft": [2001], "retrieved_ids": ["e", "f"], "dfts": [[2001], "1990s"]},
    {"query_id": "q1", "system": "dense", "qft": [2020], "retrieved": [{"doc_id": "b", "dft": [2020]},
                                                                       {"doc_id": "a", "dft": [2019]}]},
    {"query_id": "q2", "system": "dense", "query": "What happened last year?", "reference_date": "2024-06-01",
     "retrieved": [{"doc_id": "d", "text": "2000 items sold"},
                   {"doc_id": "c", "text": "Published 2024. In 2023 prices rose."}]},
    # q3 dense: 1990s first (Jaccard 0), 2001 second: 1 / log2 3
    {"query_id": "q3", "system": "dense", "qft": [2001], "retrieved_ids": ["f", "e"], "dfts": ["1990s", [2001]]},
]
BM25 = [1 / L3, 1.0, 1.0]
DENSE = [1.0, 1 / L3, 1 / L3]


def test_focus_time_batch_json_per_query_and_statistics(tmp_path: Path) -> None:
    code, out, _ = invoke("evaluate", write(tmp_path, LINES), "-m", "TemporalNDCG@2", "-f", "json", "-q",
                          "--resamples", "500")
    assert code == 0
    data = json.loads(out)
    assert data["mode"] == "focus_time"
    assert list(data["per_query"]["bm25"].values()) == [{"TemporalNDCG@2": pytest.approx(v)} for v in BM25]
    assert list(data["per_query"]["dense"].values()) == [{"TemporalNDCG@2": pytest.approx(v)} for v in DENSE]
    rows = {r["run"]: r for r in data["comparison"]["rows"]}
    assert rows["bm25"]["mean"] == pytest.approx(sum(BM25) / 3)
    assert (rows["bm25"]["ci_low"], rows["bm25"]["ci_high"]) == pytest.approx(bootstrap_ci(BM25, resamples=500))
    # dense - bm25 per query: 1 - 1/log2 3, 1/log2 3 - 1, 1/log2 3 - 1 -> one win, two losses
    assert rows["dense"]["delta"] == pytest.approx((sum(DENSE) - sum(BM25)) / 3)
    assert (rows["dense"]["wins"], rows["dense"]["ties"], rows["dense"]["losses"]) == (1, 0, 2)
    assert data["notes"][:2] == ["qft extracted from the query text (1): q2",
                                 "dft extracted from the document text (2): c, d"]


def test_table_markdown_and_csv(tmp_path: Path) -> None:
    path = write(tmp_path, LINES)
    code, out, _ = invoke("evaluate", path, "-m", "TemporalNDCG@2 TemporalPrecision@1", "--resamples", "100")
    assert code == 0 and "TemporalPrecision@1" in out and "bm25 (baseline)" in out and "temporal:" in out
    assert "mode focus times (Jaccard x 4 grades)" in [" ".join(x.split()) for x in out.splitlines()]
    code, out, _ = invoke("evaluate", path, "-m", "TemporalNDCG@2", "-f", "markdown", "-q", "--resamples", "100",
                          "--baseline", "dense")
    assert "### bm25" in out and "| dense (baseline) |" in out.replace("  ", " ")
    code, out, _ = invoke("evaluate", path, "-m", "TemporalMRR@2", "-f", "csv", "-q", "--resamples", "100")
    rows = list(csv.DictReader(io.StringIO(out)))
    # MRR@2 bm25: first relevant at 2, 1, 1 -> 1/2, 1, 1
    assert [float(r["value"]) for r in rows if r["run"] == "bm25"] == [0.5, 1.0, 1.0, pytest.approx(2.5 / 3)]


def test_gold_mode_and_undefined_policy(tmp_path: Path) -> None:
    lines = [{"query_id": "q1", "retrieved_ids": ["a", "b"], "gold": {"b": 2}},
             {"query_id": "q2", "retrieved_ids": ["a"], "gold": []}]
    path = write(tmp_path, lines)
    code, out, err = invoke("evaluate", path, "-m", "TemporalNDCG@2", "-f", "json", "-q", "--resamples", "50")
    # q1: grades 0, 2 -> (2 / log2 3) / 2; q2 has no relevant document: undefined, 0 with a warning
    assert code == 0 and json.loads(out)["mode"] == "gold"
    assert json.loads(out)["per_query"]["run"] == {"q1": {"TemporalNDCG@2": pytest.approx(1 / L3)},
                                                   "q2": {"TemporalNDCG@2": 0.0}}
    assert "warning: TemporalNDCG@2 is undefined for 1 query, scored 0: q2" in err
    code, out, _ = invoke("evaluate", path, "-m", "TemporalNDCG@2", "-f", "json", "-q", "--undefined", "skip")
    data = json.loads(out)
    assert data["per_query"]["run"]["q2"] == {"TemporalNDCG@2": None}
    assert data["comparison"]["rows"][0]["mean"] == pytest.approx(1 / L3) and data["comparison"]["rows"][0][
        "queries"] == 1
    assert data["undefined"]["run"] == [{"query_id": "q2", "metric": "TemporalNDCG@2",
                                         "reason": "IDCG is 0: no positive grade among the judged documents"}]


def test_bad_input_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, [{"query_id": "q1", "query": "inflation last year", "retrieved_ids": ["a"],
                             "retrieved_docs": ["x"]}])
    code, _, err = invoke("evaluate", path, "-m", "TemporalNDCG@2")
    assert code == 3 and f"error: {path}:1: the query text has 'last year'" in err and "--reference-date" in err
    code, out, err = invoke("evaluate", path, "-m", "TemporalNDCG@2", "--reference-date", "2024-01-01", "-f", "json",
                            "-q")
    # "last year" is resolved: QFT {2023}; but document "x" has no focus time, so nothing in the file matches the
    # query's years (it was a value of 0): refused, see test_overlap.py
    assert code == 3 and out == "" and "(query 'q1'): qft {2023}; documents a: no years" in err
    code, _, err = invoke("evaluate", path, "-m", "TemporalYearRecall@2", "--mode", "gold")
    assert code == 2 and "computed from focus times" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "q1", "retrieved_ids": ["a"], "gold": ["a"]}\nnot json\n', encoding="utf-8")
    code, _, err = invoke("evaluate", str(bad))
    assert code == 3 and f"{bad}:2: not a JSON object" in err
    with pytest.raises(InputError, match=r"retrieved_ids, retrieved_docs and dfts are lists of the same length"):
        read_records(write(tmp_path, [{"query_id": "q", "retrieved_ids": ["a"], "dfts": []}]))


def test_metric_names() -> None:
    assert str(parse_metric("TemporalNDCG(gain=exponential, ideal=retrieved)@5")) == \
        "TemporalNDCG(gain=exponential, ideal=retrieved)@5"
    assert parse_metric("TemporalMAP").k == 10
    assert parse_metric("TemporalDiversity(granularity=10)@3").params == (("granularity", 10),)
    # the parameter is the core metric's: the core's error (it was a PolicyError "gain must be ...")
    with pytest.raises(InvalidParameterError, match=re.escape("the 'gain' parameter of nDCG must be one of 'linear', "
                                                              "'exponential' or a {grade: gain} map; got 'cubic'")):
        parse_metric("TemporalNDCG(gain=cubic)@5")
    with pytest.raises(ValueError, match="mode comes from the file"):
        parse_metric("TemporalNDCG(use_llm=True)@5")


def test_llm_mode_end_to_end(tmp_path: Path, chat_server: FakeChatServer) -> None:
    lines = [{"query_id": "q1", "query": "Who won in 2020?",
              "retrieved": [{"doc_id": "a", "text": "About 2019. grade=1"}, {"doc_id": "b", "text": "2020! grade=4"}]},
             {"query_id": "q2", "query": "Prices in 2021?",
              "retrieved": [{"doc_id": "c", "text": "broken"}, {"doc_id": "d", "text": "2021 prices grade=3"}]}]

    def behaviour(body: dict[str, Any], attempt: int) -> Any:
        if "broken" in user_text(body):
            return Reply("malformed")
        return default_behaviour(body, attempt)

    chat_server.behaviour = behaviour
    code, out, err = invoke("evaluate", write(tmp_path, lines), "-m", "TemporalNDCG@2", "--mode", "llm",
                            "--base-url", chat_server.url, "--model", "fake", "-f", "json", "-q",
                            "--answer-attempts", "1")
    # q1: grades 1, 4; ideal 4, 1 -> (1 + 4 / log2 3) / (4 + 1 / log2 3); q2: document c failed -> no value
    assert code == 4 and "judge failed to grade" in err
    data = json.loads(out)
    assert data["per_query"]["run"] == {"q1": {"TemporalNDCG@2": pytest.approx((1 + 4 / L3) / (4 + 1 / L3))},
                                        "q2": {"TemporalNDCG@2": None}}
    assert data["failures"]["run"][0]["documents"][0]["doc_id"] == "c"
    assert data["comparison"]["rows"][0]["queries"] == 1  # the failed query is not in the mean
    code, _, _ = invoke("evaluate", write(tmp_path, lines), "--mode", "llm", "--base-url", chat_server.url,
                        "--model", "fake", "--allow-failures", "--answer-attempts", "1")
    assert code == 0


def test_library_batch_warns_with_query_ids(tmp_path: Path) -> None:
    records = read_records(write(tmp_path, [{"query_id": "q9", "qft": [], "dfts": [[2000]]}]))
    with pytest.warns(UndefinedMetricWarning, match="undefined for 1 query, scored 0: q9"):
        ev = evaluate_records(records, ["TemporalRecall@5"])
    assert ev.per_query("run", "TemporalRecall@5") == {"q9": 0.0}
    assert ev.reasons["run"] == {("q9", "TemporalRecall@5"): "the query has no focus time (an empty QFT)"}


@pytest.mark.parametrize("name", ["runs.jsonl", "periods.jsonl"])
def test_the_examples_run(name: str) -> None:
    path = Path(__file__).parents[2] / "examples" / "temporal" / name
    code, out, err = invoke("evaluate", str(path), "-m", "TemporalNDCG@3 TemporalYearRecall@3", "-f", "json",
                            "--show-focus-times", "--resamples", "20")
    assert code == 0, err
    assert set(json.loads(out)["focus_times"]) == {"bm25", "dense"}
    if name == "periods.jsonl":
        code, out, err = invoke("evaluate", str(path), "-m", "TemporalDiversity(granularity=10)@3 TemporalCoverage@3",
                                "-f", "json", "-q", "--resamples", "20")
        # bm25 q1: decades 1970s, 1980s, 2020s of the six in 1970..2029; anchors 1970s and 2020s both covered
        assert code == 0 and json.loads(out)["per_query"]["bm25"]["q1"] == {
            "TemporalDiversity(granularity=10)@3": 0.5, "TemporalCoverage@3": 1.0}
