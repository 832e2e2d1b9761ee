"""Case files, importers (Quepid ratings and snapshot CSV, RRE JSON, _rank_eval JSON) and exporters (Quepid CSV,
TREC qrels and run) on realistic inline samples; every bad line is a FormatError naming file and line."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from tests.helpers import write

import gainscope
from gainscope.cases import Case, CaseQuery, RatingScale
from gainscope.cases.files import read_case, write_case
from gainscope.cases.quepid_csv import case_from_quepid, read_quepid_ratings, read_quepid_snapshot, write_quepid_ratings
from gainscope.cases.rank_eval import read_rank_eval
from gainscope.cases.rre import read_rre
from gainscope.cases.trec import write_trec_qrels, write_trec_run
from gainscope.errors import FormatError, InconsistentInputError, MissingDependencyError, QueryCoverageWarning

CASE_JSON = """{
  "name": "Movies",
  "scorer": "nDCG@10",
  "scale": {"values": [0, 1, 2, 3], "labels": {"0": "Poor", "3": "Perfect"}},
  "queries": [
    {"query": "star wars", "id": "sw", "ratings": {"d1": 3, "d2": 0, "d9": 2},
     "results": ["d1", "d2", "d3"], "options": {"lang": "en"}, "num_found": 120},
    {"query": "star trek", "ratings": {}, "results": ["d4"]}
  ]
}
"""


# ------------------------------------------------------------------------------------------ case files
def test_read_case_json_and_round_trip(tmp_path: Path) -> None:
    case = read_case(write(tmp_path, "movies.json", CASE_JSON))
    assert case.name == "Movies" and case.scorer == "nDCG@10" and case.scale is not None
    assert case.scale.labels == {0: "Poor", 3: "Perfect"}
    sw = case.query("star wars")
    assert sw.qid == "sw" and sw.results == ("d1", "d2", "d3") and sw.options == {"lang": "en"}
    assert sw.num_found == 120 and sw.ratings == {"d1": 3, "d2": 0, "d9": 2}
    again = read_case(write(tmp_path, "again.json", write_case(case)))
    assert again.queries == case.queries and again.scale == case.scale


def test_read_case_yaml(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    text = """name: Movies
scale: graded
queries:
  - query: star wars
    ratings: {d1: 3, d2: 1}
    results: [d1, d3, d2]
