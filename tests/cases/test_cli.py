"""``gainscope case``: score, compare, import, export and scorer-js, through click's runner on case_group."""

from __future__ import annotations

import json
import math
import re
from functools import partial
from pathlib import Path

import pytest
from tests.helpers import invoke as invoke_command

from gainscope.cli.case import case_group

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "cases"
BEFORE, AFTER = str(EXAMPLES / "movies_before.json"), str(EXAMPLES / "movies_after.json")

# 'star wars' in the baseline: ratings by rank [2, 1, 3, 0, 3, -]; 2^r - 1 gains [3, 1, 7, 0, 7, 0]
# DCG = 3 + 1/log2(3) + 7/2 + 7/log2(6) = 9.83890; ideal [3, 3, 3, 2, 1, 0] -> 7 + 7/log2(3) + 7/2 + 3/log2(5) +
# 1/log2(6) = 16.59539; nDCG@10 = 0.5929
SW = (3 + 1 / math.log2(3) + 3.5 + 7 / math.log2(6)) / (7 + 7 / math.log2(3) + 3.5 + 3 / math.log2(5)
                                                         + 1 / math.log2(6))
# 'star trek': ratings by rank [1, 3, 2, -]: DCG = 1 + 7/log2(3) + 3/2 = 6.91651; ideal [3, 2, 2, 1] ->
# 7 + 3/log2(3) + 3/2 + 1/log2(5) = 10.82347; nDCG@10 = 0.6390
ST = (1 + 7 / math.log2(3) + 1.5) / (7 + 3 / math.log2(3) + 1.5 + 1 / math.log2(5))


invoke = partial(invoke_command, case_group)


def test_score_table_prints_queries_case_score_and_conventions() -> None:
    code, out, _ = invoke("score", BEFORE)
    assert code == 0
    assert f"│ star wars     │ {SW:.4f} │ scored │" in out and f"│ star trek     │ {ST:.4f} │ scored │" in out
    # as Quepid's browser: nDCG@10 runs on the zero-result and the unrated query too and gives 0 on both
    # (no results: DCG 0; nothing rated: ideal DCG 0 -> 0), which count in the mean
    assert "│ the godfather │ 0.0000 │ scored │ zero results; scored as Quepid does       │" in out
    assert "│ rom com       │ 0.0000 │ scored │ no rated documents; scored as Quepid does │" in out
    assert f"case score: {(SW + ST + 0 + 0) / 4:.4f}" in out and "case score: 0.3080" in out
    assert ("  zero-result and unrated queries: --unscored quepid (Quepid's browser): the scorer runs on every "
            "query;") in out
    code, out, _ = invoke("score", BEFORE, "--unscored", "skip")
    assert f"│ star wars     │ {SW:.4f} │ scored  │" in out
    assert "│ the godfather │    zsr │ zsr     │ zero results       │" in out
    assert "│ rom com       │     -- │ unrated │ no rated documents │" in out
    assert "case score: 0.6159" in out  # mean of star wars and star trek only
    assert "  zero-result and unrated queries: --unscored skip: not scored, left out of the mean" in out
    assert "  zero-result queries left out: the godfather" in out


