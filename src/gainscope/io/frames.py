"""From columns to :class:`Judgments` and :class:`Run`: DataFrames, dicts, and every reader's token table.

Every reader (TREC, JSON, CSV/TSV/Parquet, DataFrames, dicts) first produces a *table*: a polars frame
with the columns ``query_id``, ``doc_id`` and ``grade`` (judgments) or ``score`` and/or ``rank`` (runs),
either as text tokens (``String``) or already typed, plus an optional ``_loc`` column holding where each
row came from (a line, a JSON record, a table row). This module turns such a table into a checked
object, with the same rules for every source:

* **Ids** are strings, always: ``"001"`` stays ``"001"``. Integer id columns are converted to text;
  float id columns are refused (they usually mean missing values or ids already mangled to ``1.0``).
  An empty or missing id is an error.
* **Grades** are integers. A text token must be an integer (``2``, ``-1``, ``+3``); any token with a
  ``.`` or an exponent (``0.9``, ``1.0``, ``1e2``) is refused unless ``float_grades=True`` (then the grade
  column is Float64). Grades are never truncated or coerced: ``high`` is an error. Typed float values
  (DataFrames, Parquet, JSON numbers, dict values) that are whole numbers are read as integers.
  Negative grades are kept as given. With ``scale=(lo, hi)``, grades above ``hi`` (or non-negative
  grades below ``lo``) raise an :class:`~gainscope.errors.InputWarning`.
* **Scores** are numbers with a decimal point (``0,9`` is refused, never read as 0); ``inf``/``-inf``
  are accepted with a warning; ``nan`` is an error unless ``nan_score=`` gives a replacement.
* **Ranks** are integers.
* **Duplicates**: a ``(query_id, doc_id)`` pair seen twice in a run is an error naming both locations,
  unless ``on_duplicate="first"`` (keep the first row) or ``"max"`` (keep the highest score, or the best
  rank when there are no scores). In judgments, repeats with the same grade are collapsed with a
  warning; different grades are an error naming both locations and grades, unless
  ``on_conflict="max" | "min" | "first" | "last"``.
* **Empty input** is an error unless ``allow_empty=True``.
* Every convention applied goes into the object's ``notes``. Warnings are returned, not emitted, so a
  reader that retries with another strategy never warns twice; the public functions emit them.

When a problem needs a location and the table has none (the fast TREC path), :class:`NeedLocations` is
raised so that the caller can re-read the file with the line-by-line parser.

Column names of DataFrames and tables are matched case-insensitively against :data:`ALIASES`.
pandas is optional: it is never imported; pandas objects are recognised by their module name.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gainscope.core.checks import has_duplicate_pairs
from gainscope.core.judgments import Judgments
from gainscope.core.run import Run
from gainscope.deferred import deferred_module
from gainscope.errors import (
    DuplicateError,
    FormatError,
    InconsistentInputError,
    InputError,
    PolicyError,
    UnknownFormatError,
    option,
)
from gainscope.io.text import check_normal_form, normalize_id_columns

if TYPE_CHECKING:
    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = [
    "ALIASES",
    "JudgmentOptions",
    "NeedLocations",
    "Origin",
    "RowProblem",
    "RunOptions",
    "TokenTable",
    "conflict_problem",
    "convert_run_values",
    "duplicate_error",
    "duplicate_problem",
    "duplicates_resolved_note",
    "empty_error",
    "empty_message",
    "ensure_string_ids",
    "finish_judgments",
    "finish_run",
    "frame_table",
    "infinite_scores_warning",
    "is_dataframe",
    "mapping_table",
    "nan_scores_note",
    "resolve_columns",
    "resolve_judgment_duplicates",
    "resolve_run_duplicates",
    "row_checks",
    "row_problems",
    "run_tag",
    "run_tags_warning",
    "scale_warnings",
    "strip_tokens",
    "table_from_columns",
]

# ---------------------------------------------------------------------- column names
ALIASES: dict[str, tuple[str, ...]] = {
    "query_id": ("query_id", "qid", "query-id", "q_id", "query", "topic"),
    "doc_id": ("doc_id", "docno", "docid", "corpus-id", "pid", "_id", "doc"),
    "grade": ("relevance", "rel", "grade", "label", "rating", "gain", "score"),
    "score": ("score", "sim", "similarity"),
    "rank": ("rank",),
}
PREFERRED = {"query_id": ("query_id",), "doc_id": ("doc_id",), "grade": ("relevance", "grade"),
              "score": ("score",), "rank": ("rank",)}
_LABEL = {"query_id": "query id", "doc_id": "doc id", "grade": "relevance", "score": "score", "rank": "rank",
          "tag": "run tag"}
ROLES = {"judgments": ("query_id", "doc_id", "grade"), "run": ("query_id", "doc_id", "score", "rank")}
_NOT_PROVENANCE = {"iter", "iteration", "q0", "_loc"}

# ---------------------------------------------------------------------- token syntax
WS_CHARS = " \t\r\x0b\x0c\n"
INT_RE = r"^[+-]?[0-9]+$"
FLOAT_RE = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
NONFINITE_RE = r"^[+-]?(?i:inf|infinity|nan)$"
NAN_RE = r"^[+-]?(?i:nan)$"
CONTROL_RE = r"[\x00-\x1F\x7F-\x9F]"  # C0 (NUL, tab, line ends ...), DEL and C1: never inside an id
_INT = re.compile(INT_RE)
_FLOAT = re.compile(FLOAT_RE)
_NONFINITE = re.compile(NONFINITE_RE)
_NAN = re.compile(NAN_RE)
_CONTROL = re.compile(CONTROL_RE)
_COMMA_DECIMAL = re.compile(r"^[+-]?[0-9]*,[0-9]+$")
_INT64_MAX = 2**63 - 1


class NeedLocations(Exception):
    """A problem was found that must be reported with its line, and the table has no locations."""


# ---------------------------------------------------------------------- where rows came from
@dataclass(frozen=True)
class Origin:
    """Where a table's rows came from, for messages: a path and the unit of ``_loc``.

    ``unit`` is ``"line"`` (``run.txt:17: ...``), ``"record"`` (``data.json: record 3: ...``), ``"row"``
    (``data.csv: row 3: ...``) or None (no location is printed; the ids say where).
    """

    path: str | None = None
    unit: str | None = "line"

    def ref(self, loc: int | None) -> str:
        """``"line 3"``, ``"record 3"``, ``"row 3"`` or ``""``."""
        return f"{self.unit} {loc}" if self.unit and loc is not None else ""

    def at(self, loc: int | None) -> str:
        """``"on line 3"``, ``"in record 3"``, ``"in row 3"`` or ``"earlier"`` (no locations)."""
        ref = self.ref(loc)
        if not ref:
            return "earlier"
        return f"on {ref}" if self.unit == "line" else f"in {ref}"

    def prefix(self, loc: int | None = None) -> str:
        """The start of a message: ``"run.txt:17: "``, ``"data.json: record 3: "``, ``"run.txt: "``..."""
        if self.unit == "line" and self.path and loc is not None:
            return f"{self.path}:{loc}: "
        parts = [p for p in (self.path, self.ref(loc)) if p]
        return ": ".join(parts) + ": " if parts else ""

    def error(self, message: str, loc: int | None = None, text: str | None = None) -> FormatError:
        """A FormatError for ``message`` at ``loc`` (its ``path`` and ``line`` attributes set)."""
        if self.unit == "line" and self.path and loc is not None:
            return FormatError(message, path=self.path, line=loc, text=text)
        exc = FormatError(self.prefix(loc) + message, text=text)
        exc.path, exc.line = self.path, loc
        return exc


@dataclass
class TokenTable:
    """A reader's output before checking: the frame, where it came from, and what the reader noticed."""

    frame: pl.DataFrame
    origin: Origin
    notes: list[str] = field(default_factory=list)
    query_texts: dict[str, str] | None = None
    default_name: str | None = None
    provenance: tuple[str, ...] = ()
    tokens_clean: bool = False  # text tokens have no surrounding whitespace (TREC): no stripping needed

    @property
    def located(self) -> bool:
        """True when rows carry their location (``_loc``)."""
        return "_loc" in self.frame.columns


