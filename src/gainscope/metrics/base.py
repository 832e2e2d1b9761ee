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

import inspect
import math
import re
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from gainscope.core.policies import is_level, level_value
from gainscope.errors import InvalidParameterError, PolicyError, option

if TYPE_CHECKING:
    from gainscope.core.policies import Policies
    from gainscope.metrics.context import Context

__all__ = ["GENERIC_COLUMNS", "REL_DOC", "Explanation", "Metric", "RankedQuery", "Step", "explains_by_position",
           "generic_explanation", "grade_scale", "is_judged", "is_relevant", "metric_formula", "metric_reference",
           "param", "rel_param", "tie_averaged"]

Aggregate = Literal["mean", "sum", "gmean"]


def param(default: Any, *, doc: str, kind: str = "any", ge: float | None = None, gt: float | None = None,
          le: float | None = None, choices: tuple[Any, ...] | None = None, at: bool = False,
          required: bool = False) -> Any:
    """Declare a metric parameter with its constraints next to it.

    ``kind`` is one of ``"int"``, ``"float"``, ``"choice"``, ``"gain"`` (a choice or a grade->gain map),
    ``"floats"`` (a tuple of numbers), ``"level"`` (a relevance level: a number >= 0 or ``"positive"``, any
    grade > 0); ``at=True`` marks the parameter that ``@value`` sets; ``required=True`` rejects the default
    None (a cutoff that must be given).
    """
    return field(default=default, metadata={"doc": doc, "kind": kind, "ge": ge, "gt": gt, "le": le,
                                             "choices": choices, "at": at, "required": required})


def rel_param(doc: str | None = None) -> Any:
    """The ``rel`` parameter of a metric: a relevance level (a grade >= 0, or ``positive``: grade > 0), None
    by default (the evaluation's relevance level)."""
    return param(None, kind="level", ge=0, doc=doc or REL_DOC)


@dataclass(frozen=True)
class RankedQuery:
    """One query, as the reference implementations and explanations see it.

    ``grades`` are the grades of the ranked documents in order (``None`` = not judged; negative = pooled
    but unjudged), ``judged`` all non-negative judged grades of the query, ``doc_ids``/``scores`` the ranked
    documents, ``tie_start`` where groups of equal scores start (used by ``ties="average"``).

    A session (:class:`~gainscope.core.judged_run.SessionLayout`) also gives, per ranked document, its
    ``iterations``, ``searches``, ``first`` occurrence and ``unknown`` gain, the session's ``num_iterations``
    and, per judged grade, the iteration at which it was retrieved (``judged_iterations``, 0 = never). Empty
    (None for ``num_iterations``) for a ranked list: each rank is its own iteration and search, every document
    a first occurrence with a known gain, and a judged document is retrieved at its rank.
    """

    query_id: str
    grades: tuple[float | None, ...]
    judged: tuple[float, ...]
    doc_ids: tuple[str, ...] = ()
    scores: tuple[float, ...] = ()
    tie_start: tuple[bool, ...] = ()
    max_grade: float = 0.0  # the largest grade, judged or ranked, across all evaluated queries (ERR's scale)
    judged_doc_ids: tuple[str, ...] = ()  # doc ids of ``judged``, same order
    tail: tuple[float | None, ...] = ()  # ties="average" with a depth: grades of tied documents cut off
    iterations: tuple[int, ...] = ()
    searches: tuple[int, ...] = ()
    first: tuple[bool, ...] = ()
    unknown: tuple[bool, ...] = ()
    num_iterations: int | None = None
    judged_iterations: tuple[int, ...] = ()

    @property
    def top_ranked_grade(self) -> float:
        """The largest grade of the ranked documents (0 when none is judged)."""
        return max((g for g in self.grades if g is not None and not math.isnan(g)), default=0.0)


