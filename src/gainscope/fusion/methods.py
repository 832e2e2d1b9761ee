"""Rank-fusion methods: how the runs' views of a candidate document become one fused score.

Notation, for one query and one candidate document ``d`` (a document at least one run retrieved): ``s_i`` its
normalised score in run ``i`` (:mod:`gainscope.fusion.normalization`), ``r_i`` its rank there (1-based, in
gainscope's order), ``R_d`` the runs that retrieved it, ``n_i`` the documents run ``i`` retrieved for the query,
``c`` the candidates of the query, ``w_i`` the run's weight (1 unless given) and ``k`` RRF's constant:

=============  ==============================================================  =======================================
method         fused score of ``d``                                            reference
=============  ==============================================================  =======================================
``combsum``    ``sum_{i in R_d} s_i``                                          Fox & Shaw, TREC-2 (1993)
``combmnz``    ``|R_d| * sum_{i in R_d} s_i``                                  Fox & Shaw (1993)
``combanz``    ``sum_{i in R_d} s_i / |R_d|``                                  Fox & Shaw (1993)
``combmax``    ``max_{i in R_d} s_i``                                          Fox & Shaw (1993)
``combmin``    ``min_{i in R_d} s_i``                                          Fox & Shaw (1993)
``combmed``    ``median_{i in R_d} s_i``                                       Fox & Shaw (1993)
``wsum``       ``sum_{i in R_d} w_i s_i``                                      Vogt & Cottrell, Inf. Retr. 1(3) (1999)
``rrf``        ``sum_{i in R_d} w_i / (k + r_i)``                              Cormack, Clarke & Büttcher, SIGIR 2009
``isr``        ``|R_d| * sum_{i in R_d} 1 / r_i^2``                            Mourão, Martins & Magalhães, CMIG 39
                                                                               (2015)
``log_isr``    ``ln |R_d| * sum_{i in R_d} 1 / r_i^2`` (0 when one run has d)  Mourão et al. (2015)
``bordafuse``  ``sum_i p_i``: ``p_i = c - r_i + 1``, or ``(c - n_i + 1) / 2``  Aslam & Montague, SIGIR 2001
               (the mean of the points left) when run ``i`` missed ``d``
``condorcet``  ``c - position + 1`` in the order of the pairwise majority:     Montague & Aslam, CIKM 2002
               ``d`` before ``e`` when more runs rank ``d`` above ``e``
=============  ==============================================================  =======================================

The score-based methods (``comb*``, ``wsum``) read normalised scores; when a normalisation fills in the
documents a run did not retrieve (``borda``), every run has every candidate and ``R_d`` is all runs. The
rank-based methods (``rrf``, ``isr``, ``log_isr``, ``bordafuse``, ``condorcet``) read only ranks. A run ranks
``d`` above ``e`` when it retrieved ``d`` at a better rank, or retrieved ``d`` and not ``e``; two documents a run
did not retrieve get no vote from it.

Exact ties. A sum adds its terms in ascending order of value, so two documents with the same terms in any
order of runs get bit-identical scores; ``condorcet`` keeps documents with as many votes each way in doc id
descending order (a stable merge sort of the candidates in that order), so its ties follow the same rule as
everything else in gainscope. These methods reproduce ranx's (``ranx.fuse``, v0.3.21) on inputs without ties.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

__all__ = ["METHODS", "Candidates", "FusionMethod"]


@dataclass(frozen=True, eq=False)
class Candidates:
    """Every (query, document) pair that at least one run retrieved, and each run's view of it.

    ``query_ids``: the queries, bytewise. Per pair (sorted by query, then doc id descending): ``query`` (index
    into ``query_ids``), ``doc_ids``, ``candidates`` (``c`` of its query). Per pair and run (a
    ``pairs x runs`` matrix): ``values`` (the normalised score; NaN when the run did not retrieve it and the
    normalisation gives no value), ``ranks`` (NaN when not retrieved) and ``retrieved`` (``n_i`` of the pair's
    query).
    """

    query_ids: tuple[str, ...]
    query: np.ndarray
    doc_ids: pl.Series
    values: np.ndarray
    ranks: np.ndarray
    retrieved: np.ndarray
    candidates: np.ndarray

    @property
    def present(self) -> np.ndarray:
        """``pairs x runs``: True where the run has a value for the pair."""
        return ~np.isnan(self.values)


Combine = Callable[[Candidates, np.ndarray, float], np.ndarray]


@dataclass(frozen=True)
class FusionMethod:
    """A declared fusion method: name, formula, what it reads (``scores`` or ``ranks``), whether it takes
    weights, and the function computing every pair's fused score from :class:`Candidates`, the weights and
    RRF's ``k``."""

    name: str
    formula: str
    uses: Literal["scores", "ranks"]
    weighted: bool
    combine: Combine


def total(terms: np.ndarray) -> np.ndarray:
    """Row sums with the terms of each row added in ascending order (equal multisets, equal sums)."""
    if terms.shape[1] == 0:
        return np.zeros(terms.shape[0])
    return np.sort(terms, axis=1).sum(axis=1)