# ---------------------------------------------------------------------- options
ON_CONFLICT = ("error", "max", "min", "first", "last")
ON_DUPLICATE = ("error", "first", "max")
EXTRA_COLUMNS = ("error", "ignore")


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise PolicyError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


@dataclass(frozen=True)
class JudgmentOptions:
    """Reading options for judgments (see :func:`gainscope.io.read_judgments`)."""

    on_conflict: str = "error"
    float_grades: bool = False
    scale: tuple[float, float] | None = None
    normalize_ids: str | None = None
    allow_empty: bool = False

    def __post_init__(self) -> None:
        _choice("on_conflict", self.on_conflict, ON_CONFLICT)
        object.__setattr__(self, "normalize_ids", check_normal_form(self.normalize_ids))
        if self.scale is not None:
            ok = (isinstance(self.scale, (tuple, list)) and len(self.scale) == 2
                  and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in self.scale)
                  and self.scale[0] <= self.scale[1])
            if not ok:
                raise PolicyError(f"scale must be a pair of numbers (lowest, highest) with lowest <= "
                                  f"highest; got {self.scale!r}")
            object.__setattr__(self, "scale", (float(self.scale[0]), float(self.scale[1])))


@dataclass(frozen=True)
class RunOptions:
    """Reading options for runs (see :func:`gainscope.io.read_run`). ``nan_score`` None means error."""

    name: str | None = None
    on_duplicate: str = "error"
    nan_score: float | None = None
    normalize_ids: str | None = None
    allow_empty: bool = False
    extra_columns: str = "error"

    def __post_init__(self) -> None:
        _choice("on_duplicate", self.on_duplicate, ON_DUPLICATE)
        _choice("extra_columns", self.extra_columns, EXTRA_COLUMNS)
        object.__setattr__(self, "normalize_ids", check_normal_form(self.normalize_ids))

    @staticmethod
    def parse_nan_score(value: str | float) -> float | None:
        """``"error"`` → None; a number or a numeric string (``"-inf"``) → that float."""
        if isinstance(value, str):
            if value == "error":
                return None
            try:
                number = float(value)
            except ValueError:
                number = math.nan
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        else:
            number = math.nan
        if math.isnan(number):
            raise PolicyError(f"nan_score must be 'error' or a number to put in place of NaN scores "
                              f"(for example '-inf'); got {value!r}")
        return number


# ---------------------------------------------------------------------- column resolution
def resolve_columns(names: Sequence[Any], kind: str, where: str = "") -> dict[str, str]:
    """Map roles (``query_id``, ``doc_id``, ``grade`` | ``score``, ``rank``) to column names.

    Names are matched case-insensitively against :data:`ALIASES`. When several columns match a role, the
    canonical name wins (``query_id``, ``doc_id``, ``relevance``/``grade``, ``score``, ``rank``);
    otherwise the choice is ambiguous and an UnknownFormatError lists the columns and the aliases.
    """
    columns = [str(n) for n in names]
    lowered = {c: c.strip().lower() for c in columns}
    found: dict[str, str] = {}
    for role in ROLES[kind]:
        matches = [c for c in columns if lowered[c] in ALIASES[role]]
        if len(matches) > 1:
            preferred = [c for c in matches if lowered[c] in PREFERRED[role]]
            if len(preferred) != 1:
                raise UnknownFormatError(
                    f"{where}ambiguous {_LABEL[role]} column: {matches} all match; keep one, or rename the "
                    f"right one to {PREFERRED[role][0]!r} (columns found: {columns}; accepted names: "
                    f"{', '.join(ALIASES[role])})")
            matches = preferred
        if matches:
            found[role] = matches[0]
    required = ("query_id", "doc_id", "grade") if kind == "judgments" else ("query_id", "doc_id")
    for role in required:
        if role not in found:
            raise UnknownFormatError(
                f"{where}no {_LABEL[role]} column; accepted names: {', '.join(ALIASES[role])} "
                f"(columns found: {columns})")
    if kind == "run" and "score" not in found and "rank" not in found:
        raise UnknownFormatError(
            f"{where}no score or rank column; accepted names: "
            f"{', '.join(ALIASES['score'] + ALIASES['rank'])} (columns found: {columns})")
    return found


