"""gainscope.fuse: every method and normalisation on hand-computed examples, the tie rule, and bad requests.

The running example (norm none unless said): run a ranks q1 as d1 (3), d2 (2), d3 (1); run b ranks d2 (5),
d4 (1). The candidates of q1 are d1..d4 (c = 4).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import gainscope
from gainscope.core.run import Run
from gainscope.errors import InputError, InputWarning, PolicyError, QueryCoverageWarning
from gainscope.fusion import METHODS, NORMALIZATIONS, fuse
from gainscope.fusion.fuse import candidates


def _runs() -> list[Run]:
    a = Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}, name="a")
    b = Run.from_dict({"q1": {"d2": 5.0, "d4": 1.0}}, name="b")
    return [a, b]


def _scores(run: Run) -> dict[str, float]:
    return dict(zip(run.frame["doc_id"].to_list(), run.frame["score"].to_list(), strict=True))


def _order(run: Run) -> list[str]:
    return run.frame["doc_id"].to_list()


# ---------------------------------------------------------------------------------------------- methods
def test_combsum_adds_scores_and_breaks_the_tie_of_d3_and_d4_by_doc_id_descending() -> None:
    fused = fuse(_runs(), "combsum", norm="none")
    # d2 = 2 + 5 = 7; d1 = 3; d3 = 1 (a only); d4 = 1 (b only): d4 before d3
    assert _scores(fused) == {"d2": 7.0, "d1": 3.0, "d4": 1.0, "d3": 1.0}
    assert _order(fused) == ["d2", "d1", "d4", "d3"]
    assert fused.frame["rank"].to_list() == [1, 2, 3, 4]


@pytest.mark.parametrize(("method", "d2"), [
    ("combmnz", 14.0),   # (2 + 5) * 2 runs
    ("combanz", 3.5),    # (2 + 5) / 2
    ("combmax", 5.0),
    ("combmin", 2.0),
    ("combmed", 3.5),    # median(2, 5)
])
def test_comb_methods_on_d2_which_both_runs_retrieved(method: str, d2: float) -> None:
    fused = _scores(fuse(_runs(), method, norm="none"))
    assert fused["d2"] == d2
    assert fused["d1"] == 3.0 and fused["d3"] == 1.0 and fused["d4"] == 1.0  # one run each: its own score


def test_wsum_weights_each_run() -> None:
    fused = _scores(fuse(_runs(), "wsum", norm="none", weights=[0.3, 0.7]))
    # d2 = 0.3 * 2 + 0.7 * 5 = 4.1; d1 = 0.3 * 3; d3 = 0.3 * 1; d4 = 0.7 * 1
    assert fused == pytest.approx({"d2": 4.1, "d1": 0.9, "d3": 0.3, "d4": 0.7}, abs=1e-15)


def test_rrf_sums_reciprocal_ranks_with_k_60() -> None:
    fused = _scores(fuse(_runs(), "rrf"))
    # ranks: a d1 1, d2 2, d3 3; b d2 1, d4 2
    assert fused == {"d2": 1 / 61 + 1 / 62, "d1": 1 / 61, "d4": 1 / 62, "d3": 1 / 63}


def test_weighted_rrf_and_another_k() -> None:
    fused = _scores(fuse(_runs(), "rrf", weights=[2, 1], rrf_k=0))
    # k = 0: d2 = 2 / 2 + 1 / 1 = 2; d1 = 2 / 1; d3 = 2 / 3; d4 = 1 / 2
    assert fused == {"d2": 2.0, "d1": 2.0, "d3": 2 / 3, "d4": 0.5}


def test_isr_and_log_isr() -> None:
    isr = _scores(fuse(_runs(), "isr"))
    # d2: (1 / 2^2 + 1 / 1^2) * 2 runs = 2.5; d1: 1 / 1^2 * 1; d4: 1 / 2^2; d3: 1 / 3^2
    assert isr == {"d2": 2.5, "d1": 1.0, "d4": 0.25, "d3": 1 / 9}
    log_isr = fuse(_runs(), "log_isr")
    # d2: 1.25 * ln 2; the others are in one run: ln 1 = 0, three tied at 0 in doc id descending order
    assert _scores(log_isr) == {"d2": 1.25 * math.log(2), "d4": 0.0, "d3": 0.0, "d1": 0.0}
    assert _order(log_isr) == ["d2", "d4", "d3", "d1"]


def test_bordafuse_gives_unranked_documents_the_mean_of_the_points_left() -> None:
    fused = _scores(fuse(_runs(), "bordafuse"))
    # c = 4. a (n = 3): d1 4, d2 3, d3 2, d4 (4 - 3 + 1) / 2 = 1; b (n = 2): d2 4, d4 3, d1 and d3 (4 - 2 + 1) / 2
    assert fused == {"d2": 7.0, "d1": 5.5, "d4": 4.0, "d3": 3.5}


def test_condorcet_follows_the_pairwise_majority() -> None:
    runs = [Run.from_dict({"q": ["x", "y", "z"]}, name="a"), Run.from_dict({"q": ["y", "x", "z"]}, name="b"),
            Run.from_dict({"q": ["x", "z", "y"]}, name="c")]
    fused = fuse(runs, "condorcet")
    # x beats y 2-1 and z 3-0; y beats z 2-1: x, y, z with scores 3, 2, 1
    assert _scores(fused) == {"x": 3.0, "y": 2.0, "z": 1.0}


def test_condorcet_keeps_doc_id_descending_order_between_documents_with_as_many_votes_each_way() -> None:
    runs = [Run.from_dict({"q": ["p", "q"]}, name="a"), Run.from_dict({"q": ["q", "p"]}, name="b")]
    assert _order(fuse(runs, "condorcet")) == ["q", "p"]


def test_condorcet_counts_a_retrieved_document_above_one_the_run_did_not_retrieve() -> None:
    runs = [Run.from_dict({"q": ["d1", "d2"]}, name="a"), Run.from_dict({"q": ["d3"]}, name="b"),
            Run.from_dict({"q": ["d2"]}, name="c")]
    # d1 vs d2: a d1, c d2 (b neither): even. d1 vs d3: a d1, b d3: even. d2 vs d3: a d2, b d3, c d2: d2 wins.
    # Sorting d3, d2, d1 (doc id descending) keeps the even pairs in place: d2, d3, d1.
    assert _scores(fuse(runs, "condorcet")) == {"d2": 3.0, "d3": 2.0, "d1": 1.0}


# ---------------------------------------------------------------------------------------------- normalisations
def _normalised(norm: str) -> dict[tuple[str, int], float]:
    c = candidates(_runs(), NORMALIZATIONS[norm])
    out = {}
    for i, d in enumerate(c.doc_ids.to_list()):
        for r in range(2):
            if not np.isnan(c.values[i, r]):
                out[(d, r)] = float(c.values[i, r])
    return out


def test_minmax_max_and_sum_of_run_a() -> None:
    # a: 3, 2, 1 (min 1, max 3, sum 6, n 3)
    mm = _normalised("minmax")
    assert [mm[(d, 0)] for d in ("d1", "d2", "d3")] == [1.0, 0.5, 0.0]            # (s - 1) / 2
    mx = _normalised("max")
    assert [mx[(d, 0)] for d in ("d1", "d2", "d3")] == [1.0, 2 / 3, 1 / 3]         # s / 3
    sm = _normalised("sum")
    assert [sm[(d, 0)] for d in ("d1", "d2", "d3")] == [2 / 3, 1 / 3, 0.0]         # (s - 1) / (6 - 3 * 1)
    assert ("d4", 0) not in mm  # a did not retrieve d4: no value


def test_zmuv_uses_the_population_standard_deviation() -> None:
    z = _normalised("zmuv")
    sd = math.sqrt(2 / 3)  # mean 2; ((1 + 0 + 1) / 3) ** 0.5
    assert [z[(d, 0)] for d in ("d1", "d2", "d3")] == pytest.approx([1 / sd, 0.0, -1 / sd], abs=1e-15)


def test_rank_and_borda() -> None:
    rk = _normalised("rank")
    assert [rk[(d, 0)] for d in ("d1", "d2", "d3")] == [1.0, 1 - 1 / 3, 1 - 2 / 3]   # 1 - (r - 1) / n
    bd = _normalised("borda")
    # retrieved: 1 - (r - 1) / c with c = 4; d4 not in a: 1/2 - (3 - 1) / (2 * 4) = 0.25
    assert [bd[(d, 0)] for d in ("d1", "d2", "d3", "d4")] == [1.0, 0.75, 0.5, 0.25]
    # b (n = 2): d2 1, d4 0.75, d1 and d3 1/2 - 1/8
    assert [bd[(d, 1)] for d in ("d2", "d4", "d1", "d3")] == [1.0, 0.75, 0.375, 0.375]


def test_a_query_with_equal_scores_normalises_to_zero_as_ranx() -> None:
    runs = [Run.from_dict({"q": {"x": 2.0, "y": 2.0}}, name="a"), Run.from_dict({"q": {"x": 1.0}}, name="b")]
    c = candidates(runs, NORMALIZATIONS["minmax"])
    assert c.values[:, 0].tolist() == [0.0, 0.0]  # (2 - 2) / max(0, 1e-9)


def test_max_normalisation_of_non_positive_scores_is_warned() -> None:
    runs = [Run.from_dict({"q": {"x": -2.0, "y": -1.0}}, name="neg"), Run.from_dict({"q": {"x": 1.0}}, name="b")]
    with pytest.warns(InputWarning, match=r"^run 'neg': the best score of 1 \(run, query\) pair\(s\) is 0 or negative "
                                          r"\(query 'q': -1.0\), so norm='max' divides by 1e-9 there, as ranx does; "
                                          r"use norm='minmax' for such scores$"):
        c = candidates(runs, NORMALIZATIONS["max"])
    assert sorted(c.values[:, 0].tolist()) == pytest.approx([-2e9, -1e9])  # order kept, magnitudes huge


def test_combsum_with_borda_normalisation_counts_every_run_for_every_candidate() -> None:
    fused = _scores(fuse(_runs(), "combsum", norm="borda"))
    # d2 = 0.75 + 1; d1 = 1 + 0.375; d4 = 0.25 + 0.75; d3 = 0.5 + 0.375
    assert fused == {"d2": 1.75, "d1": 1.375, "d4": 1.0, "d3": 0.875}
    mnz = _scores(fuse(_runs(), "combmnz", norm="borda"))
    assert mnz["d3"] == 0.875 * 2  # both runs have a value for d3


def test_default_normalisation_is_minmax_for_score_methods() -> None:
    assert _scores(fuse(_runs(), "combsum")) == _scores(fuse(_runs(), "combsum", norm="minmax"))
    assert "norm minmax" in fuse(_runs(), "combsum").notes[0]


# ---------------------------------------------------------------------------------------------- ties
def test_input_ties_are_ranked_by_doc_id_descending_before_rank_based_fusion() -> None:
    runs = [Run.from_dict({"q": {"x": 1.0, "y": 1.0}}, name="a"), Run.from_dict({"q": {"z": 5.0}}, name="b")]
    fused = fuse(runs, "rrf")
    # a: y rank 1, x rank 2 (doc id descending); b: z rank 1. y and z tie at 1/61: z first
    assert _scores(fused) == {"z": 1 / 61, "y": 1 / 61, "x": 1 / 62}
    assert _order(fused) == ["z", "y", "x"]


def test_equal_terms_in_another_order_of_runs_give_bit_identical_scores() -> None:
    x = [0.02834747652200631, 0.8357651039198697, 0.43276706790505337]
    assert (x[0] + x[1]) + x[2] != (x[2] + x[1]) + x[0]  # adding in run order would break the tie
    runs = [Run.from_dict({"q": {"A": x[0], "B": x[2]}}, name="r1"),
            Run.from_dict({"q": {"A": x[1], "B": x[1]}}, name="r2"),
            Run.from_dict({"q": {"A": x[2], "B": x[0]}}, name="r3")]
    fused = fuse(runs, "combsum", norm="none")
    scores = _scores(fused)
    assert scores["A"] == scores["B"]
    assert _order(fused) == ["B", "A"]


def test_the_fused_run_evaluates_with_its_ranks() -> None:
    qrels = gainscope.Judgments.from_dict({"q1": {"d4": 1}})
    fused = fuse(_runs(), "combsum", norm="none")  # d2, d1, d4, d3
    with pytest.warns(InputWarning, match="1 group"):  # d4 and d3 tie; trec_eval's rule gives the same order
        assert gainscope.evaluate(qrels, fused, "RR")["RR"] == 1 / 3
    assert gainscope.evaluate(qrels, fused, "RR", ties="rank")["RR"] == 1 / 3


def test_every_method_is_declared_with_a_formula() -> None:
    assert set(METHODS) == {"rrf", "combsum", "combmnz", "combmax", "combmin", "combmed", "combanz", "wsum", "isr",
                            "log_isr", "bordafuse", "condorcet"}
    assert set(NORMALIZATIONS) == {"none", "minmax", "zmuv", "sum", "max", "rank", "borda"}
    assert all(m.formula for m in METHODS.values()) and all(n.formula for n in NORMALIZATIONS.values())


def test_ranx_names_are_accepted() -> None:
    assert _scores(fuse(_runs(), "sum", norm="min-max")) == _scores(fuse(_runs(), "combsum", norm="minmax"))


def test_queries_only_some_runs_rank_are_fused_from_those_with_a_warning() -> None:
    a = Run.from_dict({"q1": {"d1": 1.0}, "q2": {"d5": 1.0}}, name="a")
    b = Run.from_dict({"q1": {"d2": 1.0}}, name="b")
    with pytest.warns(QueryCoverageWarning, match=r"1 query is ranked by only some of the 2 runs and fused from "
                                                  r"those: q2"):
        fused = fuse([a, b], "rrf")
    assert fused.frame.filter(fused.frame["query_id"] == "q2")["doc_id"].to_list() == ["d5"]


def test_runs_are_read_from_files(tmp_path) -> None:
    path = tmp_path / "a.run"
    path.write_text("q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\n", encoding="utf-8")
    fused = fuse([path, _runs()[1]], "rrf", name="mix")
    assert fused.name == "mix"
    assert _order(fused) == ["d2", "d1", "d4"]  # d2: 1/62 + 1/61; d1 1/61; d4 1/62


# ---------------------------------------------------------------------------------------------- bad requests
@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"method": "rff"}, PolicyError, "unknown fusion method 'rff'. Did you mean 'rrf'? The methods are: rrf, "),
    ({"method": "combsum", "norm": "l2"}, PolicyError, "unknown fusion normalisation 'l2'."),
    ({"method": "rrf", "norm": "minmax"}, PolicyError, "rrf reads only ranks, which norm='minmax' does not change; "
                                                        "leave the normalisation out, or use a score-based method "
                                                        "(method='combsum' or 'wsum', ...)"),
    ({"method": "combsum", "weights": [1, 2]}, PolicyError, "combsum takes no weights=...; the weighted methods are "
                                                             "rrf, wsum"),
    ({"method": "wsum", "weights": [1]}, PolicyError, "1 weight(s) for 2 runs in weights=...; give one weight per run"),
    ({"method": "wsum", "weights": [1, -1]}, PolicyError, "a weight must be a finite number >= 0; got -1"),
    ({"method": "wsum", "weights": [0, 0]}, PolicyError, "every weight is 0"),
    ({"method": "combsum", "rrf_k": 10}, PolicyError, "rrf_k=... is RRF's constant; combsum does not use it"),
    ({"method": "rrf", "rrf_k": -1}, PolicyError, "rrf_k=... must be a finite number >= 0; got -1"),
])
def test_bad_requests_are_refused(kwargs, error, message) -> None:
    with pytest.raises(error) as info:
        fuse(_runs(), **kwargs)
    assert str(info.value).startswith(message)


def test_one_run_is_not_a_fusion() -> None:
    with pytest.raises(InputError, match=r"^fusion needs at least two runs; got 1$"):
        fuse(_runs()[:1])


def test_a_run_without_scores_cannot_be_fused_by_scores_but_by_ranks() -> None:
    ordered = Run.from_dict({"q1": ["d3", "d1"]}, name="ordered")
    with pytest.raises(InputError, match=r"^run 'ordered' has no scores; score-based fusion needs a finite score"):
        fuse([_runs()[0], ordered], "combsum")
    by_rank = _scores(fuse([_runs()[0], ordered], "combsum", norm="rank"))
    # a: d1 1, d2 2/3, d3 1/3; ordered: d3 1, d1 1/2
    assert by_rank == pytest.approx({"d1": 1.5, "d3": 4 / 3, "d2": 2 / 3}, abs=1e-15)
    assert _order(fuse([_runs()[0], ordered], "rrf")) == ["d1", "d3", "d2"]


def test_an_infinite_score_is_refused_for_score_fusion() -> None:
    bad = Run.from_dict({"q1": {"d1": float("-inf"), "d2": 1.0}}, name="bad")
    with pytest.raises(InputError, match=r"^run 'bad' scores query 'q1', doc 'd1' -inf; score-based fusion"):
        fuse([_runs()[0], bad], "wsum")
