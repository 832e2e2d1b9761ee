"""gainscope pool: depth pooling, move-to-front, MaxMean and the decision-aware order on hand-made pools; the
decision priorities against brute force through gainscope's evaluation; the simulation; the CLI."""

from __future__ import annotations

import itertools
import random
import warnings
from pathlib import Path

import numpy as np
import pytest

import gainscope
from gainscope.core.judgments import Judgments
from gainscope.core.run import Run
from gainscope.errors import InputError, PolicyError
from gainscope.evaluation import resolve_metrics
from gainscope.judges.adjudication import adaptive_order, known_labels, next_pairs, relevance_estimates
from gainscope.judges.decision import _per_pair, decision_priorities, metrics_depth
from gainscope.judges.pool import pairs_text, rankings, read_pairs, write_pairs
from gainscope.judges.simulation import Checkpoint, _reached, conclusions, simulate


def _ordered(name: str, lists: dict[str, list[str]]) -> Run:
    return Run.from_dict(lists, name=name)


def _pairs(strategy: str, runs: list[Run], grades: dict[tuple[str, str], int], budget: int = 100,
           depth: int | None = None) -> list[tuple[str, str]]:
    pool = rankings(runs, depth)
    return adaptive_order(strategy, pool, known_labels(pool, grades, 1), budget)


# ---------------------------------------------------------------------------------------------- depth
def test_depth_order_is_rank_by_rank_over_the_runs_skipping_judged_pairs() -> None:
    a = _ordered("A", {"q1": ["a", "b", "c"]})
    b = _ordered("B", {"q1": ["b", "d"]})
    # rank 1: a (A), b (B); rank 2: b again, d (B); rank 3: c
    assert _pairs("depth", [a, b], {}) == [("q1", "a"), ("q1", "b"), ("q1", "d"), ("q1", "c")]
    assert _pairs("depth", [a, b], {("q1", "b"): 0}) == [("q1", "a"), ("q1", "d"), ("q1", "c")]
    assert _pairs("depth", [a, b], {}, depth=1) == [("q1", "a"), ("q1", "b")]


def test_a_negative_grade_is_pooled_but_not_judged_so_it_may_be_chosen() -> None:
    a = _ordered("A", {"q1": ["a", "b"]})
    assert _pairs("depth", [a], {("q1", "a"): -1}) == [("q1", "a"), ("q1", "b")]


def test_the_budget_goes_first_to_the_queries_with_the_fewest_judgments() -> None:
    a = _ordered("A", {"q1": ["a1", "a2", "a3", "a4"], "q2": ["b1", "b2", "b3"]})
    # q1 has 2 judged, q2 none: q2 gets two pairs, then they alternate, q1 first on equal counts
    assert _pairs("depth", [a], {("q1", "a1"): 1, ("q1", "a2"): 0}, budget=4) == [
        ("q2", "b1"), ("q2", "b2"), ("q1", "a3"), ("q2", "b3")]


# ---------------------------------------------------------------------------------------------- move-to-front
def test_move_to_front_replays_known_labels_for_free() -> None:
    a = _ordered("A", {"q": ["a1", "a2", "a3"]})
    b = _ordered("B", {"q": ["b1", "b2", "b3"]})
    # nothing known: every pick is not relevant (yet), so the runs take turns
    assert _pairs("mtf", [a, b], {}) == [("q", d) for d in ("a1", "b1", "a2", "b2", "a3", "b3")]
    # a1 relevant keeps A in front, a2 not relevant sends it back: B gives b1 (then goes back), A gives a3
    assert _pairs("mtf", [a, b], {("q", "a1"): 1, ("q", "a2"): 0}) == [("q", d) for d in ("b1", "a3", "b2", "b3")]


