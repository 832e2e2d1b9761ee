"""Focus times: the set of years a query asks about or a document is about.

A :class:`FocusTime` is a finite set of integer years (Gregorian, year precision). Ranges and decades are
stored as the years they cover, inclusively: ``FocusTime.range(2019, 2021)`` is ``{2019, 2020, 2021}`` and
``FocusTime.decade(1990)`` is ``{1990, ..., 1999}``. Set operations give plain year sets; the two measures
the temporal metrics use are

* ``overlap(q, d) = |q ∩ d|`` (a document is temporally relevant when it is > 0), and
* ``jaccard(q, d) = |q ∩ d| / |union(q, d)|``, defined as 0 when both sets are empty (no shared year).

:func:`as_focus_time` turns what users write into a FocusTime: a FocusTime, an int, an iterable of ints, or
strings ``"2008"``, ``"2008-2010"`` (also en dash, or ``"2008-10"``), ``"1990s"``, mixed in one list, e.g.
``["2008-2009", 2015, "1990s"]``. Anything else (bools, floats, reversed ranges, other text) is an
:class:`~gainscope.errors.InputError` naming the value -- focus times given as data are never guessed at; free
text goes through :mod:`gainscope.temporal.extraction`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gainscope.errors import InputError

__all__ = ["FocusTime", "FocusTimeLike", "as_focus_time", "jaccard", "overlap"]

_RANGE = re.compile(r"\s*(\d{4})\s*[-\u2013]\s*(\d{2}|\d{4})\s*")
_DECADE = re.compile(r"\s*(\d{3}0)s\s*")
_YEAR = re.compile(r"\s*(-?\d{1,4})\s*")


@dataclass(frozen=True)
class FocusTime:
    """A set of years. Hashable and immutable; ``len``, ``in`` and iteration work on the years."""

    years: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        for y in self.years:
            if isinstance(y, bool) or not isinstance(y, int):
                raise InputError(f"a focus time holds integer years; got {y!r}")

    # ------------------------------------------------------------------ constructors
    @classmethod
    def of(cls, *years: int) -> FocusTime:
        """``FocusTime.of(2020, 2021)``."""
        return cls(frozenset(years))

    @classmethod
    def range(cls, start: int, end: int) -> FocusTime:
        """The years ``start..end``, both included; ``end < start`` is an error."""
        if end < start:
            raise InputError(f"a year range ends before it starts: {start}-{end}")
        return cls(frozenset(range(start, end + 1)))

    @classmethod
    def decade(cls, start: int) -> FocusTime:
        """The ten years of the decade that begins at ``start`` (a multiple of 10): 1990 -> 1990..1999."""
        if start % 10:
            raise InputError(f"a decade starts at a multiple of 10; got {start}")
        return cls.range(start, start + 9)

    # ------------------------------------------------------------------ set behaviour
    def __len__(self) -> int:
        return len(self.years)

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self.years))

    def __contains__(self, year: object) -> bool:
        return year in self.years

    def __and__(self, other: FocusTime) -> FocusTime:
        return FocusTime(self.years & other.years)

    def __or__(self, other: FocusTime) -> FocusTime:
        return FocusTime(self.years | other.years)

    def __bool__(self) -> bool:
        return bool(self.years)

    def jaccard(self, other: FocusTime) -> float:
        """``|self ∩ other| / |union(self, other)|`` (0 when both are empty)."""
        return jaccard(self, other)

    def overlap(self, other: FocusTime) -> int:
        """``|self ∩ other|``."""
        return overlap(self, other)

    def spans(self) -> list[tuple[int, int]]:
        """The years as maximal runs: ``{1990, 1991, 1995}`` -> ``[(1990, 1991), (1995, 1995)]``."""
        out: list[tuple[int, int]] = []
        for y in sorted(self.years):
            if out and y == out[-1][1] + 1:
                out[-1] = (out[-1][0], y)
            else:
                out.append((y, y))
        return out

    def __str__(self) -> str:
        if not self.years:
            return "{}"
        return "{" + ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in self.spans()) + "}"

    def __repr__(self) -> str:
        return f"FocusTime({self})"


#: what the metrics accept wherever a focus time is expected
FocusTimeLike = FocusTime | int | str | Iterable[int | str]


def jaccard(a: FocusTime, b: FocusTime) -> float:
    """``|a ∩ b| / |union(a, b)|``; 0 when both are empty (they share no year)."""
    union = len(a.years | b.years)
    return len(a.years & b.years) / union if union else 0.0


def overlap(a: FocusTime, b: FocusTime) -> int:
    """``|a ∩ b|``, the number of shared years."""
    return len(a.years & b.years)


def _from_text(text: str, where: str) -> frozenset[int]:
    m = _RANGE.fullmatch(text)
    if m is not None:
        start, end_text = int(m[1]), m[2]
        end = int(end_text) if len(end_text) == 4 else start // 100 * 100 + int(end_text)
        if end < start:
            raise InputError(f"{where}: the range {text!r} ends before it starts")
        return frozenset(range(start, end + 1))
    m = _DECADE.fullmatch(text)
    if m is not None:
        return FocusTime.decade(int(m[1])).years
    m = _YEAR.fullmatch(text)
    if m is not None:
        return frozenset({int(m[1])})
    raise InputError(f"{where}: {text!r} is not a year, a range (2008-2010) or a decade (1990s); free text "
                     "goes through gainscope.temporal.extract_focus_time")


def as_focus_time(value: object, where: str = "focus time") -> FocusTime:
    """A :class:`FocusTime` from any accepted spelling (see the module docstring); ``where`` names the value in
    error messages (``"dfts[2]"``, ``"input.jsonl:4: qft"``)."""
    if isinstance(value, FocusTime):
        return value
    if isinstance(value, bool):
        raise InputError(f"{where}: expected years; got {value!r}")
    if isinstance(value, int):
        return FocusTime(frozenset({value}))
    if isinstance(value, str):
        return FocusTime(_from_text(value, where))
    if isinstance(value, Iterable) and not isinstance(value, bytes | dict):
        years: set[int] = set()
        for item in value:
            if isinstance(item, bool) or not isinstance(item, int | str):
                raise InputError(f"{where}: expected years (integers, 'YYYY-YYYY' ranges or 'YYYYs' decades); "
                                 f"got {item!r}")
            years.update({item} if isinstance(item, int) else _from_text(item, where))
        return FocusTime(frozenset(years))
    raise InputError(f"{where}: expected a set of years, a range or a decade; got {type(value).__name__} "
                     f"{value!r}")
