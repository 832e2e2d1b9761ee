"""``gainscope index`` and ``gainscope search`` end to end on a corpus the test generates: index, search into a
snapshot, evaluate the run, replay it without the engine; and the command-line errors."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from tests.helpers import write_jsonl

from .conftest import invoke


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """200 documents of filler words; query i's two words appear together only in document rel{i}, and each word
    alone in a few filler documents, so that BM25 puts rel{i} first. Query 'q_none' asks for words no document has."""
    rng = random.Random(5)
    folder = tmp_path_factory.mktemp("generated")
    filler = [f"w{i}" for i in range(300)]
    docs = [{"_id": f"f{i}", "title": " ".join(rng.sample(filler, 3)), "text": " ".join(rng.sample(filler, 20))}
            for i in range(200)]
    queries, qrels = [], []
    for i in range(10):
        a, b = f"alpha{i}", f"beta{i}"
        docs.append({"_id": f"rel{i}", "title": f"{a} {b}", "text": " ".join(rng.sample(filler, 20))})
        docs += [{"_id": f"half{i}{j}", "title": a if j else b, "text": " ".join(rng.sample(filler, 20))}
                 for j in range(2)]
        queries.append({"_id": f"q{i}", "text": f"{a} {b}"})
        qrels.append(f"q{i} 0 rel{i} 1")
    queries.append({"_id": "q_none", "text": "nothing matches"})
    qrels.append("q_none 0 rel0 1")
    rng.shuffle(docs)
    write_jsonl(folder, "corpus.jsonl", docs)
    write_jsonl(folder, "queries.jsonl", queries)
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n")
    code, out, err = invoke("index", folder / "corpus.jsonl", "--index", folder / "index", "--fields", "title^2,text")
    assert code == 0, err
    assert out.startswith(f"indexed 230 documents from {folder / 'corpus.jsonl'} into {folder / 'index'} in ")
    return {"folder": folder, "index": folder / "index", "queries": folder / "queries.jsonl",
            "qrels": folder / "qrels.txt"}


def test_index_search_evaluate_end_to_end(generated: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    store = tmp_path / "snap.sqlite"
    code, out, err = invoke("search", "--engine", generated["index"], "--queries", generated["queries"], "--top", "10",
                            "-o", run, "--snapshot", store)
    assert code == 0, err
    assert out == ""
    lines = run.read_text().splitlines()
    tag = "index:b=0.75,k1=1.2,text_boost=1.0,title_boost=2.0"
    assert lines[0].split() == ["q0", "Q0", "rel0", "1", lines[0].split()[4], tag]
    assert {line.split()[0] for line in lines} == {f"q{i}" for i in range(10)}  # q_none: zero hits, no line
    assert "engine 'index': 11 queries recorded in snapshot 'index@" in err and "11 sent now (11 requests), 0 " \
        "recorded before" in err
    # every answerable query finds its document first: RR = 1 for ten queries, 0 for q_none -> 10/11
    code, out, err = invoke("evaluate", generated["qrels"], run, "-m", "RR", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["aggregates"]["RR"] == pytest.approx(10 / 11)


def test_a_rerun_sends_nothing_and_replay_needs_no_engine(generated: dict[str, Path], tmp_path: Path) -> None:
    store = tmp_path / "snap.sqlite"
    first, again, replayed = tmp_path / "1.trec", tmp_path / "2.trec", tmp_path / "3.trec"
    args = ("search", "--engine", generated["index"], "--queries", generated["queries"], "--top", "5",
            "--snapshot", store, "--set", "k1=0.9")
    assert invoke(*args, "-o", first)[0] == 0
    code, _, err = invoke(*args, "-o", again)
    assert code == 0 and "0 sent now (0 requests), 11 recorded before" in err
    code, _, err = invoke("search", "--replay", store, "-o", replayed)
    assert code == 0 and "no request sent" in err
    assert first.read_text() == again.read_text() == replayed.read_text()
    assert "k1=0.9," in first.read_text()


def test_unknown_knob_and_missing_options_are_usage_errors(generated: dict[str, Path]) -> None:
    code, _, err = invoke("search", "--engine", generated["index"], "--queries", generated["queries"],
                          "--set", "titel_boost=3")
    assert code == 2
    assert ("Invalid value for --set: engine 'index' has no knob 'titel_boost'; did you mean title_boost? (its knobs: "
            "k1, b, title_boost, text_boost)") in err
    code, _, err = invoke("search", "--queries", generated["queries"])
    assert code == 2 and "give the engine: --engine FILE.toml:NAME, an index folder, or module:function" in err
    code, _, err = invoke("search", "--engine", generated["index"])
    assert code == 2 and "give the queries: --queries FILE (or --replay STORE to rebuild a run)" in err
    code, _, err = invoke("search", "--engine", generated["index"], "--queries", generated["queries"],
                          "--set", "k1")
    assert code == 2 and "Invalid value for --set: expected KNOB=VALUE; got 'k1'" in err


def test_index_errors_are_exit_3(tmp_path: Path) -> None:
    write_jsonl(tmp_path, "c.jsonl", [{"_id": "a", "text": "x"}, {"_id": "a", "text": "y"}])
    code, _, err = invoke("index", tmp_path / "c.jsonl", "--index", tmp_path / "idx")
    assert code == 3
    assert err == f"error: {tmp_path}/c.jsonl:2: document id 'a' is given again (first on line 1); each document once\n"
