"""Every temporal metric in every mode, computed by hand (arithmetic in the comments)."""

from __future__ import annotations

import asyncio
import math
import re

import pytest

from gainscope.errors import InputError, InvalidParameterError, PolicyError
from gainscope.temporal import (
    FocusTime,
    TemporalCoverage,
    TemporalDiversity,
    TemporalGradeError,
    TemporalMAP,
    TemporalMRR,
    TemporalNDCG,
    TemporalPrecision,
    TemporalRecall,
    TemporalYearPrecision,
    TemporalYearRecall,
)

from .judges import TableJudge

L2, L3, L4 = math.log2(2), math.log2(3), math.log2(4)  # discounts of ranks 1, 2, 3

QFT = {2020, 2021}
# Jaccard with QFT: {2020,2021} 2/2 = 1; {2019} 0; {2020} 1/2; {2021,2022} 1/3; {2018} 0
DFTS = [{2019}, {2020, 2021}, {2020}, {2021, 2022}, {2018}]
# grades (4 x Jaccard): 0, 4, 2, 4/3, 0; relevant (any shared year): F, T, T, T, F


def test_seed_example() -> None:
    # grades [4, 0]: DCG = 4 / log2(2) = 4; the ideal [4, 0] gives the same: 1.0
    assert TemporalNDCG(use_focus_time=True).compute(qft={2020, 2021}, dfts=[{2020, 2021}, {2019}], k=2) == 1.0


def test_ndcg_focus_time_by_hand() -> None:
    dcg = 0 / L2 + 4 / L3 + 2 / L4  # top 3 grades 0, 4, 2
    ideal = 4 / L2 + 2 / L3 + (4 / 3) / L4  # best 3 of all five grades: 4, 2, 4/3
    m = TemporalNDCG(use_focus_time=True)
    assert m.compute(qft=QFT, dfts=DFTS, k=3) == pytest.approx(dcg / ideal)
    # ideal=retrieved: the top 3 re-sorted, 4, 2, 0
    local = 4 / L2 + 2 / L3
    assert TemporalNDCG(use_focus_time=True, ideal="retrieved").compute(qft=QFT, dfts=DFTS, k=3) == \
        pytest.approx(dcg / local)
    # exponential gain 2^g - 1: top 3 -> 0, 15, 3; ideal 15, 3, 2^(4/3) - 1
    e_dcg = 15 / L3 + 3 / L4
    e_ideal = 15 / L2 + 3 / L3 + (2 ** (4 / 3) - 1) / L4
    assert TemporalNDCG(use_focus_time=True, gain="exponential").compute(qft=QFT, dfts=DFTS, k=3) == \
        pytest.approx(e_dcg / e_ideal)
    # a judged document the system did not retrieve (grade 4) enters the ideal: 4, 4, 2
    with_other = 4 / L2 + 4 / L3 + 2 / L4
    assert m.compute(qft=QFT, dfts=DFTS, other_dfts=[{2020, 2021}], k=3) == pytest.approx(dcg / with_other)
    score = m.score(qft=QFT, dfts=DFTS, k=3)
    assert score.grades == pytest.approx((0.0, 4.0, 2.0)) and score.mode == "focus_time" and score.reason == ""


def test_ndcg_gold_by_hand() -> None:
    # list gold: grade 1 each. ranked grades a=0, b=1, c=1; ideal 1, 1, 1 (three gold ids)
    v = TemporalNDCG().compute(retrieved_ids=["a", "b", "c"], gold_ids=["b", "c", "z"], k=3)
    assert v == pytest.approx((1 / L3 + 1 / L4) / (1 / L2 + 1 / L3 + 1 / L4))
    # graded gold {b: 3, z: 1}: ranked 0, 3, 0; ideal 3, 1 -> (3 / log2 3) / (3 + 1 / log2 3)
    v = TemporalNDCG().compute(retrieved_ids=["a", "b", "c"], gold_ids={"b": 3, "z": 1}, k=5)
    assert v == pytest.approx((3 / L3) / (3 + 1 / L3))
    # exponential: ranked 0, 7, 0; ideal 7, 1
    v = TemporalNDCG(gain="exponential").compute(retrieved_ids=["a", "b", "c"], gold_ids={"b": 3, "z": 1}, k=5)
    assert v == pytest.approx((7 / L3) / (7 + 1 / L3))