"""
    case = read_case(write(tmp_path, "movies.yaml", text))
    assert case.query("star wars").ratings == {"d1": 3, "d2": 1} and case.scale == RatingScale.parse("graded")
    bad = text.replace("d2: 1}", "d2: one}")
    with pytest.raises(FormatError, match=r"bad\.yaml:5: query 'star wars': the rating of document 'd2' must be "
                                          r"a number; got 'one'"):
        read_case(write(tmp_path, "bad.yaml", bad))
    written = write_case(case, tmp_path / "out.yml")
    assert read_case(tmp_path / "out.yml").queries == case.queries and written.startswith("name: Movies")


@pytest.mark.parametrize("doc_id", ["007", "010", "0x1F", "12:30", "1_000", "1e3", "1.50", "yes", "null", "~",
                                    "2001-01-01", "0o17", "+12"])
def test_yaml_document_ids_keep_their_text(tmp_path: Path, doc_id: str) -> None:
    # PyYAML's resolver turns unquoted 007 into 7, 010 into 8 (octal), 0x1F into 31, 12:30 into 750
    # (base 60), 1_000 into 1000, yes into True, ~ into None: ids in ratings, results, id and query keep the text
    pytest.importorskip("yaml")
    text = (f"scale: graded\nqueries:\n  - query: {doc_id}\n    id: {doc_id}\n"
            f"    ratings: {{{doc_id}: 3, other: 1}}\n    results: [{doc_id}, other]\n"
            f"    options: {{depth: 010}}\n")
    q = read_case(write(tmp_path, "ids.yaml", text)).queries[0]
    assert q.query == doc_id and q.id == doc_id
    assert q.ratings == {doc_id: 3, "other": 1} and q.results == (doc_id, "other")
    assert q.options == {"depth": 8}  # options are data: YAML's own types


def test_yaml_ids_from_the_review_keep_distinct_keys(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    text = ("scale: graded\nqueries:\n  - query: bond\n    ratings: {007: 3, 010: 2, 1_000: 1, 0x1F: 1, 12:30: 2, "
            "7: 0}\n    results: [007, 010, 1_000, 0x1F, 12:30, 7]\n")
    q = read_case(write(tmp_path, "bond.yaml", text)).query("bond")
    assert q.results == ("007", "010", "1_000", "0x1F", "12:30", "7")
    assert q.ratings == {"007": 3, "010": 2, "1_000": 1, "0x1F": 1, "12:30": 2, "7": 0}  # 007 and 7 differ


def test_yaml_without_pyyaml_is_a_missing_dependency(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)
    with pytest.raises(MissingDependencyError, match="reading YAML needs PyYAML; pip install pyyaml"):
        read_case(write(tmp_path, "c.yaml", "queries: []\n"))


@pytest.mark.parametrize(("text", "message"), [
    (CASE_JSON.replace('"results": ["d4"]', '"result": ["d4"]'),
     r"c\.json:8: unknown key 'result' in query 2; did you mean 'results'\?"),
    (CASE_JSON.replace('"d9": 2', '"d9": "2"'),
     r"c\.json:6: query 'star wars': the rating of document 'd9' must be a number; got '2'"),
    (CASE_JSON.replace('"d9": 2', '"d9": 7'),
     r"c\.json:6: query 'star wars', document 'd9': rating 7 is outside the scale 0-3"),
    (CASE_JSON.replace('"star trek"', '"star wars"'), r"c\.json:8: query 'star wars' appears twice"),
    (CASE_JSON.replace('"d3"]', '"d3",]'), r"c\.json:7: invalid JSON: Expecting value"),
    (CASE_JSON.replace('"results": ["d1", "d2", "d3"]', '"results": ["d1", "d2", "d1"]'),
     r"c\.json:6: query 'star wars': document 'd1' is returned twice \(again at rank 3\)"),
    (CASE_JSON.replace('"d2": 0,', '"d2": 0, "d2": 1,'), r"c\.json:6: key 'd2' appears twice in the same object"),
])
def test_case_file_errors_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        read_case(write(tmp_path, "c.json", text))


# ------------------------------------------------------------------------------------------ Quepid CSV
RATINGS_CSV = ("query,docid,rating\n"
               "star wars,d1,3\n"
               "star wars,d2,0.0\n"
               '" -1 results",d5,2\n'          # Quepid's CSV-injection guard: one space before '-'
               "star wars,d9,2\n"
               "nobody rated,,\n"
               "lonely")                        # no trailing newline, a query alone


def test_quepid_ratings_csv(tmp_path: Path) -> None:
    r = read_quepid_ratings(write(tmp_path, "ratings.csv", RATINGS_CSV))
    assert r.order == ["star wars", "-1 results", "nobody rated", "lonely"]
    assert r.ratings["star wars"] == {"d1": 3, "d2": 0, "d9": 2} and r.ratings["nobody rated"] == {}
    assert isinstance(r.ratings["star wars"]["d2"], int)  # 0.0 -> 0


@pytest.mark.parametrize(("text", "message"), [
    ("query,docid,rating\nq,d1,3\nq,d2,three\n", r"r\.csv:3: rating must be a number; got 'three'"),
    ("query,docid,rating\nq,d1,3\nq,d1,2\n", r"r\.csv:3: document 'd1' of query 'q' is rated 2 here and 3 on line 2"),
    ("query,docid,rating\nq,,3\n", r"r\.csv:2: a rating \(3\) without a document id"),
    ("query,doc,grade\nq,d1,3\n", r"r\.csv:1: expected the header query,docid,rating"),
    ("query,docid,rating\nq,d1,3,x\n", r"r\.csv:2: expected 3 columns"),
])
def test_quepid_ratings_csv_errors(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        read_quepid_ratings(write(tmp_path, "r.csv", text))


SNAPSHOT_CSV = ("Snapshot Name,Snapshot Time,Case ID,Query Text,Doc ID,Doc Position,Title\n"
                "Baseline,2024-05-01 10:00:00,12,star wars,d3,3,A New Hope\n"
                "Baseline,2024-05-01 10:00:00,12,star wars,d1,1,Empire\n"
                'Baseline,2024-05-01 10:00:00,12,"star wars, the saga",d7,1,Box set\n'
                "Baseline,2024-05-01 10:00:00,12,star wars,d2,2,Jedi\n")


def test_quepid_snapshot_csv_orders_by_position(tmp_path: Path) -> None:
    s = read_quepid_snapshot(write(tmp_path, "snap.csv", SNAPSHOT_CSV))
    assert s.results == {"star wars": ["d1", "d2", "d3"], "star wars, the saga": ["d7"]}
    two = SNAPSHOT_CSV + "Other,2024-06-01 10:00:00,12,star wars,d8,4,x\n"
    with pytest.raises(FormatError, match=r"snap2\.csv:6: a second snapshot \('Other'"):
        read_quepid_snapshot(write(tmp_path, "snap2.csv", two))
    bad = SNAPSHOT_CSV.replace(",d2,2,", ",d2,second,")
    with pytest.raises(FormatError, match=r"snap3\.csv:5: Doc Position must be a number; got 'second'"):
        read_quepid_snapshot(write(tmp_path, "snap3.csv", bad))


def test_detailed_export_lists_a_zero_result_query_in_four_fields(tmp_path: Path) -> None:
    # Quepid's detailed export (caseCSVSvc.stringifyQueriesDetailed) writes a query without documents as
    # Team Name,Case Name,Case ID,Query Text and nothing else
    detailed = ("Team Name,Case Name,Case ID,Query Text,Doc ID,Doc Position,Title,Rating,year\n"
                "OSC,Movies,42,star wars,11,1,Star Wars,2,1977\n"
                'OSC,Movies,42,star wars,1891,2,"Empire Strikes Back, The",3,1980\n'
                "OSC,Movies,42,star wars,555,3,Spaceballs,,1987\n"
                "OSC,Movies,42,nothing here\n")
    s = read_quepid_snapshot(write(tmp_path, "detailed.csv", detailed))
    assert s.order == ["star wars", "nothing here"]
    assert s.results == {"star wars": ["11", "1891", "555"], "nothing here": []}
    assert s.ratings["star wars"] == {"11": 2, "1891": 3}
    case = case_from_quepid(write(tmp_path, "detailed.csv", detailed), scale="graded")
    assert case.query("nothing here").results == ()
    with pytest.raises(FormatError, match=r"bad\.csv:2: expected 9 columns; got 5"):
        read_quepid_snapshot(write(tmp_path, "bad.csv", detailed.splitlines()[0] + "\nOSC,Movies,42,q,11\n"))


def test_basic_snapshot_and_the_join_with_ratings(tmp_path: Path) -> None:
    basic = "query,docid,rating\nstar wars,d1,3\nstar wars,d3,\nstar wars,d2,1\nnobody rated\n"
    snap = write(tmp_path, "basic.csv", basic)
    s = read_quepid_snapshot(snap)
    assert s.results["star wars"] == ["d1", "d3", "d2"] and s.ratings["star wars"] == {"d1": 3, "d2": 1}
    with pytest.warns(QueryCoverageWarning, match=r"^2 queries of the ratings .*ratings\.csv are not in the "
                                                  r"snapshot .*basic\.csv: -1 results, lonely$"):
        case = case_from_quepid(snap, write(tmp_path, "ratings.csv", RATINGS_CSV), scale="graded")
    sw = case.query("star wars")
    # the ratings CSV wins (d2: 0, not the snapshot's 1) and adds d9, rated but not returned
    assert sw.results == ("d1", "d3", "d2") and sw.ratings == {"d1": 3, "d2": 0, "d9": 2}
    assert [q.query for q in case.queries] == ["star wars", "nobody rated", "-1 results", "lonely"]
    assert "they win over the snapshot's" in case.notes[1]


def test_write_quepid_ratings_round_trips(tmp_path: Path) -> None:
    case = Case((CaseQuery("-1 results", {"d5": 2}, ()), CaseQuery("star wars", {"d1": 3, "=d2": 0.5}, ()),
                 CaseQuery("nobody rated", {}, ())))
    text = write_quepid_ratings(case)
    assert text == ("query,docid,rating\n -1 results,d5,2\nstar wars,d1,3\nstar wars, =d2,0.5\n"
                    "nobody rated,,\n")
    back = read_quepid_ratings(write(tmp_path, "out.csv", text))
    assert back.ratings == {q.query: dict(q.ratings) for q in case.queries}


# ------------------------------------------------------------------------------------------------- RRE
RRE_JSON = """{
  "index": "core1", "corpora_file": "electric_basses.json", "id_field": "id",
  "topics": [
    {"description": "Fender basses",
     "query_groups": [
       {"name": "Brand search",
        "queries": [{"template": "only_q.json", "placeholders": {"$query": "fender"}},
                    {"template": "only_q.json", "placeholders": {"$query": "fender bass"},
                     "relevant_documents": {"3": ["b7"], "1": ["b8", "b9"]}}],
        "relevant_documents": {"b1": {"gain": 3}, "b2": {"rating": 2}, "b3": {}}}
     ]}
  ]
}
"""


def test_rre_ratings(tmp_path: Path) -> None:
    with pytest.warns(QueryCoverageWarning, match=r"^1 query of the RRE file .*ratings\.json is not in the "
                                                  r"results: fender bass$"):
        case = read_rre(write(tmp_path, "ratings.json", RRE_JSON), results={"fender": ["b2", "b1", "x"]})
    assert case.name == "core1"
    assert case.query("fender").ratings == {"b1": 3, "b2": 2, "b3": 2}  # b3 has no gain: RRE's missing grade 2
    assert case.query("fender").results == ("b2", "b1", "x")
    assert case.query("fender bass").ratings == {"b7": 3, "b8": 1, "b9": 1}  # the query's own list wins
    assert "1 listed document(s) without a gain got RRE's missing grade 2" in case.notes
    quepid_export = {"id_field": "id", "index": "movies", "template": "template.json",
                     "queries": [{"placeholders": {"$query": "star wars"}, "relevant_documents": {"d1": {"gain": 3}}}]}
    exported = read_rre(write(tmp_path, "q.json", json.dumps(quepid_export)))
    assert exported.query("star wars").ratings == {"d1": 3}
    bad = RRE_JSON.replace('"b1": {"gain": 3}', '"b1": {"gain": "high"}')
    with pytest.raises(FormatError, match=r"bad\.json:10: the gain of document 'b1' must be a number; got 'high'"):
        read_rre(write(tmp_path, "bad.json", bad))


def test_rre_same_text_through_two_templates_and_placeholders_as_options(tmp_path: Path) -> None:
    # RRE runs every query of a group through its own template: the same text twice is two queries (two
    # requests, two result lists); they are kept apart by template, and placeholders other than $query are
    # the query's options, as _rank_eval params are
    text = json.dumps({"index": "core1", "topics": [{"description": "t", "query_groups": [
        {"name": "g1", "template": "only_q.json", "relevant_documents": {"1": {"gain": 3}},
         "queries": [{"placeholders": {"$query": "fender"}},
                     {"template": "by_strings.json", "placeholders": {"$query": "fender", "$strings": 4}},
                     {"template": "by_strings.json", "placeholders": {"$query": "fender", "$strings": 5}},
                     {"template": "by_strings.json", "placeholders": {"$query": "jazz", "$strings": 4}}]}]}]})
    with pytest.warns(QueryCoverageWarning, match=r"2 queries of the RRE file .* are not in the results: "
                                                  r"fender \[by_strings\.json; \$strings=4\], jazz$"):
        case = read_rre(write(tmp_path, "dup.json", text),
                        results={"fender [only_q.json]": ["1"], "fender [by_strings.json; $strings=5]": ["2", "1"]})
    assert [q.query for q in case.queries] == ["fender [only_q.json]", "fender [by_strings.json; $strings=4]",
                                               "fender [by_strings.json; $strings=5]", "jazz"]
    assert case.query("fender [by_strings.json; $strings=4]").options == {"$strings": 4}
    assert case.query("jazz").options == {"$strings": 4} and case.query("jazz").ratings == {"1": 3}
    assert case.query("fender [by_strings.json; $strings=5]").results == ("2", "1")
    assert any("'fender' is used by 3 queries" in n for n in case.notes)
    same = text.replace('"$strings": 5', '"$strings": 4')
    with pytest.raises(FormatError, match=r"same\.json:1: query 'fender' appears twice with the same template "
                                          r"'by_strings\.json' and placeholders"):
        read_rre(write(tmp_path, "same.json", same))


# -------------------------------------------------------------------------------------------- _rank_eval
RANK_EVAL_REQUEST = """{
  "requests": [
    {"id": "amsterdam_query",
     "request": {"query": {"match": {"text": "amsterdam"}}},
     "ratings": [{"_index": "my_index", "_id": "doc1", "rating": 0},
                 {"_index": "my_index", "_id": "doc2", "rating": 3},
                 {"_index": "my_index", "_id": "doc3", "rating": 1}]},
    {"id": "berlin_query", "template_id": "match_one_field_query",
     "params": {"query_string": "berlin", "field": "text"},
     "ratings": [{"_index": "my_index", "_id": "doc1", "rating": 1}]}
  ],
  "metric": {"dcg": {"k": 10, "normalize": true}}
}
"""

RANK_EVAL_RESPONSE = """{"rank_eval": {"metric_score": 0.4},
 "details": {"amsterdam_query": {"metric_score": 0.6, "unrated_docs": [{"_index": "my_index", "_id": "doc5"}],
   "hits": [{"hit": {"_index": "my_index", "_id": "doc2", "_score": 3.1}, "rating": 3},
            {"hit": {"_index": "my_index", "_id": "doc5", "_score": 2.0}, "rating": null},
            {"hit": {"_index": "my_index", "_id": "doc1", "_score": 1.2}, "rating": 0}]}}}
