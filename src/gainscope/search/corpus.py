"""Documents to index: a BEIR corpus (``{"_id", "title", "text"}`` JSON Lines, or a BEIR folder holding
``corpus.jsonl``), any JSON Lines with an id field, or TSV ``id<TAB>text[<TAB>title]`` (MS MARCO's
``collection.tsv``).

The id is the ``id_field`` given, else the first of ``_id``, ``id``, ``doc_id``, ``docid``, ``pid`` a record has;
it must be a non-empty string or an integer, and unique. Field values are text: a string as is, a number in
decimal, a list of strings joined by spaces, null as empty; anything else (an object) is an error naming the file,
line and field. Every problem names ``file:line``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gainscope.errors import FormatError, InconsistentInputError
from gainscope.io.texts import raw_records, text_source

__all__ = ["ID_KEYS", "CorpusRecord", "field_text", "read_corpus"]

ID_KEYS = ("_id", "id", "doc_id", "docid", "pid")


@dataclass(frozen=True)
class CorpusRecord:
    """One document: where it was read, its id and its fields (every key but the id)."""

    line: int
    id: str
    fields: dict[str, Any]


def field_text(value: Any, *, path: str, line: int, name: str) -> str:
    """A field's value as text to index (see the module docstring)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in value):
        return " ".join(str(v) for v in value)
    raise FormatError(f"field {name!r} holds {type(value).__name__} {str(value)[:60]!r}, which is not text; index "
                      "text fields only (--fields names them)", path=path, line=line)


def read_corpus(path: str | Path, *, id_field: str | None = None) -> Iterator[CorpusRecord]:
    """The documents of ``path``, streamed (see the module docstring)."""
    src = text_source(path, "doc")
    seen: dict[str, int] = {}
    for number, record in raw_records(src, "document"):
        if isinstance(record, list):
            ident: Any = record[0]
            fields: dict[str, Any] = {"text": record[1], **({"title": record[2]} if len(record) > 2 else {})}
        else:
            key = id_field if id_field is not None else next((k for k in ID_KEYS if k in record), None)
            if key is None or key not in record:
                wanted = repr(id_field) if id_field is not None else f"one of {', '.join(ID_KEYS)}"
                raise FormatError(f"a document needs an id ({wanted}); keys: {', '.join(record) or 'none'}"
                                  + ("" if id_field else "; name the id field with --id-field"),
                                  path=str(src), line=number)
            ident = record[key]
            fields = {k: v for k, v in record.items() if k != key}
        if isinstance(ident, bool) or not isinstance(ident, str | int) or (isinstance(ident, str) and
                                                                            not ident.strip()):
            raise FormatError(f"a document id must be a non-empty string or an integer; got {ident!r}",
                              path=str(src), line=number)
        ident = str(ident)
        if ident in seen:
            raise InconsistentInputError(f"{src}:{number}: document id {ident!r} is given again (first on line "
                                         f"{seen[ident]}); each document once")
        seen[ident] = number
        yield CorpusRecord(number, ident, fields)
