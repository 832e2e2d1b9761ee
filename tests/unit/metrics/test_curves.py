"""Hand arithmetic for interpolated precision (IPrec@r) and its average over recall levels (11pt_avg),
with both roundings of r * R.

Example: judged {a: 1, b: 0, c: 1, d: 1, e: 0, f: 1}, run [a, b, c, e, d] (f never retrieved): R = 4,
relevant at ranks 1, 3, 5 with precision 1/1 = 1, 2/3 = 0.6667, 3/5 = 0.6 there. Interpolated precision
after the c-th relevant document = best precision from it on: c=1 -> 1, c=2 -> 0.6667, c=3 -> 0.6, c=4
(never reached) -> 0; c = 0 -> best precision anywhere = 1.
"""

from __future__ import annotations

import pytest

from gainscope import Judgments, Run, evaluate

QRELS = {"q": {"a": 1, "b": 0, "c": 1, "d": 1, "e": 0, "f": 1}}
RUN = {"q": ["a", "b", "c", "e", "d"]}
BEST = {0: 1.0, 1: 1.0, 2: 2 / 3, 3: 0.6, 4: 0.0}  # interpolated precision needing c relevant documents


def value(metric: str, qrels=QRELS, run=RUN, **policies) -> float:
    res = evaluate(Judgments.from_dict(qrels), Run.from_dict(run), [metric], **policies)
    return res.per_query(metric)["q"]


@pytest.mark.parametrize(("recall", "nearest", "legacy"), [
    # r * R = 0 -> c = 0 either way
    (0.0, 0, 0),
    # 0.3 * 4 = 1.2: nearest -> 1; legacy floor(1.2 + 0.9) = 2
    (0.3, 1, 2),
    (0.5, 2, 2),    # 2.0: nearest 2; legacy floor(2.9) = 2
    # 0.6 * 4 = 2.4: nearest -> 2; legacy floor(3.3) = 3
    (0.6, 2, 3),
    (0.7, 3, 3),    # 2.8: nearest 3; legacy floor(3.7) = 3
    (1.0, 4, 4),    # 4: the 4th relevant document is never retrieved -> 0
])
def test_iprec_nearest_and_legacy_rounding(recall, nearest, legacy):
    assert value(f"IPrec@{recall}") == pytest.approx(BEST[nearest], abs=1e-12)
    assert value(f"IPrec(rounding=nearest)@{recall}") == pytest.approx(BEST[nearest], abs=1e-12)
    assert value(f"IPrec(rounding=legacy)@{recall}") == pytest.approx(BEST[legacy], abs=1e-12)


def test_eleven_point_average_nearest():
    # c = round(r * 4) for r = 0, .1, ..., 1: 0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4
    # -> 1, 1, 1, 1, .6667, .6667, .6667, .6, .6, 0, 0: sum 7.2 / 11 = 0.6545
    assert value("11pt_avg") == pytest.approx(7.2 / 11, abs=1e-12)
    assert value("IPrecAvg") == pytest.approx(7.2 / 11, abs=1e-12)  # alias


def test_eleven_point_average_legacy():
    # c = floor(r * 4 + 0.9): 0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4
    # -> 1, 1, 1, .6667, .6667, .6667, .6, .6, 0, 0, 0: sum 6.2 / 11 = 0.5636
    assert value("11pt_avg(rounding=legacy)") == pytest.approx(6.2 / 11, abs=1e-12)


def test_average_over_chosen_levels():
    # levels (0.5,) is IPrec@0.5; levels (0, 1): (1 + 0) / 2
    assert value("11pt_avg(levels=(0.5,))") == pytest.approx(2 / 3, abs=1e-12)
    assert value("11pt_avg(levels=(0, 1))") == pytest.approx(0.5, abs=1e-12)


def test_iprec_without_relevant_retrieved_is_zero():
    # nothing relevant retrieved: 0 at every level, never undefined (no warning)
    assert value("IPrec@0", run={"q": ["b", "e"]}) == 0.0
    assert value("11pt_avg", run={"q": ["b", "e"]}) == 0.0
