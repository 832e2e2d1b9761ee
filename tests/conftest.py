"""Shared fixtures: paths to the trec_eval golden files and a CLI runner with a fixed environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures" / "trec_eval"
if not FIXTURES.exists():  # CI clones main with shared/ beside it; allow an override
    FIXTURES = Path(os.environ.get("GAINSCOPE_TREC_FIXTURES", FIXTURES))


@pytest.fixture(scope="session")
def trec_fixtures() -> Path:
    """The folder of trec_eval 10 golden files (see its README)."""
    if not FIXTURES.exists():
        pytest.fail(f"trec_eval golden files not found at {FIXTURES}; set GAINSCOPE_TREC_FIXTURES")
    return FIXTURES


@pytest.fixture
def cli_runner():
    """Invoke the gainscope CLI in-process; returns (exit code, stdout, stderr)."""
    from click.testing import CliRunner

    from gainscope.cli import cli

    runner = CliRunner()

    def invoke(*args: str) -> tuple[int, str, str]:
        result = runner.invoke(cli, list(args), env={"NO_COLOR": "1", "COLUMNS": "120"})
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result.exit_code, result.stdout, result.stderr

    return invoke
