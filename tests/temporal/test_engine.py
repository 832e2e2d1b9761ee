"""The temporal metrics are the core's: each value equals its declared core metric evaluated by
``gainscope.evaluate`` on the same judgments and ranking; a name goes through the core grammar and a mistake gives
the core's error; the batch gives one core Results per system."""

from __future__ import annotations

import json
import math
import random
import warnings
from pathlib import Path

import pytest

from gainscope import Judgments, Run, evaluate, parse_metric
from gainscope.core.policies import Policies
from gainscope.errors import GainscopeWarning, InvalidParameterError, MetricError, MetricSyntaxError
from gainscope.metrics.profiles import PROFILES, profiles_of
from gainscope.results import Results
from gainscope.temporal import (
    TemporalCoverage,
    TemporalMAP,
    TemporalMRR,
    TemporalNDCG,
    TemporalPrecision,
    TemporalRecall,
    TemporalYearPrecision,
)
from gainscope.temporal.batch import evaluate_records, read_records
from gainscope.temporal.names import parse_metric as parse_temporal

from .helpers import invoke, write

# a temporal metric, and the core metric evaluated (at k) on the gold as judgments and the top k as the run
PAIRS = [
    (TemporalNDCG(), "nDCG@{k}"), (TemporalNDCG(gain="exponential"), "nDCG(gain=exponential)@{k}"),
    (TemporalNDCG(ideal="retrieved"), "nDCG(ideal=retrieved)@{k}"),
    (TemporalPrecision(), "P(denominator=retrieved)@{k}"), (TemporalPrecision(denominator="k"), "P@{k}"),
    (TemporalPrecision(rel=2), "P(denominator=retrieved, rel=2)@{k}"), (TemporalRecall(), "R@{k}"),
    (TemporalMRR(), "RR@{k}"), (TemporalMAP(), "AP@{k}"), (TemporalMAP(denominator="retrieved"),
                                                            "AP(denominator=retrieved)@{k}"),
]


@pytest.mark.parametrize(("ours", "core"), PAIRS, ids=[str(p[0]) for p in PAIRS])
def test_gold_mode_values_are_the_core_metrics(ours: object, core: str) -> None:
    rng = random.Random(5)
    ids = [f"d{i}" for i in range(10)]
    for _ in range(60):
        gold = {d: rng.choice([0, 1, 2, 3, 1.5]) for d in rng.sample(ids, rng.randrange(1, 6))}
        retrieved = rng.sample(ids, rng.randrange(1, 8))
        k = rng.randrange(1, 8)
        mine = ours.compute(retrieved_ids=retrieved, gold_ids=gold, k=k)  # type: ignore[attr-defined]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GainscopeWarning)
            # the order given, the first k documents (trec_eval -M k), undefined left undefined
            value = evaluate(Judgments.from_dict({"q": gold}), Run.from_dict({"q": retrieved}), core.format(k=k),
                             ties="rank", depth=k, undefined="skip").values[0, 0]
        assert (math.isnan(mine) and math.isnan(value)) or mine == pytest.approx(value, abs=1e-15), (gold, retrieved)


def test_focus_time_grades_are_judgments_of_the_core() -> None:
    # grades 4 x Jaccard with {2020, 2021}: 0, 4, 2, 4/3; relevant = grade > 0 (the level 'positive')
    qft, dfts = {2020, 2021}, [{2019}, {2020, 2021}, {2020}, {2021, 2022}]
    judgments = Judgments.from_dict({"q": {"1": 0.0, "2": 4.0, "3": 2.0, "4": 4 / 3}})
    run = Run.from_dict({"q": ["1", "2", "3"]})
    pairs = ((TemporalNDCG(use_focus_time=True), "nDCG@3"), (TemporalMAP(use_focus_time=True), "AP@3"),
             (TemporalPrecision(use_focus_time=True, min_jaccard=0.5), "P(denominator=retrieved, rel=2.1)@3"))
    for ours, core in pairs:
        value = evaluate(judgments, run, core, ties="rank", relevance_level="positive").values[0, 0]
        assert ours.compute(qft=qft, dfts=dfts, k=3) == pytest.approx(value)
    # min_jaccard 0.5: Jaccard > 0.5 exactly, a grade above 2 (the document with Jaccard 1/2, grade 2, is not)
    assert TemporalPrecision(use_focus_time=True, min_jaccard=0.5).core(3).rel == math.nextafter(2.0, 3.0)  # type: ignore[attr-defined]


def test_a_name_goes_through_the_core_grammar_and_gives_the_core_errors() -> None:
    # the same mistake, the same error class as the core's nDCG@0 (it was a PolicyError)
    for temporal, core in (("TemporalNDCG@0", "nDCG@0"), ("TemporalNDCG(gain=cubic)@5", "nDCG(gain=cubic)@5"),
                           ("TemporalNDCG(foo=1)@5", "nDCG(foo=1)@5")):
        with pytest.raises(InvalidParameterError):
            parse_metric(core)
        with pytest.raises(InvalidParameterError):
            parse_temporal(temporal)
    with pytest.raises(InvalidParameterError, match=r"^TemporalNDCG has no parameter 'foo'; its parameters are: rel, "
                                                    r"min_jaccard, gain, ideal\.$"):
        parse_temporal("TemporalNDCG(foo=1)@5")
    with pytest.raises(MetricSyntaxError):
        parse_temporal("TemporalNDCG@")
    with pytest.raises(InvalidParameterError, match=r"the 'min_jaccard' parameter of TemporalMRR must be a number "
                                                    r">= 0 and < 1; got 1"):
        parse_temporal("TemporalMRR(min_jaccard=1)@3")
    assert str(parse_temporal("TemporalNDCG(gain={1: 3, 2: 9})@5")) == "TemporalNDCG(gain={1: 3, 2: 9})@5"


