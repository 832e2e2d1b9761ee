"""``gainscope explain JUDGMENTS RUN --query ID -m METRIC``: a metric's value position by position."""

from __future__ import annotations

import json
from typing import Any

import click

from gainscope.cli.common import (
    conventions_from,
    guarded,
    policy_options,
    profile_option,
    read_inputs,
    reader_options,
    split_metrics,
)


@click.command("explain")
@click.argument("judgments")
@click.argument("run")
@click.option("--query", "query_id", required=True, help="The query to explain.")
@click.option("-m", "--metric", "metrics", multiple=True, required=True,
              help="Metric(s) to explain, e.g. nDCG@5 or 'nDCG(gain=exponential, ideal=retrieved)@3'.")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True)
@profile_option
@policy_options
@reader_options
@guarded
def explain_cmd(judgments: str, run: str, query_id: str, metrics: tuple[str, ...], fmt: str, **kwargs: Any) -> None:
    """Explain METRIC for one query: rank, doc id, grade, gain, discount, contribution and running total,
    for the run and the ideal ranking, then the division that gives the value. Metrics without a
    position-by-position form show the value and the inputs it used."""
    from gainscope.explain import explain, explanation_frame
    from gainscope.metrics.trec_eval import is_trec_name
    from gainscope.render.explain import render_explanation
    from gainscope.render.text import csv_text

    conventions = conventions_from(kwargs)
    judg, (run_obj,) = read_inputs(judgments, (run,), kwargs)
    parts = []
    for name in split_metrics(metrics):
        # a trec_eval name is resolved here, with --trec-eval-version's recall-level rounding (taken as it is
        # under a profile); one naming several metrics goes as it is, for explain's own refusal
        found = conventions.resolve([name]) if is_trec_name(name) else []
        target = found[0] if len(found) == 1 else name
        e = explain(judg, run_obj, query_id, target, profile=conventions.profile, **conventions.given)
        if fmt == "table":
            parts.append(render_explanation(e, "cli"))
        elif fmt == "csv":
            frame = explanation_frame(e)
            parts.append(csv_text([frame.columns, *frame.iter_rows()]))
        else:
            frame = explanation_frame(e)
            parts.append(json.dumps({"metric": e.metric, "query_id": e.query_id, "value": e.value,
                                     "numerator": e.numerator, "denominator": e.denominator,
                                     "formula": e.formula, "notes": list(e.spelled_notes("cli")),
                                     "steps": frame.to_dicts()}, indent=2) + "\n")
    click.echo("\n".join(parts), nl=False)
