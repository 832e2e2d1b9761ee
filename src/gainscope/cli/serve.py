"""``gainscope serve``: the relevancy dashboard over a workspace folder, and ``gainscope case add``: a case into a
workspace from the command line (see :mod:`gainscope.server`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from gainscope.cli.common import EXIT_IO, EXIT_USAGE, database_option, guarded, rating_scale

__all__ = ["case_add_cmd", "serve_cmd"]


def _serve_extra() -> None:
    from gainscope.errors import MissingDependencyError

    try:
        import jinja2  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(f"gainscope serve needs {exc.name}: pip install 'gainscope[serve]'") from None


def _checked_token(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--token as the workspace takes it (a usage error otherwise, before anything is created)."""
    from gainscope.server.workspace import token_problem

    problem = token_problem(value)
    if problem is not None:
        raise click.BadParameter(problem)
    return value


@click.command("serve")
@click.argument("workspace", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Another address than 127.0.0.1 needs --token (everybody who can reach it "
                   "needs the token to read or write).")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8765, show_default=True,
              help="Port to listen on (0: any free port; the URL printed says which).")
@click.option("--token", default=None, callback=_checked_token,
              help="The workspace token that every write needs (header X-Gainscope-Token). Default: the one stored in "
                   "the workspace, else a new one (stored in WORKSPACE/token).")
@database_option("Keep the workspace in PostgreSQL (postgresql://user@host:5432/name; pip install "
                 "'gainscope[postgres]') instead of WORKSPACE/workspace.sqlite.")
@click.option("--allow-code", is_flag=True,
              help="On a server bound to another address than 127.0.0.1, run code given through the dashboard: "
                   "Python scorers, Python engines (module:function) and try overrides that read the server's "
                   "environment ({{env.NAME}}). On 127.0.0.1 they always run (they are yours); JavaScript scorers are "
                   "sandboxed everywhere.")
@click.option("--queue", "queue_file", default=None, metavar="PAIRS",
              help="Before serving, add PAIRS (gainscope pool -o writes it) as a rating queue of --case, or resume "
                   "it when the same pairs are there (as gainscope queue add).")
@click.option("--case", "case_id", default=None, help="The case --queue rates in (its id).")
@guarded
def serve_cmd(workspace: Path, host: str, port: int, token: str | None, database: str | None,
              allow_code: bool, queue_file: str | None, case_id: str | None) -> None:
    """Serve the relevancy dashboard over WORKSPACE (a folder; created when missing): cases with live results,
    rating with the keyboard, several scorers at once, rating queues, snapshots, history, scorers and LLM judges, and
    the JSON API under /api. Prints the URL to open (with the token) on its first line, then serves until
    interrupted."""
    if (queue_file is None) != (case_id is None):
        raise click.UsageError("--queue PAIRS and --case CASE go together: the pairs are rated in that case")
    _serve_extra()
    from gainscope.server.app import is_loopback
    from gainscope.server.run import bind, serve_forever
    from gainscope.server.workspace import Workspace

    loopback = is_loopback(host)
    if not loopback and token is None:
        click.echo(f"error: --host {host} makes the dashboard reachable from other machines: give --token (at least "
                   "8 characters) so that only those who have it can read and change the workspace", err=True)
        sys.exit(EXIT_USAGE)
    try:
        sock = bind(host, port)
    except OSError as exc:
        click.echo(f"error: cannot listen on {host}:{port}: {exc.strerror}; choose another --port (or --port 0)",
                   err=True)
        sys.exit(EXIT_IO)
    try:
        ws = Workspace.open(workspace, database=database, token=token, allow_code=loopback or allow_code)
    except BaseException:
        sock.close()
        raise
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    if queue_file is not None and case_id is not None:
        from gainscope.cli.queue import add_queue_and_say

        try:
            add_queue_and_say(ws, case_id, queue_file, None, url=f"http://{shown}:{bound}")
        except BaseException:
            sock.close()
            ws.close()
            raise
    click.echo(f"http://{shown}:{bound}/?token={ws.token}")
    cases = ws.store.cases()
    click.echo(f"serving workspace {workspace} ({ws.where}; {len(cases)} case{'s' if len(cases) != 1 else ''}); "
               f"open the URL above (it holds the token every change needs); Ctrl-C stops", err=True)
    sys.stdout.flush()
    try:
        serve_forever(ws, sock, loopback=loopback)
    finally:
        sock.close()
        ws.close()


@click.command("add")
@click.argument("workspace", type=click.Path(file_okay=False, path_type=Path))
@click.argument("case_file", metavar="CASE", type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["auto", "case", "quepid", "rre", "rank-eval", "trec"]),
              default="auto", show_default=True,
              help="What CASE is: a case file (JSON or YAML), a Quepid ratings CSV, RRE ratings JSON, a _rank_eval "
                   "request or TREC qrels; auto tells them apart by extension and content.")
@click.option("--run", "run_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The results, from a run file gainscope reads (query ids as case export writes them).")
@click.option("--snapshot", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The results of a Quepid ratings CSV, from a Quepid snapshot CSV.")
@click.option("--response", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The results of a _rank_eval request, from its response JSON.")
@click.option("--name", default=None, help="The case's name (default: the file's, else its name).")
@click.option("--scale", default=None,
              help="Rating scale: graded (0-3), binary, LO-HI such as 1-10. Default: the case's, else 0-3 when "
                   "every rating fits it.")
@click.option("--engine", default=None,
              help="The engine its queries run against (an index folder, FILE.toml:NAME, module:function), relative "
                   "to CASE's folder; default: the case's.")
@database_option()
@guarded
def case_add_cmd(workspace: Path, case_file: str, fmt: str, run_file: str | None, snapshot: str | None,
                 response: str | None, name: str | None, scale: str | None, engine: str | None,
                 database: str | None) -> None:
    """Import CASE into the dashboard WORKSPACE (a folder; created when missing) as a new case, and print its id."""
    from dataclasses import replace

    from gainscope.server import cases as bridge
    from gainscope.server.workspace import Workspace

    scale_spec = rating_scale(scale)
    source = str(Path(case_file).resolve())
    case = bridge.read_any(case_file, fmt, run=run_file, snapshot=snapshot, response=response, scale=scale_spec,
                           name=name)
    case = replace(case, source=source, engine=engine if engine is not None else case.engine)
    with Workspace.open(workspace, database=database) as ws:
        record = ws.import_case(case, source=source, read_files=True)
        scores = ws.scoreboard.scores(record.id)
        for note in case.notes:
            click.echo(f"note: {note}", err=True)
        shown = ", ".join(f"{n} {s.score:.4f}" if s.score is not None else f"{n} --"
                          for n, s in scores.by_scorer.items())
        if not any(q.results for q in scores.queries):  # its scorers' zeros would say nothing
            shown = ("no results yet: rerun it against its engine on its Tune page, or import its results "
                     "(--run, --snapshot, --response)")
        click.echo(record.id)
        click.echo(f"added case {record.name!r} ({len(scores.queries)} queries) to {ws.where}: {shown}", err=True)
