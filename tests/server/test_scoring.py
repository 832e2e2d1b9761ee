"""The dashboard's scores are gainscope.cases' scores: the incremental rescore after a rating (one query, every
selected scorer, then the mean of the counted scores) equals score_case on the whole case, for every convention;
and the seed's figures (Quepid's case of two queries scoring 67 and 63 has a case score of 65)."""

from __future__ import annotations

import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gainscope.cases import Case, CaseQuery, RatingScale, resolve_scorer, score_case
from gainscope.server import cases as bridge
from gainscope.server.store import CaseSettings
from gainscope.server.workspace import Workspace

SCORERS = ("nDCG@10", "NDCG_CUT@5", "P@5", "AP@10", "RR@10", "ERR@10", "CG@10", "DCG@3", "avgRating100@10",
           "default@10")
DOCS = [f"d{i}" for i in range(8)]


@st.composite
def cases_and_changes(draw: st.DrawFn) -> tuple[Case, list[tuple[int, str, int | None]], str, str]:
    n = draw(st.integers(1, 4))
    queries = []
    for i in range(n):
        results = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=6))
        rated = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=6))
        ratings = {d: draw(st.integers(0, 3)) for d in rated}
        queries.append(CaseQuery(f"query {i}", ratings, tuple(results)))
    changes = draw(st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(DOCS),
                                      st.one_of(st.none(), st.integers(0, 3))), min_size=1, max_size=8))
    return (Case(tuple(queries), RatingScale.parse("graded"), name="generated"), changes,
            draw(st.sampled_from(("quepid", "skip", "zero"))), draw(st.sampled_from(("zero", "skip"))))


@pytest.fixture(scope="module")
def shared() -> Iterator[Workspace]:
    """One workspace for every generated case (each is a new case in it)."""
    with tempfile.TemporaryDirectory() as folder, Workspace.open(Path(folder) / "ws") as ws:
        yield ws


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(drawn=cases_and_changes())
def test_incremental_rescoring_equals_score_case_on_the_whole_case(shared: Workspace, drawn: tuple) -> None:
    case, changes, unscored, undefined = drawn
    ws = shared
    record = ws.import_case(case, settings=CaseSettings(scorers=SCORERS, unscored=unscored, undefined=undefined))
    ws.scoreboard.scores(record.id)
    ids = [q.id for q in ws.store.queries(record.id)]
    for index, doc, rating in changes:
        changed, _ = ws.store.set_rating(record.id, ids[index], doc, rating, source="human")
        if changed:
            ws.scoreboard.rating_changed(record.id, ids[index])
    incremental = ws.scoreboard.scores(record.id)
    final = ws.as_case(record, ws.store.queries(record.id))
    for name in SCORERS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # queries whose results are all unrated: warned about, as expected
            full = score_case(final, resolve_scorer(name), unscored=unscored, undefined=undefined,
                              allow_unrated=True)
        got = incremental.by_scorer[name]
        assert got.error is None
        assert got.score == full.score, name  # exactly: the same values summed with fsum
        for q in full.queries:
            mine = got.queries[q.query]
            assert (mine.value, mine.status, mine.counted) == (q.value, q.status, q.counted), (name, q.query)


def test_a_failing_scorer_is_shown_as_an_error_and_the_others_still_score(tmp_path: Path) -> None:
    case = Case((CaseQuery("q", {"a": 3}, ("a", "b")),), RatingScale.parse("graded"), name="c")
    with Workspace.open(tmp_path / "ws") as ws:
        ws.store.save_scorer("broken", "javascript", "throw new Error('no');")
        record = ws.import_case(case, settings=CaseSettings(scorers=("nDCG@10", "broken")))
        scores = ws.scoreboard.scores(record.id)
        assert scores.by_scorer["nDCG@10"].score == 1.0
        assert scores.by_scorer["broken"].error.startswith("broken:1: Error: no (query 'q')")
        ws.store.set_rating(record.id, "1", "b", 3, source="human")
        scores = ws.scoreboard.rating_changed(record.id, "1")
        assert scores.by_scorer["nDCG@10"].score == 1.0 and scores.by_scorer["broken"].error is not None


