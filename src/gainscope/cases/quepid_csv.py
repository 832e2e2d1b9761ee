"""Quepid's CSV exports: the case ratings CSV and the snapshot CSVs, in and out.

**Ratings CSV** (Quepid's "CSV" rating export, ``file_format=basic``)::

    query,docid,rating
    star wars,doc1,3
    star wars,doc7,0
    a query nobody rated,,

A query without ratings is a row with empty ``docid`` and ``rating`` (or the query alone). Cells that start
with ``- = + @`` are written by Quepid with one leading space (a CSV-injection guard); that space is removed.
Ratings may be written as ``3`` or ``3.0``.

**Snapshot CSV**, either of

* Quepid's "basic snapshot" export: the same three columns, one row per document of the snapshot in rank
  order, the rating empty for unrated documents; a query listed alone (``query,,``) has no documents in the
  snapshot: a zero-result query;
* the snapshot file Quepid imports (columns ``Snapshot Name, Snapshot Time, Case ID, Query Text, Doc ID, Doc
  Position``) and Quepid's detailed export (``Team Name, Case Name, Case ID, Query Text, Doc ID, Doc
  Position, Title, Rating``, then the fields): extra columns ignored, a ``Rating`` column read when present. The
  detailed export writes a query without documents as a row that ends after ``Query Text``: a zero-result
  query.

:func:`case_from_quepid` joins a snapshot (the results) with a ratings CSV (every rated document) by query text:
the ratings CSV wins where both rate a document, because Quepid rescores snapshots with the current ratings.
Files that share no query are an error; the queries of only one file are warned about.
Every malformed row is a :class:`~gainscope.errors.FormatError` naming the file and line.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gainscope.cases.model import Case, CaseQuery
from gainscope.cases.overlap import check_query_join
from gainscope.cases.scale import RatingScale
from gainscope.errors import FormatError

__all__ = ["QuepidRatings", "case_from_quepid", "read_quepid_ratings", "read_quepid_snapshot",
           "write_quepid_ratings"]

_GUARDED = ("-", "=", "+", "@")
_SNAPSHOT_COLUMNS = ("query text", "doc id", "doc position")


@dataclass
class QuepidRatings:
    """What a Quepid CSV holds: ratings per query, results per query (snapshots), queries in file order."""

    ratings: dict[str, dict[str, float]] = field(default_factory=dict)
    results: dict[str, list[str]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)

    def add_query(self, query: str) -> None:
        if query not in self.ratings:
            self.ratings[query] = {}
            self.order.append(query)


def _unguard(cell: str) -> str:
    if len(cell) >= 2 and cell[0] == " " and cell[1] in _GUARDED:
        return cell[1:]
    return cell


def _guard(cell: str) -> str:
    return " " + cell if cell[:1] in _GUARDED else cell


def _rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 ({exc.reason} at byte {exc.start})", path=str(path)) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        for row in reader:
            yield reader.line_num, row
    except csv.Error as exc:
        raise FormatError(f"unreadable CSV: {exc}", path=str(path), line=reader.line_num) from None


def _rating(text: str, path: Path, line: int) -> float | None:
    text = text.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise FormatError(f"rating must be a number; got {text!r}", path=str(path), line=line, text=text) from None
    if value != value or value in (float("inf"), float("-inf")):
        raise FormatError(f"rating must be a finite number; got {text!r}", path=str(path), line=line, text=text)
    return int(value) if value.is_integer() else value


def _set_rating(out: QuepidRatings, query: str, doc: str, rating: float, path: Path, line: int,
                first: dict[tuple[str, str], int]) -> None:
    old = out.ratings[query].get(doc)
    if old is not None and old != rating:
        raise FormatError(f"document {doc!r} of query {query!r} is rated {rating} here and {old} on line "
                          f"{first[(query, doc)]}", path=str(path), line=line)
    out.ratings[query][doc] = rating
    first.setdefault((query, doc), line)


def _basic(rows: Iterator[tuple[int, list[str]]], path: Path, snapshot: bool) -> QuepidRatings:
    out = QuepidRatings()
    first: dict[tuple[str, str], int] = {}
    for line, row in rows:
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) > 3:
            raise FormatError(f"expected 3 columns (query,docid,rating); got {len(row)}", path=str(path), line=line,
                              text=",".join(row))
        query = _unguard(row[0])
        doc = _unguard(row[1]).strip() if len(row) > 1 else ""
        rating = _rating(row[2], path, line) if len(row) > 2 else None
        if not query.strip():
            raise FormatError("empty query text", path=str(path), line=line, text=",".join(row))
        out.add_query(query)
        if not doc:
            if rating is not None:
                raise FormatError(f"a rating ({rating}) without a document id", path=str(path), line=line,
                                  text=",".join(row))
            continue
        if snapshot:
            docs = out.results.setdefault(query, [])
            if doc in docs:
                raise FormatError(f"document {doc!r} is listed twice for query {query!r}", path=str(path), line=line)
            docs.append(doc)
        if rating is not None:
            _set_rating(out, query, doc, rating, path, line, first)
    return out


def _header(rows: Iterator[tuple[int, list[str]]], path: Path) -> list[str]:
    for _, row in rows:
        if row and any(c.strip() for c in row):
            return [c.strip().lower() for c in row]
    raise FormatError("empty file: expected a header row", path=str(path), line=1)


def read_quepid_ratings(path: str | Path) -> QuepidRatings:
    """Read Quepid's ratings CSV (``query,docid,rating``)."""
    p = Path(path)
    rows = _rows(p)
    header = _header(rows, p)
    if header[:3] != ["query", "docid", "rating"]:
        raise FormatError(f"expected the header query,docid,rating (Quepid's ratings CSV); got {','.join(header)}",
                          path=str(p), line=1)
    return _basic(rows, p, snapshot=False)


