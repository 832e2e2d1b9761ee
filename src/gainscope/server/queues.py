"""Rating queues: the (query, document) pairs of a pairs file -- what ``gainscope pool -o pairs.txt`` writes, or a
qrels or run file, as ``gainscope judge --pairs`` reads them (:func:`gainscope.judges.pool.read_pairs_file`) -- rated
one at a time in the file's order, into a case of the dashboard (tables: :mod:`gainscope.server.queue_store`).

* **Import.** A pair's query id is matched to the case's queries by their TREC ids, the ids the case's qrels and run
  exports carry (:func:`gainscope.server.cases.trec_query_ids`): pool runs of the case's queries. A pair whose query
  is not the case's is an error naming the file and line; so is a file without pairs.
* **Ratings** are the case's, given as every human rating of the dashboard (``source`` ``human``, with the author),
  so that query and case scores move at once and the rating events keep every change. An item counts as rated when
  the case holds a rating of the pair that no LLM judge gave (a rating given on the query page counts too).
* **Order.** After a rating or a skip the queue moves to the next unrated item that is not skipped (after the
  current one, then from the start); when none is left the skipped ones come back; when every item is rated the
  queue is done (position = the number of items). The position is stored: a queue opens again where the person
  stopped, after a restart too. Undo takes back the newest rating or skip (the rating in force before, with its
  source and author, comes back) and returns to its item.
* **Export.** The queue's ratings as TREC qrels (``QID 0 DOC GRADE``, the case's TREC ids; a query's lines
  together, queries in the order of their first pair, each query's pairs in the queue's order): feed them to
  ``gainscope evaluate``, or to ``gainscope judge --human`` so the judge leaves those pairs to people.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from gainscope.errors import InconsistentInputError, InputError
from gainscope.server import cases as bridge
from gainscope.server import views
from gainscope.server.queue_store import QueueItem, QueueRecord
from gainscope.server.store import QueryRecord, Rating, slug
from gainscope.server.workspace import Workspace

__all__ = ["add_queue", "export_qrels", "goto", "next_position", "queue_state", "queue_summary", "rate", "skip",
           "undo"]


def _human(rating: Rating | None) -> bool:
    """A rating a person gave (or imported): what makes a queue's item rated."""
    return rating is not None and not rating.source.startswith("llm:")


def next_position(rated: Sequence[bool], skipped: Sequence[bool], after: int) -> int:
    """The item to show after ``after``: the next unrated item not skipped (after ``after``, then from the start),
    else the next unrated skipped one, else ``len(rated)`` (every item is rated: done)."""
    n = len(rated)
    order = [(after + 1 + i) % n for i in range(n)]
    for i in order:
        if not rated[i] and not skipped[i]:
            return i
    for i in order:
        if not rated[i]:
            return i
    return n


def add_queue(ws: Workspace, case_id: str, path: str | Path, *, name: str | None = None,
              shown_as: str | None = None) -> tuple[QueueRecord, bool]:
    """Store the pairs of the file ``path`` as a new queue of the case ``case_id``, named ``name`` (default: the
    file's name without its extension); returns the queue and whether it is new. A queue of the case with the same
    name and the same pairs in the same order is the one returned (adding a file again, or ``gainscope serve
    --queue`` started again, resumes it). ``shown_as`` is the file's name in messages and in the queue's source (an
    upload's name rather than its temporary copy)."""
    from gainscope.judges.pool import read_pairs_file

    record = ws.store.case(case_id)
    where = shown_as or str(path)
    read = read_pairs_file(path)
    if not read.pairs:
        raise InputError(f"{where} holds no pair: a pairs file has a 'query_id doc_id' line per pair (gainscope pool "
                         "-o writes one), or qrels or run lines")
    queries = ws.store.queries(case_id)
    ids = bridge.trec_query_ids(ws.as_case(record, queries))
    by_trec = {ids[q.text]: q.id for q in queries}
    pairs = []
    for (qid, doc), line in zip(read.pairs, read.lines, strict=True):
        found = by_trec.get(qid)
        if found is None:
            known = ", ".join(list(by_trec)[:10]) + (" ..." if len(by_trec) > 10 else "")
            raise InconsistentInputError(
                f"{where}:{line}: query {qid!r} is not a query of case {case_id!r} (its queries' TREC ids: "
                f"{known or 'none'}); a queue rates pairs of the case's queries: pool runs whose query ids are the "
                "case's, as its TREC qrels and run exports write them")
        pairs.append((found, doc))
    label = name.strip() if name and name.strip() else Path(where).stem or "queue"
    for existing in ws.store.queues.queues(case_id):
        if existing.name == label and [(i.query_id, i.doc_id) for i in ws.store.queues.items(existing.id)] == pairs:
            return existing, False
    taken = {q.id for q in ws.store.queues.queues()}
    base = slug(label, fallback="queue")
    queue_id, n = base, 2
    while queue_id in taken:
        queue_id, n = f"{base}-{n}", n + 1
    note = "\n".join(read.header) or None
    return ws.store.queues.add(queue_id, case_id, label, pairs, source=Path(where).name, note=note), True