def _seed_case() -> Case:
    # Quepid's default-scorer arithmetic on 1-10: avgRating100 = floor(mean of the rated top 10 x 100/10):
    # Star Trek: seven 7s and three 6s, mean 6.7 -> 67; Star Wars: three 7s and seven 6s, mean 6.3 -> 63
    docs = [f"d{i}" for i in range(10)]
    trek = dict(zip(docs, [7] * 7 + [6] * 3, strict=True))
    wars = dict(zip(docs, [7] * 3 + [6] * 7, strict=True))
    return Case((CaseQuery("Star Trek", trek, tuple(docs)), CaseQuery("Star Wars", wars, tuple(docs))),
                RatingScale.parse("1-10"), name="Movies")


def test_the_seed_figures_two_queries_67_and_63_make_a_case_score_of_65(tmp_path: Path) -> None:
    with Workspace.open(tmp_path / "ws") as ws:
        record = ws.import_case(_seed_case(), settings=CaseSettings(scorers=("avgRating100@10",)))
        scored = ws.scoreboard.scores(record.id).by_scorer["avgRating100@10"]
        assert {t: q.value for t, q in scored.queries.items()} == {"Star Trek": 67.0, "Star Wars": 63.0}
        assert scored.score == 65.0  # the mean of the query scores


def test_explanation_rows_are_the_scores_of_each_prefix() -> None:
    case = Case((CaseQuery("q", {"a": 3, "b": 1, "c": 2}, ("b", "x", "a")),), RatingScale.parse("graded"))
    result = bridge.explain_query(case, "q", resolve_scorer("DCG@10"), 10)
    # DCG of b (1), x (unrated: 0), a (3): (2^1-1)/1 = 1; + 0; + (2^3-1)/log2(4) = 3.5
    assert [(r["doc"], r["rating"], r["score"]) for r in result.rows] == [("b", 1, 1.0), ("x", None, 1.0),
                                                                           ("a", 3, 4.5)]
    assert [r["change"] for r in result.rows] == [None, 0.0, 3.5] and result.score == 4.5


def test_scales_default_to_graded_only_when_the_ratings_fit(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"queries": [{"query": "a", "ratings": {"d": 2}}]}', encoding="utf-8")
    assert bridge.read_any(path).scale == RatingScale.parse("graded")
    path.write_text('{"queries": [{"query": "a", "ratings": {"d": 9}}]}', encoding="utf-8")
    with pytest.raises(bridge.InputError, match=r"c.json names no rating scale and has ratings outside 0-3 \(such as "
                                                r"9\); give the scale \(for example --scale 1-10\)"):
        bridge.read_any(path)
    assert bridge.read_any(path, scale="1-10").scale == RatingScale.parse("1-10")


def test_formats_are_told_apart_by_extension_and_content(tmp_path: Path) -> None:
    rre = tmp_path / "rre.json"
    rre.write_text('{"queries": [{"placeholders": {"$query": "fender"}, "relevant_documents": {"1": {"gain": 3}}}]}',
                   encoding="utf-8")
    assert [q.query for q in bridge.read_any(rre).queries] == ["fender"]
    rank_eval = tmp_path / "request.json"
    rank_eval.write_text('{"requests": [{"id": "amsterdam", "request": {"query": {"match_all": {}}}, "ratings": '
                         '[{"_index": "i", "_id": "d1", "rating": 1}]}]}', encoding="utf-8")
    assert [q.query for q in bridge.read_any(rank_eval).queries] == ["amsterdam"]
    snapshot = tmp_path / "snap.csv"
    snapshot.write_text("Snapshot Name,Snapshot Time,Case ID,Query Text,Doc ID,Doc Position\n"
                        "s,t,1,star wars,sw1,1\ns,t,1,star wars,sw2,2\n", encoding="utf-8")
    assert bridge.read_any(snapshot).queries[0].results == ("sw1", "sw2")
    odd = tmp_path / "case.xml"
    odd.write_text("<case/>", encoding="utf-8")
    with pytest.raises(bridge.UnknownFormatError, match=r"cannot tell the format from the extension \.xml"):
        bridge.read_any(odd)
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(bridge.UnknownFormatError, match="neither a case"):
        bridge.read_any(other)
    assert replace(bridge.read_any(rre, "rre"), notes=()).name == "rre"
