"""The tempoeval profile against TempoEval 0.1.0 (``pip install tempoeval``) in gold mode: a gold dict is the
judgments, the retrieved ids (in order) the run. nDCG with gain 2^g - 1 and the ideal from every gold grade
(``ideal=judged``, issue 13 item 31), recall and reciprocal rank at k. TempoEval rounds to 5 decimals. The
temporal adapter (focus-time and LLM grading) builds on this profile; its own parity is
tests/temporal/test_parity_tempoeval.py.
"""

from __future__ import annotations

import random

import pytest

from gainscope import Judgments, Run, evaluate

te = pytest.importorskip("tempoeval.metrics")
pytestmark = pytest.mark.parity


@pytest.mark.parametrize("k", range(1, 10))
def test_tempoeval_profile_equals_tempoeval_gold_mode(k):
    rng = random.Random(k)
    ids = [f"d{i}" for i in range(12)]
    cases = {}
    for c in range(30):
        gold = rng.sample(ids, rng.randrange(1, 5))
        graded = rng.random() < 0.5
        retrieved = rng.sample(ids, rng.randrange(1, 10))
        cases[f"q{c:02d}"] = ({d: rng.randrange(1, 4) if graded else 1 for d in gold}, retrieved)
    res = evaluate(Judgments.from_dict({q: g for q, (g, _) in cases.items()}),
                   Run.from_dict({q: r for q, (_, r) in cases.items()}), [f"nDCG@{k}", f"R@{k}", f"RR@{k}"],
                   profile="tempoeval")
    assert res.metric_names == [f"nDCG(gain=exponential)@{k}", f"R@{k}", f"RR@{k}"]
    for theirs, column in ((te.TemporalNDCG(), 0), (te.TemporalRecall(), 1), (te.TemporalMRR(), 2)):
        for i, q in enumerate(res.query_ids):
            gold, retrieved = cases[q]
            # TempoEval reads an ungraded gold as a list of ids
            given = gold if len(set(gold.values())) > 1 or next(iter(gold.values())) != 1 else list(gold)
            expected = theirs.compute(retrieved_ids=retrieved, gold_ids=given, k=k)
            assert round(float(res.values[i, column]), 5) == pytest.approx(expected, abs=1e-12), (type(theirs), q)
