"""Prompts, the judge hash, strict answer parsing, the store, pooling and the labelling loop (with an in-process
fake client; the HTTP client and the real server are tested in test_client.py and test_judge_cli.py)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

import gainscope
from gainscope.errors import FormatError, InputError, JudgeAnswerError, JudgeRequestError, PolicyError
from gainscope.io.texts import Document, Query, read_documents, read_queries
from gainscope.judges.answers import parse_answer
from gainscope.judges.labeling import Budget, LLMJudge, Prices, label_pairs
from gainscope.judges.pool import pool_runs, read_pairs
from gainscope.judges.prompts import BUILTIN, PromptTemplate, Scale, parse_scale, template_from_file
from gainscope.judges.spec import JudgeSpec
from gainscope.judges.store import JudgmentStore, PairKey, StoredLabel

SCALE = Scale(0, 4)


# ---------------------------------------------------------------------------------------------- answers
@pytest.mark.parametrize(("text", "grade"), [
    ('{"grade": 3, "reasoning": "fits"}', 3),
    ('```json\n{"grade": 2, "reasoning": "x"}\n```', 2),
    ('```\n{"grade": 0}\n```', 0),
    ('Here you go: {"grade": 4, "reasoning": "exact"} -- done', 4),
    ('{"relevance_score": 1, "reasoning": "TempoEval key"}', 1),
    ('{"grade": "2"}', 2),
    ('{"grade": 3.0}', 3),
])
def test_answers_that_are_grades(text: str, grade: int) -> None:
    assert parse_answer(text, SCALE)[0] == grade


@pytest.mark.parametrize(("text", "message"), [
    ("The document is relevant, grade 3.", "holds no JSON object"),
    ('{"grade": 3', "holds no JSON object"),
    ('{"grade": 3,}', "not valid JSON"),
    ('{"grade": 7, "reasoning": "very"}', "the grade 7 is outside the scale 0-4"),
    ('{"grade": -1}', "outside the scale"),
    ('{"grade": 2.5}', "not an integer"),
    ('{"grade": true}', "boolean"),
    ('{"grade": null}', "not an integer"),
    ('{"reasoning": "forgot"}', "has no grade"),
    ("[1, 2]", "holds no JSON object"),
    ("", "holds no JSON object"),
])
def test_answers_that_are_not_grades_raise_with_the_raw_text(text: str, message: str) -> None:
    with pytest.raises(JudgeAnswerError, match=message) as info:
        parse_answer(text, SCALE)
    assert info.value.raw == text


# ---------------------------------------------------------------------------------------------- prompts, spec
def test_builtin_prompts_render_and_hash() -> None:
    msgs = BUILTIN["graded"].messages("capital of france", "Paris is the capital.", title="Paris")
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "capital of france" in msgs[1]["content"] and "Document title: Paris" in msgs[1]["content"]
    assert '{"grade": <an integer from 0 to 4>' in msgs[1]["content"]
    assert BUILTIN["umbrela"].scale == Scale(0, 3, BUILTIN["umbrela"].scale.labels)
    a = JudgeSpec("m", BUILTIN["graded"])
    assert a.hash == JudgeSpec("m", BUILTIN["graded"]).hash and len(a.hash) == 16
    assert len({a.hash, JudgeSpec("m2", BUILTIN["graded"]).hash, JudgeSpec("m", BUILTIN["binary"]).hash,
                JudgeSpec("m", BUILTIN["graded"], temperature=0.7).hash,
                JudgeSpec("m", replace(BUILTIN["graded"], version="2")).hash}) == 5


def test_user_templates(tmp_path: Path) -> None:
    f = tmp_path / "mine.txt"
    f.write_text("[system]\nYou grade {{strictly}}.\n[user]\nQ: {query}\nD: {document}\nN: {narrative}\n",
                 encoding="utf-8")
    t = template_from_file(f, parse_scale("0-3"))
    msgs = t.messages("q", "d", narrative="n")
    assert msgs[0] == {"role": "system", "content": "You grade {strictly}."}
    assert msgs[1]["content"] == "Q: q\nD: d\nN: n\n"
    f.write_text("Q: {query}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"missing \{document\}"):
        template_from_file(f, SCALE)
    f.write_text("{query} {document} {doc_url}", encoding="utf-8")
    with pytest.raises(InputError, match=r"unknown placeholder\(s\) \{doc_url\}"):
        template_from_file(f, SCALE)
    with pytest.raises(PolicyError, match="LOW-HIGH"):
        parse_scale("0 to 4")
    with pytest.raises(PolicyError, match="low < high"):
        PromptTemplate("x", "1", "{query}{document}", Scale(3, 3))


# ---------------------------------------------------------------------------------------------- texts
def test_query_and_document_readers(tmp_path: Path) -> None:
    (tmp_path / "q.jsonl").write_text('{"_id": "q1", "text": "first"}\n{"query_id": "q2", "text": "second", '
                                      '"narrative": "n"}\n', encoding="utf-8")
    (tmp_path / "c.tsv").write_text("d1\tone\tTitle\nd2\ttwo\n", encoding="utf-8")
    assert read_queries(tmp_path / "q.jsonl")["q2"] == Query("q2", "second", narrative="n")
    assert read_documents(tmp_path / "c.tsv", only={"d1"}) == {"d1": Document("d1", "one", "Title")}
    beir = tmp_path / "beir"
    beir.mkdir()
    (beir / "queries.jsonl").write_text('{"_id": "1", "text": "x"}\n', encoding="utf-8")
    (beir / "corpus.jsonl").write_text('{"_id": "a", "title": "T", "text": "y"}\n', encoding="utf-8")
    assert read_documents(beir)["a"].title == "T" and read_queries(beir)["1"].text == "x"
    (tmp_path / "bad.jsonl").write_text('{"_id": "q1", "text": "a"}\n{"id": "q2"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.jsonl:2: a query needs an id"):
        read_queries(tmp_path / "bad.jsonl")
    (tmp_path / "dup.jsonl").write_text('{"_id": "q1", "text": "a"}\n{"_id": "q1", "text": "b"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"dup.jsonl:2: query 'q1' is given twice with different text"):
        read_queries(tmp_path / "dup.jsonl")


# ---------------------------------------------------------------------------------------------- pool
def test_pool_orders_like_trec_eval_and_unions_runs(tmp_path: Path) -> None:
    a = gainscope.Run.from_dict({"q1": {"d1": 1.0, "d2": 3.0, "d3": 3.0, "d4": 0.5}, "q2": {"x": 1.0}}, name="a")
    b = gainscope.Run.from_dict({"q1": {"d4": 9.0, "d1": 1.0}}, name="b")
    # a's q1 order: d3, d2 (tie on 3.0 broken by doc id descending), d1, d4
    assert pool_runs([a], 2) == [("q1", "d3"), ("q1", "d2"), ("q2", "x")]
    assert pool_runs([a, b], 2) == [("q1", "d3"), ("q1", "d2"), ("q1", "d4"), ("q1", "d1"), ("q2", "x")]
    with pytest.raises(PolicyError):
        pool_runs([a], 0)
    f = tmp_path / "pairs.txt"
    f.write_text("# pairs\nq1 d1\nq1 0 d2 1\nq1 d1\n", encoding="utf-8")
    assert read_pairs(f) == [("q1", "d1"), ("q1", "d2")]


def test_pairs_keep_a_hash_inside_an_id(tmp_path: Path) -> None:
    """The readers' comment rule (io.text.is_comment): '#' in the first column starts a comment line, a '#'
    anywhere else is data -- doc#1 is that document, not doc (issue 13, item 5)."""
    f = tmp_path / "pairs.txt"
    f.write_bytes("\ufeff# pairs, one per line\nq1 doc#1\nq#2 msmarco_v2.1_doc_00_0#0_1\n"
                  "q1 0 doc#3 2\nq1 Q0 doc#4 1 9.5 run#a\nq1 doc#5 1\n".encode())
    assert read_pairs(f) == [("q1", "doc#1"), ("q#2", "msmarco_v2.1_doc_00_0#0_1"), ("q1", "doc#3"),
                             ("q1", "doc#4"), ("q1", "doc#5")]


