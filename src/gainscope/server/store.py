"""The workspace store: the dashboard's cases, ratings with provenance, scorers, score history and LLM labels, in one
database (SQLite by default, PostgreSQL for a team) next to the search snapshots of the same workspace.

Tables (portable SQL through :class:`gainscope.io.database.Database`, the way :mod:`gainscope.search.store` speaks to
SQLite and PostgreSQL; the snapshot store's own tables live in the same database, so the workspace file is also a
snapshot store for ``gainscope case compare --snapshot WORKSPACE.sqlite:NAME``)::

    ws_cases          id, name, scale (JSON), engine, try (JSON: knobs, template overrides), settings (JSON), created,
                      updated, source, notes (JSON)
    ws_queries        case_id, id, position, text, qid (the export id), options, results (ids in rank order),
                      num_found, updated
    ws_ratings        case_id, query_id, doc_id, seq, rating, source, author, updated: the rating in force (``seq``
                      keeps the order documents were first rated in: Quepid's bestDocs break ties by it)
    ws_rating_events  id, case_id, query_id, doc_id, previous, rating, source, author, at: every change, in order
                      (a removal has rating NULL; an import has previous NULL): nothing is ever forgotten
    ws_docs           case_id, doc_id, fields (JSON): what the engine showed of a document (title, display fields)
    ws_scorers        name, language (javascript | python), code, scale (JSON), created, updated
    ws_scores         id, case_id, scorer, score, queries (JSON or NULL), at, event, snapshot, note: the history of
                      the case score per scorer (a note is an annotation)
    ws_labels         case_id, query_id, doc_id, judge, grade, reasoning, model, at: LLM labels, kept apart from
                      ratings (they become ratings only where no rating exists, see the judges page)
    ws_queue*         the rating queues (pairs to rate one at a time, in a pairs file's order): see
                      :mod:`gainscope.server.queue_store`

**Provenance**: every rating says who or what gave it (``source``: ``human``, ``llm:<judge hash>``,
``import:<file>``; ``author``: the person or the model) and when; every change is an event with the value it
replaced. A human rating is never overwritten by an LLM label (:meth:`WorkspaceStore.set_rating` with
``keep_human``).

This module knows nothing of scoring: cases, queries and ratings are plain data here (the dashboard's
:mod:`gainscope.server.cases` turns them into :mod:`gainscope.cases` objects).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gainscope.errors import NotFoundError, StoreError
from gainscope.io.database import Database
from gainscope.search.store import KIND as SNAPSHOT_KIND
from gainscope.search.store import SnapshotStore, utc_now
from gainscope.server.queue_store import QUEUE_SCHEMA, QueueStore

__all__ = [
    "WORKSPACE_SCHEMA",
    "CaseRecord",
    "CaseSettings",
    "LabelRecord",
    "QueryRecord",
    "Rating",
    "RatingEvent",
    "ScorePoint",
    "ScorerRecord",
    "WorkspaceStore",
    "slug",
]

WORKSPACE_SCHEMA = "1"
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS ws_cases (id TEXT PRIMARY KEY, name TEXT NOT NULL, scale TEXT NOT NULL, "
    "engine TEXT, try TEXT NOT NULL, settings TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL, "
    "source TEXT, notes TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ws_queries (case_id TEXT NOT NULL, id TEXT NOT NULL, position INTEGER NOT NULL, "
    "text TEXT NOT NULL, qid TEXT, options TEXT NOT NULL, results TEXT NOT NULL, num_found BIGINT, "
    "updated TEXT NOT NULL, PRIMARY KEY (case_id, id))",
    "CREATE TABLE IF NOT EXISTS ws_ratings (case_id TEXT NOT NULL, query_id TEXT NOT NULL, doc_id TEXT NOT NULL, "
    "seq BIGINT NOT NULL, rating DOUBLE PRECISION NOT NULL, source TEXT NOT NULL, author TEXT, "
    "updated TEXT NOT NULL, PRIMARY KEY (case_id, query_id, doc_id))",
    "CREATE TABLE IF NOT EXISTS ws_rating_events (id TEXT PRIMARY KEY, seq BIGINT NOT NULL, case_id TEXT NOT NULL, "
    "query_id TEXT NOT NULL, doc_id TEXT NOT NULL, previous DOUBLE PRECISION, rating DOUBLE PRECISION, "
    "source TEXT NOT NULL, author TEXT, at TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS ws_rating_events_pair ON ws_rating_events (case_id, query_id, doc_id)",
    "CREATE INDEX IF NOT EXISTS ws_rating_events_seq ON ws_rating_events (case_id, seq)",
    "CREATE TABLE IF NOT EXISTS ws_docs (case_id TEXT NOT NULL, doc_id TEXT NOT NULL, fields TEXT NOT NULL, "
    "PRIMARY KEY (case_id, doc_id))",
    "CREATE TABLE IF NOT EXISTS ws_scorers (name TEXT PRIMARY KEY, language TEXT NOT NULL, code TEXT NOT NULL, "
    "scale TEXT, created TEXT NOT NULL, updated TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ws_scores (id TEXT PRIMARY KEY, seq BIGINT NOT NULL, case_id TEXT NOT NULL, "
    "scorer TEXT NOT NULL, score DOUBLE PRECISION, queries TEXT, at TEXT NOT NULL, event TEXT NOT NULL, "
    "snapshot TEXT, note TEXT)",
    "CREATE INDEX IF NOT EXISTS ws_scores_case ON ws_scores (case_id, seq)",
    "CREATE TABLE IF NOT EXISTS ws_labels (case_id TEXT NOT NULL, query_id TEXT NOT NULL, doc_id TEXT NOT NULL, "
    "judge TEXT NOT NULL, grade DOUBLE PRECISION NOT NULL, reasoning TEXT, model TEXT, at TEXT NOT NULL, "
    "PRIMARY KEY (case_id, query_id, doc_id, judge))",
)
_TABLES = ("ws_cases", "ws_queries", "ws_ratings", "ws_rating_events", "ws_docs", "ws_scorers", "ws_scores",
           "ws_labels")
#: the scorers a new case shows (several at once: Quepid shows one, issue #51)
DEFAULT_SCORERS = ("nDCG@10", "P@5", "ERR@10")
_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str, *, fallback: str = "case", limit: int = 40) -> str:
    """Lower-case letters and digits joined by ``-``: a name made safe for a URL (``fallback`` when none is
    left)."""
    out = _SLUG.sub("-", text.lower()).strip("-")[:limit].strip("-")
    return out or fallback


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _number(value: float) -> float | int:
    """A rating as the user wrote it: 3, not 3.0."""
    return int(value) if float(value).is_integer() else float(value)


@dataclass(frozen=True)
class CaseSettings:
    """How a case is shown and scored: the selected scorers (several at once), the number of results shown (and
    asked of the engine on a rerun), Quepid's conventions for unscored and undefined queries, the title field and
    the other display fields, and the snapshot that "change" is measured against."""

    scorers: tuple[str, ...] = DEFAULT_SCORERS
    depth: int = 10
    unscored: str = "quepid"
    undefined: str = "zero"
    title_field: str = "title"
    fields: tuple[str, ...] = ()
    baseline: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return {"scorers": list(self.scorers), "depth": self.depth, "unscored": self.unscored,
                "undefined": self.undefined, "title_field": self.title_field, "fields": list(self.fields),
                "baseline": self.baseline}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CaseSettings:
        """The inverse of :meth:`to_json` (missing keys take their defaults)."""
        base = cls()
        return cls(tuple(data.get("scorers", base.scorers)), int(data.get("depth", base.depth)),
                   str(data.get("unscored", base.unscored)), str(data.get("undefined", base.undefined)),
                   str(data.get("title_field", base.title_field)), tuple(data.get("fields", base.fields)),
                   data.get("baseline"))


@dataclass(frozen=True)
class CaseRecord:
    """A case as stored: ``scale`` is ``{"values": [...], "labels": {...}}``; ``try_`` holds ``knobs`` and the
    engine's template overrides."""

    id: str
    name: str
    scale: dict[str, Any]
    engine: str | None
    try_: dict[str, Any]
    settings: CaseSettings
    created: str
    updated: str
    source: str | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rating:
    """The rating in force for a document, and where it comes from."""

    value: float | int
    source: str
    author: str | None
    updated: str


