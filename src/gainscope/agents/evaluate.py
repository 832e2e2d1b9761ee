"""Evaluate agent conversations: de-duplicate the last turn, grade its unique results, compute seed 003's
metrics at every iteration and at N, session DCG, and aggregates over conversations.

Scope: only the last turn of each conversation is evaluated (seed 003); its iterations are the ones where
search was invoked (:meth:`~gainscope.agents.trace.Turn.search_iterations`), numbered ``1..N``.

Aggregates over conversations of each value at N: the mean and the median of the conversations where it is
defined, a bootstrap confidence interval of the mean (:func:`gainscope.stats.bootstrap_ci`, percentile, 95 %,
10,000 resamples, seed 0; undefined with fewer than two values), and how many conversations had it undefined.

IterationsForAllGoodResults is aggregated over the conversations that retrieved every good result by the cap
(their value is the iteration itself). A conversation whose value is the cap because the good results were
never all retrieved, or were all retrieved only after iteration ``cap``, is *capped*: its value is a censored
stand-in, not an iteration count, so it is left out of the mean, median and interval and counted apart
(:attr:`Aggregate.capped`). Averaging the cap (100) with real iteration counts would say nothing: nine
conversations that finish in 2 iterations and one capped give a "mean" of 11.8. The mean therefore reads "how
many iterations the conversations that found everything took", and ``capped`` how many did not.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gainscope.agents.dedup import DEFAULT_DEDUP, Deduplication, DedupSettings, deduplicate
from gainscope.agents.gains import JUDGMENT_KEYS, Grade, JudgmentIndex, judge_grades, judgment_grades, trace_grades
from gainscope.agents.metrics import CAP, IterationValues, good_gain_curve, iterations_for_all_good, values_at_n
from gainscope.agents.overlap import Matched, check_overlap
from gainscope.agents.session import session_dcg
from gainscope.agents.trace import Conversation
from gainscope.errors import InputError, PolicyError
from gainscope.io.texts import Query

__all__ = [
    "ALL_GOOD",
    "SUMMARY_METRICS",
    "AgentReport",
    "AgentSettings",
    "Aggregate",
    "ConversationResult",
    "aggregate",
    "deduplicate_conversation",
    "evaluate_agents",
    "evaluate_agents_async",
    "score_conversation",
]

#: every value at N: the per-iteration values of seed 003 at i = N (the last iteration: ``|R^N|``, ``G_N`` ...),
#: the cumulative ones through N (``R@N``, ``CG@N`` ...), IterationsForAllGoodResults and session DCG
SUMMARY_METRICS = ("N", "|R^N|", "|UR^N|", "|GR^N|", "|Dup^N|", "G_N", "R@N", "UR@N", "GR@N", "DupR@N", "CG@N",
                   "RG@N", "DCG@N", "DRG@N", "AvgGain_N", "RAG@N", "DRAG@N", "SRE@N", "SRR@N",
                   "IterationsForAllGoodResults", "sDCG")
#: the value whose aggregate leaves capped conversations out (see the module docstring)
ALL_GOOD = "IterationsForAllGoodResults"


@dataclass(frozen=True)
class AgentSettings:
    """Every convention that changes a number, echoed in the output.

    ``good_gain``: a result is good when its gain is >= this (2). ``missing``: what a result without a gain
    counts as, ``"zero"`` or ``"undefined"`` (None: zero with judgments, as trec_eval; undefined otherwise).
    ``sdcg_b``, ``sdcg_bq``, ``sdcg_depth``, ``sdcg_gains`` (grade -> gain, None: the grades): session DCG
    parameters (:mod:`gainscope.agents.session`). ``cap``: of IterationsForAllGoodResults.
    ``level``, ``resamples``, ``seed``: the bootstrap interval of the aggregates. ``judgments_key``: which field
    of a result the judgments' doc ids are, ``id`` (default), ``domain_id`` or ``url``
    (:mod:`gainscope.agents.gains`)."""

    good_gain: float = 2.0
    dedup: DedupSettings = field(default_factory=DedupSettings)
    missing: str | None = None
    sdcg_b: float = 2.0
    sdcg_bq: float = 4.0
    sdcg_depth: int | None = None
    sdcg_gains: Mapping[float, float] | None = None
    cap: int = CAP
    level: float = 0.95
    resamples: int = 10000
    seed: int = 0
    judgments_key: str = "id"

    def __post_init__(self) -> None:
        if self.judgments_key not in JUDGMENT_KEYS:
            raise PolicyError(f"judgments_key must be one of {', '.join(JUDGMENT_KEYS)}; got {self.judgments_key!r}")
        if self.missing not in (None, "zero", "undefined"):
            raise PolicyError(f"missing must be 'zero' or 'undefined'; got {self.missing!r}")
        if self.sdcg_gains is not None and (not self.sdcg_gains or any(
                not math.isfinite(v) or v < 0 for v in self.sdcg_gains.values())):
            raise PolicyError(f"sdcg_gains must map grades to finite gains >= 0; got {dict(self.sdcg_gains)}")
        if self.cap < 1:
            raise PolicyError(f"cap must be >= 1; got {self.cap}")

    def _judgments_text(self) -> str:
        if self.judgments_key == "url":
            return "from judgments; their doc ids are the results' URLs (normalised)"
        return (f"from judgments; their doc ids are the results' {self.judgments_key} (results without one: "
                "their normalised URL)")

    def _sdcg_gains_text(self) -> str:
        if self.sdcg_gains is None:
            return "gains = grades"
        return "gains mapped " + ", ".join(f"{k:g}:{v:g}" for k, v in sorted(self.sdcg_gains.items()))

    def _all_good_text(self, source: str) -> str:
        head = "IterationsForAllGoodResults: first iteration by which every"
        if source == "judgments":
            return (f"{head} result judged good (grade >= {self.good_gain:g}) for the query was retrieved, capped "
                    f"at {self.cap}; never all retrieved: {self.cap} (the cap), all_good_found=false; undefined when "
                    f"the query has no judged good result; {self._all_good_aggregate_text()}")
        return (f"{head} good result found in the trace (gain >= {self.good_gain:g}) was retrieved, capped at "
                f"{self.cap}; undefined when none was found or some result's gain is undefined; "
                f"{self._all_good_aggregate_text()}")

    def _all_good_aggregate_text(self) -> str:
        return (f"aggregated (mean, median, interval) over the conversations that retrieved every good result by "
                f"iteration {self.cap}; conversations capped at {self.cap} (never all retrieved, or only after "
                f"iteration {self.cap}) are left out and counted apart (capped), never averaged in")

    def describe(self, source: str) -> list[tuple[str, str]]:
        """The conventions as (name, description) rows."""
        missing = self.missing or ("zero" if source == "judgments" else "undefined")
        d = self.dedup
        hard = ", ".join(d.hard_fields) or "none"
        return [
            ("scope", "last turn of each conversation; iterations where search was invoked, i = 1..N"),
            ("gains", {"trace": "from the trace", "judgments": self._judgments_text(),
                       "judge": "from an LLM judge (0-4); failed grades undefined, never 0"}[source]),
            ("good gain", f"gain >= {self.good_gain:g}"),
            ("unjudged", "gain 0 (as trec_eval)" if missing == "zero" else "undefined (values after it are NaN)"),
            ("dedup", f"merge at confidence >= {d.threshold:g}; hard fields {hard}; near-duplicates "
                      f"{'SimHash <= ' + str(d.simhash_distance) + ' bits' if d.near_duplicates else 'off'}"),
            ("urls", "w3lib canonical form; tracking parameters, default ports, fragment, trailing slash"
                     f"{'' if d.url_policy.keep_www else ', www.'}{'' if d.url_policy.keep_scheme else ', http=https'}"
                     " dropped or made equal"),
            ("discount", "w(i) = 1/log2(i+1)"),
            ("sDCG", f"Järvelin et al. 2008: sum over searches q of DCG_q / (1 + log_bq q), DCG_q = sum over ranks j "
                     f"of gain / max(1, log_b j); b={self.sdcg_b:g}, bq={self.sdcg_bq:g}, depth "
                     f"{self.sdcg_depth or 'all'}; {self._sdcg_gains_text()}; each unique result counted once; "
                     "queries = searches"),
            ("all good", self._all_good_text(source)),
            ("aggregates", f"mean and median over the conversations where a value is defined (for {ALL_GOOD}: "
                           "and not capped, see all good); "
                           f"{self.level * 100:g}% percentile bootstrap interval of the mean ({self.resamples} "
                           f"resamples, seed {self.seed}; undefined with fewer than 2 values)"),
        ]


@dataclass(frozen=True)
class ConversationResult:
    """One conversation's evaluation: the de-duplication, grades, the curve over iterations and the summary."""

    conversation_id: str
    query_id: str
    turn: int
    dedup: Deduplication
    grades: tuple[Grade, ...]
    curve: tuple[IterationValues, ...]
    summary: dict[str, float]
    all_good_found: bool | None
    notes: tuple[str, ...] = ()
    all_good_capped: bool = False

    def to_dict(self, *, iterations: bool = True) -> dict[str, Any]:
        """Plain data (NaN as None)."""
        out: dict[str, Any] = {"conversation_id": self.conversation_id, "query_id": self.query_id,
                               "turn": self.turn, "unique_results": len(self.dedup.unique),
                               "summary": {k: _plain(v) for k, v in self.summary.items()},
                               "all_good_found": self.all_good_found, "all_good_capped": self.all_good_capped,
                               "grades": {s: sum(1 for g in self.grades if g.status == s)
                                          for s in ("ok", "unjudged", "failed", "missing")},
                               "notes": list(self.notes)}
        if iterations:
            out["iterations"] = [{"i": it.i, **{k: _plain(v) for k, v in it.values.items()}} for it in self.curve]
        return out