@pytest.mark.parametrize(("text", "message"), [
    # an indented '#' is data for the readers (a TREC file then fails its column check): here too, not a comment
    ("q1 d1\n   # note\n", r"pairs.txt:2: a line starting with '#' after spaces is not a comment"),
    # a trailing '# note' is data: 'q1 d1 # note' would otherwise read as the qrels line (q1, 0=d1, doc '#')
    ("q1 d1 # note\n", r"pairs.txt:1: .*column 4 \('note'\) is not a grade"),
    ("q1 Q0 d1 1 x run\n", r"pairs.txt:1: .*column 5 \('x'\) is not a score"),
    ("q1 d1 one\n", r"pairs.txt:1: .*column 3 \('one'\) is not a number"),
    ("q1 0 d1 1 5\n", r"pairs.txt:1: 5 columns"),
    ("q1\n", r"pairs.txt:1: expected 'query_id doc_id'"),
])
def test_pairs_lines_that_are_neither_pairs_nor_qrels_nor_runs(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "pairs.txt"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError, match=message):
        read_pairs(f)


# ---------------------------------------------------------------------------------------------- store
def key(q: str = "q1", d: str = "d1", judge: str = "j") -> PairKey:
    return PairKey(judge, q, "qh", d, "dh")


def test_store_records_labels_and_failures(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with JudgmentStore(path) as store:
        store.record(StoredLabel(key(), "llm", "ok", 3, reasoning="r", requests=1))
        store.record(StoredLabel(key(d="d2"), "llm", "failed", None, raw="nope", error="unusable", requests=3))
        with pytest.raises(ValueError, match="a grade exactly when"):
            store.record(StoredLabel(key(d="d3"), "llm", "failed", 0))
        assert store.import_human([("q1", "d9", 2)], assessor="nist") == 1
    with JudgmentStore(path) as store:  # reopened: everything is there
        assert store.get(key()).grade == 3
        failed = store.get(key(d="d2"))
        assert failed.status == "failed" and failed.grade is None and failed.raw == "nope"
        assert store.human_pairs() == {("q1", "d9")}
        assert {(j, st, n) for j, _, st, n in store.counts()} == {("j", "ok", 1), ("j", "failed", 1),
                                                                   ("human:nist", "ok", 1)}
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_claims_between_live_and_dead_owners(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    one, two = JudgmentStore(path), JudgmentStore(path)
    assert one.claim(key()) == one.claim(key()) == "claimed"  # its own claim again
    assert two.claim(key()) == "taken"  # a live owner holds it
    one.release(key())
    assert two.claim(key()) == "claimed"
    two.record(StoredLabel(key(), "llm", "ok", 1))
    assert one.claim(key()) == "done"  # recorded by the other since
    assert one.claim(key(d="d2")) == "claimed"
    one.close()  # closing releases
    assert two.claim(key(d="d2")) == "claimed"
    # a claim whose owner process died is stale at once
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    db = sqlite3.connect(path)
    db.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (*key(d="d3").values(), "gone", two.host, pid, 1e12))
    db.commit()
    assert two.claim(key(d="d3")) == "claimed"
    db.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (*key(d="d4").values(), "live", two.host, os.getpid(), 0.0))  # live, but the lease ran out
    db.commit()
    assert two.claim(key(d="d4")) == "claimed"
    two.close()


