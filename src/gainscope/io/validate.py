"""``gainscope validate FILE...``: every problem of judgment and run files, reported, never raised.

:func:`validate_files` reads each file the way the readers do (same formats, same token rules), but
collects what it finds as :class:`Issue` values instead of stopping at the first problem:

* per file: whether it holds judgments or a run (detected, or given with ``kinds=``) and its format;
  lines that cannot be used (column count, header row, undecodable bytes); missing ids; non-numeric,
  NaN and infinite scores; non-numeric, fractional and negative grades; non-integer ranks; duplicate
  documents (with both lines), identical and conflicting duplicate judgments; groups of tied scores; a
  rank column that disagrees with the scores; differing run tags; ids that are not Unicode NFC; a byte
  order mark; counts of blank and comment lines;
* across files, for each judgments/run pair: queries in both, judged only, ranked only; how many of
  the run's documents are judged; a hint when ids match only after stripping whitespace or leading
  zeros (``"001"`` vs ``"1"``), or after Unicode normalisation.

Each issue names its file and, where it has one, its line; one issue per kind of problem and file, with
the first occurrence and the count. Severities: ``"error"`` (reading would fail), ``"warning"`` (reading
succeeds but the numbers may not mean what you think), ``"info"`` (facts worth knowing).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gainscope.deferred import deferred_module
from gainscope.errors import GainscopeError, InputError, PolicyError
from gainscope.io.detect import check_kind, detect_text_format, guess_kind
from gainscope.io.frames import (
    FLOAT_RE,
    INT_RE,
    NAN_RE,
    NONFINITE_RE,
    WS_CHARS,
    TokenTable,
)
from gainscope.io.jsonl import load_json_table
from gainscope.io.tabular import load_tabular_table
from gainscope.io.text import TextFile
from gainscope.io.trec import LAYOUTS, LineProblem, LineStats, careful_table

if TYPE_CHECKING:
    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = ["Issue", "validate_files"]

_SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Issue:
    """One finding of :func:`validate_files`.

    ``severity`` is ``"error"``, ``"warning"`` or ``"info"``; ``path`` and ``line`` say where (``line`` is
    None for whole-file findings and for formats without lines); ``code`` is a short kebab-case name
    (``"duplicate-doc"``); ``message`` says what, where, what was found and how to fix it.
    """

    severity: str
    path: str | None
    line: int | None
    code: str
    message: str

    def __post_init__(self) -> None:
        if self.severity not in _SEVERITIES:
            raise PolicyError(f"severity must be one of {_SEVERITIES}; got {self.severity!r}")

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.path and self.line is not None else (self.path or "")
        return f"{where}: {self.severity}: {self.message} [{self.code}]"


@dataclass
class _Checked:
    """A file's usable rows after validation, for the cross-file checks."""

    path: str
    kind: str
    frame: pl.DataFrame


# ---------------------------------------------------------------------- entry point
def validate_files(paths: Iterable[str | os.PathLike[str]], *,
                   kinds: Sequence[str | None] | Mapping[str, str] | None = None) -> list[Issue]:
    """Check judgment and run files; return every issue found (data problems are never raised).

    ``kinds`` gives ``"judgments"`` or ``"run"`` for files whose kind cannot be detected: a sequence
    parallel to ``paths`` (None to detect) or a mapping from path to kind.
    """
    path_list = [os.fspath(p) for p in paths]
    kind_list = _kinds(path_list, kinds)
    issues: list[Issue] = []
    checked: list[_Checked] = []
    for path, kind in zip(path_list, kind_list, strict=True):
        file_issues, result = _validate_file(path, kind)
        issues += file_issues
        if result is not None:
            checked.append(result)
    issues += _cross_checks(checked)
    return issues


def _kinds(paths: list[str], kinds: Sequence[str | None] | Mapping[str, str] | None) -> list[str | None]:
    if kinds is None:
        return [None] * len(paths)
    if isinstance(kinds, Mapping):
        chosen: list[str | None] = [kinds.get(p) for p in paths]
    else:
        chosen = list(kinds)
        if len(chosen) != len(paths):
            raise PolicyError(f"kinds must give one kind per path ({len(paths)}); got {len(chosen)}")
    return [None if k is None else check_kind(k) for k in chosen]