class _Loaded:
    """A queue with its items and the case's queries (with their ratings), read once per request."""

    def __init__(self, ws: Workspace, case_id: str, queue_id: str) -> None:
        self.ws = ws
        self.record = ws.store.case(case_id)
        self.queue = ws.store.queues.queue(queue_id, case_id)
        self.items = ws.store.queues.items(queue_id)
        self.queries = {q.id: q for q in ws.store.queries(case_id)}

    def rating(self, item: QueueItem) -> Rating | None:
        q = self.queries.get(item.query_id)
        return None if q is None else q.ratings.get(item.doc_id)

    def rated(self) -> list[bool]:
        return [_human(self.rating(i)) for i in self.items]

    def item(self, position: int) -> QueueItem:
        if not 0 <= position < len(self.items):
            raise InputError(f"'position' is an item of queue {self.queue.id!r}: 0 to {len(self.items) - 1}; got "
                             f"{position}")
        return self.items[position]


def queue_summary(ws: Workspace, queue: QueueRecord, loaded: _Loaded | None = None) -> dict[str, Any]:
    """A queue in a list: its name, source file and header note, and its counts (items, rated, skipped and not
    rated, remaining), where the person stopped."""
    data = loaded or _Loaded(ws, queue.case_id, queue.id)
    rated = data.rated()
    skipped = sum(1 for i, r in zip(data.items, rated, strict=True) if i.skipped and not r)
    total, done = len(rated), sum(rated)
    return {"id": queue.id, "case": queue.case_id, "name": queue.name, "source": queue.source, "note": queue.note,
            "created": queue.created, "total": total, "rated": done, "skipped": skipped, "remaining": total - done,
            "position": min(data.queue.position, total), "done": done == total}


def _item_view(data: _Loaded, position: int) -> dict[str, Any] | None:
    """The item at ``position`` as the queue page shows it: the query (text and TREC id), the document (title and
    fields, when the workspace knows them; its rank in the results in force), its rating and provenance."""
    if position >= len(data.items):
        return None
    item = data.items[position]
    q = data.queries[item.query_id]
    settings = data.record.settings
    fields = data.ws.document_fields(data.record, [item.doc_id]).get(item.doc_id, {})
    shown = [n for n in settings.fields if n in fields] if settings.fields else \
        [n for n, v in fields.items() if n != settings.title_field and isinstance(v, (str, int, float, list))]
    r = data.rating(item)
    ids = bridge.trec_query_ids(data.ws.as_case(data.record, [q]))
    return {"position": position, "query_id": q.id, "qid": ids[q.text], "query": q.text, "doc": item.doc_id,
            "title": views._text(fields.get(settings.title_field)),
            "fields": {n: views._text(fields.get(n)) for n in shown},
            "known": bool(fields), "rank": q.results.index(item.doc_id) + 1 if item.doc_id in q.results else None,
            "rating": None if r is None else r.value, "source": None if r is None else r.source,
            "author": None if r is None else r.author, "rated_at": None if r is None else r.updated,
            "rated": _human(r), "skipped": item.skipped}


def queue_state(ws: Workspace, case_id: str, queue_id: str, position: int | None = None,
                loaded: _Loaded | None = None) -> dict[str, Any]:
    """The queue (:func:`queue_summary`), the case's scale and the item shown: at ``position``, else where the person
    stopped (None when the queue is done)."""
    data = loaded or _Loaded(ws, case_id, queue_id)
    summary = queue_summary(ws, data.queue, data)
    at = summary["position"] if position is None else position
    if position is not None and not 0 <= position <= len(data.items):
        raise InputError(f"'position' is between 0 and {len(data.items)} (the number of items); got {position}")
    return {"queue": {**summary, "position": at}, "scale": data.record.scale, "item": _item_view(data, at)}


def _scores(ws: Workspace, case_id: str, query: QueryRecord, changed: bool) -> dict[str, Any]:
    """The scores after a rating of ``query``: per scorer, the query's and the case's."""
    scores = ws.scoreboard.rating_changed(case_id, query.id) if changed else ws.scoreboard.scores(case_id)
    if changed:
        ws.scoreboard.record(case_id, "rating")
    per_query = views.query_scores(scores, query.text)
    return {name: {"query": per_query[name], "case": s.score, "error": s.error}
            for name, s in scores.by_scorer.items()}


def _moved(ws: Workspace, case_id: str, queue_id: str, after: int, extra: Mapping[str, Any]) -> dict[str, Any]:
    """Move the queue to the item after ``after`` (see :func:`next_position`) and answer its state."""
    data = _Loaded(ws, case_id, queue_id)
    position = next_position(data.rated(), [i.skipped for i in data.items], after)
    ws.store.queues.set_position(queue_id, position)
    data.queue = replace(data.queue, position=position)
    return {**queue_state(ws, case_id, queue_id, loaded=data), **extra}