# ---------------------------------------------------------------------------------------------- labelling
@dataclass
class Done:
    text: str
    prompt_tokens: int | None = 100
    completion_tokens: int | None = 10


class ScriptedClient:
    """Answers from a script per document id: a list of texts (or exceptions) used in turn."""

    def __init__(self, script: dict[str, list[str | Exception]]) -> None:
        self.script = script
        self.calls: list[str] = []

    async def complete(self, model: str, messages: list[dict[str, str]], **kwargs: object) -> Done:
        doc = next(k for k in self.script if f"[{k}]" in messages[-1]["content"])
        self.calls.append(doc)
        step = self.script[doc].pop(0) if len(self.script[doc]) > 1 else self.script[doc][0]
        if isinstance(step, Exception):
            raise step
        return Done(step)


QUERIES = {"q1": Query("q1", "what is x")}
DOCS = {d: Document(d, f"[{d}] text of {d}") for d in ("good", "fenced", "retry", "bad", "down")}
PAIRS = [("q1", d) for d in DOCS]


def script() -> dict[str, list[str | Exception]]:
    return {"good": ['{"grade": 3}'], "fenced": ['```json\n{"grade": 1}\n```'],
            "retry": ["I think it is relevant", '{"grade": 9}', '{"grade": 2}'],
            "bad": ['{"grade": 7}'], "down": [JudgeRequestError("server gone", status=503, attempts=6)]}


