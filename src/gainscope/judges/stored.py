"""One judge over one judgment store: each (query, document) is paid once, in this process and across processes.

:class:`StoredJudge` wraps a judge (the :class:`~gainscope.judges.labeling.Judge` protocol; with a store it needs
``.key(query, document)``, as :class:`~gainscope.judges.labeling.LLMJudge` has) and answers every grade request
in this order:

1. **this run** -- a pair already asked for (or being asked for) by this wrapper gets the same label: the first
   request goes on, later and concurrent ones wait for it. A pair is its query and document ids and the texts the
   judge sees (query text and narrative, document title and text), so every metric of one evaluation reads the
   same grade even from a judge whose answers drift;
2. **the store** -- a successful label of the same judge on the same texts is taken without a request (a failed
   one is asked again unless ``retry_failed=False``);
3. **a claim** -- before the request is sent the pair is claimed in the store
   (:meth:`~gainscope.judges.store.JudgmentStore.claim`). A pair another live process holds is not asked here:
   :meth:`StoredJudge.grade` polls every ``poll`` seconds until that process records its label (taken from the
   store) or lets its claim lapse (it died, or its lease expired: then it is asked here). While a request is in
   flight its claim is renewed every third of the store's lease, so a slow answer is not taken over;
4. **the judge** -- the label is recorded as soon as it arrives. A failure recorded after another process's
   grade is dropped and that grade is returned.

So two processes sharing a store never pay twice for one pair (the one exception is the store's: a request in
flight when its process is killed). Without a store only step 1 applies.

``gainscope judge`` (:func:`~gainscope.judges.labeling.label_pairs`), ``temporal evaluate --mode llm``
(:class:`~gainscope.temporal.judging.SharedJudge`) and ``agent evaluate --judge`` all grade through this class.
:meth:`StoredJudge.attempt` is the step without waiting, for a caller that schedules the pairs another process
holds itself (``label_pairs`` leaves them to the end of its run).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gainscope.errors import PolicyError, StoreError

if TYPE_CHECKING:
    from gainscope.io.texts import Document, Query
    from gainscope.judges.labeling import Judge
    from gainscope.judges.spec import JudgeSpec
    from gainscope.judges.store import JudgmentStore, PairKey, StoredLabel

__all__ = ["WAIT_POLL", "Answer", "StoredJudge"]

#: seconds between two looks at a pair another process is judging
WAIT_POLL = 0.25


@dataclass(frozen=True)
class Answer:
    """A pair's label and where it came from: ``fresh`` when this process asked the judge for it (and paid)."""

    label: StoredLabel
    fresh: bool


class StoredJudge:
    """A judge (the :class:`~gainscope.judges.labeling.Judge` protocol) that pays for each pair once; see the module
    docstring. Counters: ``asked`` pairs sent to the judge, ``stored`` labels taken from the store (recorded by an
    earlier run or by another process meanwhile), ``shared`` requests answered with a label already asked for in
    this run, ``waited`` pairs found claimed by another live process."""

    def __init__(self, judge: Judge, store: JudgmentStore | None = None, *, retry_failed: bool = True,
                 poll: float = WAIT_POLL) -> None:
        if store is not None and not callable(getattr(judge, "key", None)):
            raise PolicyError("a judgment store needs a judge with .key(query, document) (the store key of a pair), "
                              "such as gainscope.judges.labeling.LLMJudge")
        self.judge = judge
        self.spec: JudgeSpec = judge.spec
        self.store = store
        self.retry_failed = retry_failed
        self.poll = poll
        self.asked = self.stored = self.shared = self.waited = 0
        self._labels: dict[tuple[str, ...], asyncio.Task[StoredLabel]] = {}
        if store is not None:
            store.register_judge(self.spec.hash, self.spec.canonical())

    def key(self, query: Query, document: Document) -> PairKey:
        """The store key of a pair for the wrapped judge."""
        return self.judge.key(query, document)  # type: ignore[attr-defined]

    def lookup(self, query: Query, document: Document) -> StoredLabel | None:
        """The stored label this judge keeps for the pair without asking: a grade, or a failure when
        ``retry_failed`` is False; None when the pair is to be asked (or there is no store)."""
        if self.store is None:
            return None
        stored = self.store.get(self.key(query, document))
        if stored is not None and (stored.status == "ok" or not self.retry_failed):
            return stored
        return None

    async def grade(self, query: Query, document: Document) -> StoredLabel:
        """The pair's label: from this run, else from the store, else from the judge once this process holds the
        pair's claim (waiting while another live process holds it)."""
        what = (query.query_id, query.text, query.narrative or "", document.doc_id, document.title or "",
                document.text)
        task = self._labels.get(what)
        if task is None:
            task = asyncio.ensure_future(self._settled(query, document))
            self._labels[what] = task
        else:
            self.shared += 1
        # shielded: a caller that is cancelled does not cancel the grade the other callers wait for
        return await asyncio.shield(task)

    async def _settled(self, query: Query, document: Document) -> StoredLabel:
        waited = False
        while True:
            answer = await self.attempt(query, document)
            if answer is not None:
                return answer.label
            if not waited:
                waited = True
                self.waited += 1
            await asyncio.sleep(self.poll)

    async def attempt(self, query: Query, document: Document) -> Answer | None:
        """One try at the pair, without waiting: its label (stored, or asked now), or None when another live
        process holds its claim. Raises what the judge raises (a spent budget, a fatal client error), after
        releasing the claim."""
        store = self.store
        if store is None:
            self.asked += 1
            return Answer(await self.judge.grade(query, document), fresh=True)
        stored = self.lookup(query, document)
        if stored is not None:
            self.stored += 1
            return Answer(stored, fresh=False)
        key = self.key(query, document)
        claim = store.claim(key)
        if claim == "done":  # another process recorded a grade since the lookup
            return self._from_store(key)
        if claim == "taken":
            return None
        self.asked += 1
        beat = asyncio.ensure_future(self._renew(store, key))
        try:
            label = await self.judge.grade(query, document)
        except BaseException:
            with contextlib.suppress(StoreError):  # a store that fails here: the claim is stale once we exit
                store.release(key)
            raise
        finally:
            beat.cancel()
        if store.record(label):
            return Answer(label, fresh=True)
        return self._from_store(key)  # another process recorded a grade while this one failed: the grade stands

    def _from_store(self, key: PairKey) -> Answer:
        assert self.store is not None
        label = self.store.get(key)
        if label is None:  # pragma: no cover - a recorded grade is never deleted
            raise StoreError(f"{self.store.path}: the label of {key.query_id}/{key.doc_id} vanished from the store",
                             path=str(self.store.path))
        self.stored += 1
        return Answer(label, fresh=False)

    @staticmethod
    async def _renew(store: JudgmentStore, key: PairKey) -> None:
        """Keep this process's claim on ``key`` while its request is in flight."""
        while True:
            await asyncio.sleep(max(1.0, store.lease / 3))
            with contextlib.suppress(StoreError):  # the label's own write reports a failing store
                store.renew(key)