def table_from_columns(frame: pl.DataFrame, kind: str, origin: Origin, *, where: str = "",
                        notes: list[str] | None = None, default_name: str | None = None,
                        located: bool = True) -> TokenTable:
    """Rename a frame's columns to roles, add ``_loc`` (1-based row number; not with ``located=False``, for the
    scanner, which does not need it: a column as long as the table) and keep provenance."""
    found = resolve_columns(frame.columns, kind, where)
    frame = frame.rename({v: k for k, v in found.items()})
    provenance: tuple[str, ...] = ()
    if kind == "judgments":
        provenance = tuple(c for c in frame.columns
                           if c not in ROLES[kind] and c.strip().lower() not in _NOT_PROVENANCE)
    keep = [c for c in ROLES[kind] if c in frame.columns] + list(provenance)
    frame = frame.select(keep)
    if located:
        frame = frame.with_row_index("_loc", offset=1).with_columns(pl.col("_loc").cast(pl.Int64))
    return TokenTable(frame, origin, notes=list(notes or []), default_name=default_name,
                      provenance=provenance)


# ---------------------------------------------------------------------- DataFrames
def is_dataframe(obj: Any) -> bool:
    """True for a polars DataFrame or LazyFrame, a pandas DataFrame, or a pyarrow Table or RecordBatch (recognised
    without importing any of them: nothing is a polars frame while polars is not imported)."""
    if "polars" in sys.modules and isinstance(obj, (pl.DataFrame, pl.LazyFrame)):
        return True
    module, name = (type(obj).__module__ or "").split(".")[0], type(obj).__name__
    return (module == "pandas" and name == "DataFrame") or (module == "pyarrow" and name in ("Table", "RecordBatch"))


def _pandas_to_polars(df: Any) -> pl.DataFrame:
    """Convert a pandas DataFrame column by column, keeping NaN as NaN and ids as given."""
    index_names = [n for n in getattr(df.index, "names", []) if n is not None]
    if index_names:
        df = df.reset_index()
    series: list[pl.Series] = []
    for name in df.columns:
        column = df[name]
        converted: pl.Series
        try:
            converted = pl.Series(str(name), pl.from_pandas(column, nan_to_null=False))
        except Exception as exc:  # mixed object columns (ints and strings...): keep each value's text
            if (error := _unencodable_cell(name, column)) is not None:
                raise error from exc
            converted = pl.Series(str(name), [_object_token(v) for v in column.tolist()], dtype=pl.String)
        series.append(converted)
    return pl.DataFrame(series)


def not_utf8(text: str) -> str | None:
    """What keeps ``text`` from being stored as UTF-8 (a lone surrogate, which Python strings may hold and Arrow,
    polars and files may not), with the fix; None when it can be."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (f"is not valid Unicode text: it holds a lone surrogate (U+{ord(text[exc.start]):04X}) at character "
                f"{exc.start + 1}; decode the bytes it came from with their real encoding (a surrogate is what "
                "errors='surrogateescape' leaves for bytes that are not UTF-8)")
    return None


def _unencodable_cell(name: Any, column: Any) -> InputError | None:
    """The error for the first string of a pandas column that cannot be UTF-8, naming its column and row."""
    for row, value in enumerate(column.tolist(), start=1):
        if isinstance(value, str) and (problem := not_utf8(value)):
            return InputError(f"column {str(name)!r}, row {row}: {value!r} {problem}")
    return None


def _unencodable_id(qids: list[str], docs: list[str]) -> InputError:
    """The error for the first query id or doc id of a mapping that cannot be UTF-8."""
    for qid, doc in zip(qids, docs, strict=True):
        if problem := not_utf8(qid):
            return InputError(f"a query id {qid!r} {problem}")
        if problem := not_utf8(doc):
            return InputError(f"a doc id of query {qid!r} {doc!r} {problem}")
    return InputError("an id of the mapping is not valid Unicode text")  # polars refused what Python encodes


def _object_token(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value if isinstance(value, str) else scalar_token(value, integral=False)


def frame_table(data: Any, kind: str, *, located: bool = True) -> TokenTable:
    """A table from a polars or pandas DataFrame or a pyarrow Table (columns matched by alias; rows located as
    ``row N``, unless ``located=False``)."""
    if isinstance(data, pl.LazyFrame):
        data = data.collect()
    if isinstance(data, pl.DataFrame):
        frame = data
    elif (type(data).__module__ or "").startswith("pyarrow"):
        frame = pl.DataFrame(pl.from_arrow(data))
    else:
        frame = _pandas_to_polars(data)
    return table_from_columns(frame, kind, Origin(None, "row"), located=located)


# ---------------------------------------------------------------------- dicts
def _id_token(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InputError(f"{what} must be a string or an integer; got {value!r}")


def scalar_token(value: Any, *, integral: bool) -> str | None:
    """Text token for a typed value: ints as is, floats exactly (whole floats as ints when ``integral``)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if integral and math.isfinite(value) and value == int(value):
            return str(int(value))
        return repr(value)
    if isinstance(value, str):
        return value
    return repr(value)


