"""The command-line helpers the temporal tests share: a JSONL batch written to disk and ``temporal_group`` invoked
with click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from gainscope.cli.temporal import temporal_group


def write(tmp_path: Path, lines: list[dict[str, Any]]) -> str:
    """The lines as ``runs.jsonl`` in ``tmp_path``; its path."""
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return str(path)


def invoke(*args: str) -> tuple[int, str, str]:
    """Exit code, stdout, stderr of ``gainscope temporal ARGS``. A traceback fails the test."""
    result = CliRunner().invoke(temporal_group, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr
