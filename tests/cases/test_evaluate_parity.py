"""Issue 14, item 2, end to end on the command line: ``gainscope case export CASE --qrels Q --run R`` prints a
``gainscope evaluate`` command line, and that command gives, query by query, what ``gainscope case score CASE
--scorer NAME`` gives, for every built-in scorer (and its other spellings), on a graded case and a 1-10 case with
decimal ratings, unrated returned documents, rated documents not returned, a zero-result query and an unrated
query.

How values compare: a query score ``case score`` gives as a number equals evaluate's value for it; a query
``case score`` gives no number (zsr / -- for a null, undefined for NaN) is undefined in evaluate, which prints 0
for it (``--undefined zero``, Quepid's ``score || 0``); nDCG, NDCG_CUT and P give 0 where their metric is
undefined, as Quepid's scripts do, and so does evaluate. The query without ratings is not in the qrels: evaluate
leaves it out (the command's note says so), case score gives it Quepid's number.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

GRADED = {"scale": "graded", "queries": [
    # decimals (2.5, 1.5: kept in the ranking, 2 and 1 in the ideal), an unrated result (u2), a rated document
    # not returned (x)
    {"query": "star wars", "ratings": {"a": 3, "b": 2.5, "c": 0, "d": 1.5, "x": 2},
     "results": ["a", "u2", "b", "c", "d", "e"]},
    # 0.5 > 0 is relevant in the ranking but 0 in the judged pool: Quepid's AP divides 2 hits by R = 1
    {"query": "tiny", "ratings": {"p": 0.5, "r": 1.5, "s": 0}, "results": ["p", "s", "r"]},
    # only 0 ratings: every ideal is 0 (nDCG 0 in Quepid), AP 0 / 0
    {"query": "zeros", "ratings": {"z1": 0, "z2": 0}, "results": ["z1", "u", "z2"]},
    {"query": "long", "ratings": {f"l{i}": g for i, g in enumerate([3, 2, 2.5, 1, 0, 3, 1.5, 2, 0, 1, 3, 2])},
     "results": [f"l{i}" for i in (11, 0, 3, 5, 20, 7, 1, 9, 2, 8, 4, 6)]},
    {"query": "nothing found", "ratings": {"n1": 2, "n2": 1}, "results": []},
    {"query": "no ratings", "ratings": {}, "results": ["w1", "w2"]},
    # zero results and nothing relevant: AP 0 / 0 in Quepid (NaN), not the 0 of a missing query
    {"query": "empty zero", "ratings": {"y": 0}, "results": []},
]}

LEGACY = {"scale": "1-10", "queries": [
    {"query": "blog", "ratings": {"d1": 10, "d2": 8, "d3": 9, "d5": 5, "d6": 1, "d7": 4},
     "results": ["d1", "d2", "d3", "u4", "d5", "d6", "d7", "u8", "u9", "u10"]},
    {"query": "decimals", "ratings": {"a": 7.5, "b": 9.9, "c": 1.2, "x": 10}, "results": ["b", "a", "u", "c"]},
    {"query": "missed", "ratings": {"m1": 9, "m2": 8, "m3": 1}, "results": ["m3", "v1", "v2"]},
    {"query": "swap", "ratings": {"s1": 2, "s2": 3, "s3": 1}, "results": ["s1", "s2", "s3"]},
    {"query": "nothing found", "ratings": {"n1": 6}, "results": []},
    {"query": "no ratings", "ratings": {}, "results": ["w1"]},
]}

GRADED_SCORERS = ["CG@10", "DCG@10", "nDCG@10", "NDCG_CUT@10", "P@10", "AP@10", "RR@10", "ERR@10", "nDCG@3",
                  "NDCG_CUT@2", "P@3", "AP@2", "ERR@1"]
LEGACY_SCORERS = ["avgRating100@10", "editDistanceFromBest@10", "editDistanceFromBest(distance=levenshtein)@10",
                  "default@10", "v1@10", "default(distance=levenshtein)@5", "blogNDCG@10", "blogNDCG@3",
                  "avgRating100@3"]


def _case(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "case.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _export_command(cli_runner, case: Path, scorer: str, tmp_path: Path) -> tuple[list[str], str]:
    qrels, run = tmp_path / "case.qrels", tmp_path / "case.run"
    code, out, err = cli_runner("case", "export", str(case), "--qrels", str(qrels), "--run", str(run),
                                "--scorer", scorer)
    assert code == 0, err
    line = out.strip()
    assert "\n" not in line and line.startswith("gainscope evaluate ")
    return shlex.split(line)[1:], err


@pytest.mark.parametrize(("data", "scorers"), [(GRADED, GRADED_SCORERS), (LEGACY, LEGACY_SCORERS)],
                         ids=["graded", "legacy"])
def test_evaluate_on_the_export_gives_case_score_query_by_query(cli_runner, tmp_path, data, scorers) -> None:
    case = _case(tmp_path, data)
    ids = {q["query"]: q["query"].replace(" ", "_") for q in data["queries"]}
    rated = [q["query"] for q in data["queries"] if q["ratings"]]
    for scorer in scorers:
        command, notes = _export_command(cli_runner, case, scorer, tmp_path)
        code, out, err = cli_runner(*command, "--format", "json")
        assert code == 0, err
        evaluated = json.loads(out)
        (metric,) = evaluated["metrics"]
        per_query = {q: values[metric] for q, values in evaluated["per_query"].items()}
        code, out, err = cli_runner("case", "score", str(case), "--scorer", scorer, "--format", "json")
        assert code == 0, err
        scored = {q["query"]: q for q in json.loads(out)["queries"]}
        assert set(per_query) == {ids[q] for q in rated}  # the query without ratings is not in the qrels
        assert "evaluate leaves out the 1 query without ratings (not in the qrels)" in notes
        # --undefined skip shows which values are undefined (null in the JSON)
        code, out, err = cli_runner(*command, "--format", "json", "--undefined", "skip")
        assert code == 0, err
        skipped = {q: values[metric] for q, values in json.loads(out)["per_query"].items()}
        for query in rated:
            got, want, bare = per_query[ids[query]], scored[query], skipped[ids[query]]
            where = f"{scorer} on {query!r}: evaluate {got} ({bare} with --undefined skip), case score {want}"
            if want["score"] is None:  # no number (null, NaN): undefined in evaluate, printed as 0
                assert want["status"] in ("zsr", "undefined") and got == 0.0 and bare is None, where
            else:
                assert got == pytest.approx(want["raw"], rel=1e-12, abs=1e-12), where
                # undefined in evaluate only where Quepid's script gives 0 (nDCG, NDCG_CUT, P)
                assert bare is not None or (want["raw"] == 0.0 and scorer.split("@")[0] in ("nDCG", "NDCG_CUT", "P")), \
                    where


def test_the_printed_command_carries_what_trec_files_cannot(cli_runner, tmp_path) -> None:
    case = _case(tmp_path, LEGACY)
    command, notes = _export_command(cli_runner, case, "default@10", tmp_path)
    # the top of the 1-10 scale for avgRating100's 100 / max, decimal ratings, Quepid's conventions, per query
    assert command == ["evaluate", str(tmp_path / "case.qrels"), str(tmp_path / "case.run"), "-m", "default@10",
                       "--profile", "quepid", "-q", "--max-grade", "10", "--float-grades"]
    assert notes.splitlines() == [
        "note: evaluate leaves out the 1 query without ratings (not in the qrels), which case score scores as Quepid "
        "does: no ratings",
        "note: query ids in the TREC files: the query's id, else its text with spaces as _ ('nothing found' is "
        "nothing_found, 'no ratings' is no_ratings)",
        "note: case score's mean follows Quepid's rules (a null score is zsr or -- and left out, negative scores "
        "become 0, --unscored, --undefined); evaluate's is the mean of every query's value"]
    # a metric that does not divide by the scale needs no --max-grade; integer ratings need no --float-grades
    (tmp_path / "int.json").write_text(json.dumps({"queries": [{"query": "q", "ratings": {"a": 1}, "results": ["a"]}],
                                                   "scorer": "NDCG_CUT@5"}))
    code, out, err = cli_runner("case", "export", str(tmp_path / "int.json"), "--qrels", str(tmp_path / "q"),
                                "--run", str(tmp_path / "r"))
    assert code == 0
    assert out == f"gainscope evaluate {tmp_path / 'q'} {tmp_path / 'r'} -m NDCG_CUT@5 --profile quepid -q\n"
    assert err == ("note: case score's mean follows Quepid's rules (a null score is zsr or -- and left out, negative "
                   "scores become 0, --unscored, --undefined); evaluate's is the mean of every query's value\n")


def test_export_without_a_builtin_scorer_prints_no_command(cli_runner, tmp_path) -> None:
    (tmp_path / "c.json").write_text(json.dumps({"queries": [{"query": "q", "ratings": {"a": 1}, "results": ["a"]}]}))
    args = ("case", "export", str(tmp_path / "c.json"), "--qrels", str(tmp_path / "q"), "--run", str(tmp_path / "r"))
    code, out, err = cli_runner(*args)
    assert code == 0 and out == ""
    assert err == ("note: the case names no scorer: give --scorer NAME to get the gainscope evaluate command line "
                   "that gives case score's numbers\n")
    code, out, err = cli_runner(*args, "--scorer", "nDGC@10")
    assert code == 2 and "unknown metric 'nDGC'. Did you mean 'nDCG'?" in err
    # the name as written: under the quepid profile it is the same metric (the canonical name would lose gain=linear)
    code, out, _ = cli_runner(*args, "--scorer", "nDCG(gain=linear)@10")
    assert code == 0 and "-m 'nDCG(gain=linear)@10' --profile quepid" in out
