"""Multi-iteration search agents: traces, readers of real agent logs, two-phase de-duplication, gains, the
Retrieved Good Gain metrics of seed 003 and session DCG.

::

    from gainscope.agents import read_conversations, evaluate_agents, AgentSettings
    conversations = read_conversations("traces.jsonl")             # native, openai-chat, -responses, otel
    report = evaluate_agents(conversations)                         # gains from the trace
    report = evaluate_agents(conversations, judgments=read_judgments("qrels.txt"))
    report.conversations[0].curve[2]["CG@i"], report.aggregates     # per iteration, and over conversations

Modules: ``trace`` (model, native JSONL, JSON Schema), ``mapping`` (where results are in tool outputs),
``chat`` / ``responses`` / ``otel`` (readers), ``readers`` (format detection), ``urls`` and ``fingerprints``
(normalisation, SimHash), ``dedup`` (two phases, explanations), ``gains`` (trace, judgments, judge),
``overlap`` (judgments that match nothing are refused), ``metrics`` (seed 003), ``session`` (sDCG), ``evaluate``
(conversations and aggregates), ``render`` (tables, JSON, CSV) and ``plots`` (curves over iterations).
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
