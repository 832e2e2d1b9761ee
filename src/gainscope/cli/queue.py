"""``gainscope queue add|list|export``: the dashboard's rating queues from the command line -- a pairs file
(``gainscope pool ... -o pairs.txt``, or qrels or run lines) into a case of a workspace, their progress, and their
ratings as TREC qrels (see :mod:`gainscope.server.queues`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gainscope.cli.common import database_option, emit, guarded

__all__ = ["queue_group"]

_DATABASE = database_option()


def _open(workspace: Path, database: str | None) -> Any:
    from gainscope.server.workspace import Workspace

    return Workspace.open(workspace, database=database, create=False)


def _case(ws: Any, case_id: str) -> None:
    """The case ``--case`` names exists (a usage error naming the workspace's cases otherwise)."""
    from gainscope.errors import NotFoundError

    try:
        ws.store.case(case_id)
    except NotFoundError as exc:
        raise click.BadParameter(str(exc), param_hint="--case") from None


def add_queue_and_say(ws: Any, case_id: str, pairs: str, name: str | None, url: str = "") -> Any:
    """Add the queue (or find it, when the same pairs are there already) and say so on standard error: what it holds
    and where to rate it. Returns its record. (``gainscope serve --queue`` does the same.)"""
    from gainscope.server.queues import add_queue, queue_summary

    _case(ws, case_id)
    record, created = add_queue(ws, case_id, pairs, name=name)
    s = queue_summary(ws, record)
    what = "added" if created else "resumed (it holds these pairs already)"
    click.echo(f"queue {record.id!r} of case {case_id!r} {what}: {s['total']} pairs, {s['rated']} rated, "
               f"{s['remaining']} remaining; rate them at {url}/cases/{case_id}/queues/{record.id}", err=True)
    return record


@click.group("queue")
def queue_group() -> None:
    """Rating queues of the dashboard: pairs to rate one at a time, in the order gainscope pool chose them."""


@queue_group.command("add")
@click.argument("workspace", type=click.Path(file_okay=False, path_type=Path))
@click.argument("pairs")
@click.option("--case", "case_id", required=True, help="The workspace's case the pairs are rated in (its id).")
@click.option("--name", default=None, help="The queue's name (default: the file's name without its extension).")
@_DATABASE
@guarded
def queue_add(workspace: Path, pairs: str, case_id: str, name: str | None, database: str | None) -> None:
    """Add the pairs of PAIRS to the dashboard WORKSPACE as a rating queue of --case, in the file's order, and print
    its id. PAIRS is what gainscope pool -o writes ('query_id doc_id' lines), or a qrels or run file; its query ids
    are the case's TREC ids, as the case's qrels and run exports write them. The same pairs under the same name
    again are the same queue (it resumes)."""
    with _open(workspace, database) as ws:
        record = add_queue_and_say(ws, case_id, pairs, name)
    click.echo(record.id)


@queue_group.command("list")
@click.argument("workspace", type=click.Path(file_okay=False, path_type=Path))
@click.option("--case", "case_id", default=None, help="Only the queues of this case.")
@_DATABASE
@guarded
def queue_list(workspace: Path, case_id: str | None, database: str | None) -> None:
    """The rating queues of WORKSPACE: id, case, ratings given (rated of total), skipped, remaining, name."""
    from gainscope.server.queues import queue_summary

    with _open(workspace, database) as ws:
        if case_id is not None:
            _case(ws, case_id)
        rows = [queue_summary(ws, q) for q in ws.store.queues.queues(case_id)]
    if not rows:
        click.echo("no queue" + (f" in case {case_id}" if case_id else "") + "; add one with gainscope queue add "
                   "WORKSPACE PAIRS --case CASE", err=True)
        return
    table = [("queue", "case", "rated", "skipped", "remaining", "name")] + [
        (r["id"], r["case"], f"{r['rated']}/{r['total']}", str(r["skipped"]), str(r["remaining"]), r["name"])
        for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]) - 1)]
    for row in table:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1])


@queue_group.command("export")
@click.argument("workspace", type=click.Path(file_okay=False, path_type=Path))
@click.argument("queue_id", metavar="QUEUE")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the qrels here instead of standard output.")
@_DATABASE
@guarded
def queue_export(workspace: Path, queue_id: str, output: Path | None, database: str | None) -> None:
    """The ratings of the queue QUEUE as TREC qrels (QID 0 DOC GRADE, the case's TREC query ids, a query's lines
    together, in the queue's order): for gainscope evaluate, or gainscope judge --human (the judge then leaves those
    pairs to people)."""
    from gainscope.errors import NotFoundError
    from gainscope.server.queues import export_qrels, queue_summary

    with _open(workspace, database) as ws:
        try:
            record = ws.store.queues.queue(queue_id)
        except NotFoundError as exc:
            raise click.BadParameter(str(exc), param_hint="QUEUE") from None
        text = export_qrels(ws, queue_id)
        s = queue_summary(ws, record)
    emit(text, output)
    click.echo(f"{s['rated']} of {s['total']} pairs of queue {queue_id!r} rated"
               + (f"; written to {output}" if output is not None else ""), err=True)
