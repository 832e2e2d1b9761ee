"""``--profile tempoeval`` (``profile="tempoeval"``) on the temporal batch gives TempoEval 0.1.0's numbers in the
file's mode: in focus-time mode nDCG with gain 2^g - 1 and the ideal from the top k re-sorted, precision and MAP
over the documents retrieved; in gold mode nDCG with the ideal from every gold grade. Where ours is undefined
(NaN) TempoEval returns 0.0. Compared on random lines, k = 1..9 (``pip install tempoeval``)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from gainscope.temporal import TemporalMRR, TemporalRecall
from gainscope.temporal.batch import evaluate_records, read_records

from .helpers import invoke, write

te = pytest.importorskip("tempoeval.metrics")
pytestmark = pytest.mark.parity

NAMES = ("TemporalNDCG", "TemporalPrecision", "TemporalRecall", "TemporalMRR", "TemporalMAP")


def _theirs(name: str, focus_time: bool) -> Any:
    if name == "TemporalMAP":
        return te.TemporalMAP()  # focus-time mode only
    return getattr(te, name)(use_focus_time=True) if focus_time else getattr(te, name)()


def _compare(ev: Any, cases: dict[str, dict[str, Any]], names: list[str], focus_time: bool) -> int:
    compared = 0
    for name, label in zip(NAMES, names, strict=True):
        theirs = _theirs(name, focus_time)
        for q, ours in ev.per_query("run", label).items():
            expected = theirs.compute(**cases[q])
            if math.isnan(ours):
                assert expected == 0.0, (label, q, cases[q])
            else:
                assert round(ours, 5) == pytest.approx(expected, abs=1e-12), (label, q, cases[q])
                compared += 1
    return compared


@pytest.mark.parametrize("k", range(1, 10))
def test_focus_time_mode_is_tempoeval(tmp_path: Path, k: int) -> None:
    rng = random.Random(100 + k)
    cases: dict[str, dict[str, Any]] = {}
    for c in range(30):
        qft = sorted({2000 + rng.randrange(8) for _ in range(rng.randrange(0, 4))})
        dfts = [sorted({2000 + rng.randrange(10) for _ in range(rng.randrange(0, 4))})
                for _ in range(rng.randrange(1, 8))]
        cases[f"q{c:02d}"] = {"qft": qft, "dfts": dfts, "k": k}
    lines = [{"query_id": q, "qft": x["qft"], "dfts": x["dfts"]} for q, x in cases.items()]
    ev = evaluate_records(read_records(write(tmp_path, lines)), [f"{n}@{k}" for n in NAMES], undefined="skip",
                          profile="tempoeval")
    names = [f"TemporalNDCG(gain=exponential, ideal=retrieved)@{k}", f"TemporalPrecision@{k}",
             f"TemporalRecall@{k}", f"TemporalMRR@{k}", f"TemporalMAP(denominator=retrieved)@{k}"]
    assert list(ev.metrics) == names
    assert _compare(ev, cases, names, focus_time=True) > 50


@pytest.mark.parametrize("k", range(1, 10))
def test_gold_mode_is_tempoeval(tmp_path: Path, k: int) -> None:
    rng = random.Random(200 + k)
    ids = [f"d{i}" for i in range(12)]
    cases: dict[str, dict[str, Any]] = {}
    for c in range(30):
        gold_list = rng.sample(ids, rng.randrange(1, 5))
        gold = {d: rng.randrange(1, 4) for d in gold_list} if rng.random() < 0.5 else gold_list
        cases[f"q{c:02d}"] = {"retrieved_ids": rng.sample(ids, rng.randrange(1, 10)), "gold_ids": gold, "k": k}
    lines = [{"query_id": q, "retrieved_ids": x["retrieved_ids"], "gold": x["gold_ids"]} for q, x in cases.items()]
    # TempoEval has no gold mode for precision and MAP: nDCG, recall and MRR are compared
    ev = evaluate_records(read_records(write(tmp_path, lines)), [f"{n}@{k}" for n in NAMES], undefined="skip",
                          profile="tempoeval")
    names = list(ev.metrics)
    assert names[0] == f"TemporalNDCG(gain=exponential)@{k}"  # the ideal from every gold grade (ideal=judged)
    compared = 0
    for name, label in zip(NAMES, names, strict=True):
        if name in ("TemporalNDCG", "TemporalRecall", "TemporalMRR"):
            for q, ours in ev.per_query("run", label).items():
                assert round(ours, 5) == pytest.approx(_theirs(name, False).compute(**cases[q]), abs=1e-12)
                compared += 1
    assert compared == 90


def test_rel_zero_reads_a_gold_dict_as_tempoeval_does() -> None:
    """TempoEval's gold recall and MRR count every key of a ``{id: grade}`` gold relevant, grade 0 included;
    ``rel=0`` (relevant: any judged grade >= 0) is that reading, since a retrieved id outside the gold is not
    judged."""
    rng = random.Random(17)
    ids = [f"d{i}" for i in range(12)]
    zero_keys = 0
    for _ in range(200):
        gold = {d: rng.randrange(0, 4) for d in rng.sample(ids, rng.randrange(1, 6))}
        zero_keys += 0 in gold.values()
        args: dict[str, Any] = {"retrieved_ids": rng.sample(ids, rng.randrange(1, 10)), "gold_ids": gold,
                                "k": rng.randrange(1, 10)}
        assert round(TemporalRecall(rel=0).compute(**args), 5) == te.TemporalRecall().compute(**args)
        assert round(TemporalMRR(rel=0).compute(**args), 5) == te.TemporalMRR().compute(**args)
    assert zero_keys > 50


def test_the_profile_is_echoed_and_overrides_noted(tmp_path: Path) -> None:
    path = write(tmp_path, [{"query_id": "q1", "qft": [2020], "dfts": [[2019], [2020], [2020]]}])
    code, out, err = invoke("evaluate", path, "-m", "TemporalNDCG@2 TemporalNDCG(gain=linear)@2", "--profile",
                            "tempoeval", "--resamples", "20")
    assert code == 0, err
    lines = [" ".join(x.split()) for x in out.splitlines()]
    assert any(x.startswith("profile tempoeval: TempoEval 0.1.0:") for x in lines)
    # gain given in the name: over the profile's exponential, and said so; the ideal is the profile's
    assert "note TemporalNDCG(ideal=retrieved)@2: gain=linear (the tempoeval profile: exponential)" in lines
    assert "TemporalNDCG(gain=exponential, ideal=retrieved)@2 (core) nDCG(gain=exponential, ideal=retrieved)@2 of " \
           "the first 2 documents and the judged pool" in lines
    code, out, err = invoke("evaluate", path, "-m", "TemporalNDCG@2", "--profile", "tempoeval", "-f", "json",
                            "--resamples", "20")
    profile = json.loads(out)["profile"]
    assert code == 0 and profile["name"] == "tempoeval" and profile["variants"]["focus_time"] == {
        "nDCG": {"ideal": "retrieved"}}
    code, _, err = invoke("evaluate", path, "--profile", "quepid")
    assert code == 2 and "the temporal metrics take the trec_eval and tempoeval profiles, not 'quepid'" in err
