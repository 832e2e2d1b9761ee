"""``gainscope search``: send queries to an engine, record a snapshot, write a TREC run; or replay a snapshot.

The options shared with ``experiment`` and ``case run`` (the engine, knobs, throttling) are defined here
(:func:`engine_options`, :func:`sending_options`) and read with :func:`open_engine` and :func:`run_settings`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from gainscope.cli.common import EXIT_IO, Number, guarded, with_options

__all__ = ["engine_options", "open_engine", "parse_assignments", "progress_printer", "report_outcome",
           "run_settings", "search_cmd", "sending_options"]


def engine_options(fn: Any) -> Any:
    """``--engine`` and ``--set``."""
    options = [
        click.option("--engine", "engine_spec", default=None,
                     help="FILE.toml:NAME (an engine declared in TOML), an index folder (gainscope index), or "
                          "module:function (a Python engine)."),
        click.option("--set", "assignments", multiple=True, metavar="KNOB=VALUE",
                     help="Override a knob of the engine (repeatable), e.g. --set title_boost=3 --set k1=0.9."),
    ]
    return with_options(fn, options)


def sending_options(fn: Any) -> Any:
    """Depth, throttling, retries."""
    options = [
        click.option("--top", type=click.IntRange(min=1), default=100, show_default=True,
                     help="Results asked for per query."),
        click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True,
                     help="Requests in flight at most."),
        click.option("--qps", type=Number(min=0, min_open=True), default=None,
                     help="Requests per second at most (retries included)."),
        click.option("--max-attempts", type=click.IntRange(min=1), default=5, show_default=True,
                     help="Attempts per query on 429, 5xx, timeouts and dropped connections (backoff with jitter, "
                          "Retry-After honoured)."),
        click.option("--max-consecutive-failures", type=click.IntRange(min=1), default=10, show_default=True,
                     help="Stop the run after this many queries in a row failed (an engine that is down)."),
        click.option("--rerun-failed", is_flag=True,
                     help="Send again the queries recorded as failed in the snapshot."),
    ]
    return with_options(fn, options)


def parse_assignments(items: tuple[str, ...], option: str = "--set") -> dict[str, Any]:
    """``KNOB=VALUE`` items as a dict (values read as JSON numbers/booleans when they are, else text)."""
    from gainscope.search.templates import parse_value

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KNOB=VALUE; got {item!r}", param_hint=option)
        out[key.strip()] = parse_value(value)
    return out


def open_engine(spec: str | None, assignments: tuple[str, ...]) -> tuple[Any, dict[str, Any]]:
    """The engine ``--engine`` names and the ``--set`` overrides, checked against its knobs."""
    import difflib

    from gainscope.search.config import load_engine

    if spec is None:
        raise click.UsageError("give the engine: --engine FILE.toml:NAME, an index folder, or module:function")
    if ":" in spec and not spec.lower().rpartition(":")[0].endswith(".toml") and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # module:function from the current folder, as `python -m` would
    engine = load_engine(spec)
    overrides = parse_assignments(assignments)
    for name in overrides:
        if name not in engine.knobs:
            close = difflib.get_close_matches(name, list(engine.knobs), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise click.BadParameter(f"engine {engine.name!r} has no knob {name!r}{hint} (its knobs: "
                                     f"{', '.join(engine.knobs) or 'none'})", param_hint="--set")
    return engine, overrides


def run_settings(kwargs: dict[str, Any]) -> Any:
    """The :class:`~gainscope.search.runner.RunSettings` of the sending options popped from ``kwargs``."""
    from gainscope.search.engine import RetryPolicy
    from gainscope.search.runner import RunSettings

    return RunSettings(top=kwargs.pop("top"), concurrency=kwargs.pop("concurrency"), qps=kwargs.pop("qps"),
                       retry=RetryPolicy(max_attempts=kwargs.pop("max_attempts")),
                       max_consecutive_failures=kwargs.pop("max_consecutive_failures"),
                       rerun_failed=kwargs.pop("rerun_failed"))


def progress_printer(label: str) -> Any:
    """A progress callback drawing a one-line bar on standard error when it is a terminal (else nothing)."""
    if not sys.stderr.isatty():
        return None

    def show(p: Any) -> None:
        width = 24
        share = p.done / p.total if p.total else 1.0
        rate = p.rate
        left = (p.total - p.done) / rate if rate > 0 else 0.0
        click.echo(f"\r{label} [{'#' * int(share * width):<{width}}] {p.done}/{p.total} · {rate:.1f} q/s · "
                   f"failed {p.failed} · {int(left // 60)}m{int(left % 60):02d}s left ", nl=False, err=True)
        if p.done == p.total:
            click.echo("", err=True)

    return show


def report_outcome(outcome: Any, store_path: str | None, what: str) -> list[str]:
    """Lines for standard error about a run: sent, reused, failed, stopped."""
    from gainscope.errors import format_ids

    snap = outcome.snapshot
    where = f"snapshot {snap.name!r}" + (f" in {store_path}" if store_path else "")
    latencies = sorted(r.latency for r in outcome.results if r.ok and r.latency is not None)
    lines = [f"{what}: {len(outcome.results)} queries recorded in {where}: {outcome.sent} sent now "
             f"({outcome.requests} requests), {outcome.reused} recorded before"
             + (f"; latency median {1000 * latencies[len(latencies) // 2]:.1f} ms" if latencies else "")]
    failed = outcome.failed
    if failed:
        lines.append(f"error: {len(failed)} quer{'y' if len(failed) == 1 else 'ies'} failed (recorded as failed, "
                     f"not as empty results): " + "; ".join(f"{r.query_id}: {r.error}" for r in failed[:3])
                     + (f"; ... ({len(failed) - 3} more)" if len(failed) > 3 else "")
                     + ". Fix the cause, then send them again with --rerun-failed")
    if outcome.stopped is not None:
        unsent = list(outcome.unsent)
        lines.append(f"error: the run stopped: {outcome.stopped}. {len(unsent)} quer"
                     f"{'y was' if len(unsent) == 1 else 'ies were'} not sent ({format_ids(unsent)}); what was "
                     "recorded stays: run the same command again to resume")
    elif outcome.unsent:
        lines.append(f"error: {len(outcome.unsent)} queries were not sent ({format_ids(list(outcome.unsent))})")
    return lines


def _write_run(run: Any, output: Path | None, tag: str) -> None:
    from gainscope.io.writers import write_run

    if output is not None:
        write_run(run, output, tag=tag)
        return
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.trec"
        write_run(run, path, tag=tag)
        click.echo(path.read_text(encoding="utf-8"), nl=False)


@click.command("search")
@engine_options
@click.option("--queries", "queries_file", type=click.Path(exists=True), default=None,
              help="Queries: JSONL (id and text, optional options), TSV id<TAB>text, or a case file.")
@sending_options
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the run here (TREC; .jsonl, .csv, .parquet by extension); default: standard output.")
@click.option("--snapshot", "store_path", type=click.Path(dir_okay=False), default=None,
              help="Record the snapshot in this SQLite file (resumed when it already holds it).")
@click.option("--name", default=None, help="The snapshot's name (default: ENGINE@HASH8 of the configuration).")
@click.option("--note", default=None, help="A note kept with a new snapshot.")
@click.option("--replay", "replay_path", type=click.Path(dir_okay=False), default=None,
              help="Rebuild the run from a snapshot store, sending nothing (--name or --engine picks the snapshot).")
@click.option("--scores", type=click.Choice(["auto", "engine"]), default="auto", show_default=True,
              help="auto: the engine's scores when they strictly decrease in every query, else n - rank + 1 so "
                   "that trec_eval keeps the engine's order; engine: always the engine's scores.")
@guarded
def search_cmd(engine_spec: str | None, assignments: tuple[str, ...], queries_file: str | None, output: Path | None,
               store_path: str | None, name: str | None, note: str | None, replay_path: str | None, scores: str,
               **kwargs: Any) -> None:
    """Send every query to the engine and write the ranked results as a run, recording request, raw response,
    hits, total and latency of each query in a snapshot (resumable: a rerun sends only what is not recorded).
    With --replay, rebuild the run from a snapshot without sending anything."""
    import asyncio

    from gainscope.search.runner import results_to_run, run_queries, run_tag
    from gainscope.search.store import SnapshotStore

    if replay_path is not None:
        _replay(replay_path, name, engine_spec, assignments, output, scores)
        return
    if queries_file is None:
        raise click.UsageError("give the queries: --queries FILE (or --replay STORE to rebuild a run)")
    settings = run_settings(kwargs)
    engine, overrides = open_engine(engine_spec, assignments)
    from gainscope.search.queries import read_search_queries

    queries = read_search_queries(queries_file)
    with SnapshotStore.open(store_path or ":memory:") as store:
        outcome = asyncio.run(run_queries(engine, queries, store, knobs=overrides, name=name, note=note,
                                          source=str(queries_file), settings=settings,
                                          progress=progress_printer(engine.name)))
    tag = run_tag(engine.name, outcome.snapshot.knobs)
    run, notes = results_to_run(outcome.results, name=tag, scores=scores)
    _write_run(run, output, tag)
    for note_text in notes:
        click.echo(f"note: {note_text}", err=True)
    lines = report_outcome(outcome, store_path, f"engine {engine.name!r}")
    for line in lines:
        click.echo(line, err=True)
    if not outcome.complete:
        sys.exit(EXIT_IO)


def _replay(path: str, name: str | None, engine_spec: str | None, assignments: tuple[str, ...],
            output: Path | None, scores: str) -> None:
    from gainscope.errors import InputError
    from gainscope.search.engine import resolve_knobs
    from gainscope.search.runner import replay, results_to_run, run_tag
    from gainscope.search.store import SnapshotStore

    with SnapshotStore.open(path, readonly=True) as store:
        if name is None:
            snapshots = store.snapshots()
            if engine_spec is not None:
                engine, overrides = open_engine(engine_spec, assignments)
                knobs = resolve_knobs(engine.name, engine.knobs, overrides)
                snapshots = [s for s in snapshots if s.engine == engine.name and s.knobs == knobs]
            if len(snapshots) != 1:
                which = "of that engine and knobs " if engine_spec is not None else ""
                listed = ", ".join(s.name for s in snapshots) or "none"
                raise InputError(f"{path} holds {len(snapshots)} snapshots {which}({listed}); pick one with --name")
            name = snapshots[0].name
        snapshot, results = replay(store, name)
    tag = run_tag(snapshot.engine, snapshot.knobs)
    run, notes = results_to_run(results, name=tag, scores=scores)
    _write_run(run, output, tag)
    for note_text in notes:
        click.echo(f"note: {note_text}", err=True)
    failed = [r for r in results if not r.ok]
    click.echo(f"replayed snapshot {snapshot.name!r} from {path}: {len(results)} queries, no request sent", err=True)
    if failed:
        click.echo(f"error: {len(failed)} quer{'y' if len(failed) == 1 else 'ies'} of the snapshot failed and are "
                   f"not in the run: {', '.join(r.query_id for r in failed[:5])}", err=True)
        sys.exit(EXIT_IO)
