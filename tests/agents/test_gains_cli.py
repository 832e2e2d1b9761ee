"""Gains from the trace, judgments and a judge (a plain object with the Judge protocol; failures never 0), and
the ``agent`` command group through click's CliRunner (evaluate, dedup --explain, plot, convert; --judge on the
fake chat-completions server with a judgment store)."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import math
import re
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from tests.chat_server import FakeChatServer, Reply, user_text
from tests.helpers import invoke

from gainscope.agents import AgentSettings, Conversation, Iteration, Result, Search, Turn, evaluate_agents
from gainscope.agents.dedup import deduplicate
from gainscope.agents.gains import JudgmentIndex, judge_grades, trace_grades
from gainscope.cli.agent import agent_group
from gainscope.errors import InputError, InputWarning, PolicyError
from gainscope.io.texts import Document, Query
from gainscope.judges.prompts import builtin_prompt
from gainscope.judges.spec import JudgeSpec
from gainscope.judges.store import PairKey, StoredLabel


class TableJudge:
    """A Judge whose grades come from a table keyed by document id; ``None`` is a failed label."""

    def __init__(self, grades: dict[str, int | None], prompt: str = "graded") -> None:
        self.spec = JudgeSpec(model="table", prompt=builtin_prompt(prompt))
        self.grades = grades
        self.seen: list[tuple[str, str, str]] = []

    async def grade(self, query: Query, document: Document) -> StoredLabel:
        self.seen.append((query.text, document.doc_id, document.text))
        key = PairKey(self.spec.hash, query.query_id, "", document.doc_id, "")
        g = self.grades[document.doc_id]
        if g is None:
            return StoredLabel(key, "llm", "failed", None, error="unusable answer: no grade")
        return StoredLabel(key, "llm", "ok", g)


def conversation() -> Conversation:
    s1 = Search((Result(id="a", snippet="about a", gain=3), Result(url="https://x.org/b", content="b text", gain=2)))
    s2 = Search((Result(id="a", snippet="about a again"), Result(id="c", gain=1)))
    return Conversation("c1", (Turn((Iteration((s1,)), Iteration((s2,))), "the question"),), query_id="Q1")


def test_trace_gains_take_the_first_and_warn_on_conflicts() -> None:
    d = deduplicate([Iteration((Search((Result(id="a", gain=3), Result(id="a", gain=1), Result(id="b"))),))])
    with pytest.warns(InputWarning, match="result #1 has gains 3 and 1 in the trace; the first \\(3, at i1.s1.r1\\)"):
        grades = trace_grades(d)
    assert [(g.gain, g.status) for g in grades] == [(3.0, "ok"), (None, "unjudged")]
    with pytest.raises(PolicyError, match="missing must be one of"):
        trace_grades(d, missing="drop")


def test_judgments_by_id_and_normalised_url() -> None:
    index = JudgmentIndex.of({"Q1": {"a": 4, "http://www.x.org/b/": 1, "z": 3}})
    report = evaluate_agents([conversation()], judgments=index)
    r = report.conversations[0]
    assert [(g.gain, g.doc_id) for g in r.grades] == [(4.0, "a"), (1.0, "http://www.x.org/b/"), (0.0, "")]
    assert r.grades[2].status == "unjudged"
    # CG = 4 (a); z (grade 3) is never retrieved: IterationsForAllGoodResults = 100
    assert (r.summary["CG@N"], r.summary["IterationsForAllGoodResults"], r.all_good_found) == (4, 100, False)
    assert report.source == "judgments"


def test_judgment_keys_are_separate_spaces() -> None:
    # id=g1 and domain_id=g1 are two unique results (separate key spaces); the qrels doc id g1 is one of them
    s = Search((Result(id="g1", title="B"), Result(domain_id="g1", title="C"), Result(url="https://x.org/p/"),
                Result(id="k", url="https://x.org/q")))
    conv = Conversation("c", (Turn((Iteration((s,)),)),), query_id="Q")
    judgments = {"Q": {"g1": 2, "https://x.org/p": 3, "https://x.org/q": 4, "k": 1}}

    def grades(**kw: Any) -> list[tuple[float | None, str]]:
        r = evaluate_agents([conv], judgments=judgments, settings=AgentSettings(**kw)).conversations[0]
        return [(g.gain, g.doc_id) for g in r.grades]

    # default: qrels doc ids are generic ids; a result without an id falls back to its normalised URL
    assert grades() == [(2.0, "g1"), (0.0, ""), (3.0, "https://x.org/p"), (1.0, "k")]
    assert grades(judgments_key="domain_id") == [(0.0, ""), (2.0, "g1"), (3.0, "https://x.org/p"),
                                                 (4.0, "https://x.org/q")]
    assert grades(judgments_key="url") == [(0.0, ""), (0.0, ""), (3.0, "https://x.org/p"), (4.0, "https://x.org/q")]
    with pytest.raises(PolicyError, match=r"^judgments_key=\.\.\. must be one of id, domain_id, url; got 'doc'$"):
        AgentSettings(judgments_key="doc")


def test_judge_gains_once_per_unique_result_and_failures_undefined() -> None:
    judge = TableJudge({"a": 4, "https://x.org/b": None, "c": 2})
    report = evaluate_agents([conversation()], judge=judge)
    r = report.conversations[0]
    # three unique results, two requests: a's duplicate is not judged again and c has no text to judge
    assert sorted(doc for _, doc, _ in judge.seen) == ["a", "https://x.org/b"]
    assert {q for q, _, _ in judge.seen} == {"the question"}
    assert [g.status for g in r.grades] == ["ok", "failed", "missing"]  # c has no text to judge
    assert r.grades[1].gain is None and r.grades[1].note == "unusable answer: no grade"
    # iteration 1 has the failed result: everything gain-based is undefined from there, never a 0
    assert math.isnan(r.summary["CG@N"]) and r.summary["R@N"] == 4
    assert any("failed, undefined: unusable answer" in n for n in r.notes)


def test_judge_scale_and_query_are_checked() -> None:
    with pytest.raises(PolicyError, match="0-4 scale of seed 003"):
        asyncio.run(judge_grades(deduplicate([]), TableJudge({}, prompt="umbrela"), Query("q", "t")))
    no_query = Conversation("c", (Turn((Iteration((Search((Result(id="a", content="x"),)),)),)),))
    with pytest.raises(InputError, match="the last turn has no query"):
        evaluate_agents([no_query], judge=TableJudge({"a": 1}))
    with pytest.raises(PolicyError, match="not both"):
        evaluate_agents([no_query], judge=TableJudge({}), judgments={})


# ------------------------------------------------------------------------------------------------ CLI
TRACES = [
    {"conversation_id": "c1", "turns": [
        {"query": "old question", "iterations": [{"searches": [{"results": [{"id": "z", "gain": 4}]}]}]},
        {"query": "who", "iterations": [
            {"searches": [{"query": "a", "results": [{"id": "d1", "url": "https://www.x.com/a/", "gain": 3,
                                                      "snippet": "d one"},
                                                     {"id": "d2", "gain": 1}]},
                          {"query": "b", "results": [{"id": "d1", "gain": 3}]}]},
            {"searches": []},
            {"searches": [{"results": [{"url": "http://x.com/a?utm_source=q", "gain": 3},
                                       {"id": "d3", "gain": 2}]}]}]}]},
    {"conversation_id": "c2", "turns": [{"query": "what", "iterations": [
        {"searches": [{"results": [{"id": "e1", "gain": 4, "content": "e one"}, {"id": "e2", "gain": 0}]}]}]}]},
]


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    p = tmp_path / "traces.jsonl"
    p.write_text("".join(json.dumps(t) + "\n" for t in TRACES), encoding="utf-8")
    return p


run = partial(invoke, agent_group)


def test_evaluate_json_per_conversation(traces: Path) -> None:
    code, out, _ = run("evaluate", str(traces), "-q", "--format", "json")
    assert code == 0
    data = json.loads(out)
    c1 = data["conversations"][0]
    # c1, last turn: i1 = [d1, d2, d1] (G 3), i2 = [url of d1, d3] (G 2): CG 5, DCG 3 + 2/log2(3)
    assert (c1["summary"]["N"], c1["summary"]["R@N"], c1["summary"]["DupR@N"], c1["summary"]["CG@N"]) == (2, 5, 2, 5)
    assert c1["summary"]["DCG@N"] == pytest.approx(3 + 2 / math.log2(3))
    assert [it["|Dup^i|"] for it in c1["iterations"]] == [1, 1]
    agg = data["aggregate"]["CG@N"]
    assert (agg["mean"], agg["median"], agg["n"], agg["undefined"]) == (4.5, 4.5, 2, 0)
    assert agg["ci"][0] <= 4.5 <= agg["ci"][1]
    assert data["conventions"]["good gain"] == "gain >= 2"


def test_every_value_at_n_is_summarised_and_aggregated(traces: Path) -> None:
    _, out, _ = run("evaluate", str(traces), "-q", "-f", "json")
    data = json.loads(out)
    c1, c2 = (c["summary"] for c in data["conversations"])
    # c1 at N = 2: [url of d1 (a duplicate), d3 (gain 2)]; c2 at N = 1: [e1 (4), e2 (0)]
    at_n = ("|R^N|", "|UR^N|", "|GR^N|", "|Dup^N|", "G_N")
    assert [c1[k] for k in at_n] == [2, 1, 1, 1, 2] and [c2[k] for k in at_n] == [2, 2, 1, 0, 4]
    assert data["aggregate"]["G_N"]["mean"] == 3 and data["aggregate"]["|Dup^N|"]["mean"] == 0.5
    # every per-iteration value has its value at N, in the summary and in the aggregates
    names = {k.replace("@i", "@N").replace("_i", "_N").replace("^i", "^N") for k in data["conversations"][0][
        "iterations"][0] if k != "i"}
    assert names <= set(c1) and names <= set(data["aggregate"])
    _, out, _ = run("evaluate", str(traces))
    assert "│ |Dup^N| " in out and "│ G_N " in out


def test_evaluate_table_and_csv(traces: Path) -> None:
    code, out, _ = run("evaluate", str(traces))
    assert code == 0 and "over 2 conversations (values at N)" in out and "│ SRR@N " in out
    assert "conversation c1" not in out
    code, out, _ = run("evaluate", str(traces), "-q")
    assert "conversation c1 (query c1, turn 2, 3 unique results)" in out
    assert "note: turns 1-1 not evaluated (only the last turn is)" in out
    code, out, _ = run("evaluate", str(traces), "-q", "-f", "csv", "--good-gain", "3")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["conversation_id"], float(r["value"])) for r in rows
            if (r["scope"], r["metric"]) == ("conversation", "CG@N")] == [("c1", 3.0), ("c2", 4.0)]


def csv_rows(out: str) -> dict[tuple[str, str, str, str, str], str]:
    """The long CSV as {(scope, conversation_id, i, metric, statistic): value}; the key is unique."""
    reader = csv.DictReader(io.StringIO(out))
    assert reader.fieldnames == ["scope", "conversation_id", "query_id", "i", "metric", "statistic", "value"]
    rows = list(reader)
    table = {(r["scope"], r["conversation_id"], r["i"], r["metric"], r["statistic"]): r["value"] for r in rows}
    assert len(table) == len(rows)
    return table


def test_csv_has_conversations_aggregates_and_iterations(traces: Path) -> None:
    _, out, _ = run("evaluate", str(traces), "-f", "csv")
    t = csv_rows(out)
    # aggregates and per-conversation values at N, in one long layout
    assert float(t[("aggregate", "", "", "CG@N", "mean")]) == 4.5 and t[("aggregate", "", "", "CG@N", "n")] == "2"
    assert float(t[("aggregate", "", "", "sDCG", "ci_low")]) <= float(t[("aggregate", "", "", "sDCG", "ci_high")])
    assert float(t[("conversation", "c1", "", "CG@N", "value")]) == 5 and t[("conversation", "c1", "", "turn",
                                                                              "value")] == "2"
    assert t[("conversation", "c1", "", "all_good_found", "value")] == "true"
    assert t[("conversation", "c1", "", "note", "1")] == "turns 1-1 not evaluated (only the last turn is)"
    assert t[("convention", "", "", "good gain", "")] == "gain >= 2"
    assert "95% percentile bootstrap interval of the mean" in t[("convention", "", "", "aggregates", "")]
    assert not any(k[0] == "iteration" for k in t)
    # with -q the values at every iteration too: the same numbers as the JSON
    _, out, _ = run("evaluate", str(traces), "-q", "-f", "csv")
    t = csv_rows(out)
    _, out, _ = run("evaluate", str(traces), "-q", "-f", "json")
    data = json.loads(out)
    expected: dict[tuple[str, str, str, str, str], object] = {}
    for metric, agg in data["aggregate"].items():
        for stat in ("mean", "median", "n", "undefined", "capped"):
            if stat in agg:  # capped: IterationsForAllGoodResults only
                expected[("aggregate", "", "", metric, stat)] = agg[stat]
        low, high = agg["ci"]
        expected[("aggregate", "", "", metric, "ci_low")] = low
        expected[("aggregate", "", "", metric, "ci_high")] = high
    for c in data["conversations"]:
        cid = c["conversation_id"]
        for metric, v in c["summary"].items():
            expected[("conversation", cid, "", metric, "value")] = v
        for it in c["iterations"]:
            for metric, v in it.items():
                if metric != "i":
                    expected[("iteration", cid, str(it["i"]), metric, "value")] = v
    for key, v in expected.items():
        assert t[key] == ("" if v is None else str(v) if isinstance(v, int) else repr(float(v))), key
    assert {k for k in t if k[0] in ("aggregate", "iteration")} == {k for k in expected if k[0] != "conversation"}
    assert float(t[("iteration", "c1", "1", "|Dup^i|", "value")]) == 1


def test_all_good_results_is_explained(traces: Path, tmp_path: Path) -> None:
    code, out, _ = run("evaluate", "--help")
    text = re.sub(r"(\w-) (\w)", r"\1\2", " ".join(out.split()))  # as click wraps it, "--good- gain" too
    assert code == 0
    assert ("IterationsForAllGoodResults is the first iteration by which all good results were retrieved: with "
            "--judgments, every result judged good (grade >= --good-gain) for the query; otherwise every good "
            "result found in the trace") in text
    assert "capped at 100: when the judged good results are never all retrieved it is 100 and all_good_found is " \
           "false" in text
    assert "undefined when there is no good result to find" in text
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("c1 0 d1 2\n", encoding="utf-8")
    _, out, _ = run("evaluate", str(traces), "--judgments", str(qrels), "-f", "json")
    judged = json.loads(out)["conventions"]["all good"]
    assert judged.startswith("IterationsForAllGoodResults: first iteration by which every result judged good "
                             "(grade >= 2) for the query was retrieved")
    assert "never all retrieved: 100 (the cap), all_good_found=false" in judged
    assert "undefined when the query has no judged good result" in judged
    _, out, _ = run("evaluate", str(traces))
    assert "all good   IterationsForAllGoodResults: first iteration by which every good result found in the " \
           "trace (gain >= 2) was retrieved" in out


def test_evaluate_with_judgments(traces: Path, tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("c1 0 d1 2\nc1 0 d3 4\nc1 0 d9 3\nc2 0 e2 3\n", encoding="utf-8")
    code, out, _ = run("evaluate", str(traces), "--judgments", str(qrels), "-q", "-f", "json")
    assert code == 0
    c1, c2 = json.loads(out)["conversations"]
    assert (c1["summary"]["CG@N"], c1["summary"]["IterationsForAllGoodResults"], c1["all_good_found"]) == (6, 100,
                                                                                                           False)
    assert (c2["summary"]["CG@N"], c2["summary"]["IterationsForAllGoodResults"]) == (3, 1)
    # qrels by URL: d1's URL (https://www.x.com/a/, again as http://x.com/a?utm_source=q) is judged 4
    qrels.write_text("c1 0 https://x.com/a 4\nc1 0 d3 4\n", encoding="utf-8")
    code, out, _ = run("evaluate", str(traces), "--judgments", str(qrels), "--judgments-key", "url", "-q", "-f",
                       "json")
    data = json.loads(out)
    assert data["conversations"][0]["summary"]["CG@N"] == 4 and "results' URLs" in data["conventions"]["gains"]


def test_all_good_aggregate_says_what_it_is_over(traces: Path, tmp_path: Path) -> None:
    # c1 never retrieves d9 (judged 3): capped at 100; c2 retrieves e2 (its only good result) at i1: 1.
    # The aggregate is over c2 only (it was the mean of 100 and 1, 50.5), and c1 is counted as capped
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("c1 0 d1 2\nc1 0 d3 4\nc1 0 d9 3\nc2 0 e2 3\n", encoding="utf-8")
    _, out, _ = run("evaluate", str(traces), "--judgments", str(qrels), "-q", "-f", "json")
    data = json.loads(out)
    assert data["aggregate"]["IterationsForAllGoodResults"] == {"mean": 1, "median": 1, "ci": [None, None], "n": 1,
                                                                "undefined": 0, "capped": 1}
    assert "capped" not in data["aggregate"]["CG@N"]
    assert [(c["all_good_found"], c["all_good_capped"]) for c in data["conversations"]] == [(False, True),
                                                                                         (True, False)]
    assert ("aggregated (mean, median, interval) over the conversations that retrieved every good result by "
            "iteration 100; conversations capped at 100 (never all retrieved, or only after iteration 100) are left "
            "out and counted apart (capped), never averaged in") in data["conventions"]["all good"]
    _, out, _ = run("evaluate", str(traces), "--judgments", str(qrels))
    assert ("IterationsForAllGoodResults: over the 1 conversation that retrieved every good result by iteration 100; "
            "1 capped at 100 (left out, not averaged in)") in out
    _, out, _ = run("evaluate", str(traces), "--judgments", str(qrels), "-f", "csv")
    t = csv_rows(out)
    assert (t[("aggregate", "", "", "IterationsForAllGoodResults", "mean")],
            t[("aggregate", "", "", "IterationsForAllGoodResults", "capped")]) == ("1.0", "1")
    assert t[("conversation", "c1", "", "all_good_capped", "value")] == "true"
    assert ("conversation", "c1", "", "note", "2") in t and t[("conversation", "c1", "", "note", "2")] == (
        "not every judged good result was retrieved; IterationsForAllGoodResults = 100 (capped: left out of its "
        "aggregate)")


def test_dedup_explain(traces: Path) -> None:
    code, out, _ = run("dedup", str(traces), "--explain")
    assert code == 0
    assert "conversation c1 (turn 2 of 2): 2 iteration(s), 5 results, 3 unique, 2 duplicates" in out
    assert "duplicate of #1 (first at i1.s1.r1): via url; url +1; confidence 1 >= 1" in out
    code, out, _ = run("dedup", str(traces))
    assert out.splitlines() == ["c1\t2 iterations\t5 results\t3 unique\t2 duplicates",
                                "c2\t1 iterations\t2 results\t2 unique\t0 duplicates"]


def test_plot_and_convert(traces: Path, tmp_path: Path) -> None:
    code, out, _ = run("plot", str(traces), "--output-dir", str(tmp_path / "figs"))
    assert code == 0
    names = sorted(Path(p).name for p in out.split())
    assert names == ["agent-cumulative-good-gain.png", "agent-cumulative-good-gain.svg", "agent-sre.png",
                     "agent-sre.svg", "agent-srr.png", "agent-srr.svg"]
    assert (tmp_path / "figs" / "agent-sre.svg").read_text().lstrip().startswith("<?xml")
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"id": "k", "messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [{"id": "1", "type": "function",
                                              "function": {"name": "lookup", "arguments": "{\"query\": \"q\"}"}}]},
        {"role": "tool", "tool_call_id": "1", "content": "{\"items\": [{\"href\": \"https://a.b\"}]}"}]}) + "\n")
    code, _, err = run("convert", str(chat), "--search-tool", "lookup", "-o", str(tmp_path / "native.jsonl"))
    assert code == 0 and "1 conversations written" in err
    assert json.loads((tmp_path / "native.jsonl").read_text())["turns"][0]["iterations"][0]["searches"][0][
        "results"] == [{"url": "https://a.b"}]


def test_gain_key_of_tool_outputs(tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"id": "k", "messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [{"id": "1", "type": "function",
                                              "function": {"name": "search", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "1", "content": json.dumps([{"url": "https://a.org", "gain": 3},
                                                                     {"url": "https://b.org", "gain": 1}])}]}) + "\n")
    code, out, _ = run("evaluate", str(chat), "-q", "-f", "json")
    assert code == 0 and json.loads(out)["conversations"][0]["summary"]["CG@N"] is None  # no gains read
    code, out, _ = run("evaluate", str(chat), "-q", "-f", "json", "--field", "gain=gain")
    assert code == 0 and json.loads(out)["conversations"][0]["summary"]["CG@N"] == 3
    # a gain key that no result has: every gain would be undefined, a table of dashes
    code, out, err = run("evaluate", str(chat), "--field", "gain=label")
    assert code == 3 and out == ""
    assert err == (f"error: {chat}: none of the 2 search results has a gain under the key 'label' (--field "
                   "gain=label; gain='label' of ResultMapping in Python), so every gain would be undefined; give the "
                   "key that holds the results' gains, or take gains from --judgments or --model\n")


def test_cli_errors(traces: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"conversation_id": "x", "turns": [{"iterations": [{"searches": [{"results": [{}]}]}]}]}\n')
    code, _, err = run("evaluate", str(bad))
    assert code == 3 and f"{bad}:1: turns[0].iterations[0].searches[0].results[0]: a result needs" in err
    code, _, err = run("evaluate", str(traces), str(traces))
    assert code == 3 and "conversation 'c1' is in" in err
    code, _, err = run("evaluate", str(traces), "--judgments", "q", "--model", "m")
    assert code == 2 and "not both" in err
    code, _, err = run("evaluate", str(traces), "--field", "doi=x")
    assert code == 2 and "expected FIELD=KEY" in err
    code, _, err = run("evaluate", str(traces), "--sdcg-gains", "0:0,1")
    assert code == 2 and "expected GRADE:GAIN pairs" in err
    code, _, err = run("evaluate", str(traces), "--sdcg-gains", "0:0,4:16")
    assert code == 2 and "the sDCG gain mapping has no gain for grade 3" in err
    # NaN passes click's ranges; the settings' own check named the Python keywords good_gain, sdcg_b
    code, _, err = run("evaluate", str(traces), "--good-gain", "nan")
    assert code == 2 and "Invalid value for '--good-gain': 'nan' is not a finite number" in err
    code, _, err = run("evaluate", str(traces), "--sdcg-b", "nan")
    assert code == 2 and "Invalid value for '--sdcg-b': 'nan' is not a finite number" in err


def test_sdcg_gains_option(traces: Path) -> None:
    _, out, _ = run("evaluate", str(traces), "-q", "-f", "json", "--sdcg-gains", "0:0,1:1,2:10,3:100,4:1000")
    data = json.loads(out)
    # c2: one search [e1 (4), e2 (0)]: 1000 / 1 + 0
    assert data["conversations"][1]["summary"]["sDCG"] == 1000
    assert "gains mapped 0:0, 1:1, 2:10, 3:100, 4:1000" in data["conventions"]["sDCG"]


# ------------------------------------------------------------------------------------------------ --judge
def test_judge_end_to_end_with_store(traces: Path, tmp_path: Path, chat_server: FakeChatServer) -> None:
    server = chat_server

    def behaviour(body: dict[str, Any], attempt: int) -> Any:
        text = user_text(body)
        if "e one" in text:
            return Reply("ok", grade=4)
        return Reply("malformed")  # d1: never a grade

    server.behaviour = behaviour
    store = tmp_path / "store.sqlite"
    args = ("evaluate", str(traces), "-q", "-f", "json", "--model", "fake-1", "--base-url", server.url,
            "--store", str(store), "--max-attempts", "1")
    code, out, err = run(*args)
    assert code == 0, err
    c1, c2 = json.loads(out)["conversations"]
    # e1 and d1 have text: e1 gets 4; d1's answers are never a grade (3 answer attempts), so it is failed --
    # undefined, not 0; results without text are missing (undefined) and never sent
    assert server.count() == 4 and "2 asked, 0 from the store" in err and "1 failed (undefined, never 0)" in err
    assert c1["grades"] == {"ok": 0, "unjudged": 0, "failed": 1, "missing": 2}
    assert c2["grades"] == {"ok": 1, "unjudged": 0, "failed": 0, "missing": 1}
    assert c1["summary"]["CG@N"] is None and c2["summary"]["CG@N"] is None and c1["summary"]["R@N"] == 5
    # again: e1 comes from the store; the failed d1 is asked again
    code, out, err = run(*args)
    assert code == 0 and server.count() == 7 and "1 asked, 1 from the store" in err
