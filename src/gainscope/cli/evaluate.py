"""``gainscope evaluate JUDGMENTS RUN... -m METRIC ...``: score runs, as a table, markdown, CSV, JSON, JSONL
or exactly trec_eval's text (``--format trec_eval``, with trec_eval's flags -q -c -l -M -J -N -m)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gainscope.cli.common import (
    backend_options,
    emit,
    guarded,
    policies_from,
    policy_options,
    read_judgments_and_run_options,
    reader_options,
    spark_evaluations,
    split_metrics,
)

DEFAULT_METRICS = ("nDCG@10", "AP", "RR", "P@10", "R@100")


@click.command("evaluate")
@click.argument("judgments")
@click.argument("runs", nargs=-1, required=True)
@click.option("-m", "--metric", "metrics", multiple=True,
              help="Metric(s): nDCG@10, 'P(rel=2)@5', AP, RR@10 ... or trec_eval names (ndcg_cut.10, P.5, map, "
                   "official, all_trec). Repeat -m or separate with spaces. Default: nDCG@10 AP RR P@10 R@100 "
                   "(official with --format trec_eval).")
@click.option("-q", "--per-query", is_flag=True, help="Show each query's values as well as the aggregates.")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "markdown", "csv", "json", "jsonl", "trec_eval"]),
              default="table", show_default=True, help="Output format.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of standard output.")
@click.option("-N", "--num-docs", type=click.IntRange(min=0), default=0,
              help="Documents in the collection, for utility's last term (trec_eval -N).")
@click.option("--trec-eval-version", type=click.Choice(["10", "9"]), default="10", show_default=True,
              help="Recall-level rounding of iprec_at_recall and 11pt_avg: trec_eval 10 (nearest) or 9 and "
                   "pytrec_eval (legacy).")
@policy_options
@reader_options
@backend_options
@guarded
def evaluate_cmd(judgments: str, runs: tuple[str, ...], metrics: tuple[str, ...], per_query: bool, fmt: str,
                 output: Path | None, num_docs: int, trec_eval_version: str, **kwargs: Any) -> None:
    """Evaluate RUN(s) against JUDGMENTS.

    Conventions default to trec_eval's (ties by doc id descending, missing queries score 0 as with -c,
    linear gain, ideal from all judgments) and are printed with the results.
    """
    from gainscope.core.judged_run import PreparedJudgments
    from gainscope.core.policies import Policies
    from gainscope.evaluation import compute, resolve_metrics
    from gainscope.metrics.trec_eval import TrecItem, is_trec_name, relstrings, trec_items, trec_name_of
    from gainscope.render.results import conventions_lines, render_results
    from gainscope.render.trec_eval import render_trec_eval

    policies = Policies.from_kwargs(**policies_from(kwargs))
    names = split_metrics(metrics) or (["official"] if fmt == "trec_eval" else list(DEFAULT_METRICS))
    rounding = "legacy" if trec_eval_version == "9" else "nearest"
    items: list[TrecItem] = []
    trec_specs = [n for n in names if is_trec_name(n)]
    if trec_specs:
        items = trec_items(trec_specs, rounding=rounding, num_docs=num_docs)
    others = resolve_metrics([n for n in names if not is_trec_name(n)]) if len(trec_specs) < len(names) else []
    for m in others:
        items.append(TrecItem("gainscope", trec_name_of(m) or str(m), m))
    mets = []
    seen: set[str] = set()
    for it in items:
        if it.metric is not None and str(it.metric) not in seen:
            seen.add(str(it.metric))
            mets.append(it.metric)
    for m in mets:
        m.check_policies(policies)
    from gainscope.io.scan import judged_run_of

    rel_item = next((it for it in items if it.family == "relstring"), None)
    relstring = int(rel_item.param) if rel_item is not None and per_query and fmt == "trec_eval" else None
    all_results = []
    chunks = []
    on_spark = spark_evaluations(judgments, runs, mets, policies, kwargs, relstring=relstring)
    if on_spark is not None:
        for ev in on_spark:
            all_results.append(ev.results)
            if fmt == "trec_eval":
                rs = ev.results.extras.get("relstring") if relstring is not None else None
                chunks.append(render_trec_eval(items, ev.results, per_query=per_query, relstrings=rs))
    else:
        judg, run_options = read_judgments_and_run_options(judgments, kwargs)
        prepared = PreparedJudgments.of(judg, policies.negative_grades)  # once for all runs
        for run in runs:
            jr, run_notes = judged_run_of(prepared, run, policies, **run_options)
            res = compute(jr, mets, notes=tuple(judg.notes) + run_notes)
            all_results.append(res)
            if fmt == "trec_eval":
                rs = relstrings(jr, rel_item.param) if rel_item is not None and per_query else None
                chunks.append(render_trec_eval(items, res, per_query=per_query, relstrings=rs))
    if fmt == "trec_eval":
        text = "".join(chunks)
        for line in conventions_lines(all_results):
            click.echo(f"# {line}", err=True)
    else:
        text = render_results(all_results, fmt, per_query=per_query)
        if fmt in ("csv", "jsonl"):
            for line in conventions_lines(all_results):
                click.echo(f"# {line}", err=True)
    emit(text, output)