def test_move_to_front_learns_between_calls() -> None:
    a = _ordered("A", {"q": ["a1", "a2", "a3"]})
    b = _ordered("B", {"q": ["b1", "b2"]})
    truth = {"a1": 1, "a2": 1, "a3": 0, "b1": 1, "b2": 1}
    grades: dict[tuple[str, str], int] = {}
    asked = []
    for _ in range(5):  # one pair per call, its label revealed before the next call
        (q, d), = _pairs("mtf", [a, b], grades, budget=1)
        asked.append(d)
        grades[(q, d)] = truth[d]
    # A stays in front while relevant (a1, a2), a3 is not: B's turn, and it stays while relevant
    assert asked == ["a1", "a2", "a3", "b1", "b2"]


# ---------------------------------------------------------------------------------------------- MaxMean
def test_maxmean_takes_the_run_with_the_best_posterior_mean() -> None:
    a = _ordered("A", {"q": ["a1", "a2", "a3", "a4", "a5"]})
    b = _ordered("B", {"q": ["b1", "b2", "b3"]})
    # known: a1 relevant -> A (1 + 1) / (1 + 2) = 2/3; b1 not -> B (0 + 1) / (1 + 2) = 1/3.
    # picks count as not relevant: A 2/4, 2/5 (a2, a3) stay above 1/3; after a4 A is 2/6 = 1/3, equal to B: the
    # first run wins (a5); then A is empty
    assert _pairs("maxmean", [a, b], {("q", "a1"): 1, ("q", "b1"): 0}) == [
        ("q", d) for d in ("a2", "a3", "a4", "a5", "b2", "b3")]


def test_a_document_both_runs_have_counts_for_both() -> None:
    a = _ordered("A", {"q": ["x", "a2"]})
    b = _ordered("B", {"q": ["b1", "x", "b3"]})
    # x relevant: A 2/3; B passes b1 (unknown) first, so its mean stays 1/2 until b1 is judged
    assert _pairs("maxmean", [a, b], {("q", "x"): 1}, budget=1) == [("q", "a2")]
    # b1 relevant too: B passes b1 and x: (2 + 1) / (2 + 2) = 3/4 > A's 2/3
    assert _pairs("maxmean", [a, b], {("q", "x"): 1, ("q", "b1"): 1}, budget=1) == [("q", "b3")]


# ---------------------------------------------------------------------------------------------- decision
def _decision_data() -> tuple[Judgments, list[Run]]:
    qrels = Judgments.from_dict({"q1": {"a1": 1}, "q2": {"b1": 1}, "q3": {"c1": 1}})
    a = _ordered("A", {"q1": ["a1", "x1"], "q2": ["b1", "x2"], "q3": ["c1", "x3"]})
    b = _ordered("B", {"q1": ["y1", "a1"], "q2": ["y2", "b1"], "q3": ["c1", "y3"]})
    return qrels, [a, b]


def test_decision_priorities_by_hand() -> None:
    qrels, runs = _decision_data()
    pairs = [("q1", "y1"), ("q1", "x1"), ("q2", "y2"), ("q3", "x3")]
    pri = decision_priorities(qrels, runs, pairs, resolve_metrics("RR"))
    # RR: A 1, 1, 1; B 1/2, 1/2, 1. d = B - A = (-1/2, -1/2, 0): D = -1/3, sd = sqrt(1/12),
    # c = t(0.975, 2) * sd / sqrt(3) = 4.3027 * 0.16667 = 0.7171. y1 relevant puts B's q1 at 1: e = +1/2 / 3,
    # towards the boundary 0 at distance 1/3: priority (1/6) / (1/3) = 1/2. x1 and x3 change nothing.
    assert pri.share.tolist() == pytest.approx([0.5, 0.0, 0.5, 0.0])
    assert pri.change.tolist() == pytest.approx([1 / 6, 0.0, 1 / 6, 0.0])
    assert pri.decisive == 0


def test_decision_order_puts_the_pairs_that_matter_first_then_depth_order() -> None:
    qrels, runs = _decision_data()
    sel = next_pairs(runs, qrels, budget=6, strategy="decision", metrics="RR")
    # depth order: q1 y1, q2 y2, q3 x3, q1 x1, q2 x2, q3 y3. y1 and y2 would change a difference by 1/6 and are
    # at B's rank 1, relevant for 1 of 1 judged there (c1): P = (1 + 2 * 4/5) / (1 + 2) = 0.867, smoothed towards
    # B's judged precision (3 + 1) / (3 + 2); the others change nothing and follow in depth order
    assert sel.pairs == (("q1", "y1"), ("q2", "y2"), ("q3", "x3"), ("q1", "x1"), ("q2", "x2"), ("q3", "y3"))
    assert sel.unjudged == 6 and sel.decisive == 0


