"""The command-line helpers the temporal tests share: a JSONL batch written to disk and ``temporal_group`` invoked
through the suite's one CLI runner (tests/helpers.py)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from tests.helpers import invoke as invoke_command
from tests.helpers import write_jsonl

from gainscope.cli.temporal import temporal_group

#: exit code, stdout, stderr of ``gainscope temporal ARGS``; a traceback fails the test
invoke = partial(invoke_command, temporal_group)


def write(tmp_path: Path, lines: list[dict[str, Any]]) -> str:
    """The lines as ``runs.jsonl`` in ``tmp_path``; its path."""
    return str(write_jsonl(tmp_path, "runs.jsonl", lines))