def rate(ws: Workspace, case_id: str, queue_id: str, position: int, rating: Any, *,
         author: str | None = None) -> dict[str, Any]:
    """Rate the item at ``position`` (a number on the case's scale), then move on; answers the queue's state, the
    rating given (with the one it replaced) and the scores it moved."""
    data = _Loaded(ws, case_id, queue_id)
    item = data.item(position)
    q = data.queries[item.query_id]
    if rating is None:
        raise InputError("'rating' is a number on the case's scale (undo takes a rating given in the queue back)")
    value = bridge.check_rating(data.record.scale, rating, f"query {q.text!r}, document {item.doc_id!r}")
    before = data.rating(item)
    changed, previous = ws.store.set_rating(case_id, item.query_id, item.doc_id, value, source="human", author=author)
    ws.store.queues.log(queue_id, position, "rate", rating=value,
                        previous=None if before is None else float(before.value),
                        previous_source=None if before is None else before.source,
                        previous_author=None if before is None else before.author, was_skipped=item.skipped)
    if item.skipped:
        ws.store.queues.set_skipped(queue_id, position, False)
    scores = _scores(ws, case_id, q, changed)
    return _moved(ws, case_id, queue_id, position, {
        "rated": {"position": position, "doc": item.doc_id, "query": q.text, "rating": value, "previous": previous,
                  "changed": changed}, "scores": scores})


def skip(ws: Workspace, case_id: str, queue_id: str, position: int) -> dict[str, Any]:
    """Skip the item at ``position`` for now (it comes back when every other item is rated), then move on."""
    data = _Loaded(ws, case_id, queue_id)
    item = data.item(position)
    ws.store.queues.log(queue_id, position, "skip", rating=None, previous=None, previous_source=None,
                        previous_author=None, was_skipped=item.skipped)
    ws.store.queues.set_skipped(queue_id, position, True)
    return _moved(ws, case_id, queue_id, position, {"skipped": {"position": position, "doc": item.doc_id}})


def undo(ws: Workspace, case_id: str, queue_id: str, *, author: str | None = None) -> dict[str, Any]:
    """Take back the newest rating or skip of the queue and go back to its item. The rating in force before comes
    back with its source and author; a rating that was not there is removed (an event by ``author``). A rating
    changed since (on the query page, by someone else) is not overwritten: that is refused."""
    data = _Loaded(ws, case_id, queue_id)
    action = ws.store.queues.last_action(queue_id)
    if action is None:
        raise InputError(f"queue {queue_id!r} has nothing to undo")
    item = data.item(action.position)
    extra: dict[str, Any] = {"undone": {"position": action.position, "doc": item.doc_id, "action": action.action}}
    if action.action == "rate":
        q = data.queries[item.query_id]
        now = data.rating(item)
        if now is None or float(now.value) != action.rating:
            shown = "no rating" if now is None else f"{now.value} by {now.author or now.source}"
            raise InputError(f"the rating of document {item.doc_id!r} for query {q.text!r} changed after it was given "
                             f"in this queue (it is now {shown}); undo would overwrite that: rate it again instead")
        changed, _ = ws.store.set_rating(case_id, item.query_id, item.doc_id, action.previous,
                                         source=action.previous_source or "human",
                                         author=author if action.previous is None else action.previous_author)
        extra["scores"] = _scores(ws, case_id, q, changed)
    ws.store.queues.set_skipped(queue_id, action.position, action.was_skipped)
    ws.store.queues.forget_action(queue_id, action.seq)
    ws.store.queues.set_position(queue_id, action.position)
    return {**queue_state(ws, case_id, queue_id), **extra}


def goto(ws: Workspace, case_id: str, queue_id: str, position: int) -> dict[str, Any]:
    """Show the item at ``position`` (the arrows), and remember it as where the person is."""
    data = _Loaded(ws, case_id, queue_id)
    state = queue_state(ws, case_id, queue_id, position, loaded=data)
    ws.store.queues.set_position(queue_id, position)
    return state


def export_qrels(ws: Workspace, queue_id: str, case_id: str | None = None) -> str:
    """The queue's rated pairs as TREC qrels (see the module docstring)."""
    queue = ws.store.queues.queue(queue_id, case_id)
    data = _Loaded(ws, queue.case_id, queue_id)
    chosen: dict[str, dict[str, Rating]] = {}
    for item in data.items:
        r = data.rating(item)
        if _human(r):
            assert r is not None
            chosen.setdefault(item.query_id, {})[item.doc_id] = r
    picked = [replace(data.queries[qid], ratings=ratings) for qid, ratings in chosen.items()]
    return bridge.export_text(ws.as_case(data.record, picked), "qrels")
