"""Rank fusion: several runs of the same queries become one run, and the weights of a weighted fusion can be
tuned on training queries and checked on held-out ones.

* :func:`fuse` -- methods :data:`METHODS` (:mod:`~gainscope.fusion.methods`: CombSUM, CombMNZ, ..., RRF, ISR,
  BordaFuse, Condorcet) over normalisations :data:`NORMALIZATIONS` (:mod:`~gainscope.fusion.normalization`),
  each declared with its formula and reference; the numbers reproduce ranx's fusion on inputs without ties;
* :func:`optimize_weights` -- grid or random search of the weights of ``wsum`` or ``rrf`` for a metric on
  training queries, evaluated by gainscope's own pipeline, reported with the held-out value
  (:mod:`~gainscope.fusion.optimize`).

Ties: ranks come from each run in gainscope's order (score descending, equal scores by doc id descending); a
fused score adds its terms in ascending order so equal terms give equal scores; equal fused scores are ranked
by doc id descending. ranx sorts with an unstable quicksort and documents no rule for ties.
"""

from gainscope.fusion.fuse import DEFAULT_RRF_K, Fusion, fuse, fusion
from gainscope.fusion.methods import METHODS, FusionMethod
from gainscope.fusion.normalization import NORMALIZATIONS, Normalization
from gainscope.fusion.optimize import WeightSearch, optimize_weights

__all__ = ["DEFAULT_RRF_K", "METHODS", "NORMALIZATIONS", "Fusion", "FusionMethod", "Normalization", "WeightSearch",
           "fuse", "fusion", "optimize_weights"]
