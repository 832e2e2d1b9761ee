"""``gainscope case run``: run a case's queries against its engine (or --engine) into a snapshot and write the
case with the fresh results (see :mod:`gainscope.cases.live`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from gainscope.cli.common import EXIT_IO, guarded
from gainscope.cli.search import parse_assignments, progress_printer, report_outcome, run_settings, sending_options

__all__ = ["run_cmd"]


@click.command("run")
@click.argument("case_file", metavar="CASE", type=click.Path(exists=True, dir_okay=False))
@click.option("--engine", "engine_spec", default=None,
              help="The engine (FILE.toml:NAME, an index folder, module:function); default: the case's engine.")
@click.option("--set", "assignments", multiple=True, metavar="KNOB=VALUE",
              help="Override a knob, on top of the case's try (repeatable).")
@sending_options
@click.option("--snapshot", "store_path", type=click.Path(dir_okay=False), default=None,
              help="Record the snapshot in this SQLite file (default: kept in memory only).")
@click.option("--name", default=None, help="The snapshot's name (default: CASE/ENGINE@HASH8).")
@click.option("--note", default=None, help="A note kept with a new snapshot.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the refreshed case here (.json, or .yaml with PyYAML); default: standard output.")
@guarded
def run_cmd(case_file: str, engine_spec: str | None, assignments: tuple[str, ...], store_path: str | None,
            name: str | None, note: str | None, output: Path | None, **kwargs: Any) -> None:
    """Send every query of CASE (text and options) to the engine with the case's try (knobs, template), record a
    snapshot, and write the case with the results and totals the engine returned (ratings kept). The case is
    written only when every query was answered."""
    import asyncio
    import difflib

    from gainscope.cases.files import read_case, write_case
    from gainscope.cases.live import case_engine, refreshed_case
    from gainscope.search.queries import queries_from_case
    from gainscope.search.runner import run_queries
    from gainscope.search.store import SnapshotStore

    settings = run_settings(kwargs)
    case = read_case(case_file)
    engine, knobs = case_engine(case, engine_spec)
    for knob in (overrides := parse_assignments(assignments)):
        if knob not in engine.knobs:
            close = difflib.get_close_matches(knob, list(engine.knobs), n=1)
            raise click.BadParameter(f"engine {engine.name!r} has no knob {knob!r}"
                                     + (f"; did you mean {close[0]}?" if close else ""), param_hint="--set")
    queries = queries_from_case(case)
    with SnapshotStore.open(store_path or ":memory:") as store:
        outcome = asyncio.run(run_queries(engine, queries, store, knobs={**knobs, **overrides}, name=name, note=note,
                                          source=case_file, settings=settings, progress=progress_printer(engine.name),
                                          label=f"{Path(case_file).stem}/{engine.name}"))
    for line in report_outcome(outcome, store_path, f"case {Path(case_file).name}, engine {engine.name!r}"):
        click.echo(line, err=True)
    if not outcome.complete:
        click.echo("error: the case is not written: every query needs an answer (what was recorded stays)", err=True)
        sys.exit(EXIT_IO)
    text = write_case(refreshed_case(case, outcome.results), output)
    if output is None:
        click.echo(text, nl=False)