#: the doc of every binary metric's ``rel`` parameter
REL_DOC = ("minimum grade counted as relevant ('positive': any grade > 0); None uses the evaluation's relevance "
           "level (default 1)")


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
    #: What else shaped the value (gain kind, ideal cut, the profile applied). A note may name options with
    #: :func:`gainscope.errors.option`; :meth:`spelled_notes` gives them spelled for an interface.
    notes: tuple[str, ...] = ()

    def spelled_notes(self, interface: str = "python") -> tuple[str, ...]:
        """The notes with the options they name spelled for ``interface``: ``"python"`` (keywords,
        ``negative_grades='nonrelevant'``) or ``"cli"`` (flags, ``--negative-grades nonrelevant``)."""
        from gainscope.errors import spell

        return tuple(spell(n, interface) for n in self.notes)


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
    #: True when a judged query without a ranking scores 0 under ``missing_queries="zero"`` (trec_eval
    #: ``-c``). False when it gets the metric's own value on an empty ranking instead: a distance (where 0
    #: would be the best value) or a metric whose value without results is undefined (Quepid's null).
    missing_scores_zero: ClassVar[bool] = True
    #: True when an undefined value becomes 0 under ``undefined="zero"`` (trec_eval's convention). False when 0
    #: would pass for the best value (IterationsForAllGoodResults, where lower is better: 0 iterations): its
    #: undefined values stay undefined (NaN, left out of the mean) under every ``undefined`` policy, noted.
    undefined_scores_zero: ClassVar[bool] = True
    #: True when an undefined value of this metric is what Quepid calls ``null`` (its script sets no score:
    #: avgRating100, the default scorer) rather than NaN (a division by zero, which Quepid's ``score || 0``
    #: counts as 0). Quepid labels a null query ``zsr`` (no results) or ``--`` (no ratings) and leaves it out
    #: of the case mean: the case view reads this flag; evaluate applies the ``undefined`` policy as for any
    #: undefined value.
    undefined_is_null: ClassVar[bool] = False
    #: True when the metric divides by the top of the grading scale (ERR, avgRating100): its own
    #: ``max_grade``, else the evaluation's ``max_grade`` policy, else the largest judged grade (noted).
    uses_max_grade: ClassVar[bool] = False
    #: True for the session family, which reads a session's layout (iterations, searches, first occurrences,
    #: unknown gains). Every other metric treats a judged run as a ranking of distinct documents, and
    #: :func:`~gainscope.evaluation.compute` refuses to give it a session (where documents repeat).
    reads_sessions: ClassVar[bool] = False

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

    def censored(self, ctx: Context) -> np.ndarray | None:
        """Per query, True where the value is *censored*: a stand-in at a cap (IterationsForAllGoodResults of a
        session that did not retrieve every good result by its cap), not a measurement. The aggregate leaves
        censored values out and :class:`~gainscope.results.Results` counts them apart. None (the default): this
        metric never censors."""
        return None

    def reference_censored(self, q: RankedQuery, policies: Policies) -> bool:
        """The plain twin of :meth:`censored` for one query (False by default)."""
        return False

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
        return level_value(policies.relevance_level if rel is None else rel)

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


def grade_scale(metric: Metric, own: float | None, policies: Policies, observed: float, top: float) -> float:
    """The top of the grading scale that ``metric`` divides by: its own ``max_grade`` (``own``), else the
    evaluation's ``max_grade`` policy, else ``observed`` (the largest judged grade of the evaluated queries).
    A ranked grade ``top`` above a given scale is an error: a scale is never exceeded silently."""
    if own is not None:
        scale, what, fix = own, f"max_grade={format_value(own)}", "raise max_grade"
    elif policies.max_grade is not None:
        scale, what = policies.max_grade, f"the evaluation's max_grade={format_value(policies.max_grade)}"
        fix = f"raise the max_grade policy ({option('max_grade', ...)})"
    else:
        return observed
    if top > scale:
        raise InvalidParameterError(f"{metric} has {what} but a document has grade {format(top, 'g')}; {fix} "
                                    "to the top of your grading scale")
    return scale


