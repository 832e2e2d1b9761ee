"""One grade per (query, document): a judge wrapper that every metric of a run shares.

Every temporal metric in LLM mode asks its judge for the grades it needs; several metrics on the same queries ask
for the same pairs. :class:`SharedJudge` answers each (query text, document text) once -- the first request goes to
the judge, any later or concurrent one gets the same label -- so the metrics of one evaluation read the same grades
(a judge whose answers drift between two asks cannot make precision and MRR disagree about a document) and each
pair is paid once. Failed labels are shared too: a document the judge could not grade is failed for every metric.

With a :class:`~gainscope.judges.store.JudgmentStore`, successful labels are looked up there first (keyed by the
judge's hash, the query id, the document id and the hashes of their texts, as ``gainscope judge`` does) and every
new label is recorded, so a rerun pays nothing for pairs already graded; failed labels are recorded and asked
again on the next run.

The batch (:mod:`gainscope.temporal.batch`) wraps its judge in one automatically; in Python, wrap the judge once
and give the wrapper to every metric::

    shared = SharedJudge(LLMJudge(spec, client))
    TemporalNDCG(use_llm=True, llm=shared), TemporalPrecision(use_llm=True, llm=shared)
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from gainscope.errors import PolicyError

if TYPE_CHECKING:
    from gainscope.io.texts import Document, Query
    from gainscope.judges.labeling import Judge
    from gainscope.judges.spec import JudgeSpec
    from gainscope.judges.store import JudgmentStore, PairKey, StoredLabel

__all__ = ["SharedJudge"]


class SharedJudge:
    """A judge (the :class:`~gainscope.judges.labeling.Judge` protocol) that grades each (query, document) once;
    see the module docstring. ``asked``: pairs sent to the judge; ``shared``: requests answered with a label
    already asked for in this run; ``stored``: labels taken from the store."""

    def __init__(self, judge: Judge, store: JudgmentStore | None = None) -> None:
        if store is not None and not callable(getattr(judge, "key", None)):
            raise PolicyError("a judgment store needs a judge with .key(query, document) (the store key of a pair), "
                              "such as gainscope.judges.labeling.LLMJudge")
        self.judge = judge
        self.spec: JudgeSpec = judge.spec
        self.store = store
        self.asked = self.shared = self.stored = 0
        self._labels: dict[tuple[str, str, str, str], asyncio.Task[StoredLabel]] = {}
        if store is not None:
            store.register_judge(self.spec.hash, self.spec.canonical())

    async def grade(self, query: Query, document: Document) -> StoredLabel:
        """The pair's label: from this run, else from the store, else from the judge (recorded in the store)."""
        what = (query.text, query.narrative or "", document.title or "", document.text)
        task = self._labels.get(what)
        if task is None:
            task = asyncio.ensure_future(self._first(query, document))
            self._labels[what] = task
        else:
            self.shared += 1
        # shielded: a caller that is cancelled does not cancel the grade the other callers wait for
        return await asyncio.shield(task)

    async def _first(self, query: Query, document: Document) -> StoredLabel:
        key: PairKey | None = None
        if self.store is not None:
            key = self.judge.key(query, document)  # type: ignore[attr-defined]
            stored = self.store.get(key)
            if stored is not None and stored.status == "ok":
                self.stored += 1
                return stored
        self.asked += 1
        label = await self.judge.grade(query, document)
        if self.store is not None:
            self.store.record(label)
        return label
