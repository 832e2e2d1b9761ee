"""A case as TREC qrels and a TREC run, so that every metric of ``gainscope evaluate`` applies to it.

* qrels: ``QID 0 DOCID RATING``, one line per rated document (returned or not);
* run: ``QID Q0 DOCID RANK SCORE TAG``, the results in order with score ``n - rank + 1``, so that trec_eval's
  ordering (score descending) is exactly the case's order; no ties.

TREC ids cannot contain spaces: a query's id is its ``id`` when given, else its text with every whitespace
character replaced by ``_``. Two queries that would get the same id are an error (give them ``id``\\s).
Unrated results are simply not in the qrels (trec_eval counts them as non-relevant, as Quepid's built-in
scorers count them as 0).

:func:`with_run_results` goes the other way: the results of a run (any run file gainscope reads) are matched
to the case's queries by the same ids, so a run written by :func:`write_trec_run`, or by an engine given
those ids, reads back; a run query id also matches a query's exact ``id`` or text. Run query ids that match no
query, and queries the run has no results for, are returned for the caller to report; a run none of whose query
ids matches is an error.

:func:`evaluate_command` is the ``gainscope evaluate`` command line that gives, query by query, the numbers of
``gainscope case score`` on the two files (``case export`` prints it).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from gainscope.cases.model import Case, CaseQuery
from gainscope.cases.overlap import no_query_in_common
from gainscope.cases.scale import RatingScale
from gainscope.errors import InconsistentInputError, format_ids

if TYPE_CHECKING:
    from gainscope.cases.scorers import BuiltinScorer

__all__ = ["RunMatch", "evaluate_command", "trec_ids", "with_run_results", "write_trec_qrels", "write_trec_run"]

_SPACE = re.compile(r"\s")


def trec_ids(case: Case) -> dict[str, str]:
    """``{query text: TREC id}`` (see the module docstring)."""
    out: dict[str, str] = {}
    owner: dict[str, str] = {}
    for q in case.queries:
        qid = _trec_id(q)
        if qid in owner:
            raise InconsistentInputError(f"queries {owner[qid]!r} and {q.query!r} would both get the TREC id {qid!r}; "
                                         f"give them distinct 'id's in the case")
        owner[qid] = q.query
        out[q.query] = qid
    return out


def _doc(doc: str, query: str) -> str:
    if _SPACE.search(doc):
        raise InconsistentInputError(f"document id {doc!r} of query {query!r} contains whitespace, which TREC files "
                                     f"cannot hold")
    return doc


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def write_trec_qrels(case: Case) -> str:
    """The case's ratings as TREC qrels."""
    ids = trec_ids(case)
    lines = [f"{ids[q.query]} 0 {_doc(doc, q.query)} {_num(r)}" for q in case.queries for doc, r in q.ratings.items()]
    return "".join(line + "\n" for line in lines)


def write_trec_run(case: Case, tag: str = "case") -> str:
    """The case's results as a TREC run (rank order kept by descending scores)."""
    ids = trec_ids(case)
    lines = []
    for q in case.queries:
        n = len(q.results)
        for rank, doc in enumerate(q.results, start=1):
            lines.append(f"{ids[q.query]} Q0 {_doc(doc, q.query)} {rank} {n - rank + 1} {tag}")
    return "".join(line + "\n" for line in lines)


def evaluate_command(case: Case, scorer: BuiltinScorer, qrels: str, run: str, *,
                     scale: RatingScale | Any = None) -> tuple[str, list[str]]:
    """The ``gainscope evaluate`` command line that gives, for every query of ``qrels`` and ``run`` (the case as
    :func:`write_trec_qrels` and :func:`write_trec_run` write it), the number ``case score`` gives it with the
    built-in ``scorer`` (on ``scale``, else the case's or the scorer's), and notes on what it leaves to
    ``case score``. What TREC files cannot carry is in options: the scorer's name under ``--profile quepid``,
    ``--max-grade`` (the top of the scale) for a metric that divides by it, ``--float-grades`` for decimal
    ratings; ``-q`` prints the queries."""
    from gainscope.cases.scoring import case_scale

    used, _ = case_scale(case, scorer, scale)
    parts = ["gainscope", "evaluate", qrels, run, "-m", scorer.name, "--profile", "quepid", "-q"]
    if scorer.metric.uses_max_grade and used.max > 0:
        parts += ["--max-grade", _num(used.max)]
    if any(not float(r).is_integer() for q in case.queries for r in q.ratings.values()):
        parts.append("--float-grades")
    notes = []
    unrated = [q.query for q in case.queries if not q.ratings]
    if unrated:
        notes.append(f"evaluate leaves out the {len(unrated)} quer{'y' if len(unrated) == 1 else 'ies'} without "
                     f"ratings (not in the qrels), which case score scores as Quepid does: {format_ids(unrated)}")
    renamed = [q.query for q in case.queries if _trec_id(q) != q.query]
    if renamed:
        notes.append(f"query ids in the TREC files: the query's id, else its text with spaces as _ "
                     f"({', '.join(f'{q!r} is {_trec_id(case.query(q))}' for q in renamed[:3])}"
                     f"{', ...' if len(renamed) > 3 else ''})")
    notes.append("case score's mean follows Quepid's rules (a null score is zsr or -- and left out, negative scores "
                 "become 0, --unscored, --undefined); evaluate's is the mean of every query's value")
    return shlex.join(parts), notes


@dataclass(frozen=True)
class RunMatch:
    """A case with a run's results: ``unmatched`` are the run query ids that match no query (their results are
    left out), ``missing`` the texts of the queries the run has no results for (they keep the ones they had)."""

    case: Case
    unmatched: tuple[str, ...]
    missing: tuple[str, ...]


def with_run_results(case: Case, run: Mapping[str, Sequence[str]]) -> RunMatch:
    """The case with each query's results taken from ``run`` (``{run query id: doc ids in rank order}``),
    matched by the query's TREC id (see the module docstring), its ``id`` or its text."""
    owner: dict[str, str] = {}
    for q in case.queries:
        for key in dict.fromkeys((_trec_id(q), q.id, q.query)):
            if key is None:
                continue
            if key in owner and owner[key] != q.query:
                raise InconsistentInputError(f"run query id {key!r} would match both query {owner[key]!r} and "
                                             f"query {q.query!r}; give the queries distinct 'id's")
            owner[key] = q.query
    found: dict[str, str] = {}
    unmatched: list[str] = []
    for rid in run:
        query = owner.get(rid)
        if query is None:
            unmatched.append(rid)
        elif query in found:
            raise InconsistentInputError(f"run query ids {found[query]!r} and {rid!r} both match query {query!r}")
        else:
            found[query] = rid
    if run and case.queries and not found:
        raise no_query_in_common(list(run), [_trec_id(q) for q in case.queries], left_name="the run",
                                 right_name="the case", hint="a run query id matches a query's id, its text with "
                                 "spaces as _, or its exact text")
    queries = tuple(CaseQuery(q.query, q.ratings, tuple(run[found[q.query]]) if q.query in found else q.results,
                              q.options, q.num_found, q.id) for q in case.queries)
    missing = tuple(q.query for q in case.queries if q.query not in found)
    return RunMatch(replace(case, queries=tuple(queries)), tuple(unmatched),
                    missing)


def _trec_id(q: CaseQuery) -> str:
    """The TREC id of one query: its ``id``, else its text with whitespace as ``_``."""
    return _SPACE.sub("_", q.qid)