def _scores(c: Candidates) -> np.ndarray:
    return np.where(c.present, c.values, 0.0)


def _count(c: Candidates) -> np.ndarray:
    return c.present.sum(axis=1).astype(np.float64)


def _combsum(c: Candidates, w: np.ndarray, k: float) -> np.ndarray:
    return total(_scores(c))


def _combmnz(c: Candidates, w: np.ndarray, k: float) -> np.ndarray:
    return total(_scores(c)) * _count(c)


def _combanz(c: Candidates, w: np.ndarray, k: float) -> np.ndarray:
    return total(_scores(c)) / _count(c)


def _combmax(c: Candidates, w: np.ndarray, k: float) -> np.ndarray:
    return np.fmax.reduce(c.values, axis=1)  # NaN (not retrieved) is ignored


def _combmin(c: Candidates, w: np.ndarray, k: float) -> np.ndarray:
    return np.fmin.reduce(c.values, axis=1)


def _combmed(c: Candidates, w: np.ndarray, k: float) -> np.ndarray:
    return np.nanmedian(c.values, axis=1)  # every pair has at least one value


def _wsum(c: Candidates, w: np.ndarray, k: float) -> np.ndarray:
    return total(_scores(c) * w)


def _reciprocal_ranks(c: Candidates, k: float) -> np.ndarray:
    hit = ~np.isnan(c.ranks)
    return np.where(hit, 1.0 / (k + np.where(hit, c.ranks, 1.0)), 0.0)


def _rrf(c: Candidates, w: np.ndarray, k: float) -> np.ndarray:
    return total(_reciprocal_ranks(c, k) * w)


def _inverse_square_ranks(c: Candidates) -> tuple[np.ndarray, np.ndarray]:
    hit = ~np.isnan(c.ranks)
    r = np.where(hit, c.ranks, 1.0)
    return np.where(hit, 1.0 / (r * r), 0.0), hit.sum(axis=1).astype(np.float64)


def _isr(c: Candidates, w: np.ndarray, k: float) -> np.ndarray:
    terms, count = _inverse_square_ranks(c)
    return total(terms) * count


def _log_isr(c: Candidates, w: np.ndarray, k: float) -> np.ndarray:
    terms, count = _inverse_square_ranks(c)
    return total(terms) * np.log(count)


def _bordafuse(c: Candidates, w: np.ndarray, k: float) -> np.ndarray:
    hit = ~np.isnan(c.ranks)
    size = c.candidates[:, None].astype(np.float64)
    points = np.where(hit, size - np.where(hit, c.ranks, 0.0) + 1.0, (size - c.retrieved + 1.0) / 2.0)
    return total(points)


def _condorcet(c: Candidates, w: np.ndarray, k: float) -> np.ndarray:
    out = np.zeros(len(c.query))
    ranks = np.where(np.isnan(c.ranks), np.inf, c.ranks)
    bounds = np.flatnonzero(np.diff(c.query, prepend=-1, append=-2))  # query starts, and the end
    for start, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        rows = [tuple(r) for r in ranks[start:stop].tolist()]  # already doc id descending within the query

        def before(a: int, b: int, rows: list[tuple[float, ...]] = rows) -> int:
            above = sum(x < y for x, y in zip(rows[a], rows[b], strict=True))
            below = sum(y < x for x, y in zip(rows[a], rows[b], strict=True))
            return -1 if above > below else (1 if below > above else 0)

        order = sorted(range(stop - start), key=functools.cmp_to_key(before))  # stable: ties keep doc id order
        size = stop - start
        out[start + np.array(order, dtype=np.int64)] = size - np.arange(size, dtype=np.float64)
    return out


#: every fusion method, by name
METHODS: dict[str, FusionMethod] = {m.name: m for m in (
    FusionMethod("rrf", "sum w_i / (k + r_i)", "ranks", True, _rrf),
    FusionMethod("combsum", "sum s_i", "scores", False, _combsum),
    FusionMethod("combmnz", "|R_d| * sum s_i", "scores", False, _combmnz),
    FusionMethod("combmax", "max s_i", "scores", False, _combmax),
    FusionMethod("combmin", "min s_i", "scores", False, _combmin),
    FusionMethod("combmed", "median s_i", "scores", False, _combmed),
    FusionMethod("combanz", "sum s_i / |R_d|", "scores", False, _combanz),
    FusionMethod("wsum", "sum w_i s_i", "scores", True, _wsum),
    FusionMethod("isr", "|R_d| * sum 1 / r_i^2", "ranks", False, _isr),
    FusionMethod("log_isr", "ln |R_d| * sum 1 / r_i^2", "ranks", False, _log_isr),
    FusionMethod("bordafuse", "sum of Borda points", "ranks", False, _bordafuse),
    FusionMethod("condorcet", "order of the pairwise majority", "ranks", False, _condorcet),
)}