def test_the_command_line_gives_the_core_exit_code(tmp_path: Path) -> None:
    path = write(tmp_path, [{"query_id": "q1", "retrieved_ids": ["a"], "gold": ["a"]}])
    code, _, err = invoke("evaluate", path, "-m", "TemporalNDCG@0")
    assert code == 2 and "the 'cutoff' parameter of TemporalNDCG must be an int >= 1; got 0." in err


def test_the_batch_gives_one_core_results_per_system(tmp_path: Path) -> None:
    systems = (("bm25", [[[2019], [2020]], [[2020]]]), ("dense", [[[2020], [2019]], [[1990], [2020]]]))
    lines = [{"query_id": q, "system": s, "qft": [2020], "dfts": dfts, "anchors": [2020, 1990]}
             for s, rankings in systems for q, dfts in zip(("q1", "q2"), rankings, strict=True)]
    ev = evaluate_records(read_records(write(tmp_path, lines)),
                          ["TemporalNDCG@2", "TemporalYearRecall@2", "TemporalCoverage@2", "TemporalYearPrecision@1"])
    r = ev.results["bm25"]
    assert isinstance(r, Results) and list(ev.results) == ["bm25", "dense"]
    assert r.metric_names == ["TemporalNDCG@2", "TemporalYearRecall@2", "TemporalCoverage@2", "TemporalYearPrecision@1"]
    assert [str(m) for m in r.metrics] == ["nDCG@2", "SetR", "SetR", "SetP"]
    assert r.policies == Policies(ties="rank", relevance_level="positive")
    # bm25 q1: grades 0, 4 -> nDCG (4 / log2 3) / 4; q2: 1; coverage: 2020 covered, 1990 not -> 1/2, 1/2
    assert r.per_query("TemporalNDCG@2") == pytest.approx({"q1": 1 / math.log2(3), "q2": 1.0})
    assert r["TemporalCoverage@2"] == 0.5 and r["nDCG@2"] == r["TemporalNDCG@2"]
    # the year precision of the top 1: {2019} -> 0; {2020} -> 1
    assert ev.results["bm25"].per_query("TemporalYearPrecision@1") == {"q1": 0.0, "q2": 1.0}
    with pytest.raises(MetricError, match=r"'SetR' is the metric of 2 columns \(TemporalYearRecall@2, "
                                          r"TemporalCoverage@2\); name the column"):
        r["SetR"]
    data = r.to_dict()
    assert data["core_metrics"] == {"TemporalNDCG@2": "nDCG@2", "TemporalYearRecall@2": "SetR",
                                    "TemporalCoverage@2": "SetR", "TemporalYearPrecision@1": "SetP"}
    assert json.loads(r.to_json())["per_query"]["q2"]["TemporalCoverage@2"] == 0.5
    assert ev.comparison.row("TemporalNDCG@2", "bm25").mean == r["TemporalNDCG@2"]
    assert r.select(["TemporalCoverage@2"]).metric_names == ["TemporalCoverage@2"]


def test_total_relevant_is_the_core_recall_with_placeholders() -> None:
    # grades 4 x Jaccard: relevant (any shared year) at ranks 1 and 3 of four; the pool holds 3 relevant documents
    args = {"qft": {2020}, "dfts": [{2020}, {1999}, {2020, 2021}, {2020}]}
    recall = TemporalRecall(use_focus_time=True)
    assert recall.compute(**args, k=3) == pytest.approx(2 / 3)
    # total_relevant 2, below the pool's 3 but not below the 2 found in the top 3: R = 2 (TempoEval's input)
    assert recall.compute(**args, k=3, total_relevant=2) == 1.0
    assert recall.compute(**args, k=1, total_relevant=5) == pytest.approx(1 / 5)
    ranking = recall.prepare({**args, "k": 1, "total_relevant": 5}).ranking
    assert ranking is not None and ranking.doc_ids == ("1",) and len(ranking.judged) == 5  # 1 found + 4 missed


def test_the_year_measures_read_derived_rankings() -> None:
    # the coverage of anchors is the core's SetR over the anchors covered
    p = TemporalCoverage().prepare({"dfts": [{2017}, {2019}], "anchors": [2017, "2023-2024", 2019], "k": 2})
    assert p.ranking is not None and p.ranking.doc_ids == ("anchor1", "anchor3")
    assert dict(p.ranking.judged) == {"anchor1": 1.0, "anchor2": 1.0, "anchor3": 1.0}
    score = TemporalYearPrecision().score(qft={2020}, dfts=[set()], k=1)
    assert math.isnan(score.value) and score.reason == "the top 1 documents have no focus time"


def test_the_tempoeval_profile_carries_its_mode_conventions() -> None:
    tempoeval = PROFILES["tempoeval"]
    assert tempoeval.parameter_defaults("nDCG", Policies()) == {"gain": "exponential"}  # gold mode: ideal=judged
    for mode in ("focus_time", "llm"):
        assert tempoeval.parameter_defaults("nDCG", Policies(), mode) == {"gain": "exponential", "ideal": "retrieved"}
    assert "nDCG in focus_time mode: ideal=retrieved" in tempoeval.settings()
    assert "tempoeval: gain=exponential; in focus_time mode ideal=retrieved; in llm mode ideal=retrieved" in \
        profiles_of("nDCG")
    assert tempoeval.as_dict()["variants"]["llm"] == {"nDCG": {"ideal": "retrieved"}}
