"""Experiments: a grid run into one store, evaluated and compared; the best configuration; latency and overlap;
resumed without sending again; an incomplete configuration is not evaluated."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest
from tests.helpers import write_jsonl

import gainscope
from gainscope.compare import CompareSettings
from gainscope.errors import EngineConfigError, EngineError, QueryCoverageWarning
from gainscope.search import SearchQuery, SnapshotStore, replay, results_to_run
from gainscope.search.experiment import Configuration, ExperimentPlan, grid, run_experiment
from gainscope.search.python import PythonEngine

from .conftest import invoke


@pytest.fixture(scope="module")
def titles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """20 queries; query i's words are in the title of rel{i}, and five times in the text of dis{i}; for queries 0-4
    rel{i} has them once in its text too. Indexed with title and text at boost 1: rel{i} comes second (first for
    queries 0-4, where its text adds to its title): RR 0.625. Title boost 0: rel{i} is found only for queries 0-4,
    second: RR 0.125. Title boost 8: rel{i} first everywhere: RR 1."""
    rng = random.Random(3)
    folder = tmp_path_factory.mktemp("titles")
    filler = [f"w{i}" for i in range(200)]
    docs, queries, qrels = [], [], []
    for i in range(20):
        a, b = f"alpha{i}", f"beta{i}"
        text = " ".join(rng.sample(filler, 15)) + (f" {a} {b}" if i < 5 else "")
        docs.append({"_id": f"rel{i}", "title": f"{a} {b} story", "text": text})
        docs.append({"_id": f"dis{i}", "title": "other " + " ".join(rng.sample(filler, 2)),
                     "text": " ".join([a, b] * 5 + rng.sample(filler, 10))})
        queries.append({"_id": f"q{i}", "text": f"{a} {b}"})
        qrels.append(f"q{i} 0 rel{i} 1")
    docs += [{"_id": f"f{i}", "title": " ".join(rng.sample(filler, 3)), "text": " ".join(rng.sample(filler, 20))}
             for i in range(60)]
    write_jsonl(folder, "corpus.jsonl", docs)
    write_jsonl(folder, "queries.jsonl", queries)
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n")
    from gainscope.search.embedded import build_index

    build_index(folder / "corpus.jsonl", folder / "index", fields="title,text")
    return {"folder": folder, "index": folder / "index", "queries": folder / "queries.jsonl",
            "qrels": folder / "qrels.txt"}


def test_grid_names_and_order() -> None:
    assert [(c.name, c.knobs) for c in grid({"title_boost": [1, 2], "k1": [0.9, 1.2]})] == [
        ("title_boost=1,k1=0.9", {"title_boost": 1, "k1": 0.9}),
        ("title_boost=1,k1=1.2", {"title_boost": 1, "k1": 1.2}),
        ("title_boost=2,k1=0.9", {"title_boost": 2, "k1": 0.9}),
        ("title_boost=2,k1=1.2", {"title_boost": 2, "k1": 1.2})]
    with pytest.raises(EngineConfigError, match=r"grid k1: give a non-empty list of values \(e.g. k1 = \[1, 2, 4\]\)"):
        grid({"k1": []})


def test_experiment_end_to_end_from_the_command_line(titles: dict[str, Path], tmp_path: Path) -> None:
    store, html = tmp_path / "exp.sqlite", tmp_path / "exp.html"
    args = ("experiment", "--engine", titles["index"], "--queries", titles["queries"], "--judgments", titles["qrels"],
            "--grid", "title_boost=0,8", "-m", "RR", "-m", "nDCG@10", "--top", "10", "--snapshot", store,
            "--resamples", "500", "-f", "json")
    code, out, err = invoke(*args, "--html", html, "--no-plots")
    assert code == 0, err
    report = json.loads(out)
    # the engine's own title_boost (1) is not on the grid: it is added as the baseline, named default
    assert [c["name"] for c in report["configurations"]] == ["default", "title_boost=0", "title_boost=8"]
    assert report["baseline"] == "default" and report["best"] == "title_boost=8" and report["best_significant"]
    rows = {(r["metric"], r["run"]): r for r in report["comparison"]["rows"]}
    # the compared means are those of gainscope.evaluate on the snapshots' runs
    with SnapshotStore.open(store, readonly=True) as opened:
        for name in ("default", "title_boost=0", "title_boost=8"):
            _, results = replay(opened, f"experiment/{name}")
            run, _ = results_to_run(results, name=name)
            expected = gainscope.evaluate(str(titles["qrels"]), run, ["RR", "nDCG@10"])
            assert rows[("RR", name)]["mean"] == pytest.approx(expected["RR"])
            assert rows[("nDCG@10", name)]["mean"] == pytest.approx(expected["nDCG@10"])
    assert [rows[("RR", n)]["mean"] for n in ("default", "title_boost=0", "title_boost=8")] == pytest.approx(
        [(5 * 1 + 15 * 0.5) / 20, 5 * 0.5 / 20, 1.0])
    assert rows[("RR", "title_boost=8")]["p_t_corrected"] < 0.05
    base, zero = report["configurations"][0], report["configurations"][1]
    assert base["jaccard@10"] == 1.0 and base["rbo"] == 1.0 and zero["jaccard@10"] < 1.0
    assert all(c["queries"] == 20 and c["latency_ms"]["p50"] <= c["latency_ms"]["p95"] <= c["latency_ms"]["p99"]
               for c in report["configurations"])
    assert "experiment experiment: 3 configurations, 60 queries sent, 0 from snapshots in" in err
    page = html.read_text()
    assert "<h2>Configurations</h2>" in page and "title_boost=8" in page and "Content-Security-Policy" in page
    # again: everything comes from the snapshots
    code, out, err = invoke(*args)
    assert code == 0 and "0 queries sent, 60 from snapshots" in err and json.loads(out)["best"] == "title_boost=8"


def test_experiment_file_with_configurations_and_send_settings(titles: dict[str, Path], tmp_path: Path) -> None:
    folder = titles["folder"]
    (tmp_path / "exp.toml").write_text(f'''
engine = "{titles['index']}"
queries = "{titles['queries']}"
judgments = "{titles['qrels']}"
metrics = ["RR"]
top = 5
baseline = "plain"
[grid]
title_boost = [4]
[[configurations]]
name = "plain"
knobs = {{ title_boost = 1, k1 = 1.2 }}
[send]
concurrency = 2
''')
    code, out, err = invoke("experiment", tmp_path / "exp.toml", "--resamples", "200")
    assert code == 0, err
    assert "experiment exp: 2 configurations over 20 queries, compared with the baseline plain on RR" in out
    assert "│ plain (baseline) " in out and "best: title_boost=4 (RR " in out
    assert (tmp_path / "exp.sqlite").exists()  # the default store sits next to the file
    assert folder.exists()


def test_bad_grids_and_knobs_are_usage_errors(titles: dict[str, Path]) -> None:
    base = ("experiment", "--engine", titles["index"], "--queries", titles["queries"], "--judgments", titles["qrels"])
    code, _, err = invoke(*base, "--grid", "title_boost")
    assert code == 2 and "Invalid value for --grid: expected KNOB=V1,V2,...; got 'title_boost'" in err
    code, _, err = invoke(*base, "--grid", "titel_boost=1,2")
    assert code == 3 and "engine 'index' has no knob 'titel_boost' (did you mean 'title_boost'?)" in err
    code, _, err = invoke(*base, "--grid", "k1=1,2", "--set", "k1=3")
    assert code == 2 and "k1 is both set (--set) and on the grid (--grid); give it once" in err
    code, _, err = invoke(*base, "--grid", "k1=1,2", "--baseline", "k1=3")
    assert code == 3 and "the baseline 'k1=3' is not a configuration; did you mean 'k1=2'?" in err


def test_a_configuration_with_failed_queries_is_not_evaluated(tmp_path: Path) -> None:
    def engine(query: str, params: dict, top: int) -> list[str]:
        if params["mode"] == "broken" and query == "b":
            raise RuntimeError("model not loaded")
        return ["d1", "d2"]

    plan = ExperimentPlan("exp", PythonEngine(engine, knobs={"mode": "ok"}),
                          [SearchQuery("a", "a"), SearchQuery("b", "b")],
                          gainscope.Judgments.from_dict({"a": {"d1": 1}, "b": {"d2": 1}}),
                          [Configuration("broken", {"mode": "broken"})],
                          compare_settings=CompareSettings(resamples=100))
    with SnapshotStore.open(tmp_path / "s.sqlite") as store:
        with pytest.raises(EngineError) as caught:
            asyncio.run(run_experiment(plan, store))
        assert [s.name for s in store.snapshots()] == ["exp/default", "exp/broken"]  # what was sent stays recorded
    target = f"{engine.__module__}:{engine.__qualname__}"
    assert str(caught.value) == (
        f"the experiment is not evaluated: configuration 'broken': 1 failed, 0 not sent (b: engine 'engine', query 'b' "
        f"('b'): {target} raised RuntimeError: model not loaded). A run with missing queries would score them 0; fix "
        "the cause and run the experiment again (with --rerun-failed for failed queries): what was recorded is kept")


def test_the_report_holds_the_one_comparison_with_each_configurations_results(tmp_path: Path) -> None:
    # issue 14 item 4: an experiment's numbers are in the one Comparison and its Results, no type of its own
    from gainscope.compare import Comparison
    from gainscope.results import Results

    def engine(query: str, params: dict, top: int) -> list[str]:
        return ["d1", "d2"] if params["mode"] == "ok" else ["d2", "d1"]

    plan = ExperimentPlan("exp", PythonEngine(engine, knobs={"mode": "ok"}),
                          [SearchQuery("a", "a"), SearchQuery("b", "b")],
                          gainscope.Judgments.from_dict({"a": {"d1": 1}, "b": {"d2": 1}}),
                          [Configuration("flipped", {"mode": "flipped"})], metrics=("RR",),
                          compare_settings=CompareSettings(resamples=100))
    with SnapshotStore.open(tmp_path / "s.sqlite") as store:
        report = asyncio.run(run_experiment(plan, store))
    assert isinstance(report.comparison, Comparison)
    assert all(isinstance(r, Results) for r in report.comparison.results)
    # RR: default a=1 (d1 first), b=1/2; flipped a=1/2, b=1 -> both means 0.75
    by_run = {r.run_name: r.per_query("RR") for r in report.comparison.results}
    assert by_run == {"default": {"a": 1.0, "b": 0.5}, "flipped": {"a": 0.5, "b": 1.0}}


def test_queries_a_configuration_answers_with_no_document_are_noted(tmp_path: Path) -> None:
    def engine(query: str, params: dict, top: int) -> list[str]:
        return [] if params["mode"] == "strict" and query == "b" else ["d1", "d2"]

    plan = ExperimentPlan("exp", PythonEngine(engine, knobs={"mode": "ok"}),
                          [SearchQuery("a", "a"), SearchQuery("b", "b")],
                          gainscope.Judgments.from_dict({"a": {"d1": 1}, "b": {"d2": 1}}),
                          [Configuration("strict", {"mode": "strict"})], metrics=("RR",),
                          compare_settings=CompareSettings(resamples=100))
    with SnapshotStore.open(tmp_path / "s.sqlite") as store, pytest.warns(
            QueryCoverageWarning, match=r"^strict: 1 judged query has no ranking and is scored 0"):
        report = asyncio.run(run_experiment(plan, store))
    assert "queries that came back with no document, scored 0 where judged: strict (1: b)" in report.notes
    # RR of b: d2 at rank 2 (1/2) by default; nothing retrieved under strict (0)
    by_run = {r.run_name: r.per_query("RR") for r in report.comparison.results}
    assert by_run == {"default": {"a": 1.0, "b": 0.5}, "strict": {"a": 1.0, "b": 0.0}}