@dataclass(frozen=True)
class Aggregate:
    """A value at N over conversations: mean, median and interval of the mean over the ``n`` conversations
    where it is defined, and how many conversations had it undefined. For :data:`ALL_GOOD`, ``capped``
    conversations (value = the cap: the good results never all retrieved, or only after the cap) are left out of
    ``n``, the mean, the median and the interval and counted here; 0 for every other value."""

    metric: str
    mean: float
    median: float
    ci_low: float
    ci_high: float
    n: int
    undefined: int
    capped: int = 0


@dataclass(frozen=True)
class AgentReport:
    """Every conversation's result and the aggregates, with the settings and the gain source."""

    conversations: tuple[ConversationResult, ...]
    aggregates: tuple[Aggregate, ...]
    settings: AgentSettings
    source: str

    def to_dict(self, *, conversations: bool = True) -> dict[str, Any]:
        """Plain data for JSON."""
        out: dict[str, Any] = {
            "conventions": dict(self.settings.describe(self.source)),
            "aggregate": {a.metric: {"mean": _plain(a.mean), "median": _plain(a.median),
                                     "ci": [_plain(a.ci_low), _plain(a.ci_high)], "n": a.n,
                                     "undefined": a.undefined, **({"capped": a.capped} if a.metric == ALL_GOOD else {})}
                          for a in self.aggregates},
        }
        if conversations:
            out["conversations"] = [c.to_dict() for c in self.conversations]
        return out