def mapping_table(data: Mapping[Any, Any], kind: str) -> TokenTable:
    """A table from ``{qid: {doc: grade}}`` / ``{qid: [docs]}`` (judgments) or ``{qid: {doc: score}}`` /
    ``{qid: [docs in rank order]}`` (runs). A list means grade 1 for each doc, or ranks 1, 2, ..."""
    qids: list[str] = []
    docs: list[str] = []
    values: list[str | None] = []
    ranks: list[str] = []
    shapes: set[str] = set()
    for key, entry in data.items():
        qid = _id_token(key, "a query id")
        if isinstance(entry, (str, bytes)):
            raise InputError(f"the entry of query {qid!r} must be a mapping doc -> "
                             f"{'grade' if kind == 'judgments' else 'score'} or a list of doc ids; "
                             f"got a string {entry!r}")
        if isinstance(entry, Mapping):
            shapes.add("mapping")
            for doc, value in entry.items():
                qids.append(qid)
                docs.append(_id_token(doc, f"a doc id of query {qid!r}"))
                values.append(scalar_token(value, integral=kind == "judgments"))
        elif isinstance(entry, Iterable):
            shapes.add("list")
            for position, doc in enumerate(entry, start=1):
                qids.append(qid)
                docs.append(_id_token(doc, f"a doc id of query {qid!r}"))
                values.append("1")
                ranks.append(str(position))
        else:
            raise InputError(f"the entry of query {qid!r} must be a mapping or a list of doc ids; "
                             f"got {type(entry).__name__}")
    columns: dict[str, Any] = {"query_id": qids, "doc_id": docs}
    if kind == "judgments":
        columns["grade"] = values
    elif shapes == {"mapping", "list"}:
        raise InputError("a run must give either scores for every query ({doc: score}) or an ordered list "
                         "for every query, not a mix")
    elif shapes == {"list"}:
        columns["rank"] = ranks
    else:
        columns["score"] = values
    try:
        frame = pl.DataFrame(columns, schema={c: pl.String for c in columns})
    except UnicodeEncodeError:  # an id polars cannot store: found and named only then, not checked per id
        raise _unencodable_id(qids, docs) from None
    frame = frame.with_row_index("_loc", offset=1).with_columns(pl.col("_loc").cast(pl.Int64))
    return TokenTable(frame, Origin(None, None))


# ---------------------------------------------------------------------- row checks
@dataclass(frozen=True)
class _Check:
    """One rule a row must pass: ``code`` names it (as the validator reports it), ``mask`` flags the rows
    that break it, ``describe`` says what is wrong with one of them and how to fix it."""

    code: str
    mask: pl.Expr
    describe: Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class RowProblem:
    """The rows that break one rule: its code, how many, where the first is and what is wrong with it."""

    code: str
    count: int
    loc: int | None
    message: str


def _about(row: dict[str, Any]) -> str:
    return f"query {row.get('query_id')!r}, doc {row.get('doc_id')!r}"


def _id_checks() -> list[_Check]:
    def missing(role: str) -> Callable[[dict[str, Any]], str]:
        def describe(row: dict[str, Any]) -> str:
            other = "doc_id" if role == "query_id" else "query_id"
            value = row.get(role)
            state = "empty" if value == "" else "missing"
            return (f"{state} {_LABEL[role]} (with {_LABEL[other]} {row.get(other)!r}); every entry needs a "
                    f"query id and a doc id")
        return describe

    checks = [_Check("missing-id", pl.col(c).is_null() | (pl.col(c) == ""), missing(c))
              for c in ("query_id", "doc_id")]
    return checks + [_control_check(c) for c in ("query_id", "doc_id")]


def _control_check(role: str) -> _Check:
    """Ids (and run tags) must not hold control characters: C0 (NUL ...), DEL, C1."""
    def describe(row: dict[str, Any]) -> str:
        value = str(row.get(role))
        char = next(ch for ch in value if _CONTROL.match(ch))
        where = f" ({_about(row)})" if role == "tag" else ""
        return (f"a control character (U+{ord(char):04X}) in the {_LABEL[role]} {value!r}{where}; ids must be "
                f"text without control characters: is the file binary or damaged?")
    return _Check("control-character", pl.col(role).str.contains(CONTROL_RE).fill_null(False), describe)


def _grade_message(row: dict[str, Any], float_grades: bool) -> str:
    value = row.get("grade")
    about = _about(row)
    if value is None:
        return f"missing relevance for {about}"
    token = value if isinstance(value, str) else repr(value)
    shown = repr(value)
    if isinstance(value, str) and _INT.match(value):
        return f"relevance {shown} for {about} is out of range (64-bit integers only)"
    if (isinstance(value, str) and _NONFINITE.match(value)) or (isinstance(value, float)
                                                                 and not math.isfinite(value)):
        return f"relevance must be a finite number; got {shown} for {about}"
    if not float_grades and (isinstance(value, float) or _FLOAT.match(token)):
        return (f"relevance must be an integer; got {shown} for {about}; use {option('float_grades')} to keep "
                f"fractional grades (they are never truncated)")
    if float_grades and _FLOAT.match(token):
        return f"relevance {shown} for {about} is out of range"
    kind = "a number" if float_grades else "an integer"
    return f"relevance must be {kind}; got {shown} for {about}; fix the value or remove the entry"