def test_labels_failures_and_reuse(tmp_path: Path) -> None:
    spec = JudgeSpec("m", BUILTIN["graded"])
    client = ScriptedClient(script())
    judge = LLMJudge(spec, client, prices=Prices(1.0, 2.0))
    with JudgmentStore(tmp_path / "s.sqlite") as store:
        state, labels = asyncio.run(label_pairs(PAIRS, QUERIES, DOCS, judge=judge, store=store, workers=2))
        assert {d: lb.grade for (_, d), lb in labels.items()} == {"good": 3, "fenced": 1, "retry": 2}
        assert (state.judged, state.failed, state.cached) == (3, 2, 0)
        bad = store.get(judge.key(QUERIES["q1"], DOCS["bad"]))
        assert bad.status == "failed" and bad.grade is None and "outside the scale" in bad.error
        assert bad.raw == '{"grade": 7}' and bad.requests == 3
        down = store.get(judge.key(QUERIES["q1"], DOCS["down"]))
        assert down.grade is None and "request failed: server gone" in down.error
        # requests: 1 + 1 + 3 (retry) + 3 (bad) + 3 (down)
        assert state.requests == 11 and len(client.calls) == 11
        # cost from real usage: 8 answered requests of 100 in + 10 out at 1 and 2 per million
        assert state.cost == pytest.approx(8 * (100 * 1.0 + 10 * 2.0) / 1e6)
        # a second run asks nothing for the judged pairs and retries only the failures
        client2 = ScriptedClient({**script(), "bad": ['{"grade": 0}'], "down": ['{"grade": 1}']})
        state2, labels2 = asyncio.run(label_pairs(PAIRS, QUERIES, DOCS, judge=LLMJudge(spec, client2), store=store))
        assert sorted(client2.calls) == ["bad", "down"] and state2.cached == 3
        assert labels2[("q1", "bad")].grade == 0 and state2.failed == 0
        client3 = ScriptedClient(script())
        state3, _ = asyncio.run(label_pairs(PAIRS, QUERIES, DOCS, judge=LLMJudge(spec, client3), store=store))
        assert client3.calls == [] and state3.cached == 5


