"""One evaluation pipeline (issue 14 item 3): the API and every command that evaluates files go through
gainscope.evaluation.evaluate_prepared (judgments prepared once, each run's judged run, the kernels, Results)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import gainscope
import gainscope.evaluation

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS, BM25, HYBRID = (str(EXAMPLES / n) for n in ("qrels.txt", "bm25.run", "hybrid.run"))


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of runs of each call to evaluate_prepared."""
    seen: list[int] = []
    real = gainscope.evaluation.evaluate_prepared

    def counting(judgments: Any, runs: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(len(runs))
        return real(judgments, runs, *args, **kwargs)

    monkeypatch.setattr(gainscope.evaluation, "evaluate_prepared", counting)
    return seen


@pytest.mark.filterwarnings("ignore::gainscope.errors.GainscopeWarning")  # ties, a query without ranking
def test_the_api_goes_through_the_pipeline(calls: list[int]) -> None:
    res = gainscope.evaluate(QRELS, BM25, ["ndcg_cut.10", "map"])
    assert res["map"] == res["AP"]
    gainscope.evaluate_runs(QRELS, [BM25, HYBRID], ["AP"])
    gainscope.compare(QRELS, [BM25, HYBRID], ["AP"])
    assert calls == [1, 2, 2]


@pytest.mark.parametrize("args", [
    ("evaluate", QRELS, BM25, HYBRID, "-m", "AP"),
    ("evaluate", QRELS, BM25, HYBRID, "-m", "map", "-f", "trec_eval"),
    ("compare", QRELS, BM25, HYBRID, "-m", "AP", "--resamples", "10"),
    ("gate", QRELS, HYBRID, "--baseline", BM25, "--fail-if", "delta(AP) < -0.5", "--resamples", "10"),
])
def test_commands_go_through_the_pipeline(args: tuple[str, ...], calls: list[int], cli_runner: Any) -> None:
    code, _, err = cli_runner(*args)
    assert code in (0, 1), err
    assert calls and sum(calls) == 2
