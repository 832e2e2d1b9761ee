"""Shared data for the search tests: a four-film corpus small enough for hand arithmetic, and its index."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.helpers import invoke as invoke_command
from tests.helpers import write_jsonl

from gainscope.cli import cli

FILMS = [
    {"_id": "d1", "title": "Star Wars", "text": "A space opera about a galaxy far away"},
    {"_id": "d2", "title": "Star Trek", "text": "Space exploration and a starship crew"},
    {"_id": "d3", "title": "The Godfather", "text": "A crime family saga"},
    {"_id": "d4", "title": "Wars of the Roses", "text": "English history and wars"},
]


#: the gainscope command line in-process: (exit code, standard output, standard error)
invoke = partial(invoke_command, cli)


@pytest.fixture(scope="session")
def films_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The films indexed with title^2,text (read-only for the tests: copy it to change it)."""
    from gainscope.search.embedded import build_index

    folder = tmp_path_factory.mktemp("films")
    corpus = write_jsonl(folder, "corpus.jsonl", FILMS)
    return build_index(corpus, folder / "index", fields="title^2,text").path
