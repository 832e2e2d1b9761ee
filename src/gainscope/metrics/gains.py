"""Grade -> gain mappings shared by the graded metrics (nDCG, DCG, G, ndcg_rel, Rndcg, RBP).

* ``linear`` (Järvelin & Kekäläinen 2002; trec_eval, pytrec_eval, ranx ``ndcg``): gain = grade for grade > 0.
* ``exponential`` (Burges et al. 2005; ranx ``ndcg_burges``, Quepid, Elasticsearch): gain = 2^grade - 1.
* a ``{grade: gain}`` map (trec_eval ``-m ndcg.1=3,2=9``): listed grades take the given gain, other
  grades keep gain = grade.

Unjudged documents (NaN) have gain 0; negative grades have gain 0 unless a map lists them. With a relevance
threshold ``rel``, grades below it have gain 0 (ranx ``-l``), in the ranking and in the ideal alike
(``rel="positive"``: grade > 0, which every gain already requires).
"""

from __future__ import annotations

import math

import numpy as np

from gainscope.core.policies import Level, level_value
from gainscope.metrics.base import GainMap

__all__ = ["Gain", "gain_array", "gain_value"]

Gain = str | GainMap


def gain_array(grades: np.ndarray, gain: Gain, rel: Level | None = None) -> np.ndarray:
    """Gains for an array of grades (NaN = unjudged)."""
    g = np.asarray(grades, dtype=np.float64)
    positive = g > 0
    if isinstance(gain, GainMap):
        out = np.where(positive, g, 0.0)
        for grade, value in gain.items:
            out = np.where(g == grade, value, out)
    elif gain == "exponential":
        out = np.where(positive, np.exp2(np.where(positive, g, 0.0)) - 1.0, 0.0)
    else:
        out = np.where(positive, g, 0.0)
    if rel is not None:
        out = np.where(g >= level_value(rel), out, 0.0)
    return out


def gain_value(grade: float | None, gain: Gain, rel: Level | None = None) -> float:
    """The gain of one grade (None = unjudged); the scalar twin of :func:`gain_array`."""
    if grade is None or (isinstance(grade, float) and math.isnan(grade)):
        return 0.0
    if rel is not None and grade < level_value(rel):
        return 0.0
    if isinstance(gain, GainMap):
        mapping = gain.as_dict()
        if grade in mapping:
            return float(mapping[grade])
        return float(grade) if grade > 0 else 0.0
    if grade <= 0:
        return 0.0
    return float(2.0 ** grade - 1.0) if gain == "exponential" else float(grade)
