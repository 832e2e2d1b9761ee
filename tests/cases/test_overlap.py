"""Input that matches nothing never becomes a table of zeros (issue 13, item 6, the cases adapter): a case whose
returned documents none are rated, a run or results that match no query, two files or cases that share no query
are errors naming both sides and the fix; a partial match is a warning naming what did not match."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.helpers import invoke as invoke_command
from tests.helpers import write

from gainscope.cases import Case, CaseQuery, RatingScale, compare_cases, resolve_scorer, score_case
from gainscope.cases.quepid_csv import case_from_quepid
from gainscope.cases.rank_eval import read_rank_eval
from gainscope.cases.rre import read_rre
from gainscope.cases.trec import with_run_results
from gainscope.cli.case import case_group
from gainscope.errors import InconsistentInputError, QueryCoverageWarning

GRADED = RatingScale.parse("graded")
NDCG = resolve_scorer("nDCG@10")


invoke = partial(invoke_command, case_group)


# ------------------------------------------------------------------------------------------ scoring a case
def test_ratings_that_match_none_of_the_results_are_an_error(tmp_path: Path) -> None:
    # before: nDCG 0 for every query and a case score of 0, exit 0
    case = write(tmp_path, "case.json", {"scale": "graded", "queries": [
        {"query": "a", "ratings": {"7": 3, "8": 1}, "results": ["007", "x"]},
        {"query": "b", "ratings": {"9": 2}, "results": ["y"]}]})
    code, out, err = invoke("score", case, "--scorer", "nDCG@10")
    assert code == 3 and out == ""
    assert err == (f"error: {case}: no returned document of any query is rated: the results name '007', 'x', 'y'; "
                   f"the ratings name '7', '8', '9'; '007' and '7' match once whitespace and leading zeros are "
                   f"removed: fix the ids so that both spell them the same; to score anyway with a scorer that reads "
                   f"no ratings, give --allow-unrated\n")


def test_no_ratings_or_no_results_at_all_are_errors() -> None:
    unrated = Case((CaseQuery("a", {}, ("d1", "d2")), CaseQuery("b", {}, ("d3",))), GRADED, source="unrated.json")
    with pytest.raises(InconsistentInputError, match=r"^unrated\.json: no query of the case has a rated document: "
                                                     r"there is nothing to score the results against"):
        score_case(unrated, NDCG)
    no_results = Case((CaseQuery("a", {"d1": 3}, ()), CaseQuery("b", {"d2": 1}, ())), GRADED)
    with pytest.raises(InconsistentInputError, match=r"^no query of the case has results \(all 2 queries returned "
                                                     r"nothing\): there is nothing to score"):
        score_case(no_results, NDCG)
    with pytest.raises(InconsistentInputError, match=r"the case has no queries: there is nothing to score"):
        score_case(Case((), GRADED), NDCG)
    # a scorer that reads no ratings: Quepid's zero-results check, asked for explicitly
    zero_results = resolve_scorer(lambda q: 100.0 if q.num_returned else 0.0)
    result = score_case(unrated, zero_results, allow_unrated=True)
    assert result.per_query() == {"a": 100.0, "b": 100.0}


def test_queries_whose_results_are_all_unrated_are_warned_about() -> None:
    case = Case((CaseQuery("good", {"d1": 3}, ("d1", "d2")), CaseQuery("off", {"x1": 2}, ("d5", "d6")),
                 CaseQuery("zsr", {"d1": 1}, ()), CaseQuery("unrated", {}, ("d1",))), GRADED)
    with pytest.warns(QueryCoverageWarning) as caught:
        result = score_case(case, NDCG)
    # only 'off' has results and ratings and no rated result; 'zsr' and 'unrated' are labelled by their scores
    assert [str(w.message) for w in caught] == [
        "1 query of 3 with results has ratings, but none of the documents returned is rated (they score as Quepid "
        "scores unrated results, 0 for the built-in scorers; different document ids?): off"]
    assert result.query("off").value == 0.0


# ----------------------------------------------------------------------------------- joining two inputs
def test_case_import_with_a_run_that_matches_no_query_is_an_error(tmp_path: Path) -> None:
    ratings = write(tmp_path, "ratings.json", {"queries": [
        {"placeholders": {"$query": "star wars"}, "relevant_documents": {"d1": {"gain": 3}}}]})
    run = write(tmp_path, "run.txt", "Star_Wars Q0 d1 1 2.0 r\n")
    code, out, err = invoke("import", "--rre", ratings, "--run", run)
    assert code == 3 and out == ""
    assert err == ("error: no query of the run is in the case: the run has 'Star_Wars'; the case has 'star_wars' (a "
                   "run query id matches a query's id, its text with spaces as _, or its exact text)\n")


def test_quepid_snapshot_and_ratings_that_share_no_query_are_an_error(tmp_path: Path) -> None:
    snap = write(tmp_path, "snap.csv", "query,docid,rating\nstar wars,d1,\nstar trek,d2,\n")
    ratings = write(tmp_path, "ratings.csv", "query,docid,rating\nStar Wars,d1,3\n")
    with pytest.raises(InconsistentInputError) as exc:
        case_from_quepid(snap, ratings)
    assert str(exc.value) == (f"no query of the snapshot {snap} is in the ratings {ratings}: the snapshot {snap} has "
                              f"'star wars', 'star trek'; the ratings {ratings} has 'Star Wars' (queries are matched "
                              f"by their exact text)")


def test_rank_eval_request_and_response_that_share_no_id_are_an_error(tmp_path: Path) -> None:
    request = write(tmp_path, "req.json", {"requests": [
        {"id": "1", "request": {}, "ratings": [{"_index": "i", "_id": "d1", "rating": 1}]}]})
    response = write(tmp_path, "resp.json", {"details": {"01": {"hits": [{"hit": {"_id": "d1"}}]}}})
    with pytest.raises(InconsistentInputError, match=r"no query of the request .*req\.json is in the response "
                                                     r".*resp\.json: .* has '1'; .* has '01'; '1' and '01' match "
                                                     r"once whitespace and leading zeros are removed"):
        read_rank_eval(request, response=response)


def test_rre_results_that_match_no_query_are_an_error(tmp_path: Path) -> None:
    ratings = write(tmp_path, "rre.json", {"queries": [
        {"placeholders": {"$query": "fender"}, "relevant_documents": {"b1": {"gain": 3}}}]})
    with pytest.raises(InconsistentInputError, match=r"no query of the RRE file .*rre\.json is in the results: .* "
                                                     r"has 'fender'; the results has 'Fender' \(results are matched "
                                                     r"by query name\)"):
        read_rre(ratings, results={"Fender": ["b1"]})


def test_comparing_cases_that_share_no_query_is_an_error() -> None:
    a = Case((CaseQuery("star wars", {"d1": 3}, ("d1",)),), GRADED, source="a.json")
    b = Case((CaseQuery("star trek", {"d2": 3}, ("d2",)),), GRADED, source="b.json")
    with pytest.raises(InconsistentInputError, match=r"^no query of case A \(a\.json\) is in case B \(b\.json\): case "
                                                     r"A \(a\.json\) has 'star wars'; case B \(b\.json\) has 'star "
                                                     r"trek' \(queries are paired by their text\)$"):
        compare_cases(a, b, NDCG)


def test_with_run_results_matching_part_of_the_case_still_reports_the_rest() -> None:
    case = Case((CaseQuery("star wars", {"d1": 3}), CaseQuery("star trek", {"d2": 1})), GRADED)
    match = with_run_results(case, {"star_wars": ["d1"], "rock": ["d9"]})
    assert match.unmatched == ("rock",) and match.missing == ("star trek",)
    assert match.case.query("star wars").results == ("d1",)


def test_ratings_of_another_case_that_share_no_query_are_an_error_and_a_partial_match_warns(tmp_path: Path) -> None:
    from gainscope.cases.live import with_ratings
    from gainscope.errors import InconsistentInputError, QueryCoverageWarning, spell

    snapshot = Case((CaseQuery("star wars", {}, ("a", "b")), CaseQuery("alien", {}, ("c",))), source="snap.json")
    ratings = Case((CaseQuery("star trek", {"a": 3}),), source="today.json")
    with pytest.raises(InconsistentInputError) as err:
        with_ratings(snapshot, ratings)
    assert spell(str(err.value)) == (
        "no query of snap.json is in the ratings case today.json: snap.json has 'star wars', 'alien'; the ratings "
        "case today.json has 'star trek' (queries are matched by their text; give ratings=... a case of the same "
        "queries)")
    partial = Case((CaseQuery("star wars", {"a": 3}),), source="today.json")
    with pytest.warns(QueryCoverageWarning, match=r"^1 query of snap.json is not in the ratings case today.json: "
                                                  r"alien$"):
        rated = with_ratings(snapshot, partial)
    assert [q.ratings for q in rated.queries] == [{"a": 3}, {}]
    # the command line names the flag
    other = write(tmp_path, "other.json", '{"queries": [{"query": "zz", "ratings": {"a": 1}}]}')
    before = write(tmp_path, "before.json", '{"queries": [{"query": "q", "results": ["a"], "ratings": {"a": 1}}]}')
    code, _, err_text = invoke("compare", str(before), str(before), "--ratings", str(other))
    assert code == 3 and err_text.endswith("give --ratings a case of the same queries)\n")