@dataclass(frozen=True)
class QueryRecord:
    """A query of a case: its text, export id, options, the results in force (doc ids in rank order) and
    ratings."""

    case_id: str
    id: str
    position: int
    text: str
    qid: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    results: tuple[str, ...] = ()
    num_found: int | None = None
    ratings: dict[str, Rating] = field(default_factory=dict)

    def rating_values(self) -> dict[str, float | int]:
        """``{doc: rating}``."""
        return {doc: r.value for doc, r in self.ratings.items()}


@dataclass(frozen=True)
class RatingEvent:
    """One change of a rating: the value before (None: unrated) and after (None: removed), who and when."""

    query_id: str
    doc_id: str
    previous: float | int | None
    rating: float | int | None
    source: str
    author: str | None
    at: str

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return {"query_id": self.query_id, "doc": self.doc_id, "previous": self.previous, "rating": self.rating,
                "source": self.source, "author": self.author, "at": self.at}


@dataclass(frozen=True)
class ScorerRecord:
    """A scorer saved in the workspace: JavaScript (Quepid's scorer API) or Python (a function ``score(q)``)."""

    name: str
    language: str
    code: str
    scale: Any
    created: str
    updated: str


@dataclass(frozen=True)
class ScorePoint:
    """One point of a case's score history for one scorer."""

    scorer: str
    score: float | None
    at: str
    event: str
    snapshot: str | None = None
    note: str | None = None
    queries: dict[str, float | None] | None = None