def test_undefined_values_are_nan_with_a_reason() -> None:
    s = TemporalNDCG().score(retrieved_ids=["a"], gold_ids={"x": 0}, k=5)
    assert math.isnan(s.value) and s.reason == "IDCG is 0: no positive grade among the judged documents"
    s = TemporalNDCG(use_focus_time=True).score(qft=set(), dfts=[{2020}], k=5)
    assert math.isnan(s.value) and s.reason == "the query has no focus time (an empty QFT)"
    s = TemporalRecall(use_focus_time=True).score(qft=QFT, dfts=[{1999}], k=5)
    assert math.isnan(s.value) and s.reason == "no relevant document (R = 0)"
    s = TemporalPrecision(use_focus_time=True).score(qft=QFT, dfts=[], k=5)
    assert math.isnan(s.value) and s.reason == "nothing retrieved"


def test_precision_recall_mrr_map_focus_time() -> None:
    ft = {"qft": QFT, "dfts": DFTS}
    # top 3 relevant: F, T, T -> 2 / min(3, 5)
    assert TemporalPrecision(use_focus_time=True).compute(**ft, k=3) == pytest.approx(2 / 3)
    # k = 10 > 5 retrieved: 3 relevant / min(10, 5) = 3/5; denominator k: 3/10
    assert TemporalPrecision(use_focus_time=True).compute(**ft, k=10) == pytest.approx(3 / 5)
    assert TemporalPrecision(use_focus_time=True, denominator="k").compute(**ft, k=10) == pytest.approx(3 / 10)
    # min_jaccard 0.4: Jaccards 0, 1, 0.5 in the top 3 -> 2 relevant; 1/3 at rank 4 is not
    assert TemporalPrecision(use_focus_time=True, min_jaccard=0.4).compute(**ft, k=4) == pytest.approx(2 / 4)
    # recall: 2 of the 3 relevant in the pool are in the top 3
    assert TemporalRecall(use_focus_time=True).compute(**ft, k=3) == pytest.approx(2 / 3)
    assert TemporalRecall(use_focus_time=True).compute(**ft, k=3, total_relevant=8) == pytest.approx(2 / 8)
    # first relevant at rank 2
    assert TemporalMRR(use_focus_time=True).compute(**ft, k=3) == 0.5
    assert TemporalMRR(use_focus_time=True).compute(**ft, k=1) == 0.0
    # AP@3: relevant at 2 (P=1/2) and 3 (P=2/3); R = 3 judged relevant -> (1/2 + 2/3) / 3
    assert TemporalMAP(use_focus_time=True).compute(**ft, k=3) == pytest.approx((1 / 2 + 2 / 3) / 3)
    # denominator=retrieved: / 2 relevant retrieved in the top 3
    assert TemporalMAP(use_focus_time=True, denominator="retrieved").compute(**ft, k=3) == \
        pytest.approx((1 / 2 + 2 / 3) / 2)


def test_precision_recall_mrr_map_gold() -> None:
    g = {"retrieved_ids": ["a", "b", "c", "d"], "gold_ids": {"b": 1, "d": 2, "z": 3, "y": 0}}
    # relevant (grade >= 1): b, d; pool relevant: b, d, z -> R = 3
    assert TemporalPrecision().compute(**g, k=4) == pytest.approx(2 / 4)
    assert TemporalPrecision(rel=2).compute(**g, k=4) == pytest.approx(1 / 4)  # only d
    assert TemporalRecall().compute(**g, k=4) == pytest.approx(2 / 3)
    assert TemporalMRR().compute(**g, k=4) == 0.5
    assert TemporalMAP().compute(**g, k=4) == pytest.approx((1 / 2 + 2 / 4) / 3)


