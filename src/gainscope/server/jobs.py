"""Work that takes longer than a request: rerunning a case against its engine, labelling with an LLM judge.

A job runs in a thread of its own with its own connection to the workspace's database (the web app's connection
stays free), reports its progress (``done`` of ``total``, ``failed``), and ends ``done`` with a result or
``failed`` with the error's message. The pages poll ``GET /api/jobs/{id}``.

Reruns (:func:`rerun`) go through the search package's runner -- throttled (``qps``, ``concurrency``), retried,
recorded query by query into a snapshot of the workspace (named ``CASE #N``, with the note) -- and refresh the
case's results only when every query was answered (a failed query never becomes an empty result list; what was
recorded stays in the snapshot). Judging (:func:`judge`) goes through the judges package: the judgment store in
the workspace folder caches every label, and the labels are kept in the workspace apart from the ratings; with
``apply`` they rate the documents nobody rated (a human rating is never overwritten).
"""

from __future__ import annotations

import asyncio
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gainscope.errors import GainscopeError, InputError, NotFoundError
from gainscope.search.store import utc_now

__all__ = ["Job", "Jobs"]


@dataclass
class Job:
    """A piece of work in a thread (see the module docstring)."""

    id: str
    kind: str
    case_id: str
    state: str = "running"
    done: int = 0
    total: int = 0
    failed: int = 0
    message: str = ""
    result: dict[str, Any] = field(default_factory=dict)
    started: str = field(default_factory=utc_now)
    ended: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain data for the API."""
        return {"id": self.id, "kind": self.kind, "case": self.case_id, "state": self.state, "done": self.done,
                "total": self.total, "failed": self.failed, "message": self.message, "result": self.result,
                "started": self.started, "ended": self.ended}


class Jobs:
    """The jobs of a server: started in threads, kept in memory (the last 200)."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def start(self, kind: str, case_id: str, work: Callable[[Job], dict[str, Any]]) -> Job:
        """Run ``work(job)`` in a thread; its return value is the job's result."""
        job = Job(uuid.uuid4().hex[:12], kind, case_id)

        def run() -> None:
            try:
                job.result = work(job)
                job.state = "done"
            except GainscopeError as exc:
                job.message = str(exc)
                job.state = "failed"
            except Exception as exc:  # a job never takes the server down; the message says what happened
                job.message = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
                job.state = "failed"
            finally:
                job.ended = utc_now()

        thread = threading.Thread(target=run, name=f"gainscope-{kind}-{job.id}", daemon=True)
        with self._lock:
            self._jobs[job.id] = job
            self._threads[job.id] = thread
            for old in list(self._jobs)[:-200]:
                self._jobs.pop(old, None)
                self._threads.pop(old, None)
        thread.start()
        return job

    def get(self, job_id: str) -> Job:
        """The job ``job_id``."""
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise NotFoundError(f"no job {job_id!r} (jobs are kept in memory while the server runs)")
        return job

    def running(self, case_id: str, kind: str) -> Job | None:
        """A job of this kind still running for the case, if any."""
        with self._lock:
            return next((j for j in self._jobs.values() if j.case_id == case_id and j.kind == kind and
                         j.state == "running"), None)

    def wait(self, job_id: str, timeout: float = 60.0) -> Job:
        """Wait for a job to end (tests and the benchmark)."""
        thread = self._threads.get(job_id)
        if thread is not None:
            thread.join(timeout)
        return self.get(job_id)


# ---------------------------------------------------------------------------------------------- reruns
def rerun(workspace: Any, case_id: str, job: Job, *, note: str | None, qps: float | None, concurrency: int) -> \
        dict[str, Any]:
    """Run every query of the case against its engine into a new snapshot (see the module docstring)."""
    from gainscope.search.queries import queries_from_case
    from gainscope.search.runner import RunSettings, run_queries
    from gainscope.search.store import SnapshotStore

    store = workspace.store
    record = store.case(case_id)
    case = workspace.as_case(record, store.queries(case_id))
    engine, knobs = workspace.engine(record)
    if engine.kind != "embedded":  # an HTTP engine's client belongs to one event loop: this run gets its own
        engine, knobs = workspace.engine(record, fresh=True)
    queries = queries_from_case(case)
    ids = {q.id: q.text for q in queries}
    by_text = {q.text: q.id for q in store.queries(case_id)}
    name = workspace.next_snapshot_name(case_id)
    settings = RunSettings(top=max(record.settings.depth, 1), concurrency=concurrency, qps=qps)
    job.total = len(queries)

    def progress(p: Any) -> None:
        job.done, job.failed = p.done, p.failed

    database = workspace.connect()
    try:
        snapshots = SnapshotStore(database, path=database.path)
        outcome = asyncio.run(run_queries(engine, queries, snapshots, knobs=knobs, name=name, note=note,
                                          source=f"case:{case_id}", settings=settings, progress=progress,
                                          label=case_id))
    finally:
        database.close()
    result: dict[str, Any] = {"snapshot": outcome.snapshot.name, "sent": outcome.sent, "requests": outcome.requests,
                              "failed": [r.query for r in outcome.failed][:20]}
    if not outcome.complete:
        why = f"; the run stopped: {outcome.stopped}" if outcome.stopped else ""
        raise InputError(f"{len(outcome.failed) + len(outcome.unsent)} of {len(queries)} queries got no answer "
                         f"(for example {', '.join(repr(r.query) for r in outcome.failed[:3]) or 'unsent ones'})"
                         f"{why}; the case keeps its results (a failed query never becomes an empty list), what was "
                         f"answered is in snapshot {outcome.snapshot.name!r}")
    fresh: dict[str, tuple[list[str], int | None]] = {}
    fields: dict[str, Mapping[str, Any]] = {}
    for r in outcome.results:
        hits = list(r.hits)
        total = max(r.total, len(hits)) if r.total is not None else None
        fresh[by_text[ids[r.query_id]]] = ([h.id for h in hits], total)
        fields.update({h.id: h.fields for h in hits if h.fields})
    store.set_results(case_id, fresh, fields)
    workspace.scoreboard.forget(case_id)
    points = workspace.scoreboard.record(case_id, "rerun", snapshot=outcome.snapshot.name, note=note,
                                         with_queries=True, always=True)
    result["scores"] = {p.scorer: p.score for p in points}
    return result


