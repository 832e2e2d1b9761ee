"""Seed 003's metrics on hand-computed traces, its identities as properties, IterationsForAllGoodResults and
session DCG. Each case spells out the arithmetic."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gainscope.agents import (
    AgentSettings,
    Conversation,
    Iteration,
    Result,
    Search,
    Turn,
    evaluate_agents,
    good_gain_curve,
    iterations_for_all_good,
    session_dcg,
)
from gainscope.agents.metrics import ITERATION_COLUMNS, values_at_n, w
from gainscope.errors import InvalidParameterError, PolicyError

L2_3 = math.log2(3)  # w(2) = 1 / log2(3)


def conv(*iterations: list[list[Result]], cid: str = "c", earlier: tuple[Turn, ...] = ()) -> Conversation:
    """A one-turn conversation (after ``earlier`` turns); each iteration is a list of searches."""
    its = tuple(Iteration(tuple(Search(tuple(s)) for s in it)) for it in iterations)
    return Conversation(cid, (*earlier, Turn(its, "q")))


def curve_of(c: Conversation, **kw: object) -> list[dict[str, float]]:
    report = evaluate_agents([c], settings=AgentSettings(**kw))  # type: ignore[arg-type]
    return [dict(it.values) for it in report.conversations[0].curve]


def test_weights() -> None:
    assert w(1) == 1.0 and w(3) == 0.5 and w(2) == pytest.approx(0.6309, abs=1e-4)


def test_duplicates_within_and_across_iterations_several_searches() -> None:
    a, b, c_, d = (Result(id="a", gain=3), Result(id="b", gain=1), Result(id="c", gain=4), Result(id="d", gain=2))
    # iteration 1: search 1 [a, b], search 2 [a, c]  -> a repeats within the iteration
    # iteration 2: search 1 [c, d, b]                 -> c and b repeat from iteration 1
    trace = conv([[a, b], [a, c_]], [[c_, d, b]])
    it1, it2 = curve_of(trace)
    # |R^1| = 4, UR^1 = {a, b, c} = 3, Dup^1 = 1, GR^1 = {a, c} = 2, G_1 = 3 + 4 = 7, AvgGain_1 = 7/4
    assert (it1["|R^i|"], it1["|UR^i|"], it1["|Dup^i|"], it1["|GR^i|"], it1["G_i"]) == (4, 3, 1, 2, 7)
    assert it1["AvgGain_i"] == 7 / 4 and it1["SRE@i"] == 2 / 4 and it1["SRR@i"] == 1 / 4
    # |R^2| = 3, UR^2 = {d} = 1, Dup^2 = 2, GR^2 = {d}, G_2 = 2
    assert (it2["|R^i|"], it2["|UR^i|"], it2["|Dup^i|"], it2["|GR^i|"], it2["G_i"]) == (3, 1, 2, 1, 2)
    # R@2 = 7, UR@2 = 4, DupR@2 = 3, GR@2 = 3; CG@2 = 9, RG@2 = 4.5; DCG@2 = 7 + 2/log2(3)
    assert (it2["R@i"], it2["UR@i"], it2["DupR@i"], it2["GR@i"], it2["CG@i"], it2["RG@i"]) == (7, 4, 3, 3, 9, 4.5)
    assert it2["DCG@i"] == pytest.approx(7 + 2 / L2_3) and it2["DRG@i"] == pytest.approx((7 + 2 / L2_3) / 2)
    # AvgGain_2 = 2/3; RAG@2 = (7/4 + 2/3) / 2; DRAG@2 = (7/4 + (2/3)/log2(3)) / 2
    assert it2["AvgGain_i"] == pytest.approx(2 / 3)
    assert it2["RAG@i"] == pytest.approx((7 / 4 + 2 / 3) / 2)
    assert it2["DRAG@i"] == pytest.approx((7 / 4 + (2 / 3) / L2_3) / 2)
    # SRE@2 = 3/7, SRR@2 = 3/7
    assert it2["SRE@i"] == pytest.approx(3 / 7) and it2["SRR@i"] == pytest.approx(3 / 7)


def test_different_ids_same_url_or_content_are_one_result() -> None:
    # a domain id and a generic id never compare; the URL (after normalisation) and the content decide
    first = Result(domain_id="pmid:1", url="https://www.example.org/paper/", gain=3)
    same_url = Result(id="web-77", url="http://example.org/paper?utm_source=agent#abstract", gain=3)
    text = Result(id="k1", content="Aspirin lowers the risk of stroke.", gain=2)
    same_text = Result(domain_id="kb:9", content="  aspirin LOWERS the risk of stroke. ", gain=2)
    it1, it2 = curve_of(conv([[first, text]], [[same_url, same_text]]))
    assert (it1["|UR^i|"], it1["G_i"]) == (2, 5)
    # both results of iteration 2 are duplicates: no new gain, |Dup^2| = 2
    assert (it2["|UR^i|"], it2["|Dup^i|"], it2["G_i"], it2["CG@i"]) == (0, 2, 0, 5)
    assert it2["AvgGain_i"] == 0 and it2["SRR@i"] == 2 / 4


def test_near_misses_do_not_merge() -> None:
    # same title, different URL and content: two results, both good
    x = Result(title="Python (programming language)", url="https://a.org/python", content="History of Python", gain=3)
    y = Result(title="Python (programming language)", url="https://b.org/py", content="Python snakes", gain=2)
    # a bare title shared with x (0.5 < threshold 1.0) stays apart too
    z = Result(title="Python (programming language)", gain=2)
    (it1,) = curve_of(conv([[x, y, z]]))
    assert (it1["|UR^i|"], it1["|Dup^i|"], it1["|GR^i|"], it1["G_i"]) == (3, 0, 3, 7)


def test_empty_iterations() -> None:
    a = Result(id="a", gain=2)
    # an iteration without any search is not numbered (N counts iterations where search was invoked);
    # an iteration whose search returned nothing is: |R^2| = 0 and AvgGain_2 = 0 by the seed's convention
    c = Conversation("c", (Turn((Iteration((Search((a,)),)), Iteration(()), Iteration((Search(()),)),
                                 Iteration((Search((Result(id="b", gain=4),)),))), "q"),))
    report = evaluate_agents([c])
    curve = [dict(it.values) for it in report.conversations[0].curve]
    assert len(curve) == 3 and report.conversations[0].summary["N"] == 3
    assert (curve[1]["|R^i|"], curve[1]["AvgGain_i"], curve[1]["G_i"]) == (0, 0, 0)
    # RAG@3 = (2/1 + 0 + 4/1) / 3 = 2; DRAG@3 = (2 + 0 + 4 * 0.5) / 3 = 4/3; DCG@3 = 2 + 0 + 4/2 = 4
    assert curve[2]["RAG@i"] == pytest.approx(2.0)
    assert curve[2]["DRAG@i"] == pytest.approx(4 / 3)
    assert curve[2]["DCG@i"] == pytest.approx(4.0) and curve[2]["RG@i"] == pytest.approx(2.0)


def test_no_search_at_all() -> None:
    report = evaluate_agents([Conversation("c", (Turn((Iteration(()),), "q"),))])
    s = report.conversations[0].summary
    assert (s["N"], s["R@N"], s["CG@N"], s["DCG@N"], s["SRE@N"], s["SRR@N"]) == (0, 0, 0, 0, 0, 0)
    assert all(math.isnan(s[m]) for m in ("RG@N", "DRG@N", "RAG@N", "DRAG@N", "IterationsForAllGoodResults"))


def test_only_the_last_turn_counts() -> None:
    old = Turn((Iteration((Search((Result(id="a", gain=4), Result(id="b", gain=4))),)),), "first question")
    # the last turn re-finds a: it is new in this turn (earlier turns are excluded, duplicates included)
    c = conv([[Result(id="a", gain=4), Result(id="c", gain=0)]], earlier=(old,))
    report = evaluate_agents([c])
    result = report.conversations[0]
    assert result.turn == 2 and result.summary["N"] == 1
    assert (result.summary["UR@N"], result.summary["CG@N"], result.summary["SRE@N"]) == (2, 4, 0.5)
    assert any("not evaluated" in n for n in result.notes)


def test_good_gain_threshold_is_configurable() -> None:
    trace = conv([[Result(id="a", gain=1), Result(id="b", gain=3)]])
    assert curve_of(trace)[0]["CG@i"] == 3
    assert curve_of(trace, good_gain=1.0)[0]["CG@i"] == 4
    assert curve_of(trace, good_gain=4.0)[0]["CG@i"] == 0


def test_undefined_gain_is_never_zero() -> None:
    # b has no gain: everything gain-based is NaN from iteration 2 on; counts stay
    trace = conv([[Result(id="a", gain=3)]], [[Result(id="b")]], [[Result(id="c", gain=2)]])
    it1, it2, it3 = curve_of(trace)
    assert it1["CG@i"] == 3
    assert math.isnan(it2["G_i"]) and math.isnan(it2["CG@i"]) and math.isnan(it2["SRE@i"])
    assert math.isnan(it3["CG@i"]) and math.isnan(it3["RAG@i"])
    assert it3["G_i"] == 2 and it3["|GR^i|"] == 1  # iteration 3 itself is fully graded
    assert (it3["R@i"], it3["SRR@i"]) == (3, 0)
    with_zero = curve_of(trace, missing="zero")
    assert with_zero[2]["CG@i"] == 5


def test_values_at_n_names() -> None:
    curve = good_gain_curve([[1, 2], [2]], {1: 3.0, 2: 0.0})
    at_n = values_at_n(curve)
    assert set(at_n) == {"|R^N|", "|UR^N|", "|GR^N|", "|Dup^N|", "G_N", "R@N", "UR@N", "GR@N", "DupR@N", "CG@N",
                         "RG@N", "DCG@N", "DRG@N", "AvgGain_N", "RAG@N", "DRAG@N", "SRE@N", "SRR@N"}
    assert (at_n["R@N"], at_n["DupR@N"], at_n["CG@N"]) == (3, 1, 3)


# ------------------------------------------------------------------------------------------------ identities
ITERATIONS = st.lists(st.lists(st.integers(0, 12), max_size=8), max_size=8)
GAINS = st.dictionaries(st.integers(0, 12), st.integers(0, 4), min_size=13, max_size=13)


@settings(max_examples=200, deadline=None)
@given(ITERATIONS, GAINS, st.sampled_from([1.0, 2.0, 3.0]))
def test_seed_identities(iterations: list[list[int]], gains: dict[int, int], threshold: float) -> None:
    curve = good_gain_curve(iterations, {k: float(v) for k, v in gains.items()}, threshold)
    assert len(curve) == len(iterations)
    cg = dcg = 0.0
    for it in curve:
        v = it.values
        assert set(v) == set(ITERATION_COLUMNS)
        assert v["|R^i|"] == v["|UR^i|"] + v["|Dup^i|"]  # |R^i| = |UR^i| + |Dup^i|
        assert v["R@i"] == v["UR@i"] + v["DupR@i"]  # R@i = UR@i + DupR@i
        assert v["|GR^i|"] <= v["|UR^i|"] and v["GR@i"] <= v["UR@i"]
        cg += v["G_i"]
        dcg += w(it.i) * v["G_i"]
        assert v["CG@i"] == pytest.approx(cg) and v["DCG@i"] == pytest.approx(dcg)
        assert v["RG@i"] == pytest.approx(cg / it.i) and v["DRG@i"] == pytest.approx(dcg / it.i)
        if v["R@i"] > 0:
            assert v["SRE@i"] + v["SRR@i"] <= 1 + 1e-12
            assert v["SRR@i"] == pytest.approx(v["DupR@i"] / (v["UR@i"] + v["DupR@i"]))
        assert 0 <= v["AvgGain_i"] <= 4
    # each unique result is new exactly once
    if curve:
        assert curve[-1]["UR@i"] == len({c for it in iterations for c in it})


# ------------------------------------------------------------------------------------------------ all good
def test_iterations_for_all_good_from_the_trace() -> None:
    first = {1: 1, 2: 3, 3: 4}
    assert iterations_for_all_good(first, {1: 3.0, 2: 2.0, 3: 0.0}) == (3.0, True)
    assert iterations_for_all_good({1: 150}, {1: 4.0}) == (100.0, True)  # capped at 100
    value, found = iterations_for_all_good(first, {1: 1.0, 2: 0.0, 3: 0.0})
    assert math.isnan(value) and found is None  # no good result to find
    value, found = iterations_for_all_good(first, {1: 3.0, 2: None, 3: 0.0})
    assert math.isnan(value) and found is None  # is #2 good? unknown


def test_iterations_for_all_good_from_judgments() -> None:
    first = {1: 1, 2: 2, 3: 5}
    matched = {1: ["d1"], 2: [], 3: ["d2", "d1"]}
    assert iterations_for_all_good(first, {}, known_good={"d1", "d2"}, matched=matched) == (5.0, True)
    # d3 is never retrieved: the cap, and the flag says so
    assert iterations_for_all_good(first, {}, known_good={"d1", "d3"}, matched=matched) == (100.0, False)
    value, _ = iterations_for_all_good(first, {}, known_good=set(), matched=matched)
    assert math.isnan(value)


def test_judgments_define_all_good_results() -> None:
    c = conv([[Result(id="d1")]], [[Result(url="https://x.org/a")]], cid="q1")
    qrels = {"q1": {"d1": 3, "https://www.x.org/a/": 2, "d9": 0}}
    s = evaluate_agents([c], judgments=qrels).conversations[0].summary
    assert (s["CG@N"], s["IterationsForAllGoodResults"]) == (5, 2)
    r = evaluate_agents([c], judgments={"q1": {"d1": 3, "d7": 4}}).conversations[0]
    assert r.summary["IterationsForAllGoodResults"] == 100 and r.all_good_found is False
    assert r.summary["CG@N"] == 3  # the unjudged URL counts 0 with judgments (trec_eval)


def test_all_good_aggregate_leaves_capped_conversations_out() -> None:
    # judged good for q: d1 and d2. c1 has d1 at i1 and d2 at i2 -> 2; c3 has d2 only at i4 -> 4; c2 never
    # retrieves d2 -> the cap, 100, all_good_found false; c4 has no judged good result to find -> undefined
    d1, d2, x = Result(id="d1"), Result(id="d2"), Result(id="x")
    judged = [Conversation(cid, conv(*its).turns, query_id="q")
              for cid, its in (("c1", ([[d1]], [[d2]])), ("c2", ([[d1]], [[x]])),
                               ("c3", ([[d1]], [[x]], [[x]], [[d2]])))]
    report = evaluate_agents([*judged, conv([[x]], cid="c4")], judgments={"q": {"d1": 3, "d2": 2}, "c4": {"x": 0}})
    assert [c.summary["IterationsForAllGoodResults"] for c in report.conversations][:3] == [2, 100, 4]
    agg = {a.metric: a for a in report.aggregates}["IterationsForAllGoodResults"]
    # over the conversations that retrieved every good result: mean (2 + 4) / 2 = 3, median 3; c2 is counted
    # apart (capped), never averaged in (the mean of 2, 100 and 4 would be 35.33)
    assert (agg.mean, agg.median, agg.n, agg.capped, agg.undefined) == (3, 3, 2, 1, 1)
    assert agg.ci_low == 2 and agg.ci_high == 4
    # every other value has nothing capped
    assert all(a.capped == 0 for a in report.aggregates if a.metric != "IterationsForAllGoodResults")


def test_all_good_found_after_the_cap_is_capped() -> None:
    # gains from the trace, cap 2: a is found at i1 -> 1; b (good) first at i3 -> min(3, 2) = 2, capped (the
    # true value is 3); e found at exactly i2 -> 2, not capped (its value is exact)
    a, b, e, z = Result(id="a", gain=3), Result(id="b", gain=2), Result(id="e", gain=4), Result(id="z", gain=0)
    convs = [conv([[a]], cid="c1"), conv([[a]], [[z]], [[b]], cid="c2"), conv([[z]], [[e]], cid="c3")]
    report = evaluate_agents(convs, settings=AgentSettings(cap=2))
    assert [c.summary["IterationsForAllGoodResults"] for c in report.conversations] == [1, 2, 2]
    assert [c.all_good_capped for c in report.conversations] == [False, True, False]
    agg = {a.metric: a for a in report.aggregates}["IterationsForAllGoodResults"]
    assert (agg.mean, agg.median, agg.n, agg.capped, agg.undefined) == (1.5, 1.5, 2, 1, 0)


# ------------------------------------------------------------------------------------------------ sDCG
def test_session_dcg_counts_empty_searches_as_queries() -> None:
    # search 1 returns nothing, search 2 finds a (gain 3): a is at query position 2, discounted by 1/(1 + log4 2)
    c = conv([[], [Result(id="a", gain=3)]])
    assert evaluate_agents([c]).conversations[0].summary["sDCG"] == pytest.approx(3 * 2 / 3)


def test_session_dcg_by_hand() -> None:
    gains = {1: 3.0, 2: 2.0, 3: 1.0, 4: 0.0}
    # q1 = [1, 2, 3]: 3/1 + 2/max(1, log2 2) + 1/log2 3
    q1 = 3 + 2 + 1 / L2_3
    assert session_dcg([[1, 2, 3]], gains) == pytest.approx(q1)
    # q2 = [2, 4, 1]: 2 and 1 were seen, 4 has gain 0 -> DCG_2 = 0; discount 1/(1 + log4 2) = 2/3
    assert session_dcg([[1, 2, 3], [2, 4, 1]], gains) == pytest.approx(q1)
    # q2 = [4, 3] after q1 = [1]: 3 is new at rank 2: 1/1, discounted by 2/3
    assert session_dcg([[1], [4, 3]], gains) == pytest.approx(3 + (1.0) * 2 / 3)
    # depth 1: 2 is beyond the depth in q1, so it counts when met at rank 1 of q2
    assert session_dcg([[1, 2], [2]], gains, depth=1) == pytest.approx(3 + 2 * 2 / 3)
    # the paper's query discounts for bq = 4: 1, 0.667, 0.558, 0.5
    ones = {k: 1.0 for k in range(4)}
    assert session_dcg([[0], [1], [2], [3]], ones) == pytest.approx(1 + 2 / 3 + 1 / (1 + math.log(3, 4)) + 0.5)
    # b = 3: ranks 1 and 2 undiscounted, rank 3 by log3 3 = 1, rank 9 by log3 9 = 2
    assert session_dcg([[0, 1, 2]], ones, b=3) == pytest.approx(3.0)
    assert math.isnan(session_dcg([[1, 9]], {1: 2.0, 9: None}))
    with pytest.raises(InvalidParameterError, match="the 'b' parameter of sDCG must be a number > 1; got 1"):
        session_dcg([[1]], gains, b=1)


def test_session_dcg_gain_mapping() -> None:
    gains = {1: 3.0, 2: 2.0, 3: 4.0}
    steep = {0: 0.0, 1: 1.0, 2: 10.0, 3: 100.0, 4: 1000.0}
    # q1 = [1, 2]: 100/1 + 10/log2 2; q2 = [2, 3]: 2 was seen, 3 new at rank 2: 1000/1, discounted 1/(1 + log4 2)
    assert session_dcg([[1, 2], [2, 3]], gains, gain_map=steep) == pytest.approx(110 + 1000 * 2 / 3)
    assert session_dcg([[1, 2], [2, 3]], gains) == pytest.approx(5 + 4 * 2 / 3)  # the grades as they are
    with pytest.raises(InvalidParameterError, match="the sDCG gain mapping has no gain for grade 3"):
        session_dcg([[1]], gains, gain_map={0: 0.0})
    # through the settings and the command line
    c = conv([[Result(id="a", gain=2)], [Result(id="b", gain=3)]])
    s = evaluate_agents([c], settings=AgentSettings(sdcg_gains={0: 0, 1: 1, 2: 10, 3: 100, 4: 1000}))
    assert s.conversations[0].summary["sDCG"] == pytest.approx(10 + 100 * 2 / 3)
    assert "gains mapped 0:0, 1:1, 2:10, 3:100, 4:1000" in dict(s.settings.describe("trace"))["sDCG"]
    with pytest.raises(PolicyError, match="sdcg_gains"):
        AgentSettings(sdcg_gains={0: -1})
