"""``gainscope evaluate JUDGMENTS RUN... -m METRIC ...``: score runs, as a table, markdown, CSV, JSON, JSONL
or exactly trec_eval's text (``--format trec_eval``, with trec_eval's flags -q -c -l -M -J -N -m; with
several runs a fourth column names each line's run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gainscope.cli.common import (
    backend_options,
    bounds_of_files,
    check_names,
    conventions_from,
    emit,
    guarded,
    one_stdin,
    policy_options,
    profile_option,
    read_judgments_and_run_options,
    reader_options,
    spark_evaluations,
    split_metrics,
)
from gainscope.errors import spell

DEFAULT_METRICS = ("nDCG@10", "AP", "RR", "P@10", "R@100")


@click.command("evaluate")
@click.argument("judgments")
@click.argument("runs", nargs=-1, required=True)
@click.option("-m", "--metric", "metrics", multiple=True,
              help="Metric(s): nDCG@10, 'P(rel=2)@5', AP, RR@10 ... or trec_eval names (ndcg_cut.10, P.5, map, "
                   "official, all_trec) and pytrec_eval's keys (ndcg_cut_10, P_5). Repeat -m or separate with "
                   "spaces or commas (-m nDCG@10,AP). Default: nDCG@10 AP RR P@10 R@100 "
                   "(official with --format trec_eval).")
@click.option("-q", "--per-query", is_flag=True, help="Show each query's values as well as the aggregates.")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "markdown", "csv", "json", "jsonl", "trec_eval"]),
              default="table", show_default=True,
              help="Output format. trec_eval: trec_eval's exact text; with several runs a fourth column names each "
                   "line's run. csv: run, query_id, metric, value, aggregate (set on the aggregate rows).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of standard output.")
@click.option("--name", "run_names", multiple=True,
              help="Name the runs, one --name per run in order (default: each run's tag).")
@click.option("--bounds", is_flag=True,
              help="Also each metric with the unjudged retrieved documents within its depth taken as relevant at the "
                   "top grade, the judged share beside it, and whether the two values bound every labelling "
                   "(gainscope.bounds). Formats: table, markdown, csv, json.")
@click.option("-N", "--num-docs", type=click.IntRange(min=0), default=0,
              help="Documents in the collection, for utility's last term (trec_eval -N).")
@profile_option
@policy_options
@reader_options
@backend_options
@guarded
def evaluate_cmd(judgments: str, runs: tuple[str, ...], metrics: tuple[str, ...], per_query: bool, fmt: str,
                 output: Path | None, run_names: tuple[str, ...], bounds: bool, num_docs: int,
                 **kwargs: Any) -> None:
    """Evaluate RUN(s) against JUDGMENTS.

    Conventions default to trec_eval's (ties by doc id descending, missing queries score 0 as with -c,
    linear gain, ideal from all judgments) and are printed with the results; --profile sets another tool's.
    """
    from gainscope.evaluation import evaluate_prepared
    from gainscope.metrics.trec_eval import (
        TrecItem,
        is_trec_name,
        relstrings,
        trec_eval_overrides,
        trec_items,
        trec_name_of,
    )
    from gainscope.render.results import conventions_lines, render_results
    from gainscope.render.trec_eval import render_trec_eval

    complete = kwargs["complete"]  # trec_eval's -c as given: its num_rel summary depends on it
    conventions = conventions_from(kwargs)
    policies = conventions.policies
    names = split_metrics(metrics) or (["official"] if fmt == "trec_eval" else list(DEFAULT_METRICS))
    items: list[TrecItem] = []
    trec_specs = [n for n in names if is_trec_name(n)]
    if trec_specs:
        items = trec_items(trec_specs, rounding=conventions.trec_rounding, num_docs=num_docs)
    others = conventions.resolve([n for n in names if not is_trec_name(n)]) if len(trec_specs) < len(names) else []
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
    if bounds:
        emit(_with_bounds(judgments, runs, mets, kwargs, conventions, fmt, per_query, run_names), output)
        return
    one_stdin(judgments, *runs)
    check_names(run_names, runs)
    rel_item = next((it for it in items if it.family == "relstring"), None)
    chunks = []
    on_spark = spark_evaluations(judgments, runs, mets, conventions, kwargs, names=run_names,
                                 relstring=int(rel_item.param) if rel_item is not None and per_query else None,
                                 trec_eval=(items, complete) if fmt == "trec_eval" else None)
    if on_spark is not None:
        all_results = []
        for ev in on_spark:
            all_results.append(ev.results)
            if fmt == "trec_eval":
                rs = ev.results.extras.get("relstring") if rel_item is not None and per_query else None
                chunks.append((ev.results, rs, ev.trec_overrides))
    else:
        judg, run_options = read_judgments_and_run_options(judgments, kwargs)

        def trec_eval_parts(jr: Any, res: Any) -> None:  # what trec_eval's text takes from each judged run
            if fmt == "trec_eval":
                rs = relstrings(jr, rel_item.param) if rel_item is not None and per_query else None
                chunks.append((res, rs, trec_eval_overrides(items, jr, complete=complete)))

        all_results = evaluate_prepared(judg, runs, mets, policies, profile=conventions.use, names=run_names,
                                        each=trec_eval_parts, **run_options)
    if fmt == "trec_eval":
        # several runs: a fourth column with the run's name (its path when two runs share a name)
        labels: list[str | None] = [None] * len(runs)
        if len(runs) > 1:
            names = [r.run_name for r in all_results]
            labels = list(names) if len(set(names)) == len(names) else list(runs)
        text = "".join(render_trec_eval(items, res, per_query=per_query, relstrings=rs, overrides=ov, run=label)
                       for (res, rs, ov), label in zip(chunks, labels, strict=True))
        for line in conventions_lines(all_results):
            click.echo(f"# {spell(line, 'cli')}", err=True)
    else:
        text = render_results(all_results, fmt, per_query=per_query)
        if fmt in ("csv", "jsonl"):
            for line in conventions_lines(all_results):
                click.echo(f"# {spell(line, 'cli')}", err=True)
    emit(text, output)


def _with_bounds(judgments: str, runs: tuple[str, ...], mets: list[Any], kwargs: dict[str, Any], conventions: Any,
                 fmt: str, per_query: bool, names: tuple[str, ...]) -> str:
    """``--bounds``: the results and what the unjudged documents could change (see :mod:`gainscope.bounds`)."""
    from gainscope.render.bounds import BOUNDS_FORMATS, render_results_with_bounds
    from gainscope.render.results import conventions_lines

    if fmt not in BOUNDS_FORMATS:
        raise click.UsageError(f"--bounds adds to the {', '.join(BOUNDS_FORMATS)} formats; not --format {fmt}")
    found = bounds_of_files(judgments, runs, mets, kwargs, names=names, conventions=conventions)
    if fmt == "csv":
        for line in conventions_lines([b.results for b in found]):
            click.echo(f"# {spell(line, 'cli')}", err=True)
    return render_results_with_bounds(found, fmt, per_query=per_query)
