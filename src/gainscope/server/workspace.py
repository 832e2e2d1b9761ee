"""A workspace: a folder holding the dashboard's database (``workspace.sqlite``, unless a PostgreSQL URL is given)
and its access token (``token``, readable by its owner only), and the scores of its cases kept up to date.

:class:`Workspace` is what the web app and ``gainscope case add`` work on: it opens the store
(:class:`~gainscope.server.store.WorkspaceStore`), imports cases, resolves scorers (built-in names and the
workspace's saved scorers) and keeps every case's scores in memory (:class:`Scoreboard`): computed the first
time a case is shown, then updated incrementally -- a rating rescores only its query, with every selected scorer,
and the case score is the mean of the counted query scores again -- and recorded in the score history whenever
a case score changes.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gainscope.errors import InputError, NotFoundError, StoreError
from gainscope.io.database import Database, connect, is_postgres_url, redact_url
from gainscope.search.store import utc_now
from gainscope.server import cases as bridge
from gainscope.server.store import CaseRecord, CaseSettings, QueryRecord, ScorePoint, WorkspaceStore

__all__ = ["COOKIE", "DATABASE_FILE", "HEADER", "TOKEN_FILE", "CaseScores", "Scoreboard", "Workspace",
           "database_problem", "token_problem"]

#: the request header and the cookie that carry the workspace token (a write needs one of them)
HEADER = "X-Gainscope-Token"
COOKIE = "gainscope_token"

DATABASE_FILE = "workspace.sqlite"
TOKEN_FILE = "token"


def token_problem(token: str | None) -> str | None:
    """What is wrong with a workspace token given by the user (None when nothing is, or none is given)."""
    if token is not None and (len(token) < 8 or any(c.isspace() for c in token)):
        return "a token needs at least 8 characters and no spaces"
    return None


def database_problem(database: str | None) -> str | None:
    """What is wrong with a workspace database given by the user (None when nothing is, or none is given)."""
    if database is not None and not is_postgres_url(database):
        return (f"takes a PostgreSQL URL (postgresql://user@host:5432/name); got {redact_url(database)!r}; without "
                f"it the workspace is {DATABASE_FILE} in the workspace folder")
    return None


def _read_token(folder: Path) -> str | None:
    path = folder / TOKEN_FILE
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read the workspace token {path}: {exc.strerror}", path=str(path)) from None
    return text or None


def _write_token(folder: Path, token: str) -> None:
    path = folder / TOKEN_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(token + "\n")
    except OSError as exc:
        raise StoreError(f"cannot write the workspace token {path}: {exc.strerror}", path=str(path)) from None


@dataclass
class CaseScores:
    """A case's scores by every selected scorer (``by_scorer``: scorer name -> :class:`~gainscope.server.cases.
    Scored`), with the case and its queries they were computed from."""

    case: CaseRecord
    queries: list[QueryRecord]
    by_scorer: dict[str, bridge.Scored] = field(default_factory=dict)

    def query_ids(self) -> dict[str, str]:
        """``{query text: query id}``."""
        return {q.text: q.id for q in self.queries}


class Scoreboard:
    """The scores of the workspace's cases, computed once and kept up to date (see the module docstring)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._cases: dict[str, CaseScores] = {}
        self._last: dict[str, dict[str, float | None]] = {}  # each scorer's last recorded case score, per case
        self._lock = threading.RLock()

    def forget(self, case_id: str) -> None:
        """Drop a case's scores: they are computed again when next asked for."""
        with self._lock:
            self._cases.pop(case_id, None)

    def scores(self, case_id: str) -> CaseScores:
        """The case's scores by each of its selected scorers (computed now when not known)."""
        with self._lock:
            known = self._cases.get(case_id)
            if known is not None:
                return known
            store = self.workspace.store
            record = store.case(case_id)
            queries = store.queries(case_id)
            case = self.workspace.as_case(record, queries)
            scored = CaseScores(record, queries)
            for name in record.settings.scorers:
                scored.by_scorer[name] = self._score(case, name, record.settings)
            self._cases[case_id] = scored
            return scored

    def _score(self, case: Any, name: str, settings: CaseSettings) -> bridge.Scored:
        try:
            scorer = self.workspace.scorer(name)
            return bridge.score(case, scorer, unscored=settings.unscored, undefined=settings.undefined)
        except InputError as exc:  # a script that fails, an unknown name: shown in its column, never a crash
            return bridge.Scored.failed(name, str(exc))

    def rating_changed(self, case_id: str, query_id: str) -> CaseScores:
        """Rescore the one query whose ratings changed, with every selected scorer, and the case scores."""
        with self._lock:
            known = self._cases.get(case_id)
            if known is None:
                return self.scores(case_id)
            fresh = self.workspace.store.query(case_id, query_id)
            known.queries = [fresh if q.id == query_id else q for q in known.queries]
            case = self.workspace.as_case(known.case, [fresh])
            settings = known.case.settings
            for name, scored in list(known.by_scorer.items()):
                if scored.error is not None:
                    known.by_scorer[name] = self._score(self.workspace.as_case(known.case, known.queries), name,
                                                        settings)
                    continue
                try:
                    one = bridge.rescore_query(case, fresh.text, self.workspace.scorer(name),
                                               unscored=settings.unscored, undefined=settings.undefined)
                except InputError as exc:
                    known.by_scorer[name] = bridge.Scored.failed(name, str(exc))
                    continue
                queries = dict(scored.queries)
                queries[fresh.text] = one
                known.by_scorer[name] = bridge.Scored(scored.scorer, queries, bridge.case_mean(list(queries.values())),
                                                      scored.conventions, scored.notes)
            return known

    def record(self, case_id: str, event: str, *, snapshot: str | None = None, note: str | None = None,
               with_queries: bool = False, always: bool = False) -> list[ScorePoint]:
        """Append the case's current scores to its history, per scorer: only the scores that changed since the
        scorer's last point, unless ``always`` (a rerun, a snapshot, an annotation). A case none of whose queries
        has results has no score worth a point (its scorers' zeros say nothing), so nothing is recorded for it but
        an annotation's note."""
        scored = self.scores(case_id)
        if event != "annotation" and not any(q.results for q in scored.queries):
            return []
        with self._lock:
            last = self._last.get(case_id)
            if last is None:
                last = self._last[case_id] = {p.scorer: p.score for p in self.workspace.store.history(case_id)}
            ids = scored.query_ids()
            now = utc_now()
            points = []
            for name, s in scored.by_scorer.items():
                if s.error is not None or (not always and name in last and last[name] == s.score):
                    continue
                per_query = {ids[t]: q.value for t, q in s.queries.items()} if with_queries else None
                points.append(ScorePoint(name, s.score, now, event, snapshot, note, per_query))
            if points:
                self.workspace.store.add_scores(case_id, points)
                last.update((p.scorer, p.score) for p in points)
            return points


class Workspace:
    """A workspace folder and its database (see the module docstring)."""

    def __init__(self, folder: Path, database: Database, target: str, token: str, *,
                 allow_code: bool = True, time_limit: float = 1.0) -> None:
        self.folder = folder
        self.target = target
        self.token = token
        #: whether code given through the dashboard may run: Python scorers, Python engines (module:function),
        #: try overrides that read the server's environment ({{env.NAME}}); off on a server for other machines
        self.allow_code = allow_code
        self.time_limit = time_limit
        self.store = WorkspaceStore(database)
        self.scoreboard = Scoreboard(self)
        self._scorers: dict[tuple[str, str], Any] = {}
        self._engines: dict[str, Any] = {}
        self._engine_lock = threading.Lock()
        self._search_lock = threading.Lock()

    @classmethod
    def open(cls, folder: str | Path, *, database: str | None = None, token: str | None = None,
             create: bool = True, allow_code: bool = True) -> Workspace:
        """Open (or create) the workspace in ``folder``: its SQLite file, or the PostgreSQL ``database``; the token
        is ``token`` when given (and then stored), else the stored one, else a new one (stored)."""
        path = Path(folder)
        if (problem := database_problem(database)) is not None:  # both checked before anything is made
            raise InputError(f"database= {problem}")
        if (problem := token_problem(token)) is not None:
            raise InputError(f"{problem} (token=)")
        if not path.exists():
            if not create:
                raise StoreError(f"{path}: no such workspace folder; create it with gainscope case add {path} CASE "
                                 "or gainscope serve " + str(path), path=str(path))
            try:
                path.mkdir(parents=True)
            except OSError as exc:
                raise StoreError(f"cannot create the workspace folder {path}: {exc.strerror}", path=str(path)) \
                    from None
        elif not path.is_dir():
            raise StoreError(f"{path} is a file, not a workspace folder; give a folder (it holds {DATABASE_FILE} and "
                             f"the token)", path=str(path))
        stored = _read_token(path)
        if token is None:
            token = stored or secrets.token_urlsafe(24)
        if token != stored:
            _write_token(path, token)
        target = database if database is not None else str(path / DATABASE_FILE)
        db = connect(target)
        try:
            return cls(path, db, target, token, allow_code=allow_code)
        except BaseException:
            db.close()
            raise

    def connect(self) -> Database:
        """A new connection to the workspace's database (for work in another thread: reruns, judges)."""
        return connect(self.target)

    @property
    def where(self) -> str:
        """The database, as messages show it (a PostgreSQL URL without its password)."""
        return redact_url(self.target)

    def close(self) -> None:
        """Close the database and the engines' files."""
        for engine in self._engines.values():
            closer = getattr(engine, "close", None)
            if callable(closer):
                closer()
        self._engines.clear()
        self.store.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------------------------------------- cases
    def as_case(self, record: CaseRecord, queries: Sequence[QueryRecord]) -> Any:
        """The case (or some of its queries) as a :class:`~gainscope.cases.Case` to score."""
        return bridge.to_case(record.name, record.scale, queries, source=self._engine_source(record),
                              engine=record.engine, try_=record.try_,
                              scorer=record.settings.scorers[0] if record.settings.scorers else None)

    def _engine_source(self, record: CaseRecord) -> str:
        """The path that relative engine paths of a case are resolved against: the file the case was imported
        from, when known as an absolute path; else the workspace folder."""
        if record.source and Path(record.source).is_absolute():
            return record.source
        return str(self.folder.resolve() / "case.json")

    def import_case(self, case: Any, *, settings: CaseSettings | None = None, author: str | None = None,
                    source: str | None = None, fields: Mapping[str, Mapping[str, Any]] | None = None,
                    read_files: bool = False) -> CaseRecord:
        """Store a :class:`~gainscope.cases.Case` (with a scale) as a new workspace case; its scores become the
        first points of its history. The case's scorer is selected first: a built-in name as it is, a JavaScript
        scorer given by code (or, with ``read_files``, by a ``.js`` file: ``gainscope case add``) saved in the
        workspace under its name; a file named by an upload is not read (the notes say so)."""
        queries = [{"text": q.query, "qid": q.id, "options": dict(q.options), "results": list(q.results),
                    "num_found": q.num_found, "ratings": dict(q.ratings)} for q in case.queries]
        notes = list(case.notes)
        first: str | None = None
        code = bridge.case_scorer_source(case, read_files=read_files)
        if code is not None:
            name, text, scale = code
            self.store.save_scorer(name, "javascript", text, scale)
            first = name
        elif isinstance(case.scorer, str) and bridge.is_builtin(case.scorer):
            first = case.scorer.strip()
        elif case.scorer is not None:
            notes.append(f"the case names the scorer {case.scorer!r}, which the dashboard does not read from a file "
                         "of the server: save its code on the scorers page and select it")
        defaults = CaseSettings().scorers
        chosen = settings or CaseSettings(scorers=tuple(dict.fromkeys([first, *defaults])) if first else defaults)
        record = self.store.add_case(name=case.name or "case", scale=bridge.scale_json(case.scale), queries=queries,
                                     engine=case.engine, try_=case.try_, settings=chosen,
                                     source=source or case.source, notes=notes, author=author, fields=fields)
        self.scoreboard.record(record.id, "import", with_queries=True, always=True)
        return record

    def export_case(self, case_id: str, fmt: str) -> str:
        """The case as a case file, Quepid ratings CSV, TREC qrels or run."""
        record = self.store.case(case_id)
        return bridge.export_text(self.as_case(record, self.store.queries(case_id)), fmt)

    # ---------------------------------------------------------------------------------------------- scorers
    def scorer(self, name: str) -> Any:
        """The scorer called ``name``: saved in the workspace, else a built-in (cached by name and code)."""
        record = self.store.find_scorer(name)
        key = (name, "" if record is None else record.updated)
        found = self._scorers.get(key)
        if found is None:
            found = bridge.resolve(name, lambda _: record, allow_python=self.allow_code,
                                   time_limit=self.time_limit)
            self._scorers = {k: v for k, v in self._scorers.items() if k[0] != name}
            self._scorers[key] = found
        return found

    def scorer_names(self) -> list[str]:
        """The names of the scorers saved in the workspace."""
        return [s.name for s in self.store.scorers()]

    def set_scorers(self, case_id: str, names: Iterable[str]) -> CaseRecord:
        """Select the scorers a case shows (each checked to resolve)."""
        chosen = tuple(dict.fromkeys(n.strip() for n in names if n.strip()))
        if not chosen:
            raise InputError("select at least one scorer")
        for name in chosen:
            self.scorer(name)
        record = self.store.case(case_id)
        updated = self.store.update_case(case_id, settings=replace(record.settings, scorers=chosen))
        self.scoreboard.forget(case_id)
        return updated

    # ---------------------------------------------------------------------------------------------- engines
    def engine(self, record: CaseRecord, *, fresh: bool = False) -> tuple[Any, dict[str, Any]]:
        """The case's engine with its try's template overrides (kept open between uses: an embedded index loads
        once; ``fresh`` makes a new one, which a rerun of an HTTP engine needs: its client belongs to one event
        loop), and the try's knob values."""
        if not record.engine:
            raise InputError(f"case {record.name!r} names no engine; set one on its tune page (an index folder, "
                             "FILE.toml:NAME or module:function)")
        overrides = {k: v for k, v in record.try_.items() if k != "knobs"}
        self._check_engine_code(record.engine, overrides)
        key = json.dumps([record.engine, self._engine_source(record), overrides], sort_keys=True, default=str)
        with self._engine_lock:
            found = None if fresh else self._engines.get(key)
            knobs = dict(record.try_.get("knobs") or {})
            if found is None:
                found, knobs = bridge.engine_for(self.as_case(record, []))
                if not fresh:
                    self._engines[key] = found
            return found, knobs

    def _check_engine_code(self, spec: str, overrides: Mapping[str, Any]) -> None:
        """Without :attr:`allow_code`, refuse an engine that would run code of the server (``module:function``) and
        template overrides that would send the server's environment variables (``{{env.NAME}}``) anywhere."""
        if self.allow_code:
            return
        head, sep, _ = spec.rpartition(":")
        if sep and not head.lower().endswith(".toml"):
            raise InputError(f"engine {spec!r} is a Python function, which runs as the server's own code: this server "
                             "(on another address than 127.0.0.1) runs none unless started with --allow-code; use an "
                             "index folder or FILE.toml:NAME")
        if re.search(r"\{\{\s*env\.", json.dumps(overrides)):
            raise InputError("the try's template overrides read the server's environment ({{env.NAME}}), which this "
                             "server (on another address than 127.0.0.1) allows only when started with --allow-code; "
                             "declare credentials in the engine's TOML file")

    def search(self, record: CaseRecord, text: str, options: Mapping[str, Any], top: int) -> Any:
        """One search of the case's engine with its try (searches are one at a time: an engine's HTTP client
        belongs to the event loop of its search)."""
        from gainscope.search.engine import SearchQuery

        engine, knobs = self.engine(record)
        with self._search_lock:
            return engine.search(SearchQuery("q", text, dict(options)), knobs, top)

    def next_snapshot_name(self, case_id: str) -> str:
        """``CASE #N``: the next free snapshot name of a case."""
        taken = {s.name for s in self.store.snapshots.snapshots()}
        n = len(self.case_snapshots(case_id)) + 1
        while f"{case_id} #{n}" in taken:
            n += 1
        return f"{case_id} #{n}"

    def case_snapshots(self, case_id: str) -> list[Any]:
        """The snapshots of a case (taken by its reruns or of its results), oldest first."""
        return [s for s in self.store.snapshots.snapshots() if s.source == f"case:{case_id}"]

    def snapshot_results(self, case_id: str, name: str) -> tuple[Any, list[Any]]:
        """A snapshot of the case and its recorded results."""
        found = self.store.snapshots.find(name)
        if found is None or found.source != f"case:{case_id}":
            known = ", ".join(s.name for s in self.case_snapshots(case_id)) or "none yet"
            raise NotFoundError(f"case {case_id!r} has no snapshot {name!r}; its snapshots: {known}")
        return found, self.store.snapshots.results(found, responses=False)

    def snapshot_scores(self, case_id: str, name: str, scorers: Sequence[str]) -> dict[str, bridge.Scored]:
        """The snapshot ``name`` scored with today's ratings by each of ``scorers`` (failed ones left out)."""
        return self.snapshot_view(case_id, name, scorers)[1]

    def snapshot_query(self, case_id: str, name: str, query: QueryRecord, scorers: Sequence[str]
                       ) -> tuple[QueryRecord, dict[str, dict[str, Any]], dict[str, bridge.Scored]]:
        """``query`` with the results the snapshot ``name`` recorded for it (none when it did not answer the query),
        the display fields those results carried, and the snapshot scored with today's ratings by ``scorers``."""
        case, scored, results = self.snapshot_view(case_id, name, scorers)
        answered = next((q for q in case.queries if q.query == query.text), None)
        if answered is None:
            return replace(query, results=(), num_found=None), {}, scored
        ids = tuple(answered.results)
        fields: dict[str, dict[str, Any]] = {}
        for result in results:  # the recorded answer whose hits these are (matched as the snapshot case matched)
            if result.ok and tuple(h.id for h in result.hits) == ids:
                fields = {h.id: dict(h.fields) for h in result.hits if h.fields}
                break
        return replace(query, results=ids, num_found=answered.num_found), fields, scored

    def snapshot_view(self, case_id: str, name: str,
                      scorers: Sequence[str]) -> tuple[Any, dict[str, bridge.Scored], list[Any]]:
        """The snapshot ``name`` as a case with today's ratings, scored by each of ``scorers`` (failed ones left
        out), and its recorded results."""
        record = self.store.case(case_id)
        _, results = self.snapshot_results(case_id, name)
        case = bridge.snapshot_case(self.as_case(record, self.store.queries(case_id)), results, name)
        out = {}
        for scorer in scorers:
            try:
                out[scorer] = bridge.score(case, self.scorer(scorer), unscored=record.settings.unscored,
                                           undefined=record.settings.undefined)
            except InputError:
                continue
        return case, out, results

    def compare(self, case_id: str, names: Sequence[str], *, current: bool = False,
                scorers: Sequence[str] | None = None, k: int | None = None) -> dict[str, Any]:
        """Snapshots of the case side by side (see :func:`gainscope.server.cases.compare`), per scorer: the
        comparison, or the error's message for a scorer that failed."""
        record = self.store.case(case_id)
        ratings = self.as_case(record, self.store.queries(case_id))
        recorded = [(name, self.snapshot_results(case_id, name)[1]) for name in names]
        if len(recorded) + int(current) < 2:
            raise InputError("a comparison needs two snapshots at least (or one and the current results)")
        out: dict[str, Any] = {}
        for scorer in scorers or record.settings.scorers:
            try:
                out[scorer] = bridge.compare(ratings, recorded, self.scorer(scorer), k=k,
                                             unscored=record.settings.unscored, undefined=record.settings.undefined,
                                             current=current)
            except InputError as exc:
                out[scorer] = str(exc)
        return out

    def snapshot_current(self, case_id: str, note: str | None = None) -> Any:
        """Record the case's results in force as a new snapshot (no engine involved)."""
        from gainscope.search.engine import Hit, configuration_hash
        from gainscope.search.store import QueryResult

        record = self.store.case(case_id)
        queries = self.store.queries(case_id)
        case = self.as_case(record, queries)
        ids = bridge.trec_query_ids(case)
        fields = self.store.fields(case_id)
        configuration = {"kind": "case", "case": case_id, "results": {q.text: list(q.results) for q in queries}}
        snapshot = self.store.snapshots.create(
            name=self.next_snapshot_name(case_id), engine=record.engine or "case", kind="case",
            configuration=configuration, configuration_hash=configuration_hash(configuration),
            knobs=dict(record.try_.get("knobs") or {}), top=record.settings.depth, note=note,
            source=f"case:{case_id}")
        now = utc_now()
        for position, q in enumerate(queries):
            hits = tuple(Hit(d, None, fields.get(d, {})) for d in q.results)
            self.store.snapshots.record(snapshot, QueryResult(ids[q.text], position, q.text, "ok", now, 0,
                                                              dict(q.options), None, None, hits, q.num_found))
        self.scoreboard.record(case_id, "snapshot", snapshot=snapshot.name, note=note, with_queries=True,
                               always=True)
        return snapshot

    def document_fields(self, record: CaseRecord, docs: Sequence[str]) -> dict[str, dict[str, Any]]:
        """What the workspace knows of documents: the engine's stored document when it can give one (an embedded
        index), else the display fields the engine showed (in a rerun or a search of the dashboard); documents known
        by neither are left out."""
        shown = self.store.fields(record.id, docs)
        lookup = None
        if record.engine:
            try:
                lookup = getattr(self.engine(record)[0], "document", None)
            except InputError:
                lookup = None
        out: dict[str, dict[str, Any]] = {}
        for doc in docs:
            fields = (lookup(doc) if callable(lookup) else None) or shown.get(doc)
            if fields:
                out[doc] = dict(fields)
        return out

    def document_texts(self, record: CaseRecord, docs: Sequence[str]) -> dict[str, tuple[str, str]]:
        """``{doc: (title, text)}`` for an LLM judge, from :meth:`document_fields`."""
        out: dict[str, tuple[str, str]] = {}
        for doc, fields in self.document_fields(record, docs).items():
            title = str(fields.get(record.settings.title_field) or "")
            text = " ".join(str(v) for k, v in fields.items() if k != record.settings.title_field and
                            isinstance(v, (str, int, float)))
            out[doc] = (title, text or title)
        return out
