"""One exception tree and one set of renderers: every public exception class is declared in gainscope.errors,
every renderer module lives in render/, the renderers refuse an unknown output format with UnknownFormatError,
and there is one markdown pipe-table helper (render.text.markdown_table)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import gainscope.errors
from gainscope.errors import UnknownFormatError

SRC = Path(gainscope.errors.__file__).parent

#: internal signals of the readers (caught where they are raised, never seen by a user); io/ is another branch's
INTERNAL = {"FastPathUnavailable", "LineTooLong", "NeedLocations"}


@functools.cache
def _modules() -> list[tuple[Path, ast.Module]]:
    """Every source module of the package, parsed once for the whole file (the parse is most of its time)."""
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(SRC.rglob("*.py"))]


def test_every_public_exception_class_is_declared_in_errors() -> None:
    exception_names = {"Exception", "ValueError", "RuntimeError", "TypeError", "OSError", "UserWarning",
                       *gainscope.errors.__all__}
    outside = []
    for path, tree in _modules():
        if path.name == "errors.py" and path.parent == SRC:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_") and node.name not in INTERNAL:
                bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                         for b in node.bases}
                if bases & exception_names:
                    outside.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name}")
    assert outside == []


def test_moved_classes_keep_their_old_import_paths() -> None:
    from gainscope.cases import ScorerError
    from gainscope.judges.client import FatalRequestError
    from gainscope.temporal.extraction import UnresolvedTimeError

    assert ScorerError is gainscope.errors.ScorerError
    assert FatalRequestError is gainscope.errors.FatalRequestError
    assert UnresolvedTimeError is gainscope.errors.UnresolvedTimeError


def test_renderers_live_in_render() -> None:
    names = {p.relative_to(SRC).as_posix() for p in SRC.rglob("render*.py")}
    assert names == set()
    defined = [f"{p.relative_to(SRC)}" for p, tree in _modules() for node in ast.walk(tree)
               if isinstance(node, ast.FunctionDef) and node.name in ("markdown_table", "_markdown", "md_table")]
    assert defined == ["render/text.py"]


def test_an_unknown_output_format_is_an_unknown_format_error() -> None:
    from gainscope.render.experiment import render_experiment

    with pytest.raises(UnknownFormatError, match="unknown format 'xml'; use one of table, markdown, json"):
        render_experiment(None, "xml")


def test_markdown_table_aligns_numbers_and_escapes_pipes() -> None:
    from gainscope.render.text import markdown_table

    assert markdown_table(["run", "nDCG@10", "note"], [["a|b", "0.5000", "x"], ["c", "-", "y"]]) == (
        "| run | nDCG@10 | note |\n|:---|---:|:---|\n| a\\|b | 0.5000 | x |\n| c | - | y |")
