"""JSON and JSON Lines: the evaluation-dataset records of agent/RAG benchmarks, and plain long records.

``format="jsonl"``: one JSON object per line (at most :data:`~gainscope.io.text.MAX_RECORD_BYTES`, 64 MiB);
blank lines are skipped; errors name ``file:line``.
``format="json"``: a JSON array of the same objects (errors name ``file: record N``, counted from 1),
or one object mapping query ids to ``{doc: grade}`` / ``[docs]`` (judgments) or ``{doc: score}`` /
``[docs]`` (runs).

Judgment records::

    {"query_id": "MQ001", "query_text": "...", "ground_truth_document_ids": ["a.pdf", "b.pdf"]}
    {"query_id": "MQ001", "ground_truth_document_ids": {"a.pdf": 2, "b.pdf": 1}}
    {"query_id": "q1", "doc_id": "d1", "relevance": 2}          # or grade/rel/label/rating/gain/score

A list of ids means grade 1 for each; ``query_text`` is kept in ``Judgments.query_texts``.

Run records::

    {"query_id": "MQ001", "retrieved_document_ids": ["a.pdf", "c.pdf"]}      # rank order, no scores
    {"query_id": "MQ001", "results": [{"doc_id": "a.pdf", "score": 0.9}, ...]}
    {"query_id": "q1", "doc_id": "d1", "score": 0.9}                        # and/or "rank"

Keys follow the column aliases of :mod:`gainscope.io.frames` (``qid``, ``docno``, ...). Ids must be
strings or integers (integers are written out in decimal); grades and scores are JSON numbers or numeric
strings, checked with the same rules as text files (a JSON float such as ``1.0`` that is a whole number
counts as an integer grade). An error names the record and the offending key.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gainscope.deferred import deferred_module
from gainscope.errors import FormatError
from gainscope.io.detect import format_option
from gainscope.io.frames import ALIASES, PREFERRED, Origin, TokenTable, mapping_table, scalar_token
from gainscope.io.text import BOM, MAX_RECORD_BYTES, TextFile, decode_utf8

if TYPE_CHECKING:
    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = ["GROUND_TRUTH_KEY", "RESULTS_KEY", "RETRIEVED_KEY", "inconsistent_values_error", "load_json_table"]

GROUND_TRUTH_KEY = "ground_truth_document_ids"
RETRIEVED_KEY = "retrieved_document_ids"
RESULTS_KEY = "results"
QUERY_TEXT_KEY = "query_text"


@dataclass
class _Rows:
    """Column builders for the table (values are text tokens; ``None`` is a missing value)."""

    kind: str
    query_id: list[str] = field(default_factory=list)
    doc_id: list[str] = field(default_factory=list)
    grade: list[str | None] = field(default_factory=list)
    score: list[str | None] = field(default_factory=list)
    rank: list[str | None] = field(default_factory=list)
    loc: list[int] = field(default_factory=list)
    query_texts: dict[str, str] = field(default_factory=dict)

    def add(self, loc: int, qid: str, doc: str, *, grade: str | None = None, score: str | None = None,
            rank: str | None = None) -> None:
        self.query_id.append(qid)
        self.doc_id.append(doc)
        self.grade.append(grade)
        self.score.append(score)
        self.rank.append(rank)
        self.loc.append(loc)

    def check_consistent(self, origin: Origin) -> None:
        """Scores (and ranks) must be given for every document of a run or for none."""
        if self.kind != "run":
            return
        for role in ("score", "rank"):
            present = [v is not None for v in getattr(self, role)]
            if not any(present) or all(present):
                continue
            i = present.index(not present[0])
            raise inconsistent_values_error(origin, role, present[0], self.loc[0], self.query_id[0], self.loc[i])

    def frame(self) -> pl.DataFrame:
        data: dict[str, pl.Series] = {
            "query_id": pl.Series("query_id", self.query_id, dtype=pl.String),
            "doc_id": pl.Series("doc_id", self.doc_id, dtype=pl.String),
        }
        roles = ("grade",) if self.kind == "judgments" else ("score", "rank")
        for role in roles:
            values = getattr(self, role)
            if self.kind == "judgments" or any(v is not None for v in values):
                data[role] = pl.Series(role, values, dtype=pl.String)
        data["_loc"] = pl.Series("_loc", self.loc, dtype=pl.Int64)
        return pl.DataFrame(data)


def inconsistent_values_error(origin: Origin, role: str, first_given: bool, first: int, query_id: str,
                              here: int) -> FormatError:
    """The error for a run whose ``role`` (``score`` or ``rank``) is given for some documents only: the first
    document (at ``first``, of ``query_id``) has it or not (``first_given``), the one at ``here`` not."""
    what = "scores" if role == "score" else "ranks"
    state = "missing here but given" if first_given else "given here but missing"
    return origin.error(f"{what} are {state} {origin.at(first)} (query {query_id!r}); give every document a "
                        f"{role} or none", here)


# ---------------------------------------------------------------------- records
def _records_jsonl(src: TextFile) -> Iterator[tuple[int, Any]]:
    for lineno, offset, raw in src.lines(limit=MAX_RECORD_BYTES):
        if not raw.strip():
            continue
        text = src.decode_line(raw, lineno, offset)
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(f"invalid JSON: {exc.msg} (column {exc.colno}); each line must hold one JSON "
                              f"object", path=src.name, line=lineno, text=text.strip()) from None
        yield lineno, record


def _load_json_document(src: TextFile, kind: str) -> Any:
    data = src.read_bytes()
    if data.startswith(BOM):
        data = data[3:]
    text = decode_utf8(data, src.name)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        hint = ""
        if exc.msg == "Extra data":
            hint = f"; is it JSON Lines (one object per line)? read it with {format_option('jsonl', kind)}"
        raise FormatError(f"invalid JSON: {exc.msg} (column {exc.colno}){hint}", path=src.name,
                          line=exc.lineno) from None


def load_json_table(src: TextFile, kind: str, fmt: str) -> TokenTable:
    """Read a ``.jsonl`` or ``.json`` file into a token table for :mod:`gainscope.io.frames`."""
    if fmt == "jsonl":
        origin = Origin(src.name, "line")
        records: Iterator[tuple[int, Any]] = _records_jsonl(src)
    else:
        document = _load_json_document(src, kind)
        if isinstance(document, Mapping):
            table = mapping_table(document, kind)
            table.origin = Origin(src.name, None)
            table.default_name = src.stem
            return table
        if not isinstance(document, list):
            raise FormatError(f"expected a JSON array of records or an object {{query_id: ...}}; got "
                              f"{_type(document)}", path=src.name)
        origin = Origin(src.name, "record")
        records = enumerate(document, start=1)
    rows = _Rows(kind)
    parse = _judgment_record if kind == "judgments" else _run_record
    for loc, record in records:
        if not isinstance(record, Mapping):
            raise origin.error(f"expected a JSON object; got {_type(record)}", loc)
        parse(record, loc, rows, origin)
    rows.check_consistent(origin)
    texts = rows.query_texts if kind == "judgments" and rows.query_texts else None
    return TokenTable(rows.frame(), origin, query_texts=texts, default_name=src.stem)


def _type(value: Any) -> str:
    names = {list: "an array", dict: "an object", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _need_key(record: Mapping[str, Any], role: str, origin: Origin, loc: int) -> str:
    """The key of ``record`` that holds ``role``, or a FormatError listing the accepted keys."""
    key = _key(record, role, origin, loc)
    if key is None:
        raise origin.error(f"no {role.replace('_', ' ')} key: expected one of {list(ALIASES[role])}; "
                           f"got keys {list(record)}", loc)
    return key


def _key(record: Mapping[str, Any], role: str, origin: Origin, loc: int) -> str | None:
    """The key of ``record`` that holds ``role`` (aliases allowed; the canonical key wins a tie)."""
    matches = [k for k in record if isinstance(k, str) and k.strip().lower() in ALIASES[role]]
    if len(matches) > 1:
        canonical = [k for k in matches if k.strip().lower() in PREFERRED[role]]
        if len(canonical) != 1:
            raise origin.error(f"ambiguous keys {matches}: keep only one {role.replace('_', ' ')} key", loc)
        matches = canonical
    return matches[0] if matches else None


def _id_value(value: Any, key: str, origin: Origin, loc: int) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise origin.error(f"{key!r} must be a string or an integer; got {json.dumps(value)}", loc)


def _number_token(value: Any, *, integral: bool) -> str | None:
    """A JSON value as a text token: scalars as :func:`scalar_token` writes them, anything else as JSON."""
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return scalar_token(value, integral=integral)


def _query_id(record: Mapping[str, Any], origin: Origin, loc: int) -> str:
    key = _need_key(record, "query_id", origin, loc)
    return _id_value(record[key], key, origin, loc)


# ---------------------------------------------------------------------- judgments
def _judgment_record(record: Mapping[str, Any], loc: int, rows: _Rows, origin: Origin) -> None:
    qid = _query_id(record, origin, loc)
    text = record.get(QUERY_TEXT_KEY)
    if text is not None:
        if not isinstance(text, str):
            raise origin.error(f"{QUERY_TEXT_KEY!r} must be a string; got {_type(text)}", loc)
        rows.query_texts.setdefault(qid, text)
    if GROUND_TRUTH_KEY in record:
        _ground_truth(record[GROUND_TRUTH_KEY], qid, loc, rows, origin)
        return
    doc_key = _key(record, "doc_id", origin, loc)
    grade_key = _key(record, "grade", origin, loc)
    if doc_key is None or grade_key is None:
        raise origin.error(
            f"cannot tell what this record holds: expected {GROUND_TRUTH_KEY!r} (a list of doc ids, or an "
            f"object doc id -> grade), or a doc id key and a relevance key; got keys {list(record)}", loc)
    doc = _id_value(record[doc_key], doc_key, origin, loc)
    rows.add(loc, qid, doc, grade=_number_token(record[grade_key], integral=True))


def _ground_truth(value: Any, qid: str, loc: int, rows: _Rows, origin: Origin) -> None:
    key = GROUND_TRUTH_KEY
    if isinstance(value, list):
        for i, doc in enumerate(value):
            rows.add(loc, qid, _id_value(doc, f"{key}[{i}]", origin, loc), grade="1")
    elif isinstance(value, Mapping):
        for doc, grade in value.items():
            rows.add(loc, qid, doc, grade=_number_token(grade, integral=True))
    else:
        raise origin.error(f"{key!r} must be a list of doc ids or an object {{doc_id: grade}}; got "
                           f"{_type(value)}", loc)


# ---------------------------------------------------------------------- runs
def _run_record(record: Mapping[str, Any], loc: int, rows: _Rows, origin: Origin) -> None:
    qid = _query_id(record, origin, loc)
    if RETRIEVED_KEY in record:
        docs = record[RETRIEVED_KEY]
        if not isinstance(docs, list):
            raise origin.error(f"{RETRIEVED_KEY!r} must be a list of doc ids in rank order; got "
                               f"{_type(docs)}", loc)
        for i, doc in enumerate(docs):
            rows.add(loc, qid, _id_value(doc, f"{RETRIEVED_KEY}[{i}]", origin, loc), rank=str(i + 1))
        return
    if RESULTS_KEY in record:
        results = record[RESULTS_KEY]
        if not isinstance(results, list):
            raise origin.error(f"{RESULTS_KEY!r} must be a list of objects {{doc_id, score}}; got "
                               f"{_type(results)}", loc)
        for i, item in enumerate(results):
            if not isinstance(item, Mapping):
                raise origin.error(f"{RESULTS_KEY}[{i}] must be an object {{doc_id, score}}; got "
                                   f"{_type(item)}", loc)
            _scored(item, qid, loc, rows, origin, where=f"{RESULTS_KEY}[{i}].")
        return
    if _key(record, "doc_id", origin, loc) is None:
        raise origin.error(
            f"cannot tell what this record holds: expected {RETRIEVED_KEY!r} (doc ids in rank order), "
            f"{RESULTS_KEY!r} (a list of {{doc_id, score}}), or a doc id key with a score or rank; got keys "
            f"{list(record)}", loc)
    _scored(record, qid, loc, rows, origin, where="")


def _scored(item: Mapping[str, Any], qid: str, loc: int, rows: _Rows, origin: Origin, *, where: str) -> None:
    doc_key = _need_key(item, "doc_id", origin, loc)
    score_key = _key(item, "score", origin, loc)
    rank_key = _key(item, "rank", origin, loc)
    if score_key is None and rank_key is None:
        raise origin.error(f"{where}no score or rank key: expected one of "
                           f"{list(ALIASES['score'] + ALIASES['rank'])}; got keys {list(item)}", loc)
    doc = _id_value(item[doc_key], where + doc_key, origin, loc)
    score = _number_token(item[score_key], integral=False) if score_key else None
    rank = _number_token(item[rank_key], integral=True) if rank_key else None
    rows.add(loc, qid, doc, score=score, rank=rank)

