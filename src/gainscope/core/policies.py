"""Evaluation policies: every convention that changes a number, named, defaulted to trec_eval's behaviour.

A :class:`Policies` value travels with every result so that the numbers always say how they were made.

=====================  =================  ==========================================================================
policy                 default            meaning
=====================  =================  ==========================================================================
``ties``               ``"trec_eval"``    order within a query: score descending, then doc id descending compared
                                          bytewise (trec_eval, pytrec_eval). ``"rank"``: the order given (the rank
                                          column when there is one, else the input order). ``"average"``: gains of
                                          tied documents are averaged (McSherry & Najork 2008, as scikit-learn);
                                          only for metrics that are linear in per-position gains.
``missing_queries``    ``"zero"``         a judged query with no ranking scores 0 and counts in the mean
                                          (trec_eval ``-c``); ``"skip"`` leaves it out; ``"empty"``: it is an
                                          empty ranking, each metric gives its own value for no document
                                          (Quepid runs its scorer on zero-result queries: nDCG 0, AP undefined
                                          when nothing is relevant, avgRating100 null).
``depth``              ``None``           keep only the first ``depth`` documents of each ranking, after ordering
                                          (trec_eval ``-M``).
``judged_only``        ``False``          drop unjudged documents from rankings before scoring (trec_eval ``-J``).
``relevance_level``    ``1``              minimum grade counted as relevant by binary metrics that do not set their
                                          own ``rel`` (trec_eval ``-l``). Graded metrics (nDCG, ERR, RBP) ignore it.
                                          ``"positive"``: any grade > 0 is relevant, on any scale, decimals included
                                          (Quepid's "rating > 0"), exactly: no threshold to pick.
``negative_grades``    ``"unjudged"``     a negative grade means "pooled but unjudged" (trec_eval): never relevant,
                                          not a judged non-relevant for bpref, counted as unjudged by Unj.
                                          ``"nonrelevant"``: the document is judged with grade 0 (ranx).
``undefined``          ``"zero"``         a value that is undefined for a query (AP with no relevant document, ...)
                                          is 0 and counts in the mean, with a warning naming the queries
                                          (trec_eval). ``"skip"``: leave such queries out of that metric's mean.
``judged_grades``      ``"as_is"``        the grades of the judged pool -- what ideal rankings, R and the best
                                          lists are made of -- as given. ``"truncated"``: truncated to integers
                                          (toward 0), as Quepid's ratings store holds them (``bestDocs`` keep
                                          ``parseInt(rating)``), while ranked documents keep their decimal grades.
``max_grade``          ``None``           the top of the grading scale, for metrics that divide by it (ERR,
                                          avgRating100) and do not set their own ``max_grade``; None = the largest
                                          judged grade of the evaluated queries (Quepid: the top of the scorer's
                                          scale; Elasticsearch: ERR's ``maximum_relevance``).
``score_precision``    ``"float64"``      scores are ordered as read, in double precision (trec_eval 10).
                                          ``"float32"``: rounded to the nearest float32 first, as trec_eval 9 and
                                          pytrec_eval store them, so ``1.00000001`` and ``1.0`` tie there.
=====================  =================  ==========================================================================
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from gainscope.errors import PolicyError, option

__all__ = ["POSITIVE", "JudgedGrades", "Level", "Missing", "Negatives", "Policies", "ScorePrecision", "Ties",
           "Undefined", "format_level", "is_level", "level_value"]

Ties = Literal["trec_eval", "rank", "average"]
Missing = Literal["zero", "skip", "empty"]
Negatives = Literal["unjudged", "nonrelevant"]
Undefined = Literal["zero", "skip"]
JudgedGrades = Literal["as_is", "truncated"]
#: a relevance level: a grade threshold, or ``"positive"`` (grade > 0)
Level = float | str  # a number >= 0, or "positive" (checked where given: Policies, metric parameters)

#: the relevance level "any grade > 0" (Quepid's, Elasticsearch's SRW's): accepted wherever a level is
POSITIVE = "positive"
#: the threshold ``"positive"`` stands for inside the kernels: the smallest positive double, so that
#: ``grade >= _POSITIVE_LEVEL`` holds exactly when ``grade > 0`` (NaN, 0 and negative grades never reach it)
_POSITIVE_LEVEL = math.nextafter(0.0, 1.0)


def level_value(level: Level) -> float:
    """The threshold ``t`` of a relevance level, relevant meaning ``grade >= t``: the level itself, or for
    ``"positive"`` the smallest positive double (so ``grade >= t`` exactly when ``grade > 0``)."""
    return _POSITIVE_LEVEL if level == POSITIVE else float(level)


def format_level(level: Level) -> str:
    """How a relevance level reads in the conventions: ``grade >= 2``, ``grade >= 0.5``, ``grade > 0``."""
    if level == POSITIVE:
        return "grade > 0"
    return f"grade >= {int(level) if float(level).is_integer() else level}"


def is_level(value: Any) -> bool:
    """True for a valid relevance level: a number >= 0 or ``"positive"``."""
    if value == POSITIVE and isinstance(value, str):
        return True
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value >= 0 and math.isfinite(value)
ScorePrecision = Literal["float64", "float32"]

_CHOICES: dict[str, tuple[str, ...]] = {
    "ties": ("trec_eval", "rank", "average"),
    "missing_queries": ("zero", "skip", "empty"),
    "negative_grades": ("unjudged", "nonrelevant"),
    "undefined": ("zero", "skip"),
    "judged_grades": ("as_is", "truncated"),
    "score_precision": ("float64", "float32"),
}

_MISSING_TEXT = {
    "zero": "zero: judged queries without a ranking score 0 (trec_eval -c)",
    "skip": "skip: judged queries without a ranking are left out",
    "empty": "empty: judged queries without a ranking are empty rankings, scored by each metric (Quepid)",
}

_TIES_TEXT = {
    "trec_eval": "score desc, then doc id desc (bytewise), as trec_eval",
    "rank": "the order given (rank column, else input order)",
    "average": "tied documents share their mean gain (McSherry & Najork 2008)",
}


@dataclass(frozen=True)
class Policies:
    """The conventions an evaluation follows. See the module docstring for each one."""

    ties: Ties = "trec_eval"
    missing_queries: Missing = "zero"
    depth: int | None = None
    judged_only: bool = False
    relevance_level: Level = 1
    negative_grades: Negatives = "unjudged"
    undefined: Undefined = "zero"
    judged_grades: JudgedGrades = "as_is"
    max_grade: float | None = None
    score_precision: ScorePrecision = "float64"

    def __post_init__(self) -> None:
        for name, choices in _CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                allowed = ", ".join(repr(c) for c in choices)
                raise PolicyError(f"the {name!r} policy must be one of {allowed}; got {value!r}.")
        if self.depth is not None and (isinstance(self.depth, bool) or not isinstance(self.depth, int)
                                       or self.depth < 1):
            raise PolicyError(f"the 'depth' policy must be an int >= 1 or None; got {self.depth!r}.")
        if not isinstance(self.judged_only, bool):
            raise PolicyError(f"the 'judged_only' policy must be True or False; got {self.judged_only!r}.")
        level = self.relevance_level
        if not is_level(level):
            raise PolicyError(f"the 'relevance_level' policy must be a number >= 0 or 'positive' (grade > 0); "
                              f"got {level!r}.")
        top = self.max_grade
        if top is not None and (isinstance(top, bool) or not isinstance(top, (int, float))
                                or not math.isfinite(top) or top <= 0):
            raise PolicyError(f"the 'max_grade' policy must be a number > 0 or None; got {top!r}.")
        if self.ties == "average" and self.depth is not None and self.judged_only:
            raise PolicyError(
                "ties='average' cannot be combined with both depth and judged_only: the depth cuts groups of "
                "tied documents before unjudged ones are dropped, so no expected value over their orders is "
                f"defined; drop one of depth, judged_only, or use {option('ties', 'trec_eval')}")

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> Policies:
        """Build from keyword arguments, rejecting unknown names with the list of known ones."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise PolicyError(f"unknown policy {unknown[0]!r}; the policies are: {', '.join(sorted(known))}.")
        return cls(**kwargs)

    def as_dict(self) -> dict[str, Any]:
        """The policies as plain values, for JSON output."""
        return asdict(self)

    def describe(self) -> list[tuple[str, str]]:
        """One ``(name, human text)`` pair per policy, for rendering next to results."""
        level = self.relevance_level
        level_flag = "-l positive" if level == POSITIVE else "-l"
        return [
            ("ties", f"{self.ties}: {_TIES_TEXT[self.ties]}"),
            ("missing queries", _MISSING_TEXT[self.missing_queries]),
            ("depth", "all documents" if self.depth is None else f"first {self.depth} per query (-M)"),
            ("judged only", "yes (-J)" if self.judged_only else "no"),
            ("relevance level", f"{format_level(level)} is relevant for binary metrics ({level_flag})"),
            ("negative grades", "unjudged (in pool, not judged), as trec_eval"
             if self.negative_grades == "unjudged" else "judged non-relevant (grade 0)"),
            ("undefined values", "0, counted in the mean (warned)" if self.undefined == "zero"
             else "left out of the mean"),
            ("judged grades", "as given" if self.judged_grades == "as_is" else
             "truncated to integers for ideal rankings, R and best lists (Quepid's parseInt); ranked documents "
             "keep their grades"),
            ("max grade", "the largest judged grade (ERR, avgRating100)" if self.max_grade is None
             else f"{self.max_grade:g}: the top of the grading scale (ERR, avgRating100)"),
            ("scores", "float64, ordered as read (trec_eval 10)" if self.score_precision == "float64"
             else "rounded to float32 before ordering, as trec_eval 9 and pytrec_eval"),
        ]