"""


def test_rank_eval_request_and_response(tmp_path: Path) -> None:
    req = write(tmp_path, "req.json", RANK_EVAL_REQUEST)
    with pytest.warns(QueryCoverageWarning, match=r"^1 query of the request .*req\.json is not in the response "
                                                  r".*resp\.json: berlin_query$"):
        case = read_rank_eval(req, response=write(tmp_path, "resp.json", RANK_EVAL_RESPONSE))
    ams = case.query("amsterdam_query")
    assert ams.ratings == {"doc1": 0, "doc2": 3, "doc3": 1} and ams.results == ("doc2", "doc5", "doc1")
    assert case.query("berlin_query").options == {"query_string": "berlin", "field": "text"}
    assert case.query("berlin_query").results == ()
    assert any("dcg {'k': 10, 'normalize': True}" in n for n in case.notes)
    bad = RANK_EVAL_REQUEST.replace('"_id": "doc3", "rating": 1', '"_id": "doc3", "rating": "1"')
    with pytest.raises(FormatError, match=r"bad\.json:7: request 'amsterdam_query', document 'doc3': 'rating' must "
                                          r"be a number; got '1'"):
        read_rank_eval(write(tmp_path, "bad.json", bad))


# ----------------------------------------------------------------------------------------------- TREC
def test_trec_export_evaluates_with_gainscope(tmp_path: Path) -> None:
    case = Case((CaseQuery("star wars", {"d1": 3, "d2": 0, "d9": 2}, ("d2", "d1", "d3")),
                 CaseQuery("star trek", {"d4": 1}, ("d4",), id="st")), RatingScale.parse("graded"))
    qrels, run = write_trec_qrels(case), write_trec_run(case, tag="snap")
    assert qrels == "star_wars 0 d1 3\nstar_wars 0 d2 0\nstar_wars 0 d9 2\nst 0 d4 1\n"
    assert run == "star_wars Q0 d2 1 3 snap\nstar_wars Q0 d1 2 2 snap\nstar_wars Q0 d3 3 1 snap\nst Q0 d4 1 1 snap\n"
    results = gainscope.evaluate(write(tmp_path, "case.qrels", qrels), write(tmp_path, "case.run", run),
                                 ["nDCG@10", "P@2"])
    # star_wars, trec_eval's nDCG (linear gain, ideal from all judgments): ranked gains [0, 3, 0] -> 3 / log2(3);
    # ideal [3, 2, 0] -> 3 + 2 / log2(3)
    expected = (3 / math.log2(3)) / (3 + 2 / math.log2(3))
    assert results.per_query("nDCG@10")["star_wars"] == pytest.approx(expected)  # 0.6492
    assert results.per_query("nDCG@10")["st"] == 1.0
    assert results.per_query("P@2")["st"] == 0.5  # trec_eval's P@k divides by k, unlike Quepid's
    clash = Case((CaseQuery("a b", {"d": 1}, ("d",)), CaseQuery("a_b", {"d": 1}, ("d",))))
    with pytest.raises(InconsistentInputError, match="would both get the TREC id 'a_b'"):
        write_trec_qrels(clash)
