"""The kernels of a large judged run run on two threads (``evaluation._kernel_values``): every value, undefined
flag and note is the one computed in turn, bit for bit, whatever the metrics share in their Context."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gainscope.evaluation as ev
from gainscope.core.judged_run import PreparedJudgments
from gainscope.core.policies import Policies
from gainscope.io import read_judgments
from gainscope.io.scan import judged_run_of
from gainscope.metrics.resolve import resolve_metrics

METRICS = resolve_metrics("nDCG@10 nDCG AP RR P@10 P@5 R@100 Rprec bpref ERR@20 Recall@5 Success@1".split())


@settings(max_examples=40, derandomize=True, database=None, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), nq=st.integers(1, 12))
def test_kernels_on_two_threads_equal_the_kernels_in_turn(tmp_path_factory: pytest.TempPathFactory, seed: int,
                                                           nq: int) -> None:
    rng = np.random.default_rng(seed)
    tmp: Path = tmp_path_factory.mktemp("k")
    (tmp / "q").write_text("".join(f"q{q} 0 d{d} {rng.integers(-1, 4)}\n" for q in range(nq)
                                   for d in rng.choice(60, rng.integers(1, 30), replace=False).tolist()))
    (tmp / "r").write_text("".join(f"q{q} Q0 d{d} {i + 1} {rng.integers(0, 5)} t\n" for q in range(nq)
                                   for i, d in enumerate(rng.choice(60, rng.integers(1, 40), replace=False).tolist())))
    policies = Policies()
    prepared = PreparedJudgments.of(read_judgments(tmp / "q"), policies.negative_grades)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # random scores tie, random queries miss
        jr, _ = judged_run_of(prepared, tmp / "r", policies)
    assert len(jr.rank) < ev.PARALLEL_HITS
    results = []
    for threshold in (ev.PARALLEL_HITS, 1):
        with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mp.setattr(ev, "PARALLEL_HITS", threshold)
            results.append(ev.compute(jr, METRICS, warn=False))
    turn, threads = results
    assert turn.values.tobytes() == threads.values.tobytes()
    assert turn.undefined.tolist() == threads.undefined.tolist()
    assert turn.notes == threads.notes


def test_the_first_metric_error_in_order_is_raised(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "q").write_text("q1 0 d1 1\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 1 t\n")
    policies = Policies()
    jr, _ = judged_run_of(PreparedJudgments.of(read_judgments(tmp_path / "q")), tmp_path / "r", policies)
    metrics = resolve_metrics(["P@1", "AP", "RR"])
    monkeypatch.setattr(ev, "PARALLEL_HITS", 1)

    def fail(name: str):  # type: ignore[no-untyped-def]
        def compute(ctx: object) -> None:
            raise RuntimeError(name)
        return compute

    for i, m in enumerate(metrics[1:], start=1):
        object.__setattr__(m, "compute", fail(f"metric {i}"))
    with pytest.raises(RuntimeError, match="metric 1"):
        ev.compute(jr, metrics)



def test_a_metric_defined_outside_gainscope_keeps_every_kernel_in_the_callers_thread(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import dataclasses
    import threading

    (tmp_path / "q").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n")
    jr, _ = judged_run_of(PreparedJudgments.of(read_judgments(tmp_path / "q")), tmp_path / "r", Policies())
    monkeypatch.setattr(ev, "PARALLEL_HITS", 1)
    base = resolve_metrics(["P@2"])[0]
    threads: list[threading.Thread] = []

    class Mine(type(base)):  # type: ignore[misc]  # a plugin's metric: may warn or hold state
        def compute(self, ctx):  # type: ignore[no-untyped-def]
            threads.append(threading.current_thread())
            return super().compute(ctx)

    mine = Mine(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)})
    results = ev.compute(jr, [*resolve_metrics(["RR", "AP"]), mine], warn=False)
    assert threads == [threading.current_thread()]
    assert results.values[0].tolist() == [1.0, 1.0, 0.5]  # RR 1, AP 1 (d1 first), P@2 1/2
