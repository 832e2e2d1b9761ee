"""Evaluate agent conversations: de-duplicate the last turn, grade its unique results, build one session per
conversation (:func:`gainscope.core.sessions.build_session_run`), evaluate seed 003's metrics and session DCG
with the one pipeline (:func:`gainscope.evaluation.compute`), and present the results as the agent view
(:class:`AgentReport`): every value at N and at each iteration, notes, and aggregates over conversations.

The metrics are the core's session family (:mod:`gainscope.metrics.families.session`); the names of the view
(``CG@i``, ``|R^N|`` ...) are seed 003's (:mod:`gainscope.agents.metrics`). Scope: only the last turn of each
conversation is evaluated (seed 003); its iterations are the ones where search was invoked
(:meth:`~gainscope.agents.trace.Turn.search_iterations`), numbered ``1..N``. The per-iteration curve of a
conversation is the metrics at ``@i`` for ``i = 1..N``; its values at N the metrics without a cutoff.

Aggregates over conversations of each value at N: the mean (as :class:`~gainscope.results.Results` aggregates
it) and the median of the conversations where it is defined, a bootstrap confidence interval of the mean
(:func:`gainscope.stats.bootstrap_ci`, percentile, 95 %, 10,000 resamples, seed 0; undefined with fewer than two
values), and how many conversations had it undefined.

IterationsForAllGoodResults is aggregated over the conversations that retrieved every good result by the cap
(their value is the iteration itself). A conversation whose value is the cap because the good results were
never all retrieved, or were all retrieved only after iteration ``cap``, is *capped*: its value is a censored
stand-in, not an iteration count (the metric marks it censored in the Results), so it is left out of the mean,
median and interval and counted apart (:attr:`Aggregate.capped`). Averaging the cap (100) with real iteration
counts would say nothing: nine conversations that finish in 2 iterations and one capped give a "mean" of 11.8.
The mean therefore reads "how many iterations the conversations that found everything took", and ``capped``
how many did not.
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
from gainscope.agents.metrics import CAP, ITERATION_COLUMNS, POLICIES, IterationValues, at_n, column_metrics
from gainscope.agents.overlap import Matched, check_overlap
from gainscope.agents.trace import Conversation
from gainscope.core.sessions import Session, build_session_run
from gainscope.errors import InputError, PolicyError, option
from gainscope.evaluation import compute, resolve_metrics
from gainscope.io.texts import Query
from gainscope.metrics.families.session import IterationsForAllGoodResults, SessionDCG
from gainscope.results import Results, aggregate_values

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
]

#: every value at N: the per-iteration values of seed 003 at i = N (the last iteration: ``|R^N|``, ``G_N`` ...),
#: the cumulative ones through N (``R@N``, ``CG@N`` ...), IterationsForAllGoodResults and session DCG
SUMMARY_METRICS = ("N", *(at_n(c) for c in ITERATION_COLUMNS), "IterationsForAllGoodResults", "sDCG")
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
            raise PolicyError(f"{option('judgments_key', ...)} must be one of {', '.join(JUDGMENT_KEYS)}; got "
                              f"{self.judgments_key!r}")
        if self.missing not in (None, "zero", "undefined"):
            raise PolicyError(f"{option('missing', ..., cli='--unjudged')} must be 'zero' or 'undefined'; got "
                              f"{self.missing!r}")
        if self.sdcg_gains is not None and (not self.sdcg_gains or any(
                not math.isfinite(k) or k < 0 or not math.isfinite(v) or v < 0 for k, v in self.sdcg_gains.items())):
            raise PolicyError(f"{option('sdcg_gains', ...)} must map grades >= 0 to finite gains >= 0; got "
                              f"{dict(self.sdcg_gains)}")
        if self.cap < 1:
            raise PolicyError(f"cap must be >= 1; got {self.cap}")
        if not (math.isfinite(self.good_gain) and self.good_gain >= 0):
            raise PolicyError(f"{option('good_gain', ...)} must be a grade >= 0; got {self.good_gain!r}")
        if not (self.sdcg_b > 1 and self.sdcg_bq > 1):
            raise PolicyError(f"the sDCG log bases {option('sdcg_b', ...)} and {option('sdcg_bq', ...)} must be "
                              f"> 1; got {self.sdcg_b!r} and {self.sdcg_bq!r}")
        if self.sdcg_depth is not None and self.sdcg_depth < 1:
            raise PolicyError(f"{option('sdcg_depth', ...)} must be >= 1 or None; got {self.sdcg_depth!r}")

    def session_dcg(self) -> SessionDCG:
        """The core metric session DCG is with these settings."""
        return SessionDCG(self.sdcg_b, self.sdcg_bq, self.sdcg_depth,
                          "linear" if self.sdcg_gains is None else dict(self.sdcg_gains))

    def all_good(self, source: str, cap: int | None = None) -> IterationsForAllGoodResults:
        """The core metric IterationsForAllGoodResults is for gains from ``source``: every judged good document
        must be retrieved with judgments, every good result retrieved otherwise (``cap``: another cap)."""
        return IterationsForAllGoodResults(self.good_gain, self.cap if cap is None else cap,
                                           "judged" if source == "judgments" else "retrieved")

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

    @property
    def unique_results(self) -> int:
        """How many unique results the last turn retrieved."""
        return len(self.dedup.unique)

    @property
    def grade_counts(self) -> dict[str, int]:
        """How many grades of each status (``ok``, ``unjudged``, ``failed``, ``missing``)."""
        return {s: sum(1 for g in self.grades if g.status == s) for s in ("ok", "unjudged", "failed", "missing")}

    def to_dict(self, *, iterations: bool = True) -> dict[str, Any]:
        """Plain data (NaN as None)."""
        out: dict[str, Any] = {"conversation_id": self.conversation_id, "query_id": self.query_id,
                               "turn": self.turn, "unique_results": self.unique_results,
                               "summary": {k: _plain(v) for k, v in self.summary.items()},
                               "all_good_found": self.all_good_found, "all_good_capped": self.all_good_capped,
                               "grades": self.grade_counts, "notes": list(self.notes)}
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

    @property
    def censors(self) -> bool:
        """Whether this value has capped (censored) conversations to count apart: IterationsForAllGoodResults."""
        return self.metric == ALL_GOOD


@dataclass(frozen=True)
class AgentReport:
    """Every conversation's result and the aggregates, with the settings and the gain source: the agent view of
    ``results``, the :class:`~gainscope.results.Results` of the session metrics (one query per conversation,
    the values at N and at every iteration ``@i``)."""

    conversations: tuple[ConversationResult, ...]
    aggregates: tuple[Aggregate, ...]
    settings: AgentSettings
    source: str
    results: Results | None = field(default=None, compare=False)

    @property
    def level(self) -> float:
        """The confidence level of the aggregates' intervals."""
        return self.settings.level

    @property
    def cap(self) -> int:
        """The cap of IterationsForAllGoodResults."""
        return self.settings.cap

    def conventions(self) -> list[tuple[str, str]]:
        """Every convention that shaped the numbers, as (name, description) rows."""
        return self.settings.describe(self.source)

    def to_dict(self, *, conversations: bool = True) -> dict[str, Any]:
        """Plain data for JSON."""
        out: dict[str, Any] = {
            "conventions": dict(self.conventions()),
            "aggregate": {a.metric: {"mean": _plain(a.mean), "median": _plain(a.median),
                                     "ci": [_plain(a.ci_low), _plain(a.ci_high)], "n": a.n,
                                     "undefined": a.undefined, **({"capped": a.capped} if a.censors else {})}
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


def _session(conversation: Conversation, dedup: Deduplication, grades: Sequence[Grade], *,
             judged: Mapping[str, float] | None = None,
             matched: Sequence[Sequence[str]] | None = None) -> Session:
    """One conversation as a session: every occurrence in trace order, each unique result a document
    (``#number``) with its grade (None: unknown); with judgments, the judged pool of the conversation's query and
    the judged doc ids each unique result matched."""
    if len(grades) != len(dedup.unique):
        raise InputError(f"{len(grades)} grades for {len(dedup.unique)} unique results")
    number = dedup.search_number()
    occurrences = [d.occurrence for d in dedup.decisions]
    return Session(conversation.conversation_id, tuple(f"#{d.unique}" for d in dedup.decisions),
                   tuple(o.iteration for o in occurrences), tuple(number[o.iteration, o.search] for o in occurrences),
                   dedup.n_iterations, {f"#{u.number}": g.gain for u, g in zip(dedup.unique, grades, strict=True)},
                   judged=judged, matches=None if matched is None else {
                       f"#{u.number}": tuple(m) for u, m in zip(dedup.unique, matched, strict=True)})


def _notes(conversation: Conversation, dedup: Deduplication, grades: Sequence[Grade], found: bool | None,
           capped: bool, uncapped: float, cap: int) -> tuple[str, ...]:
    """What a reader of one conversation's numbers must know: grades that are not plain labels, good results
    never all retrieved or retrieved after the cap, turns left out."""
    notes = []
    for u, g in zip(dedup.unique, grades, strict=True):
        if g.status != "ok":
            what = f"gain {g.gain:g}" if g.gain is not None else "undefined"
            notes.append(f"#{u.number} ({u.first.label}, {u.first.result.describe(40)}): {g.status}, {what}"
                         f"{': ' + g.note if g.note else ''}")
    if found is False:
        notes.append(f"not every judged good result was retrieved; IterationsForAllGoodResults = {cap} "
                     "(capped: left out of its aggregate)")
    elif capped:
        notes.append(f"every good result was retrieved only by iteration {uncapped:.0f}, after the cap; "
                     f"IterationsForAllGoodResults = {cap} (capped: left out of its aggregate)")
    if len(conversation.turns) > 1:
        notes.append(f"turns 1-{len(conversation.turns) - 1} not evaluated (only the last turn is)")
    return tuple(notes)


def _view(items: Sequence[tuple[Conversation, Deduplication, Sequence[Grade], Session]], settings: AgentSettings,
          source: str) -> AgentReport:
    """Evaluate the sessions with the one pipeline and present the Results as the agent view."""
    jr = build_session_run([session for *_, session in items], POLICIES, run_name="agents")
    top = max((dedup.n_iterations for _, dedup, _, _ in items), default=0)
    at_n_metrics = column_metrics(settings.good_gain, None)
    per_i = [column_metrics(settings.good_gain, i) for i in range(1, top + 1)]
    all_good, whole = settings.all_good(source), settings.all_good(source, cap=max(settings.cap, top))
    sdcg = settings.session_dcg()
    results = compute(jr, resolve_metrics([*at_n_metrics.values(), all_good, whole, sdcg,  # each once
                                           *(m for cols in per_i for m in cols.values())]), warn=False)
    column = {name: j for j, name in enumerate(results.metric_names)}
    values = {name: results.values[:, j].tolist() for name, j in column.items()}
    assert results.censored is not None  # IterationsForAllGoodResults marks its capped values
    capped = results.censored[:, column[str(all_good)]].tolist()
    never = results.censored[:, column[str(whole)]].tolist()  # with a cap that never binds: never all retrieved
    out = []
    for k, (conv, dedup, grades, _) in enumerate(items):
        summary = {"N": float(dedup.n_iterations), **{at_n(c): values[str(m)][k] for c, m in at_n_metrics.items()},
                   ALL_GOOD: values[str(all_good)][k], "sDCG": values[str(sdcg)][k]}
        found = None if math.isnan(summary[ALL_GOOD]) else not never[k]
        curve = tuple(IterationValues(i, {c: values[str(m)][k] for c, m in per_i[i - 1].items()})
                      for i in range(1, dedup.n_iterations + 1))
        notes = _notes(conv, dedup, grades, found, capped[k], values[str(whole)][k], settings.cap)
        out.append(ConversationResult(conv.conversation_id, conv.qid, max(1, len(conv.turns)), dedup, tuple(grades),
                                      curve, {m: summary[m] for m in SUMMARY_METRICS}, found, notes, capped[k]))
    return AgentReport(tuple(out), tuple(aggregate(out, settings)), settings, source, results)


def aggregate(results: Sequence[ConversationResult], settings: AgentSettings = AgentSettings(),
              metrics: Sequence[str] = SUMMARY_METRICS) -> list[Aggregate]:
    """Mean (as Results aggregate), median and bootstrap interval of each value at N over the conversations
    where it is defined; for :data:`ALL_GOOD` over those that are also not capped (censored, counted in
    :attr:`Aggregate.capped`)."""
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
        out.append(Aggregate(m, aggregate_values(values, "mean", capped), float(np.median(defined)), low, high,
                             len(defined), undefined, int(capped.sum())))
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
    seen: set[str] = set()
    for conv in conversations:
        if conv.conversation_id in seen:
            raise InputError(f"conversation {conv.conversation_id!r} is given twice; conversation ids must be unique")
        seen.add(conv.conversation_id)
    source = "judgments" if judgments is not None else "judge" if judge is not None else "trace"
    missing = settings.missing or ("zero" if source == "judgments" else "undefined")
    index = _index(judgments, settings) if judgments is not None else None
    items = []
    judged: list[Matched] = []
    for conv in conversations:
        dedup = deduplicate_conversation(conv, settings.dedup)
        if index is not None:
            grades, matched = judgment_grades(dedup, index, conv.qid, missing=missing,
                                              url_policy=settings.dedup.url_policy, key=settings.judgments_key)
            judged.append((conv, dedup, matched))
            session = _session(conv, dedup, grades, judged=index.grades.get(conv.qid, {}), matched=matched)
        else:
            if judge is not None:
                text = conv.last_turn.query
                if dedup.unique and not text:
                    raise InputError(f"conversation {conv.conversation_id}: the last turn has no query (the user's "
                                     "request), which the judge grades results against")
                grades = await judge_grades(dedup, judge, Query(conv.qid, text or ""), workers=workers,
                                            url_policy=settings.dedup.url_policy)
            else:
                grades = trace_grades(dedup, missing=missing, where=f"conversation {conv.conversation_id}: ")
            session = _session(conv, dedup, grades)
        items.append((conv, dedup, grades, session))
    if index is not None:
        check_overlap(judged, index, key=settings.judgments_key, missing=missing, url_policy=settings.dedup.url_policy,
                      traces=traces)
    return _view(items, settings, source)


def evaluate_agents(conversations: Sequence[Conversation], *, judgments: Any = None, judge: Any = None,
                    settings: AgentSettings = AgentSettings(), workers: int = 8,
                    traces: str | None = None) -> AgentReport:
    """:func:`evaluate_agents_async` run to completion (not from inside a running event loop)."""
    return asyncio.run(evaluate_agents_async(conversations, judgments=judgments, judge=judge, settings=settings,
                                             workers=workers, traces=traces))
