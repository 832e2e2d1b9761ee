"""Cases go live: a case names an engine and a try; ``case run`` refreshes its results into a snapshot; ``case
compare`` compares any number of snapshots (case files and recorded snapshots) with per-query deltas and tests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from gainscope.cases import read_case
from gainscope.cases.live import case_engine, with_ratings
from gainscope.cli import cli
from gainscope.errors import EngineConfigError, InputError

from .conftest import invoke
from .server import FakeSearchServer, Recorded, Reply


def films_case(folder: Path, **extra: object) -> Path:
    case = {"name": "films", "scorer": "nDCG@10", "scale": [0, 1, 2, 3], **extra, "queries": [
        {"query": "star wars", "id": "sw", "ratings": {"d1": 3, "d4": 1}, "results": ["d4"]},
        {"query": "crime saga", "ratings": {"d3": 3}, "results": []},
    ]}
    path = folder / "case.json"
    path.write_text(json.dumps(case))
    return path


def test_case_run_refreshes_results_with_the_cases_engine_and_try(films_index: Path, tmp_path: Path) -> None:
    shutil.copytree(films_index, tmp_path / "films")
    case = films_case(tmp_path, engine="films", **{"try": {"knobs": {"title_boost": 0}}})
    store, out = tmp_path / "s.sqlite", tmp_path / "fresh.json"
    code, _, err = invoke("case", "run", case, "--snapshot", store, "-o", out)
    assert code == 0, err
    fresh = read_case(out)
    # title boost 0: "star wars" matches only d4's text; "crime saga" d3's text
    assert [(q.query, q.results, q.num_found, dict(q.ratings)) for q in fresh.queries] == [
        ("star wars", ("d4",), 1, {"d1": 3, "d4": 1}), ("crime saga", ("d3",), 1, {"d3": 3})]
    assert fresh.engine == "films" and fresh.try_ == {"knobs": {"title_boost": 0}}
    assert "snapshot 'case/films@" in err and "2 sent now" in err
    # --set on top of the try
    code, _, err = invoke("case", "run", case, "--set", "title_boost=2", "-o", out)
    assert code == 0, err
    assert read_case(out).queries[0].results == ("d1", "d4", "d2")


def test_a_try_changes_the_template_of_a_toml_engine(tmp_path: Path) -> None:
    def behaviour(request: Recorded, n: int) -> Reply:
        return Reply(200, {"hits": [{"id": f"{request.param('q')}|{request.param('fq')}"}]})

    with FakeSearchServer(behaviour) as server:
        (tmp_path / "engines.toml").write_text(f'''
[engines.shop]
kind = "http"
url = "{server.url}/search"
params = {{ q = "{{{{query}}}}", fq = "all" }}
docs = "hits"
id = "id"
''')
        case = films_case(tmp_path, engine="engines.toml:shop",
                          **{"try": {"params": {"q": "{{query}}", "fq": "lang:{{opt.lang}}"}}})
        data = json.loads(case.read_text())
        for q in data["queries"]:
            q["options"] = {"lang": "en"}
        case.write_text(json.dumps(data))
        code, out, err = invoke("case", "run", case)
    assert code == 0, err
    assert [q["results"] for q in json.loads(out)["queries"]] == [["star wars|lang:en"], ["crime saga|lang:en"]]


def test_case_engine_errors(films_index: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="the case names no engine; give one with --engine"):
        case_engine(read_case(films_case(tmp_path)))
    tried = read_case(films_case(tmp_path, engine=str(films_index), **{"try": {"params": {"q": "x"}}}))
    with pytest.raises(EngineConfigError) as caught:
        case_engine(tried)
    assert str(caught.value) == (f"engine {str(films_index)!r} is not declared in TOML, so params cannot be changed; "
                                 "a try sets knobs only for it")
    bad = read_case(films_case(tmp_path, engine=str(films_index), **{"try": {"mapping": "x"}}))
    with pytest.raises(EngineConfigError, match="'try' may set knobs, url, method, params, body, headers; got "):
        case_engine(bad)


def test_a_case_is_not_written_when_a_query_fails(tmp_path: Path) -> None:
    (tmp_path / "engines.toml").write_text('''
[engines.down]
kind = "http"
url = "http://127.0.0.1:9/search"
params = { q = "{{query}}" }
docs = "hits"
id = "id"
''')
    case = films_case(tmp_path, engine="engines.toml:down")
    code, out, err = invoke("case", "run", case, "--max-attempts", "1", "-o", tmp_path / "fresh.json")
    assert code == 4 and out == "" and not (tmp_path / "fresh.json").exists()
    assert "error: 2 queries failed (recorded as failed, not as empty results)" in err
    assert "error: the case is not written: every query needs an answer (what was recorded stays)" in err


def test_compare_any_number_of_snapshots_with_tests(films_index: Path, tmp_path: Path) -> None:
    shutil.copytree(films_index, tmp_path / "films")
    case = films_case(tmp_path, engine="films")
    store = tmp_path / "s.sqlite"
    for boost, name in ((0, "plain"), (2, "boosted")):
        code, _, err = invoke("case", "run", case, "--set", f"title_boost={boost}", "--snapshot", store,
                              "--name", name, "-o", tmp_path / f"{name}.json")
        assert code == 0, err
    code, out, err = invoke("case", "compare", case, tmp_path / "plain.json", "--snapshot", f"{store}:boosted",
                            "--resamples", "100", "--top", "3")
    assert code == 0, err
    assert out.startswith("snapshots: A = films (baseline), B = films, C = boosted\n")
    # star wars: A ranks [d4] (ratings d1 3, d4 1): DCG 1; ideal [3, 1] -> 7 + 1/log2(3) = 7.6309; nDCG 0.1310
    # B [d4] the same; C [d1, d4, d2]: DCG 7 + 1/log2(3) = ideal: 1.0
    assert "│ star wars  │ 0.1310 │ 0.1310 │ +0.0000 │ 1.0000 │ +0.8690 │ 3 │ C: +d1, +d2     │" in out
    # crime saga: A returns nothing (0), B and C find d3 first (1)
    assert "│ crime saga │ 0.0000 │ 1.0000 │ +1.0000 │ 1.0000 │ +1.0000 │ 3 │ B: +d3; C: +d3  │" in out
    assert "case score: A 0.0655, B 0.5655, C 1.0000" in out
    assert "significance of the per-query differences with A:" in out and "│ nDCG@10 │ C            │ 1.0000 │" in out
    data = json.loads(invoke("case", "compare", case, tmp_path / "plain.json", "--snapshot", f"{store}:boosted",
                             "--resamples", "100", "-f", "json")[1])
    assert [s["name"] for s in data["snapshots"]] == ["A", "B", "C"]
    assert [r["run"] for r in data["significance"]["rows"]] == ["A", "B", "C"]
    assert data["queries"][0]["deltas"] == {"B": 0.0, "C": pytest.approx(1 - 1 / (7 + 1 / 1.5849625007211563))}


def test_two_case_files_keep_the_ab_table_and_add_the_tests(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples" / "cases"
    code, out, _ = invoke("case", "compare", examples / "movies_before.json", examples / "movies_after.json",
                          "--resamples", "100")
    assert code == 0
    assert "case score: A 0.3080, B 0.6896 (change +0.3816)" in out
    assert "significance of the per-query differences (B against A):" in out
    assert "│ nDCG@10 │ B            │ 0.6896 │" in out


def test_with_ratings_scores_a_snapshot_with_todays_ratings(tmp_path: Path) -> None:
    old = read_case(films_case(tmp_path))
    data = json.loads((tmp_path / "case.json").read_text())
    data["queries"][0]["ratings"] = {"d4": 3}
    (tmp_path / "today.json").write_text(json.dumps(data))
    rescored = with_ratings(old, read_case(tmp_path / "today.json"))
    assert dict(rescored.queries[0].ratings) == {"d4": 3} and rescored.queries[0].results == ("d4",)


def test_two_cases_with_different_scorers_are_tested_with_the_first_ones(tmp_path: Path) -> None:
    a = films_case(tmp_path)
    b = tmp_path / "b.json"
    b.write_text(a.read_text().replace('"nDCG@10"', '"P@10"'))
    result = CliRunner().invoke(cli, ["case", "compare", str(a), str(b), "--resamples", "50"])
    assert result.exit_code == 0
    assert ("note: the cases name different scorers; the tests compare both scored with A's (nDCG@10); give "
            "--scorer to choose one") in result.stderr