def test_year_precision_recall_diversity_coverage() -> None:
    # top 2 union {2019, 2020, 2021}: 2 of its 3 years are asked for; both query years covered
    assert TemporalYearPrecision().compute(qft=QFT, dfts=DFTS, k=2) == pytest.approx(2 / 3)
    assert TemporalYearRecall().compute(qft=QFT, dfts=DFTS, k=2) == 1.0
    # top 1 {2019}: no asked year
    assert TemporalYearPrecision().compute(qft=QFT, dfts=DFTS, k=1) == 0.0
    assert TemporalYearRecall().compute(qft={2010, 2015, 2020}, dfts=[{2010, 2011}, {2015}], k=2) == \
        pytest.approx(2 / 3)
    assert math.isnan(TemporalYearPrecision().compute(qft=QFT, dfts=[set()], k=1))
    # diversity: union of the top 5 {2018..2022} = 5 years of a 10-year scope
    assert TemporalDiversity().compute(dfts=DFTS, total_scope=10, k=5) == 0.5
    assert TemporalDiversity().compute(dfts=DFTS, scope="2015-2024", k=5) == 0.5
    # in decades: {2010s, 2020s} of the scope 2000s..2020s -> 2/3
    assert TemporalDiversity(granularity=10).compute(dfts=DFTS, scope="2000-2029", k=5) == pytest.approx(2 / 3)
    with pytest.raises(InputError, match="needs a temporal scope"):
        TemporalDiversity().compute(dfts=DFTS, k=5)
    # coverage: 2017 is covered by the first document, 2023-2024 by none -> 1/2
    assert TemporalCoverage().compute(dfts=[{2017}, {2019}], baseline_anchor=2017, comparison_anchor="2023-2024",
                                      k=2) == 0.5
    assert TemporalCoverage().compute(dfts=DFTS, anchors=["1990s", 2018, "2022"], k=5) == pytest.approx(2 / 3)


def test_mode_and_parameter_errors() -> None:
    with pytest.raises(PolicyError, match="choose one mode"):
        TemporalNDCG(use_focus_time=True, use_llm=True, llm=TableJudge({}))
    with pytest.raises(PolicyError, match=r"has no judge: pass llm=<a judge>"):
        TemporalNDCG(use_llm=True).compute(query="q", retrieved_docs=["x"], k=1)
    # gain is the core nDCG's parameter: the core's error (it was a PolicyError "gain must be ...")
    with pytest.raises(InvalidParameterError, match=re.escape("the 'gain' parameter of nDCG must be one of 'linear', "
                                                              "'exponential' or a {grade: gain} map; got 'quadratic'")):
        TemporalNDCG(gain="quadratic")
    with pytest.raises(PolicyError, match="TemporalYearRecall has no llm mode"):
        TemporalYearRecall(use_llm=True, llm=TableJudge({}))
    with pytest.raises(InputError, match=r"needs dfts, qft \(missing qft\)"):
        TemporalNDCG(use_focus_time=True).compute(dfts=DFTS, k=3)
    with pytest.raises(TypeError, match="unknown input"):
        TemporalNDCG().compute(retrieved_ids=["a"], gold_ids=["a"], k=3, gold=["a"])
    # the core's error for a cutoff below 1 (it was a PolicyError)
    with pytest.raises(InvalidParameterError, match=r"^the 'k' parameter of TemporalNDCG must be an int >= 1; "
                                                    r"got 0\.$"):
        TemporalNDCG().compute(retrieved_ids=["a"], gold_ids=["a"], k=0)
    with pytest.raises(InputError, match="retrieved twice"):
        TemporalNDCG().compute(retrieved_ids=["a", "a"], gold_ids=["a"], k=3)
    with pytest.raises(InputError, match=r"dfts\[1\]: expected years"):
        TemporalNDCG(use_focus_time=True).compute(qft=QFT, dfts=[{2020}, {True}], k=3)
    assert str(TemporalNDCG(gain="exponential", ideal="retrieved")) == \
        "TemporalNDCG(gain=exponential, ideal=retrieved)"


DOCS = ["about 2020", "nothing", "about 2021", "about 2019"]
GRADES = {"about 2020": 4, "nothing": 0, "about 2021": 3, "about 2019": 1}


