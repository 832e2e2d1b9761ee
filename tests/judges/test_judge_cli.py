"""`gainscope judge` end to end against the fake chat-completions server on 127.0.0.1: labels, reuse with zero
requests, faults that must never become a grade, exit codes, kill -9 and resume, two processes on one store."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.chat_server import FakeChatServer, Reply, user_text

N_QUERIES, N_DOCS = 4, 6


def grade_of(q: int, d: int) -> int:
    return (q + d) % 5


@pytest.fixture
def data(tmp_path: Path) -> dict[str, Path]:
    """4 queries x 6 documents; document text carries the grade the server gives ("grade=N") and its id."""
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps({"query_id": f"q{q}", "text": f"query number {q}"}) + "\n"
                               for q in range(N_QUERIES)), encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"doc_id": f"q{q}d{d}", "title": f"T{d}",
                                          "text": f"[q{q}d{d}] body grade={grade_of(q, d)}"}) + "\n"
                              for q in range(N_QUERIES) for d in range(N_DOCS)), encoding="utf-8")
    run_a, run_b = tmp_path / "a.run", tmp_path / "b.run"
    run_a.write_text("".join(f"q{q} Q0 q{q}d{d} {d + 1} {10 - d} a\n" for q in range(N_QUERIES)
                             for d in range(N_DOCS)), encoding="utf-8")
    run_b.write_text("".join(f"q{q} Q0 q{q}d{d} {N_DOCS - d} {d} b\n" for q in range(N_QUERIES)
                             for d in range(N_DOCS)), encoding="utf-8")
    return {"queries": queries, "corpus": corpus, "a": run_a, "b": run_b, "dir": tmp_path,
            "store": tmp_path / "store.sqlite", "qrels": tmp_path / "llm.qrels", "jsonl": tmp_path / "labels.jsonl"}


def judge_args(data: dict[str, Path], server: FakeChatServer, *extra: str, model: str = "fake-1") -> list[str]:
    return ["judge", "--queries", str(data["queries"]), "--corpus", str(data["corpus"]), "--run", str(data["a"]),
            "--run", str(data["b"]), "--pool-depth", "2", "--base-url", server.url, "--model", model,
            "--store", str(data["store"]), "--output", str(data["qrels"]), "--jsonl", str(data["jsonl"]),
            "--max-attempts", "4", *extra]


def doc_of(body: dict) -> str:
    """The document id a request is about (its text starts with "[id]")."""
    return re.search(r"\[(q\d+d\d+)\]", user_text(body)).group(1)


def qrels(path: Path) -> dict[tuple[str, str], int]:
    return {(q, d): int(g) for q, _, d, g in (line.split() for line in path.read_text().splitlines())}


# pooled at depth 2: run a's top 2 are d0, d1 and run b's are d5, d4 -> 4 docs per query, 16 pairs
POOL = {(f"q{q}", f"q{q}d{d}") for q in range(N_QUERIES) for d in (0, 1, 4, 5)}


def test_labels_then_a_rerun_sends_nothing(cli_runner, chat_server: FakeChatServer, data) -> None:
    code, out, err = cli_runner(*judge_args(data, chat_server, "--price-in", "2", "--price-out", "8"))
    assert code == 0, err
    got = qrels(data["qrels"])
    assert set(got) == POOL
    assert all(got[(q, d)] == grade_of(int(q[1:]), int(d.split("d")[1])) for q, d in got)
    assert chat_server.count() == 16
    assert "16 judged now, 0 from the store" in out and "cost 0.00" in out
    lines = [json.loads(x) for x in data["jsonl"].read_text().splitlines()]
    assert len(lines) == 16 and {x["status"] for x in lines} == {"ok"} and lines[0]["model"] == "fake-1"
    assert all(x["prompt_tokens"] > 0 and x["judge"] == lines[0]["judge"] for x in lines)
    # the same command again: everything from the store, no request
    code, out, _ = cli_runner(*judge_args(data, chat_server))
    assert code == 0 and chat_server.count() == 16 and "0 judged now, 16 from the store" in out
    assert qrels(data["qrels"]) == got
    # another model is another judge: asks again
    code, out, _ = cli_runner(*judge_args(data, chat_server, model="fake-2"))
    assert code == 0 and chat_server.count() == 32


def test_faults_are_retried_and_failures_never_become_grades(cli_runner, chat_server: FakeChatServer,
                                                             data) -> None:
    plan = {"q0d0": ["429"], "q0d1": ["500", "503"], "q0d4": ["drop"], "q0d5": ["fenced"],
            "q1d0": ["malformed"], "q1d1": ["out_of_range"] * 10, "q1d4": ["missing_grade"] * 10}

    def behaviour(body: dict, attempt: int) -> Reply:
        steps = plan.get(doc_of(body), [])
        if attempt <= len(steps):
            kind = steps[attempt - 1]
            return Reply(kind, retry_after=0.2) if kind == "429" else Reply(kind)
        return Reply("ok")

    chat_server.behaviour = behaviour
    code, out, err = cli_runner(*judge_args(data, chat_server))
    assert code == 4, out
    assert "2 of 16 pairs have no grade" in err
    got = qrels(data["qrels"])
    assert set(got) == POOL - {("q1", "q1d1"), ("q1", "q1d4")}  # the two failures are not in the qrels
    assert got[("q0", "q0d5")] == grade_of(0, 5) and got[("q1", "q1d0")] == grade_of(1, 0)
    failed = [json.loads(x) for x in data["jsonl"].read_text().splitlines() if '"failed"' in x]
    assert {f["doc_id"] for f in failed} == {"q1d1", "q1d4"}
    assert all(f["grade"] is None and f["raw"] and f["requests"] == 3 for f in failed)
    assert "outside the scale" in next(f["error"] for f in failed if f["doc_id"] == "q1d1")
    # 429 waited at least its Retry-After
    times = [r.time for r in chat_server.requests if doc_of(r.body) == "q0d0"]
    assert times[1] - times[0] >= 0.2
    # a threshold lets the run pass, and the failures are asked again (the server now answers)
    plan.clear()
    code, out, _ = cli_runner(*judge_args(data, chat_server, "--max-failures", "2"))
    assert code == 0 and "2 judged now, 14 from the store" in out


def test_budget_and_usage_errors(cli_runner, chat_server: FakeChatServer, data) -> None:
    code, out, err = cli_runner(*judge_args(data, chat_server, "--max-requests", "5", "--max-failures", "100%"))
    assert code == 0 and chat_server.count() == 5 and "not judged (budget or stop)" in out and "budget of 5" in out
    code, _, err = cli_runner(*judge_args(data, chat_server, "--max-cost", "1"))
    assert code == 2 and "needs prices" in err
    # a NaN budget never stopped the spending (NaN compares false with every cost): refused as the option's value
    code, _, err = cli_runner(*judge_args(data, chat_server, "--max-cost", "nan", "--price-in", "1",
                                          "--price-out", "1"))
    assert code == 2 and "Invalid value for '--max-cost': 'nan' is not a finite number" in err
    assert chat_server.count() == 5  # nothing more was sent
    code, _, err = cli_runner("judge", "--queries", str(data["queries"]), "--corpus", str(data["corpus"]),
                              "--model", "m", "--base-url", chat_server.url)
    assert code == 2 and "--run RUN" in err


def test_server_down_exits_4(cli_runner, data) -> None:
    with FakeChatServer() as server:
        url = server.url
    code, out, _ = cli_runner("judge", "--queries", str(data["queries"]), "--corpus", str(data["corpus"]),
                              "--run", str(data["a"]), "--pool-depth", "1", "--base-url", url, "--model", "m",
                              "--store", str(data["store"]), "--max-attempts", "2", "--answer-attempts", "1")
    assert code == 4
    assert "4 failed" in out and "request failed" in out


def _judge_process(data: dict[str, Path], url: str, *extra: str) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "gainscope", *judge_args(data, type("S", (), {"url": url})(), *extra)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONWARNINGS": "ignore"})


def _stored(store: Path) -> set[str]:
    """Doc ids with a successful label in the store (none while the judge process is still creating it)."""
    if not store.exists():
        return set()
    db = sqlite3.connect(store)
    try:
        return {d for (d,) in db.execute("SELECT doc_id FROM labels WHERE status = 'ok'")}
    except sqlite3.OperationalError:  # the schema is not written yet
        return set()
    finally:
        db.close()


@pytest.mark.slow
def test_kill_minus_nine_then_resume_loses_nothing_and_pays_once(data) -> None:
    with FakeChatServer() as server:
        server.behaviour = lambda body, attempt: Reply("slow", delay=0.15)
        proc = _judge_process(data, server.url, "--concurrency", "2")
        deadline = time.monotonic() + 30
        while len(_stored(data["store"])) < 6 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()  # reaped (a zombie would still look alive) and its pipes closed
        killed_at = time.monotonic()
        before = _stored(data["store"])
        assert 6 <= len(before) < 16
        server.behaviour = lambda body, attempt: Reply("ok")
        done = _judge_process(data, server.url, "--concurrency", "2")
        out, err = done.communicate(timeout=60)
        assert done.returncode == 0, err
        assert f"{16 - len(before)} judged now, {len(before)} from the store" in out
        assert set(qrels(data["qrels"])) == POOL
        # nothing recorded before the kill was asked again
        # a request the kill cut off before its body was whole was never answered: it has no body
        sent = [r for r in server.requests if r.body is not None]
        after = [doc_of(r.body) for r in sent if r.time > killed_at]
        assert not set(after) & before
        # every pair answered once, except at most the two in flight when the process died
        answered = [doc_of(r.body) for r in sent]
        repeated = {d for d in answered if answered.count(d) > 1}
        assert len(repeated) <= 2 and not repeated & before


@pytest.mark.slow
def test_two_processes_share_one_store_without_paying_twice(data) -> None:
    with FakeChatServer() as server:
        server.behaviour = lambda body, attempt: Reply("slow", delay=0.05)
        procs = [_judge_process(data, server.url, "--concurrency", "2") for _ in range(2)]
        outs = [p.communicate(timeout=60) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outs
        answered = [doc_of(r.body) for r in server.requests]
        assert sorted(answered) == sorted(d for _, d in POOL)  # each pair asked exactly once
        assert _stored(data["store"]) == {d for _, d in POOL}
        judged = [int(re.search(r"(\d+) judged now", o).group(1)) for o, _ in outs]
        assert sum(judged) == 16


def test_a_changed_text_is_judged_again_and_exports_hold_the_new_label(cli_runner, chat_server: FakeChatServer,
                                                                        data) -> None:
    assert cli_runner(*judge_args(data, chat_server))[0] == 0
    corpus = data["corpus"].read_text().replace("[q0d0] body grade=0", "[q0d0] new body grade=3")
    data["corpus"].write_text(corpus, encoding="utf-8")
    code, out, _ = cli_runner(*judge_args(data, chat_server))
    assert code == 0 and "1 judged now, 15 from the store" in out
    assert qrels(data["qrels"])[("q0", "q0d0")] == 3
    lines = [json.loads(x) for x in data["jsonl"].read_text().splitlines()]
    assert len(lines) == 16 and [x["grade"] for x in lines if x["doc_id"] == "q0d0"] == [3]
    judge = lines[0]["judge"]
    code, exported, _ = cli_runner("store", "export", str(data["store"]), "--judge", judge)
    rows = [x.split() for x in exported.splitlines()]
    assert code == 0 and len(rows) == 16 and ["q0", "0", "q0d0", "3"] in rows  # the latest label only


def test_params_and_omitted_fields_reach_the_server(cli_runner, chat_server: FakeChatServer, data) -> None:
    code, _, err = cli_runner(*judge_args(data, chat_server, "--param", 'reasoning_effort="low"', "--param",
                                          "top_p=0.5", "--omit", "temperature", "--omit", "max_tokens"))
    assert code == 0, err
    body = chat_server.requests[0].body
    assert body["reasoning_effort"] == "low" and body["top_p"] == 0.5
    assert "temperature" not in body and "max_tokens" not in body


def test_budget_stops_are_reported_and_fail_the_threshold(cli_runner, chat_server: FakeChatServer, data) -> None:
    code, _, err = cli_runner(*judge_args(data, chat_server, "--max-requests", "5"))
    assert code == 4 and "11 of 16 pairs have no grade" in err and "not judged 11" in err


def test_pairs_with_a_hash_in_a_doc_id_are_judged_as_written(cli_runner, chat_server: FakeChatServer,
                                                             tmp_path: Path) -> None:
    """Issue 13, item 5: `--pairs` used to cut lines at any '#', so 'doc#1' was judged as 'doc' (here: a pair
    without text, exit 4); the readers' rule keeps '#' inside an id."""
    (tmp_path / "q.jsonl").write_text('{"query_id": "q1", "text": "a question"}\n', encoding="utf-8")
    (tmp_path / "c.jsonl").write_text('{"doc_id": "doc", "text": "[doc] grade=0"}\n'
                                      '{"doc_id": "doc#1", "text": "[doc#1] grade=3"}\n', encoding="utf-8")
    (tmp_path / "pairs.txt").write_text("# one pair\nq1 doc#1\n", encoding="utf-8")
    out_qrels = tmp_path / "llm.qrels"
    code, out, err = cli_runner("judge", "--queries", str(tmp_path / "q.jsonl"), "--corpus", str(tmp_path / "c.jsonl"),
                                "--pairs", str(tmp_path / "pairs.txt"), "--base-url", chat_server.url, "--model", "m",
                                "--store", str(tmp_path / "s.sqlite"), "--output", str(out_qrels))
    assert code == 0, out + err
    assert out_qrels.read_text() == "q1 0 doc#1 3\n"
    assert chat_server.count() == 1 and "[doc#1]" in user_text(chat_server.requests[0].body)


def test_an_output_that_cannot_be_written_is_named_and_the_labels_stay_in_the_store(
        cli_runner, chat_server: FakeChatServer, data) -> None:
    """--output and --jsonl on a full disk: exit 4 naming the file and what to do (issue 13 review); the labels
    are in the store, so the same command with another path sends nothing."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    full = ("error: cannot write /dev/full: No space left on device; free disk space (or raise the quota or file "
            "size limit), or write to another disk")
    code, _, err = cli_runner(*judge_args(data, chat_server, "--output", "/dev/full"))
    assert (code, err.splitlines()[-1]) == (4, full)
    code, _, err = cli_runner(*judge_args(data, chat_server, "--jsonl", "/dev/full"))
    assert (code, err.splitlines()[-1]) == (4, full)
    code, out, _ = cli_runner(*judge_args(data, chat_server))
    assert code == 0 and chat_server.count() == 16 and "0 judged now, 16 from the store" in out
