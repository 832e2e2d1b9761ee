"""Named convention profiles: one word that sets the policies and metric parameters of another tool.

A :class:`Profile` is policy values, per-metric parameter defaults, names of its own (Quepid's ``NDCG_CUT``,
``default``, ``v1``), parameter defaults that an adapter applies in one of its modes (``variants``: TempoEval's
nDCG builds its ideal from the top k in focus-time and LLM modes) and a one-line description.
``profile="quepid"`` (Python) or ``--profile quepid`` (the command line) applies it:

* the profile's policies replace the defaults; a policy given explicitly (``ties="trec_eval"``,
  ``--ties trec_eval``) overrides the profile's, and the output says so;
* a metric named without a parameter the profile sets gets the profile's value: under ``quepid``, ``nDCG@10``
  is ``nDCG(gain=exponential, ideal_depth=all)@10``; a parameter written in the name overrides the profile
  (``nDCG(gain=linear)@10``), and the output says so. Results print the canonical name, which states every
  parameter that differs from the default, so a number never hides its conventions;
* names in trec_eval's spelling (``ndcg_cut.10``, ``map``) keep trec_eval's definitions, and metric objects
  are used as given; the policies apply to every metric.

=================  ====================================================================================
profile            conventions
=================  ====================================================================================
``trec_eval``      trec_eval 10's (the default of every policy and parameter)
``quepid``         Quepid's built-in scorers: results in the order returned, relevant = rating > 0,
                   judged pool truncated to integers, a query without results scored as an empty list
                   (``missing_queries="empty"``), gain 2^r - 1, nDCG's ideal uncut, P over the documents
                   returned; names NDCG_CUT, default, v1
``tempoeval``      TempoEval 0.1.0: retrieved list in order, gain 2^g - 1 with the ideal from every gold
                   grade (``ideal=judged``, its gold mode), precision and MAP over the documents retrieved;
                   in the temporal adapter's focus-time and LLM modes the ideal from the top k retrieved
                   (``ideal=retrieved``, the temporal metrics reading the first k documents)
``sklearn``        scikit-learn's ``ndcg_score``/``dcg_score``: tied scores averaged, the ideal from the
                   scored items, linear gain
``ranx``           ranx: the relevance level applies to nDCG and DCG (``-l``), negative labels are judged
                   non-relevant
``es_rank_eval``   Elasticsearch/OpenSearch ``_rank_eval``: hits in the order returned, gain 2^r - 1, the
                   ideal of ``dcg`` with ``normalize`` cut at the hits returned, precision over the hits
=================  ====================================================================================

References: trec_eval 10 (usnistgov/trec_eval); Quepid's ``db/scorers/*.js`` and ``ScorerFactory.js``;
TempoEval (seed 001); scikit-learn ``sklearn/metrics/_ranking.py``; ranx ``ranx/metrics``; Elasticsearch
``modules/rank-eval`` (see ``shared/reference`` for the facts gathered on each).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from gainscope.core.policies import Policies, policy_option
from gainscope.errors import PolicyError, option, spell
from gainscope.metrics.base import format_value

__all__ = ["PROFILES", "RELEVANCE_LEVEL", "Profile", "ProfileUse", "get_profile", "profiled_policies", "profiles_of"]


class _RelevanceLevel:
    """A profile's parameter value that stands for the evaluation's relevance level (ranx's ``-l``)."""

    def __repr__(self) -> str:
        return "the relevance level"


#: as a profile's parameter value: the evaluation's ``relevance_level`` (resolved with the policies)
RELEVANCE_LEVEL: Any = _RelevanceLevel()


@dataclass(frozen=True)
class Profile:
    """A named set of conventions: ``policies`` (values of :class:`~gainscope.core.policies.Policies`
    fields), ``parameters`` (metric class name -> parameter defaults), ``names`` (extra metric names:
    name -> (class name, fixed parameters)), ``variants`` (an adapter's mode -> metric class name -> parameter
    defaults over ``parameters`` in that mode: the temporal adapter's ``focus_time`` and ``llm``), a one-line
    ``description`` and ``notes`` (what the profile cannot set for you)."""

    name: str
    description: str
    policies: Mapping[str, Any] = field(default_factory=dict)
    parameters: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    names: Mapping[str, tuple[str, Mapping[str, Any]]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    variants: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)

    def parameter_defaults(self, metric_class: str, policies: Policies, variant: str | None = None) -> dict[str, Any]:
        """The parameter values this profile gives a metric class under ``policies`` (in an adapter's mode
        ``variant``, that mode's values over the others)."""
        out = {}
        given = {**self.parameters.get(metric_class, {}),
                 **(self.variants.get(variant, {}).get(metric_class, {}) if variant is not None else {})}
        for key, value in given.items():
            out[key] = policies.relevance_level if value is RELEVANCE_LEVEL else value
        return out

    def settings(self) -> list[str]:
        """What the profile sets, one item per policy, per metric and per name, for the conventions."""
        out = [policy_option(k, v) for k, v in self.policies.items()]
        for metric, params in self.parameters.items():
            out.append(f"{metric}: " + ", ".join(f"{k}={v!r}" if v is RELEVANCE_LEVEL else f"{k}={format_value(v)}"
                                                 for k, v in params.items()))
        for alias, (target, fixed) in self.names.items():
            given = "(" + ", ".join(f"{k}={format_value(v)}" for k, v in fixed.items()) + ")" if fixed else ""
            out.append(f"{alias} = {target}{given}")
        for variant, per_metric in self.variants.items():
            for metric, params in per_metric.items():
                out.append(f"{metric} in {variant} mode: " + ", ".join(f"{k}={format_value(v)}"
                                                                       for k, v in params.items()))
        return out

    def as_dict(self) -> dict[str, Any]:
        """The profile as plain data, for JSON output."""
        return {"name": self.name, "description": self.description, "policies": dict(self.policies),
                "parameters": {m: {k: ("relevance_level" if v is RELEVANCE_LEVEL else v) for k, v in p.items()}
                               for m, p in self.parameters.items()},
                "names": {n: {"metric": t, "parameters": dict(f)} for n, (t, f) in self.names.items()},
                "variants": {v: {m: dict(p) for m, p in per.items()} for v, per in self.variants.items()},
                "notes": [spell(n) for n in self.notes]}


@dataclass(frozen=True)
class ProfileUse:
    """A profile as one evaluation applied it: the profile and what was given explicitly over it."""

    profile: Profile
    overridden: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The profile's name."""
        return self.profile.name

    def plus(self, overridden: tuple[str, ...] | list[str]) -> ProfileUse:
        """The same use with more overrides noted (each once)."""
        return replace(self, overridden=tuple(dict.fromkeys((*self.overridden, *overridden))))

    def as_dict(self) -> dict[str, Any]:
        """The profile and its overrides, for JSON output."""
        return {**self.profile.as_dict(), "overridden": [spell(o) for o in self.overridden]}


_MAX_GRADE_NOTE = ("{what} divide by the top of the grading scale: give it (" + option("max_grade", ...)
                   + "){example}; otherwise the largest judged grade is used (noted with the results)")

PROFILES: dict[str, Profile] = {p.name: p for p in (
    Profile("trec_eval", "trec_eval 10's conventions, the default: ties by doc id descending, judged queries "
                         "without a ranking score 0 (-c), linear gain, ideals from every judgment, P@k over k"),
    Profile("quepid", "Quepid's built-in scorers: results in the order returned, relevant = rating > 0, the "
                      "judged pool truncated to integers as Quepid stores it, a query without results scored as "
                      "an empty list, gain 2^r - 1, nDCG's ideal from every rated document (uncut), P over the "
                      "documents returned",
            policies={"ties": "rank", "relevance_level": "positive", "judged_grades": "truncated",
                      "missing_queries": "empty"},
            parameters={"nDCG": {"gain": "exponential", "ideal_depth": "all"}, "DCG": {"gain": "exponential"},
                        "P": {"denominator": "retrieved"}},
            names={"NDCG_CUT": ("nDCG", {"ideal_depth": "k"}), "default": ("QuepidV1", {}),
                   "v1": ("QuepidV1", {})},
            notes=(_MAX_GRADE_NOTE.format(what="ERR and avgRating100 (and v1)",
                                          example=": 3 on Quepid's 0-3 graded scale, 10 on the legacy 1-10"),
                   "Quepid's case score leaves out the queries whose scorer gives null (zsr: no results, --: no "
                   "ratings) and clamps negative scores to 0: `gainscope case score` applies those rules; here a "
                   "query without ratings is not evaluated, and undefined values (NaN in Quepid, counted 0 by "
                   "its score || 0) follow the undefined policy")),
    Profile("tempoeval", "TempoEval 0.1.0: the retrieved list in the order given, gain 2^g - 1 with the ideal from "
                         "every gold grade (ideal=judged, its gold mode), the k best; precision and MAP over the "
                         "documents retrieved; in focus-time and LLM modes the ideal from the top k retrieved",
            policies={"ties": "rank"},
            parameters={"nDCG": {"gain": "exponential"}, "P": {"denominator": "retrieved"},
                        "AP": {"denominator": "retrieved"}},
            variants={mode: {"nDCG": {"ideal": "retrieved"}} for mode in ("focus_time", "llm")},
            notes=("the focus-time and LLM modes are the temporal adapter's (gainscope temporal evaluate --profile "
                   "tempoeval): it grades each document (4 x the focus-time Jaccard, or a judge's 0-4 grade) into "
                   "judgments, and each temporal metric at k reads the first k documents retrieved, so nDCG's "
                   "ideal=retrieved there is TempoEval's top k re-sorted",
                   "TempoEval returns 0.0 where a value is undefined, as " + policy_option("undefined", "zero")
                   + " does, and rounds to 5 decimals (not reproduced)")),
    Profile("sklearn", "scikit-learn's ndcg_score and dcg_score: tied scores share their mean gain, the ideal "
                       "from the scored items only, linear gain, k cuts the ranking and the ideal",
            policies={"ties": "average"},
            parameters={"nDCG": {"ideal": "retrieved"}},
            notes=("scikit-learn scores dense rows: every item has a label; an unjudged retrieved document has "
                   "gain 0 here", "a row without a positive label scores 0 in ndcg_score, as "
                   + policy_option("undefined", "zero") + " does")),
    Profile("ranx", "ranx: the relevance level also applies to nDCG and DCG (ranx -l), negative labels are "
                    "judged non-relevant, P@k over k, AP over R",
            policies={"negative_grades": "nonrelevant"},
            parameters={"nDCG": {"rel": RELEVANCE_LEVEL}, "DCG": {"rel": RELEVANCE_LEVEL}},
            notes=("ranx sorts tied scores with an unstable sort (no documented rule): with ties the order, and "
                   "so the numbers, can differ", "ranx needs the run and the judgments to hold the same queries; "
                   "its make_comparable scores missing ones 0, as "
                   + policy_option("missing_queries", "zero") + " does")),
    Profile("es_rank_eval", "Elasticsearch/OpenSearch _rank_eval: hits in the order returned, gain 2^r - 1, "
                            "dcg with normalize cuts the ideal at the hits returned, precision over the hits "
                            "returned, unrated hits irrelevant",
            policies={"ties": "rank"},
            parameters={"nDCG": {"gain": "exponential", "ideal_depth": "retrieved"},
                        "DCG": {"gain": "exponential"}, "P": {"denominator": "retrieved"}},
            notes=(_MAX_GRADE_NOTE.format(what="ERR (expected_reciprocal_rank requires maximum_relevance)",
                                          example=""),
                   "metric names: precision = P@k, recall = R@k, mean_reciprocal_rank = RR@k, dcg = DCG@k, "
                   "dcg with normalize = nDCG@k, expected_reciprocal_rank = ERR@k")),
)}


def profiles_of(metric_class: str) -> list[str]:
    """What each profile does to a metric class, one line per profile that sets its parameters or names it:
    ``quepid: gain=exponential, ideal_depth=all; names NDCG_CUT (ideal_depth=k)``."""
    out = []
    for profile in PROFILES.values():
        parts = []
        params = profile.parameters.get(metric_class, {})
        if params:
            parts.append(", ".join(f"{k}={v!r}" if v is RELEVANCE_LEVEL else f"{k}={format_value(v)}"
                                   for k, v in params.items()))
        names = [n + (" (" + ", ".join(f"{k}={format_value(v)}" for k, v in fixed.items()) + ")" if fixed else "")
                 for n, (target, fixed) in profile.names.items() if target == metric_class]
        if names:
            parts.append("names " + ", ".join(names))
        for variant, per_metric in profile.variants.items():
            if metric_class in per_metric:
                parts.append(f"in {variant} mode " + ", ".join(f"{k}={format_value(v)}"
                                                              for k, v in per_metric[metric_class].items()))
        if parts:
            out.append(f"{profile.name}: " + "; ".join(parts))
    return out


def get_profile(name: str | Profile) -> Profile:
    """The profile named ``name`` (a :class:`Profile` is returned as is); PolicyError with the names
    otherwise."""
    if isinstance(name, Profile):
        return name
    if isinstance(name, str) and name in PROFILES:
        return PROFILES[name]
    close = difflib.get_close_matches(str(name), list(PROFILES), n=1, cutoff=0.6)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise PolicyError(f"unknown profile {name!r}; the profiles are: {', '.join(PROFILES)}.{hint}")


def profiled_policies(profile: Profile | None, given: Mapping[str, Any],
                      policies: Policies | None = None) -> tuple[Policies, ProfileUse | None]:
    """The policies of an evaluation under ``profile``: the profile's values, with the explicitly ``given``
    ones (keyword arguments, command-line options) over them; and the record of the use, naming every given
    value that differs from the profile's. ``policies`` (a whole :class:`Policies` object) cannot be combined
    with a profile: it would override all of it."""
    known = {f.name for f in fields(Policies)}
    unknown = sorted(set(given) - known)
    if unknown:
        raise PolicyError(f"unknown policy {unknown[0]!r}; the policies are: {', '.join(sorted(known))}.")
    if profile is None:
        if policies is not None:
            return (Policies.from_kwargs(**{**policies.as_dict(), **given}) if given else policies), None
        return Policies.from_kwargs(**given), None
    if policies is not None:
        raise PolicyError(f"a Policies object overrides every policy of the {profile.name!r} profile: give the "
                          "policies to change as keywords instead (for example ties='trec_eval')")
    overridden = [f"{policy_option(k, v)} (the {profile.name} profile: {format_value(profile.policies[k])})"
                  for k, v in given.items() if k in profile.policies and v != profile.policies[k]]
    return Policies.from_kwargs(**{**profile.policies, **given}), ProfileUse(profile, tuple(overridden))