def _paragraphs(cls: type) -> list[str]:
    """A metric class's docstring as paragraphs, each on one line, without the ``Reference:`` part."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", doc)]


_EQUATION = re.compile(r"``([^`]*(?:[=/*^+]|\b(?:sum|min|max|log2?|exp|mean)\()[^`]*)``")


def metric_formula(cls: type) -> str:
    """A metric class's formula as one line of text: its docstring's ``Formula:`` paragraph, else the first
    paragraph that holds an equation or an arithmetic expression (the contract suite checks that every
    registered metric has one)."""
    for para in _paragraphs(cls):
        found = re.search(r"Formula\b[^:]*:\s*(.+)", para)
        if found:
            return _plain(found.group(1))
    for para in _paragraphs(cls):
        if _EQUATION.search(para):
            return _plain(para)
    return ""


def metric_reference(cls: type) -> str:
    """A metric class's references: its docstring's ``Reference:`` text, on one line."""
    for para in _paragraphs(cls):
        found = re.search(r"\bReferences?:\s*(.+)", para)
        if found:
            return found.group(1).replace("``", "")
    return ""


def _plain(text: str) -> str:
    """Docstring text without its ``Reference:`` tail and without reST literal quotes."""
    return re.split(r"\s*\bReferences?:", text)[0].replace("``", "").strip()


#: the columns of :func:`generic_explanation`, which set it apart from a position-by-position explanation
GENERIC_COLUMNS = ("relevant", "judged", "counted")

_SAMPLE = RankedQuery("q", (2.0, None, 0.0, 1.0), (2.0, 1.0, 1.0, 0.0), ("a", "u", "b", "c"), (4.0, 3.0, 2.0, 1.0),
                      judged_doc_ids=("a", "c", "d", "b"), max_grade=2.0)


def explains_by_position(cls: type[Metric]) -> bool:
    """True when the metric explains a value position by position (a contribution per ranked document);
    False when it explains with the value and the inputs it used (:func:`generic_explanation`). Found by
    asking the metric to explain a small query, so no list has to be kept up to date."""
    from gainscope.core.policies import Policies

    kwargs = {f.name: 1 if f.metadata.get("kind") == "float" else 3 for f in fields(cls)
              if f.metadata.get("required")}
    try:
        explanation = cls(**kwargs).explain(_SAMPLE, Policies())
    except Exception:  # a plugin metric that cannot be built this way: say what explain falls back to
        return False
    return explanation is not None and explanation.columns != GENERIC_COLUMNS


def generic_explanation(metric: Metric, q: RankedQuery, policies: Policies, value: float,
                        notes: tuple[str, ...] = ()) -> Explanation:
    """The explanation of a metric that has no position-by-position form (set measures, counts, curves,
    edit distances): the per-query ``value`` the kernel computed and the inputs it used -- the ranked
    documents it looked at (rank, doc id, grade, relevant at its level, judged), the query's totals
    (documents retrieved, judged pool, R) and the metric's own ``notes``."""
    from gainscope.core.policies import format_level

    level = metric.level(policies)
    at = type(metric).at_param()
    cutoff = getattr(metric, at) if at is not None else None
    depth = cutoff if isinstance(cutoff, int) and not isinstance(cutoff, bool) else None
    steps = []
    found = 0.0
    for i, (doc, g) in enumerate(zip(q.doc_ids or ("",) * len(q.grades), q.grades, strict=True), start=1):
        if depth is not None and i > depth:
            break
        hit = 1.0 if is_relevant(g, level) else 0.0
        found += hit
        steps.append(Step(i, doc, g, hit, 1.0 if is_judged(g) else 0.0, hit, found))
    n = len(q.grades)
    shown = (f"the first {depth} of the {n} ranked documents" if depth is not None and depth < n
             else "the one ranked document" if n == 1 else f"all {n} ranked documents")
    rel = getattr(metric, "rel", None)
    relevance = format_level(policies.relevance_level if rel is None else rel)
    r = sum(1 for g in q.judged if g >= level)
    notes = (f"{type(metric).name} has no position-by-position form: the value is computed from the inputs "
             f"shown, {shown} and the totals below",
             f"retrieved: {n}; judged pool: {len(q.judged)} documents, R = {r} ({relevance})",
             *notes)
    return Explanation(str(metric), q.query_id, tuple(steps), (), value, 1.0, value,
                       metric_formula(type(metric)) or type(metric).summary, GENERIC_COLUMNS, notes)


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
    if kind == "level":
        return "a number >= 0 or 'positive'"
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
    elif kind == "level":
        if not is_level(value):
            fail()
        if not isinstance(value, str):
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
