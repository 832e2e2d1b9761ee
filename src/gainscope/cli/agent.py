"""``gainscope agent evaluate|dedup|plot|convert``: multi-iteration search agents (see :mod:`gainscope.agents`).

Gains come from the trace (default; in chat, Responses and OTel logs only with ``--field gain=KEY``), from
``--judgments QRELS`` (keyed by the conversation's query id and the result's id, domain_id or URL as
``--judgments-key`` says), or from an LLM judge
(``--model MODEL``, the built-in ``graded`` 0-4 prompt, labels cached in a judgment store and reused across
runs). Exit codes as every command: 2 usage, 3 invalid input, 4 a judge that could not be used.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import click

from gainscope.cli.common import Number, emit, guarded, with_options
from gainscope.cli.spelling import Respelled

__all__ = ["agent_group"]

_FIELDS = ("id", "domain_id", "url", "title", "snippet", "content")


def trace_options(fn: Any) -> Any:
    """How trace files are read: the format and, for tool outputs, the result mapping."""
    options = [
        click.option("--trace-format", type=click.Choice(["auto", "native", "openai-chat", "openai-responses", "otel"]),
                     default="auto", show_default=True, help="Format of TRACES (auto: detected from the first "
                     "JSON value)."),
        click.option("--search-tool", "search_tools", multiple=True,
                     help="A tool name that is a search (repeatable; default: search, web_search, search_web, "
                          "retrieve, retrieval, file_search, search_documents, vector_search)."),
        click.option("--results-path", default=None,
                     help="JSON path of the result list in a search tool's output, e.g. $.data.results "
                          "(default: the output itself if a list, else results/documents/items/hits/data)."),
        click.option("--field", "fields", multiple=True, metavar="FIELD=KEY",
                     help="Key (dotted path) of a result field in tool outputs, e.g. --field url=link "
                          "--field id=metadata.doc_id (repeatable; fields: id, domain_id, url, title, snippet, "
                          "content, gain). Gains in tool outputs are read only with --field gain=KEY (an "
                          "integer 0-4); without it, chat, Responses and OTel traces need --judgments or "
                          "--model for gains."),
    ]
    return with_options(fn, options)


def dedup_options(fn: Any) -> Any:
    """How results are matched as duplicates."""
    options = [
        click.option("--merge-threshold", type=Number(min=0, min_open=True), default=1.0,
                     show_default=True, help="Confidence a candidate needs to be merged (id, url, content 1.0 "
                     "each; title, snippet 0.5)."),
        click.option("--soft-field", "soft_fields", multiple=True, type=click.Choice(_FIELDS),
                     help="A field whose mismatch does not reject a candidate (repeatable; snippet always is)."),
        click.option("--near-duplicates", is_flag=True,
                     help="Also match near-duplicate texts (SimHash of content or snippet)."),
        click.option("--simhash-distance", type=click.IntRange(0, 16), default=3, show_default=True,
                     help="Bits within which two SimHash fingerprints are near-duplicates."),
        click.option("--keep-www", is_flag=True, help="Keep www. apart from the bare host in URLs."),
        click.option("--keep-scheme", is_flag=True, help="Keep http and https apart in URLs."),
    ]
    return with_options(fn, options)


def gain_options(fn: Any) -> Any:
    """Where gains come from, and the metric conventions."""
    options = [
        click.option("--judgments", default=None, help="Qrels (any format gainscope reads) keyed by the "
                     "conversation's query id and the result's id (see --judgments-key)."),
        click.option("--judgments-key", type=click.Choice(["id", "domain_id", "url"]), default="id",
                     show_default=True,
                     help="Which field of a result the doc ids of --judgments are: id (the generic id), domain_id "
                          "or url (normalised on both sides). The fields are separate key spaces: with id, a "
                          "result's domain_id is never looked up. With id or domain_id, a result that has no such "
                          "field is looked up by its URL."),
        click.option("--model", "judge_model", cls=Respelled, old=("--judge",), default=None, metavar="MODEL",
                     help="Grade unique results with this LLM (the graded 0-4 prompt) on an OpenAI-compatible "
                          "server."),
        click.option("--base-url", default=lambda: os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
                     show_default="$OPENAI_BASE_URL or https://api.openai.com/v1", help="The judge's server."),
        click.option("--api-key", default=None, help="API key (default: $OPENAI_API_KEY)."),
        click.option("--azure-api-version", default=None, help="Talk to Azure OpenAI with this api-version."),
        click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path),
                     default=Path("gainscope-judgments.sqlite"), show_default=True,
                     help="Judgment store: labels are reused across runs."),
        click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True,
                     help="Judge requests in flight at most."),
        click.option("--timeout", type=Number(min=0, min_open=True), default=60.0, show_default=True,
                     help="Seconds per judge request."),
        click.option("--max-attempts", type=click.IntRange(min=1), default=6, show_default=True,
                     help="Attempts per judge request on 408/429/5xx, timeouts and dropped connections."),
        click.option("--good-gain", type=Number(min=0), default=2.0, show_default=True,
                     help="A result is good when its gain is at least this."),
        click.option("--unjudged", type=click.Choice(["zero", "undefined"]), default=None,
                     help="A result without a gain: 0, or undefined (default: zero with --judgments, as "
                          "trec_eval; undefined for gains from the trace). Failed judge grades are always "
                          "undefined."),
        click.option("--sdcg-b", type=Number(min=1, min_open=True), default=2.0, show_default=True,
                     help="Session DCG: rank discount log base b (a result at rank j counts gain / max(1, "
                          "log_b j))."),
        click.option("--sdcg-bq", type=Number(min=1, min_open=True), default=4.0, show_default=True,
                     help="Session DCG: query discount log base bq (search q counts DCG_q / (1 + log_bq q))."),
        click.option("--sdcg-gains", default=None, metavar="G:GAIN,...",
                     help="Session DCG: the gain of each grade, e.g. 0:0,1:1,2:10,3:100,4:1000 (default: the "
                          "grade itself)."),
        click.option("--sdcg-depth", type=click.IntRange(min=1), default=None,
                     help="Session DCG: ranks counted per search (default: all)."),
    ]
    return with_options(fn, options)


def _mapping(kwargs: dict[str, Any]) -> Any:
    from gainscope.agents.mapping import DEFAULT_SEARCH_TOOLS, ResultMapping

    fields: dict[str, str] = {}
    gain: str | None = None
    for item in kwargs.pop("fields"):
        name, sep, key = item.partition("=")
        if not sep or name.strip() not in (*_FIELDS, "gain") or not key.strip():
            raise click.BadParameter(f"expected FIELD=KEY with FIELD one of {', '.join(_FIELDS)}, gain; got "
                                     f"{item!r}", param_hint="--field")
        if name.strip() == "gain":
            gain = key.strip()
        else:
            fields[name.strip()] = key.strip()
    tools = kwargs.pop("search_tools") or DEFAULT_SEARCH_TOOLS
    return ResultMapping(search_tools=tuple(tools), results_path=kwargs.pop("results_path"), fields=fields,
                         gain=gain)


def _read(traces: tuple[str, ...], kwargs: dict[str, Any]) -> list[Any]:
    from gainscope.agents.readers import read_conversations
    from gainscope.errors import InputError

    fmt = kwargs.pop("trace_format")
    mapping = _mapping(kwargs)
    out: list[Any] = []
    seen: dict[str, str] = {}
    for path in traces:
        for conv in read_conversations(path, None if fmt == "auto" else fmt, mapping=mapping):
            if conv.conversation_id in seen:
                raise InputError(f"conversation {conv.conversation_id!r} is in {seen[conv.conversation_id]} and "
                                 f"{path}; conversation ids must be unique")
            seen[conv.conversation_id] = path
            out.append(conv)
    return out


def _dedup_settings(kwargs: dict[str, Any]) -> Any:
    from gainscope.agents.dedup import DEFAULT_HARD_FIELDS, DedupSettings
    from gainscope.agents.urls import UrlPolicy

    soft = set(kwargs.pop("soft_fields"))
    return DedupSettings(threshold=kwargs.pop("merge_threshold"),
                         hard_fields=tuple(f for f in DEFAULT_HARD_FIELDS if f not in soft),
                         near_duplicates=kwargs.pop("near_duplicates"), simhash_distance=kwargs.pop("simhash_distance"),
                         url_policy=UrlPolicy(keep_www=kwargs.pop("keep_www"), keep_scheme=kwargs.pop("keep_scheme")))


def _gain_map(text: str | None) -> dict[float, float] | None:
    """``"0:0,1:1,2:10"`` -> ``{0.0: 0.0, 1.0: 1.0, 2.0: 10.0}``."""
    if text is None:
        return None
    out: dict[float, float] = {}
    for part in text.split(","):
        grade, sep, gain = part.partition(":")
        try:
            if not sep:
                raise ValueError
            out[float(grade)] = float(gain)
        except ValueError:
            raise click.BadParameter(f"expected GRADE:GAIN pairs separated by commas, e.g. 0:0,1:1,2:10; got "
                                     f"{part.strip()!r}", param_hint="--sdcg-gains") from None
    return out


def _report(conversations: list[Any], kwargs: dict[str, Any], traces: tuple[str, ...]) -> Any:
    """Evaluate with every gain option popped from ``kwargs``; ``traces`` (the files) are named in messages."""
    from gainscope.agents.evaluate import AgentSettings, evaluate_agents, evaluate_agents_async

    judgments, model = kwargs.pop("judgments"), kwargs.pop("judge_model")
    if judgments is not None and model is not None:
        raise click.UsageError("give gains from --judgments or from --model, not both")
    settings = AgentSettings(good_gain=kwargs.pop("good_gain"), dedup=_dedup_settings(kwargs),
                             judgments_key=kwargs.pop("judgments_key"),
                             missing=kwargs.pop("unjudged"), sdcg_b=kwargs.pop("sdcg_b"),
                             sdcg_bq=kwargs.pop("sdcg_bq"), sdcg_depth=kwargs.pop("sdcg_depth"),
                             sdcg_gains=_gain_map(kwargs.pop("sdcg_gains")))
    judge_kwargs = {k: kwargs.pop(k) for k in ("base_url", "api_key", "azure_api_version", "store_path",
                                               "concurrency", "timeout", "max_attempts")}
    if judgments is not None:
        from gainscope.io import read_judgments

        return evaluate_agents(conversations, judgments=read_judgments(judgments, float_grades=True),
                               settings=settings, traces=", ".join(traces))
    if model is None:
        return evaluate_agents(conversations, settings=settings)
    from gainscope.judges.client import ChatClient, ClientSettings
    from gainscope.judges.labeling import LLMJudge
    from gainscope.judges.prompts import builtin_prompt
    from gainscope.judges.spec import JudgeSpec
    from gainscope.judges.store import JudgmentStore
    from gainscope.judges.stored import StoredJudge

    spec = JudgeSpec(model=model, prompt=builtin_prompt("graded"))
    client_settings = ClientSettings(base_url=judge_kwargs["base_url"], api_key=judge_kwargs["api_key"],
                                     concurrency=judge_kwargs["concurrency"], timeout=judge_kwargs["timeout"],
                                     max_attempts=judge_kwargs["max_attempts"],
                                     azure_api_version=judge_kwargs["azure_api_version"])

    async def run(store: Any) -> tuple[Any, Any]:
        async with ChatClient(client_settings) as client:
            judge = StoredJudge(LLMJudge(spec, client), store)
            report = await evaluate_agents_async(conversations, judge=judge, settings=settings,
                                                 workers=judge_kwargs["concurrency"])
            return report, judge

    with JudgmentStore(judge_kwargs["store_path"]) as store:
        report, judge = asyncio.run(run(store))
    failed = sum(1 for c in report.conversations for g in c.grades if g.status == "failed")
    click.echo(f"judge {spec.describe()}: {judge.asked} asked, {judge.stored} from the store "
               f"{judge_kwargs['store_path']}, {failed} failed (undefined, never 0)", err=True)
    return report


@click.group("agent")
def agent_group() -> None:
    """Multi-iteration search agents: Retrieved Good Gain metrics over de-duplicated results (seed 003)."""


@agent_group.command("evaluate")
@click.argument("traces", nargs=-1, required=True)
@trace_options
@dedup_options
@gain_options
@click.option("-q", "--per-conversation", is_flag=True,
              help="Also show each conversation: every value at every iteration, and notes.")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table",
              show_default=True,
              help="Output format. csv is one long table, a value per row, with the columns scope (aggregate, "
                   "conversation, iteration, convention), conversation_id, query_id, i, metric, statistic (mean, "
                   "median, ci_low, ci_high, n, undefined for aggregates; value for a conversation's or an "
                   "iteration's value) and value; iteration rows with -q.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of standard output.")
@guarded
def evaluate_cmd(traces: tuple[str, ...], per_conversation: bool, fmt: str, output: Path | None,
                 **kwargs: Any) -> None:
    """Evaluate agent TRACES (last turn of each conversation): |R^i|, |UR^i|, |GR^i|, |Dup^i|, G_i, CG, RG,
    DCG, DRG, AvgGain, RAG, DRAG, SRE, SRR at every iteration and at N, IterationsForAllGoodResults and
    session DCG; aggregated over conversations (mean, median, 95% bootstrap interval).

    IterationsForAllGoodResults is the first iteration by which all good results were retrieved: with
    --judgments, every result judged good (grade >= --good-gain) for the query; otherwise every good result
    found in the trace (with gains from the trace or from --model). It is capped at 100: when the judged good
    results are never all retrieved it is 100 and all_good_found is false. It is undefined when there is no
    good result to find, and without --judgments also when some result's gain is undefined (it might be good).
    Its aggregate is over the conversations that retrieved every good result by the cap; capped ones (never all
    retrieved, or only after iteration 100) are left out and counted apart (capped), never averaged in.
    """
    from gainscope.render.agents import render_report

    conversations = _read(traces, kwargs)
    report = _report(conversations, kwargs, traces)
    text = render_report(report, fmt, per_conversation=per_conversation)
    emit(text, output)


@agent_group.command("dedup")
@click.argument("traces", nargs=-1, required=True)
@trace_options
@dedup_options
@click.option("--explain", "show", is_flag=True, help="Show every merge decision and why (the default output "
              "is one line of counts per conversation).")
@guarded
def dedup_cmd(traces: tuple[str, ...], show: bool, **kwargs: Any) -> None:
    """De-duplicate the results of the last turn of each conversation in TRACES: candidates by id, domain id,
    normalised URL and text hashes, verified field by field."""
    from gainscope.agents.dedup import explain_conversations
    from gainscope.agents.evaluate import deduplicate_conversation

    conversations = _read(traces, kwargs)
    settings = _dedup_settings(kwargs)
    items = [(c, deduplicate_conversation(c, settings)) for c in conversations]
    if show:
        click.echo(explain_conversations(items, settings), nl=False)
        return
    for conv, d in items:
        dups = sum(1 for x in d.decisions if not x.new)
        click.echo(f"{conv.conversation_id}\t{d.n_iterations} iterations\t{len(d.decisions)} results\t"
                   f"{len(d.unique)} unique\t{dups} duplicates")


@agent_group.command("plot")
@click.argument("traces", nargs=-1, required=True)
@click.option("--output-dir", cls=Respelled, old=("-o",), type=click.Path(file_okay=False, path_type=Path),
              required=True, help="Folder to write the figures into (created if needed).")
@trace_options
@dedup_options
@gain_options
@guarded
def plot_cmd(traces: tuple[str, ...], output_dir: Path, **kwargs: Any) -> None:
    """Plot cumulative good gain, SRE and SRR by iteration for the conversations in TRACES (PNG and SVG)."""
    from gainscope.render.agents import save_curves

    report = _report(_read(traces, kwargs), kwargs, traces)
    for path in save_curves(report, output_dir):
        click.echo(str(path))


@agent_group.command("convert")
@click.argument("traces", nargs=-1, required=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The native JSONL file to write.")
@trace_options
@guarded
def convert_cmd(traces: tuple[str, ...], output: Path, **kwargs: Any) -> None:
    """Convert agent logs (OpenAI chat, Responses, OTel spans) into the native trace format."""
    from gainscope.agents.trace import write_traces

    n = write_traces(_read(traces, kwargs), output)
    click.echo(f"{n} conversations written to {output}", err=True)