def _grade_checks(dtype: pl.DataType, float_grades: bool, where: str) -> list[_Check]:
    """Grades: ``missing-grade``, ``float-grade`` (a fractional grade without float_grades), ``bad-grade``."""
    g = pl.col("grade")
    if dtype == pl.String:
        if float_grades:
            valid = g.str.contains(FLOAT_RE) & g.cast(pl.Float64, strict=False).is_finite()
            fractional = pl.lit(False)
        else:
            valid = g.str.contains(INT_RE) & g.cast(pl.Int64, strict=False).is_not_null()
            fractional = (g.str.contains(FLOAT_RE) & ~g.str.contains(INT_RE)
                          & g.cast(pl.Float64, strict=False).is_finite())
    elif dtype.is_integer() or dtype == pl.Boolean or dtype == pl.Null:
        valid, fractional = pl.lit(True), pl.lit(False)
    elif dtype.is_float() or dtype.is_decimal():
        f = g.cast(pl.Float64)
        valid = f.is_finite()
        fractional = pl.lit(False)
        if not float_grades:
            fractional = valid & (f != f.floor())
            valid = valid & (f == f.floor()) & (f.abs() <= float(_INT64_MAX))
    else:
        raise InputError(f"{where}the relevance column has type {dtype}; relevance grades must be numbers")
    def describe(row: dict[str, Any]) -> str:
        return _grade_message(row, float_grades)
    invalid = g.is_not_null() & ~valid.fill_null(False)
    return [_Check("missing-grade", g.is_null(), describe),
            _Check("float-grade", invalid & fractional.fill_null(False), describe),
            _Check("bad-grade", invalid & ~fractional.fill_null(False), describe)]


def _score_message(row: dict[str, Any]) -> str:
    value = row.get("score")
    about = _about(row)
    if value is None:
        return (f"missing score for {about}; give every document a score (or none, and a rank or an order "
                f"instead)")
    token = value if isinstance(value, str) else repr(value)
    if (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str) and _NAN.match(value)):
        return (f"score is NaN for {about}; give a number, or read with {option('nan_score', '-inf')} to rank "
                f"such documents last")
    if _COMMA_DECIMAL.match(token):
        return (f"score must be a number; got {token!r} for {about}: decimal commas are not accepted, "
                f"write {token.replace(',', '.')!r}")
    return f"score must be a number; got {value!r} for {about}; fix the value (it is never read as 0)"


def _score_checks(dtype: pl.DataType, nan_is_error: bool, where: str) -> list[_Check]:
    """Scores: ``missing-score``, ``nan-score`` (unless nan_score= replaces them), ``bad-score``."""
    s = pl.col("score")
    if dtype == pl.String:
        nan = s.str.contains(NAN_RE).fill_null(False)
        number = ((s.str.contains(FLOAT_RE) | s.str.contains(NONFINITE_RE))
                  & s.cast(pl.Float64, strict=False).is_not_null()).fill_null(False)
        bad = s.is_not_null() & ~number
    elif dtype.is_numeric() or dtype == pl.Null:
        nan = s.is_nan().fill_null(False) if dtype.is_float() else pl.lit(False)
        bad = pl.lit(False)
    else:
        raise InputError(f"{where}the score column has type {dtype}; scores must be numbers")
    checks = [_Check("missing-score", s.is_null(), _score_message), _Check("bad-score", bad, _score_message)]
    if nan_is_error:
        checks.append(_Check("nan-score", nan, _score_message))
    return checks


def _rank_message(row: dict[str, Any]) -> str:
    value = row.get("rank")
    about = _about(row)
    if value is None:
        return f"missing rank for {about}"
    return f"rank must be an integer; got {value!r} for {about}"


def _rank_checks(dtype: pl.DataType, where: str) -> list[_Check]:
    r = pl.col("rank")
    if dtype == pl.String:
        bad = r.is_null() | ~(r.str.contains(INT_RE) & r.cast(pl.Int64, strict=False).is_not_null())
    elif dtype.is_integer() or dtype == pl.Null:
        bad = r.is_null()
    elif dtype.is_float():
        bad = r.is_null() | ~r.is_finite() | (r != r.floor()) | (r.abs() > float(_INT64_MAX))
    else:
        raise InputError(f"{where}the rank column has type {dtype}; ranks must be integers")
    return [_Check("bad-rank", bad.fill_null(True), _rank_message)]


def row_checks(frame: pl.DataFrame, kind: str, opts: JudgmentOptions | RunOptions, where: str = ""
               ) -> list[_Check]:
    """Every rule a row of a judgments or run table must pass under ``opts``: the readers raise the first
    row that breaks one, the validator reports each rule broken. ``frame`` has string ids."""
    checks = _id_checks()
    if kind == "judgments":
        assert isinstance(opts, JudgmentOptions)
        return checks + _grade_checks(frame.schema["grade"], opts.float_grades, where)
    assert isinstance(opts, RunOptions)
    if "score" in frame.columns:
        checks += _score_checks(frame.schema["score"], opts.nan_score is None, where)
    if "rank" in frame.columns:
        checks += _rank_checks(frame.schema["rank"], where)
    if "tag" in frame.columns:
        checks.append(_control_check("tag"))
    return checks


def row_problems(frame: pl.DataFrame, checks: list[_Check]) -> tuple[list[RowProblem], pl.Series]:
    """Each rule broken (with the count and the first row, in input order) and the mask of rows that
    break none."""
    if not checks or frame.height == 0:
        return [], pl.Series("ok", [True] * frame.height, dtype=pl.Boolean)
    flags = frame.select([c.mask.fill_null(True).alias(f"_p{i}") for i, c in enumerate(checks)])
    problems: dict[str, RowProblem] = {}
    for i, check in enumerate(checks):
        hits = flags[f"_p{i}"]
        count = int(hits.sum())
        if not count:
            continue
        index = int(hits.arg_max() or 0)
        row = frame.row(index, named=True)
        known = problems.get(check.code)
        if known is not None and (known.loc or 0) <= (row.get("_loc") or 0):
            problems[check.code] = RowProblem(check.code, known.count + count, known.loc, known.message)
            continue
        problems[check.code] = RowProblem(check.code, count + (known.count if known else 0), row.get("_loc"),
                                          check.describe(row))
    ok = ~flags.select(pl.any_horizontal(pl.all())).to_series()
    return list(problems.values()), ok


