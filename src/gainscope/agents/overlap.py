"""How judgments meet the traces, and what happens when they do not.

Judgments join the traces twice (:mod:`gainscope.agents.gains`): a conversation takes the judgments of its query
(``query_id``, else its conversation id), and each unique result of its last turn the grade of the judged doc id
it is (by the judgments key: ``id``, ``domain_id`` or ``url``). Input that matches nothing never becomes a table
of zeros:

* **no conversation's query is judged** -- an :class:`~gainscope.errors.InconsistentInputError` naming both
  sides (judgments file, traces, example ids of each) and the likely cause: ids that match once whitespace and
  leading zeros are removed, or judgments keyed by conversation ids where the conversations carry a
  ``query_id``;
* **no result of a conversation in a judged query is judged** (and there is at least one result) -- an
  :class:`~gainscope.errors.InconsistentInputError` naming example doc ids of each side and the judgments key
  that would match, when another one does (``--judgments-key url``);
* **partly**: conversations whose query has no judgments (every result unjudged) -- one
  :class:`~gainscope.errors.QueryCoverageWarning` naming the first few and how many; conversations in judged
  queries none of whose results is judged -- one :class:`~gainscope.errors.InputWarning`, likewise.

Judged queries that no conversation asks are not an error nor a warning: a judgments file usually covers more
queries than one evaluation's traces, and nothing is scored for them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from gainscope.agents.dedup import Deduplication
from gainscope.agents.gains import JUDGMENT_KEYS, JudgmentIndex
from gainscope.agents.trace import Conversation
from gainscope.agents.urls import UrlPolicy
from gainscope.errors import InconsistentInputError, InputWarning, QueryCoverageWarning, format_ids, loose_match

__all__ = ["check_overlap"]

#: one conversation as judged: the conversation, its de-duplication, and per unique result the judged doc ids
#: it matched (:func:`gainscope.agents.gains.judgment_grades`)
Matched = tuple[Conversation, Deduplication, Sequence[Sequence[str]]]

_FIELD = {"id": "id", "domain_id": "domain_id", "url": "URL"}


def _named(what: str, source: str | None) -> str:
    return f"{what} ({source})" if source else what


def _fix(key: str) -> str:
    """The judgments key as the command line and Python spell it."""
    return f"--judgments-key {key} (judgments_key={key!r} in Python)"


def _of(part: int, whole: int, noun: str) -> str:
    """``"1 of 2 conversations has"``, ``"2 of 3 conversations have"``."""
    return f"{part} of {whole} {noun}{'s' if whole != 1 else ''} {'has' if part == 1 else 'have'}"


def check_overlap(matched: Sequence[Matched], index: JudgmentIndex, *, key: str, missing: str,
                  url_policy: UrlPolicy, traces: str | None = None) -> None:
    """Refuse judgments that match no conversation or no result; warn about the conversations they do not match
    (see the module docstring). ``traces`` names where the conversations came from, in messages."""
    if not matched:
        return
    judgments = _named("the judgments", index.source)
    traces_named = _named("the traces", traces)
    judged = [(c, d, m) for c, d, m in matched if index.grades.get(c.qid)]
    if not judged:
        raise InconsistentInputError(_no_query_message(matched, index, judgments, traces_named))
    with_results = [(c, d, m) for c, d, m in judged if d.unique]
    if with_results and not any(any(ids) for _, _, m in with_results for ids in m):
        raise InconsistentInputError(_no_result_message(with_results, index, judgments, traces_named, key=key,
                                                        missing=missing, url_policy=url_policy))
    counted = "gain 0, as trec_eval" if missing == "zero" else "undefined"
    unjudged = [c for c, _, _ in matched if not index.grades.get(c.qid)]
    if unjudged:
        shown = [c.conversation_id if c.qid == c.conversation_id else f"{c.conversation_id} (query {c.qid})"
                 for c in unjudged]
        warnings.warn(QueryCoverageWarning(
            f"{_of(len(unjudged), len(matched), 'conversation')} a query that {judgments} do not judge, so every "
            f"result of theirs is unjudged ({counted}): {format_ids(shown)}"), stacklevel=3)
    nothing = [c.conversation_id for c, _, m in with_results if not any(m)]
    if nothing:
        warnings.warn(InputWarning(
            f"{_of(len(nothing), len(judged), 'conversation')} a judged query but no result that {judgments} "
            f"judge, so every result of theirs is unjudged ({counted}): {format_ids(nothing)}"), stacklevel=3)


def _no_query_message(matched: Sequence[Matched], index: JudgmentIndex, judgments: str, traces: str) -> str:
    judged_q = [q for q, docs in index.grades.items() if docs]
    conv_q = list(dict.fromkeys(c.qid for c, _, _ in matched))
    have = f"have queries {format_ids(judged_q, 3)}" if judged_q else "have no query"
    hints = []
    near = loose_match(conv_q, judged_q)
    if near is not None:
        hints.append(f"Some ids match after removing whitespace and leading zeros (for example {near[0]!r} and "
                     f"{near[1]!r}); fix the ids so that both files spell them the same.")
    by_conversation = [c for c, _, _ in matched if c.query_id is not None and index.grades.get(c.conversation_id)]
    if by_conversation:
        c = by_conversation[0]
        hints.append(f"The judgments are keyed by conversation ids (for example {c.conversation_id!r}), but "
                     f"{'that conversation has' if len(by_conversation) == 1 else 'those conversations have'} a "
                     f"query_id ({c.query_id!r}), which is used instead: key the judgments by query_id, or drop "
                     "query_id from the traces.")
    return (f"no conversation's query is judged: {judgments} {have}; {traces} have "
            f"{format_ids(conv_q, 3)} (a conversation takes the judgments of its query_id, else of its "
            f"conversation_id).{''.join(' ' + h for h in hints)}")


def _result_ids(d: Deduplication, key: str) -> list[str]:
    """What each unique result is looked up by: its ``key`` field, else (for id and domain_id) its URL."""
    out = []
    for u in d.unique:
        value = None if key == "url" else u.get(key)
        value = value or u.get("url")
        if value:
            out.append(value)
    return out


def _no_result_message(judged: Sequence[Matched], index: JudgmentIndex, judgments: str, traces: str, *, key: str,
                       missing: str, url_policy: UrlPolicy) -> str:
    queries = list(dict.fromkeys(c.qid for c, _, _ in judged))
    docs = list(dict.fromkeys(doc for q in queries for doc in index.grades[q]))
    results = list(dict.fromkeys(r for _, d, _ in judged for r in _result_ids(d, key)))
    total = sum(len(d.unique) for _, d, _ in judged)
    other = {k: sum(1 for c, d, _ in judged for u in d.unique if index.matches(c.qid, u, url_policy, key=k))
             for k in JUDGMENT_KEYS if k != key}
    best = max(other, key=lambda k: other[k])
    if other[best]:
        hint = f"With {_fix(best)}, {other[best]} of the {total} results {'matches' if other[best] == 1 else 'match'}."
    elif (near := loose_match(results, docs)) is not None:
        hint = (f"Some ids match after removing whitespace and leading zeros (for example {near[0]!r} and "
                f"{near[1]!r}); fix the ids so that both files spell them the same.")
    else:
        hint = ("Check that the judgments' doc ids are the results' ids; --judgments-key (judgments_key= in Python) "
                "says which field of a result they are: id, domain_id or url.")
    lookup = "URLs" if key == "url" else f"{_FIELD[key]}s (their URLs where they have no {_FIELD[key]})"
    every = "0" if missing == "zero" else "undefined"
    n = len(queries)
    return (f"no result in {traces} is judged: for the {n} judged quer{'y' if n == 1 else 'ies'} they ask, "
            f"{judgments} have doc ids {format_ids(docs, 3)}, and the {total} unique results have the {lookup} "
            f"{format_ids(results, 3)}; every gain would be {every}. {hint}")
