"""Every docstring example of the package runs (issue 14 item 6): each module whose source holds ``>>> `` is
run through doctest here, so pytest collects them all without ``--doctest-modules`` importing every module (some
need optional dependencies)."""

from __future__ import annotations

import doctest
import importlib
import io
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def _modules_with_examples() -> list[str]:
    found = []
    for path in sorted((SRC / "gainscope").rglob("*.py")):
        if ">>> " in path.read_text(encoding="utf-8"):
            name = ".".join(path.with_suffix("").relative_to(SRC).parts)
            found.append(name.removesuffix(".__init__"))
    return found


MODULES = _modules_with_examples()


def test_the_main_entry_points_have_examples() -> None:
    assert {"gainscope", "gainscope.evaluation", "gainscope.compare", "gainscope.results"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    runner = doctest.DocTestRunner(optionflags=flags)
    out = io.StringIO()
    tests = doctest.DocTestFinder(exclude_empty=True).find(module, name)
    for test in tests:
        runner.run(test, out=out.write)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0, f"{name} holds '>>> ' that doctest does not find: examples go in docstrings"
    assert result.failed == 0, out.getvalue()
