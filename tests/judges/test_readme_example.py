"""The README's LLM-judge section run as written (issue 13, item 17): its commands are read from README.md and
run in order, in a folder holding the files they name, against the fake chat server (its address replacing the
README's). The agreement example used to fail: `judge --human` skips the pairs humans judged, so the LLM qrels
and the human qrels had no pair in common, and `agreement` then blamed the ids."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from tests.chat_server import FakeChatServer

README = Path(__file__).resolve().parents[2] / "README.md"
README_URL = "http://localhost:8000/v1"
N_QUERIES, N_DOCS = 4, 16


def readme_commands(section: str) -> list[list[str]]:
    """The ``gainscope`` commands of the bash blocks of one README section (``## section`` up to the next
    ``## ``), continuation lines joined, as argument lists without the leading ``gainscope``."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {section}\n")
    end = text.find("\n## ", start + 1)
    body = text[start: end if end > 0 else len(text)]
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", body, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if line.startswith("gainscope "):
                commands.append(shlex.split(line, comments=True)[1:])
    return commands


def human_grade(q: int, d: int) -> int:
    return (q * 7 + d * 3) % 4


def llm_grade(q: int, d: int) -> int:
    """The fake server's answer: the human grade, off by one on every fifth document."""
    g = human_grade(q, d)
    return min(3, g + 1) if d % 5 == 0 else g


@pytest.fixture
def example_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """queries.jsonl, corpus.jsonl, bm25/dense/hybrid runs and nist.qrels (the even documents) in the cwd."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "queries.jsonl").write_text("".join(json.dumps({"query_id": f"q{q}", "text": f"question {q}"}) + "\n"
                                                    for q in range(N_QUERIES)), encoding="utf-8")
    (tmp_path / "corpus.jsonl").write_text("".join(
        json.dumps({"doc_id": f"q{q}d{d}", "text": f"document {d} grade={llm_grade(q, d)}"}) + "\n"
        for q in range(N_QUERIES) for d in range(N_DOCS)), encoding="utf-8")
    for step, name in ((3, "bm25"), (5, "dense"), (7, "hybrid")):
        order = [(d * step + 1) % N_DOCS for d in range(N_DOCS)]  # a permutation: step is prime to 16
        (tmp_path / f"{name}.run").write_text("".join(f"q{q} Q0 q{q}d{d} {r + 1} {N_DOCS - r} {name}\n"
                                                      for q in range(N_QUERIES) for r, d in enumerate(order)),
                                              encoding="utf-8")
    (tmp_path / "nist.qrels").write_text("".join(f"q{q} 0 q{q}d{d} {human_grade(q, d)}\n" for q in range(N_QUERIES)
                                                 for d in range(0, N_DOCS, 2)), encoding="utf-8")
    return tmp_path


def test_the_judge_and_agreement_examples_work_as_written(cli_runner, chat_server: FakeChatServer,
                                                          example_files: Path) -> None:
    commands = readme_commands("Label with an LLM judge")
    assert [c[0] for c in commands] == ["judge", "judge", "agreement"]
    outputs = []
    for args in commands:
        code, out, err = cli_runner(*[a.replace(README_URL, chat_server.url) for a in args])
        assert code == 0, (args, out, err)
        outputs.append((out, err))
    # the first example fills the holes of the human pool: the human pairs are skipped, and the summary says so
    first = outputs[0][0]
    pooled_human = re.search(r"(\d+) judged by humans \(skipped\)", first)
    assert pooled_human and int(pooled_human.group(1)) > 0
    assert (f"note      the {pooled_human.group(1)} pairs judged by humans were not sent to the model and are not "
            "in llm.qrels; to compare the judge with the humans (gainscope agreement), judge them too: "
            "--judge-human-pairs") in first
    # the agreement example labels the human pairs, and compares every one of them
    n_human = N_QUERIES * N_DOCS // 2
    assert f"{n_human} judged now, 0 from the store, 0 judged by humans (skipped)" in outputs[1][0]
    report = outputs[2][0]
    assert f"pairs judged in both: {n_human} (100.0% of human's {n_human}, 100.0% of LLM's {n_human})" in report
    assert "systems by nDCG@10:" in report and "systems by AP:" in report
    # of the 32 human pairs (even documents), d0 and d10 get grade + 1 unless the human grade is 3 already:
    # d0 of q0..q3 has human grades 0, 3, 2, 1 and d10 has 2, 1, 0, 3, so 6 pairs differ: 26 / 32 = 0.8125
    assert re.search(r"observed agreement\s+│ 0\.8125", report)


def test_agreement_names_the_real_cause_when_the_llm_labels_skipped_the_human_pairs(
        cli_runner, chat_server: FakeChatServer, example_files: Path) -> None:
    first = readme_commands("Label with an LLM judge")[0]  # judge ... --human nist.qrels --output llm.qrels
    assert "--human" in first and "--judge-human-pairs" not in first
    assert cli_runner(*[a.replace(README_URL, chat_server.url) for a in first])[0] == 0
    code, _, err = cli_runner("agreement", "nist.qrels", "llm.qrels")
    assert code == 3
    assert err.startswith("error: no (query, doc) pair is judged in both label sets: they share 4 queries, but "
                          "within them not one document (32 human and ")
    assert err.endswith("Agreement compares labels of the same pairs. `gainscope judge` skips the pairs humans "
                        "judged (its --human labels and the human labels in its store) unless given "
                        "--judge-human-pairs: to compare with the humans, judge their pairs, e.g. `gainscope judge "
                        "--pairs HUMAN_QRELS --judge-human-pairs ...`. Else check that document ids are spelled the "
                        "same in both\n")
    assert "query q0: human judged q0d0, q0d10, q0d12, q0d14, q0d2, ... (3 more), LLM judged q0d" in err


def test_a_judge_run_that_skips_every_pair_says_so(cli_runner, chat_server: FakeChatServer,
                                                   example_files: Path) -> None:
    code, out, err = cli_runner("judge", "--queries", "queries.jsonl", "--corpus", "corpus.jsonl", "--pairs",
                                "nist.qrels", "--human", "nist.qrels", "--base-url", chat_server.url, "--model", "m",
                                "--output", "llm.qrels")
    assert code == 0 and chat_server.count() == 0 and "32: 0 judged now, 0 from the store, 32 judged by humans" in out
    assert err == ("warning: every pair was judged by humans, so none was sent to the model and llm.qrels is empty; "
                   "add --judge-human-pairs to judge them too\n")
    assert (example_files / "llm.qrels").read_text() == ""