def _raise_first_problem(frame: pl.DataFrame, checks: list[_Check], origin: Origin) -> None:
    """Raise a FormatError for the first row (in input order) that fails any check."""
    if not checks or frame.height == 0:
        return
    flags = frame.select([c.mask.fill_null(True).alias(f"_p{i}") for i, c in enumerate(checks)])
    any_bad = flags.select(pl.any_horizontal(pl.all()).alias("bad")).to_series()
    if not any_bad.any():
        return
    if "_loc" not in frame.columns:
        raise NeedLocations
    index = int(any_bad.arg_max() or 0)
    row = frame.row(index, named=True)
    which = flags.row(index).index(True)
    message = checks[which].describe(row)
    text = next((str(row[c]) for c in ("grade", "score", "rank") if c in row and row[c] is not None), None)
    raise origin.error(message, row.get("_loc"), text=text)


def ensure_string_ids(frame: pl.DataFrame, where: str) -> pl.DataFrame:
    for col in ("query_id", "doc_id"):
        dtype = frame.schema[col]
        if dtype == pl.String:
            continue
        if dtype.is_float():
            raise InputError(f"{where}the {_LABEL[col]} column holds floats ({dtype}); ids must be strings "
                             f"(floats usually mean missing values or ids already turned into numbers)")
        try:
            frame = frame.with_columns(pl.col(col).cast(pl.String))
        except pl.exceptions.PolarsError:
            raise InputError(f"{where}the {_LABEL[col]} column has type {dtype}; ids must be "
                             f"strings") from None
    return frame


def strip_tokens(frame: pl.DataFrame, columns: Iterable[str]) -> pl.DataFrame:
    present = [c for c in columns if c in frame.columns and frame.schema[c] == pl.String]
    return frame.with_columns(pl.col(c).str.strip_chars(WS_CHARS) for c in present) if present else frame


def _warn_prefix(origin: Origin) -> str:
    return f"{origin.path}: " if origin.path else ""


def empty_error(kind: str, origin: Origin) -> InconsistentInputError:
    """The error for an input with no judgments or no ranked documents (``kind``: judgments or run)."""
    return InconsistentInputError(_warn_prefix(origin) + empty_message(kind, origin))


def empty_message(kind: str, origin: Origin) -> str:
    """Why an input without entries is refused, and the option that accepts it."""
    what = "judgments" if kind == "judgments" else "ranked documents"
    if origin.path:
        return (f"no {what} found: the file is empty or holds only comments and blank lines; pass "
                f"{option('allow_empty')} to accept an empty input")
    return (f"the {'judgments are' if kind == 'judgments' else 'run is'} empty (0 rows); pass "
            f"{option('allow_empty')} to accept an empty input")


# ---------------------------------------------------------------------- judgments
def finish_judgments(table: TokenTable, opts: JudgmentOptions) -> tuple[Judgments, list[str]]:
    """Check and convert a judgments table; returns the Judgments and the warnings to emit."""
    origin = table.origin
    where = _warn_prefix(origin)
    notes = list(table.notes)
    frame = table.frame if table.tokens_clean else strip_tokens(table.frame, ["grade"])
    if frame.height == 0:
        return _empty_judgments(table, opts, notes), []
    frame = ensure_string_ids(frame, where)
    _raise_first_problem(frame, row_checks(frame, "judgments", opts, where), origin)
    target = pl.Float64 if opts.float_grades else pl.Int64
    frame = frame.with_columns(pl.col("grade").cast(target))
    frame, id_notes, warns = normalize_id_columns(frame, opts.normalize_ids, where=where)
    notes += id_notes
    frame, dup_notes, dup_warns = resolve_judgment_duplicates(frame, opts.on_conflict, origin)
    notes += dup_notes
    warns += dup_warns
    if opts.scale is not None:
        warns += scale_warnings(frame, opts.scale, where)
    keep = ["query_id", "doc_id", "grade", *table.provenance]
    judgments = Judgments(frame.select(keep), source=origin.path, notes=notes, query_texts=table.query_texts)
    return judgments, warns


def _empty_judgments(table: TokenTable, opts: JudgmentOptions, notes: list[str]) -> Judgments:
    if not opts.allow_empty:
        raise empty_error("judgments", table.origin)
    schema = {"query_id": pl.String, "doc_id": pl.String,
              "grade": pl.Float64 if opts.float_grades else pl.Int64}
    notes.append("empty input accepted (allow_empty=True)")
    return Judgments(pl.DataFrame(schema=schema), source=table.origin.path, notes=notes,
                     query_texts=table.query_texts)


_PAIR = ["query_id", "doc_id"]


def resolve_judgment_duplicates(frame: pl.DataFrame, on_conflict: str, origin: Origin, *,
                                problems: list[RowProblem] | None = None) -> tuple[pl.DataFrame, list[str], list[str]]:
    """Collapse repeated judgments (with a warning) and resolve conflicting ones by ``on_conflict``; with
    ``on_conflict="error"`` a conflict is raised, or, given ``problems``, recorded there (the first grade kept).
    Returns the frame, the notes and the warnings."""
    if not has_duplicate_pairs(frame):
        return frame, [], []
    indexed = frame.with_row_index("_i").with_columns(
        pl.len().over(_PAIR).alias("_n"), pl.col("grade").n_unique().over(_PAIR).alias("_u"))
    conflicting = indexed.filter(pl.col("_u") > 1)
    identical = indexed.filter((pl.col("_n") > 1) & (pl.col("_u") == 1))
    notes: list[str] = []
    warns: list[str] = []
    if conflicting.height and on_conflict == "error":
        if problems is None:
            raise _conflict_error(conflicting, origin)
        problems.append(conflict_problem(conflicting, origin))
    keys, descending = {"first": (["_i"], [False]), "last": (["_i"], [True]),
                        "max": (["grade", "_i"], [True, False]), "min": (["grade", "_i"], [False, False]),
                        "error": (["_i"], [False])}[on_conflict]
    resolved = (indexed.sort(keys, descending=descending)
                .unique(subset=_PAIR, keep="first", maintain_order=True).sort("_i"))
    if identical.height:
        pairs = identical.select(_PAIR).n_unique()
        first = identical.row(0, named=True)
        dropped = identical.height - pairs
        notes.append(f"identical duplicate judgments collapsed ({dropped} row(s) dropped)")
        warns.append(f"{_warn_prefix(origin)}{dropped} duplicate judgment row(s) repeat the same grade "
                     f"(first: query {first['query_id']!r}, doc {first['doc_id']!r}); collapsed to one "
                     f"judgment per document")
    if conflicting.height and on_conflict != "error":
        dropped = conflicting.height - conflicting.select(_PAIR).n_unique()
        notes.append(f"conflicting duplicate judgments resolved with on_conflict={on_conflict!r} "
                     f"({dropped} row(s) dropped)")
    return resolved.drop("_i", "_n", "_u"), notes, warns


