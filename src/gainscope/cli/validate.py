"""``gainscope validate FILE...``: report problems in judgments and runs without evaluating them, by the rules
(and with the reading options) of ``evaluate``."""

from __future__ import annotations

from typing import Any

import click

from gainscope.cli.common import EXIT_INPUT, guarded, nan_score_of, reader_options


def _kinds(values: tuple[str, ...]) -> dict[str, str]:
    kinds: dict[str, str] = {}
    for value in values:
        path, sep, kind = value.rpartition("=")
        if not sep or not path or kind not in ("judgments", "run"):
            raise click.BadParameter(f"expected FILE=judgments or FILE=run; got {value!r}", param_hint="--kind")
        kinds[path] = kind
    return kinds


@click.command("validate")
@click.argument("files", nargs=-1, required=True)
@click.option("--kind", "kinds", multiple=True, metavar="FILE=KIND",
              help="Say what FILE holds when it cannot be told from its content: FILE=judgments or FILE=run "
                   "(repeat for several files).")
@reader_options
@guarded
def validate_cmd(files: tuple[str, ...], kinds: tuple[str, ...], **kwargs: Any) -> None:
    """Check FILE(s) with the rules and reading options of evaluate: what evaluate would refuse is an error,
    what it would warn about a warning; also ties, distances, id overlap between judgments and runs. Exit code
    3 when a file has an error."""
    from gainscope.io import validate_files

    issues = validate_files(list(files), kinds=_kinds(kinds), judgments_format=kwargs.pop("judgments_format"),
                            run_format=kwargs.pop("run_format"), nan_score=nan_score_of(kwargs.pop("nan_score")),
                            **kwargs)
    errors = 0
    for issue in issues:
        where = (issue.path or "-") + (f":{issue.line}" if issue.line else "")
        click.echo(f"{issue.severity:<7} {where}: [{issue.code}] {issue.cli_message}")
        errors += issue.severity == "error"
    counts = {s: sum(i.severity == s for i in issues) for s in ("error", "warning", "info")}
    click.echo(f"{len(files)} file(s): {counts['error']} error(s), {counts['warning']} warning(s), "
               f"{counts['info']} note(s)")
    if errors:
        raise SystemExit(EXIT_INPUT)