def read_quepid_snapshot(path: str | Path) -> QuepidRatings:
    """Read a Quepid snapshot CSV (the basic snapshot export, or the snapshot import/detailed format)."""
    p = Path(path)
    rows = _rows(p)
    header = _header(rows, p)
    if header[:3] == ["query", "docid", "rating"]:
        return _basic(rows, p, snapshot=True)
    missing = [c for c in _SNAPSHOT_COLUMNS if c not in header]
    if missing:
        raise FormatError(f"not a Quepid snapshot CSV: expected query,docid,rating or the columns Snapshot Name, "
                          f"Query Text, Doc ID, Doc Position; missing {', '.join(missing)}", path=str(p), line=1)
    col = {name: header.index(name) for name in (*_SNAPSHOT_COLUMNS, "snapshot name", "rating") if name in header}
    out = QuepidRatings()
    first: dict[tuple[str, str], int] = {}
    positions: dict[str, dict[str, tuple[float, int]]] = {}
    snapshot_names: dict[str, int] = {}
    for line, row in rows:
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) == col["query text"] + 1 and col["query text"] < col["doc id"]:
            # the detailed export's zero-result query: Team Name,Case Name,Case ID,Query Text and nothing else
            query = _unguard(row[col["query text"]])
            if not query.strip():
                raise FormatError("empty query text", path=str(p), line=line, text=",".join(row))
            out.add_query(query)
            positions.setdefault(query, {})
            continue
        if len(row) < len(header):
            raise FormatError(f"expected {len(header)} columns; got {len(row)} (a comma inside an unquoted query "
                              f"text?)", path=str(p), line=line, text=",".join(row))
        if "snapshot name" in col:
            snapshot_names.setdefault(row[col["snapshot name"]], line)
            if len(snapshot_names) > 1:
                raise FormatError(f"a second snapshot ({row[col['snapshot name']]!r}; the first started on line "
                                  f"{min(snapshot_names.values())}): split the file, one snapshot per case",
                                  path=str(p), line=line)
        query = _unguard(row[col["query text"]])
        doc = _unguard(row[col["doc id"]]).strip()
        if not query.strip() or not doc:
            raise FormatError("empty query text or doc id", path=str(p), line=line, text=",".join(row))
        try:
            position = float(row[col["doc position"]])
        except ValueError:
            raise FormatError(f"Doc Position must be a number; got {row[col['doc position']]!r}", path=str(p),
                              line=line) from None
        out.add_query(query)
        docs = positions.setdefault(query, {})
        if doc in docs:
            raise FormatError(f"document {doc!r} is listed twice for query {query!r} (first on line "
                              f"{docs[doc][1]})", path=str(p), line=line)
        docs[doc] = (position, line)
        if "rating" in col:
            rating = _rating(row[col["rating"]], p, line)
            if rating is not None:
                _set_rating(out, query, doc, rating, p, line, first)
    for query, docs in positions.items():
        out.results[query] = [d for d, _ in sorted(docs.items(), key=lambda item: item[1])]
    return out


def case_from_quepid(snapshot: str | Path | None = None, ratings: str | Path | None = None, *,
                     scale: Any = None, scorer: Any = None, name: str | None = None) -> Case:
    """A case from a Quepid snapshot CSV (results) and/or a ratings CSV (ratings of every rated document)."""
    if snapshot is None and ratings is None:
        raise FormatError("give a snapshot CSV, a ratings CSV or both")
    snap = read_quepid_snapshot(snapshot) if snapshot is not None else QuepidRatings()
    rated = read_quepid_ratings(ratings) if ratings is not None else QuepidRatings()
    check_query_join(snap.order, rated.order, left_name=f"the snapshot {snapshot}",
                     right_name=f"the ratings {ratings}", hint="queries are matched by their exact text")
    order = list(snap.order) + [q for q in rated.order if q not in snap.ratings]
    queries = []
    for q in order:
        merged = dict(snap.ratings.get(q, {}))
        merged.update(rated.ratings.get(q, {}))
        queries.append(CaseQuery(q, merged, tuple(snap.results.get(q, ()))))
    notes = []
    if snapshot is not None:
        notes.append(f"results from the Quepid snapshot {snapshot}")
    if ratings is not None:
        notes.append(f"ratings from {ratings}" + (" (they win over the snapshot's, as Quepid rescores snapshots "
                                                  "with current ratings)" if snapshot is not None else ""))
    return Case(tuple(queries), RatingScale.parse(scale) if scale is not None else None, scorer, name,
                str(snapshot or ratings), tuple(notes))


def write_quepid_ratings(case: Case) -> str:
    """Quepid's ratings CSV for the case: ``query,docid,rating``, one row per rating (queries without ratings
    as ``query,,``), the CSV-injection guard applied as Quepid does."""
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["query", "docid", "rating"])
    for q in case.queries:
        if not q.ratings:
            writer.writerow([_guard(q.query), "", ""])
        for doc, rating in q.ratings.items():
            value = int(rating) if float(rating).is_integer() else rating
            writer.writerow([_guard(q.query), _guard(doc), value])
    return buf.getvalue()
