"""The C scanner finds each ranked query's judgments whatever order the run lists its queries in: it tries the
query after the last judged one first (runs usually follow the judgments' order) and compares short ids as
machine words, not with memcmp. Ids here are short strings over two letters, so that many share their length and
differ in one byte only, at any place (the word comparison's edges: 7, 8, 9, 16 and 17 bytes); the run lists a
permutation of the judged queries with unjudged ones among them, and is cut in one to three parts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.property.test_scan_equals_readers import assert_same, both

from gainscope.core.judged_run import JudgedRun, PreparedJudgments
from gainscope.core.policies import Policies
from gainscope.io import read_judgments
from gainscope.io.scan import native_available, scan_trec_run

needs_native = pytest.mark.skipif(not native_available(), reason="the C scanner is not built")

IDS = st.text(alphabet="ab", min_size=1, max_size=18)


@st.composite
def qrels_and_run(draw: st.DrawFn) -> tuple[str, str]:
    judged = draw(st.lists(IDS, min_size=1, max_size=8, unique=True))
    unjudged = draw(st.lists(IDS.filter(lambda q: q not in judged), max_size=3, unique=True))
    qrels: list[str] = []
    docs: dict[str, list[str]] = {}
    for q in judged:
        docs[q] = draw(st.lists(IDS, min_size=1, max_size=6, unique=True))
        qrels += [f"{q} 0 {d} {draw(st.integers(0, 2))}" for d in docs[q]]
    order = draw(st.permutations(judged + unjudged))
    run: list[str] = []
    for q in order:
        ranked = draw(st.lists(IDS, min_size=1, max_size=6, unique=True))
        ranked += [d for d in docs.get(q, []) if d not in ranked and draw(st.booleans())]
        run += [f"{q} Q0 {d} {i + 1} {len(ranked) - i} tag" for i, d in enumerate(ranked)]
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


@needs_native
@settings(max_examples=200, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(files=qrels_and_run(), parts=st.integers(1, 3))
def test_scanner_finds_judgments_in_any_query_order(tmp_path: Path, files: tuple[str, str], parts: int) -> None:
    (tmp_path / "q.txt").write_text(files[0], encoding="ascii")
    (tmp_path / "r.txt").write_text(files[1], encoding="ascii")
    policies = Policies()
    prepared = PreparedJudgments.of(read_judgments(tmp_path / "q.txt"), policies.negative_grades)
    whole, cut = (scan_trec_run(prepared, tmp_path / "r.txt", policies, parts=n) for n in (1, parts))
    assert not isinstance(whole, str) and not isinstance(cut, str)
    assert whole.positions.query_ids == cut.positions.query_ids
    for name in ("num_ret", "hit_offsets", "hit_rank", "hit_row", "hit_score", "tied_groups", "rank_down",
                 "rank_steps"):
        assert np.array_equal(getattr(whole.positions, name), getattr(cut.positions, name)), name
    (fast, fast_warnings), (slow, slow_warnings) = both(prepared, tmp_path / "r.txt", policies)
    assert isinstance(fast, JudgedRun) and isinstance(slow, JudgedRun), (fast, slow)
    assert_same(fast, slow)
    assert fast_warnings == slow_warnings
