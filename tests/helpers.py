"""The helpers every test folder shares: one way to write an input file, one way to run a command line, one way to
record what a call gives (its result or its error, and its warnings).

Import them as ``from tests.helpers import invoke, write, write_jsonl`` (the suite runs with
``--import-mode=importlib``, and the root conftest makes ``tests`` a namespace package). The fake chat-completions
server is ``tests/chat_server.py`` (the ``chat_server`` fixture of the root conftest).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

#: the environment every command line runs in: no colour, and a terminal wide enough that tables do not wrap
CLI_ENV = {"NO_COLOR": "1", "COLUMNS": "120"}


def write(folder: Path, name: str, content: object) -> Path:
    """Write ``content`` to ``folder / name``; its path.

    Text is written as UTF-8 bytes exactly as given (no newline translation), bytes as they are, anything else as
    its JSON (``json.dumps``).
    """
    path = folder / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes((content if isinstance(content, str) else json.dumps(content)).encode("utf-8"))
    return path


def write_jsonl(folder: Path, name: str, rows: Iterable[object]) -> Path:
    """Write ``rows`` to ``folder / name`` as JSON lines, each ended by a newline (a text row is written as it is);
    its path."""
    return write(folder, name, "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))


def invoke(command: click.Command, *args: object, input: str | bytes | None = None,
           env: Mapping[str, str] | None = None) -> tuple[int, str, str]:
    """Run ``command`` (``gainscope.cli.cli`` or one of its groups) in-process with click's CliRunner, the
    arguments turned to text: (exit code, standard output, standard error).

    It runs in :data:`CLI_ENV` (updated with ``env``). An exception other than ``SystemExit`` escaping the command is
    raised again: a traceback fails the test instead of passing as exit code 1.
    """
    result = CliRunner().invoke(command, [str(a) for a in args], input=input, env={**CLI_ENV, **(env or {})})
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def outcome(fn: Callable[[], Any], *, any_order: bool = False) -> tuple[Any, list[str]]:
    """What ``fn()`` gives, to compare two ways of doing one job: its result, or the type and message of the
    gainscope error it raises; and every warning, as ``"Category: message"`` in the order given (sorted with
    ``any_order``, for two ways that may warn in another order)."""
    from gainscope.errors import GainscopeError

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn()
        except GainscopeError as exc:
            result = (type(exc), str(exc))
    said = [f"{w.category.__name__}: {w.message}" for w in caught]
    return result, sorted(said) if any_order else said