def test_llm_mode_by_hand() -> None:
    judge = TableJudge(dict(GRADES))
    m = TemporalNDCG(use_llm=True, llm=judge)
    # top 2 grades 4, 0; ideal from all four given documents: 4, 3
    v = asyncio.run(m.acompute(query="What happened in 2020?", retrieved_docs=DOCS, k=2))
    assert v == pytest.approx(4 / (4 + 3 / L3))
    assert sorted(d for _, d in judge.calls) == ["d1", "d2", "d3", "d4"]  # the ideal needs the whole pool
    judge.calls.clear()
    local = TemporalNDCG(use_llm=True, llm=judge, ideal="retrieved")
    assert local.compute(query="q", retrieved_docs=DOCS, k=2) == 1.0  # sync call runs the judge too
    assert sorted(d for _, d in judge.calls) == ["d1", "d2"]  # only the top 2 are graded
    # relevant = grade >= 2: d1, d3. P@3 = 2/3; RR = 1; recall = 2 of 2; AP@3 = (1 + 2/3) / 2
    assert TemporalPrecision(use_llm=True, llm=judge).compute(query="q", retrieved_docs=DOCS, k=3) == \
        pytest.approx(2 / 3)
    assert TemporalMRR(use_llm=True, llm=judge).compute(query="q", retrieved_docs=DOCS, k=3) == 1.0
    assert TemporalRecall(use_llm=True, llm=judge).compute(query="q", retrieved_docs=DOCS, k=1) == 0.5
    assert TemporalMAP(use_llm=True, llm=judge).compute(query="q", retrieved_docs=DOCS, k=3) == \
        pytest.approx((1 + 2 / 3) / 2)
    # rel=1 adds d4 (grade 1): P@4 = 3/4
    assert TemporalPrecision(use_llm=True, llm=judge, rel=1).compute(query="q", retrieved_docs=DOCS, k=4) == 0.75


def test_coverage_llm_mode_asks_per_anchor() -> None:
    class AnchorJudge(TableJudge):
        async def grade(self, query, document):  # type: ignore[no-untyped-def]
            label = await super().grade(query, document)
            # the document covers an anchor when its text names the anchor's year
            from dataclasses import replace

            anchor = query.text.rsplit(": ", 1)[1]
            return replace(label, grade=4 if anchor in document.text else 0)

    judge = AnchorJudge(dict(GRADES))
    m = TemporalCoverage(use_llm=True, llm=judge)
    v = asyncio.run(m.acompute(query="How did X change?", retrieved_docs=DOCS, baseline_anchor="2019",
                               comparison_anchor="2024", k=4))
    assert v == 0.5  # 2019 covered by d4, 2024 by none
    assert ("How did X change?\nTime period: 2019", "d4") in judge.calls and len(judge.calls) == 8


def test_failed_grades_are_reported_never_zero() -> None:
    judge = TableJudge({**GRADES, "nothing": None})
    m = TemporalNDCG(use_llm=True, llm=judge)
    with pytest.raises(TemporalGradeError, match=r"could not grade 1 document\(s\).*d2: unusable answer") as info:
        asyncio.run(m.acompute(query="q", retrieved_docs=DOCS, k=2))
    assert info.value.failures == (("d2", "unusable answer: no grade"),)
    s = asyncio.run(TemporalNDCG(use_llm=True, llm=judge, on_failure="nan").ascore(query="q", retrieved_docs=DOCS,
                                                                                   k=2))
    assert math.isnan(s.value) and s.failures == (("d2", "unusable answer: no grade"),)
    assert s.reason == "the judge could not grade 1 document(s)" and math.isnan(s.grades[1])
    # a failure outside what the metric needs is not asked about: P@1 grades only d1
    assert TemporalPrecision(use_llm=True, llm=judge).compute(query="q", retrieved_docs=DOCS, k=1) == 1.0


def test_compute_inside_a_running_loop_points_to_acompute() -> None:
    m = TemporalNDCG(use_llm=True, llm=TableJudge(dict(GRADES)))

    async def inner() -> None:
        with pytest.raises(PolicyError, match=r"use await metric\.acompute"):
            m.compute(query="q", retrieved_docs=DOCS, k=2)

    asyncio.run(inner())


def test_focus_time_objects_and_spellings_are_accepted() -> None:
    m = TemporalNDCG(use_focus_time=True)
    assert m.compute(qft=FocusTime.range(2020, 2021), dfts=[["2020-2021"], "2019"], k=2) == 1.0


def test_the_seeds_llm_assignment_style() -> None:
    # seed 001: metric = TemporalNDCG(use_llm=True); metric.llm = llm; await metric.acompute(...)
    metric = TemporalNDCG(use_llm=True)
    with pytest.raises(PolicyError, match=r"TemporalNDCG\(use_llm=True\) has no judge: pass llm=<a judge> to the "
                                          r"constructor, or set metric\.llm = judge"):
        metric.compute(query="q", retrieved_docs=DOCS, k=2)
    metric.llm = TableJudge(dict(GRADES))
    assert asyncio.run(metric.acompute(query="What happened in 2020?", retrieved_docs=DOCS, k=2)) == \
        pytest.approx(4 / (4 + 3 / L3))
    # the other fields stay frozen
    from dataclasses import FrozenInstanceError

    with pytest.raises(FrozenInstanceError):
        metric.gain = "exponential"  # type: ignore[misc]
    with pytest.raises(PolicyError, match=r"llm must be a judge"):
        metric.llm = "gpt-4o"