def _validate_file(path: str, kind: str | None) -> tuple[list[Issue], _Checked | None]:
    try:
        src = TextFile(path)
    except GainscopeError as exc:
        return [Issue("error", path, None, "unreadable", str(exc))], None
    kind = kind or guess_kind(src)
    if kind is None:
        return [Issue("error", path, None, "unknown-kind",
                      "cannot tell whether this file holds judgments or a run; pass kinds= "
                      "(gainscope validate --kind)")], None
    try:
        fmt = detect_text_format(src, kind)
        issues = [Issue("info", path, None, "format", f"read as {kind} in {fmt!r} format")]
        table, read_issues = _load(src, kind, fmt)
    except InputError as exc:
        line = getattr(exc, "line", None)
        message = str(exc).removeprefix(f"{path}:{line}: " if line else f"{path}: ")
        return [Issue("error", path, line, "unreadable", message)], None
    issues += read_issues
    analysis = _Analysis(table, kind)
    issues += analysis.issues
    return issues, _Checked(path, kind, analysis.frame)


def _load(src: TextFile, kind: str, fmt: str) -> tuple[TokenTable, list[Issue]]:
    issues: list[Issue] = []
    if (kind, fmt) in LAYOUTS:
        stats = LineStats()
        problems: list[LineProblem] = []
        table = careful_table(src, LAYOUTS[(kind, fmt)], stats=stats, problems=problems)
        issues += _line_problem_issues(src.name, problems)
        issues += _stats_issues(src.name, stats, kind)
        return table, issues
    if src.has_bom():
        issues.append(_bom_issue(src.name))
    if fmt in ("json", "jsonl"):
        return load_json_table(src, kind, fmt), issues
    table = load_tabular_table(src, kind, fmt)
    return table, issues


def _line_problem_issues(path: str, problems: list[LineProblem]) -> list[Issue]:
    issues: list[Issue] = []
    seen: dict[str, list[LineProblem]] = {}
    for problem in problems:
        seen.setdefault(problem.code, []).append(problem)
    for code, group in seen.items():
        first = group[0]
        more = f" ({len(group) - 1} more line(s) like this)" if len(group) > 1 else ""
        issues.append(Issue("error", path, first.line, code, first.message + more))
    return issues


def _bom_issue(path: str) -> Issue:
    return Issue("info", path, 1, "bom", "the file starts with a UTF-8 byte order mark; gainscope drops it, "
                 "but some tools (trec_eval) read it as part of the first query id")


def _stats_issues(path: str, stats: LineStats, kind: str) -> list[Issue]:
    issues = [_bom_issue(path)] if stats.bom else []
    if stats.blank:
        note = " (trec_eval refuses blank lines in qrels)" if kind == "judgments" else ""
        issues.append(Issue("info", path, None, "blank-lines", f"{stats.blank} blank line(s) skipped{note}"))
    if stats.comments:
        issues.append(Issue("info", path, None, "comment-lines",
                            f"{stats.comments} comment line(s) ('#' in column 1) skipped (trec_eval before "
                            f"version 10 refuses them)"))
    return issues


# ---------------------------------------------------------------------- one file's rows
def _strip(frame: pl.DataFrame, columns: Sequence[str]) -> pl.DataFrame:
    present = [c for c in columns if c in frame.columns and frame.schema[c] == pl.String]
    return frame.with_columns(pl.col(c).str.strip_chars(WS_CHARS) for c in present)


