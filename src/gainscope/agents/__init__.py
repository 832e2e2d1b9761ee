"""Multi-iteration search agents, as an adapter of the one metric engine: traces, readers of real agent logs,
two-phase de-duplication and gains make one session per conversation, which the core's session metrics
(:mod:`gainscope.metrics.families.session`: seed 003's Retrieved Good Gain and session DCG) evaluate.

::

    from gainscope.agents import read_conversations, evaluate_agents, AgentSettings
    conversations = read_conversations("traces.jsonl")             # native, openai-chat, -responses, otel
    report = evaluate_agents(conversations)                         # gains from the trace
    report = evaluate_agents(conversations, judgments=read_judgments("qrels.txt"))
    report.conversations[0].curve[2]["CG@i"], report.aggregates     # per iteration, and over conversations
    report.results.per_query("iterCG")                              # the Results the view presents

Modules: ``trace`` (model, native JSONL, JSON Schema), ``mapping`` (where results are in tool outputs),
``chat`` / ``responses`` / ``otel`` (readers), ``readers`` (format detection), ``urls`` and ``fingerprints``
(normalisation, SimHash), ``dedup`` (two phases, explanations), ``gains`` (trace, judgments, judge),
``overlap`` (judgments that match nothing are refused), ``evaluate`` (conversations as sessions, the one
pipeline, the agent view and its aggregates), ``metrics`` (seed 003's names of the core metrics) and
``session`` (sDCG over plain numbers). The view is rendered by :mod:`gainscope.render.agents` (tables, JSON,
CSV, curves over iterations).
"""

from __future__ import annotations

from gainscope.agents.dedup import Deduplication, DedupSettings, deduplicate, explain
from gainscope.agents.evaluate import (
    AgentReport,
    AgentSettings,
    ConversationResult,
    deduplicate_conversation,
    evaluate_agents,
    evaluate_agents_async,
)
from gainscope.agents.gains import Grade, JudgmentIndex
from gainscope.agents.mapping import ResultMapping
from gainscope.agents.metrics import good_gain_curve, iterations_for_all_good
from gainscope.agents.readers import TRACE_FORMATS, read_conversations
from gainscope.agents.session import session_dcg
from gainscope.agents.trace import Conversation, Iteration, Result, Search, Turn, read_traces, write_traces
from gainscope.agents.urls import UrlPolicy, normalise_url

__all__ = [
    "TRACE_FORMATS",
    "AgentReport",
    "AgentSettings",
    "Conversation",
    "ConversationResult",
    "DedupSettings",
    "Deduplication",
    "Grade",
    "Iteration",
    "JudgmentIndex",
    "Result",
    "ResultMapping",
    "Search",
    "Turn",
    "UrlPolicy",
    "deduplicate",
    "deduplicate_conversation",
    "evaluate_agents",
    "evaluate_agents_async",
    "explain",
    "good_gain_curve",
    "iterations_for_all_good",
    "normalise_url",
    "read_conversations",
    "read_traces",
    "session_dcg",
    "write_traces",
]
