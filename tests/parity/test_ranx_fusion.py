"""Live parity of gainscope.fuse with ranx's fusion (ranx from PyPI), for every method and normalisation of
issue 18, on random runs without score ties.

ranx orders tied scores with an unstable quicksort and documents no rule for ties, so parity is tested where
the input scores have no ties; where the fused scores tie (log_isr gives 0 to every document only one run has),
the scores are compared and the order only between documents with different fused scores. Our own tie rule is
pinned in tests/fusion/test_fuse.py. ranx's Condorcet sorts a set of candidates with a comparator that is not a
strict order when votes are even (and lets two runs that both miss a pair vote for one side), so its parity
runs rank the same documents with an odd number of runs and a transitive majority.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from gainscope.core.run import Run
from gainscope.fusion import METHODS, fuse

ranx = pytest.importorskip("ranx")
pytestmark = [pytest.mark.parity, pytest.mark.slow]

SCORE_METHODS = [m for m, spec in METHODS.items() if spec.uses == "scores"]
RANK_METHODS = [m for m, spec in METHODS.items() if spec.uses == "ranks" and m != "condorcet"]
NORMS = ["none", "minmax", "zmuv", "sum", "max", "rank", "borda"]
RANX_METHOD = {"combsum": "sum", "combmnz": "mnz", "combmax": "max", "combmin": "min", "combmed": "med",
               "combanz": "anz"}
RANX_NORM = {"none": None, "minmax": "min-max"}
WEIGHTS = [0.5, 0.2, 0.3]


def _random_runs(seed: int, runs: int = 3, queries: int = 8) -> list[dict[str, dict[str, float]]]:
    """Runs of the same queries, overlapping documents, distinct continuous positive scores."""
    rng = np.random.default_rng(seed)
    out: list[dict[str, dict[str, float]]] = []
    for _ in range(runs):
        run: dict[str, dict[str, float]] = {}
        for q in range(queries):
            docs = rng.choice(30, size=int(rng.integers(3, 20)), replace=False)
            run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, rng.uniform(0.5, 20.0, len(docs)), strict=True)}
        out.append(run)
    return out


def _ranx_fuse(runs: list[dict[str, dict[str, float]]], method: str, norm: str, params: dict | None) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety warnings
        fused = ranx.fuse([ranx.Run(r, name=f"r{i}") for i, r in enumerate(runs)],
                          norm=RANX_NORM.get(norm, norm), method=RANX_METHOD.get(method, method),
                          params=params)
        return {q: dict(docs) for q, docs in fused.to_dict().items()}


def _ours(runs: list[dict[str, dict[str, float]]], method: str, **kwargs) -> dict[str, list[tuple[str, float]]]:
    fused = fuse([Run.from_dict(r, name=f"r{i}") for i, r in enumerate(runs)], method, **kwargs)
    out: dict[str, list[tuple[str, float]]] = {}
    for q, d, s in fused.frame.select("query_id", "doc_id", "score").iter_rows():
        out.setdefault(q, []).append((d, s))
    return out


def _assert_same(ours: dict[str, list[tuple[str, float]]], theirs: dict[str, dict[str, float]]) -> None:
    assert set(ours) == set(theirs)
    for q, ranked in ours.items():
        assert {d for d, _ in ranked} == set(theirs[q]), q
        for d, s in ranked:
            assert s == pytest.approx(theirs[q][d], rel=1e-12, abs=1e-12), (q, d)
        # same order wherever the fused scores differ: ranx's scores, read in our order, never go up
        in_our_order = [theirs[q][d] for d, _ in ranked]
        assert all(a >= b - 1e-12 for a, b in itertools.pairwise(in_our_order)), q


@pytest.mark.parametrize("seed", [7, 8])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("method", SCORE_METHODS)
def test_score_methods_match_ranx(method: str, norm: str, seed: int) -> None:
    runs = _random_runs(seed)
    weights = WEIGHTS if method == "wsum" else None
    params = {"weights": WEIGHTS} if method == "wsum" else None
    _assert_same(_ours(runs, method, norm=norm, weights=weights), _ranx_fuse(runs, method, norm, params))


@pytest.mark.parametrize("seed", [7, 8])
@pytest.mark.parametrize("method", RANK_METHODS)
def test_rank_methods_match_ranx(method: str, seed: int) -> None:
    runs = _random_runs(seed)
    _assert_same(_ours(runs, method), _ranx_fuse(runs, method, "none", None))


def test_rrf_with_another_k_matches_ranx() -> None:
    runs = _random_runs(9)
    _assert_same(_ours(runs, "rrf", rrf_k=10), _ranx_fuse(runs, "rrf", "none", {"k": 10}))


@pytest.mark.parametrize("norm", ["minmax", "zmuv", "rank"])
def test_ranx_gives_rank_methods_the_same_output_whatever_the_normalisation(norm: str) -> None:
    # why gainscope refuses a normalisation with a rank-based method: it cannot change anything
    runs = _random_runs(10)
    assert _ranx_fuse(runs, "rrf", norm, None) == _ranx_fuse(runs, "rrf", "none", None)


def _condorcet_runs(seed: int) -> list[dict[str, dict[str, float]]]:
    """Three runs ranking the same documents, with a transitive pairwise majority in every query."""
    rng = np.random.default_rng(seed)
    runs: list[dict[str, dict[str, float]]] = [{}, {}, {}]
    q = 0
    while q < 6:
        docs = [f"d{i}" for i in range(int(rng.integers(3, 9)))]
        orders = [list(rng.permutation(docs)) for _ in range(3)]
        wins = {d: sum(sum(o.index(d) < o.index(e) for o in orders) >= 2 for e in docs if e != d) for d in docs}
        if sorted(wins.values()) != list(range(len(docs))):
            continue  # a majority cycle: no order is right, and ranx's answer depends on set order
        for run, order in zip(runs, orders, strict=True):
            run[f"q{q}"] = {d: float(len(order) - i) + rng.uniform(0, 0.5) for i, d in enumerate(order)}
        q += 1
    return runs


@pytest.mark.parametrize("seed", [1, 2])
def test_condorcet_matches_ranx_when_the_majority_is_an_order(seed: int) -> None:
    runs = _condorcet_runs(seed)
    _assert_same(_ours(runs, "condorcet"), _ranx_fuse(runs, "condorcet", "none", None))
