"""What a metric is: a frozen declaration (name, typed parameters with constraints, formula in the docstring)
plus a vectorised kernel over all queries, a plain per-query reference implementation, and an explanation.

A metric's canonical string is its identity: ``str(metric)`` prints the name with its non-default
parameters (``nDCG(gain=exponential)@10``, ``P(rel=2)@5``) and :func:`gainscope.metrics.parse_metric`
turns it back into an equal object.

Values that a formula leaves undefined for a query (a division by zero: AP, recall or nDCG of a query with no
relevant document) are returned as NaN by kernels and references; the ``undefined`` policy of the
evaluation decides what they become.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from gainscope.errors import InvalidParameterError, PolicyError, option

if TYPE_CHECKING:
    from gainscope.core.policies import Policies
    from gainscope.metrics.context import Context

__all__ = ["REL_DOC", "Explanation", "Metric", "RankedQuery", "Step", "is_judged", "is_relevant", "param",
           "tie_averaged"]

Aggregate = Literal["mean", "sum", "gmean"]


def param(default: Any, *, doc: str, kind: str = "any", ge: float | None = None, gt: float | None = None,
          le: float | None = None, choices: tuple[Any, ...] | None = None, at: bool = False,
          required: bool = False) -> Any:
    """Declare a metric parameter with its constraints next to it.

    ``kind`` is one of ``"int"``, ``"float"``, ``"choice"``, ``"gain"`` (a choice or a grade->gain map),
    ``"floats"`` (a tuple of numbers); ``at=True`` marks the parameter that ``@value`` sets;
    ``required=True`` rejects the default None (a cutoff that must be given).
    """
    return field(default=default, metadata={"doc": doc, "kind": kind, "ge": ge, "gt": gt, "le": le,
                                             "choices": choices, "at": at, "required": required})


@dataclass(frozen=True)
class RankedQuery:
    """One query, as the reference implementations and explanations see it.

    ``grades`` are the grades of the ranked documents in order (``None`` = not judged; negative = pooled
    but unjudged), ``judged`` all non-negative judged grades of the query, ``doc_ids``/``scores`` the ranked
    documents, ``tie_start`` where groups of equal scores start (used by ``ties="average"``).
    """

    query_id: str
    grades: tuple[float | None, ...]
    judged: tuple[float, ...]
    doc_ids: tuple[str, ...] = ()
    scores: tuple[float, ...] = ()
    tie_start: tuple[bool, ...] = ()
    max_grade: float = 0.0  # the largest judged grade across all evaluated queries (ERR's default scale)
    judged_doc_ids: tuple[str, ...] = ()  # doc ids of ``judged``, same order
    tail: tuple[float | None, ...] = ()  # ties="average" with a depth: grades of tied documents cut off


#: the doc of every binary metric's ``rel`` parameter
REL_DOC = "minimum grade counted as relevant; None uses the evaluation's relevance level (default 1)"


def is_relevant(grade: float | None, level: float) -> bool:
    """A grade of a :class:`RankedQuery` reaches ``level`` (None and NaN are unjudged: never relevant)."""
    return grade is not None and not math.isnan(grade) and grade >= level


def is_judged(grade: float | None) -> bool:
    """A grade of a :class:`RankedQuery` is a judgment (negative grades mean pooled but unjudged)."""
    return grade is not None and not math.isnan(grade) and grade >= 0


def tie_averaged(values: list[float], tie_start: tuple[bool, ...],
                 tail: list[float] | tuple[float, ...] = ()) -> list[float]:
    """Replace each value by the mean of its group of tied scores (``tie_start`` marks group starts; an
    empty ``tie_start`` means no averaging). ``tail`` are the values of tied documents that a depth cut
    removed from the last group: they count in its mean. The plain twin of ``Context.tie_average``."""
    if not tie_start:
        return list(values)
    out: list[float] = []
    i = 0
    while i < len(values):
        j = i + 1
        while j < len(values) and not tie_start[j]:
            j += 1
        members = list(values[i:j]) + (list(tail) if j == len(values) else [])
        mean = sum(members) / len(members)
        out.extend([mean] * (j - i))
        i = j
    return out


@dataclass(frozen=True)
class Step:
    """One line of an explanation: a ranked position (or an ideal position)."""

    rank: int
    doc_id: str
    grade: float | None
    gain: float
    discount: float
    contribution: float
    total: float


@dataclass(frozen=True)
class Explanation:
    """Position-by-position account of one metric value for one query."""

    metric: str
    query_id: str
    run: tuple[Step, ...]
    ideal: tuple[Step, ...]
    numerator: float
    denominator: float
    value: float
    formula: str
    columns: tuple[str, str, str] = ("gain", "discount", "contribution")
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Metric:
    """Base class of every metric. Subclasses are frozen dataclasses whose fields are parameters."""

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    summary: ClassVar[str] = ""
    bounds: ClassVar[tuple[float | None, float | None]] = (0.0, 1.0)
    aggregate: ClassVar[Aggregate] = "mean"
    #: True when the value is a sum of per-position terms that depend only on the gain at that position,
    #: which makes ``ties="average"`` exact (the expected value over orders of tied documents).
    linear_in_gains: ClassVar[bool] = False
    #: True when the value ignores the order of the ranking (set measures, counts): any ties policy gives the
    #: same value as long as no depth cuts the ranking.
    order_independent: ClassVar[bool] = False
    #: True when the ideal ranking scores 1.0 (for contract tests).
    normalized: ClassVar[bool] = False
    #: True when the metric only looks at the top ``cutoff`` documents.
    uses_relevance_level: ClassVar[bool] = False
    #: True when the value of a query depends only on its judgments (NumRel): missing queries keep it.
    judgment_property: ClassVar[bool] = False

    def __post_init__(self) -> None:
        for f in fields(self):
            _check_param(self, f.name, getattr(self, f.name), f.metadata)

    # ------------------------------------------------------------------ evaluation
    def compute(self, ctx: Context) -> np.ndarray:
        """Values for every query of ``ctx`` at once (NaN = undefined). Implemented by subclasses."""
        raise NotImplementedError

    def reference(self, q: RankedQuery, policies: Policies) -> float:
        """Plain, obviously-correct value for one query, used to check ``compute`` (NaN = undefined)."""
        raise NotImplementedError

    def explain(self, q: RankedQuery, policies: Policies) -> Explanation | None:
        """Position-by-position explanation, for metrics where that makes sense; None otherwise."""
        return None

    def check_policies(self, policies: Policies) -> None:
        """Raise PolicyError when this metric cannot honour ``policies``."""
        if policies.ties == "average" and not self.linear_in_gains \
                and not (self.order_independent and policies.depth is None):
            raise PolicyError(
                f"{self} does not support {option('ties', 'average')}: its value is not a sum of per-position "
                f"gains, so averaging tied gains would not give its expected value; use "
                f"{option('ties', ('trec_eval', 'rank'))}")

    def level(self, policies: Policies) -> float:
        """The relevance threshold in force: the metric's own ``rel`` or the evaluation's relevance level."""
        rel = getattr(self, "rel", None)
        return float(policies.relevance_level if rel is None else rel)

    # ------------------------------------------------------------------ identity
    @classmethod
    def params(cls) -> list[Any]:
        """The declared parameters (dataclass fields with their metadata)."""
        return list(fields(cls))

    @classmethod
    def at_param(cls) -> str | None:
        """Name of the parameter that ``@value`` sets, if any."""
        for f in fields(cls):
            if f.metadata.get("at"):
                return f.name
        return None

    def __str__(self) -> str:
        parts: list[str] = []
        at_value = None
        for f in fields(self):
            value = getattr(self, f.name)
            if f.metadata.get("at"):
                at_value = value
                continue
            if value == f.default or (f.default is MISSING):
                continue
            parts.append(f"{f.name}={format_value(value)}")
        text = self.name
        if parts:
            text += "(" + ", ".join(parts) + ")"
        if at_value is not None:
            text += "@" + format_value(at_value)
        return text

    def __repr__(self) -> str:
        return f"<metric {self}>"


def format_value(value: Any) -> str:
    """Canonical text of a parameter value (the inverse of the name parser)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    if isinstance(value, str):
        return value if value.replace("_", "").replace("-", "").isalnum() else repr(value)
    if isinstance(value, GainMap):
        return "{" + ", ".join(f"{format_value(k)}: {format_value(v)}" for k, v in value.items) + "}"
    if isinstance(value, tuple):
        return "(" + ", ".join(format_value(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


@dataclass(frozen=True)
class GainMap:
    """A custom grade -> gain map (hashable). Grades not listed keep gain = grade (as trec_eval)."""

    items: tuple[tuple[float, float], ...]

    @classmethod
    def of(cls, mapping: Mapping[Any, Any]) -> GainMap:
        """Normalise a mapping: numeric keys and values, sorted by grade."""
        pairs = []
        for k, v in mapping.items():
            if isinstance(k, bool) or not isinstance(k, (int, float)) or isinstance(v, bool) \
                    or not isinstance(v, (int, float)):
                raise InvalidParameterError(f"a gain map must map numeric grades to numeric gains; got {k!r}: {v!r}")
            if not (math.isfinite(k) and math.isfinite(v)):
                raise InvalidParameterError(f"a gain map needs finite numbers; got {k!r}: {v!r}")
            if k < 0:
                raise InvalidParameterError(
                    f"a gain map may only list grades >= 0; got {k!r}: {v!r} (a negative grade means 'pooled but "
                    "unjudged' and never carries gain)")
            key = int(k) if float(k).is_integer() else float(k)
            pairs.append((key, float(v)))
        return cls(tuple(sorted(pairs)))

    def as_dict(self) -> dict[float, float]:
        """The map as a dict."""
        return dict(self.items)


def _describe(meta: Mapping[str, Any]) -> str:
    kind = meta["kind"]
    if kind in ("choice",):
        return "one of " + ", ".join(repr(c) for c in meta["choices"])
    if kind == "gain":
        return "one of " + ", ".join(repr(c) for c in meta["choices"]) + " or a {grade: gain} map"
    base = {"int": "an int", "float": "a number", "floats": "a tuple of numbers", "any": "a value"}[kind]
    bounds = []
    if meta["ge"] is not None:
        bounds.append(f">= {format_value(meta['ge'])}")
    if meta["gt"] is not None:
        bounds.append(f"> {format_value(meta['gt'])}")
    if meta["le"] is not None:
        bounds.append(f"<= {format_value(meta['le'])}")
    return base + (" " + " and ".join(bounds) if bounds else "")


def _in_bounds(x: float, meta: Mapping[str, Any]) -> bool:
    return ((meta["ge"] is None or x >= meta["ge"]) and (meta["gt"] is None or x > meta["gt"])
            and (meta["le"] is None or x <= meta["le"]))


def _check_param(metric: Metric, name: str, value: Any, meta: Mapping[str, Any]) -> None:
    """Validate one parameter against its declaration; normalise ints given for floats and maps."""
    if not meta:
        return
    kind = meta["kind"]
    optional = value is None and _default_of(type(metric), name) is None

    def fail() -> None:
        nullable = _default_of(type(metric), name) is None and not meta.get("required")
        allowed = _describe(meta) + (" or None" if nullable else "")
        raise InvalidParameterError(
            f"the {name!r} parameter of {type(metric).name} must be {allowed}; got {value!r}.")

    if optional:
        if meta.get("required"):
            example = f"{type(metric).name}@10" if meta.get("at") else f"{type(metric).name}({name}=...)"
            raise InvalidParameterError(f"{type(metric).name} needs a {name!r}: write for example {example}.")
        return
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int) or not _in_bounds(value, meta):
            fail()
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not _in_bounds(value, meta):
            fail()
        object.__setattr__(metric, name, float(value))
    elif kind == "choice":
        if value not in meta["choices"]:
            fail()
    elif kind == "gain":
        if isinstance(value, Mapping):
            object.__setattr__(metric, name, GainMap.of(value))
        elif not isinstance(value, GainMap) and value not in meta["choices"]:
            fail()
    elif kind == "floats":
        if not isinstance(value, (tuple, list)) or not value:
            fail()
        items = []
        for v in value:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                    or not _in_bounds(v, meta):
                fail()
            items.append(float(v))
        object.__setattr__(metric, name, tuple(items))


def _default_of(cls: type, name: str) -> Any:
    for f in fields(cls):
        if f.name == name:
            return f.default
    return MISSING
