"""Two-phase de-duplication of an agent's results (seed 003), with an explanation of every decision.

Results are visited in trace order (iteration, then search, then rank). Each one either starts a new *unique
result* (its first occurrence) or is merged into an earlier unique result as a duplicate.

**Phase 1 -- candidates.** Every unique result is indexed under these keys (dictionary lookups, O(1) each):

=============  ===================================================================================
``domain_id``  the domain-specific id, as given
``id``         the generic id, as given (a separate key space: a domain id never matches a generic id)
``url``        the normalised URL (:func:`gainscope.agents.urls.normalise_url`)
``title``      hash of the normalised title (:func:`gainscope.agents.fingerprints.text_hash`)
``snippet``    hash of the normalised snippet
``content``    hash of the normalised content
``simhash``    with ``near_duplicates=True`` only: the bands of the SimHash of the text (content, else
               snippet), so that texts within ``simhash_distance`` bits are found
=============  ===================================================================================

A new result's candidates are the unique results that share at least one key with it.

**Phase 2 -- verification.** Each candidate is compared with the result on every field both have (the
candidate's value of a field is that of its first occurrence, or of the first later member that had it):

* equal values *agree* and add their weight to the confidence (``domain_id``, ``id``, ``url``, ``content``
  1.0; ``title``, ``snippet`` 0.5 by default; a near-duplicate text within ``simhash_distance`` bits 1.0);
* different values of a *hard* field reject the candidate. Hard by default: ``domain_id``, ``id``, ``url``,
  ``title`` and ``content`` -- the seed's "any field mismatch rejects", except the snippet, which search
  engines write for each query (the same page gets different snippets for different queries). With
  ``near_duplicates``, content or snippets that differ but are near-duplicates are not a mismatch;
* a candidate without a hard mismatch whose confidence reaches ``threshold`` (1.0) is accepted.

So one agreeing id, URL or content suffices; a title alone (0.5) does not, a title and a snippet (1.0) do.
The result joins the accepted candidate with the highest confidence (the earliest one on ties); when none
is accepted it starts a new unique result. Unique results are never merged with each other afterwards, so
first occurrences, and the numbers built on them, do not change with later results.

:func:`explain` renders every decision: which keys proposed which candidates, which fields agreed (with
their weights) or differed (hard or not), the confidence against the threshold, and the outcome.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from gainscope.agents.fingerprints import hamming, normalise_text, simhash, simhash_bands
from gainscope.agents.trace import RESULT_FIELDS, Conversation, Iteration, Result
from gainscope.agents.urls import UrlPolicy, normalise_url
from gainscope.errors import PolicyError

__all__ = [
    "DEFAULT_DEDUP",
    "DEFAULT_HARD_FIELDS",
    "DEFAULT_WEIGHTS",
    "Check",
    "Decision",
    "DedupSettings",
    "Deduplication",
    "Occurrence",
    "UniqueResult",
    "deduplicate",
    "explain",
    "explain_conversations",
]

NEAR = "near-duplicate text"
DEFAULT_WEIGHTS: Mapping[str, float] = MappingProxyType({
    "domain_id": 1.0, "id": 1.0, "url": 1.0, "content": 1.0, "title": 0.5, "snippet": 0.5, NEAR: 1.0})
DEFAULT_HARD_FIELDS = ("domain_id", "id", "url", "title", "content")
_TEXT_FIELDS = ("title", "snippet", "content")


@dataclass(frozen=True)
class DedupSettings:
    """How results are matched (see the module docstring)."""

    threshold: float = 1.0
    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    hard_fields: tuple[str, ...] = DEFAULT_HARD_FIELDS
    near_duplicates: bool = False
    simhash_distance: int = 3
    url_policy: UrlPolicy = UrlPolicy()

    def __post_init__(self) -> None:
        if not self.threshold > 0:
            raise PolicyError(f"the merge threshold must be > 0; got {self.threshold!r}")
        unknown = [f for f in self.hard_fields if f not in RESULT_FIELDS]
        if unknown:
            raise PolicyError(f"unknown hard field {unknown[0]!r}; fields: {', '.join(RESULT_FIELDS)}")
        missing = [f for f in (*RESULT_FIELDS, NEAR) if f not in self.weights]
        if missing:
            raise PolicyError(f"weights must give every field a weight; missing {', '.join(missing)}")
        if any(w < 0 for w in self.weights.values()):
            raise PolicyError("weights must be >= 0")
        if not 0 <= self.simhash_distance <= 16:
            raise PolicyError(f"simhash_distance must be within 0-16 bits; got {self.simhash_distance}")


#: the default settings
DEFAULT_DEDUP = DedupSettings()


@dataclass(frozen=True)
class Occurrence:
    """One result where it appeared: iteration ``i`` (1-based, counting search iterations), search and rank."""

    iteration: int
    search: int
    rank: int
    result: Result

    @property
    def label(self) -> str:
        """``i2.s1.r3``: iteration 2, search 1, rank 3."""
        return f"i{self.iteration}.s{self.search}.r{self.rank}"


@dataclass(frozen=True)
class Check:
    """One candidate verified: the keys that proposed it, agreeing fields with weights, differing fields as
    ``(field, this value, candidate's value, hard)``, the confidence and the outcome."""

    candidate: int
    via: tuple[str, ...]
    agreements: tuple[tuple[str, float], ...]
    mismatches: tuple[tuple[str, str, str, bool], ...]
    confidence: float
    accepted: bool

    @property
    def hard(self) -> bool:
        """Whether a hard mismatch rejected the candidate."""
        return any(m[3] for m in self.mismatches)


@dataclass(frozen=True)
class Decision:
    """What happened to one occurrence: the unique result it belongs to, whether it is the first occurrence,
    and every candidate check (the chosen one, if any, is ``checks[chosen]``)."""

    occurrence: Occurrence
    unique: int
    new: bool
    checks: tuple[Check, ...]
    chosen: int | None


@dataclass
class UniqueResult:
    """A de-duplicated result: its number (1-based, in order of first occurrence) and every occurrence."""

    number: int
    members: list[Occurrence]
    values: dict[str, str] = field(default_factory=dict)  # comparable value per field
    shown: dict[str, str] = field(default_factory=dict)  # value as given per field (for explanations)
    fingerprint: int | None = None

    @property
    def first(self) -> Occurrence:
        """The first occurrence."""
        return self.members[0]

    def get(self, name: str) -> str | None:
        """A field's value as given: that of the first occurrence that has it."""
        return self.shown.get(name)


@dataclass(frozen=True)
class Deduplication:
    """Every decision in trace order and the unique results, for ``n_iterations`` search iterations of
    ``searches_per_iteration`` searches each."""

    decisions: tuple[Decision, ...]
    unique: tuple[UniqueResult, ...]
    n_iterations: int
    searches_per_iteration: tuple[int, ...] = ()

    def search_number(self) -> dict[tuple[int, int], int]:
        """The number of each search over the turn, 1, 2, ... in order, by (iteration, search): searches that
        returned nothing keep theirs (a session's search q counts with its position)."""
        keys = {(i, s) for i, n in enumerate(self.searches_per_iteration, 1) for s in range(1, n + 1)}
        keys |= {(d.occurrence.iteration, d.occurrence.search) for d in self.decisions}
        return {k: q for q, k in enumerate(sorted(keys), start=1)}


def _comparable(result: Result, policy: UrlPolicy) -> tuple[dict[str, str], dict[str, str]]:
    values: dict[str, str] = {}
    shown: dict[str, str] = {}
    for name in RESULT_FIELDS:
        raw = getattr(result, name)
        if raw is None or not raw.strip():
            continue
        if name == "url":
            value = normalise_url(raw, policy)
        elif name in _TEXT_FIELDS:
            value = normalise_text(raw)
        else:
            value = raw.strip()
        if value:
            values[name] = value
            shown[name] = raw
    return values, shown


def _text_of(values: Mapping[str, str]) -> str | None:
    return values.get("content") or values.get("snippet")


class _Index:
    def __init__(self, settings: DedupSettings) -> None:
        self.settings = settings
        self.keys: dict[tuple[object, ...], list[int]] = {}

    def key_list(self, values: Mapping[str, str], fingerprint: int | None) -> list[tuple[object, ...]]:
        keys: list[tuple[object, ...]] = [(name, values[name]) for name in RESULT_FIELDS if name in values]
        if fingerprint is not None:
            keys.extend(("simhash", band, bits) for band, bits in
                        simhash_bands(fingerprint, self.settings.simhash_distance))
        return keys

    def add(self, keys: list[tuple[object, ...]], number: int) -> None:
        for key in keys:
            bucket = self.keys.setdefault(key, [])
            if number not in bucket:
                bucket.append(number)

    def candidates(self, keys: list[tuple[object, ...]]) -> dict[int, list[str]]:
        found: dict[int, list[str]] = {}
        for key in keys:
            for number in self.keys.get(key, ()):
                via = found.setdefault(number, [])
                name = str(key[0])
                if name not in via:
                    via.append(name)
        return dict(sorted(found.items()))


def _verify(values: Mapping[str, str], shown: Mapping[str, str], fingerprint: int | None, unique: UniqueResult,
            via: list[str], settings: DedupSettings) -> Check:
    near = False
    agreements: list[tuple[str, float]] = []
    if settings.near_duplicates and fingerprint is not None and unique.fingerprint is not None:
        distance = hamming(fingerprint, unique.fingerprint)
        near = distance <= settings.simhash_distance
    mismatches: list[tuple[str, str, str, bool]] = []
    for name in RESULT_FIELDS:
        a, b = values.get(name), unique.values.get(name)
        if a is None or b is None:
            continue
        if a == b:
            agreements.append((name, settings.weights[name]))
        else:
            hard = name in settings.hard_fields and not (near and name in ("content", "snippet"))
            mismatches.append((name, shown[name], unique.shown[name], hard))
    if near and not any(name in ("content", "snippet") for name, _ in agreements):
        agreements.append((NEAR, settings.weights[NEAR]))
    confidence = sum(w for _, w in agreements)
    hard = any(m[3] for m in mismatches)
    return Check(unique.number, tuple(via), tuple(agreements), tuple(mismatches), confidence,
                 not hard and confidence >= settings.threshold - 1e-12)


def deduplicate(iterations: Sequence[Iteration], settings: DedupSettings = DEFAULT_DEDUP) -> Deduplication:
    """De-duplicate the results of ``iterations`` (the search iterations ``i = 1..N`` of one turn)."""
    index = _Index(settings)
    uniques: list[UniqueResult] = []
    decisions: list[Decision] = []
    for i, iteration in enumerate(iterations, start=1):
        for s, search in enumerate(iteration.searches, start=1):
            for r, result in enumerate(search.results, start=1):
                occ = Occurrence(i, s, r, result)
                values, shown = _comparable(result, settings.url_policy)
                text = _text_of(values)
                fingerprint = simhash(text) if settings.near_duplicates and text else None
                keys = index.key_list(values, fingerprint)
                checks = tuple(_verify(values, shown, fingerprint, uniques[n - 1], via, settings)
                               for n, via in index.candidates(keys).items())
                accepted = [k for k, c in enumerate(checks) if c.accepted]
                if accepted:
                    chosen = max(accepted, key=lambda k: (checks[k].confidence, -checks[k].candidate))
                    unique = uniques[checks[chosen].candidate - 1]
                    unique.members.append(occ)
                    added = {n: v for n, v in values.items() if n not in unique.values}
                    if added:  # the unique result learns fields it did not have: index them too
                        unique.values.update(added)
                        unique.shown.update({n: shown[n] for n in added})
                        index.add([(n, v) for n, v in added.items()], unique.number)
                    if unique.fingerprint is None and fingerprint is not None:
                        unique.fingerprint = fingerprint
                        index.add(index.key_list({}, fingerprint), unique.number)
                    decisions.append(Decision(occ, unique.number, False, checks, chosen))
                else:
                    unique = UniqueResult(len(uniques) + 1, [occ], dict(values), dict(shown), fingerprint)
                    uniques.append(unique)
                    index.add(keys, unique.number)
                    decisions.append(Decision(occ, unique.number, True, checks, None))
    return Deduplication(tuple(decisions), tuple(uniques), len(iterations),
                         tuple(len(it.searches) for it in iterations))


# ---------------------------------------------------------------------------------------------- explain
def _fmt(x: float) -> str:
    return f"{x:g}"


def _check_text(check: Check, threshold: float, *, numbered: bool = True) -> str:
    agree = ", ".join(f"{name} +{_fmt(w)}" for name, w in check.agreements) or "nothing agrees"
    differ = "; ".join(f"{name} differs{' [hard]' if hard else ''} ({_clip(a)!r} vs {_clip(b)!r})"
                       for name, a, b, hard in check.mismatches)
    if check.hard:
        verdict = "rejected: hard mismatch"
    elif check.accepted:
        verdict = f"confidence {_fmt(check.confidence)} >= {_fmt(threshold)}"
    else:
        verdict = f"rejected: confidence {_fmt(check.confidence)} < {_fmt(threshold)}"
    parts = [f"via {', '.join(check.via)}", agree]
    if differ:
        parts.append(differ)
    body = f"{'; '.join(parts)}; {verdict}"
    return f"#{check.candidate} ({body})" if numbered else body


def _clip(text: str, width: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def explain(dedup: Deduplication, settings: DedupSettings = DEFAULT_DEDUP) -> list[str]:
    """One line per occurrence: new or duplicate, and why (every candidate checked)."""
    lines = []
    for d in dedup.decisions:
        occ = d.occurrence
        head = f"{occ.label:<11} {occ.result.describe(58):<58}  "
        if d.new:
            text = f"new #{d.unique}"
            if d.checks:
                text += "; not " + "; not ".join(_check_text(c, settings.threshold) for c in d.checks)
        else:
            first = dedup.unique[d.unique - 1].first
            chosen = d.checks[d.chosen or 0]  # a merged decision always has its chosen check
            text = f"duplicate of #{d.unique} (first at {first.label}): " + \
                _check_text(chosen, settings.threshold, numbered=False)
            others = [c for k, c in enumerate(d.checks) if k != d.chosen]
            if others:
                text += "; not " + "; not ".join(_check_text(c, settings.threshold) for c in others)
        lines.append(head + text)
    return lines


def explain_conversations(items: Sequence[tuple[Conversation, Deduplication]], settings: DedupSettings) -> str:
    """Every merge decision of every conversation (last turn), with a header of counts per conversation."""
    out = []
    for conv, dedup in items:
        total = len(dedup.decisions)
        dups = sum(1 for d in dedup.decisions if not d.new)
        turns = len(conv.turns)
        scope = f"turn {turns} of {turns}" if turns > 1 else "single turn"
        out.append(f"conversation {conv.conversation_id} ({scope}): {dedup.n_iterations} iteration(s), "
                   f"{total} results, {len(dedup.unique)} unique, {dups} duplicates")
        out.extend("  " + line for line in explain(dedup, settings))
        out.append("")
    return "\n".join(out)