def test_relevance_estimates_by_rank_over_queries() -> None:
    qrels, runs = _decision_data()
    pool = rankings(runs)
    known = known_labels(pool, {(q, d): g for q, ds in qrels.to_dict().items() for d, g in ds.items()}, 1)
    p = relevance_estimates(pool, known, [("q1", "y1"), ("q1", "x1"), ("q3", "y3")])
    # A: rank 1 3 of 3 relevant, rank 2 none judged; A's judged precision (3 + 1) / (3 + 2) = 0.8 is the prior
    # (weight 2): rank 2 -> 0.8. B: rank 1 (1 + 1.6) / 3 = 0.867, rank 2 (2 + 1.6) / 4 = 0.9 -> 0.867 (made
    # non-increasing). x1 is A's rank 2: 0.8; y1 is B's rank 1 and y3 B's rank 2: 0.867
    assert p.tolist() == pytest.approx([2.6 / 3, 0.8, 2.6 / 3])


def test_a_pair_that_alone_flips_the_sign_is_decisive() -> None:
    qrels = Judgments.from_dict({"q1": {"r": 1}, "q2": {"s": 1}})
    a = _ordered("A", {"q1": ["r"], "q2": ["u", "s"]})
    b = _ordered("B", {"q1": ["v", "r"], "q2": ["s"]})
    # RR: A 1, 1/2; B 1/2, 1: D = 0. Any change flips the sign (distance 0): u and v are decisive.
    sel = next_pairs([a, b], qrels, budget=2, strategy="decision", metrics="RR")
    assert sorted(sel.pairs) == [("q1", "v"), ("q2", "u")] and sel.decisive == 2


def _random_case(seed: int) -> tuple[Judgments, list[Run], list[tuple[str, str]]]:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    runs: list[dict[str, dict[str, float]]] = [{}, {}, {}]
    for q in range(4):
        docs = [f"d{i}" for i in range(12)]
        qrels[f"q{q}"] = {d: rng.choice([0, 0, 1, 2]) for d in rng.sample(docs, 5)}
        for run in runs:
            run[f"q{q}"] = {d: float(rng.randint(0, 5)) for d in rng.sample(docs, 8)}  # with ties
    qrels["q4"] = {"d1": 1}  # judged, ranked by nobody
    judged = {(q, d) for q, ds in qrels.items() for d in ds}
    run_objs = [Run.from_dict(r, name=f"r{i}") for i, r in enumerate(runs)]
    pairs = sorted({(q, d) for r in runs for q, ds in r.items() for d in ds} - judged)
    return Judgments.from_dict(qrels), run_objs, pairs


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("metric", ["nDCG@5", "AP", "P@3"])
def test_per_pair_values_equal_evaluating_the_judgments_with_that_pair_added(seed: int, metric: str) -> None:
    import polars as pl

    qrels, runs, pairs = _random_case(seed)
    mets = resolve_metrics(metric)
    frame = pl.DataFrame({"query_id": [q for q, _ in pairs], "doc_id": [d for _, d in pairs]}).with_row_index("pair")
    got = _per_pair(qrels, runs, mets, gainscope.Policies(), frame, 2, metrics_depth(mets))
    for i, (q, d) in enumerate(itertools.islice(pairs, 0, None, 5)):
        added = qrels.to_dict()
        added[q] = {**added[q], d: 2}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ties and undefined values: the same in both evaluations
            expected = [gainscope.evaluate(Judgments.from_dict(added), r, mets).per_query(metric)[q] for r in runs]
        assert got[:, i * 5, 0].tolist() == pytest.approx(expected, abs=1e-12), (q, d)


