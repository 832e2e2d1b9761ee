"""The seed examples (../shared/seeds) as tests, with the arithmetic done by hand.

Seed 000 (binary nDCG for an agent's retrieval): ground truth ids are relevant (grade 1), everything else is
not judged; nDCG@5 with trec_eval's ideal (all judged documents). The seed's source drops a comma in its
ground truth ("RG-MAINT-003" "RG-CALIB-002" become one id), which is why it printed 0.3904 and 0.7366;
the intended five ids give 0.6548 and 1.0. Both are reproduced below.

Seed 002 (nDCG / MRR / MAP notebook): exponential gain with the ideal taken from the retrieved grades
(``nDCG(gain=exponential, ideal=retrieved)@3``), MRR counting the first document with grade >= 2
(``RR(rel=2)``) and AP counting grade > 0 over R (``AP@3``).
"""

from __future__ import annotations

import math

import pytest

from gainscope import Judgments, Run, evaluate

D = [1 / math.log2(i + 1) for i in range(1, 7)]  # D[i-1] = discount of rank i: 1, 0.6309, 0.5, 0.4307, 0.3869

# ---------------------------------------------------------------------------------------------- seed 000
GROUND_TRUTH = ["RG-VIB-001", "RG-MAINT-003", "RG-CALIB-002", "RG-ERR-005", "PM-ROBOT-007"]
RETRIEVED = ["RG-VIB-001", "GEN-MANUAL-002", "RG-MAINT-003", "RG-CALIB-002", "CTRL-UPDATE-001"]
BETTER = ["RG-VIB-001", "RG-MAINT-003", "PM-ROBOT-007", "RG-CALIB-002", "RG-ERR-005"]
WORSE = ["GEN-SAFETY-001", "GEN-MANUAL-002", "CTRL-UPDATE-001", "HR-POLICY-003", "CAFETERIA-MENU-001"]


def ndcg5(ground_truth: list[str], retrieved: list[str]) -> float:
    qrels = Judgments.from_dict({"MQ": ground_truth})  # a list of ids: grade 1 each
    return evaluate(qrels, Run.from_dict({"MQ": retrieved}), ["nDCG@5"])["nDCG@5"]


def test_seed000_retrieval_example():
    # relevance [1, 0, 1, 1, 0]: DCG = 1/log2(2) + 1/log2(4) + 1/log2(5) = 1 + 0.5 + 0.4307 = 1.9307
    # IDCG@5 with R = 5: 1 + 0.6309 + 0.5 + 0.4307 + 0.3869 = 2.9485; nDCG@5 = 0.6548
    dcg = D[0] + D[2] + D[3]
    idcg = sum(D[:5])
    assert ndcg5(GROUND_TRUTH, RETRIEVED) == pytest.approx(dcg / idcg, abs=1e-12)
    assert ndcg5(GROUND_TRUTH, RETRIEVED) == pytest.approx(0.6548, abs=5e-5)


def test_seed000_better_example_is_perfect():
    # all five retrieved are relevant: DCG = IDCG -> 1.0
    assert ndcg5(GROUND_TRUTH, BETTER) == pytest.approx(1.0, abs=1e-12)


def test_seed000_worse_example_is_zero():
    assert ndcg5(GROUND_TRUTH, WORSE) == 0.0


def test_seed000_less_ground_truth():
    # ground truth {RG-VIB-001, RG-MAINT-003}: relevance [1, 0, 1, 0, 0]
    # DCG = 1 + 1/log2(4) = 1.5; IDCG@5 with R = 2 = 1 + 1/log2(3) = 1.6309; nDCG@5 = 0.9197
    # (as the seed printed)
    value = ndcg5(["RG-VIB-001", "RG-MAINT-003"], RETRIEVED)
    assert value == pytest.approx((1 + 0.5) / (1 + D[1]), abs=1e-12)
    assert value == pytest.approx(0.9197, abs=5e-5)