def _conflict_error(conflicting: pl.DataFrame, origin: Origin) -> InconsistentInputError:
    problem = conflict_problem(conflicting, origin)
    return InconsistentInputError(origin.prefix(problem.loc) + problem.message)


def conflict_problem(conflicting: pl.DataFrame, origin: Origin) -> RowProblem:
    """Documents judged twice with different grades: where the first conflict is and what to do."""
    if "_loc" not in conflicting.columns:
        raise NeedLocations
    first = conflicting.row(0, named=True)
    rows = conflicting.filter((pl.col("query_id") == first["query_id"])
                              & (pl.col("doc_id") == first["doc_id"]))
    other = rows.filter(pl.col("grade") != first["grade"]).row(0, named=True)
    pairs = conflicting.select(_PAIR).n_unique()
    return RowProblem("conflicting-judgment", pairs, other["_loc"], (
        f"conflicting judgments for query {first['query_id']!r}, doc {first['doc_id']!r}: grade "
        f"{_num(other['grade'])} here, grade {_num(first['grade'])} {origin.at(first['_loc'])} ({pairs} "
        f"conflicting pair(s) in all); give each document one grade per query, or read with "
        f"{option('on_conflict', ('max', 'min', 'first', 'last'))}"))


def scale_warnings(frame: pl.DataFrame, scale: tuple[float, float], where: str) -> list[str]:
    lo, hi = scale
    g = pl.col("grade")
    outside = frame.filter((g > hi) | ((g < lo) & (g >= 0)))
    if not outside.height:
        return []
    first = outside.row(0, named=True)
    return [f"{where}{outside.height} grade(s) outside the declared scale {_num(lo)}..{_num(hi)} (first: "
            f"{first['grade']} for query {first['query_id']!r}, doc {first['doc_id']!r}); kept as given"]


def _num(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


# ---------------------------------------------------------------------- runs
def finish_run(table: TokenTable, opts: RunOptions) -> tuple[Run, list[str]]:
    """Check and convert a run table; returns the Run and the warnings to emit."""
    origin = table.origin
    where = _warn_prefix(origin)
    notes = list(table.notes)
    frame = table.frame if table.tokens_clean else strip_tokens(table.frame, ["score", "rank"])
    name = opts.name
    if frame.height == 0:
        return _empty_run(table, opts, notes), []
    frame = ensure_string_ids(frame, where)
    _raise_first_problem(frame, row_checks(frame, "run", opts, where), origin)
    frame, value_notes, warns = convert_run_values(frame, opts, where)
    notes += value_notes
    frame, id_notes, id_warns = normalize_id_columns(frame, opts.normalize_ids, where=where)
    notes += id_notes
    warns = id_warns + warns
    frame, dup_notes = resolve_run_duplicates(frame, opts.on_duplicate, origin)
    notes += dup_notes
    if "tag" in frame.columns:
        tag, tag_warns = run_tag(frame, where, name)
        warns += tag_warns
        name = name if name is not None else tag
    if name is None:
        name = table.default_name
    # everything Run() checks has been checked above, with line numbers: hand the frame over as it is
    score = pl.col("score").cast(pl.Float64) if "score" in frame.columns else pl.lit(None, pl.Float64).alias("score")
    rank = pl.col("rank").cast(pl.Int64) if "rank" in frame.columns else pl.lit(None, pl.Int64).alias("rank")
    columns = [pl.col("query_id"), pl.col("doc_id"), score, rank]
    return Run._from_validated(frame.select(columns), name=name or "run", source=origin.path, notes=notes), warns


def _empty_run(table: TokenTable, opts: RunOptions, notes: list[str]) -> Run:
    if not opts.allow_empty:
        raise empty_error("run", table.origin)
    notes.append("empty input accepted (allow_empty=True)")
    frame = pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64,
                                 "rank": pl.Int64})
    return Run(frame, name=opts.name or table.default_name, source=table.origin.path, notes=notes)


def convert_run_values(frame: pl.DataFrame, opts: RunOptions, where: str
                        ) -> tuple[pl.DataFrame, list[str], list[str]]:
    notes: list[str] = []
    warns: list[str] = []
    if "rank" in frame.columns:
        frame = frame.with_columns(pl.col("rank").cast(pl.Int64))
    if "score" not in frame.columns:
        return frame, notes, warns
    frame = frame.with_columns(pl.col("score").cast(pl.Float64))
    infinite = frame.filter(pl.col("score").is_infinite())
    if infinite.height:
        first = infinite.row(0, named=True)
        warns.append(infinite_scores_warning(where, infinite.height, first["score"], first["query_id"],
                                             first["doc_id"]))
    if opts.nan_score is not None:
        n_nan = frame.select(pl.col("score").is_nan().sum()).item()
        if n_nan:
            frame = frame.with_columns(
                pl.when(pl.col("score").is_nan()).then(pl.lit(opts.nan_score)).otherwise(pl.col("score"))
                .alias("score"))
            notes.append(nan_scores_note(n_nan, opts.nan_score))
    return frame, notes, warns


