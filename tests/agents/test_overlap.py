"""Judgments that match nothing in the traces are an error, never a table of zeros; judgments that match part of
them are a warning naming what they do not match (gainscope.agents.overlap), in Python and on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gainscope.agents import AgentSettings, Conversation, Iteration, Result, Search, Turn, evaluate_agents
from gainscope.cli.agent import agent_group
from gainscope.errors import InconsistentInputError, InputWarning, QueryCoverageWarning, loose_match


def conv(cid: str, *results: Result, query_id: str | None = None) -> Conversation:
    """A one-turn conversation of one iteration with one search returning ``results``."""
    iterations = (Iteration((Search(results),)),) if results else ()
    return Conversation(cid, (Turn(iterations, "question"),), query_id=query_id)


A = Result(id="a", url="https://x.org/a")
B = Result(id="b", domain_id="doc:b", url="https://x.org/b")


def test_loose_match() -> None:
    # the first id of the first list that is not exact but matches once whitespace and leading zeros go
    assert loose_match(["x", "007", " 8"], ["7", "8"]) == ("007", "7")
    assert loose_match(["8 "], ["7", "08"]) == ("8 ", "08")
    assert loose_match(["0", "00"], ["000"]) == ("0", "000")  # all zeros is "0"
    assert loose_match(["7"], ["7"]) is None  # an exact match is no near one
    assert loose_match(["a"], ["b"]) is None


def test_no_conversation_query_is_judged() -> None:
    with pytest.raises(InconsistentInputError) as info:
        evaluate_agents([conv("c1", A), conv("c2", B)], judgments={"q1": {"a": 3}, "q2": {"b": 1}})
    assert str(info.value) == (
        "no conversation's query is judged: the judgments have queries q1, q2; the traces have c1, c2 (a "
        "conversation takes the judgments of its query_id, else of its conversation_id).")


def test_no_query_hints_near_ids_and_conversation_ids() -> None:
    # '007' and '7' match once leading zeros go
    with pytest.raises(InconsistentInputError, match=r"the judgments have queries 7; the traces have 007 \(a .*\. "
                                                     r"Some ids match after removing whitespace and leading zeros "
                                                     r"\(for example '007' and '7'\); fix the ids so that both files "
                                                     r"spell them the same\.$"):
        evaluate_agents([conv("007", A)], judgments={"7": {"a": 3}})
    # judgments keyed by the conversation id, while the conversation's query_id is what is looked up
    with pytest.raises(InconsistentInputError, match=r"the traces have q9 \(.*\)\. The judgments are keyed by "
                                                     r"conversation ids \(for example 'c1'\), but that conversation "
                                                     r"has a query_id \('q9'\), which is used instead: key the "
                                                     r"judgments by query_id, or drop query_id from the traces\.$"):
        evaluate_agents([conv("c1", A, query_id="q9")], judgments={"c1": {"a": 3}})
    with pytest.raises(InconsistentInputError, match="the judgments have no query; the traces have c1"):
        evaluate_agents([conv("c1", A)], judgments={})


def test_no_result_is_judged_names_the_key_that_matches() -> None:
    # the judgments' doc ids are domain ids and URLs; looked up by generic id (the default), nothing matches:
    # a's id is 'a', b's id is 'b'
    judgments = {"c1": {"doc:b": 3, "https://x.org/zz": 1}}
    with pytest.raises(InconsistentInputError) as info:
        evaluate_agents([conv("c1", A, B)], judgments=judgments)
    assert str(info.value) == (
        "no result in the traces is judged: for the 1 judged query they ask, the judgments have doc ids doc:b, "
        "https://x.org/zz, and the 2 unique results have the ids (their URLs where they have no id) a, b; every "
        "gain would be 0. With --judgments-key domain_id (judgments_key='domain_id' in Python), 1 of the 2 results "
        "matches.")
    report = evaluate_agents([conv("c1", A, B)], judgments=judgments, settings=AgentSettings(judgments_key="domain_id"))
    assert report.conversations[0].summary["CG@N"] == 3


def test_no_result_is_judged_other_hints() -> None:
    with pytest.raises(InconsistentInputError, match=r"every gain would be undefined\. Some ids match after removing "
                                                     r"whitespace and leading zeros \(for example 'a' and ' a'\)"):
        evaluate_agents([conv("c1", A)], judgments={"c1": {" a": 2}}, settings=AgentSettings(missing="undefined"))
    with pytest.raises(InconsistentInputError, match=r"the 1 unique results have the URLs https://x.org/a; every gain "
                                                     r"would be 0\. Check that the judgments' doc ids are the "
                                                     r"results' ids; --judgments-key \(judgments_key= in Python\) "
                                                     r"says which field of a result they are: id, domain_id or url\.$"):
        evaluate_agents([conv("c1", A)], judgments={"c1": {"q": 2}}, settings=AgentSettings(judgments_key="url"))


def test_partial_overlap_warns_once_per_kind() -> None:
    convs = [conv("c1", A), conv("c2", B), conv("c3", A, query_id="q3"), conv("c4", A), conv("c5")]
    judgments = {"c1": {"a": 3}, "c2": {"zz": 2}, "c5": {"a": 1}, "never-asked": {"a": 4}}
    with pytest.warns() as caught:
        report = evaluate_agents(convs, judgments=judgments)
    assert [(w.category, str(w.message)) for w in caught] == [
        (QueryCoverageWarning, "2 of 5 conversations have a query that the judgments do not judge, so every result "
                               "of theirs is unjudged (gain 0, as trec_eval): c3 (query q3), c4"),
        # c5 has no result: nothing to match, nothing said; 'never-asked' is judged but asked by no conversation
        (InputWarning, "1 of 3 conversations has a judged query but no result that the judgments judge, so every "
                       "result of theirs is unjudged (gain 0, as trec_eval): c2"),
    ]
    assert [c.summary["CG@N"] for c in report.conversations] == [3, 0, 0, 0, 0]


def test_judged_queries_without_results_are_not_an_error() -> None:
    # the conversation never searched: nothing could match, and N = 0 says so
    report = evaluate_agents([conv("c1")], judgments={"c1": {"a": 3}})
    assert report.conversations[0].summary["N"] == 0


# ------------------------------------------------------------------------------------------------ CLI
def test_cli_zero_overlap_exit_3_partial_warns(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(json.dumps(c.to_dict()) + "\n" for c in (conv("c1", A), conv("c2", B))),
                      encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("nope 0 a 3\n", encoding="utf-8")
    result = CliRunner().invoke(agent_group, ["evaluate", str(traces), "--judgments", str(qrels)])
    assert result.exit_code == 3 and result.stdout == ""
    assert result.stderr == (f"error: no conversation's query is judged: the judgments ({qrels}) have queries nope; "
                             f"the traces ({traces}) have c1, c2 (a conversation takes the judgments of its query_id, "
                             "else of its conversation_id).\n")
    qrels.write_text("c1 0 https://x.org/b 3\nc2 0 https://x.org/b 3\n", encoding="utf-8")
    result = CliRunner().invoke(agent_group, ["evaluate", str(traces), "--judgments", str(qrels)])
    assert result.exit_code == 3 and "every gain would be 0. With --judgments-key url" in result.stderr
    qrels.write_text("c1 0 a 3\n", encoding="utf-8")
    result = CliRunner().invoke(agent_group, ["evaluate", str(traces), "--judgments", str(qrels), "-f", "json"])
    assert result.exit_code == 0
    assert result.stderr == (f"warning: 1 of 2 conversations has a query that the judgments ({qrels}) do not judge, "
                             "so every result of theirs is unjudged (gain 0, as trec_eval): c2\n")
    assert json.loads(result.stdout)["aggregate"]["CG@N"]["mean"] == 1.5
