"""``gainscope temporal evaluate FILE -m TemporalNDCG@10 ...``: temporal metrics over a JSONL of queries, retrieved
documents and gold (see :mod:`gainscope.temporal.batch`), per query and aggregated, with the statistics of
``gainscope compare`` when the file holds several systems."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import click

from gainscope.cli.common import EXIT_IO, Number, emit, guarded, profile_option, split_metrics
from gainscope.cli.compare import settings_from, statistics_options

__all__ = ["temporal_group"]

DEFAULT_METRICS = ("TemporalNDCG@10",)


@click.group("temporal")
def temporal_group() -> None:
    """Temporal relevance: focus-time, gold and LLM-judged temporal metrics (seed 001)."""


@temporal_group.command("evaluate")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-m", "--metric", "metrics", multiple=True,
              help="Metric(s): TemporalNDCG, TemporalPrecision, TemporalRecall, TemporalMRR, TemporalMAP, "
                   "TemporalYearPrecision, TemporalYearRecall, TemporalDiversity, TemporalCoverage, with @K and "
                   "parameters, e.g. 'TemporalNDCG(gain=exponential, ideal=retrieved)@10'. Default: TemporalNDCG@10.")
@click.option("--mode", type=click.Choice(["auto", "gold", "focus-time", "llm"]), default="auto", show_default=True,
              help="auto: gold ids when every line has gold, focus times (given or extracted from the texts) when "
                   "none has; gold on some lines only is an error naming a line without.")
@click.option("--reference-date", default=None,
              help="Resolve relative expressions ('last year', 'yesterday') against this date (YYYY-MM-DD; YYYY-MM "
                   "or YYYY when only those are known) where a line has no reference_date. Never the current date.")
@click.option("--unresolved", type=click.Choice(["error", "report"]), default="error", show_default=True,
              help="A relative expression ('last year') in a text with no reference date: an error, or no years "
                   "from it (each one listed in the notes).")
@click.option("--undefined", type=click.Choice(["zero", "skip"]), default="zero", show_default=True,
              help="Undefined values (no relevant document, no focus time): 0 in the mean, or left out.")
@click.option("--baseline", default=None, help="Name of the baseline run: a system of the file (default: the first).")
@profile_option
@statistics_options
@click.option("-q", "--per-query", is_flag=True, help="Show the value of every query too.")
@click.option("--show-focus-times", is_flag=True,
              help="Focus-time mode: show the focus times every line was evaluated with, given or extracted (with "
                   "each extraction decision). Table, markdown and JSON output.")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "markdown", "json", "csv"]), default="table",
              show_default=True, help="Output format.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of standard output.")
@click.option("--base-url", default=lambda: os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
              show_default="$OPENAI_BASE_URL or OpenAI", help="LLM mode: the chat-completions server.")
@click.option("--model", default=None, help="LLM mode: the model name.")
@click.option("--api-key", default=None, help="LLM mode: API key (default: $OPENAI_API_KEY; none for local servers).")
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True,
              help="LLM mode: requests in flight at most.")
@click.option("--timeout", type=Number(min=0, min_open=True), default=60.0, show_default=True,
              help="LLM mode: seconds per judge request.")
@click.option("--max-attempts", type=click.IntRange(min=1), default=6, show_default=True,
              help="LLM mode: attempts per judge request on 408/429/5xx, timeouts and dropped connections.")
@click.option("--answer-attempts", type=click.IntRange(min=1), default=3, show_default=True,
              help="LLM mode: requests per document before its grade counts as failed (an unusable answer, or a "
                   "request that failed after --max-attempts).")
@click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="LLM mode: a judgment store (SQLite, as gainscope judge): labels already graded by this judge on "
                   "the same texts are reused without a request, new ones recorded. Default: no store (each pair is "
                   "still graded once per run).")
@click.option("--allow-failures", is_flag=True,
              help="LLM mode: exit 0 even when some grades failed (their queries have no value and are listed).")
@guarded
def evaluate_cmd(file: str, metrics: tuple[str, ...], mode: str, reference_date: str | None, unresolved: str,
                 undefined: str, baseline: str | None, per_query: bool, show_focus_times: bool, fmt: str,
                 output: Path | None, base_url: str, model: str | None, api_key: str | None, concurrency: int,
                 timeout: float, max_attempts: int, answer_attempts: int, store_path: Path | None,
                 allow_failures: bool, profile: str | None, **kwargs: Any) -> None:
    """Evaluate the rankings of FILE (JSONL: one line per system and query) with temporal metrics.

    Each line holds a query_id, optionally a system, the query (text and/or qft focus time), the retrieved
    documents (ids, texts and/or dft focus times) and, for gold mode, gold ids. Prints each system's mean with a
    bootstrap interval and, with several systems, paired differences with the baseline and corrected p-values.
    A failed LLM grade never counts as 0: that query has no value, is named, and the exit code is 4.
    --profile tempoeval gives the metrics TempoEval's conventions in the file's mode (trec_eval: their own
    defaults; the other profiles do not apply to temporal metrics).
    """
    from gainscope.render.temporal import render_evaluation
    from gainscope.temporal.batch import evaluate_records, read_records

    if show_focus_times and fmt == "csv":
        raise click.UsageError("--show-focus-times shows focus times in table, markdown or JSON output, not CSV")
    settings = settings_from(kwargs)
    records = read_records(file, reference_date=reference_date)
    names = split_metrics(metrics) or list(DEFAULT_METRICS)
    chosen = mode.replace("-", "_")
    if chosen == "llm":
        if model is None:
            raise click.UsageError("--mode llm needs --model (and --base-url for a server other than OpenAI)")
        client = {"base_url": base_url, "api_key": api_key, "concurrency": concurrency, "timeout": timeout,
                  "max_attempts": max_attempts}
        evaluation = _with_judge(records, names, file, undefined, baseline, settings, model, client,
                                 answer_attempts, store_path, profile)
    else:
        evaluation = evaluate_records(records, names, path=file, mode=chosen,  # type: ignore[arg-type]
                                      undefined=undefined, baseline=baseline,  # type: ignore[arg-type]
                                      settings=settings, unresolved=unresolved,  # type: ignore[arg-type]
                                      profile=profile)
    text = render_evaluation(evaluation, fmt, per_query=per_query, focus_times=show_focus_times)
    emit(text, output)
    failed = sum(len(f) for f in evaluation.failures.values())
    if failed and not allow_failures:
        click.echo(f"error: {failed} (query, metric) value(s) could not be computed because the judge failed to "
                   "grade documents (listed above); --allow-failures to exit 0 anyway", err=True)
        sys.exit(EXIT_IO)


def _with_judge(records: Any, names: list[str], file: str, undefined: Any, baseline: str | None, settings: Any,
                model: str, client: dict[str, Any], answer_attempts: int, store_path: Path | None,
                profile: str | None) -> Any:
    """Open a chat client (and the store), make the judge with the built-in temporal prompt (seed 001's rubric),
    evaluate; one line on stderr says how many pairs were asked, shared and taken from the store."""
    from gainscope.judges.client import ChatClient, ClientSettings
    from gainscope.judges.labeling import LLMJudge
    from gainscope.judges.prompts import builtin_prompt
    from gainscope.judges.spec import JudgeSpec
    from gainscope.judges.store import JudgmentStore
    from gainscope.temporal.batch import aevaluate_records
    from gainscope.temporal.judging import SharedJudge

    spec = JudgeSpec(model=model, prompt=builtin_prompt("temporal"))

    async def run(store: JudgmentStore | None) -> tuple[Any, SharedJudge]:
        async with ChatClient(ClientSettings(**client)) as chat:
            judge = SharedJudge(LLMJudge(spec, chat, answer_attempts=answer_attempts), store)
            evaluation = await aevaluate_records(records, names, path=file, mode="llm", judge=judge,
                                                 undefined=undefined, baseline=baseline, settings=settings,
                                                 profile=profile)
            return evaluation, judge

    if store_path is None:
        evaluation, judge = asyncio.run(run(None))
    else:
        with JudgmentStore(store_path) as store:
            evaluation, judge = asyncio.run(run(store))
    where = f", {judge.stored} from the store {store_path}" if store_path is not None else ""
    click.echo(f"judge {spec.describe()}: {judge.asked} asked{where}; {judge.shared} grade requests of the metrics "
               "answered with a grade already given in this run", err=True)
    return evaluation