def test_judges_on_another_scale_are_refused() -> None:
    from dataclasses import replace

    from gainscope.judges.prompts import builtin_prompt

    judge = TableJudge(dict(GRADES))
    judge.spec = replace(judge.spec, prompt=builtin_prompt("umbrela"))
    with pytest.raises(PolicyError, match=r"grades on 0-3 \(prompt umbrela\); the temporal metrics read grades on "
                                          r"seed 001's 0-4 temporal rubric"):
        TemporalNDCG(use_llm=True, llm=judge)
    metric = TemporalNDCG(use_llm=True)
    with pytest.raises(PolicyError, match=r"grades on 0-3"):
        metric.llm = judge
    # a judge that says 0-4 and answers 7: a failed grade, never a value computed from it
    wild = TableJudge({**GRADES, "nothing": 7})
    with pytest.raises(TemporalGradeError, match=r"d2: grade 7 is outside the 0-4 temporal scale"):
        TemporalNDCG(use_llm=True, llm=wild).compute(query="q", retrieved_docs=DOCS, k=2)


def test_metric_name_errors() -> None:
    from gainscope.errors import UnknownMetricError
    from gainscope.temporal.batch import parse_metric

    with pytest.raises(UnknownMetricError) as info:
        parse_metric("Foo@5")
    assert str(info.value).startswith("unknown temporal metric 'Foo'; the temporal metrics: TemporalNDCG, ")
    with pytest.raises(UnknownMetricError) as info:
        parse_metric("TemporalNDGC@5")
    assert str(info.value).startswith("unknown temporal metric 'TemporalNDGC' (did you mean TemporalNDCG?); the "
                                      "temporal metrics: TemporalNDCG, ")
    # a cutoff below 1: the core's InvalidParameterError, as for nDCG@0 (these were PolicyErrors)
    with pytest.raises(InvalidParameterError, match=r"^the 'cutoff' parameter of TemporalMRR must be an int >= 1; "
                                                    r"got 0\.$"):
        parse_metric("TemporalMRR@0")
    with pytest.raises(InvalidParameterError, match=r"^the 'k' parameter of TemporalMRR must be an int >= 1; got 0\.$"):
        TemporalMRR().compute(retrieved_ids=["a"], gold_ids=["a"], k=0)


class PeriodJudge(TableJudge):
    """Grades 4 when the document's text names the period asked about, else 0."""

    async def grade(self, query, document):  # type: ignore[no-untyped-def]
        from dataclasses import replace

        label = await super().grade(query, document)
        period = query.text.rsplit(": ", 1)[1]
        return replace(label, grade=4 if period in document.text else 0)


def test_diversity_llm_mode_asks_per_bucket_of_the_scope() -> None:
    judge = PeriodJudge(dict(GRADES))
    m = TemporalDiversity(use_llm=True, llm=judge)
    # scope 2019..2022, one year per bucket: the top 4 name 2020, 2021 and 2019 -> 3 of 4 buckets
    v = asyncio.run(m.acompute(query="How did X change?", retrieved_docs=DOCS, scope="2019-2022", k=4))
    assert v == 0.75 and len(judge.calls) == 16  # 4 buckets x 4 documents
    judge.calls.clear()
    # five-year buckets of 2010..2029 are asked as "2010-2014", ...; none is named verbatim by a document
    v = TemporalDiversity(use_llm=True, llm=judge, granularity=5).compute(query="q", retrieved_docs=DOCS[:1],
                                                                         scope="2010-2029", k=1)
    assert v == 0.0
    assert [q.rsplit(": ", 1)[1] for q, _ in judge.calls] == ["2010-2014", "2015-2019", "2020-2024", "2025-2029"]
    with pytest.raises(InputError, match=r"needs scope=<the years to cover>"):
        m.compute(query="q", retrieved_docs=DOCS, total_scope=10, k=2)
    failing = TemporalDiversity(use_llm=True, llm=TableJudge({**GRADES, "nothing": None}), on_failure="nan")
    s = asyncio.run(failing.ascore(query="q", retrieved_docs=DOCS, scope="2019-2020", k=2))
    assert math.isnan(s.value) and s.reason == "the judge could not grade 2 (document, period) pair(s)"