def test_budget_and_missing_texts_and_humans(tmp_path: Path) -> None:
    spec = JudgeSpec("m", BUILTIN["graded"])
    with JudgmentStore(tmp_path / "s.sqlite") as store:
        store.import_human([("q1", "good", 2)])
        client = ScriptedClient(script())
        pairs = [*PAIRS, ("q1", "unknown-doc")]
        state, _ = asyncio.run(label_pairs(pairs, QUERIES, DOCS, judge=LLMJudge(spec, client), store=store,
                                                budget=Budget(max_requests=2), workers=1))
        assert state.human == 1 and state.missing_text == 1 and state.missing == [("q1", "unknown-doc")]
        assert state.requests == 2 and len(client.calls) == 2 and "2 requests" in state.budget_note
        assert state.not_judged == state.total - state.done
        with pytest.raises(PolicyError, match="needs prices"):
            asyncio.run(label_pairs(PAIRS, QUERIES, DOCS, judge=LLMJudge(spec, client), store=store,
                                    budget=Budget(max_cost=1)))
        # a cost budget stops before a request that could exceed it (reserve: 100 chars / 4 + 300 tokens)
        cheap = LLMJudge(spec, ScriptedClient(script()), prices=Prices(1000.0, 1000.0))
        state, _ = asyncio.run(label_pairs(PAIRS, QUERIES, DOCS, judge=cheap, store=store, budget=Budget(max_cost=0.2),
                                           skip_human=False))
        assert state.cost <= 0.2 and state.not_judged > 0


def test_price_table(tmp_path: Path) -> None:
    table = tmp_path / "prices.json"
    table.write_text('{"m": {"input": 2.5, "output": 10}}', encoding="utf-8")
    prices = Prices.from_table(table, "m")
    assert prices.cost(1000, 100) == pytest.approx((1000 * 2.5 + 100 * 10) / 1e6)
    assert prices.cost(1000, None) is None  # no usage reported: no cost, never an estimate
    with pytest.raises(InputError, match="no prices for model 'x'; the table has: m"):
        Prices.from_table(table, "x")
    table.write_text("{nope", encoding="utf-8")
    with pytest.raises(InputError, match="cannot read the price table"):
        Prices.from_table(table, "m")



def test_a_budget_or_price_that_is_not_a_finite_number_is_refused(tmp_path: Path) -> None:
    """A NaN cost budget or price (json reads the literal NaN) compared False with every cost: the spending never
    stopped. Python's json reads ``NaN`` and ``Infinity`` in a price table."""
    table = tmp_path / "prices.json"
    table.write_text('{"m": {"input": NaN, "output": 10}}', encoding="utf-8")
    with pytest.raises(PolicyError, match=r"^prices must be finite numbers >= 0 \(per million tokens\); got nan$"):
        Prices.from_table(table, "m")
    with pytest.raises(PolicyError, match=r"got inf$"):
        Prices(1.0, float("inf"))
    with pytest.raises(PolicyError, match=r"^max_cost=\.\.\. must be a finite number >= 0; got nan$"):
        Budget(max_cost=float("nan"))
    with pytest.raises(PolicyError, match=r"^max_requests=\.\.\. must be an integer >= 1; got 0$"):
        Budget(max_requests=0)
    assert Budget(max_cost=0).max_cost == 0  # nothing may be spent: every priced request is refused


# ---------------------------------------------------------------------------------------------- review fixes
def test_stricter_answers() -> None:
    with pytest.raises(JudgeAnswerError, match="not an integer"):
        parse_answer('{"grade": "\\uff13"}', SCALE)  # a full-width 3
    with pytest.raises(JudgeAnswerError, match="two different grades"):
        parse_answer('{"grade": 2, "score": 4}', SCALE)
    assert parse_answer('{"grade": 2, "score": 2}', SCALE) == (2, "")
    assert parse_answer('{"grade": 1, "reasoning": null}', SCALE) == (1, "")


def test_hash_ignores_float_spelling_and_template_file_names(tmp_path: Path) -> None:
    assert JudgeSpec("m", BUILTIN["graded"], temperature=0).hash == JudgeSpec("m", BUILTIN["graded"]).hash
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    for f in (a, b):
        f.write_text("Q: {query}\nD: {document}\n", encoding="utf-8")
    assert JudgeSpec("m", template_from_file(a, SCALE)).hash == JudgeSpec("m", template_from_file(b, SCALE)).hash


