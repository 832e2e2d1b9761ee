"""Gains of de-duplicated results: from the trace, from judgments (qrels by id or URL), or from a judge.

A gain belongs to a *unique* result (:class:`~gainscope.agents.dedup.UniqueResult`), so it is asked and counted
once however often the result was returned. Each source gives one :class:`Grade` per unique result:

* **trace** -- the ``gain`` of the first occurrence that has one. Occurrences with other gains raise an
  :class:`~gainscope.errors.InputWarning` naming the result. A unique result without any gain is *unjudged*.
* **judgments** -- qrels keyed by the conversation's ``query_id`` (default: its id). The qrels doc ids are one
  key space, and ``key`` (:data:`JUDGMENT_KEYS`, ``--judgments-key``) says which field of a result they are,
  so that a generic id and a domain id never match each other (``id=g1`` and ``domain_id=g1`` are two
  results, and the qrels' ``g1`` is only one of them):

  - ``id`` (the default): the result's generic ``id``;
  - ``domain_id``: the result's ``domain_id``;
  - ``url``: the result's URL, as given or normalised (judgment doc ids that are URLs are normalised the same
    way, so ``http://www.x.com/a/`` in the qrels matches ``https://x.com/a?utm_source=y`` in the trace).

  With ``id`` or ``domain_id``, a unique result none of whose occurrences has that field (a web page known
  only by its URL) is looked up by its URL instead; one that has the field is looked up by it only. A unique
  result takes the grade of the first doc id found over its occurrences in order.
* **judge** -- any object with the :class:`~gainscope.judges.labeling.Judge` protocol on the 0-4 scale. The
  judge sees the turn's query (the user's request) and the result's content (else its snippet) and title; the
  document id is the first of domain_id, id, normalised URL, else ``text:<hash>``. A label whose status is
  ``failed`` is a *failed* grade: reported, never counted as 0. A result with no text cannot be judged
  (*missing*).

``missing="zero"`` counts unjudged results as gain 0 (trec_eval's convention for documents absent from the
qrels, the default with judgments); ``missing="undefined"`` leaves them without a gain, which makes every
gain-based value undefined from the iteration where such a result first appears (the default for trace gains).
Failed and missing judge grades are always undefined.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from gainscope.agents.dedup import Deduplication, UniqueResult
from gainscope.agents.fingerprints import text_hash
from gainscope.agents.urls import DEFAULT_URL_POLICY, UrlPolicy, normalise_url
from gainscope.errors import InputError, InputWarning, PolicyError
from gainscope.io.texts import Document, Query

__all__ = ["JUDGMENT_KEYS", "MISSING", "Grade", "JudgmentIndex", "judge_grades", "judgment_grades", "trace_grades",
           "unique_doc_id"]

MISSING = ("zero", "undefined")
#: which field of a result the qrels doc ids are (see the module docstring)
JUDGMENT_KEYS = ("id", "domain_id", "url")
Status = Literal["ok", "unjudged", "failed", "missing"]


@dataclass(frozen=True)
class Grade:
    """The gain of one unique result, where it came from, and ``note`` when it is not a plain label."""

    gain: float | None
    status: Status
    source: str
    note: str = ""
    doc_id: str = ""

    @property
    def defined(self) -> bool:
        """Whether the result has a gain to count."""
        return self.gain is not None


def _missing(missing: str) -> str:
    if missing not in MISSING:
        raise PolicyError(f"missing must be one of {', '.join(MISSING)}; got {missing!r}")
    return missing


def trace_grades(dedup: Deduplication, *, missing: str = "undefined", where: str = "") -> list[Grade]:
    """Gains from the trace itself (see the module docstring)."""
    _missing(missing)
    out = []
    for u in dedup.unique:
        gains = [(m.label, m.result.gain) for m in u.members if m.result.gain is not None]
        if not gains:
            out.append(Grade(0.0 if missing == "zero" else None, "unjudged", "trace", "no gain in the trace"))
            continue
        first = gains[0][1]
        others = sorted({g for _, g in gains if g != first})
        if others:
            warnings.warn(f"{where}result #{u.number} has gains {first} and {', '.join(map(str, others))} in the "
                          f"trace; the first ({first}, at {gains[0][0]}) is used", InputWarning, stacklevel=2)
        out.append(Grade(float(first), "ok", "trace"))
    return out


@dataclass
class JudgmentIndex:
    """Judgments by query: doc id -> grade, and normalised URL -> doc id for doc ids that are URLs; ``source``
    names where they came from (a path), in messages."""

    grades: dict[str, dict[str, float]]
    urls: dict[str, dict[str, str]]
    source: str | None = None

    @classmethod
    def of(cls, judgments: Any, url_policy: UrlPolicy = DEFAULT_URL_POLICY) -> JudgmentIndex:
        """From a :class:`~gainscope.core.judgments.Judgments` or ``{query_id: {doc_id: grade}}``."""
        table: dict[str, dict[str, float]] = {}
        if isinstance(judgments, Mapping):
            for q, docs in judgments.items():
                if not isinstance(docs, Mapping):
                    raise InputError(f"judgments of {q!r} must map doc ids to grades")
                table[str(q)] = {str(d): float(g) for d, g in docs.items()}
        else:
            frame = getattr(judgments, "frame", None)
            if frame is None:
                raise InputError("judgments must be a Judgments object or {query_id: {doc_id: grade}}")
            for q, d, g in zip(frame["query_id"].to_list(), frame["doc_id"].to_list(), frame["grade"].to_list(),
                               strict=True):
                table.setdefault(q, {})[d] = float(g)
        urls: dict[str, dict[str, str]] = {}
        for q, docs in table.items():
            for d in docs:
                if "://" in d or d.startswith("www."):
                    urls.setdefault(q, {}).setdefault(normalise_url(d, url_policy), d)
        source = getattr(judgments, "source", None)
        return cls(table, urls, source if isinstance(source, str) else None)

    def good(self, query_id: str, threshold: float) -> set[str]:
        """The doc ids judged good (grade >= threshold) for a query."""
        return {d for d, g in self.grades.get(query_id, {}).items() if g >= threshold}

    def matches(self, query_id: str, unique: UniqueResult, url_policy: UrlPolicy = DEFAULT_URL_POLICY, *,
                key: str = "id") -> list[str]:
        """The judged doc ids a unique result is, in lookup order: by its ``key`` field (``id``, ``domain_id``
        or ``url``); by URL when the key is an id field the result does not have (see the module docstring)."""
        _key(key)
        docs = self.grades.get(query_id, {})
        urls = self.urls.get(query_id, {})
        found: list[str] = []
        results = [m.result for m in unique.members]
        if key != "url" and any(getattr(r, key) is not None for r in results):
            for r in results:
                value = getattr(r, key)
                if value is not None and value in docs and value not in found:
                    found.append(value)
            return found
        for r in results:
            if r.url is None:
                continue
            for doc in (r.url if r.url in docs else None, urls.get(normalise_url(r.url, url_policy))):
                if doc is not None and doc not in found:
                    found.append(doc)
        return found


def _key(key: str) -> str:
    if key not in JUDGMENT_KEYS:
        raise PolicyError(f"judgments_key must be one of {', '.join(JUDGMENT_KEYS)}; got {key!r}")
    return key


def judgment_grades(dedup: Deduplication, index: JudgmentIndex, query_id: str, *, missing: str = "zero",
                    url_policy: UrlPolicy = DEFAULT_URL_POLICY,
                    key: str = "id") -> tuple[list[Grade], list[list[str]]]:
    """Gains from judgments, and for each unique result the judged doc ids it matched (by ``key``)."""
    _missing(missing)
    _key(key)
    grades, matched = [], []
    for u in dedup.unique:
        found = index.matches(query_id, u, url_policy, key=key)
        matched.append(found)
        if found:
            grades.append(Grade(index.grades[query_id][found[0]], "ok", "judgments", doc_id=found[0]))
        else:
            grades.append(Grade(0.0 if missing == "zero" else None, "unjudged", "judgments",
                                "not in the judgments"))
    return grades, matched


def unique_doc_id(unique: UniqueResult, url_policy: UrlPolicy = DEFAULT_URL_POLICY) -> str:
    """The document id a judge and its store know a unique result by."""
    for name in ("domain_id", "id"):
        v = unique.get(name)
        if v:
            return v.strip()
    url = unique.get("url")
    if url:
        return normalise_url(url, url_policy)
    return "text:" + text_hash(unique.get("content") or unique.get("snippet") or unique.get("title") or "")


async def judge_grades(dedup: Deduplication, judge: Any, query: Query, *, workers: int = 8,
                       url_policy: UrlPolicy = DEFAULT_URL_POLICY) -> list[Grade]:
    """Gains from a judge (the :class:`~gainscope.judges.labeling.Judge` protocol, scale 0-4), one request per
    unique result with text, at most ``workers`` at a time."""
    scale = judge.spec.prompt.scale
    if (scale.low, scale.high) != (0, 4):
        raise PolicyError(f"agent gains use the 0-4 scale of seed 003; the judge's prompt "
                          f"{judge.spec.prompt.name!r} grades {scale}")
    gate = asyncio.Semaphore(max(1, workers))

    async def one(u: UniqueResult) -> Grade:
        doc_id = unique_doc_id(u, url_policy)
        text = u.get("content") or u.get("snippet")
        if not text:
            return Grade(None, "missing", "judge", "no snippet or content to judge", doc_id)
        async with gate:
            label = await judge.grade(query, Document(doc_id, text, u.get("title") or ""))
        if label.status != "ok" or label.grade is None:
            return Grade(None, "failed", "judge", label.error or "the judge gave no grade", doc_id)
        return Grade(float(label.grade), "ok", "judge", doc_id=doc_id)

    return list(await asyncio.gather(*(one(u) for u in dedup.unique)))
