"""Golden parity with trec_eval 10: every file in shared/fixtures/trec_eval, through the real command line.

The command lines are the ones the fixtures' README lists (with ``--extra-columns ignore`` for the run whose
lines have junk after the tag, which trec_eval ignores and gainscope refuses by default); gainscope's output
must be identical line by line (measure names, order, values to 4 decimals). The summary of the test run
counts matched values.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.parity

CASES = [
    ("out.test", ["qrels.test", "results.test"], []),
    ("out.test", ["qrels.test.with-comments", "results.test"], []),
    ("out.test.a", ["qrels.test", "results.test"], ["-m", "all_trec"]),
    ("out.test.aq", ["qrels.test", "results.test"], ["-m", "all_trec", "-q"]),
    # results.trunc has junk after the run tag, which trec_eval ignores: gainscope is told to, as well
    ("out.test.aqc", ["qrels.test", "results.trunc"], ["-m", "all_trec", "-q", "-c", "--extra-columns", "ignore"]),
    ("out.test.aqcM", ["qrels.test", "results.trunc"],
     ["-m", "all_trec", "-q", "-c", "-M100", "--extra-columns", "ignore"]),
    ("out.test.aql", ["qrels.rel_level", "results.test"], ["-m", "all_trec", "-mrelstring.20", "-q", "-l2"]),
    ("out.test.meas_params", ["qrels.test", "results.test"],
     ["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
      "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
      "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20"]),
]


@pytest.mark.parametrize(("golden", "files", "flags"), CASES, ids=[f"{c[0]}[{c[1][0]}]" for c in CASES])
def test_cli_reproduces_trec_eval(trec_fixtures: Path, cli_runner, golden: str, files: list[str],
                                  flags: list[str]) -> None:
    paths = [str(trec_fixtures / f) for f in files]
    code, out, _err = cli_runner("evaluate", *paths, "--format", "trec_eval", *flags)
    assert code == 0
    expected = (trec_fixtures / golden).read_text().splitlines()
    got = out.splitlines()
    mismatches = [(i + 1, g, e) for i, (g, e) in enumerate(zip(got, expected, strict=False)) if g != e]
    assert not mismatches, f"{len(mismatches)} line(s) differ, first: {mismatches[:3]}"
    assert len(got) == len(expected)


def test_golden_value_count(trec_fixtures: Path, cli_runner) -> None:
    """All golden values matched: counts the numeric values compared across the fixture set."""
    compared = 0
    for golden, files, flags in CASES:
        paths = [str(trec_fixtures / f) for f in files]
        _, out, _ = cli_runner("evaluate", *paths, "--format", "trec_eval", *flags)
        expected = (trec_fixtures / golden).read_text().splitlines()
        for g, e in zip(out.splitlines(), expected, strict=True):
            assert g == e
            compared += 1
    assert compared == 30 * 2 + 99 + 387 * 4 + 88
