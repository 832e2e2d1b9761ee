"""Rating scales: the ordered grades a scorer's ratings are given on, with optional labels.

Quepid attaches a scale to every scorer: an ascending list of integers (at most ten), optionally with a label
per grade. Its communal scorers use three presets, available here by name::

    RatingScale.parse("binary")   # 0-1   Irrelevant, Relevant            (P, AP, RR)
    RatingScale.parse("graded")   # 0-3   Poor, Fair, Good, Perfect       (CG, DCG, nDCG, NDCG_CUT, ERR)
    RatingScale.parse("1-10")     # 1-10  the legacy default scorer (v1, avgRating100)

and any range ``"LO-HI"`` of integers, a list ``[0, 1, 2, 3]``, a mapping ``{"0": "Poor", ...}`` (Quepid's
``scale_with_labels``) or ``{"values": [...], "labels": {...}}``. The scale's **maximum is its last value**,
the ``max`` that Quepid's ERR and ``avgRating100`` divide by.

Ratings are checked against the scale's range: a rating below the first value or above the last is an error
(never clamped). A rating between two values (an average of several judges, as Quepid Books produce) is
allowed; gainscope accepts up to 100 values where Quepid stops at ten.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gainscope.errors import InputError

__all__ = ["PRESETS", "RatingScale"]

PRESETS: dict[str, tuple[tuple[float, ...], tuple[str, ...]]] = {
    "binary": ((0, 1), ("Irrelevant", "Relevant")),
    "graded": ((0, 1, 2, 3), ("Poor", "Fair", "Good", "Perfect")),
}
_RANGE = re.compile(r"^\s*(-?\d+)\s*-\s*(-?\d+)\s*$")
_MAX_VALUES = 100


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool):
        raise InputError(f"{what} must be a number; got {value!r}")
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"{what} must be a number; got {value!r}") from None
        return int(number) if number.is_integer() else number
    raise InputError(f"{what} must be a number; got {value!r}")


@dataclass(frozen=True)
class RatingScale:
    """An ascending list of grades with optional labels; ``max`` is the last grade."""

    values: tuple[float, ...]
    labels: Mapping[float, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.values) < 2:
            raise InputError(f"a rating scale needs at least two values; got {list(self.values)}")
        if len(self.values) > _MAX_VALUES:
            raise InputError(f"a rating scale has at most {_MAX_VALUES} values; got {len(self.values)}")
        if any(b <= a for a, b in zip(self.values, self.values[1:], strict=False)):
            raise InputError(f"rating scale values must be strictly ascending; got {list(self.values)}")
        unknown = [k for k in self.labels if k not in self.values]
        if unknown:
            raise InputError(f"labels for {unknown} which are not on the scale {list(self.values)}")

    @property
    def max(self) -> float:
        """The top of the scale (Quepid's ``max``: the last value)."""
        return self.values[-1]

    @property
    def min(self) -> float:
        """The bottom of the scale."""
        return self.values[0]

    @classmethod
    def parse(cls, spec: Any) -> RatingScale:
        """A scale from a preset name, ``"LO-HI"``, a list of values, ``{value: label}`` or
        ``{"values": [...], "labels": {...}}``."""
        if isinstance(spec, RatingScale):
            return spec
        if isinstance(spec, str):
            key = spec.strip().lower()
            if key in PRESETS:
                values, names = PRESETS[key]
                return cls(values, dict(zip(values, names, strict=True)))
            m = _RANGE.match(spec)
            if not m:
                raise InputError(f"unknown rating scale {spec!r}; use 'binary' (0-1), 'graded' (0-3), a range "
                                 f"such as '1-10', or a list of values")
            lo, hi = int(m.group(1)), int(m.group(2))
            if hi <= lo:
                raise InputError(f"rating scale range {spec!r} must go from low to high")
            if hi - lo + 1 > _MAX_VALUES:
                raise InputError(f"rating scale {spec!r} has more than {_MAX_VALUES} values")
            return cls(tuple(range(lo, hi + 1)))
        if isinstance(spec, Mapping):
            if "values" in spec:
                values = tuple(_number(v, "a scale value") for v in spec["values"])
                labels = {_number(k, "a scale label key"): str(v) for k, v in dict(spec.get("labels") or {}).items()}
                return cls(values, labels)
            pairs = sorted((_number(k, "a scale value"), str(v)) for k, v in spec.items())
            return cls(tuple(v for v, _ in pairs), {v: label for v, label in pairs if label})
        if isinstance(spec, (list, tuple)):
            return cls(tuple(_number(v, "a scale value") for v in spec))
        raise InputError(f"a rating scale is a name, a 'LO-HI' range, a list or a mapping; got {spec!r}")

    def check(self, rating: float, where: str) -> None:
        """Raise an InputError when ``rating`` lies outside the scale's range."""
        if not self.min <= rating <= self.max:
            raise InputError(f"{where}: rating {_fmt(rating)} is outside the scale {self.describe()}; "
                             f"ratings are never clamped, fix the rating or the scale")

    def describe(self) -> str:
        """``0-3 (Poor, Fair, Good, Perfect)`` or ``[0, 1, 5]``."""
        vals = self.values
        contiguous = all(isinstance(v, int) for v in vals) and list(vals) == list(
            range(int(vals[0]), int(vals[-1]) + 1))
        text = f"{_fmt(vals[0])}-{_fmt(vals[-1])}" if contiguous else "[" + ", ".join(_fmt(v) for v in vals) + "]"
        if self.labels:
            text += " (" + ", ".join(f"{_fmt(v)}={self.labels[v]}" for v in vals if v in self.labels) + ")"
        return text

    def to_json(self) -> Any:
        """The scale as a case file writes it: a list, or ``{"values", "labels"}`` when it has labels."""
        if not self.labels:
            return list(self.values)
        return {"values": list(self.values), "labels": {_fmt(k): v for k, v in self.labels.items()}}


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))
