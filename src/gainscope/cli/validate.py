"""``gainscope validate FILE...``: report problems in judgments and runs without evaluating them."""

from __future__ import annotations

import click

from gainscope.cli.common import EXIT_INPUT, guarded


@click.command("validate")
@click.argument("files", nargs=-1, required=True)
@guarded
def validate_cmd(files: tuple[str, ...]) -> None:
    """Check FILE(s): duplicates, ties, NaN scores, non-numeric grades, and id overlap between judgments and
    runs. Exit code 3 when a file has an error."""
    from gainscope.io import validate_files

    issues = validate_files(list(files))
    errors = 0
    for issue in issues:
        where = (issue.path or "-") + (f":{issue.line}" if issue.line else "")
        click.echo(f"{issue.severity:<7} {where}: [{issue.code}] {issue.message}")
        errors += issue.severity == "error"
    counts = {s: sum(i.severity == s for i in issues) for s in ("error", "warning", "info")}
    click.echo(f"{len(files)} file(s): {counts['error']} error(s), {counts['warning']} warning(s), "
               f"{counts['info']} note(s)")
    if errors:
        raise SystemExit(EXIT_INPUT)