def test_seed000_printed_numbers_come_from_the_dropped_comma():
    # the seed's literal list: "RG-MAINT-003" "RG-CALIB-002" concatenate into one id, so R = 4 and neither
    # RG-MAINT-003 nor RG-CALIB-002 is relevant.
    literal = ["RG-VIB-001", "RG-MAINT-003RG-CALIB-002", "RG-ERR-005", "PM-ROBOT-007"]
    # retrieved: relevance [1, 0, 0, 0, 0]: DCG = 1; IDCG@5 = 1 + 0.6309 + 0.5 + 0.4307 = 2.5616 -> 0.3904
    assert ndcg5(literal, RETRIEVED) == pytest.approx(1 / sum(D[:4]), abs=1e-12)
    assert ndcg5(literal, RETRIEVED) == pytest.approx(0.3904, abs=5e-5)
    # better: relevance [1, 0, 1, 0, 1]: DCG = 1 + 0.5 + 0.3869 = 1.8869 -> 1.8869 / 2.5616 = 0.7366
    assert ndcg5(literal, BETTER) == pytest.approx((D[0] + D[2] + D[4]) / sum(D[:4]), abs=1e-12)
    assert ndcg5(literal, BETTER) == pytest.approx(0.7366, abs=5e-5)


# ---------------------------------------------------------------------------------------------- seed 002
SEED002_NDCG = "nDCG(gain=exponential, ideal=retrieved)@3"


def scored(relevance: list[int], predictions: list[float] | None = None) -> tuple[Judgments, Run]:
    """Documents d0, d1, ... with the given grades; ranked by prediction (or in the given order)."""
    qrels = Judgments.from_dict({"q": {f"d{i}": g for i, g in enumerate(relevance)}})
    if predictions is None:
        return qrels, Run.from_dict({"q": [f"d{i}" for i in range(len(relevance))]})
    return qrels, Run.from_dict({"q": {f"d{i}": p for i, p in enumerate(predictions)}})


def test_seed002_ndcg_example():
    # relevance [2, 1, 0, 1, 2] in ranked order, k = 3, gain 2^rel - 1:
    # DCG@3 = 3/log2(2) + 1/log2(3) + 0 = 3.6309
    # ideal from the retrieved grades sorted [2, 2, 1, 1, 0]: IDCG@3 = 3 + 3/log2(3) + 1/log2(4) = 5.3928
    # nDCG@3 = 3.6309 / 5.3928 = 0.6733
    qrels, run = scored([2, 1, 0, 1, 2])
    value = evaluate(qrels, run, [SEED002_NDCG])[SEED002_NDCG]
    assert value == pytest.approx((3 + D[1]) / (3 + 3 * D[1] + D[2]), abs=1e-12)
    assert value == pytest.approx(0.6733, abs=5e-5)
    # every judged document is retrieved here, so the trec_eval ideal agrees
    judged_ideal = "nDCG(gain=exponential)@3"
    assert evaluate(qrels, run, [judged_ideal])[judged_ideal] == pytest.approx(value)


def test_seed002_mrr_example_counts_grade_2_only():
    # relevance [0, 2, 1, 0, 1], predictions [0.9, 0.3, 0.7, 0.1, 0.5]
    # ranked by prediction: d0 (0.9, grade 0), d2 (0.7, 1), d4 (0.5, 1), d1 (0.3, 2), d3 (0.1, 0)
    # first grade >= 2 at rank 4: RR = 1/4; with grade >= 1 it would be rank 2: 1/2
    qrels, run = scored([0, 2, 1, 0, 1], [0.9, 0.3, 0.7, 0.1, 0.5])
    res = evaluate(qrels, run, ["RR(rel=2)", "RR"])
    assert res["RR(rel=2)"] == 0.25
    assert res["RR"] == 0.5


