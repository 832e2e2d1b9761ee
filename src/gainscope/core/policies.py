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
                                          (trec_eval ``-c``); ``"skip"`` leaves it out.
``depth``              ``None``           keep only the first ``depth`` documents of each ranking, after ordering
                                          (trec_eval ``-M``).
``judged_only``        ``False``          drop unjudged documents from rankings before scoring (trec_eval ``-J``).
``relevance_level``    ``1``              minimum grade counted as relevant by binary metrics that do not set their
                                          own ``rel`` (trec_eval ``-l``). Graded metrics (nDCG, ERR, RBP) ignore it.
``negative_grades``    ``"unjudged"``     a negative grade means "pooled but unjudged" (trec_eval): never relevant,
                                          not a judged non-relevant for bpref, counted as unjudged by Unj.
                                          ``"nonrelevant"``: the document is judged with grade 0 (ranx).
``undefined``          ``"zero"``         a value that is undefined for a query (AP with no relevant document, ...)
                                          is 0 and counts in the mean, with a warning naming the queries
                                          (trec_eval). ``"skip"``: leave such queries out of that metric's mean.
``score_precision``    ``"float64"``      scores are ordered as read, in double precision (trec_eval 10).
                                          ``"float32"``: rounded to the nearest float32 first, as trec_eval 9 and
                                          pytrec_eval store them, so ``1.00000001`` and ``1.0`` tie there.
=====================  =================  ==========================================================================
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from gainscope.errors import PolicyError, option

__all__ = ["Missing", "Negatives", "Policies", "ScorePrecision", "Ties", "Undefined"]

Ties = Literal["trec_eval", "rank", "average"]
Missing = Literal["zero", "skip"]
Negatives = Literal["unjudged", "nonrelevant"]
Undefined = Literal["zero", "skip"]
ScorePrecision = Literal["float64", "float32"]

_CHOICES: dict[str, tuple[str, ...]] = {
    "ties": ("trec_eval", "rank", "average"),
    "missing_queries": ("zero", "skip"),
    "negative_grades": ("unjudged", "nonrelevant"),
    "undefined": ("zero", "skip"),
    "score_precision": ("float64", "float32"),
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
    relevance_level: float = 1
    negative_grades: Negatives = "unjudged"
    undefined: Undefined = "zero"
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
        if isinstance(level, bool) or not isinstance(level, (int, float)) or not level >= 0:
            raise PolicyError(f"the 'relevance_level' policy must be a number >= 0; got {level!r}.")
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
        level_text = str(int(level)) if float(level).is_integer() else str(level)
        return [
            ("ties", f"{self.ties}: {_TIES_TEXT[self.ties]}"),
            ("missing queries", "zero: judged queries without a ranking score 0 (trec_eval -c)"
             if self.missing_queries == "zero" else "skip: judged queries without a ranking are left out"),
            ("depth", "all documents" if self.depth is None else f"first {self.depth} per query (-M)"),
            ("judged only", "yes (-J)" if self.judged_only else "no"),
            ("relevance level", f"grade >= {level_text} is relevant for binary metrics (-l)"),
            ("negative grades", "unjudged (in pool, not judged), as trec_eval"
             if self.negative_grades == "unjudged" else "judged non-relevant (grade 0)"),
            ("undefined values", "0, counted in the mean (warned)" if self.undefined == "zero"
             else "left out of the mean"),
            ("scores", "float64, ordered as read (trec_eval 10)" if self.score_precision == "float64"
             else "rounded to float32 before ordering, as trec_eval 9 and pytrec_eval"),
        ]
