"""Temporal relevance (seed 001): focus times, their extraction from text, and temporal ranking metrics -- an
adapter over the one metric engine: it grades documents, the core computes every value.

* :mod:`~gainscope.temporal.focus_time` -- :class:`FocusTime`, a set of years (ranges, decades), Jaccard and
  overlap;
* :mod:`~gainscope.temporal.extraction` -- :func:`extract_focus_time`: years, ranges, decades, centuries, named
  periods, relative expressions against an explicit reference, publication years kept apart, optional dateparser;
* :mod:`~gainscope.temporal.grades` -- the adapter's grading in the three modes: gold ids, 4 x the focus-time
  Jaccard, an LLM judge's 0-4 grade (failed grades reported, never 0);
* :mod:`~gainscope.temporal.judging` -- :class:`SharedJudge`: each (query, document) graded once and shared by the
  metrics, optionally kept in a judgment store;
* :mod:`~gainscope.temporal.base` -- the facade of seed 001 (``compute``/``acompute``/``score``/``ascore``, the
  modes, the inputs); :mod:`~gainscope.temporal.engine` -- the way into the core: what a metric reads at cutoff k
  becomes a judged run, and the core metric's kernel computes it;
* :mod:`~gainscope.temporal.ranking` -- :class:`TemporalNDCG`, :class:`TemporalPrecision`,
  :class:`TemporalRecall`, :class:`TemporalMRR`, :class:`TemporalMAP`;
* :mod:`~gainscope.temporal.years` -- :class:`TemporalYearPrecision`, :class:`TemporalYearRecall`,
  :class:`TemporalDiversity`, :class:`TemporalCoverage`;
* :mod:`~gainscope.temporal.names` -- the names, read with the core grammar, and the profiles they take;
* :mod:`~gainscope.temporal.batch` -- a JSONL of queries evaluated at once (``gainscope temporal evaluate``), one
  core :class:`~gainscope.results.Results` per system, rendered by :mod:`gainscope.render.temporal`;
  :mod:`~gainscope.temporal.overlap` refuses a batch whose inputs match nothing.

>>> TemporalNDCG(use_focus_time=True).compute(qft={2020, 2021}, dfts=[{2020, 2021}, {2019}], k=2)
1.0

Every metric is a declared core metric over what the adapter grades (a metric at k reads the first k documents
retrieved, as TempoEval reads ``retrieved[:k]``, and the judged pool):

=========================  ==================================================================================
temporal metric            core metric
=========================  ==================================================================================
``TemporalNDCG``           ``nDCG(gain, ideal)@k``
``TemporalPrecision``      ``P(denominator=retrieved|k)@k``
``TemporalRecall``         ``R@k`` (``total_relevant``: the top k and placeholders for the relevant they miss)
``TemporalMRR``            ``RR@k``
``TemporalMAP``            ``AP(denominator=judged|retrieved)@k``
``TemporalYearPrecision``  ``SetP`` over the years of the top k, judged by the query's years
``TemporalYearRecall``     ``SetR`` over the same
``TemporalDiversity``      ``SetR`` over the buckets the top k cover, judged by the scope's (or ``N`` of them)
``TemporalCoverage``       ``SetR`` over the anchors the top k cover, judged by every anchor
=========================  ==================================================================================

with relevance as the adapter grades it: a grade >= ``rel`` (gold: 1, LLM: 2), or in focus-time mode a Jaccard
above ``min_jaccard`` (the level ``positive`` for the default 0).

Differences with TempoEval 0.1.0 (the ``tempoeval`` package), each a defect there or a declared choice here:

=================================  =====================================================  =========================
what                               TempoEval                                              gainscope
=================================  =====================================================  =========================
nDCG gain                          ``2^g - 1`` (docs show linear)                         ``gain=linear`` (seed),
                                                                                          ``exponential`` on request
nDCG ideal, focus-time/LLM modes   the top k re-sorted ("local ideal")                    ``ideal=judged`` (all
                                                                                          judged), ``retrieved``
                                                                                          on request
undefined values (IDCG 0, R 0,     0.0                                                    NaN with the reason; the
empty QFT, nothing retrieved)                                                             batch applies ``undefined``
failed LLM grade                   0.0 (``verdict``/``relevance_score`` 0)                an error (or NaN with the
                                                                                          reason), never 0
precision, LLM mode                average precision over the retrieved ("position-       precision@k over grades >=
                                   weighted precision")                                   ``rel``
recall, LLM mode                   sum of graded scores / k (a graded precision)          relevant@k / R
relevance threshold                Jaccard in precision/MAP, overlap *count* in           Jaccard > ``min_jaccard``
                                   recall/MRR                                             everywhere
grade-0 entries of a gold dict,    relevant: every key of ``{id: grade}`` is (R counts    not relevant: grade >=
recall and MRR                     it, MRR stops at it)                                   ``rel`` (default 1;
                                                                                          ``rel=0`` is TempoEval's
                                                                                          reading)
MAP normaliser                     relevant retrieved in the top k                        ``denominator=judged``
                                                                                          (R), ``retrieved`` on
                                                                                          request
diversity without a scope          1.0                                                    an error
diversity, LLM mode                the judge lists each document's years; distinct        each bucket of ``scope``
                                   5-year buckets over a fixed number of periods          graded as a period, as
                                                                                          coverage's anchors
coverage                           0.0 unless ``temporal_focus`` is change-over-time;     any query; focus-time mode
                                   LLM only                                               too; any number of anchors
values                             rounded to 5 decimals                                  full precision
unknown keyword inputs             swallowed                                              ``TypeError``
focus-time extraction              counts read as years ("2000 items"), publication       rejected with a reason;
                                   year in the focus time, "recently" against             publication kept apart;
                                   ``datetime.now()``                                     explicit reference only
=================================  =====================================================  =========================

TempoEval's numbers (rounded to 5 decimals), wherever ours is defined -- where ours is undefined (NaN), TempoEval
returns 0.0 -- come from ``gain="exponential"`` for nDCG in every mode, with ``ideal="retrieved"`` in focus-time
mode (its top k re-sorted) and the default ``ideal="judged"`` in gold mode (its ideal is every gold grade), and
``denominator="retrieved"`` for MAP, with the default thresholds; gold recall and MRR on a ``{id: grade}`` gold with
grade-0 entries need ``rel=0`` (``tests/temporal/test_parity_tempoeval.py`` checks the facade on random cases). The
batch's ``profile="tempoeval"`` (``gainscope temporal evaluate --profile tempoeval``) sets exactly these in the
file's mode (``tests/temporal/test_profile_tempoeval.py``).
"""

from __future__ import annotations

from gainscope.temporal.base import TemporalGradeError, TemporalMetric, TemporalScore
from gainscope.temporal.extraction import PERIODS, Extraction, Mention, extract_focus_time
from gainscope.temporal.focus_time import FocusTime, as_focus_time, jaccard, overlap
from gainscope.temporal.judging import SharedJudge
from gainscope.temporal.ranking import TemporalMAP, TemporalMRR, TemporalNDCG, TemporalPrecision, TemporalRecall
from gainscope.temporal.years import TemporalCoverage, TemporalDiversity, TemporalYearPrecision, TemporalYearRecall

__all__ = [
    "PERIODS",
    "Extraction",
    "FocusTime",
    "Mention",
    "SharedJudge",
    "TemporalCoverage",
    "TemporalDiversity",
    "TemporalGradeError",
    "TemporalMAP",
    "TemporalMRR",
    "TemporalMetric",
    "TemporalNDCG",
    "TemporalPrecision",
    "TemporalRecall",
    "TemporalScore",
    "TemporalYearPrecision",
    "TemporalYearRecall",
    "as_focus_time",
    "extract_focus_time",
    "jaccard",
    "overlap",
]