def _plain(x: float) -> float | None:
    return None if isinstance(x, float) and math.isnan(x) else x


def deduplicate_conversation(conversation: Conversation, settings: DedupSettings = DEFAULT_DEDUP) -> Deduplication:
    """De-duplicate the results of the conversation's last turn."""
    return deduplicate(conversation.last_turn.search_iterations(), settings)


def score_conversation(conversation: Conversation, dedup: Deduplication, grades: Sequence[Grade],
                       settings: AgentSettings = AgentSettings(), *, known_good: set[str] | None = None,
                       matched: Sequence[Sequence[str]] | None = None) -> ConversationResult:
    """The metrics of one conversation from its de-duplication and one grade per unique result."""
    if len(grades) != len(dedup.unique):
        raise InputError(f"{len(grades)} grades for {len(dedup.unique)} unique results")
    gains = {u.number: g.gain for u, g in zip(dedup.unique, grades, strict=True)}
    per_iteration = [[d.unique for d in ds] for ds in dedup.by_iteration()]
    curve = good_gain_curve(per_iteration, gains, settings.good_gain)
    summary = {"N": float(dedup.n_iterations), **values_at_n(curve)}
    first = {u.number: u.first.iteration for u in dedup.unique}
    by_number = None if matched is None else {u.number: m for u, m in zip(dedup.unique, matched, strict=True)}
    all_good, found = iterations_for_all_good(first, gains, settings.good_gain, known_good=known_good,
                                              matched=by_number, cap=settings.cap)
    # when every good result was found, the iteration k itself (k <= N, so a cap of N or more never binds)
    uncapped = all_good if found is not True else iterations_for_all_good(
        first, gains, settings.good_gain, known_good=known_good, matched=by_number,
        cap=max(settings.cap, dedup.n_iterations))[0]
    capped = found is False or (found is True and uncapped > settings.cap)
    summary[ALL_GOOD] = all_good
    searches = [[d.unique for d in ds] for ds in dedup.by_search()]
    summary["sDCG"] = session_dcg(searches, gains, b=settings.sdcg_b, bq=settings.sdcg_bq, depth=settings.sdcg_depth,
                                  gain_map=settings.sdcg_gains)
    summary = {k: summary[k] for k in SUMMARY_METRICS}
    notes = []
    for u, g in zip(dedup.unique, grades, strict=True):
        if g.status != "ok":
            what = f"gain {g.gain:g}" if g.gain is not None else "undefined"
            notes.append(f"#{u.number} ({u.first.label}, {u.first.result.describe(40)}): {g.status}, {what}"
                         f"{': ' + g.note if g.note else ''}")
    if found is False:
        notes.append(f"not every judged good result was retrieved; IterationsForAllGoodResults = {settings.cap} "
                     "(capped: left out of its aggregate)")
    elif capped:
        notes.append(f"every good result was retrieved only by iteration {uncapped:.0f}, after the cap; "
                     f"IterationsForAllGoodResults = {settings.cap} (capped: left out of its aggregate)")
    if len(conversation.turns) > 1:
        notes.append(f"turns 1-{len(conversation.turns) - 1} not evaluated (only the last turn is)")
    return ConversationResult(conversation.conversation_id, conversation.qid, max(1, len(conversation.turns)), dedup,
                              tuple(grades), tuple(curve), summary, found, tuple(notes), capped)