@dataclass(frozen=True)
class LabelRecord:
    """An LLM judge's label of a (query, document) pair."""

    query_id: str
    doc_id: str
    judge: str
    grade: float | int
    reasoning: str | None
    model: str | None
    at: str


class WorkspaceStore:
    """The workspace's tables over a :class:`~gainscope.io.database.Database` (see the module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.snapshots = SnapshotStore(database, path=database.path)
        self.queues = QueueStore(database)
        self._setup()

    # ------------------------------------------------------------------------------------------ setup
    def _tables(self) -> set[str]:
        if self.database.dialect == "postgres":
            rows = self.database.query("SELECT table_name FROM information_schema.tables WHERE table_schema = "
                                       "current_schema()")
        else:
            rows = self.database.query("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {str(r[0]) for r in rows}

    def _setup(self) -> None:
        tables = self._tables()
        where = self.database.path
        if tables and "gainscope_store" not in tables and self.database.dialect == "sqlite":
            raise StoreError(f"{where} is an SQLite database of another program (tables: "
                             f"{', '.join(sorted(tables)[:5])}); it is left untouched: choose another workspace",
                             path=where)
        if "gainscope_store" in tables:
            meta = dict(self.database.query("SELECT key, value FROM gainscope_store"))
            if meta.get("kind") != SNAPSHOT_KIND:
                raise StoreError(f"{where} is a gainscope store of another kind ({meta.get('kind')!r}), not a "
                                 "workspace; choose another workspace", path=where)
            version = meta.get("workspace")
            if version is None and tables & {"snapshots"} and self.database.query("SELECT id FROM snapshots"):
                raise StoreError(f"{where} is a snapshot store (gainscope search --snapshot), not a dashboard "
                                 "workspace; it is left untouched: choose another workspace folder", path=where)
            if version is not None and version != WORKSPACE_SCHEMA:
                raise StoreError(f"{where}: workspace schema {version!r}; this gainscope reads schema "
                                 f"{WORKSPACE_SCHEMA}", path=where)
        self.snapshots.create_schema()
        self.database.write(*((statement, ()) for statement in (*SCHEMA, *QUEUE_SCHEMA)))
        if not self.database.query("SELECT value FROM gainscope_store WHERE key = ?", ("workspace",)):
            self.database.write(("INSERT INTO gainscope_store (key, value) VALUES (?, ?)",
                                 ("workspace", WORKSPACE_SCHEMA)))

    def close(self) -> None:
        """Close the database."""
        self.database.close()

    # ------------------------------------------------------------------------------------------ cases
    def cases(self) -> list[CaseRecord]:
        """Every case, by name."""
        rows = self.database.query("SELECT id, name, scale, engine, try, settings, created, updated, source, notes "
                                   "FROM ws_cases ORDER BY name, id")
        return [_case(row) for row in rows]

    def find_case(self, case_id: str) -> CaseRecord | None:
        """The case ``case_id``, or None."""
        rows = self.database.query("SELECT id, name, scale, engine, try, settings, created, updated, source, notes "
                                   "FROM ws_cases WHERE id = ?", (case_id,))
        return _case(rows[0]) if rows else None

    def case(self, case_id: str) -> CaseRecord:
        """The case ``case_id``; an InputError naming the workspace's cases when there is none."""
        found = self.find_case(case_id)
        if found is None:
            names = [c.id for c in self.cases()]
            raise NotFoundError(f"no case {case_id!r} in this workspace" + (
                f"; its cases: {', '.join(names[:10])}" if names else "; it holds no case yet"))
        return found

    def add_case(self, *, name: str, scale: Mapping[str, Any], queries: Sequence[Mapping[str, Any]],
                 engine: str | None = None, try_: Mapping[str, Any] | None = None,
                 settings: CaseSettings | None = None, source: str | None = None, notes: Sequence[str] = (),
                 author: str | None = None, fields: Mapping[str, Mapping[str, Any]] | None = None) -> CaseRecord:
        """Store a new case and its queries (each ``{"text", "qid", "options", "results", "num_found",
        "ratings": {doc: rating}}``); every rating is recorded as an event of source ``import:<source>``."""
        now = utc_now()
        existing = {c.id for c in self.cases()}
        base = slug(name)
        case_id, n = base, 2
        while case_id in existing:
            case_id, n = f"{base}-{n}", n + 1
        record = CaseRecord(case_id, name, dict(scale), engine, dict(try_ or {}), settings or CaseSettings(), now,
                            now, source, tuple(notes))
        origin = f"import:{source}" if source else "import"
        seq = self._next_seq("ws_rating_events", case_id)
        with self.database.transaction() as cur:
            cur.execute("INSERT INTO ws_cases (id, name, scale, engine, try, settings, created, updated, source, "
                        "notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (case_id, name, _json(record.scale), engine, _json(record.try_),
                         _json(record.settings.to_json()), now, now, source, _json(list(notes))))
            query_rows, rating_rows, event_rows = [], [], []
            for position, q in enumerate(queries, start=1):
                qid = str(position)
                query_rows.append((case_id, qid, position, q["text"], q.get("qid"), _json(q.get("options") or {}),
                                   _json(list(q.get("results") or ())), q.get("num_found"), now))
                for doc, rating in (q.get("ratings") or {}).items():
                    rating_rows.append((case_id, qid, doc, seq, float(rating), origin, author, now))
                    event_rows.append((uuid.uuid4().hex, seq, case_id, qid, doc, None, float(rating), origin, author,
                                       now))
                    seq += 1
            cur.executemany("INSERT INTO ws_queries (case_id, id, position, text, qid, options, results, num_found, "
                            "updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", query_rows)
            cur.executemany("INSERT INTO ws_ratings (case_id, query_id, doc_id, seq, rating, source, author, "
                            "updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rating_rows)
            cur.executemany("INSERT INTO ws_rating_events (id, seq, case_id, query_id, doc_id, previous, rating, "
                            "source, author, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", event_rows)
            cur.executemany("INSERT INTO ws_docs (case_id, doc_id, fields) VALUES (?, ?, ?)",
                            [(case_id, doc, _json(dict(f))) for doc, f in (fields or {}).items()])
        return record

    def update_case(self, case_id: str, *, name: str | None = None, engine: str | None = None,
                    remove_engine: bool = False, try_: Mapping[str, Any] | None = None,
                    settings: CaseSettings | None = None) -> CaseRecord:
        """Change a case's name, engine (``remove_engine`` removes it), try or settings."""
        current = self.case(case_id)
        updated = replace(current, name=current.name if name is None else name,
                          engine=None if remove_engine else current.engine if engine is None else engine,
                          try_=current.try_ if try_ is None else dict(try_),
                          settings=current.settings if settings is None else settings, updated=utc_now())
        self.database.write(("UPDATE ws_cases SET name = ?, engine = ?, try = ?, settings = ?, updated = ? "
                             "WHERE id = ?", (updated.name, updated.engine, _json(updated.try_),
                                              _json(updated.settings.to_json()), updated.updated, case_id)))
        return updated

    def delete_case(self, case_id: str) -> None:
        """Remove a case with everything that belongs to it (its snapshots stay in the snapshot tables)."""
        self.case(case_id)
        self.queues.delete_case(case_id)
        self.database.write(*((f"DELETE FROM {table} WHERE {'id' if table == 'ws_cases' else 'case_id'} = ?",
                               (case_id,)) for table in _TABLES if table != "ws_scorers"))

    # ------------------------------------------------------------------------------------------ queries
    def queries(self, case_id: str) -> list[QueryRecord]:
        """The queries of a case in order, with their ratings."""
        ratings: dict[str, dict[str, Rating]] = {}
        for qid, doc, value, source, author, updated in self.database.query(
                "SELECT query_id, doc_id, rating, source, author, updated FROM ws_ratings WHERE case_id = ? "
                "ORDER BY seq", (case_id,)):
            ratings.setdefault(qid, {})[doc] = Rating(_number(value), source, author, updated)
        rows = self.database.query("SELECT id, position, text, qid, options, results, num_found FROM ws_queries "
                                   "WHERE case_id = ? ORDER BY position", (case_id,))
        return [_query(case_id, row, ratings.get(row[0], {})) for row in rows]

    def query(self, case_id: str, query_id: str) -> QueryRecord:
        """One query with its ratings; an InputError when the case has no such query."""
        rows = self.database.query("SELECT id, position, text, qid, options, results, num_found FROM ws_queries "
                                   "WHERE case_id = ? AND id = ?", (case_id, query_id))
        if not rows:
            raise NotFoundError(f"case {case_id!r} has no query {query_id!r}")
        ratings = {doc: Rating(_number(value), source, author, updated) for doc, value, source, author, updated in
                   self.database.query("SELECT doc_id, rating, source, author, updated FROM ws_ratings WHERE "
                                       "case_id = ? AND query_id = ? ORDER BY seq", (case_id, query_id))}
        return _query(case_id, rows[0], ratings)

    def query_by_text(self, case_id: str, text: str) -> QueryRecord:
        """The query whose text is ``text`` (as Quepid identifies queries); an InputError when there is none."""
        rows = self.database.query("SELECT id FROM ws_queries WHERE case_id = ? AND text = ?", (case_id, text))
        if not rows:
            raise NotFoundError(f"case {case_id!r} has no query {text!r} (queries are matched by their exact text)")
        return self.query(case_id, rows[0][0])

    def set_results(self, case_id: str, results: Mapping[str, tuple[Sequence[str], int | None]],
                    fields: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        """Replace the results in force of the queries in ``results`` (``{query id: (doc ids, num_found)}``), and
        remember the display fields of the documents in ``fields``."""
        now = utc_now()
        with self.database.transaction() as cur:
            cur.executemany("UPDATE ws_queries SET results = ?, num_found = ?, updated = ? WHERE case_id = ? AND "
                            "id = ?", [(_json(list(docs)), total, now, case_id, qid)
                                       for qid, (docs, total) in results.items()])
        self.remember_fields(case_id, fields or {})

    def remember_fields(self, case_id: str, fields: Mapping[str, Mapping[str, Any]]) -> None:
        """Keep what the engine showed of documents (their display fields), replacing earlier values."""
        if not fields:
            return
        with self.database.transaction() as cur:
            cur.executemany("INSERT INTO ws_docs (case_id, doc_id, fields) VALUES (?, ?, ?) ON CONFLICT (case_id, "
                            "doc_id) DO UPDATE SET fields = excluded.fields",
                            [(case_id, doc, _json(dict(f))) for doc, f in fields.items() if f])

    def fields(self, case_id: str, docs: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        """The display fields known of documents (all of the case's when ``docs`` is None)."""
        wanted = None if docs is None else list(dict.fromkeys(docs))
        if wanted is not None and not wanted:
            return {}
        if wanted is None or len(wanted) > 500:
            rows = self.database.query("SELECT doc_id, fields FROM ws_docs WHERE case_id = ?", (case_id,))
        else:
            marks = ", ".join("?" * len(wanted))
            rows = self.database.query(f"SELECT doc_id, fields FROM ws_docs WHERE case_id = ? AND doc_id IN "
                                       f"({marks})", (case_id, *wanted))
        out = {doc: json.loads(text) for doc, text in rows}
        return out if wanted is None else {d: out[d] for d in wanted if d in out}

    # ------------------------------------------------------------------------------------------ ratings
    def _next_seq(self, table: str, case_id: str) -> int:
        """The next number of a case's rows in ``table`` (events and history points are ordered per case)."""
        rows = self.database.query(f"SELECT MAX(seq) FROM {table} WHERE case_id = ?", (case_id,))
        return int(rows[0][0] or 0) + 1

    def set_rating(self, case_id: str, query_id: str, doc_id: str, rating: float | None, *, source: str,
                   author: str | None = None, keep_human: bool = False) -> tuple[bool, float | int | None]:
        """Set (or, with None, remove) the rating of ``doc_id`` for a query, recording the change as an event.

        Returns ``(changed, previous)``. Nothing changes (and no event is recorded) when the value is the same,
        or when ``keep_human`` and the rating in force was not given by an LLM judge (its source does not start
        with ``llm:``: a person rated it, or it was imported): a human rating is never overwritten by a label.
        """
        with self.database.transaction() as cur:
            cur.execute("SELECT rating, source FROM ws_ratings WHERE case_id = ? AND query_id = ? AND doc_id = ?",
                        (case_id, query_id, doc_id))
            row = cur.fetchone()
            previous = None if row is None else _number(row[0])
            if keep_human and row is not None and not str(row[1]).startswith("llm:"):
                return False, previous
            if previous == rating or (previous is None and rating is None):
                return False, previous
            now = utc_now()
            cur.execute("SELECT MAX(seq) FROM ws_rating_events WHERE case_id = ?", (case_id,))
            seq = int(cur.fetchone()[0] or 0) + 1  # the events' order, and a new rating's place among the ratings
            if rating is None:
                cur.execute("DELETE FROM ws_ratings WHERE case_id = ? AND query_id = ? AND doc_id = ?",
                            (case_id, query_id, doc_id))
            else:
                cur.execute("INSERT INTO ws_ratings (case_id, query_id, doc_id, seq, rating, source, author, "
                            "updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (case_id, query_id, doc_id) DO "
                            "UPDATE SET rating = excluded.rating, source = excluded.source, author = "
                            "excluded.author, updated = excluded.updated",
                            (case_id, query_id, doc_id, seq, float(rating), source, author, now))
            cur.execute("INSERT INTO ws_rating_events (id, seq, case_id, query_id, doc_id, previous, rating, source, "
                        "author, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (uuid.uuid4().hex, seq, case_id, query_id, doc_id,
                         None if previous is None else float(previous), None if rating is None else float(rating),
                         source, author, now))
        return True, previous

    def rating_events(self, case_id: str, query_id: str | None = None, doc_id: str | None = None,
                      limit: int = 1000) -> list[RatingEvent]:
        """The rating changes of a case (of one query, of one document), newest first."""
        where, params = "case_id = ?", [case_id]
        if query_id is not None:
            where, params = where + " AND query_id = ?", [*params, query_id]
        if doc_id is not None:
            where, params = where + " AND doc_id = ?", [*params, doc_id]
        rows = self.database.query(f"SELECT query_id, doc_id, previous, rating, source, author, at FROM "
                                   f"ws_rating_events WHERE {where} ORDER BY seq DESC LIMIT {int(limit)}", params)
        return [RatingEvent(q, d, None if p is None else _number(p), None if r is None else _number(r), s, a, at)
                for q, d, p, r, s, a, at in rows]

    # ------------------------------------------------------------------------------------------ scorers
    def scorers(self) -> list[ScorerRecord]:
        """The scorers saved in the workspace, by name."""
        rows = self.database.query("SELECT name, language, code, scale, created, updated FROM ws_scorers ORDER BY "
                                   "name")
        return [ScorerRecord(n, lang, code, json.loads(scale) if scale else None, c, u)
                for n, lang, code, scale, c, u in rows]

    def find_scorer(self, name: str) -> ScorerRecord | None:
        """The saved scorer ``name``, or None."""
        for s in self.scorers():
            if s.name == name:
                return s
        return None

    def save_scorer(self, name: str, language: str, code: str, scale: Any = None) -> ScorerRecord:
        """Save (create or replace) a scorer."""
        now = utc_now()
        old = self.find_scorer(name)
        self.database.write(("INSERT INTO ws_scorers (name, language, code, scale, created, updated) VALUES "
                             "(?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET language = excluded.language, "
                             "code = excluded.code, scale = excluded.scale, updated = excluded.updated",
                             (name, language, code, None if scale is None else _json(scale), now, now)))
        return ScorerRecord(name, language, code, scale, old.created if old else now, now)

    def delete_scorer(self, name: str) -> None:
        """Remove a saved scorer."""
        if self.find_scorer(name) is None:
            raise NotFoundError(f"no scorer {name!r} is saved in this workspace")
        self.database.write(("DELETE FROM ws_scorers WHERE name = ?", (name,)))

    # ------------------------------------------------------------------------------------------ history
    def add_scores(self, case_id: str, points: Sequence[ScorePoint]) -> None:
        """Append points to the case's score history."""
        seq = self._next_seq("ws_scores", case_id)
        rows = [(uuid.uuid4().hex, seq + i, case_id, p.scorer, p.score,
                 None if p.queries is None else _json(p.queries), p.at, p.event, p.snapshot, p.note)
                for i, p in enumerate(points)]
        with self.database.transaction() as cur:
            cur.executemany("INSERT INTO ws_scores (id, seq, case_id, scorer, score, queries, at, event, snapshot, "
                            "note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def history(self, case_id: str, scorer: str | None = None, *, with_queries: bool = False) -> list[ScorePoint]:
        """The case's score history (of one scorer), oldest first."""
        columns = "scorer, score, at, event, snapshot, note, " + ("queries" if with_queries else "NULL")
        where, params = "case_id = ?", [case_id]
        if scorer is not None:
            where, params = where + " AND scorer = ?", [*params, scorer]
        rows = self.database.query(f"SELECT {columns} FROM ws_scores WHERE {where} ORDER BY seq", params)
        return [ScorePoint(s, v, at, e, snap, note, json.loads(q) if q else None)
                for s, v, at, e, snap, note, q in rows]

    # ------------------------------------------------------------------------------------------ LLM labels
    def add_labels(self, case_id: str, labels: Sequence[LabelRecord]) -> None:
        """Store LLM labels (replacing a judge's earlier label of the same pair)."""
        with self.database.transaction() as cur:
            cur.executemany("INSERT INTO ws_labels (case_id, query_id, doc_id, judge, grade, reasoning, model, at) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (case_id, query_id, doc_id, judge) DO UPDATE "
                            "SET grade = excluded.grade, reasoning = excluded.reasoning, model = excluded.model, "
                            "at = excluded.at",
                            [(case_id, lb.query_id, lb.doc_id, lb.judge, float(lb.grade), lb.reasoning, lb.model,
                              lb.at) for lb in labels])

    def labels(self, case_id: str, judge: str | None = None) -> list[LabelRecord]:
        """The LLM labels of a case (of one judge)."""
        where, params = "case_id = ?", [case_id]
        if judge is not None:
            where, params = where + " AND judge = ?", [*params, judge]
        rows = self.database.query(f"SELECT query_id, doc_id, judge, grade, reasoning, model, at FROM ws_labels WHERE "
                                   f"{where} ORDER BY query_id, doc_id, judge", params)
        return [LabelRecord(q, d, j, _number(g), r, m, at) for q, d, j, g, r, m, at in rows]

    def judges(self, case_id: str) -> list[tuple[str, str | None, int]]:
        """``(judge hash, model, labels)`` of every judge that labelled the case."""
        rows = self.database.query("SELECT judge, MAX(model), COUNT(*) FROM ws_labels WHERE case_id = ? GROUP BY "
                                   "judge ORDER BY judge", (case_id,))
        return [(j, m, int(n)) for j, m, n in rows]


def _case(row: Sequence[Any]) -> CaseRecord:
    cid, name, scale, engine, try_, settings, created, updated, source, notes = row
    return CaseRecord(cid, name, json.loads(scale), engine, json.loads(try_), CaseSettings.from_json(
        json.loads(settings)), created, updated, source, tuple(json.loads(notes)))


def _query(case_id: str, row: Sequence[Any], ratings: dict[str, Rating]) -> QueryRecord:
    qid, position, text, export_id, options, results, num_found = row
    return QueryRecord(case_id, qid, int(position), text, export_id, json.loads(options), tuple(json.loads(results)),
                       None if num_found is None else int(num_found), ratings)