def test_metrics_depth() -> None:
    assert metrics_depth(resolve_metrics(["nDCG@10", "P@5"])) == 10
    assert metrics_depth(resolve_metrics(["nDCG@10", "AP"])) is None


# ---------------------------------------------------------------------------------------------- errors and files
def test_bad_requests() -> None:
    qrels, runs = _decision_data()
    with pytest.raises(PolicyError, match=r"^unknown strategy='bandit'; the strategies are: depth, mtf, maxmean, "
                                          r"decision$"):
        next_pairs(runs, qrels, budget=1, strategy="bandit")
    with pytest.raises(PolicyError, match=r"^budget=\.\.\. must be an integer >= 1 \(pairs to judge\); got 0$"):
        next_pairs(runs, qrels, budget=0)
    with pytest.raises(InputError, match=r"^a decision-aware order compares runs: give at least two; got 1$"):
        next_pairs(runs[:1], qrels, budget=1, strategy="decision")
    with pytest.raises(InputError, match=r"^baseline='C' is not among the runs: A, B$"):
        next_pairs(runs, qrels, budget=1, strategy="decision", baseline="C")
    # alpha=5 was taken: the critical t was NaN and no pair could "change a conclusion"
    with pytest.raises(PolicyError, match=r"^alpha=\.\.\. must be a number between 0 and 1 \(exclusive\); got 5$"):
        next_pairs(runs, qrels, budget=1, strategy="decision", alpha=5)


@pytest.mark.parametrize("strategy", ["depth", "mtf", "maxmean", "decision"])
def test_judgments_of_other_queries_are_refused(strategy: str) -> None:
    """Judgments that judge none of the pooled queries (another collection's qrels) were ignored in silence by
    depth, mtf and maxmean, which then chose exactly what they choose without judgments."""
    from gainscope.errors import InconsistentInputError

    runs = [_ordered("A", {"q1": ["a", "b"]}), _ordered("B", {"q2": ["c"]})]
    other = Judgments.from_dict({"zz": {"a": 1}})
    with pytest.raises(InconsistentInputError) as err:
        next_pairs(runs, other, budget=1, strategy=strategy)
    assert str(err.value) == ("no query is both judged and ranked: judgments have zz; the run (A, B) has q1, q2. "
                              "Give the judgments of these queries, or leave judgments=... out")


def test_pairs_files_read_back(tmp_path: Path) -> None:
    path = tmp_path / "pairs.txt"
    write_pairs([("q1", "doc#1"), ("q2", "d")], path, header=["chosen by depth"])
    assert path.read_text(encoding="utf-8") == "# chosen by depth\nq1 doc#1\nq2 d\n"
    assert read_pairs(path) == [("q1", "doc#1"), ("q2", "d")]
    with pytest.raises(InputError, match=r"^cannot write the pair \('q1', 'a b'\): a pairs file holds "
                                         r"whitespace-separated ids, so a doc id must be a non-empty word$"):
        pairs_text([("q1", "a b")])
    with pytest.raises(InputError, match=r"a line starting with '#' is a comment in a pairs file$"):
        pairs_text([("#q", "d")])
    # a no-break space is not where the reader splits (bytes.split: ASCII whitespace): such an id is written and read
    # back as it is
    write_pairs([("q1", "New\u00a0York"), ("q\u2003", "d")], path)
    assert read_pairs(path) == [("q1", "New\u00a0York"), ("q\u2003", "d")]
    with pytest.raises(InputError, match=r"so a query id must be a non-empty word$"):
        pairs_text([("q\t1", "d")])


# ---------------------------------------------------------------------------------------------- simulation
def test_reached_is_the_first_checkpoint_from_which_every_conclusion_holds() -> None:
    points = [Checkpoint(0, 0.5), Checkpoint(10, 1.0), Checkpoint(20, 0.5), Checkpoint(30, 1.0), Checkpoint(40, 1.0)]
    assert _reached(points) == 30
    assert _reached(points[:3]) is None