def aggregate(results: Sequence[ConversationResult], settings: AgentSettings = AgentSettings(),
              metrics: Sequence[str] = SUMMARY_METRICS) -> list[Aggregate]:
    """Mean, median and bootstrap interval of each value at N over the conversations where it is defined; for
    :data:`ALL_GOOD` over those that are also not capped (counted in :attr:`Aggregate.capped`)."""
    from gainscope.stats import bootstrap_ci

    out = []
    for m in metrics:
        values = np.array([r.summary[m] for r in results], dtype=np.float64)
        undefined = int(np.isnan(values).sum())
        capped = np.array([m == ALL_GOOD and r.all_good_capped for r in results], dtype=bool)
        defined = values[~np.isnan(values) & ~capped]
        nan = float("nan")
        if len(defined) == 0:
            out.append(Aggregate(m, nan, nan, nan, nan, 0, undefined, int(capped.sum())))
            continue
        low, high = (bootstrap_ci(defined, level=settings.level, resamples=settings.resamples, seed=settings.seed)
                     if len(defined) >= 2 else (nan, nan))
        out.append(Aggregate(m, float(defined.mean()), float(np.median(defined)), low, high, len(defined),
                             undefined, int(capped.sum())))
    return out


def _index(judgments: Any, settings: AgentSettings) -> JudgmentIndex:
    if isinstance(judgments, JudgmentIndex):
        return judgments
    return JudgmentIndex.of(judgments, settings.dedup.url_policy)


async def evaluate_agents_async(conversations: Sequence[Conversation], *, judgments: Any = None, judge: Any = None,
                                settings: AgentSettings = AgentSettings(), workers: int = 8,
                                traces: str | None = None) -> AgentReport:
    """Evaluate conversations with gains from the trace (default), from ``judgments`` (a Judgments,
    ``{query_id: {doc_id: grade}}`` or a :class:`JudgmentIndex`) or from ``judge`` (the Judge protocol).

    Judgments that match no conversation's query, or none of the results of the judged conversations, are an
    :class:`~gainscope.errors.InconsistentInputError`; conversations they do not match are warned about
    (:mod:`gainscope.agents.overlap`). ``traces`` names where the conversations came from, in those messages."""
    if judgments is not None and judge is not None:
        raise PolicyError("give gains from judgments or from a judge, not both")
    if not conversations:
        raise InputError("no conversation to evaluate")
    source = "judgments" if judgments is not None else "judge" if judge is not None else "trace"
    missing = settings.missing or ("zero" if source == "judgments" else "undefined")
    index = _index(judgments, settings) if judgments is not None else None
    results = []
    judged: list[Matched] = []
    for conv in conversations:
        dedup = deduplicate_conversation(conv, settings.dedup)
        known: set[str] | None = None
        matched = None
        if index is not None:
            grades, matched = judgment_grades(dedup, index, conv.qid, missing=missing,
                                              url_policy=settings.dedup.url_policy, key=settings.judgments_key)
            known = index.good(conv.qid, settings.good_gain)
            judged.append((conv, dedup, matched))
        elif judge is not None:
            text = conv.last_turn.query
            if dedup.unique and not text:
                raise InputError(f"conversation {conv.conversation_id}: the last turn has no query (the user's "
                                 "request), which the judge grades results against")
            grades = await judge_grades(dedup, judge, Query(conv.qid, text or ""), workers=workers,
                                        url_policy=settings.dedup.url_policy)
        else:
            grades = trace_grades(dedup, missing=missing, where=f"conversation {conv.conversation_id}: ")
        results.append(score_conversation(conv, dedup, grades, settings, known_good=known, matched=matched))
    if index is not None:
        check_overlap(judged, index, key=settings.judgments_key, missing=missing, url_policy=settings.dedup.url_policy,
                      traces=traces)
    return AgentReport(tuple(results), tuple(aggregate(results, settings)), settings, source)


def evaluate_agents(conversations: Sequence[Conversation], *, judgments: Any = None, judge: Any = None,
                    settings: AgentSettings = AgentSettings(), workers: int = 8,
                    traces: str | None = None) -> AgentReport:
    """:func:`evaluate_agents_async` run to completion (not from inside a running event loop)."""
    return asyncio.run(evaluate_agents_async(conversations, judgments=judgments, judge=judge, settings=settings,
                                             workers=workers, traces=traces))
