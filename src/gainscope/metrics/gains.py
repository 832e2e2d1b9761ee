"""Grade -> gain mappings shared by the graded metrics (nDCG, DCG, G, ndcg_rel, Rndcg, RBP, ERR).

* ``linear`` (Järvelin & Kekäläinen 2002; trec_eval, pytrec_eval, ranx ``ndcg``): gain = grade for grade > 0.
* ``exponential`` (Burges et al. 2005; ranx ``ndcg_burges``, Quepid, Elasticsearch): gain = 2^grade - 1.
* a ``{grade: gain}`` map (trec_eval ``-m ndcg.1=3,2=9``): listed grades take the given gain, other
  grades keep gain = grade.

Unjudged documents (NaN) have gain 0; negative grades have gain 0 unless a map lists them. With a relevance
threshold ``rel``, grades below it have gain 0 (ranx ``-l``), in the ranking and in the ideal alike
(``rel="positive"``: grade > 0, which every gain already requires).

Large grades. 2^g - 1 exceeds float64 from g = 1024 on, and a sum of gains earlier. A metric that is a ratio
of gain sums (nDCG, ndcg_rel, Rndcg) is unchanged when every gain of a query is divided by the same 2^s, so
it asks for exponential gains *shifted* by ``s = max(0, top - EXP_ROOM)`` (:func:`exp_shift`), ``top`` the
query's largest grade: the largest gain is then below 2^959, which leaves room for sums of 2^64 gains, and
a query whose grades stay below 959 keeps ``s = 0``, bit for bit the unshifted gains. ERR's stopping
probability ``(2^g - 1) / 2^max_grade`` is the same function with ``s = max_grade``.
The shifted gain is computed as

    (2^g - 1) / 2^s                      when g < 1024 and s < 1024 (exact for integer grades)
    2^(g - s) * (1 - 2^-g)               otherwise, with 1 - 2^-g = -expm1(-g ln 2)

which never overflows for g <= s + 1023 and keeps full relative precision (no difference of huge numbers).
Unshifted exponential gains of grades from 1024 on are ``inf``: the metrics that sum them (DCG, G) refuse
such values with an error rather than report them.
"""

from __future__ import annotations

import math

import numpy as np

from gainscope.core.policies import Level, level_value
from gainscope.metrics.base import GainMap

__all__ = ["EXP_ROOM", "Gain", "exp_shift", "exponential_gain", "exponential_gain_value", "gain_array",
           "gain_value"]

Gain = str | GainMap

#: exponential gains of a query whose top grade exceeds this are shifted down to it (see the module doc)
EXP_ROOM = 959.0

_LN2 = math.log(2.0)
_FINITE_EXP = 1024.0  # 2^1024 is the first power of two above the largest float64


def exp_shift(top: np.ndarray | float) -> np.ndarray | float:
    """The shift ``max(0, top - EXP_ROOM)`` for queries whose largest grade is ``top``."""
    if isinstance(top, np.ndarray):
        return np.maximum(np.nan_to_num(top, nan=0.0) - EXP_ROOM, 0.0)
    return max(0.0, float(top) - EXP_ROOM) if not math.isnan(top) else 0.0


def exponential_gain(grades: np.ndarray, shift: np.ndarray | float = 0.0) -> np.ndarray:
    """``(2^g - 1) / 2^shift`` for grades g > 0, 0 for the others (NaN = unjudged, negative, 0); ``shift``
    is one number or one per grade. Never warns; ``inf`` only where ``shift`` is 0 and g >= 1024."""
    g = np.asarray(grades, dtype=np.float64)
    s = np.broadcast_to(np.asarray(shift, dtype=np.float64), g.shape)
    positive = g > 0
    pos = np.where(positive, g, 0.0)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        small = (pos < _FINITE_EXP) & (s < _FINITE_EXP)
        plain = (np.exp2(pos) - 1.0) / np.exp2(s)
        scaled = np.exp2(pos - s) * -np.expm1(-pos * _LN2)
        out = np.where(small, plain, scaled)
    return np.where(positive, out, 0.0)


def exponential_gain_value(grade: float, shift: float = 0.0) -> float:
    """The scalar twin of :func:`exponential_gain` for one grade (> 0 expected; 0 otherwise)."""
    if math.isnan(grade) or grade <= 0:
        return 0.0
    if grade < _FINITE_EXP and shift < _FINITE_EXP:
        return (2.0 ** grade - 1.0) / 2.0 ** shift
    if grade - shift >= _FINITE_EXP:
        return math.inf
    return 2.0 ** (grade - shift) * -math.expm1(-grade * _LN2)


def gain_array(grades: np.ndarray, gain: Gain, rel: Level | None = None,
               shift: np.ndarray | float = 0.0) -> np.ndarray:
    """Gains for an array of grades (NaN = unjudged); exponential gains divided by ``2^shift`` (one number
    or one per grade; linear and mapped gains ignore it)."""
    g = np.asarray(grades, dtype=np.float64)
    positive = g > 0
    if isinstance(gain, GainMap):
        out = np.where(positive, g, 0.0)
        for grade, value in gain.items:
            out = np.where(g == grade, value, out)
    elif gain == "exponential":
        out = exponential_gain(g, shift)
    else:
        out = np.where(positive, g, 0.0)
    if rel is not None:
        out = np.where(g >= level_value(rel), out, 0.0)
    return out


def gain_value(grade: float | None, gain: Gain, rel: Level | None = None, shift: float = 0.0) -> float:
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
    return exponential_gain_value(float(grade), shift) if gain == "exponential" else float(grade)
