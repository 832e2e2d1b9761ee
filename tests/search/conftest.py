"""Shared data for the search tests: a four-film corpus small enough for hand arithmetic, and its index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

FILMS = [
    {"_id": "d1", "title": "Star Wars", "text": "A space opera about a galaxy far away"},
    {"_id": "d2", "title": "Star Trek", "text": "Space exploration and a starship crew"},
    {"_id": "d3", "title": "The Godfather", "text": "A crime family saga"},
    {"_id": "d4", "title": "Wars of the Roses", "text": "English history and wars"},
]


def invoke(*args: object) -> tuple[int, str, str]:
    """Run the gainscope command line in-process: (exit code, standard output, standard error)."""
    from gainscope.cli import cli

    result = CliRunner().invoke(cli, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def films_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The films indexed with title^2,text (read-only for the tests: copy it to change it)."""
    from gainscope.search.embedded import build_index

    folder = tmp_path_factory.mktemp("films")
    corpus = write_jsonl(folder / "corpus.jsonl", FILMS)
    return build_index(corpus, folder / "index", fields="title^2,text").path
