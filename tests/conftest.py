"""Shared fixtures: paths to the trec_eval golden files and a CLI runner with a fixed environment; the hypothesis
profiles.

Hypothesis profiles (``GAINSCOPE_HYPOTHESIS_PROFILE``, default ``ci``):

- ``ci``: what CI and ``python3 dev.py test`` run: derandomized (the same examples on every run, so a failure
  reproduces), no example database, no deadline (a shared 2-core machine is slow at times), 50 examples for a
  property test that does not ask for a number of its own;
- ``dev``: a longer random search while working on a fast path: 300 examples, fresh ones on every run, failures
  kept in ``.hypothesis/`` and replayed first.

A test's own ``@settings(max_examples=...)`` wins over the profile; ask for more only where the property needs it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from tests.chat_server import FakeChatServer
from tests.helpers import invoke

# ranx (the parity peer of the ranx profile and of gainscope.fuse) compiles every metric, fusion and normalisation
# with numba on first use: minutes on two cores for a fresh .venv (CI's every run), where the parity inputs take
# milliseconds to interpret. The tests run ranx's own Python source uncompiled (the same arithmetic on float64;
# the parity inputs have no tied scores, where numba's sort and numpy's could differ);
# NUMBA_DISABLE_JIT=0 checks the compiled library instead.
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")

settings.register_profile("ci", max_examples=50, derandomize=True, database=None, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("GAINSCOPE_HYPOTHESIS_PROFILE", "ci"))

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
def cli_runner() -> Callable[..., tuple[int, str, str]]:
    """Invoke the gainscope CLI in-process; returns (exit code, stdout, stderr) (tests/helpers.py's invoke)."""
    from gainscope.cli import cli

    return partial(invoke, cli)


@pytest.fixture
def chat_server() -> Iterator[FakeChatServer]:
    """A fake chat-completions server on 127.0.0.1 (tests/chat_server.py) answering ``ok`` with the default grade,
    stopped after the test; set ``.behaviour``."""
    with FakeChatServer() as server:
        yield server


#: the test files that take longest (Spark's JVM start, the property searches), run first so that two workers
#: (dev.py test: -n 2 --dist loadfile) do not end with one of them alone on a long file
FIRST = ("tests/spark/test_spark.py", "tests/property/", "tests/parity/", "tests/spark/")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid
        return next((i for i, prefix in enumerate(FIRST) if path.startswith(prefix)), len(FIRST))

    items.sort(key=rank)  # stable: the order within each group is kept
