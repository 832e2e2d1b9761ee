"""What the C scanner keeps per judged position and per judgment (issue 19 item 4: 200,000 queries x 50 documents
under 2 s, which is mostly memory touched for the first time): ranks and judgment rows as int32, and no float grade
per judgment for judgments the C reader read (their integer grades are read where needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gainscope.core.judged_run import PreparedJudgments
from gainscope.core.policies import Policies
from gainscope.io import read_judgments
from gainscope.io.scan import judged_run_of, native_available, scan_trec_run

pytestmark = pytest.mark.skipif(not native_available(), reason="the C scanner is not built")

# q1: a 2, b -1 (pooled, unjudged), c 0; q2: d 1. The run ranks q1: b, a, x (not judged), c; q2: y, d.
QRELS = "q1 0 a 2\nq1 0 b -1\nq1 0 c 0\nq2 0 d 1\n"
RUN = ("q1 Q0 b 1 4.0 t\nq1 Q0 a 2 3.0 t\nq1 Q0 x 3 2.0 t\nq1 Q0 c 4 1.0 t\n"
       "q2 Q0 y 1 2.0 t\nq2 Q0 d 2 1.0 t\n")


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "j.qrels").write_text(QRELS, encoding="ascii")
    (tmp_path / "r.run").write_text(RUN, encoding="ascii")
    return tmp_path / "j.qrels", tmp_path / "r.run"


@pytest.mark.parametrize("parts", [1, 2])
@pytest.mark.parametrize(("policies", "ranks", "rows"), [
    # every judged position: q1 b (row 1) at 1, a (row 0) at 2, c (row 2) at 4; q2 d (row 3) at 2
    ({}, [1, 2, 4, 2], [1, 0, 2, 3]),
    # judged only: b's grade -1 is "unjudged", and x is not judged: q1 a at 1, c at 2; q2 d at 1
    ({"judged_only": True}, [1, 2, 1], [0, 2, 3]),
    # judged only, negative grades nonrelevant: b counts as judged (grade 0): b 1, a 2, c 3; q2 d 1
    ({"judged_only": True, "negative_grades": "nonrelevant"}, [1, 2, 3, 1], [1, 0, 2, 3]),
])
def test_ranks_and_judgment_rows_are_int32(files: tuple[Path, Path], parts: int, policies: dict[str, object],
                                           ranks: list[int], rows: list[int]) -> None:
    pol = Policies(**policies)  # type: ignore[arg-type]
    prepared = PreparedJudgments.of(read_judgments(files[0]), pol.negative_grades)
    scanned = scan_trec_run(prepared, files[1], pol, parts=parts)
    assert not isinstance(scanned, str), scanned
    positions = scanned.positions
    assert positions.hit_rank.dtype == np.int32 and positions.hit_row.dtype == np.int32
    assert positions.hit_rank.tolist() == ranks and positions.hit_row.tolist() == rows
    assert positions.hit_offsets.tolist() == [0, len(ranks) - 1, len(ranks)]


@pytest.mark.parametrize(("negative", "grades"), [("unjudged", [-1.0, 2.0, 0.0, 1.0]),
                                                  ("nonrelevant", [0.0, 2.0, 0.0, 1.0])])
def test_scanned_judgments_are_evaluated_without_a_float_grade_per_judgment(files: tuple[Path, Path], negative: str,
                                                                            grades: list[float]) -> None:
    judgments = read_judgments(files[0])
    assert judgments.arrays is not None  # read by the C reader
    prepared = PreparedJudgments.of(judgments, negative)
    jr, _ = judged_run_of(prepared, files[1], Policies(negative_grades=negative))  # type: ignore[arg-type]
    assert "row_grades" not in prepared.__dict__  # never made
    # the grades of the judged positions in final order: q1 b, a, c; q2 d
    assert jr.grades.dtype == np.float64 and jr.grades.tolist() == grades
    assert jr.rank.dtype == np.int64 and jr.rank.tolist() == [1, 2, 4, 2]
    # made when asked for, as the frame's grades
    assert prepared.row_grades.tolist() == [2.0, 0.0 if negative == "nonrelevant" else -1.0, 0.0, 1.0]


def test_the_qrels_reader_keeps_per_judgment_only_its_ids_query_and_one_byte_grade(files: tuple[Path, Path]) -> None:
    from gainscope import _scan  # type: ignore[attr-defined]

    out = _scan.read_qrels(str(files[0]), 4)
    # per judgment: doc id (bytes and an int64 offset), query (int32), grade (int8); no hash of the doc id (the
    # index hashes those of the ranked queries as the scan reads them)
    assert "doc_hash" not in out
    sizes = [memoryview(out[key]).nbytes for key in ("doc_offsets", "row_query", "grades")]
    assert (sizes, out["grade_bytes"]) == ([40, 16, 4], 1)
    assert bytes(out["doc_blob"]) == b"abcd"
