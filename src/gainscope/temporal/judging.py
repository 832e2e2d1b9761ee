"""One grade per (query, document) for every temporal metric: :class:`SharedJudge`, the judges' StoredJudge.

Every temporal metric in LLM mode asks its judge for the grades it needs; several metrics on the same queries ask
for the same pairs. :class:`SharedJudge` is :class:`gainscope.judges.stored.StoredJudge` under the name the
temporal API has always used: each pair is asked once -- the first request goes to the judge, any later or
concurrent one gets the same label -- so the metrics of one evaluation read the same grades (a judge whose
answers drift between two asks cannot make precision and MRR disagree about a document). Failed labels are
shared too: a document the judge could not grade is failed for every metric.

With a :class:`~gainscope.judges.store.JudgmentStore`, successful labels are looked up there first (keyed by the
judge's hash, the query id, the document id and the hashes of their texts, as ``gainscope judge`` does), every
new label is recorded, and each pair is claimed before it is asked, so a rerun pays nothing for pairs already
graded and two processes sharing the store never pay twice (see :mod:`gainscope.judges.stored`); failed labels
are recorded and asked again on the next run.

The batch (:mod:`gainscope.temporal.batch`) wraps its judge in one automatically; in Python, wrap the judge once
and give the wrapper to every metric::

    shared = SharedJudge(LLMJudge(spec, client))
    TemporalNDCG(use_llm=True, llm=shared), TemporalPrecision(use_llm=True, llm=shared)
"""

from __future__ import annotations

from gainscope.judges.stored import StoredJudge

__all__ = ["SharedJudge"]

#: the temporal API's name of :class:`~gainscope.judges.stored.StoredJudge`
SharedJudge = StoredJudge
