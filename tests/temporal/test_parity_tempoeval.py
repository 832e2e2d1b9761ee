"""Parity with TempoEval 0.1.0 (``pip install tempoeval``) where its behaviour is correct.

Compared on random focus times and gold lists: focus-time nDCG (``gain=exponential, ideal=retrieved``), precision,
recall, MRR, MAP (``denominator=retrieved``), year precision and recall, diversity with ``total_scope``; gold nDCG
(``gain=exponential``; its ideal comes from the gold grades as ours), gold recall and MRR, on gold lists and on
graded gold dicts whose grades are >= 1. With grade-0 entries in a gold dict, recall and MRR differ (TempoEval
counts every key of the dict relevant): asserted in ``test_grade_zero_gold_documents``. TempoEval rounds to 5
decimals. Where our value is undefined (NaN) TempoEval returns 0.0: that difference is asserted too. The other
differences (LLM modes, extraction) are listed in :mod:`gainscope.temporal`.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from gainscope.temporal import (
    TemporalDiversity,
    TemporalMAP,
    TemporalMRR,
    TemporalNDCG,
    TemporalPrecision,
    TemporalRecall,
    TemporalYearPrecision,
    TemporalYearRecall,
)

te = pytest.importorskip("tempoeval.metrics")

CASES = 300


def _focus_cases() -> list[tuple[set[int], list[set[int]], int]]:
    rng = random.Random(7)
    out = []
    for _ in range(CASES):
        qft = {2000 + rng.randrange(8) for _ in range(rng.randrange(0, 4))}
        dfts = [{2000 + rng.randrange(10) for _ in range(rng.randrange(0, 4))} for _ in range(rng.randrange(1, 8))]
        out.append((qft, dfts, rng.randrange(1, 9)))
    return out


PAIRS: list[tuple[Any, Any]] = [
    (TemporalNDCG(use_focus_time=True, gain="exponential", ideal="retrieved"), te.TemporalNDCG(use_focus_time=True)),
    (TemporalPrecision(use_focus_time=True), te.TemporalPrecision(use_focus_time=True)),
    (TemporalPrecision(use_focus_time=True, min_jaccard=0.3),
     te.TemporalPrecision(use_focus_time=True, relevance_threshold=0.3)),
    (TemporalRecall(use_focus_time=True), te.TemporalRecall(use_focus_time=True)),
    (TemporalMRR(use_focus_time=True), te.TemporalMRR(use_focus_time=True)),
    (TemporalMAP(use_focus_time=True, denominator="retrieved"), te.TemporalMAP()),
    (TemporalYearPrecision(), te.TemporalYearPrecision()),
    (TemporalYearRecall(), te.TemporalYearRecall()),
]


@pytest.mark.parametrize(("ours", "theirs"), PAIRS, ids=[str(p[0]) for p in PAIRS])
def test_focus_time_mode(ours: Any, theirs: Any) -> None:
    compared = undefined = 0
    for qft, dfts, k in _focus_cases():
        mine = ours.compute(qft=qft, dfts=dfts, k=k)
        other = theirs.compute(qft=qft, dfts=dfts, k=k)
        if math.isnan(mine):
            assert other == 0.0, (qft, dfts, k)  # TempoEval: 0.0 for an undefined value
            undefined += 1
        else:
            assert round(mine, 5) == pytest.approx(other, abs=1e-12), (qft, dfts, k)
            compared += 1
    assert compared > CASES // 4 and undefined > 0  # both kinds of case are exercised


def test_diversity_with_a_total_scope() -> None:
    for _, dfts, k in _focus_cases():
        if not any(dfts[:k]):
            continue  # TempoEval 0.0 for no year at all; ours 0/10 = 0.0 too, but its early exit skips the scope
        for scope in (3, 10):
            mine = TemporalDiversity().compute(dfts=dfts, total_scope=scope, k=k)
            assert round(mine, 5) == te.TemporalDiversity(use_focus_time=True).compute(dfts=dfts, total_scope=scope,
                                                                                         k=k)


def test_gold_mode() -> None:
    rng = random.Random(11)
    ids = [f"d{i}" for i in range(12)]
    for _ in range(CASES):
        retrieved = rng.sample(ids, rng.randrange(1, 10))
        gold_list = rng.sample(ids, rng.randrange(1, 5))
        gold_graded = {d: rng.randrange(1, 4) for d in gold_list}
        k = rng.randrange(1, 10)
        pairs: list[tuple[Any, Any, Any]] = [
            (TemporalNDCG(gain="exponential"), te.TemporalNDCG(), gold_graded),
            (TemporalNDCG(gain="exponential"), te.TemporalNDCG(), gold_list),
            (TemporalRecall(), te.TemporalRecall(), gold_list),
            (TemporalMRR(), te.TemporalMRR(), gold_list),
            # graded gold with every grade >= 1: both count every gold document relevant
            (TemporalRecall(), te.TemporalRecall(), gold_graded),
            (TemporalMRR(), te.TemporalMRR(), gold_graded),
        ]
        for ours, theirs, gold in pairs:
            mine = ours.compute(retrieved_ids=retrieved, gold_ids=gold, k=k)
            assert round(mine, 5) == pytest.approx(theirs.compute(retrieved_ids=retrieved, gold_ids=gold, k=k),
                                                   abs=1e-12)


def test_documented_differences() -> None:
    # the local ideal: one relevant document at rank 1, two more judged relevant -> TempoEval 1.0
    dfts = [{2020}, {1990}, {2020}, {2020}]
    assert te.TemporalNDCG(use_focus_time=True).compute(qft={2020}, dfts=dfts, k=2) == 1.0
    assert TemporalNDCG(use_focus_time=True).compute(qft={2020}, dfts=dfts, k=2) < 1.0
    # diversity without a scope: TempoEval 1.0 whatever the documents
    assert te.TemporalDiversity(use_focus_time=True).compute(dfts=[{1990}], k=1) == 1.0
    with pytest.raises(ValueError, match="needs a temporal scope"):
        TemporalDiversity().compute(dfts=[{1990}], k=1)


def test_grade_zero_gold_documents() -> None:
    """TempoEval's gold recall and MRR read a ``{id: grade}`` dict as the set of its keys, so a document judged
    not relevant (grade 0) counts as relevant; ours count grades >= ``rel`` (1). nDCG agrees (a grade 0 adds no
    gain). On random cases: ours equal TempoEval's on the dict without its grade-0 entries, and differ from
    TempoEval's on the dict itself whenever a grade-0 document is in the top k (MRR, recall) or in the gold
    (recall's denominator)."""
    rng = random.Random(13)
    ids = [f"d{i}" for i in range(12)]
    differ = 0
    for _ in range(CASES):
        retrieved = rng.sample(ids, rng.randrange(1, 10))
        gold = {d: rng.randrange(0, 4) for d in rng.sample(ids, rng.randrange(1, 6))}
        positive = {d: g for d, g in gold.items() if g >= 1}
        k = rng.randrange(1, 10)
        for ours, theirs in ((TemporalRecall(), te.TemporalRecall()), (TemporalMRR(), te.TemporalMRR())):
            mine = ours.compute(retrieved_ids=retrieved, gold_ids=gold, k=k)
            if not positive:
                assert math.isnan(mine) if isinstance(ours, TemporalRecall) else mine == 0.0
                continue
            assert round(mine, 5) == pytest.approx(theirs.compute(retrieved_ids=retrieved, gold_ids=positive, k=k),
                                                   abs=1e-12)
            if len(positive) < len(gold):
                differ += round(mine, 5) != theirs.compute(retrieved_ids=retrieved, gold_ids=gold, k=k)
        mine = TemporalNDCG(gain="exponential").compute(retrieved_ids=retrieved, gold_ids=gold, k=k)
        if positive:
            assert round(mine, 5) == pytest.approx(te.TemporalNDCG().compute(retrieved_ids=retrieved, gold_ids=gold,
                                                                            k=k), abs=1e-12)
    assert differ > CASES // 10  # the difference is real, not a corner case
    # by hand: a (grade 0) at rank 1, b (grade 2) at rank 3; gold a, b, c (grade 1)
    gold_by_hand = {"a": 0, "b": 2, "c": 1}
    args: dict[str, Any] = {"retrieved_ids": ["a", "x", "b"], "gold_ids": gold_by_hand, "k": 3}
    # TempoEval: a relevant at rank 1 -> RR 1; recall {a, b} of {a, b, c} = 2/3. Ours: b at rank 3; b of {b, c}
    assert (te.TemporalMRR().compute(**args), te.TemporalRecall().compute(**args)) == (1.0, 0.66667)
    assert (TemporalMRR().compute(**args), TemporalRecall().compute(**args)) == (pytest.approx(1 / 3), 0.5)
