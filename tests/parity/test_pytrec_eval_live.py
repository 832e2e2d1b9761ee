"""Live parity with pytrec_eval (trec_eval 9's C code, from PyPI) at full precision, on random judged runs
with score ties, graded and negative labels, queries without relevant documents, unjudged documents.

pytrec_eval is a trec_eval 9 engine: recall levels of iprec_at_recall/11pt_avg are rounded the legacy way,
so gainscope runs with ``rounding="legacy"`` here, and scores are stored as C floats (float32), so scores
that differ as doubles may tie there: ``score_precision="float32"`` (``--trec-eval-version 9``) does the same.
pytrec_eval has no rbp and no unj (trec_eval 10 only).
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable

import numpy as np
import pytest

from gainscope.core.judged_run import build_judged_run
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.errors import InputWarning, UndefinedMetricWarning
from gainscope.evaluation import compute
from gainscope.metrics.trec_eval import trec_items

pytrec_eval = pytest.importorskip("pytrec_eval")
pytestmark = pytest.mark.parity


def _coarse_scores(rng: random.Random, ranked: list[str]) -> dict[str, float]:
    """Coarse scores: many ties, broken by doc id descending in both tools."""
    return {d: float(rng.randint(0, 8)) for d in ranked}


def _random_data(seed: int, queries: int = 30,
                 scores: Callable[[random.Random, list[str]], dict[str, float]] = _coarse_scores
                 ) -> tuple[dict, dict]:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(queries):
        qid = f"q{q}"
        docs = [f"d{rng.randint(0, 60)}" for _ in range(rng.randint(1, 40))]
        qrels[qid] = {d: rng.choice([-1, 0, 0, 0, 1, 1, 2, 3, 4]) for d in docs}
        ranked = sorted({f"d{rng.randint(0, 80)}" for _ in range(rng.randint(1, 60))})
        run[qid] = scores(rng, ranked)
    return qrels, run


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("level", [1, 2])
def test_every_shared_measure_matches(seed: int, level: int) -> None:
    qrels, run = _random_data(seed)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, pytrec_eval.supported_measures, relevance_level=level)
    expected = evaluator.evaluate(run)
    items = [it for it in trec_items(["all_trec"], rounding="legacy") if it.metric is not None]
    metrics = list({str(it.metric): it.metric for it in items}.values())
    with pytest.warns(InputWarning, match="equal scores"):  # ties are announced, then broken as trec_eval
        jr = build_judged_run(Judgments.from_dict(qrels), Run.from_dict(run), Policies(relevance_level=level))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # queries without relevant documents
        results = compute(jr, metrics)
    names = results.metric_names
    compared = 0
    for it in items:
        if it.family in ("gm_map", "gm_bpref"):
            continue  # pytrec_eval reports log values per query for these
        j = names.index(str(it.metric))
        for i, qid in enumerate(results.query_ids):
            if it.out_name not in expected[qid]:
                continue
            compared += 1
            got, want = results.values[i, j], expected[qid][it.out_name]
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12), (it.out_name, qid, got, want)
    assert compared > 2500


def test_gm_map_matches_pytrec_eval_aggregate() -> None:
    qrels, run = _random_data(5)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"gm_map", "gm_bpref"})
    per_query = evaluator.evaluate(run)
    for measure, ours in (("gm_map", "GMAP"), ("gm_bpref", "GMBpref")):
        want = pytrec_eval.compute_aggregated_measure(measure, [v[measure] for v in per_query.values()])
        with pytest.warns(InputWarning):
            jr = build_judged_run(Judgments.from_dict(qrels), Run.from_dict(run), Policies())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            results = compute(jr, [trec_items([measure])[0].metric])
        assert results[ours] == pytest.approx(want, rel=1e-12)
        assert np.isfinite(results[ours])


def _near_ties(rng: random.Random, ranked: list[str]) -> dict[str, float]:
    """Random double scores, unrounded, a third of them pairs that differ as doubles but tie as float32
    (1.00000001 and 1.0: pytrec_eval, a trec_eval 9 engine, stores scores as C floats)."""
    scores = {d: rng.random() * 10 ** rng.randint(-3, 3) for d in ranked}
    for d in rng.sample(ranked, len(ranked) // 3):
        base = rng.choice([1.0, 0.5, 3.0, 1e-3])
        scores[d] = base + rng.choice([0, 1, 2, 3]) * base * 1e-8
    return scores


def _unrounded_data(seed: int) -> tuple[dict, dict]:
    return _random_data(seed, queries=40, scores=_near_ties)


def _differences(qrels: dict, run: dict, policies: Policies) -> tuple[int, int]:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, pytrec_eval.supported_measures)
    expected = evaluator.evaluate(run)
    items = [it for it in trec_items(["all_trec"], rounding="legacy") if it.metric is not None
             and it.family not in ("gm_map", "gm_bpref")]
    metrics = list({str(it.metric): it.metric for it in items}.values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        results = compute(build_judged_run(Judgments.from_dict(qrels), Run.from_dict(run), policies), metrics)
    names = results.metric_names
    compared = differing = 0
    for it in items:
        j = names.index(str(it.metric))
        for i, qid in enumerate(results.query_ids):
            if it.out_name in expected[qid]:
                compared += 1
                differing += results.values[i, j] != pytest.approx(expected[qid][it.out_name], rel=1e-12, abs=1e-12)
    return compared, differing


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_float32_scores_give_pytrec_evals_numbers_on_unrounded_scores(seed: int) -> None:
    """trec_eval 9 (pytrec_eval) orders by float32 scores: with score_precision='float32' every value agrees;
    in double precision (trec_eval 10) the near-ties are ordered by score, not by doc id, and some differ."""
    qrels, run = _unrounded_data(seed)
    compared, differing = _differences(qrels, run, Policies(score_precision="float32"))
    assert compared > 3000 and differing == 0
    _, in_doubles = _differences(qrels, run, Policies())
    assert in_doubles > 0  # the claim "bit-identical" needed the float32 rounding


def test_trec_eval_version_9_rounds_scores_to_float32(tmp_path, cli_runner) -> None:  # type: ignore[no-untyped-def]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 1.00000001 r\nq1 Q0 b 2 1.0 r\n")  # a first in doubles; a tie in floats: b, a by id
    ten = cli_runner("evaluate", str(qrels), str(run), "-m", "P.1", "--format", "trec_eval")
    nine = cli_runner("evaluate", str(qrels), str(run), "-m", "P.1", "--format", "trec_eval",
                      "--trec-eval-version", "9")
    assert ten[1].split() == ["P_1", "all", "1.0000"]
    assert nine[1].split() == ["P_1", "all", "0.0000"]  # tie broken by doc id descending: b before a
    expected = pytrec_eval.RelevanceEvaluator({"q1": {"a": 1, "b": 0}}, {"P_1"}).evaluate(
        {"q1": {"a": 1.00000001, "b": 1.0}})
    assert expected["q1"]["P_1"] == 0.0
    code, out, _ = cli_runner("evaluate", str(qrels), str(run), "-m", "RR", "--trec-eval-version", "9")
    assert code == 0 and "rounded to float32 before ordering, as trec_eval 9 and pytrec_eval" in out


def test_pytrec_eval_result_keys_name_the_same_measures() -> None:
    # the keys pytrec_eval returns (trec_eval's printed names) can be handed back to gainscope as metric names
    # (iprec_at_recall is left out: pytrec_eval rounds recall levels the trec_eval 9 way, see the module doc)
    import gainscope

    qrels, run = _random_data(7)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "P.5", "recall.100", "map_cut.10",
                                                       "success.1", "Rprec_mult.0.20"})
    expected = evaluator.evaluate(run)
    keys = sorted(next(iter(expected.values())))
    assert keys == ["P_5", "Rprec_mult_0.20", "map_cut_10", "ndcg_cut_10", "recall_100", "success_1"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)  # tied scores
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        results = gainscope.evaluate(qrels, run, keys)
    assert results.metric_names == ["P@5", "Rprec(mult=0.2)", "AP@10", "nDCG@10", "R@100", "Success@1"]
    for key, metric in zip(keys, results.metric_names, strict=True):
        for qid, values in expected.items():
            assert results.per_query(metric)[qid] == pytest.approx(values[key], rel=1e-12, abs=1e-12), (key, qid)