class _Analysis:
    """Vectorised checks of one table; ``issues`` found, ``frame`` the usable rows (typed)."""

    def __init__(self, table: TokenTable, kind: str) -> None:
        self.origin = table.origin
        self.path = table.origin.path
        self.issues: list[Issue] = []
        frame = _strip(table.frame, ["grade", "score", "rank"])
        if "_loc" not in frame.columns:
            frame = frame.with_row_index("_loc", offset=1).with_columns(pl.col("_loc").cast(pl.Int64))
        frame = self._ids(frame)
        if kind == "judgments":
            self.frame = self._judgments(frame)
        else:
            self.frame = self._run(frame)
        self._nfc(self.frame)

    # -------------------------------------------------------------- helpers
    def _add(self, severity: str, code: str, message: str, loc: int | None = None) -> None:
        line = loc if self.origin.unit == "line" else None
        ref = self.origin.ref(loc) if self.origin.unit not in (None, "line") else ""
        self.issues.append(Issue(severity, self.path, line, code, f"{ref}: {message}" if ref else message))

    def _report(self, frame: pl.DataFrame, mask: pl.Expr, severity: str, code: str, what: str,
                fix: str, column: str | None = None) -> None:
        """One issue for the rows of ``frame`` matching ``mask``: count, first row, fix."""
        hits = frame.filter(mask)
        if not hits.height:
            return
        row = hits.row(0, named=True)
        got = f"{row[column]!r} for " if column else ""
        self._add(severity, code, f"{hits.height} {what} (first: {got}query {row['query_id']!r}, doc "
                  f"{row['doc_id']!r}); {fix}", row["_loc"])

    def _ids(self, frame: pl.DataFrame) -> pl.DataFrame:
        frame = frame.with_columns(pl.col(c).cast(pl.String) for c in ("query_id", "doc_id")
                                   if frame.schema[c] != pl.String)
        missing = pl.col("query_id").is_null() | (pl.col("query_id") == "") | pl.col("doc_id").is_null() | (
            pl.col("doc_id") == "")
        self._report(frame, missing, "error", "missing-id", "row(s) without a query id or a doc id",
                     "give every entry both ids")
        return frame.filter(~missing)

    # -------------------------------------------------------------- judgments
    def _judgments(self, frame: pl.DataFrame) -> pl.DataFrame:
        g = pl.col("grade")
        if frame.schema["grade"] == pl.String:
            is_int = g.str.contains(INT_RE) & g.cast(pl.Int64, strict=False).is_not_null()
            is_float = g.str.contains(FLOAT_RE) & g.cast(pl.Float64, strict=False).is_finite() & ~is_int
            frame = frame.with_columns(is_int.fill_null(False).alias("_int"),
                                       is_float.fill_null(False).alias("_float"))
        elif frame.schema["grade"].is_numeric() or frame.schema["grade"] == pl.Boolean:
            f = g.cast(pl.Float64)
            frame = frame.with_columns((f.is_finite() & (f == f.floor())).fill_null(False).alias("_int"),
                                       (f.is_finite() & (f != f.floor())).fill_null(False).alias("_float"))
        else:
            self._add("error", "bad-grade", f"the relevance column has type {frame.schema['grade']}; grades "
                      f"must be numbers")
            return frame.clear().select("query_id", "doc_id", pl.col("grade").cast(pl.Float64, strict=False))
        self._report(frame, g.is_null(), "error", "missing-grade", "row(s) without a grade", "give every "
                     "judgment a grade")
        self._report(frame, g.is_not_null() & ~pl.col("_int") & ~pl.col("_float"), "error", "bad-grade",
                     "grade(s) that are not numbers", "grades must be integers; fix or remove them",
                     column="grade")
        self._report(frame, pl.col("_float"), "warning", "float-grade", "fractional grade(s)",
                     "reading them needs float_grades=True (trec_eval would truncate them)", column="grade")
        frame = frame.filter(pl.col("_int") | pl.col("_float")).with_columns(g.cast(pl.Float64))
        self._report(frame, g < 0, "info", "negative-grade", "negative grade(s)", "kept as given; by default "
                     "they mean 'pooled but unjudged' (trec_eval): never relevant", column="grade")
        self._judgment_duplicates(frame)
        self._summary_judgments(frame)
        return frame.select("query_id", "doc_id", "grade")

    def _judgment_duplicates(self, frame: pl.DataFrame) -> None:
        pair = ["query_id", "doc_id"]
        dups = frame.filter(pl.struct(pair).is_duplicated())
        if not dups.height:
            return
        dups = dups.with_columns(pl.col("grade").n_unique().over(pair).alias("_u"))
        same = dups.filter(pl.col("_u") == 1)
        if same.height:
            row = same.row(0, named=True)
            extra = same.height - same.select(pair).n_unique()
            self._add("warning", "duplicate-judgment",
                      f"{extra} duplicate judgment row(s) repeat the same grade (first: query "
                      f"{row['query_id']!r}, doc {row['doc_id']!r}); readers collapse them, trec_eval stops "
                      f"with 'duplicate docs': keep one line per document", _second_loc(same, row))
        conflicting = dups.filter(pl.col("_u") > 1)
        if conflicting.height:
            first = conflicting.row(0, named=True)
            rows = conflicting.filter((pl.col("query_id") == first["query_id"])
                                      & (pl.col("doc_id") == first["doc_id"]))
            other = rows.filter(pl.col("grade") != first["grade"]).row(0, named=True)
            pairs = conflicting.select(pair).n_unique()
            self._add("error", "conflicting-judgment",
                      f"{pairs} document(s) judged twice with different grades (first: query "
                      f"{first['query_id']!r}, doc {first['doc_id']!r}: {_num(other['grade'])} here, "
                      f"{_num(first['grade'])} at {self.origin.ref(first['_loc']) or 'an earlier entry'}); "
                      f"keep one grade, or read with on_conflict='max', 'min', 'first' or 'last'",
                      other["_loc"])

    def _summary_judgments(self, frame: pl.DataFrame) -> None:
        if not frame.height:
            self._add("error", "empty", "no judgments found; readers refuse an empty input unless "
                      "allow_empty=True")
            return
        queries = frame["query_id"].n_unique()
        lo, hi = frame["grade"].min(), frame["grade"].max()
        self._add("info", "summary", f"{frame.height} judgment(s) for {queries} queries; grades "
                  f"{_num(lo)}..{_num(hi)}")

    # -------------------------------------------------------------- runs
    def _run(self, frame: pl.DataFrame) -> pl.DataFrame:
        usable = pl.lit(True)
        if "score" in frame.columns:
            frame, usable = self._scores(frame)
        if "rank" in frame.columns:
            r = pl.col("rank")
            if frame.schema["rank"] == pl.String:
                ok = (r.str.contains(INT_RE) & r.cast(pl.Int64, strict=False).is_not_null()).fill_null(False)
            else:
                ok = r.is_not_null() & (r.cast(pl.Float64) == r.cast(pl.Float64).floor()).fill_null(False)
            self._report(frame, ~ok, "error", "bad-rank", "rank(s) that are not integers",
                         "ranks must be integers", column="rank")
            usable = usable & ok
        frame = frame.filter(usable)
        if "rank" in frame.columns:
            frame = frame.with_columns(pl.col("rank").cast(pl.Int64))
        self._run_duplicates(frame)
        if "score" in frame.columns:
            self._ties(frame)
            if "rank" in frame.columns:
                self._rank_order(frame)
        if "tag" in frame.columns:
            self._tags(frame)
        self._summary_run(frame)
        columns = ["query_id", "doc_id"] + [c for c in ("score", "rank") if c in frame.columns]
        return frame.select(columns)

    def _scores(self, frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.Expr]:
        s = pl.col("score")
        if frame.schema["score"] == pl.String:
            number = ((s.str.contains(FLOAT_RE) | s.str.contains(NONFINITE_RE))
                      & s.cast(pl.Float64, strict=False).is_not_null()).fill_null(False)
            comma = s.str.contains(r"^[+-]?[0-9]*,[0-9]+$").fill_null(False)
            self._report(frame, s.is_null(), "error", "missing-score", "row(s) without a score",
                         "give every document a score, or none")
            self._report(frame, comma, "error", "bad-score", "score(s) with a decimal comma",
                         "write 0.9, not 0,9 (trec_eval silently reads them as 0)", column="score")
            self._report(frame, s.is_not_null() & ~number & ~comma, "error", "bad-score",
                         "score(s) that are not numbers", "fix them (trec_eval silently reads them as 0)",
                         column="score")
            frame = frame.with_columns(pl.when(number).then(s.cast(pl.Float64, strict=False)).alias("score"),
                                       s.str.contains(NAN_RE).fill_null(False).alias("_nan"))
        else:
            number = s.cast(pl.Float64)
            frame = frame.with_columns(number, number.is_nan().fill_null(False).alias("_nan"))
            self._report(frame, s.is_null(), "error", "missing-score", "row(s) without a score",
                         "give every document a score, or none")
        self._report(frame, pl.col("_nan"), "error", "nan-score", "NaN score(s)",
                     "give numbers, or read with nan_score='-inf' to rank them last")
        self._report(frame, pl.col("score").is_infinite(), "warning", "inf-score", "infinite score(s)",
                     "accepted; they rank before (inf) or after (-inf) every finite score", column="score")
        return frame, pl.col("score").is_not_null() & ~pl.col("_nan")

    def _run_duplicates(self, frame: pl.DataFrame) -> None:
        pair = ["query_id", "doc_id"]
        dups = frame.filter(pl.struct(pair).is_duplicated())
        if not dups.height:
            return
        first = dups.row(0, named=True)
        extra = dups.height - dups.select(pair).n_unique()
        second = _second_loc(dups, first)
        where = self.origin.ref(first["_loc"]) or "an earlier entry"
        self._add("error", "duplicate-doc",
                  f"{extra} duplicate document row(s) (first: doc {first['doc_id']!r} for query "
                  f"{first['query_id']!r}, here and at {where}); keep one line per document, or read with "
                  f"on_duplicate='first' or 'max'", second)

    def _ties(self, frame: pl.DataFrame) -> None:
        tied = (frame.filter(pl.col("score").is_not_null())
                .group_by("query_id", "score").agg(pl.len().alias("n")).filter(pl.col("n") > 1))
        if not tied.height:
            return
        rows = int(tied["n"].sum())
        self._add("warning", "score-ties",
                  f"{tied.height} group(s) of tied scores ({rows} rows in {tied['query_id'].n_unique()} "
                  f"queries); tied documents are ordered by the ties policy (default: doc id descending, as "
                  f"trec_eval), so their order in the file does not count; use ties='rank' to keep it")

    def _rank_order(self, frame: pl.DataFrame) -> None:
        ordered = frame.filter(pl.col("score").is_not_null() & pl.col("rank").is_not_null()).sort(
            "query_id", "rank")
        steps = ordered.with_columns(pl.col("score").diff().over("query_id").alias("_d"))
        rising = steps.filter(pl.col("_d") > 0)
        if not rising.height:
            return
        falling = steps.filter(pl.col("_d") < 0).height
        row = rising.row(0, named=True)
        queries = rising["query_id"].n_unique()
        hint = ("scores grow with rank: are they distances? negate them" if falling == 0
                else "evaluation orders by score (as trec_eval); use ties='rank' only if the rank column "
                     "is the order you mean")
        self._add("warning", "rank-contradicts-score",
                  f"in {queries} queries the rank column disagrees with the scores (first: query "
                  f"{row['query_id']!r}, rank {row['rank']} has a higher score than the rank before it); "
                  f"{hint}", row["_loc"])

    def _tags(self, frame: pl.DataFrame) -> None:
        tags = frame["tag"].unique(maintain_order=True)
        if tags.len() > 1:
            self._add("warning", "mixed-tags", f"{tags.len()} different run tags ({tags[0]!r}, {tags[1]!r}"
                      f"{', ...' if tags.len() > 2 else ''}); readers name the run after the first one "
                      f"(trec_eval after the last); split the file or pass name=")

    def _summary_run(self, frame: pl.DataFrame) -> None:
        if not frame.height:
            self._add("error", "empty", "no ranked documents found; readers refuse an empty input unless "
                      "allow_empty=True")
            return
        content = "scores and ranks" if {"score", "rank"} <= set(frame.columns) else (
            "scores" if "score" in frame.columns else "ranks only")
        self._add("info", "summary", f"{frame.height} ranked document(s) for {frame['query_id'].n_unique()} "
                  f"queries ({content})")

    # -------------------------------------------------------------- ids
    def _nfc(self, frame: pl.DataFrame) -> None:
        for col, label in (("query_id", "query"), ("doc_id", "doc")):
            values = frame[col]
            odd = values.filter(values.str.contains(r"[^\x00-\x7F]")).unique(maintain_order=True)
            odd = odd.filter(odd != odd.str.normalize("NFC"))
            if odd.len():
                self._add("warning", "non-nfc-id",
                          f"{odd.len()} distinct {label} id(s) are not in Unicode NFC form, e.g. "
                          f"{odd[0]!r}; ids that look the same may not match; read with "
                          f"normalize_ids='NFC'")
                return