def infinite_scores_warning(where: str, count: int, score: float, query_id: str, doc_id: str) -> str:
    """The warning for ``count`` infinite scores, the first being ``score`` for ``query_id``, ``doc_id``."""
    return (f"{where}{count} infinite score(s) accepted (first: {score} for query {query_id!r}, doc "
            f"{doc_id!r}); they rank before (inf) or after (-inf) every finite score")


def nan_scores_note(count: int, replacement: float) -> str:
    """The note for ``count`` NaN scores replaced with ``replacement`` (``nan_score=``)."""
    text = _num_text(replacement)
    return f"{count} NaN score(s) replaced with {text} ({option('nan_score', text)})"


def _num_text(value: float) -> str:
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return _num(value)


def resolve_run_duplicates(frame: pl.DataFrame, on_duplicate: str, origin: Origin, *,
                           problems: list[RowProblem] | None = None) -> tuple[pl.DataFrame, list[str]]:
    """Resolve documents listed twice for a query by ``on_duplicate``; with ``"error"`` the duplicate is
    raised, or, given ``problems``, recorded there (the first line kept). Returns the frame and the notes."""
    if not has_duplicate_pairs(frame):
        return frame, []
    if on_duplicate == "error":
        if problems is None:
            raise _duplicate_error(frame, origin)
        problems.append(duplicate_problem(frame, origin))
    indexed = frame.with_row_index("_i")
    if on_duplicate == "max" and "score" in frame.columns:
        keys, descending = ["score", "_i"], [True, False]
    elif on_duplicate == "max" and "rank" in frame.columns:
        keys, descending = ["rank", "_i"], [False, False]
    else:
        keys, descending = ["_i"], [False]
    resolved = (indexed.sort(keys, descending=descending)
                .unique(subset=_PAIR, keep="first", maintain_order=True).sort("_i").drop("_i"))
    dropped = frame.height - resolved.height
    if on_duplicate == "error":
        return resolved, []
    return resolved, [duplicates_resolved_note(on_duplicate, dropped)]


def duplicates_resolved_note(on_duplicate: str, dropped: int) -> str:
    """The note for duplicate docs resolved with ``on_duplicate`` (``dropped`` rows)."""
    return f"duplicate docs resolved with {option('on_duplicate', on_duplicate)} ({dropped} row(s) dropped)"


def _first_duplicate(frame: pl.DataFrame) -> tuple[str, str, int, int, int]:
    """The first document listed twice for a query (``frame`` has one, with locations): query id, doc id,
    its first two locations and the number of duplicate rows in all."""
    if "_loc" not in frame.columns:
        raise NeedLocations
    dups = frame.filter(pl.struct(_PAIR).is_duplicated())
    first = dups.row(0, named=True)
    same = dups.filter((pl.col("query_id") == first["query_id"]) & (pl.col("doc_id") == first["doc_id"]))
    second = same.row(1, named=True)
    extra = dups.height - dups.select(_PAIR).n_unique()
    return first["query_id"], first["doc_id"], first["_loc"], second["_loc"], extra


def _duplicate_error(frame: pl.DataFrame, origin: Origin) -> DuplicateError:
    return duplicate_error(origin, *_first_duplicate(frame))


def duplicate_problem(frame: pl.DataFrame, origin: Origin) -> RowProblem:
    """A document listed twice for a query in a run (``frame`` has one): both places and what to do."""
    query_id, doc_id, first, second, extra = _first_duplicate(frame)
    return RowProblem("duplicate-doc", extra, second, _duplicate_message(origin, query_id, doc_id, first, second,
                                                                         extra))


def duplicate_error(origin: Origin, query_id: str, doc_id: str, first: int, second: int,
                    extra: int) -> DuplicateError:
    """The error for ``doc_id`` listed twice for ``query_id`` (at locations ``first`` and ``second``), with
    ``extra`` duplicate rows in all."""
    return DuplicateError(origin.prefix(second) + _duplicate_message(origin, query_id, doc_id, first, second, extra),
                          query_id=query_id, doc_id=doc_id, locations=(first, second), extra=extra)


def _duplicate_message(origin: Origin, query_id: str, doc_id: str, first: int, second: int, extra: int) -> str:
    locs = _two_locations(origin, first, second)
    return (f"duplicate doc {doc_id!r} for query {query_id!r} ({locs}{extra} duplicate row(s) in all); keep one "
            f"line per document, or read with {option('on_duplicate', ('first', 'max'))}")


def _two_locations(origin: Origin, a: int, b: int) -> str:
    """``"lines 3 and 7; "``, ``"line 3, twice; "``, ``"records 2 and 5; "`` or ``""``."""
    if not origin.unit:
        return ""
    if a == b:
        return f"{origin.unit} {a}, twice; "
    return f"{origin.unit}s {a} and {b}; "


def run_tag(frame: pl.DataFrame, where: str, name: str | None) -> tuple[str, list[str]]:
    tags = frame["tag"].unique(maintain_order=True)
    first = str(tags[0])
    if tags.len() <= 1:
        return first, []
    return first, [run_tags_warning(where, tags.len(), first, str(tags[1]), name)]


def run_tags_warning(where: str, count: int, first: str, second: str, name: str | None) -> str:
    """The warning for ``count`` distinct run tags (``first``, ``second`` in input order); ``name`` is the
    name= given, if any."""
    if name is not None:
        chosen = f"using {name!r} (name=)"
    else:
        chosen = f"using the first line's tag {first!r} as the run name (pass {option('name', ...)} to choose one)"
    return (f"{where}the run tags differ ({count} distinct: {first!r}, {second!r}"
            f"{', ...' if count > 2 else ''}); {chosen}")
