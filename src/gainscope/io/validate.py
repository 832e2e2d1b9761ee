"""``gainscope validate FILE...``: every problem of judgment and run files, reported, never raised.

:func:`validate_files` reads each file as the readers do, with the same formats, reading options and rules
(the row rules of :mod:`gainscope.io.frames`, its duplicate and empty-input rules, the line rules of
:mod:`gainscope.io.trec`): what the readers refuse is an ``"error"`` here, with the readers' own message and
fix, and what they warn about is a ``"warning"``. Instead of stopping at the first problem, it collects
what it finds as :class:`Issue` values:

* per file: whether it holds judgments or a run (detected, or given with ``kinds=``) and its format;
  lines that cannot be used (column count, header row, undecodable bytes, a lone CR); missing ids, ids
  with control characters; non-numeric, NaN and infinite scores; non-numeric, out-of-range and
  fractional grades (an error unless ``float_grades=True``, as for the readers); negative grades;
  non-integer ranks; duplicate documents (with both lines), identical and conflicting duplicate
  judgments; groups of tied scores; a rank column that disagrees with the scores; differing run tags;
  ids that are not Unicode NFC; a byte order mark; counts of blank and comment lines;
* across files, for each judgments/run pair: queries in both, judged only, ranked only; how many of
  the run's documents are judged; a hint when ids match only after stripping whitespace or leading
  zeros (``"001"`` vs ``"1"``), or after Unicode normalisation.

Each issue names its file and, where it has one, its line; one issue per kind of problem and file, with
the first occurrence and the count. Severities: ``"error"`` (reading would fail), ``"warning"`` (reading
succeeds but the numbers may not mean what you think), ``"info"`` (facts worth knowing).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gainscope.deferred import deferred_module
from gainscope.errors import GainscopeError, InputError, PolicyError, option, spell
from gainscope.io.detect import check_format, check_kind, detect_text_format, guess_kind
from gainscope.io.frames import (
    JudgmentOptions,
    RowProblem,
    RunOptions,
    TokenTable,
    convert_run_values,
    empty_message,
    ensure_string_ids,
    resolve_judgment_duplicates,
    resolve_run_duplicates,
    row_checks,
    row_problems,
    run_tag,
    scale_warnings,
    strip_tokens,
)
from gainscope.io.jsonl import load_json_table
from gainscope.io.tabular import load_tabular_table
from gainscope.io.text import TextFile, normalize_id_columns
from gainscope.io.trec import LAYOUTS, LineProblem, LineStats, careful_table, check_rank_sequences

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
    (``"duplicate-doc"``); ``message`` says what, where, what was found and how to fix it, naming options as
    in Python (``on_duplicate='first'``); ``cli_message`` names them as command-line flags.
    """

    severity: str
    path: str | None
    line: int | None
    code: str
    message: str
    cli_message: str = field(default="", compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.severity not in _SEVERITIES:
            raise PolicyError(f"severity must be one of {_SEVERITIES}; got {self.severity!r}")
        object.__setattr__(self, "cli_message", spell(self.cli_message or self.message, "cli"))
        object.__setattr__(self, "message", spell(self.message, "python"))

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.path and self.line is not None else (self.path or "")
        return f"{where}: {self.severity}: {self.message} [{self.code}]"


@dataclass
class _Checked:
    """A file's usable rows after validation, for the cross-file checks."""

    path: str
    kind: str
    frame: pl.DataFrame


@dataclass(frozen=True)
class _Reading:
    """How files are read: the readers' options and formats, shared by every file."""

    judgments: JudgmentOptions
    run: RunOptions
    formats: dict[str, str | None]
    encoding: str


# ---------------------------------------------------------------------- entry point
def validate_files(paths: Iterable[str | os.PathLike[str]], *,
                   kinds: Sequence[str | None] | Mapping[str, str] | None = None,
                   judgments_format: str | None = None, run_format: str | None = None,
                   on_conflict: str = "error", float_grades: bool = False,
                   scale: tuple[float, float] | None = None, on_duplicate: str = "error",
                   nan_score: str | float = "error", normalize_ids: str | None = None, allow_empty: bool = False,
                   encoding: str = "utf-8", extra_columns: str = "error") -> list[Issue]:
    """Check judgment and run files; return every issue found (data problems are never raised).

    ``kinds`` gives ``"judgments"`` or ``"run"`` for files whose kind cannot be detected: a sequence
    parallel to ``paths`` (None to detect) or a mapping from path to kind. ``judgments_format`` and
    ``run_format`` force the format of files of that kind; the other options are those of
    :func:`~gainscope.io.read_judgments` and :func:`~gainscope.io.read_run`, with the same meaning: what the
    readers would refuse with them is an error, what they would warn about a warning.
    """
    path_list = [os.fspath(p) for p in paths]
    kind_list = _kinds(path_list, kinds)
    reading = _Reading(
        JudgmentOptions(on_conflict=on_conflict, float_grades=float_grades, scale=scale,
                        normalize_ids=normalize_ids, allow_empty=allow_empty),
        RunOptions(on_duplicate=on_duplicate, nan_score=RunOptions.parse_nan_score(nan_score),
                   normalize_ids=normalize_ids, allow_empty=allow_empty, extra_columns=extra_columns),
        {"judgments": check_format(judgments_format, "judgments"), "run": check_format(run_format, "run")},
        encoding)
    issues: list[Issue] = []
    checked: list[_Checked] = []
    for path, kind in zip(path_list, kind_list, strict=True):
        file_issues, result = _validate_file(path, kind, reading)
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


def _raw(exc: BaseException) -> str:
    """An error's message with its options still unspelled (:func:`~gainscope.errors.spell` does it)."""
    return BaseException.__str__(exc)


def _validate_file(path: str, kind: str | None, reading: _Reading) -> tuple[list[Issue], _Checked | None]:
    try:
        src = TextFile(path, reading.encoding)
    except GainscopeError as exc:
        return [Issue("error", path, None, "unreadable", _raw(exc))], None
    label = src.name  # the name every message of the file uses: "<stdin>" for "-"
    try:
        kind = kind or guess_kind(src)  # reads the file's head: a damaged .gz fails here
    except InputError as exc:
        return [Issue("error", label, getattr(exc, "line", None), "unreadable",
                      _raw(exc).removeprefix(f"{label}: "))], None
    if kind is None:
        return [Issue("error", label, None, "unknown-kind",
                      f"cannot tell whether this file holds judgments or a run; say which, for example "
                      f"{option('kinds', {path: 'run'}, cli=f'--kind {path}=run')}")], None
    opts = reading.judgments if kind == "judgments" else reading.run
    try:
        given = reading.formats[kind]
        fmt = given or detect_text_format(src, kind)
        issues = [Issue("info", label, None, "format", f"read as {kind} in {fmt!r} format")]
        table, read_issues = _load(src, kind, fmt, opts)
        if kind == "run" and fmt == "msmarco" and given is None:
            check_rank_sequences(table, src.name)
    except InputError as exc:
        line = getattr(exc, "line", None)
        message = _raw(exc).removeprefix(f"{label}:{line}: " if line else f"{label}: ")
        return [Issue("error", label, line, "unreadable", message)], None
    issues += read_issues
    analysis = _Analysis(table, kind, opts)
    lines_refused = any(i.severity == "error" for i in read_issues)
    # a file whose every data line was refused is not empty: its line errors say what is wrong
    issues += [i for i in analysis.issues if not (lines_refused and i.code == "empty")]
    return issues, _Checked(label, kind, analysis.frame)


def _load(src: TextFile, kind: str, fmt: str, opts: JudgmentOptions | RunOptions
          ) -> tuple[TokenTable, list[Issue]]:
    issues: list[Issue] = []
    if (kind, fmt) in LAYOUTS:
        layout = LAYOUTS[(kind, fmt)]
        if isinstance(opts, RunOptions) and fmt == "trec" and opts.extra_columns == "ignore":
            layout = dataclasses.replace(layout, exact=False)
        stats = LineStats()
        problems: list[LineProblem] = []
        table = careful_table(src, layout, stats=stats, problems=problems)
        issues += _line_problem_issues(src.name, problems)
        issues += _stats_issues(src.name, stats, kind)
        return table, issues
    if src.has_bom():
        issues.append(_bom_issue(src.name))
    if fmt in ("json", "jsonl"):
        return load_json_table(src, kind, fmt), issues
    table = load_tabular_table(src, kind, fmt)
    return table, issues


def _more(count: int, unit: str = "line") -> str:
    return f" ({count - 1} more {unit}(s) like this)" if count > 1 else ""


def _line_problem_issues(path: str, problems: list[LineProblem]) -> list[Issue]:
    issues: list[Issue] = []
    seen: dict[str, list[LineProblem]] = {}
    for problem in problems:
        seen.setdefault(problem.code, []).append(problem)
    for code, group in seen.items():
        first = group[0]
        issues.append(Issue("error", path, first.line, code, first.message + _more(len(group))))
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
class _Analysis:
    """The readers' rules applied to one table, every problem reported; ``frame`` the usable rows (typed)."""

    def __init__(self, table: TokenTable, kind: str, opts: JudgmentOptions | RunOptions) -> None:
        self.origin = table.origin
        self.path = table.origin.path
        self.issues: list[Issue] = []
        frame = table.frame if table.tokens_clean else strip_tokens(table.frame, ["grade", "score", "rank"])
        if "_loc" not in frame.columns:
            frame = frame.with_row_index("_loc", offset=1).with_columns(pl.col("_loc").cast(pl.Int64))
        columns = ["query_id", "doc_id", "grade"] if kind == "judgments" else \
            ["query_id", "doc_id"] + [c for c in ("score", "rank") if c in frame.columns]
        self.frame = frame.clear().select(columns)
        if not frame.height:
            if not opts.allow_empty:
                self._add("error", "empty", empty_message(kind, self.origin))
            return
        try:
            frame = ensure_string_ids(frame, "")
            problems, usable = row_problems(frame, row_checks(frame, kind, opts))
        except InputError as exc:
            self._add("error", "bad-column-type", _raw(exc))
            return
        for problem in problems:
            self._problem(problem)
        frame = frame.filter(usable)
        if isinstance(opts, JudgmentOptions):
            self.frame = self._judgments(frame, opts)
        else:
            self.frame = self._run(frame, opts)

    # -------------------------------------------------------------- helpers
    def _add(self, severity: str, code: str, message: str, loc: int | None = None) -> None:
        line = loc if self.origin.unit == "line" else None
        ref = self.origin.ref(loc) if self.origin.unit not in (None, "line") else ""
        self.issues.append(Issue(severity, self.path, line, code, f"{ref}: {message}" if ref else message))

    def _problem(self, problem: RowProblem, unit: str = "row") -> None:
        self._add("error", problem.code, problem.message + _more(problem.count, unit), problem.loc)

    def _warnings(self, code: str, messages: list[str], loc: int | None = None) -> None:
        """Warnings of the readers' rules (which start with the file name) as issues."""
        for message in messages:
            self._add("warning", code, message.removeprefix(f"{self.path}: "), loc)

    def _ids(self, frame: pl.DataFrame, form: str | None) -> pl.DataFrame:
        frame, _notes, warns = normalize_id_columns(frame, form)
        self._warnings("non-nfc-id", warns)
        return frame

    # -------------------------------------------------------------- judgments
    def _judgments(self, frame: pl.DataFrame, opts: JudgmentOptions) -> pl.DataFrame:
        frame = self._ids(frame.with_columns(pl.col("grade").cast(pl.Float64 if opts.float_grades else pl.Int64)),
                          opts.normalize_ids)
        g = pl.col("grade")
        negative = frame.filter(g < 0)
        if negative.height:
            row = negative.row(0, named=True)
            self._add("info", "negative-grade", f"{negative.height} negative grade(s) (first: {_num(row['grade'])} "
                      f"for query {row['query_id']!r}, doc {row['doc_id']!r}); kept as given; by default they mean "
                      f"'pooled but unjudged' (trec_eval): never relevant", row["_loc"])
        problems: list[RowProblem] = []
        repeated = frame.filter(~pl.struct("query_id", "doc_id").is_first_distinct())["_loc"].head(1).to_list()
        frame, _notes, warns = resolve_judgment_duplicates(frame, opts.on_conflict, self.origin, problems=problems)
        for problem in problems:
            self._problem(problem, "pair")
        self._warnings("duplicate-judgment", warns, repeated[0] if repeated else None)
        if opts.scale is not None:
            self._warnings("outside-scale", scale_warnings(frame, opts.scale, ""))
        self._summary_judgments(frame)
        return frame.select("query_id", "doc_id", pl.col("grade").cast(pl.Float64))

    def _summary_judgments(self, frame: pl.DataFrame) -> None:
        if not frame.height:
            return
        queries = frame["query_id"].n_unique()
        lo, hi = frame["grade"].min(), frame["grade"].max()
        self._add("info", "summary", f"{frame.height} judgment(s) for {queries} queries; grades "
                  f"{_num(lo)}..{_num(hi)}")

    # -------------------------------------------------------------- runs
    def _run(self, frame: pl.DataFrame, opts: RunOptions) -> pl.DataFrame:
        frame, _notes, warns = convert_run_values(frame, opts, "")
        if warns:
            self._warnings("inf-score", warns, frame.filter(pl.col("score").is_infinite())["_loc"][0])
        frame = self._ids(frame, opts.normalize_ids)
        problems: list[RowProblem] = []
        frame, _notes = resolve_run_duplicates(frame, opts.on_duplicate, self.origin, problems=problems)
        for problem in problems:
            self._problem(problem)
        if "score" in frame.columns:
            self._ties(frame)
            if "rank" in frame.columns:
                self._rank_order(frame)
        if "tag" in frame.columns and frame.height:
            self._warnings("mixed-tags", run_tag(frame, "", None)[1])
        self._summary_run(frame)
        columns = ["query_id", "doc_id"] + [c for c in ("score", "rank") if c in frame.columns]
        return frame.select(columns)

    def _ties(self, frame: pl.DataFrame) -> None:
        tied = (frame.filter(pl.col("score").is_not_null())
                .group_by("query_id", "score").agg(pl.len().alias("n")).filter(pl.col("n") > 1))
        if not tied.height:
            return
        rows = int(tied["n"].sum())
        self._add("warning", "score-ties",
                  f"{tied.height} group(s) of tied scores ({rows} rows in {tied['query_id'].n_unique()} "
                  f"queries); tied documents are ordered by the ties policy (default: doc id descending, as "
                  f"trec_eval), so their order in the file does not count; use {option('ties', 'rank')} to "
                  f"keep it")

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
                else f"evaluation orders by score (as trec_eval); use {option('ties', 'rank')} only if the rank "
                     f"column is the order you mean")
        self._add("warning", "rank-contradicts-score",
                  f"in {queries} queries the rank column disagrees with the scores (first: query "
                  f"{row['query_id']!r}, rank {row['rank']} has a higher score than the rank before it); "
                  f"{hint}", row["_loc"])

    def _summary_run(self, frame: pl.DataFrame) -> None:
        if not frame.height:
            return
        content = "scores and ranks" if {"score", "rank"} <= set(frame.columns) else (
            "scores" if "score" in frame.columns else "ranks only")
        self._add("info", "summary", f"{frame.height} ranked document(s) for {frame['query_id'].n_unique()} "
                  f"queries ({content})")


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

