"""``gainscope judge``: label the pooled pairs of runs (or given pairs) with an LLM judge, into a store and a qrels
file; ``gainscope store info|export|import``: look into a judgment store, export it, add human labels.

Exit codes: 0 when the labelling finished within the failure threshold, 4 when more pairs failed (or had no
text) than ``--max-failures`` allows, or the server could not be used at all.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from gainscope.cli.common import EXIT_IO, Number, emit, guarded
from gainscope.cli.spelling import Respelled

__all__ = ["judge_cmd", "store_group"]


def _threshold(text: str) -> tuple[float, bool]:
    """``"5"`` -> (5, False) pairs; ``"2%"`` -> (0.02, True) of the pairs."""
    try:
        if text.endswith("%"):
            return float(text[:-1]) / 100, True
        return float(text), False
    except ValueError:
        raise click.BadParameter(f"expected a count or a percentage such as 2%; got {text!r}",
                                 param_hint="--max-failures") from None


def _params(items: tuple[str, ...]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs with JSON values (a bare word is a string)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE; got {item!r}", param_hint="--param")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


def _bar(p: Any) -> str:
    width = 24
    share = p.done / p.total if p.total else 1.0
    rate = (p.judged + p.failed) / p.elapsed if p.elapsed > 0 else 0.0
    left = (p.total - p.done) / rate if rate > 0 else 0.0
    cost = f" · ${p.cost:.4f}" if p.cost else ""
    return (f"\r[{'#' * int(share * width):<{width}}] {p.done}/{p.total} · {rate:.1f}/s · cached {p.cached} · "
            f"failed {p.failed}{cost} · {int(left // 60)}m{int(left % 60):02d}s left ")


@click.command("judge")
@click.option("--queries", required=True, help="Query texts: JSONL, TSV or a BEIR folder.")
@click.option("--corpus", required=True, help="Document texts: JSONL, TSV or a BEIR folder.")
@click.option("--run", "runs", multiple=True,
              help="Pool the top --pool-depth documents of this run (repeatable).")
@click.option("--pairs", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Judge these pairs instead: 'query_id doc_id' per line (a qrels or run file works too).")
@click.option("--pool-depth", "depth", cls=Respelled, old=("--depth",), type=click.IntRange(min=1), default=10,
              show_default=True, help="Pool depth per run: its first N documents.")
@click.option("--base-url", default=lambda: os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
              show_default="$OPENAI_BASE_URL or https://api.openai.com/v1",
              help="An OpenAI-compatible server (OpenAI, Azure, vLLM, Ollama, llama.cpp, LiteLLM).")
@click.option("--model", required=True, help="Model name (the deployment name on Azure).")
@click.option("--api-key", default=None, help="API key (default: $OPENAI_API_KEY; none for local servers).")
@click.option("--azure-api-version", default=None, help="Talk to Azure OpenAI with this api-version.")
@click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("gainscope-judgments.sqlite"), show_default=True, help="The judgment store (SQLite).")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write this judge's grades of the pairs as TREC qrels.")
@click.option("--jsonl", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write every label of the pairs (failed ones too) with reasoning and provenance as JSONL.")
@click.option("--prompt", default="graded", show_default=True,
              help="Built-in prompt: graded (0-4), umbrela (0-3), binary, temporal (0-4).")
@click.option("--template", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A prompt template file with {query} and {document} (and optional {title}, {narrative}).")
@click.option("--scale", default=None, help="The template's grading scale, e.g. 0-3 (needed with --template).")
@click.option("--temperature", type=Number(), default=0.0, show_default=True)
@click.option("--max-tokens", type=click.IntRange(min=1), default=300, show_default=True)
@click.option("--seed", type=int, default=None, help="Sampling seed sent to the server (where supported).")
@click.option("--param", "params", multiple=True,
              help="More request fields, KEY=VALUE with a JSON value (reasoning_effort=\"low\", top_p=1); part of "
                   "the judge's hash.")
@click.option("--omit", "omitted", multiple=True, type=click.Choice(["temperature", "max_tokens"]),
              help="Do not send this field (reasoning models refuse temperature and max_tokens).")
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True,
              help="Requests in flight at most.")
@click.option("--rpm", type=Number(min=0, min_open=True), default=None, help="Requests per minute at most.")
@click.option("--tpm", type=Number(min=0, min_open=True), default=None, help="Tokens per minute at most.")
@click.option("--timeout", type=Number(min=0, min_open=True), default=60.0, show_default=True,
              help="Seconds per request.")
@click.option("--max-attempts", type=click.IntRange(min=1), default=6, show_default=True,
              help="Attempts per request on 408/429/5xx, timeouts and dropped connections.")
@click.option("--answer-attempts", type=click.IntRange(min=1), default=3, show_default=True,
              help="Requests per pair when answers are not a grade on the scale; then the pair is failed.")
@click.option("--max-requests", type=click.IntRange(min=1), default=None, help="Budget: requests at most.")
@click.option("--max-cost", type=Number(min=0), default=None, help="Budget: cost at most (needs prices).")
@click.option("--price-in", type=Number(min=0), default=None, help="Price per million input tokens.")
@click.option("--price-out", type=Number(min=0), default=None, help="Price per million output tokens.")
@click.option("--prices", "price_table", type=click.Path(exists=True, dir_okay=False), default=None,
              help='A JSON price table, per million tokens: {"model": {"input": 0.15, "output": 0.6}}.')
@click.option("--human", "human_qrels", default=None,
              help="Human qrels, imported into the store. Pairs humans judged (these, and any human label in the "
                   "store) are not sent to the model unless --judge-human-pairs.")
@click.option("--judge-human-pairs", is_flag=True,
              help="Judge pairs that humans judged too (needed to compare the judge with them: gainscope agreement).")
@click.option("--no-retry-failed", is_flag=True, help="Keep earlier failures instead of asking again.")
@click.option("--max-failures", default="0", show_default=True,
              help="Exit 4 when more pairs than this failed or had no text: a count, or a percentage like 2%.")
@guarded
def judge_cmd(queries: str, corpus: str, runs: tuple[str, ...], pairs: str | None, depth: int, base_url: str,
              model: str, api_key: str | None, azure_api_version: str | None, store_path: Path,
              output: Path | None, jsonl: Path | None, prompt: str, template: str | None, scale: str | None,
              temperature: float, max_tokens: int, seed: int | None, params: tuple[str, ...],
              omitted: tuple[str, ...], concurrency: int, rpm: float | None,
              tpm: float | None, timeout: float, max_attempts: int, answer_attempts: int, max_requests: int | None,
              max_cost: float | None, price_in: float | None, price_out: float | None, price_table: str | None,
              human_qrels: str | None,
              judge_human_pairs: bool, no_retry_failed: bool, max_failures: str) -> None:
    """Label (query, document) pairs with an LLM judge: the top --pool-depth documents of each --run, or --pairs.

    Labels already in the store for this judge (same model, prompt, parameters and texts) are reused without
    a request; a killed run resumes where it stopped. A failed label is reported and stored as failed, never as
    grade 0. Ends with a summary: judged, cached, failed, requests, tokens and cost.
    """
    from gainscope.io import read_judgments, read_run
    from gainscope.io.texts import read_documents, read_queries
    from gainscope.judges.labeling import Budget, Prices, label_pairs
    from gainscope.judges.pool import pool_runs, read_pairs
    from gainscope.judges.prompts import builtin_prompt, parse_scale, template_from_file
    from gainscope.judges.spec import JudgeSpec
    from gainscope.judges.store import JudgmentStore

    if bool(runs) == bool(pairs):
        raise click.UsageError("give the pairs to judge: --run RUN (repeatable, pooled to --pool-depth) or "
                               "--pairs FILE")
    if template is not None and scale is None:
        raise click.UsageError("--template needs --scale (for example --scale 0-3)")
    if (price_in is None) != (price_out is None):
        raise click.UsageError("give both --price-in and --price-out (per million tokens)")
    limit, relative = _threshold(max_failures)
    template_obj = template_from_file(template, parse_scale(scale or "")) if template else builtin_prompt(prompt)
    spec = JudgeSpec(model=model, prompt=template_obj, temperature=None if "temperature" in omitted else temperature,
                     max_tokens=None if "max_tokens" in omitted else max_tokens, seed=seed,
                     params=_params(params))
    todo = read_pairs(pairs) if pairs else pool_runs([read_run(r) for r in runs], depth)
    query_texts = read_queries(queries)
    doc_texts = read_documents(corpus, only={d for _, d in todo})
    if price_table is not None and price_in is not None:
        raise click.UsageError("give prices once: --prices TABLE or --price-in/--price-out")
    prices = Prices(price_in, price_out) if price_in is not None and price_out is not None else \
        Prices.from_table(price_table, model) if price_table is not None else None
    show = sys.stderr.isatty()

    def progress(p: Any) -> None:
        if show:
            click.echo(_bar(p), nl=False, err=True)

    with JudgmentStore(store_path) as store:
        if human_qrels is not None:
            j = read_judgments(human_qrels)
            f = j.frame
            store.import_human(zip(f["query_id"].to_list(), f["doc_id"].to_list(), f["grade"].to_list(),
                                   strict=True), assessor=Path(human_qrels).name)
        from gainscope.judges.client import ClientSettings

        settings = ClientSettings(base_url=base_url, api_key=api_key, concurrency=concurrency,
                                  requests_per_minute=rpm, tokens_per_minute=tpm, timeout=timeout,
                                  max_attempts=max_attempts, azure_api_version=azure_api_version)
        state, labels = asyncio.run(_label(
            settings, spec, prices, answer_attempts,
            functools.partial(label_pairs, todo, query_texts, doc_texts, store=store,
                              budget=Budget(max_requests, max_cost), workers=concurrency,
                              skip_human=not judge_human_pairs, retry_failed=not no_retry_failed,
                              progress=progress)))
        if show:
            click.echo("", err=True)
        if output is not None:
            _write_qrels(output, todo, labels)
        if jsonl is not None:
            _write_jsonl(jsonl, todo, labels, state.failures, spec)
    click.echo(_summary(state, spec, store_path, prices is not None, output))
    if state.total and state.human == state.total:
        click.echo("warning: every pair was judged by humans, so none was sent to the model"
                   f"{f' and {output} is empty' if output is not None else ''}; add --judge-human-pairs to judge "
                   "them too", err=True)
    bad = state.ungraded
    allowed = limit * state.total if relative else limit
    if state.fatal or bad > allowed:
        click.echo(f"error: {bad} of {state.total} pairs have no grade (failed {state.failed}, no text "
                   f"{state.missing_text}, not judged {state.not_judged + state.elsewhere}), more than "
                   f"--max-failures {max_failures} allows" if not state.fatal else
                   f"error: the run stopped: {state.fatal}", err=True)
        sys.exit(EXIT_IO)


async def _label(settings: Any, spec: Any, prices: Any, answer_attempts: int, run: Any) -> Any:
    """Open the client, make the judge, and run ``run(judge=...)`` (label_pairs with everything else bound)."""
    from gainscope.judges.client import ChatClient
    from gainscope.judges.labeling import LLMJudge

    async with ChatClient(settings) as client:
        return await run(judge=LLMJudge(spec, client, answer_attempts=answer_attempts, prices=prices))


def _write_qrels(path: Path, pairs: list[tuple[str, str]], labels: dict[tuple[str, str], Any]) -> None:
    from gainscope.io.writers import write_file

    write_file(path, "".join(f"{q} 0 {d} {labels[(q, d)].grade}\n" for q, d in pairs if (q, d) in labels))


def _write_jsonl(path: Path, pairs: list[tuple[str, str]], labels: dict[tuple[str, str], Any],
                 failures: list[Any], spec: Any) -> None:
    """Every label of the pairs as judged on the texts given now (failures included), in pair order."""
    failed = {(lb.key.query_id, lb.key.doc_id): lb for lb in failures}
    from gainscope.io.writers import write_file

    lines = []
    for pair in pairs:
        label = labels.get(pair) or failed.get(pair)
        if label is not None:
            lines.append(json.dumps({**label.to_json(), "prompt": spec.prompt.name,
                                     "prompt_version": spec.prompt.version}) + "\n")
    write_file(path, "".join(lines))


def _summary(p: Any, spec: Any, store_path: Path, priced: bool, output: Path | None) -> str:
    cost = f"{p.cost:.4f}" if priced else "not priced (--price-in/--price-out or --prices)"
    lines = [f"judge     {spec.describe()}",
             f"pairs     {p.total}: {p.judged} judged now, {p.cached} from the store, {p.human} judged by humans "
             f"(skipped), {p.failed} failed, {p.missing_text} without text, {p.not_judged} not judged (budget or "
             f"stop){f', {p.elsewhere} left to another process' if p.elsewhere else ''}",
             f"requests  {p.requests} calls to the model ({p.http_requests} HTTP requests with retries; "
             f"{p.prompt_tokens} prompt + {p.completion_tokens} completion tokens), cost {cost}, {p.elapsed:.1f} s",
             f"store     {store_path}"]
    if p.unpriced:
        lines.append(f"note      {p.unpriced} answers came without token usage; each is counted at its upper bound")
    if p.human:
        lines.append(f"note      the {p.human} pairs judged by humans were not sent to the model"
                     f"{f' and are not in {output}' if output is not None else ''}; to compare the judge with the "
                     "humans (gainscope agreement), judge them too: --judge-human-pairs")
    if p.budget_note:
        lines.append(f"budget    {p.budget_note}")
    if p.fatal:
        lines.append(f"stopped   {p.fatal}")
    for label in p.failures[:5]:
        lines.append(f"failed    {label.key.query_id} {label.key.doc_id}: {label.error}")
    if len(p.failures) > 5:
        lines.append(f"failed    ... and {len(p.failures) - 5} more (see --jsonl)")
    if p.missing:
        shown = ", ".join(f"{q}/{d}" for q, d in p.missing[:5])
        lines.append(f"no text   {shown}{' ...' if len(p.missing) > 5 else ''}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- the store
@click.group("store")
def store_group() -> None:
    """Look into a judgment store, export its labels, add human labels."""


@store_group.command("info")
@click.argument("store_path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@guarded
def store_info(store_path: Path) -> None:
    """Judges and label counts by status (the store is opened read-only: a read-only file or folder works)."""
    from gainscope.judges.store import JudgmentStore

    with JudgmentStore(store_path, readonly=True) as store:
        specs = store.judges()
        for judge, source, status, n in store.counts():
            what = specs.get(judge, {})
            about = f" ({what['model']}, prompt {what['prompt']['name']})" if what else ""
            click.echo(f"{judge}{about}  {source}  {status}  {n}")


@store_group.command("export")
@click.argument("store_path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--judge", "judge_hash", required=True, metavar="HASH",
              help="The stored judge whose labels to export: its hash (see `gainscope store info`), or human:NAME.")
@click.option("-f", "--format", "fmt", type=click.Choice(["qrels", "jsonl"]), default="qrels", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None)
@guarded
def store_export(store_path: Path, judge_hash: str, fmt: str, output: Path | None) -> None:
    """Export one judge's labels: qrels (successful labels only) or JSONL (all, with provenance). The store is
    opened read-only."""
    from gainscope.judges.store import JudgmentStore

    with JudgmentStore(store_path, readonly=True) as store:
        if judge_hash not in store.judges() and not judge_hash.startswith("human:"):
            known = ", ".join(store.judges()) or "none"
            raise click.BadParameter(f"no judge {judge_hash!r} in {store_path}; judges: {known}", param_hint="--judge")
        if fmt == "qrels":  # the latest grade of each pair (a label of an older text of the same ids is left out)
            text = "".join(f"{lb.key.query_id} 0 {lb.key.doc_id} {lb.grade}\n"
                           for lb in store.latest_labels(judge_hash, status="ok"))
        else:
            text = "".join(json.dumps(lb.to_json()) + "\n" for lb in store.labels(judge_hash))
    emit(text, output)


@store_group.command("import")
@click.argument("store_path", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("qrels")
@click.option("--assessor", default=None, help="Name of the assessor (default: the file name).")
@guarded
def store_import(store_path: Path, qrels: str, assessor: str | None) -> None:
    """Add human labels from QRELS (stored under the judge human:<assessor>)."""
    from gainscope.io import read_judgments
    from gainscope.judges.store import JudgmentStore

    j = read_judgments(qrels)
    f = j.frame
    with JudgmentStore(store_path) as store:
        n = store.import_human(zip(f["query_id"].to_list(), f["doc_id"].to_list(), f["grade"].to_list(), strict=True),
                               assessor=assessor or Path(qrels).name)
    click.echo(f"{n} human labels stored in {store_path}")