# ---------------------------------------------------------------------------------------------- judges
def judge(workspace: Any, case_id: str, job: Job, *, base_url: str, model: str, prompt: str, scope: str,
          apply: bool, max_requests: int | None, api_key: str | None) -> dict[str, Any]:
    """Label the case's pairs with an LLM judge (see the module docstring). ``scope``: ``unrated`` (the shown
    results nobody rated) or ``shown`` (every shown result, rated or not: what agreement with the humans
    needs)."""
    from gainscope.io.texts import Document, Query
    from gainscope.judges.client import ChatClient, ClientSettings
    from gainscope.judges.labeling import Budget, LLMJudge, label_pairs
    from gainscope.judges.prompts import builtin_prompt
    from gainscope.judges.spec import JudgeSpec
    from gainscope.judges.store import JudgmentStore
    from gainscope.server.store import LabelRecord

    store = workspace.store
    record = store.case(case_id)
    template = builtin_prompt(prompt)
    values = record.scale["values"]
    if template.scale.low < min(values) or template.scale.high > max(values):
        raise InputError(f"the {prompt} prompt grades {template.scale}, outside the case's scale "
                         f"{min(values):g}-{max(values):g}; choose a prompt whose grades fit (umbrela: 0-3, binary: "
                         "0-1)")
    if scope not in ("unrated", "shown"):
        raise InputError(f"scope is 'unrated' or 'shown'; got {scope!r}")
    spec = JudgeSpec(model=model, prompt=template)
    queries = store.queries(case_id)
    depth = record.settings.depth
    pairs = [(q.id, d) for q in queries for d in q.results[:depth] if scope == "shown" or d not in q.ratings]
    docs = workspace.document_texts(record, sorted({d for _, d in pairs}))
    query_texts = {q.id: Query(q.id, q.text) for q in queries}
    documents = {d: Document(d, text, title) for d, (title, text) in docs.items()}
    job.total = len(pairs)

    def progress(p: Any) -> None:
        job.done, job.failed = p.done, p.failed

    async def label() -> Any:
        settings = ClientSettings(base_url=base_url, api_key=api_key, concurrency=4)
        async with ChatClient(settings) as client:
            return await label_pairs(pairs, query_texts, documents, judge=LLMJudge(spec, client), store=cache,
                                     budget=Budget(max_requests=max_requests), workers=4, skip_human=False,
                                     progress=progress)

    with JudgmentStore(workspace.folder / "judgments.sqlite") as cache:
        state, labels = asyncio.run(label())
    now = utc_now()
    records = [LabelRecord(q, d, spec.hash, lb.grade, lb.reasoning, lb.model, now) for (q, d), lb in labels.items()]
    store.add_labels(case_id, records)
    applied = 0
    if apply:
        for lb in records:
            changed, _ = store.set_rating(case_id, lb.query_id, lb.doc_id, lb.grade, source=f"llm:{lb.judge}",
                                          author=lb.model, keep_human=True)
            if changed:
                applied += 1
                workspace.scoreboard.rating_changed(case_id, lb.query_id)
        if applied:
            workspace.scoreboard.record(case_id, "judge", note=f"{applied} ratings by {model}")
    return {"judge": spec.hash, "model": model, "prompt": prompt, "pairs": len(pairs), "labelled": len(records),
            "failed": state.failed, "not_judged": state.not_judged + state.missing_text, "applied": applied,
            "requests": state.requests, "seconds": round(time.monotonic() - state.started, 3)}
