"""Score normalisations: each run's scores made comparable, query by query, before a score-based fusion.

For one run and one query, with the run's scores ``s`` of its ``n`` retrieved documents, ``r`` their ranks
(1..n, in gainscope's order: score descending, equal scores by doc id descending), and ``c`` the candidates of
the query (every document that at least one of the fused runs retrieved for it):

==========  ======================================================  ============================================
name        retrieved document                                      candidate the run did not retrieve
==========  ======================================================  ============================================
``none``    ``s``                                                   none (the method decides)
``minmax``  ``(s - min s) / max(max s - min s, 1e-9)``              none
``max``     ``s / max(max s, 1e-9)``                                none
``sum``     ``(s - min s) / max(sum s - n min s, 1e-9)``            none
``zmuv``    ``(s - mean s) / max(sd s, 1e-9)``, population ``sd``   none
``rank``    ``1 - (r - 1) / n``                                     none
``borda``   ``1 - (r - 1) / c``                                     ``1/2 - (n - 1) / (2 c)``, the mean value of
                                                                    the positions ``n + 1 .. c`` it could hold
==========  ======================================================  ============================================

The ``1e-9`` floors are ranx's: a query whose scores are all equal gets 0 from ``minmax``, ``sum`` and
``zmuv``. ``max`` keeps its floor too, so a query whose best score is 0 or negative is divided by ``1e-9``
(order kept, magnitudes huge): use ``minmax`` for such scores. ``rank`` and ``borda`` use only ranks, so they
also apply to runs without scores.

References: min-max, Lee (SIGIR 1997, "Analyses of multiple evidence combination"); sum and ZMUV, Montague &
Aslam (CIKM 2001, "Relevance score normalization for metasearch"); Borda, Renda & Straccia (SAC 2003, "Web
metasearch: rank vs. score based rank aggregation methods"); as implemented by ranx (Bassani & Romelli, CIKM
2022, ``ranx.fusion``), whose numbers these reproduce.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

__all__ = ["FLOOR", "NORMALIZATIONS", "Normalization"]

#: the smallest denominator of a normalisation (ranx's guard against dividing by zero)
FLOOR = 1e-9


@dataclass(frozen=True)
class Normalization:
    """A declared normalisation: its name, formula, whether it reads scores, and how it is computed.

    ``value`` is a polars expression over the columns ``score``, ``rank``, ``n`` and ``c`` of one run's rows,
    evaluated per (run, query) group; ``unretrieved`` gives the value of the candidates a run did not retrieve
    from arrays ``n`` and ``c`` (None: they have no value).
    """

    name: str
    formula: str
    uses_scores: bool
    value: Callable[[], pl.Expr]
    unretrieved: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None


_GROUP = ("run", "query_id")


def _stat(expr: pl.Expr) -> pl.Expr:
    return expr.over(_GROUP)


def _floored(expr: pl.Expr) -> pl.Expr:
    return pl.max_horizontal(expr, pl.lit(FLOOR))


def _minmax() -> pl.Expr:
    s = pl.col("score")
    return (s - _stat(s.min())) / _floored(_stat(s.max()) - _stat(s.min()))


def _max() -> pl.Expr:
    s = pl.col("score")
    return s / _floored(_stat(s.max()))


def _sum() -> pl.Expr:
    s = pl.col("score")
    return (s - _stat(s.min())) / _floored(_stat(s.sum()) - pl.col("n") * _stat(s.min()))


def _zmuv() -> pl.Expr:
    s = pl.col("score")
    return (s - _stat(s.mean())) / _floored(_stat(s.std(ddof=0)))


def _rank() -> pl.Expr:
    return 1.0 - (pl.col("rank") - 1) / pl.col("n")


def _borda() -> pl.Expr:
    return 1.0 - (pl.col("rank") - 1) / pl.col("c")


def _borda_unretrieved(n: np.ndarray, c: np.ndarray) -> np.ndarray:
    return 0.5 - (n - 1) / (2.0 * c)


#: every normalisation, by name
NORMALIZATIONS: dict[str, Normalization] = {
    "none": Normalization("none", "s", True, lambda: pl.col("score")),
    "minmax": Normalization("minmax", "(s - min s) / (max s - min s)", True, _minmax),
    "max": Normalization("max", "s / max s", True, _max),
    "sum": Normalization("sum", "(s - min s) / (sum s - n min s)", True, _sum),
    "zmuv": Normalization("zmuv", "(s - mean s) / sd s", True, _zmuv),
    "rank": Normalization("rank", "1 - (r - 1) / n", False, _rank),
    "borda": Normalization("borda", "1 - (r - 1) / c; unretrieved 1/2 - (n - 1) / (2c)", False, _borda,
                           _borda_unretrieved),
}