def test_score_json_with_another_scorer_and_zero_for_unscored() -> None:
    code, out, _ = invoke("score", BEFORE, "--scorer", "P@3", "--unscored", "zero", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["scorer"] == "P@3"
    per_query = {q["query"]: q["score"] for q in data["queries"]}
    assert per_query["star wars"] == pytest.approx(1.0)  # sw1 2, spaceballs 1, sw4 3: all > 0
    assert per_query["star trek"] == pytest.approx(1.0)  # galaxyquest 1, st2 3, st1 2: all > 0
    assert data["score"] == pytest.approx((1.0 + 1.0 + 0 + 0) / 4)  # zsr and unrated count as 0


def test_compare_shows_changes_and_documents_crossing_the_top_k() -> None:
    code, out, _ = invoke("compare", BEFORE, AFTER, "--top", "3")
    assert code == 0
    assert "│ star wars     │ 0.5929 │ 1.0000 │ +0.4071 │ 3 │ sw5, sw6      │ sw1, spaceballs │" in out
    assert "│ the godfather │ 0.0000 │ 0.9341 │ +0.9341 │ 3 │ gf1, gf3, gf2 │" in out
    data = json.loads(invoke("compare", BEFORE, AFTER, "--format", "json")[1])
    trek = next(q for q in data["queries"] if q["query"] == "star trek")
    assert trek["k"] == 10 and trek["entered"] == [] and trek["left"] == []  # same 4 documents within 10


def test_javascript_scorer_from_a_file_with_logs(tmp_path: Path) -> None:
    pytest.importorskip("py_mini_racer")
    js = tmp_path / "count.js"
    js.write_text("var k = 3;\nvar n = 0;\neachDoc(function (d, i) { if (docRating(i) >= 2) n++; }, k);\n"
                  "console.log('n=' + n);\nsetScore(n);\n")
    code, out, _ = invoke("score", AFTER, "--scorer", str(js), "--show-logs")
    assert code == 0
    assert "│ star wars     │ 3.0000 │ scored │" in out and "console output of 'star wars':\n  n=3" in out
    js.write_text("var k = 3;\nvar n = 0\neachDoc(function (d, i) { n += d.fields.size; }, k);\nsetScore(n);\n")
    code, _, err = invoke("score", AFTER, "--scorer", str(js))
    assert code == 3
    assert err.startswith(f"error: {js}:3: TypeError: Cannot read properties of undefined (reading 'size') "
                          f"(query 'star wars')\n    eachDoc(function (d, i) {{ n += d.fields.size; }}, k);")


def test_errors_and_exit_codes(tmp_path: Path) -> None:
    code, _, err = invoke("score", BEFORE, "--scorer", "nDGC@10")
    # the error of evaluate -m: one grammar
    assert code == 2 and err == ("error: unknown metric 'nDGC'. Did you mean 'nDCG'? Run `gainscope metrics` to list "
                                 "every metric.\n")
    lower = tmp_path / "lower.json"  # a case file in the old case-insensitive grammar: evaluate's error, located
    lower.write_text('{"scorer": "ap@10", "queries": [{"query": "q", "ratings": {"d": 1}, "results": ["d"]}]}')
    code, _, err = invoke("score", str(lower))
    assert code == 3 and err == (f"error: {lower}: the case's scorer 'ap@10': unknown metric 'ap'. Did you mean 'AP'? "
                                 "Run `gainscope metrics` to list every metric.\n")
    bad = tmp_path / "bad.json"
    bad.write_text('{"queries": [\n  {"query": "q", "ratings": {"d": "3"}, "results": ["d"]}\n]}\n')
    code, _, err = invoke("score", str(bad), "--scorer", "AP@10")
    assert code == 3 and f"error: {bad}:2: query 'q': the rating of document 'd' must be a number" in err
    no_scorer = tmp_path / "none.json"
    no_scorer.write_text('{"queries": [{"query": "q", "ratings": {"d": 1}, "results": ["d"]}]}')
    code, _, err = invoke("score", str(no_scorer))
    assert code == 3 and "the case names no scorer; give --scorer" in err
    scorer = str(EXAMPLES / "blog_ndcg_at_10.js")  # the scorer given where the case goes: said so, not "invalid JSON"
    code, _, err = invoke("score", scorer)
    assert code == 3 and err == (f"error: {scorer}: a JavaScript file is a scorer, not a case: give a case file (JSON "
                                 f"or YAML) and this file as the scorer (--scorer {scorer})\n")


def test_a_javascript_file_given_as_a_case_is_named_a_scorer_in_python() -> None:
    from gainscope.cases.files import read_case
    from gainscope.errors import FormatError

    scorer = EXAMPLES / "blog_ndcg_at_10.js"
    with pytest.raises(FormatError, match=re.escape(f"as the scorer (scorer='{scorer}')")):
        read_case(scorer)


def test_import_and_export_round_trip(tmp_path: Path) -> None:
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("query,docid,rating\nstar wars,d1,3\nstar wars,d2,1\nstar wars,d9,2\n")
    snapshot = tmp_path / "snap.csv"
    snapshot.write_text("Snapshot Name,Snapshot Time,Case ID,Query Text,Doc ID,Doc Position\n"
                        "s,t,1,star wars,d2,1\ns,t,1,star wars,d1,2\ns,t,1,star wars,d3,3\n")
    case = tmp_path / "case.json"
    code, _, err = invoke("import", "--quepid-snapshot", str(snapshot), "--quepid-ratings", str(ratings),
                          "--scale", "graded", "--scorer", "RR@10", "-o", str(case))
    assert code == 0 and "note: results from the Quepid snapshot" in err
    data = json.loads(case.read_text())
    assert data["scorer"] == "RR@10" and data["queries"][0]["results"] == ["d2", "d1", "d3"]
    code, out, _ = invoke("score", str(case), "--format", "json")
    assert json.loads(out)["score"] == 1.0  # d2 rated 1 > 0 at rank 1
    qrels, run = tmp_path / "c.qrels", tmp_path / "c.run"
    assert invoke("export", str(case), "--qrels", str(qrels), "--run", str(run))[0] == 0
    assert qrels.read_text() == "star_wars 0 d1 3\nstar_wars 0 d2 1\nstar_wars 0 d9 2\n"
    assert run.read_text().splitlines()[0] == "star_wars Q0 d2 1 3 case"


def test_scorer_js_prints_pasteable_javascript() -> None:
    code, out, _ = invoke("scorer-js", "NDCG_CUT@5")
    assert code == 0 and out.startswith("var k = 5; // @Rank\n") and "setScore(" in out


def test_import_run_matches_query_ids_as_the_trec_exporter_writes_them(tmp_path: Path) -> None:
    ratings = tmp_path / "ratings.json"  # RRE ratings: no results; query texts with spaces
    ratings.write_text(json.dumps({"query_groups": [
        {"name": "g", "queries": [{"placeholders": {"$query": "jazz bass"}}, {"placeholders": {"$query": "fender"}},
                                  {"placeholders": {"$query": "p bass"}}],
         "relevant_documents": {"d1": {"gain": 3}, "d2": {"gain": 1}}}]}))
    run = tmp_path / "run.trec"  # TREC query ids cannot hold spaces: 'jazz bass' is written jazz_bass
    run.write_text("jazz_bass Q0 d2 1 2.0 sys\njazz_bass Q0 d1 2 1.0 sys\nfender Q0 d1 1 1.0 sys\n"
                   "rock Q0 d9 1 1.0 sys\nmetal Q0 d9 1 1.0 sys\n")
    case = tmp_path / "case.json"
    code, _, err = invoke("import", "--rre", str(ratings), "--run", str(run), "-o", str(case))
    assert code == 0
    results = {q["query"]: q["results"] for q in json.loads(case.read_text())["queries"]}
    assert results == {"jazz bass": ["d2", "d1"], "fender": ["d1"], "p bass": []}
    assert "warning: 2 run query ids match no case query (their results are left out): rock, metal" in err
    assert "warning: 1 case query has no results in the run: p bass" in err
    # the exporter's ids read back: export, then import the run again
    qrels, run_out = tmp_path / "c.qrels", tmp_path / "c.run"
    assert invoke("export", str(case), "--qrels", str(qrels), "--run", str(run_out))[0] == 0
    code, _, err = invoke("import", "--rre", str(ratings), "--run", str(run_out), "-o", str(tmp_path / "again.json"))
    again = {q["query"]: q["results"] for q in json.loads((tmp_path / "again.json").read_text())["queries"]}
    assert code == 0 and again == results and "match no case query" not in err


def test_scorer_js_warns_that_quepid_uses_its_own_edit_distance() -> None:
    code, out, err = invoke("scorer-js", "default(distance=levenshtein)@10")
    assert code == 0 and "editDistanceFromBest(k)" in out
    assert err == ("warning: in Quepid, editDistanceFromBest() is Quepid's shipped edit distance, so this script "
                   "gives default@10's numbers there, not default(distance=levenshtein)@10's (true Levenshtein); so "
                   "it does in gainscope unless run with --edit-distance levenshtein\n")
    assert invoke("scorer-js", "default@10")[2] == ""  # Quepid's distance: the script's numbers are the metric's
    assert invoke("scorer-js", "nDCG@10")[2] == ""
    code, _, err = invoke("scorer-js", "R@10")
    assert code == 2 and "R@10 is not one of Quepid's built-in scorers, which have a JavaScript form: CG@k" in err


def test_a_javascript_scorer_gets_quepids_edit_distance_unless_levenshtein_is_asked_for(tmp_path: Path) -> None:
    # issue 13, item 32. Returned ratings [2, 3, 1], best [3, 2, 1]: avgRating100 = floor(2 * 100 / 10) = 20;
    # Quepid's distance 1 (its table reads cells outside as 0: drop the leading 3 for free), Levenshtein 2
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"scale": "1-10", "queries": [
        {"query": "q", "ratings": {"a": 2, "b": 3, "c": 1}, "results": ["a", "b", "c"]}]}))
    js = tmp_path / "v1.js"
    js.write_text("var score = avgRating100(10);\nif (score !== null) {\n  score -= editDistanceFromBest(10);\n}\n"
                  "setScore(score);\n")
    code, out, _ = invoke("score", str(case), "--scorer", str(js), "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["score"] == 19  # 20 - 1, Quepid's number
    assert ("editDistanceFromBest: quepid-legacy: Quepid's shipped distance, as Quepid computes it "
            "(edit_distance='levenshtein' / --edit-distance levenshtein for the true Levenshtein distance)"
            in data["conventions"])
    code, out, _ = invoke("score", str(case), "--scorer", str(js), "--format", "json", "--edit-distance", "levenshtein")
    data = json.loads(out)
    assert code == 0 and data["score"] == 18  # 20 - 2
    assert ("editDistanceFromBest: levenshtein: the true Levenshtein distance, asked for (Quepid computes its "
            "shipped distance)" in data["conventions"])
    # the built-in is the metric QuepidV1, whose distance is Quepid's unless its name or --edit-distance says
    # levenshtein (issue 14): default@10 gives Quepid's 19 too
    def builtin(*args: str) -> float:
        return json.loads(invoke("score", str(case), "--format", "json", *args)[1])["score"]

    assert builtin("--scorer", "default@10") == 19
    assert builtin("--scorer", "default@10", "--edit-distance", "quepid-legacy") == 19  # the older spelling
    assert builtin("--scorer", "default(distance=levenshtein)@10") == 18
    assert builtin("--scorer", "default@10", "--edit-distance", "levenshtein") == 18
    assert builtin("--scorer", "editDistanceFromBest@10") == 1
    code, _, err = invoke("score", str(case), "--scorer", "default(distance=quepid)@10", "--edit-distance",
                          "levenshtein")
    assert code == 2 and ("'default(distance=quepid)@10' names distance=quepid but --edit-distance levenshtein was "
                          "given; give one of them") in err
