"""Session DCG of an agent's searches: the core metric ``sDCG`` (:class:`gainscope.metrics.families.session.SessionDCG`,
where the formula and its conventions are), called over plain unique-result numbers.

The searches of the evaluated turn, in order (iteration, then search), are the session's queries; each unique
result counts once, at its first occurrence (within ``depth``); ``gain_map`` weights each grade and must give
every grade met.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gainscope.agents.metrics import POLICIES
from gainscope.core.sessions import Session, build_session_run
from gainscope.evaluation import compute
from gainscope.metrics.families.session import SessionDCG

__all__ = ["session_dcg"]


def session_dcg(searches: Sequence[Sequence[int]], gains: Mapping[int, float | None], *, b: float = 2.0,
                bq: float = 4.0, depth: int | None = None, gain_map: Mapping[float, float] | None = None) -> float:
    """sDCG of the searches (each a list of unique-result numbers in rank order; None gains are unknown)."""
    metric = SessionDCG(b, bq, depth, "linear" if gain_map is None else gain_map)
    docs = [(str(c), q) for q, ranking in enumerate(searches, start=1) for c in ranking]
    numbers = tuple(q for _, q in docs)
    session = Session("session", tuple(d for d, _ in docs), numbers, numbers, len(searches),
                      {str(c): g for c, g in gains.items()})
    return compute(build_session_run([session], POLICIES), [metric], warn=False).values[0, 0].item()
