"""Any number of snapshots of a case, query by query, with significance: Quepid's snapshot comparison with the
statistics Quepid leaves to notebooks.

Each snapshot is a :class:`~gainscope.cases.Case` (its results and the ratings it is scored with; to score every
snapshot with today's ratings, as Quepid does, build them with one ratings case:
:func:`gainscope.cases.live.case_from_snapshot`). The first is the baseline. For every query (by text):

* each snapshot's score by the scorer (``None`` for a zero-result or unrated query the scorer gives no number),
  and its difference with the baseline's;
* the documents that entered or left the baseline's top ``k`` (``k``: given, else the scorer's depth, else 10).

Significance: the per-query scores go through :func:`gainscope.compare.compare_values` -- each snapshot against
the baseline, paired by query, Student's t, Wilcoxon, randomisation and bootstrap tests, p-values corrected over
every comparison (Holm by default). A query without a number in both snapshots of a pair is left out of that
pair, and the comparison's notes name it; case scores are computed by the case scoring rules (printed with the
conventions).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gainscope.cases.model import Case
from gainscope.cases.scorers import Scorer
from gainscope.cases.scoring import CaseScore, QueryScore, score_case
from gainscope.errors import InputError, InvalidParameterError

__all__ = ["SnapshotComparison", "SnapshotRow", "compare_snapshots", "snapshot_names"]

DEFAULT_DEPTH = 10


@dataclass(frozen=True)
class SnapshotRow:
    """One query across the snapshots: a score per snapshot (None where the snapshot lacks the query), the
    difference with the baseline, and the documents that entered or left the baseline's top ``k``."""

    query: str
    scores: tuple[QueryScore | None, ...]
    deltas: tuple[float | None, ...]
    entered: tuple[tuple[str, ...], ...]
    left: tuple[tuple[str, ...], ...]
    k: int


@dataclass(frozen=True)
class SnapshotComparison:
    """Per-query rows, each snapshot's case score, and the paired tests against the baseline."""

    names: tuple[str, ...]
    sources: tuple[str, ...]
    scores: tuple[CaseScore, ...]
    rows: tuple[SnapshotRow, ...]
    comparison: Any

    @property
    def baseline(self) -> str:
        """The first snapshot's name."""
        return self.names[0]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary."""
        return {
            "snapshots": [{"name": n, "source": s, "scorer": c.scorer, "score": c.score}
                          for n, s, c in zip(self.names, self.sources, self.scores, strict=True)],
            "baseline": self.baseline,
            "queries": [{"query": r.query, "k": r.k, "scores": {n: (None if s is None else s.value) for n, s in
                                                                zip(self.names, r.scores, strict=True)},
                         "deltas": {n: d for n, d in zip(self.names[1:], r.deltas[1:], strict=True)},
                         "entered": {n: list(e) for n, e in zip(self.names[1:], r.entered[1:], strict=True)},
                         "left": {n: list(e) for n, e in zip(self.names[1:], r.left[1:], strict=True)}}
                        for r in self.rows],
            "significance": self.comparison.to_dict(),
            "conventions": {n: list(c.conventions) for n, c in zip(self.names, self.scores, strict=True)},
        }


def snapshot_names(count: int) -> list[str]:
    """``A``, ``B``, ... ``Z``, then ``S27``, ``S28``, ..."""
    return [chr(ord("A") + i) if i < 26 else f"S{i + 1}" for i in range(count)]


def _depth(k: int | None, scorer: Scorer) -> int:
    return k if k is not None else scorer.depth if scorer.depth is not None else DEFAULT_DEPTH


def compare_snapshots(cases: Sequence[Case], scorer: Scorer, *, names: Sequence[str] | None = None,
                      k: int | None = None, settings: Any = None, **options: Any) -> SnapshotComparison:
    """Compare ``cases`` (snapshots, the first the baseline) query by query (see the module docstring); ``options``
    go to :func:`~gainscope.cases.scoring.score_case`, ``settings`` (a :class:`~gainscope.compare.CompareSettings`)
    to the tests."""
    from gainscope.compare import SystemValues, compare_values

    if len(cases) < 2:
        raise InputError(f"a comparison needs at least two snapshots; got {len(cases)}")
    if k is not None and k < 1:
        raise InvalidParameterError(f"k must be >= 1; got {k}")
    labels = list(names) if names is not None else snapshot_names(len(cases))
    if len(labels) != len(cases) or len(set(labels)) != len(labels):
        raise InputError(f"give one distinct name per snapshot; got {labels}")
    scored = [score_case(c, scorer, **options) for c in cases]
    texts = list(dict.fromkeys(q.query for c in cases for q in c.queries))
    if not set(q.query for q in cases[0].queries) & set(q.query for c in cases[1:] for q in c.queries):
        raise InputError("the snapshots share no query with the baseline (queries are matched by text); compare "
                         "snapshots of the same case")
    depth = _depth(k, scorer)
    by_text = [{q.query: q for q in c.queries} for c in cases]
    rows = []
    for text in texts:
        scores = tuple(s.query(text) if text in b else None for s, b in zip(scored, by_text, strict=True))
        base = scores[0]
        deltas = tuple(None if i == 0 or s is None or base is None or s.value is None or base.value is None
                       else s.value - base.value for i, s in enumerate(scores))
        entered: list[tuple[str, ...]] = [()]
        left: list[tuple[str, ...]] = [()]
        for b in by_text[1:]:
            if text not in b or text not in by_text[0]:
                entered.append(())
                left.append(())
                continue
            base_top, top = by_text[0][text].results[:depth], b[text].results[:depth]
            entered.append(tuple(d for d in top if d not in base_top))
            left.append(tuple(d for d in base_top if d not in top))
        rows.append(SnapshotRow(text, scores, deltas, tuple(entered), tuple(left), depth))
    systems = []
    for name, snapshot in zip(labels, scored, strict=True):
        values = [q.value if q.value is not None else math.nan for q in snapshot.queries]
        systems.append(SystemValues(name, tuple(q.query for q in snapshot.queries),
                                    np.asarray(values, dtype=np.float64).reshape(-1, 1)))
    comparison = compare_values([scored[0].scorer], systems, baseline=labels[0], settings=settings)
    sources = tuple(c.name or c.source or name for c, name in zip(cases, labels, strict=True))
    return SnapshotComparison(tuple(labels), sources, tuple(scored), tuple(rows), comparison)
