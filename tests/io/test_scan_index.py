"""The scanner's index of judgments (``_scan.JudgmentIndex``, whose loops run without the GIL) refuses a query id
given twice and a judgment's query index out of range; ``prepared_for_scan`` builds it on another thread beside the
preparation of large judgments, and the judged run is the same as with the index built when the scan needs it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gainscope.io.scan as scan
from gainscope.core.judged_run import PreparedJudgments
from gainscope.core.policies import Policies
from gainscope.io import read_judgments

pytestmark = pytest.mark.skipif(not scan.native_available(), reason="the C scanner is not built")


def index(qids: list[bytes], docs: list[bytes], rows: list[int]):  # type: ignore[no-untyped-def]
    from gainscope import _scan  # type: ignore[attr-defined]

    qoff = np.cumsum([0] + [len(q) for q in qids]).astype(np.int64)
    doff = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    return _scan.JudgmentIndex(b"".join(qids), qoff, b"".join(docs), doff, np.array(rows, dtype=np.int32), None,
                               unique=True)


def test_the_index_refuses_a_query_given_twice_and_a_query_index_out_of_range() -> None:
    index([b"q1", b"q2"], [b"d1", b"d2"], [0, 1])  # fine
    with pytest.raises(ValueError, match="query id q2 given twice"):
        index([b"q1", b"q2", b"q2"], [b"d1"], [0])
    with pytest.raises(ValueError, match="judgment 1 has query index 2 out of range"):
        index([b"q1", b"q2"], [b"d1", b"d2"], [0, 2])
    with pytest.raises(ValueError, match="judgment 0 has query index -1 out of range"):
        index([b"q1"], [b"d1"], [-1])


def test_the_index_built_beside_the_preparation_gives_the_same_judged_run(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, run = tmp_path / "q.qrels", tmp_path / "r.run"
    qrels.write_text("".join(f"q{q} 0 d{d} {(q + d) % 3 - 1}\n" for q in range(30) for d in range(0, 40, 3)))
    run.write_text("".join(f"q{q} Q0 d{d} {d + 1} {100 - d} t\n" for q in range(0, 35, 2) for d in range(20)))
    policies = Policies()
    judgments = read_judgments(qrels)
    assert judgments.arrays is not None  # read by the C reader
    plain = PreparedJudgments.of(judgments, policies.negative_grades)
    monkeypatch.setattr(scan, "INDEX_ALONGSIDE", 1)
    beside = scan.prepared_for_scan(judgments, policies)
    assert beside in scan._indexes and plain not in scan._indexes
    with pytest.warns(Warning):  # the queries ranked without judgments, and the judged ones without a ranking
        a, _ = scan.judged_run_of(plain, run, policies)
    with pytest.warns(Warning):
        b, _ = scan.judged_run_of(beside, run, policies)
    assert a.query_ids == b.query_ids
    for name in ("offsets", "rank", "grades", "scores", "num_ret", "judged_offsets", "judged_grades"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name


def test_a_doc_judged_twice_is_named() -> None:
    from gainscope import _scan  # type: ignore[attr-defined]

    with pytest.raises(ValueError, match="judgment of doc d1 given twice"):
        _scan.JudgmentIndex(b"q1", np.array([0, 2], dtype=np.int64), b"d1d1", np.array([0, 2, 4], dtype=np.int64),
                            np.zeros(2, dtype=np.int32), None)
