"""A case as TREC qrels and a TREC run, so that every metric of ``gainscope evaluate`` applies to it.

* qrels: ``QID 0 DOCID RATING``, one line per rated document (returned or not);
* run: ``QID Q0 DOCID RANK SCORE TAG``, the results in order with score ``n - rank + 1``, so that trec_eval's
  ordering (score descending) is exactly the case's order; no ties.

TREC ids cannot contain spaces: a query's id is its ``id`` when given, else its text with every whitespace
character replaced by ``_``. Two queries that would get the same id are an error (give them ``id``\\s).
Unrated results are simply not in the qrels (trec_eval counts them as non-relevant, as Quepid's built-in
scorers count them as 0).
"""

from __future__ import annotations

import re

from gainscope.cases.model import Case
from gainscope.errors import InconsistentInputError

__all__ = ["trec_ids", "write_trec_qrels", "write_trec_run"]

_SPACE = re.compile(r"\s")


def trec_ids(case: Case) -> dict[str, str]:
    """``{query text: TREC id}`` (see the module docstring)."""
    out: dict[str, str] = {}
    owner: dict[str, str] = {}
    for q in case.queries:
        qid = _SPACE.sub("_", q.qid)
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