def test_seed002_ap_example():
    # relevance [1, 0, 2, 1, 0], predictions [0.8, 0.2, 0.6, 0.9, 0.1], k = 3
    # ranked: d3 (0.9, 1), d0 (0.8, 1), d2 (0.6, 2), d1 (0.2, 0), d4 (0.1, 0)
    # precision at the relevant ranks 1, 2, 3: 1/1, 2/2, 3/3; R = 3 (grade > 0) -> AP@3 = 3/3 = 1.0
    qrels, run = scored([1, 0, 2, 1, 0], [0.8, 0.2, 0.6, 0.9, 0.1])
    assert evaluate(qrels, run, ["AP@3"])["AP@3"] == 1.0


# section 4: four rankings of the same grades [2, 2, 1, 1, 0]. Ideal (exponential gains 3, 3, 1, 1, 0):
# IDCG@3 = 3 + 3/log2(3) + 1/log2(4) = 3 + 1.8928 + 0.5 = 5.3928; R = 4 documents with grade > 0.
IDCG3 = 3 + 3 * D[1] + D[2]
SCENARIOS = {
    # ranked grades [2, 2, 1, 1, 0]: DCG@3 = IDCG@3 -> 1; RR(rel=2) = 1; AP@3 = (1 + 1 + 1) / 4 = 0.75
    "Perfect_Ranking": ([0.9, 0.8, 0.7, 0.6, 0.1], 1.0, 1.0, 0.75),
    # ranked [0, 1, 1, 2, 2]: DCG@3 = 0 + 1/log2(3) + 1/log2(4) = 1.1309 -> 0.2097;
    # first grade 2 at rank 4 -> 0.25; AP@3 = (1/2 + 2/3) / 4 = 0.2917
    "Worst_Ranking": ([0.1, 0.2, 0.3, 0.4, 0.9], (D[1] + D[2]) / IDCG3, 0.25, (1 / 2 + 2 / 3) / 4),
    # ranked [1, 2, 0, 2, 1]: DCG@3 = 1 + 3/log2(3) + 0 = 2.8928 -> 0.5364; RR = 1/2; AP@3 = (1 + 1) / 4 = 0.5
    "Mixed_Ranking": ([0.7, 0.3, 0.9, 0.1, 0.5], (1 + 3 * D[1]) / IDCG3, 0.5, 0.5),
    # ranked [1, 0, 1, 2, 2]: DCG@3 = 1 + 0 + 1/log2(4) = 1.5 -> 0.2781; RR = 1/4;
    # AP@3 = (1 + 2/3) / 4 = 0.4167
    "Late_Success": ([0.1, 0.2, 0.3, 0.9, 0.8], 1.5 / IDCG3, 0.25, (1 + 2 / 3) / 4),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_seed002_scenario_table(scenario):
    predictions, ndcg, rr, ap = SCENARIOS[scenario]
    qrels, run = scored([2, 2, 1, 1, 0], predictions)
    res = evaluate(qrels, run, [SEED002_NDCG, "RR(rel=2)", "AP@3"])
    assert res[SEED002_NDCG] == pytest.approx(ndcg, abs=1e-12)
    assert res["RR(rel=2)"] == pytest.approx(rr, abs=1e-12)
    assert res["AP@3"] == pytest.approx(ap, abs=1e-12)


def test_seed002_scenario_rounded_values():
    rounded = {name: round(values[1], 4) for name, values in SCENARIOS.items()}
    assert rounded == {"Perfect_Ranking": 1.0, "Worst_Ranking": 0.2097, "Mixed_Ranking": 0.5364,
                       "Late_Success": 0.2781}


def test_seed002_notebook_ndcg_column_ignores_the_predictions():
    # the notebook computes nDCG on the grades in their given order ([2, 2, 1] for every scenario), not ranked
    # by the predictions: that is nDCG of the unranked list, 1.0 in all four scenarios
    qrels, run = scored([2, 2, 1, 1, 0])
    assert evaluate(qrels, run, [SEED002_NDCG])[SEED002_NDCG] == pytest.approx(1.0, abs=1e-12)