def _second_loc(dups: pl.DataFrame, first: dict[str, object]) -> int | None:
    same = dups.filter((pl.col("query_id") == first["query_id"]) & (pl.col("doc_id") == first["doc_id"]))
    return same["_loc"][1] if same.height > 1 else None


def _num(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# ---------------------------------------------------------------------- across files
def _cross_checks(checked: list[_Checked]) -> list[Issue]:
    issues: list[Issue] = []
    judgments = [c for c in checked if c.kind == "judgments"]
    runs = [c for c in checked if c.kind == "run"]
    for qrels in judgments:
        for run in runs:
            issues += _pair_issues(qrels, run)
    return issues


def _examples(values: pl.Series, limit: int = 3) -> str:
    shown = ", ".join(repr(v) for v in values.head(limit).to_list())
    return shown + (", ..." if values.len() > limit else "")


def _pair_issues(qrels: _Checked, run: _Checked) -> list[Issue]:
    judged = qrels.frame["query_id"].unique(maintain_order=True)
    ranked = run.frame["query_id"].unique(maintain_order=True)
    both = ranked.filter(ranked.is_in(judged.implode()))
    only_judged = judged.filter(~judged.is_in(ranked.implode()))
    only_ranked = ranked.filter(~ranked.is_in(judged.implode()))
    vs = f"{run.path} vs {qrels.path}"
    issues: list[Issue] = []
    if both.len() == 0 and judged.len() and ranked.len():
        hint = _id_hint(judged, ranked, "query")
        issues.append(Issue("error", run.path, None, "no-query-overlap",
                            f"no query of the run is judged in {qrels.path} (run: {_examples(ranked)}; "
                            f"judgments: {_examples(judged)})"
                            f"{hint or '; check that both files use the same query ids'}"))
        return issues
    issues.append(Issue("info", run.path, None, "query-overlap",
                        f"{vs}: {both.len()} queries in both, {only_judged.len()} judged only, "
                        f"{only_ranked.len()} ranked only"))
    if only_judged.len():
        issues.append(Issue("warning", run.path, None, "judged-not-ranked",
                            f"{only_judged.len()} judged queries have no ranking in the run "
                            f"({_examples(only_judged)}); they score 0 when missing queries count as zero "
                            f"(trec_eval -c)"))
    if only_ranked.len():
        issues.append(Issue("warning", run.path, None, "ranked-not-judged",
                            f"{only_ranked.len()} ranked queries have no judgments in {qrels.path} "
                            f"({_examples(only_ranked)}); evaluation ignores them"))
    hint = _id_hint(judged, ranked, "query") if only_judged.len() and only_ranked.len() else ""
    if hint:
        issues.append(Issue("warning", run.path, None, "id-mismatch", hint.removeprefix("; ")))
    issues += _doc_coverage(qrels, run, both)
    return issues


def _doc_coverage(qrels: _Checked, run: _Checked, both: pl.Series) -> list[Issue]:
    retrieved = run.frame.filter(pl.col("query_id").is_in(both.implode())).select("query_id", "doc_id")
    if not retrieved.height:
        return []
    judged = retrieved.join(qrels.frame.select("query_id", "doc_id").unique(), on=["query_id", "doc_id"],
                            how="semi").height
    share = 100.0 * judged / retrieved.height
    issues = [Issue("info", run.path, None, "judged-docs",
                    f"{judged} of {retrieved.height} retrieved documents ({share:.1f}%) in the shared "
                    f"queries are judged in {qrels.path}")]
    if judged == 0:
        hint = _id_hint(qrels.frame["doc_id"].unique(), retrieved["doc_id"].unique(), "doc")
        issues.append(Issue("warning", run.path, None, "no-judged-docs",
                            f"none of the run's documents is judged in {qrels.path}"
                            f"{hint or '; check that both files use the same doc ids'}"))
    return issues


def _loose(ids: pl.Series) -> pl.Series:
    """Ids with whitespace and leading zeros stripped, Unicode NFC: the keys of near matches."""
    loose = ids.str.strip_chars().str.normalize("NFC").str.strip_chars_start("0")
    return loose.replace("", "0")


def _id_hint(first: pl.Series, second: pl.Series, label: str) -> str:
    """``"; ids match only after ..."`` when loose matching finds pairs that exact matching does not."""
    a = pl.DataFrame({"a": first}).with_columns(_loose(first).alias("k"))
    b = pl.DataFrame({"b": second}).with_columns(_loose(second).alias("k"))
    near = a.join(b, on="k").filter(pl.col("a") != pl.col("b"))
    if not near.height:
        return ""
    pair = near.row(0, named=True)
    return (f"; {near['a'].n_unique()} {label} id(s) match only after stripping whitespace or leading zeros "
            f"(or Unicode normalisation), e.g. {pair['a']!r} (judgments) vs {pair['b']!r} (run); ids are "
            f"compared as exact strings: make them the same")

