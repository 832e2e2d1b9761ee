"""The queries to send: JSON Lines, TSV or a case file.

* JSON Lines (``.jsonl``, ``.ndjson``, or a BEIR folder's ``queries.jsonl``): ``{"id" | "_id" | "query_id",
  "text" | "query", "options"?}``, read by :func:`gainscope.io.texts.read_queries`; ``options`` is an object
  whose keys templates read as ``{{opt.KEY}}``;
* TSV (``.tsv``, ``.txt``): ``id<TAB>text`` per line (MS MARCO's ``queries.tsv``);
* a case file (``.json``, ``.yaml``, ``.yml``; see :mod:`gainscope.cases.files`): every query of the case, its
  ``options`` as options, and its TREC id (its ``id``, else its text with spaces as ``_``, as ``case export``
  writes it) as the query id.

Query ids are what runs and judgments are keyed by: they must not hold whitespace (TREC runs cannot) and must
be unique.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gainscope.errors import FormatError, InputError
from gainscope.search.engine import SearchQuery

if TYPE_CHECKING:
    from gainscope.cases.model import Case

__all__ = ["queries_from_case", "read_search_queries"]


def read_search_queries(path: str | Path) -> list[SearchQuery]:
    """The queries of ``path``, in file order (see the module docstring)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in (".json", ".yaml", ".yml"):
        from gainscope.cases.files import read_case

        return queries_from_case(read_case(p))
    from gainscope.io.texts import read_queries
    from gainscope.io.writers import is_trec_word

    queries = [SearchQuery(q.query_id, q.text, q.options) for q in read_queries(p).values()]
    if not queries:
        raise InputError(f"{p}: no query in the file")
    for q in queries:
        if not is_trec_word(q.id):
            raise FormatError(f"query id {q.id!r} is empty or holds whitespace, which a TREC run cannot hold; give "
                              "ids without spaces", path=str(p))
    return queries


def queries_from_case(case: Case) -> list[SearchQuery]:
    """A case's queries, keyed by their TREC ids."""
    from gainscope.cases.trec import trec_ids

    if not case.queries:
        raise InputError(f"{case.source or 'the case'}: the case has no query")
    ids = trec_ids(case)
    return [SearchQuery(ids[q.query], q.query, dict(q.options)) for q in case.queries]