def test_simulation_reaches_the_complete_conclusions() -> None:
    rng = np.random.default_rng(5)
    complete: dict[str, dict[str, int]] = {}
    runs: list[dict[str, dict[str, float]]] = [{}, {}]
    for q in range(8):
        grades = rng.choice([0, 0, 0, 1, 2], size=20)
        complete[f"q{q}"] = {f"d{i}": int(g) for i, g in enumerate(grades)}
        for r, quality in enumerate((0.3, 1.5)):
            scores = quality * grades + rng.normal(0, 1, size=20)
            runs[r][f"q{q}"] = {f"d{i}": float(s) for i, s in enumerate(scores)}
    judged = Judgments.from_dict(complete)
    run_objs = [Run.from_dict(r, name=n) for r, n in zip(runs, ("weak", "strong"), strict=True)]
    start = Judgments.from_dict({q: {"d0": g["d0"]} for q, g in complete.items()})
    target = conclusions(judged, run_objs, ["nDCG@5"])
    assert target == {("nDCG@5", "strong"): (1, True)}
    out = simulate(judged, start, run_objs, ["depth", "decision"], metrics=["nDCG@5"], budget=160, batch=20,
                   depth=20)
    for sim in out:
        assert sim.checkpoints[-1].judged == 152  # every pair but the 8 judged at the start
        assert sim.checkpoints[-1].agreement == 1.0 and sim.reached is not None


# ---------------------------------------------------------------------------------------------- CLI
@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    a = tmp_path / "a.run"
    a.write_text("q1 Q0 a1 1 3 A\nq1 Q0 x1 2 2 A\nq2 Q0 b1 1 3 A\nq2 Q0 x2 2 2 A\nq3 Q0 c1 1 3 A\nq3 Q0 x3 2 2 A\n",
                 encoding="utf-8")
    b = tmp_path / "b.run"
    b.write_text("q1 Q0 y1 1 3 B\nq1 Q0 a1 2 2 B\nq2 Q0 y2 1 3 B\nq2 Q0 b1 2 2 B\nq3 Q0 c1 1 3 B\nq3 Q0 y3 2 2 B\n",
                 encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a1 1\nq2 0 b1 1\nq3 0 c1 1\n", encoding="utf-8")
    return {"a": str(a), "b": str(b), "qrels": str(qrels), "dir": str(tmp_path)}


def test_pool_cli_writes_pairs_that_judge_reads(cli_runner, files) -> None:
    out = Path(files["dir"]) / "pairs.txt"
    code, stdout, stderr = cli_runner("pool", files["a"], files["b"], "--judgments", files["qrels"], "--budget", "2",
                                      "--strategy", "decision", "-m", "RR", "-o", str(out))
    assert code == 0 and stdout == ""
    summary = ("2 of 6 unjudged pairs in the depth-100 pool of 2 runs over 3 queries (strategy decision); 0 could "
               "alone change a conclusion")
    assert stderr == summary + "\n"
    assert out.read_text(encoding="utf-8") == f"# gainscope pool: {summary}\nq1 y1\nq2 y2\n"
    assert read_pairs(out) == [("q1", "y1"), ("q2", "y2")]


def test_pool_cli_to_standard_output_without_judgments(cli_runner, files) -> None:
    code, stdout, _ = cli_runner("pool", files["a"], files["b"], "--budget", "3", "--pool-depth", "1")
    assert code == 0
    assert stdout.splitlines()[1:] == ["q1 a1", "q2 b1", "q3 c1"]  # one per query before a second


@pytest.mark.parametrize(("args", "message"), [
    (["--budget", "0"], "Invalid value for '--budget'"),
    (["--budget", "2", "-m", "RR"], "-m and --baseline say what --strategy decision protects; they do nothing for "
                                    "--strategy depth"),
    (["--budget", "2", "--strategy", "decision", "--baseline", "Z"], "--baseline Z is not among the runs: A, B"),
    (["--budget", "2", "--name", "x"], "1 --name value(s) for 2 runs"),
])
def test_pool_cli_usage_errors(cli_runner, files, args, message) -> None:
    code, _, stderr = cli_runner("pool", files["a"], files["b"], *args)
    assert code == 2 and message in stderr
