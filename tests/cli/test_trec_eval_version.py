"""``--trec-eval-version`` is one policy option with one meaning in every command that evaluates: ``9`` gives
trec_eval 9's and pytrec_eval's numbers (scores rounded to float32 before ordering, the legacy recall-level
rounding of ``iprec_at_recall`` and ``11pt_avg``), ``10`` (the default) trec_eval 10's.

The data, worked by hand:

* ``tie.run`` ranks ``a`` (score 1.00000001, relevant) above ``b`` (1.0, judged 0) in doubles; in float32 the two
  scores are equal, and trec_eval's tie order (doc id descending) puts ``b`` first. P@1: 1 under 10, 0 under 9.
* ``curve.run`` retrieves a, x, y, c; R = 4 (a, c, d, e). Recall 0.3 asks for c = round(0.3 * 4) = round(1.2)
  = 1 relevant document under trec_eval 10, and floor(1.2 + 0.9) = 2 under trec_eval 9. IPrec@0.3 is the best
  precision at or after the rank of the c-th relevant: c = 1 -> max(P@1, ..., P@4) = P@1 = 1; c = 2 -> P@4 = 2/4
  = 0.5. ``tie.run`` retrieves one relevant document: 1 under 10 (at rank 1 or 2, then P = 1/1 or 1/2, max 1),
  0 under 9 (fewer than 2 relevant retrieved).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 1\nq1 0 d 1\nq1 0 e 1\n"
TIE = "q1 Q0 a 1 1.00000001 r\nq1 Q0 b 2 1.0 r\n"
CURVE = "q1 Q0 a 1 4 s\nq1 Q0 x 2 3 s\nq1 Q0 y 3 2 s\nq1 Q0 c 4 1 s\n"
#: (P@1, IPrec@0.3) of (tie.run, curve.run) under each version
EXPECTED = {"10": ((1.0, 1.0), (1.0, 1.0)), "9": ((0.0, 0.0), (1.0, 0.5))}


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str, str]:
    paths = []
    for name, text in (("qrels", QRELS), ("tie.run", TIE), ("curve.run", CURVE)):
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    return paths[0], paths[1], paths[2]


def _metric(version: str) -> str:
    return "IPrec@0.3" if version == "10" else "IPrec(rounding=legacy)@0.3"


@pytest.mark.parametrize("version", ["10", "9"])
def test_evaluate(files, cli_runner, version: str) -> None:  # type: ignore[no-untyped-def]
    qrels, tie, curve = files
    code, out, _ = cli_runner("evaluate", qrels, tie, curve, "-m", "P.1", "-m", "iprec_at_recall.0.30",
                              "--format", "json", "--trec-eval-version", version)
    assert code == 0
    got = [(r["aggregates"]["P@1"], r["aggregates"][_metric(version)]) for r in json.loads(out)]
    assert got == [pytest.approx(v) for v in EXPECTED[version]]


@pytest.mark.parametrize("version", ["10", "9"])
def test_compare(files, cli_runner, version: str) -> None:  # type: ignore[no-untyped-def]
    qrels, tie, curve = files
    code, out, _ = cli_runner("compare", qrels, tie, curve, "-m", "P.1", "-m", "iprec_at_recall.0.30",
                              "--format", "json", "--trec-eval-version", version)
    assert code == 0
    data = json.loads(out)
    means = {(row["run"], row["metric"]): row["mean"] for row in data["rows"]}
    (tie_p, tie_i), (curve_p, curve_i) = EXPECTED[version]
    assert means == {("r", "P@1"): tie_p, ("s", "P@1"): curve_p,
                     ("r", _metric(version)): tie_i, ("s", _metric(version)): curve_i}


@pytest.mark.parametrize(("version", "code"), [("10", 0), ("9", 1)])
def test_gate(files, cli_runner, version: str, code: int) -> None:  # type: ignore[no-untyped-def]
    qrels, tie, _ = files
    got, out, _ = cli_runner("gate", qrels, tie, "-m", "P@1", "--fail-if", "P@1 < 0.5",
                             "--trec-eval-version", version)
    assert got == code
    assert f"P@1 = {EXPECTED[version][0][0]:.4f}" in out


@pytest.mark.parametrize("version", ["10", "9"])
def test_explain(files, cli_runner, version: str) -> None:  # type: ignore[no-untyped-def]
    qrels, _, curve = files
    code, out, _ = cli_runner("explain", qrels, curve, "--query", "q1", "-m", "iprec_at_recall.0.30",
                              "--format", "json", "--trec-eval-version", version)
    assert code == 0
    data = json.loads(out)
    assert (data["metric"], data["value"]) == (_metric(version), EXPECTED[version][1][1])


def test_report(files, cli_runner, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    qrels, tie, curve = files
    code, _, _ = cli_runner("report", qrels, tie, curve, "-m", "P.1", "--trec-eval-version", "9",
                            "-o", str(tmp_path / "r.html"))
    assert code == 0
    assert "rounded to float32 before ordering, as trec_eval 9 and pytrec_eval" in (tmp_path / "r.html").read_text()


def test_evaluate_names_the_convention(files, cli_runner) -> None:  # type: ignore[no-untyped-def]
    qrels, tie, _ = files
    code, out, _ = cli_runner("evaluate", qrels, tie, "-m", "P@1", "--trec-eval-version", "9")
    assert code == 0 and "rounded to float32 before ordering, as trec_eval 9 and pytrec_eval" in out
    code, _, err = cli_runner("evaluate", qrels, tie, "-m", "P@1", "--trec-eval-version", "8")
    assert code == 2 and "'8' is not one of '10', '9'" in err


@pytest.mark.parametrize(("version", "means"), [("10", [1.0, 1.0, 1.0]), ("9", [0.0, 0.5, 1.0])])
def test_agreement(files, cli_runner, tmp_path: Path, version: str, means: list[float]) -> None:  # type: ignore[no-untyped-def]
    # a third run, u: c then a; 2 relevant in 2: IPrec@0.3 = 1 under both versions
    qrels, tie, curve = files
    (tmp_path / "u.run").write_text("q1 Q0 c 1 4 u\nq1 Q0 a 2 3 u\n")
    code, out, _ = cli_runner("agreement", qrels, qrels, "--run", tie, "--run", curve, "--run", str(tmp_path / "u.run"),
                              "-m", "iprec_at_recall.0.30", "--format", "json", "--trec-eval-version", version)
    assert code == 0
    (ranking,) = json.loads(out)["rankings"]
    assert ranking["metric"] == _metric(version) and ranking["systems"] == ["r", "s", "u"]
    assert ranking["a"] == ranking["b"] == means
