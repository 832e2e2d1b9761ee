"""The embedded engine: BM25 per field with boosts, by hand; k1, b and boosts as knobs; ties, totals, display
fields; and the index builder's errors.

The films (conftest.FILMS), tokens of 2+ word characters, lower-cased:
titles d1 [star, wars] d2 [star, trek] d3 [the, godfather] d4 [wars, of, the, roses]: avgdl 10/4 = 2.5;
texts  d1 [space, opera, about, galaxy, far, away] d2 [space, exploration, and, starship, crew]
       d3 [crime, family, saga] d4 [english, history, and, wars]: avgdl 18/4 = 4.5.
Query "star wars", k1 1.2, b 0.75, title boost 2:
  title: idf(star) = idf(wars) = ln(1 + (4 - 2 + 0.5) / (2 + 0.5)) = ln 2
    d1: two terms, tf 1, |d| 2: 2 * ln2 / (1 + 1.2 * (0.25 + 0.75 * 2 / 2.5)) = 2 ln2 / 2.02, boosted x2
    d2: one term: ln2 / 2.02, x2;   d4: wars, |d| 4: ln2 / (1 + 1.2 * (0.25 + 0.75 * 4 / 2.5)) = ln2 / 2.74, x2
  text: only d4 has wars: idf = ln(1 + 3.5 / 1.5) = ln(10/3); |d| 4: ln(10/3) / (1 + 1.2 * (0.25 + 0.75 * 4 / 4.5))
    = ln(10/3) / 2.1
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from tests.helpers import write_jsonl

from gainscope.errors import EngineConfigError, FormatError, InconsistentInputError, InputError
from gainscope.search.embedded import EmbeddedEngine, build_index, parse_fields, read_info

from .conftest import FILMS

LN2 = math.log(2)
D1 = 2 * (2 * LN2 / 2.02)                       # 1.372569
D2 = 2 * (LN2 / 2.02)                           # 0.686284
D4 = 2 * (LN2 / 2.74) + math.log(10 / 3) / 2.1  # 0.505946 + 0.573320 = 1.079266


def scores(response) -> list[tuple[str, float]]:
    return [(h.id, h.score) for h in response.hits]


def test_bm25_over_fields_with_boosts_by_hand(films_index: Path) -> None:
    response = EmbeddedEngine(films_index).search("star wars", top=10)
    assert [h.id for h in response.hits] == ["d1", "d4", "d2"]
    assert [s for _, s in scores(response)] == pytest.approx([D1, D4, D2], rel=1e-6)
    assert response.total == 3  # d3 matches no term


def test_k1_b_and_boosts_are_knobs(films_index: Path) -> None:
    engine = EmbeddedEngine(films_index)
    assert engine.knobs == {"k1": 1.2, "b": 0.75, "title_boost": 2.0, "text_boost": 1.0}
    # title boost 0: only d4's text matches: ln(10/3) / 2.1
    only_text = engine.search("star wars", {"title_boost": 0}, top=10)
    assert scores(only_text) == [("d4", pytest.approx(math.log(10 / 3) / 2.1, rel=1e-6))]
    assert only_text.total == 1
    # k1 0.5: ln(10/3) / (1 + 0.5 * (0.25 + 0.75 * 4 / 4.5)) = ln(10/3) / 1.458333
    k1 = engine.search("star wars", {"title_boost": 0, "k1": 0.5}, top=10)
    assert scores(k1) == [("d4", pytest.approx(math.log(10 / 3) / (1 + 0.5 * (0.25 + 0.75 * 4 / 4.5)), rel=1e-6))]
    # b 0: no length normalisation: every tf-1 term weighs idf / 2.2
    b0 = engine.search("star wars", {"b": 0}, top=10)
    assert scores(b0) == [("d1", pytest.approx(2 * 2 * LN2 / 2.2, rel=1e-6)),
                          ("d4", pytest.approx(2 * LN2 / 2.2 + math.log(10 / 3) / 2.2, rel=1e-6)),
                          ("d2", pytest.approx(2 * LN2 / 2.2, rel=1e-6))]


def test_top_cuts_and_total_counts_every_match(films_index: Path) -> None:
    response = EmbeddedEngine(films_index).search("star wars", top=2)
    assert [h.id for h in response.hits] == ["d1", "d4"] and response.total == 3


def test_no_match_is_zero_hits(films_index: Path) -> None:
    response = EmbeddedEngine(films_index).search("zzz qqq", top=10)
    assert response.hits == () and response.total == 0


def test_display_fields_come_with_hits(films_index: Path) -> None:
    engine = EmbeddedEngine(films_index)
    assert engine.search("godfather", top=1).hits[0].fields == {"title": "The Godfather"}
    both = EmbeddedEngine(films_index, display=["title", "text"]).search("godfather", top=1).hits[0]
    assert both.fields == {"title": "The Godfather", "text": "A crime family saga"}
    assert EmbeddedEngine(films_index, display=[]).search("godfather", top=1).hits[0].fields == {}
    with pytest.raises(EngineConfigError, match="display field 'rating' is not stored"):
        EmbeddedEngine(films_index, display=["rating"])


def test_ties_are_ordered_by_index_order_also_at_the_cut(tmp_path: Path) -> None:
    rows = [{"_id": f"t{i}", "text": "same words here"} for i in (3, 1, 2)] + [{"_id": "x", "text": "other"}]
    info = build_index(write_jsonl(tmp_path, "c.jsonl", rows), tmp_path / "idx")
    engine = EmbeddedEngine(info.path)
    every = engine.search("same", top=10)
    assert [h.id for h in every.hits] == ["t3", "t1", "t2"] and len({h.score for h in every.hits}) == 1
    assert [h.id for h in engine.search("same", top=2).hits] == ["t3", "t1"]  # corpus order, not id order


def test_other_k1_b_are_built_once_and_cached_in_the_folder(films_index: Path, tmp_path: Path) -> None:
    folder = shutil.copytree(films_index, tmp_path / "copy")
    assert not (folder / "bm25" / "lucene-k1=0.9-b=0.4").exists()
    EmbeddedEngine(folder).search("star", {"k1": 0.9, "b": 0.4}, top=1)
    assert sorted(p.name for p in (folder / "bm25" / "lucene-k1=0.9-b=0.4").iterdir()) == ["text", "title"]
    # a fresh engine loads the cached matrices and scores the same
    again = EmbeddedEngine(folder).search("star", {"k1": 0.9, "b": 0.4}, top=3)
    fresh = EmbeddedEngine(films_index).search("star", {"k1": 0.9, "b": 0.4}, top=3)
    assert scores(again) == scores(fresh)


@pytest.mark.parametrize(("knobs", "message"), [
    ({"k1": -1}, "k1 must be a number >= 0 (1.2 is usual); got -1"),
    ({"b": 1.5}, "b must be a number between 0 and 1 (0.75 is usual); got 1.5"),
    ({"title_boost": "high"}, "the boost of field 'title' must be a number >= 0; got 'high'"),
    ({"titel_boost": 1}, "engine 'index' has no knob 'titel_boost' (did you mean 'title_boost'?); its knobs: k1, b, "
                         "title_boost, text_boost"),
])
def test_bad_knob_values_are_refused_before_searching(films_index: Path, knobs: dict, message: str) -> None:
    with pytest.raises(EngineConfigError) as caught:
        EmbeddedEngine(films_index).search("star", knobs, top=1)
    assert str(caught.value) == message


def test_stop_words_and_the_index_description(tmp_path: Path) -> None:
    corpus = write_jsonl(tmp_path, "c.jsonl", FILMS)
    plain = EmbeddedEngine(build_index(corpus, tmp_path / "plain").path)
    stop = EmbeddedEngine(build_index(corpus, tmp_path / "stop", stopwords="en").path)
    assert [h.id for h in plain.search("the", top=5).hits] == ["d3", "d4"]
    assert stop.search("the", top=5).hits == ()
    info = read_info(tmp_path / "plain")
    assert (info.documents, info.fields, info.k1, info.b, info.method) == (4, {"title": 1.0, "text": 1.0}, 1.2, 0.75,
                                                                          "lucene")
    meta = json.loads((tmp_path / "plain" / "gainscope-index.json").read_text())
    assert meta["analyzer"] == {"lowercase": True, "pattern": r"(?u)\b\w\w+\b", "stopwords": None}


def test_id_field_other_fields_and_knob_names(tmp_path: Path) -> None:
    rows = [{"pid": 7, "name": "red shoe", "body-text": ["leather", "red"], "price": 10},
            {"pid": 8, "name": "blue hat", "body-text": ["wool"], "price": 12}]
    info = build_index(write_jsonl(tmp_path, "p.jsonl", rows), tmp_path / "idx", fields="name^3,body-text",
                       id_field="pid")
    engine = EmbeddedEngine(info.path)
    assert engine.knobs == {"k1": 1.2, "b": 0.75, "name_boost": 3.0, "body_text_boost": 1.0}
    assert [h.id for h in engine.search("red leather", top=5).hits] == ["7"]
    assert engine.document("8") == {"name": "blue hat", "body-text": ["wool"], "price": 12}


def test_parse_fields() -> None:
    assert parse_fields("title^2,text") == {"title": 2.0, "text": 1.0}
    assert parse_fields(" title ^ 0.5 , body ") == {"title": 0.5, "body": 1.0}
    for spec, message in [("title^x", "the boost of 'title' in --fields 'title^x' is not a number: 'x'"),
                          ("title,title", "field 'title' is named twice in the fields 'title,title'"),
                          ("title^-1", "the boost of field 'title' must be a number >= 0; got -1.0"),
                          ("a b", "cannot read the field 'a b' in --fields 'a b'; write fields as title^2,text (a "
                                  "name, optionally ^ and a boost)")]:
        with pytest.raises(EngineConfigError) as caught:
            parse_fields(spec)
        assert str(caught.value) == message


def test_building_refuses_bad_corpora_and_leaves_nothing_behind(tmp_path: Path) -> None:
    cases = [
        ([{"_id": "a", "text": "x"}, {"_id": "a", "text": "y"}], InconsistentInputError,
         "c.jsonl:2: document id 'a' is given again (first on line 1); each document once"),
        ([{"title": "no id"}], FormatError, "c.jsonl:1: a document needs an id (one of _id, id, doc_id, docid, pid); "
                                            "keys: title; name the id field with --id-field"),
        ([{"_id": "a", "text": {"nested": 1}}], FormatError,
         "c.jsonl:1: field 'text' holds dict \"{'nested': 1}\", which is not text; index text fields only (--fields "
         "names them)"),
        ([{"_id": "", "text": "x"}], FormatError, "c.jsonl:1: a document id must be a non-empty string or an integer; "
                                                  "got ''"),
        ([{"_id": "a", "n": 1}], InputError, "c.jsonl:1: the first document has no text field to index; name the "
                                             "fields with --fields"),
    ]
    for rows, error, message in cases:
        corpus = write_jsonl(tmp_path, "c.jsonl", rows)
        with pytest.raises(error) as caught:
            build_index(corpus, tmp_path / "idx", fields="text" if "nested" in str(rows) else None)
        assert str(caught.value) == f"{tmp_path}/{message}"
        assert not (tmp_path / "idx").exists()
        assert [p.name for p in tmp_path.iterdir()] == ["c.jsonl"]  # no half-built folder left
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(InputError, match="no document to index"):
        build_index(tmp_path / "empty.jsonl", tmp_path / "idx")
    write_jsonl(tmp_path, "c.jsonl", FILMS)
    with pytest.raises(InputError, match=r"no document has the field 'body'; the documents' fields are: title, text"):
        build_index(tmp_path / "c.jsonl", tmp_path / "idx", fields="title,body")


def test_an_existing_folder_is_replaced_only_when_asked_and_only_if_it_is_an_index(tmp_path: Path) -> None:
    corpus = write_jsonl(tmp_path, "c.jsonl", FILMS)
    build_index(corpus, tmp_path / "idx")
    with pytest.raises(EngineConfigError, match="already exists; give another --index folder, or --overwrite"):
        build_index(corpus, tmp_path / "idx")
    assert build_index(corpus, tmp_path / "idx", fields="title", overwrite=True).fields == {"title": 1.0}
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(EngineConfigError, match="exists and is not a gainscope index; it is left as it is"):
        build_index(corpus, tmp_path / "mine", overwrite=True)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_a_folder_that_is_not_an_index(tmp_path: Path) -> None:
    with pytest.raises(EngineConfigError) as caught:
        EmbeddedEngine(tmp_path)
    assert str(caught.value) == (f"{tmp_path} is not a gainscope index (no gainscope-index.json); build one with: "
                                 f"gainscope index CORPUS --index {tmp_path}")


def test_a_hit_is_a_document_holding_a_query_term_even_with_score_zero(tmp_path: Path) -> None:
    # atire's idf is ln(N / df): 0 for a term in every document, so every score is 0, yet all three match
    rows = [{"_id": f"x{i}", "text": f"common word{i}"} for i in range(3)]
    info = build_index(write_jsonl(tmp_path, "c.jsonl", rows), tmp_path / "idx", method="atire")
    response = EmbeddedEngine(info.path).search("common", top=10)
    assert [(h.id, h.score) for h in response.hits] == [("x0", 0.0), ("x1", 0.0), ("x2", 0.0)]
    assert response.total == 3
    assert [h.id for h in EmbeddedEngine(info.path).search("word1 nothing", top=10).hits] == ["x1"]