def test_a_grade_is_never_replaced_by_a_failure(tmp_path: Path) -> None:
    with JudgmentStore(tmp_path / "s.sqlite", lease=10) as store:
        assert store.record(StoredLabel(key(), "llm", "ok", 2))
        assert not store.record(StoredLabel(key(), "llm", "failed", None, error="late"))
        assert store.get(key()).grade == 2
        assert store.claim(key(d="d2")) == "claimed"
        before = sqlite3.connect(tmp_path / "s.sqlite").execute("SELECT expires FROM claims").fetchone()[0]
        store.renew(key(d="d2"))
        after = sqlite3.connect(tmp_path / "s.sqlite").execute("SELECT expires FROM claims").fetchone()[0]
        assert after >= before


def test_missing_usage_is_charged_and_unpriced_runs_count_nothing(tmp_path: Path) -> None:
    spec = JudgeSpec("m", BUILTIN["graded"], max_tokens=100)

    class NoUsage(ScriptedClient):
        async def complete(self, model: str, messages: list[dict[str, str]], **kwargs: object) -> Done:
            done = await super().complete(model, messages, **kwargs)
            return Done(done.text, None, None)

    with JudgmentStore(tmp_path / "s.sqlite") as store:
        judge = LLMJudge(spec, NoUsage({d: ['{"grade": 1}'] for d in DOCS}), prices=Prices(100.0, 100.0))
        state, _ = asyncio.run(label_pairs(PAIRS, QUERIES, DOCS, judge=judge, store=store,
                                           budget=Budget(max_cost=0.3), workers=1))
        # each call is charged its upper bound (UTF-8 bytes of the messages + 8 each, plus 100 completion tokens)
        # about 0.084 a call: three fit in 0.3, the fourth would not
        assert state.unpriced == state.requests == 3 and 0.25 < state.cost <= 0.3 and state.not_judged == 2
        label = next(iter(store.labels(spec.hash)))
        assert label.prompt_tokens is None and label.cost is None
    with JudgmentStore(tmp_path / "t.sqlite") as store:
        state, _ = asyncio.run(label_pairs(PAIRS, QUERIES, DOCS, judge=LLMJudge(spec, NoUsage(
            {d: ['{"grade": 1}'] for d in DOCS})), store=store))
        assert state.unpriced == 0 and state.cost == 0.0


def test_a_fatal_client_error_stops_the_run(tmp_path: Path) -> None:
    class Refused(JudgeRequestError):
        fatal = True

    calls: list[str] = []

    class Broken(ScriptedClient):
        async def complete(self, model: str, messages: list[dict[str, str]], **kwargs: object) -> Done:
            calls.append("x")
            raise Refused("401 unauthorized: fix the key", status=401, attempts=1)

    with JudgmentStore(tmp_path / "s.sqlite") as store:
        state, labels = asyncio.run(label_pairs(PAIRS, QUERIES, DOCS, judge=LLMJudge(
            JudgeSpec("m", BUILTIN["graded"]), Broken({})), store=store, workers=1))
        assert "fix the key" in state.fatal and labels == {} and len(calls) == 1
        assert state.ungraded == len(PAIRS) and list(store.labels()) == []


def test_pairs_claimed_by_another_process_are_waited_for(tmp_path: Path) -> None:
    spec = JudgeSpec("m", BUILTIN["graded"])
    path = tmp_path / "s.sqlite"
    other = JudgmentStore(path)
    judge = LLMJudge(spec, ScriptedClient(script()))
    held = judge.key(QUERIES["q1"], DOCS["good"])
    assert other.claim(held) == "claimed"

    async def run() -> tuple[object, dict[tuple[str, str], StoredLabel]]:
        async def other_finishes() -> None:
            await asyncio.sleep(0.6)
            other.record(StoredLabel(held, "llm", "ok", 4))

        with JudgmentStore(path) as store:
            finishing = asyncio.create_task(other_finishes())
            result = await label_pairs(PAIRS, QUERIES, DOCS, judge=judge, store=store, workers=2)
            await finishing
            return result

    state, labels = asyncio.run(run())
    other.close()
    assert labels[("q1", "good")].grade == 4  # the other process's grade, not asked again here
    assert "good" not in judge.client.calls and state.elsewhere == 0 and state.cached == 1
