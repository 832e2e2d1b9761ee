"""The dashboard's one door into :mod:`gainscope.cases`: every call the dashboard makes into cases is in this module.

Scoring always goes through the public API of cases -- :func:`~gainscope.cases.score_case` for query and case
scores, :func:`~gainscope.cases.resolve_scorer` for scorer names, :func:`~gainscope.cases.snapshots.
compare_snapshots` for snapshot comparisons -- so the numbers the dashboard shows are the numbers ``gainscope case
score`` prints, and a change in how cases computes them lands here as one edit. The dashboard computes no metric
of its own; the only arithmetic it does on scores is the case score of an incremental rescore, the mean of the
values score_case marked as counted (:func:`case_mean`, pinned equal to score_case's by a property test).

Also here: the workspace's case records as :class:`~gainscope.cases.Case` objects (:func:`to_case`), rating
scales, the case importers and exporters (case JSON/YAML, Quepid CSV, RRE, ``_rank_eval``, TREC qrels and run),
saved scorers (JavaScript through cases' sandbox; Python compiled from the workspace), and the explanation of a
query score position by position (:func:`explain_query`: each prefix of the results scored by the scorer
itself).
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from gainscope.cases import (
    Case,
    CaseQuery,
    CaseScore,
    QueryScore,
    RatingScale,
    case_from_quepid,
    python_scorer,
    read_case,
    read_rank_eval,
    read_rre,
    resolve_scorer,
    score_case,
    write_quepid_ratings,
    write_trec_qrels,
    write_trec_run,
)
from gainscope.cases.files import case_to_dict
from gainscope.cases.live import case_engine, case_from_snapshot
from gainscope.cases.snapshots import SnapshotComparison, compare_snapshots
from gainscope.cases.trec import trec_ids, with_run_results
from gainscope.errors import FormatError, GainscopeError, InputError, UnknownFormatError, UnknownMetricError

__all__ = [
    "FORMATS",
    "Explanation",
    "Scored",
    "builtin",
    "case_mean",
    "case_scorer_source",
    "check_rating",
    "compare",
    "engine_for",
    "explain_query",
    "export_text",
    "read_any",
    "rescore_query",
    "resolve",
    "scale_from",
    "scale_json",
    "score",
    "to_case",
    "trec_query_ids",
]

#: the formats a case is imported from (``auto``: told apart by extension and content)
FORMATS = ("auto", "case", "quepid", "rre", "rank-eval", "trec")
#: what a case is exported as
EXPORTS = ("case", "quepid", "qrels", "run")


# ---------------------------------------------------------------------------------------------- scales
def scale_from(spec: Any) -> RatingScale:
    """A rating scale from what a user gave (``graded``, ``0-3``, ``[0, 1, 2]``, ``{"values", "labels"}``)."""
    return RatingScale.parse(spec)


def scale_json(scale: RatingScale) -> dict[str, Any]:
    """A scale as the workspace stores it: ``{"values": [...], "labels": {value: label}}``."""
    return {"values": list(scale.values), "labels": {_text(k): v for k, v in scale.labels.items()}}


def _text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def check_rating(scale: Mapping[str, Any], rating: Any, where: str) -> float:
    """``rating`` as a number on the case's scale, or an InputError saying what the scale allows."""
    if isinstance(rating, bool) or not isinstance(rating, (int, float)) or not math.isfinite(rating):
        raise InputError(f"{where}: a rating is a number (or null to remove it); got {rating!r}")
    scale_from(scale).check(rating, where)
    return rating


# ---------------------------------------------------------------------------------------------- cases
def to_case(name: str, scale: Mapping[str, Any], queries: Sequence[Any], *, source: str | None = None,
            engine: str | None = None, try_: Mapping[str, Any] | None = None, scorer: str | None = None) -> Case:
    """A :class:`~gainscope.cases.Case` from the workspace's records (each query with ``text``, ``qid``,
    ``options``, ``results``, ``num_found`` and ``rating_values()``)."""
    return Case(tuple(_case_query(q) for q in queries), scale_from(scale), scorer, name, source, (), engine,
                None if try_ is None else dict(try_))


def _case_query(q: Any) -> CaseQuery:
    return CaseQuery(q.text, q.rating_values(), tuple(q.results), dict(q.options), q.num_found, q.qid)


def trec_query_ids(case: Case) -> dict[str, str]:
    """``{query text: TREC id}``: how the case's queries are sent to engines and named in TREC exports."""
    return trec_ids(case)


def engine_for(case: Case) -> tuple[Any, dict[str, Any]]:
    """The engine the case names, with its try's template overrides, and the try's knob values (relative paths
    are resolved against the folder of the case's source)."""
    return case_engine(case)


def _default_scale(case: Case, scale: Any) -> RatingScale:
    """The scale a new workspace case gets: the one given, else the case's, else 0-3 (Poor .. Perfect, Quepid's
    graded scale) when every rating fits it; otherwise the user must say."""
    if scale is not None:
        return scale_from(scale)
    if case.scale is not None:
        return case.scale
    graded = scale_from("graded")
    outside = [r for q in case.queries for r in q.ratings.values() if not graded.min <= r <= graded.max]
    if outside:
        raise InputError(f"{case.source or 'the case'} names no rating scale and has ratings outside 0-3 (such as "
                         f"{_text(outside[0])}); give the scale (for example --scale 1-10)")
    return graded


def read_any(path: str | Path, fmt: str = "auto", *, run: str | Path | None = None,
             snapshot: str | Path | None = None, response: str | Path | None = None, scale: Any = None,
             name: str | None = None) -> Case:
    """A case from a file in any format the dashboard imports (see :data:`FORMATS`), with its results from a
    ``run`` (any run file gainscope reads), a Quepid ``snapshot`` CSV or a ``_rank_eval`` ``response``; the case
    always has a scale (see :func:`_default_scale`)."""
    p = Path(path)
    kind = _detect(p) if fmt == "auto" else fmt
    if kind not in FORMATS[1:]:
        raise UnknownFormatError(f"unknown case format {fmt!r}; use one of {', '.join(FORMATS)}")
    if snapshot is not None and kind != "quepid":
        raise InputError(f"{p}: a Quepid snapshot CSV goes with a Quepid ratings CSV, not with a {kind} file")
    if response is not None and kind != "rank-eval":
        raise InputError(f"{p}: a _rank_eval response goes with a _rank_eval request, not with a {kind} file")
    if kind == "case":
        case = read_case(p)
    elif kind == "quepid":
        if snapshot is None and not _ratings_header(p):  # a snapshot CSV alone: its results and ratings
            case = case_from_quepid(p, None, name=name)
        else:
            case = case_from_quepid(snapshot, p, name=name)
    elif kind == "rre":
        case = read_rre(p)
    elif kind == "rank-eval":
        case = read_rank_eval(p, response=response)
    else:
        case = _from_qrels(p)
    if run is not None:
        case = with_run_results(case, _ranked(run)).case
    case = replace(case, scale=_default_scale(case, scale), name=name or case.name or p.stem,
                   source=case.source or str(p))
    return case


def _ratings_header(p: Path) -> bool:
    """True when a CSV starts with Quepid's ratings header (``query,docid,rating``)."""
    try:
        with p.open(encoding="utf-8-sig") as f:
            first = next((line for line in f if line.strip()), "")
    except (OSError, UnicodeDecodeError):
        return True  # let the reader say what is wrong
    return first.strip().lower().replace(" ", "").startswith("query,docid,rating")


def _ranked(run: str | Path) -> dict[str, list[str]]:
    from gainscope.io import read_run

    return {qid: [d for d, _ in sorted(docs.items(), key=lambda item: -item[1])]
            for qid, docs in read_run(run).to_dict().items()}


def _from_qrels(path: Path) -> Case:
    """TREC qrels as a case: a query per query id (its text is the id), every judged document rated."""
    from gainscope.io import read_judgments

    judged = read_judgments(path, float_grades=True).to_dict()
    return Case.from_parts(judged, source=str(path), notes=[f"ratings from the TREC qrels {path}"])


def _detect(p: Path) -> str:
    """The format of a case file from its extension and, for JSON, its keys."""
    suffix = p.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "case"
    if suffix in (".csv", ".tsv"):
        return "quepid"
    if suffix in (".qrels", ".txt", ".trec"):
        return "trec"
    if suffix != ".json":
        raise UnknownFormatError(f"{p}: cannot tell the format from the extension {suffix or '(none)'}; give it "
                                 f"(--format {' | '.join(FORMATS[1:])})")
    try:
        data = json.loads(p.read_text(encoding="utf-8-sig"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise FormatError(f"not JSON ({exc})", path=str(p)) from None
    if isinstance(data, dict):
        if "requests" in data or "details" in data:
            return "rank-eval"
        if "topics" in data or "query_groups" in data:
            return "rre"
        queries = data.get("queries")
        if isinstance(queries, list) and queries and all(isinstance(q, dict) for q in queries):
            if all("query" in q for q in queries):
                return "case"
            if all("placeholders" in q for q in queries):
                return "rre"
        if isinstance(queries, list) and not queries:
            return "case"
    raise UnknownFormatError(f"{p}: a JSON file that is neither a case ('queries' with 'query'), RRE ratings "
                             "('topics', 'query_groups') nor a _rank_eval request or response; give --format")


def export_text(case: Case, fmt: str) -> str:
    """The case as a case file (JSON), Quepid's ratings CSV, TREC qrels or a TREC run."""
    if fmt == "case":
        return json.dumps(case_to_dict(case), indent=2, ensure_ascii=False) + "\n"
    if fmt == "quepid":
        return write_quepid_ratings(case)
    if fmt == "qrels":
        return write_trec_qrels(case)
    if fmt == "run":
        return write_trec_run(case, tag=case.name or "case")
    raise UnknownFormatError(f"unknown export format {fmt!r}; use one of {', '.join(EXPORTS)}")


# ---------------------------------------------------------------------------------------------- scorers
def builtin_scorers() -> list[dict[str, Any]]:
    """The built-in scorers (name at k = 10, what it computes, its default scale), for the scorer picker."""
    from gainscope.cases import BUILTINS, builtin_scorer

    def value_range(name: str) -> str:
        low, high = type(builtin_scorer(name).metric).bounds
        if high is None:
            return "any" if low is None else f">= {low:g}"
        return f"<= {high:g}" if low is None else f"{low:g}-{high:g}"

    return [{"name": f"{d.name}@10", "summary": d.summary, "scale": d.scale, "range": value_range(f"{d.name}@10")}
            for d in BUILTINS.values()]


def _not_a_name(name: str) -> bool:
    """True for what resolve_scorer would read as a file or import as code (``x.js``, ``module:function``): the
    dashboard resolves names of built-ins and of saved scorers only, never a path on the server."""
    text = name.strip()
    return text.lower().endswith(".js") or ":" in text or "/" in text or "\\" in text


def builtin(name: str) -> Any:
    """The built-in scorer ``name`` (cases resolves it; unknown names get its suggestions); a name that would be a
    file or a module is refused."""
    if _not_a_name(name):
        raise UnknownMetricError(f"unknown scorer {name!r}: the dashboard's scorers are built-in names (nDCG@10, "
                                 "P@5, ...) or scorers saved in the workspace (the scorers page), never a file of the "
                                 "server")
    return resolve_scorer(name, allow_python=False)


def is_builtin(name: str) -> bool:
    """True when ``name`` resolves to a built-in scorer."""
    try:
        builtin(name)
    except GainscopeError:
        return False
    return True


def check_scorer(scorer: Any) -> None:
    """Compile a JavaScript scorer without running it (a syntax error names the line); others need nothing."""
    check = getattr(scorer, "check", None)
    if callable(check):
        check()


def resolve(name: str, saved: Callable[[str], Any], *, allow_python: bool,
            time_limit: float = 1.0) -> Any:
    """The scorer called ``name``: a scorer saved in the workspace (``saved(name)`` gives its record or None), else
    a built-in (``nDCG@10``; resolved by cases, so unknown names get cases' suggestions)."""
    record = saved(name)
    if record is None:
        return builtin(name)
    return scorer_from_code(record.name, record.language, record.code, record.scale, allow_python=allow_python,
                            time_limit=time_limit)


def scorer_from_code(name: str, language: str, code: str, scale: Any = None, *, allow_python: bool,
                     time_limit: float = 1.0) -> Any:
    """A scorer from source: JavaScript (Quepid's scorer API, run in cases' V8 sandbox) or Python (the code
    defines ``score(q)``, a function of a :class:`~gainscope.cases.QueryView` returning a number or None)."""
    parsed = None if scale in (None, "", {}) else scale_from(scale)
    if language == "javascript":
        spec: dict[str, Any] = {"name": name, "code": code}
        if parsed is not None:
            spec["scale"] = list(parsed.values)
        return resolve_scorer(spec, time_limit=time_limit)
    if language != "python":
        raise InputError(f"a scorer is written in javascript or python; got {language!r}")
    if not allow_python:
        raise InputError(f"scorer {name!r} is Python, which this server does not run (it would run as the server's "
                         "own code): start it on 127.0.0.1, or with --allow-code")
    try:
        compiled = compile(code, f"{name}.py", "exec")
    except SyntaxError as exc:
        raise InputError(f"{name}.py:{exc.lineno}: {exc.msg}" + (f"\n    {exc.text.rstrip()}" if exc.text else "")) \
            from None
    namespace: dict[str, Any] = {"__name__": "gainscope_scorer", "math": math}
    try:
        exec(compiled, namespace)
    except Exception as exc:
        raise InputError(f"{name}.py: running the module failed: {type(exc).__name__}: {exc}") from None
    function = namespace.get("score")
    if not callable(function):
        raise InputError(f"{name}.py defines no function score(q); a Python scorer is def score(q): ... returning a "
                         "number (or None for no score), where q has doc_rating(i), num_returned, best, ...")
    return python_scorer(function, name=name, scale=parsed)


def case_scorer_source(case: Case, *, read_files: bool) -> tuple[str, str, Any] | None:
    """The JavaScript scorer a case names by code (``{"name", "code"}``), or by a ``.js`` file when ``read_files``
    (a case read from the command line: the file is the user's; never for an upload, which must not read files of
    the server): ``(name, code, scale)``, to save in the workspace; None when the case names none or a built-in."""
    spec = case.scorer
    if isinstance(spec, Mapping) and isinstance(spec.get("code"), str):
        return str(spec.get("name") or "case scorer"), spec["code"], spec.get("scale")
    if isinstance(spec, str) and spec.strip().lower().endswith(".js") and read_files:
        found: Any = resolve_scorer(spec, base=case.source, allow_python=False)  # a JavaScriptScorer: it has code
        return Path(spec).name, str(found.code), None
    return None


# ---------------------------------------------------------------------------------------------- scoring
@dataclass(frozen=True)
class Scored:
    """One scorer's scores of a case: per query (by text), the case score, the conventions, the warnings raised
    while scoring, and the error when the scorer could not score the case."""

    scorer: str
    queries: dict[str, QueryScore]
    score: float | None
    conventions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    error: str | None = None

    @classmethod
    def failed(cls, scorer: str, error: str) -> Scored:
        """The scores of a scorer that failed (a script error, a timeout, an unknown name)."""
        return cls(scorer, {}, None, (), (), error)


def _options(unscored: str, undefined: str) -> dict[str, Any]:
    return {"unscored": unscored, "undefined": undefined, "allow_unrated": True}


def score(case: Case, scorer: Any, *, unscored: str = "quepid", undefined: str = "zero") -> Scored:
    """Every query of ``case`` and the case score by ``score_case`` (a case without ratings yet is scored too:
    the dashboard shows its coverage instead of refusing it; warnings are kept as notes)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result: CaseScore = score_case(case, scorer, **_options(unscored, undefined))
    return Scored(result.scorer, {q.query: q for q in result.queries}, result.score, result.conventions,
                  tuple(str(w.message) for w in caught))


def rescore_query(case: Case, text: str, scorer: Any, *, unscored: str = "quepid",
                  undefined: str = "zero") -> QueryScore:
    """The score of the query ``text`` alone, by ``score_case`` on a case holding that one query (on the case's
    scale, so it is the score that query gets in the whole case)."""
    one = replace(case, queries=(case.query(text),))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return score_case(one, scorer, **_options(unscored, undefined)).queries[0]


def case_mean(queries: Sequence[QueryScore]) -> float | None:
    """The case score from per-query scores: the mean of the values score_case counted (``counted``), None when
    no query counts -- score_case's own rule, for an incremental rescore."""
    counted = [q.counted for q in queries if q.counted is not None]
    return math.fsum(counted) / len(counted) if counted else None


@dataclass(frozen=True)
class Explanation:
    """A query score position by position: for each rank, the document, its rating, the score of the results
    down to that rank (scored by the scorer itself) and the change from the rank above."""

    scorer: str
    rows: tuple[dict[str, Any], ...]
    score: float | None


def explain_query(case: Case, text: str, scorer: Any, depth: int, *, unscored: str = "quepid",
                  undefined: str = "zero") -> Explanation:
    """Explain the score of query ``text`` position by position (see :class:`Explanation`)."""
    q = case.query(text)
    rows = []
    previous: float | None = None
    for rank in range(1, min(depth, len(q.results)) + 1):
        cut = replace(case, queries=(replace(q, results=q.results[:rank]),))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = score_case(cut, scorer, **_options(unscored, undefined)).queries[0].value
        doc = q.results[rank - 1]
        rows.append({"rank": rank, "doc": doc, "rating": q.ratings.get(doc), "score": value,
                     "change": None if value is None or previous is None else value - previous})
        previous = value if value is not None else previous
    full = rescore_query(case, text, scorer, unscored=unscored, undefined=undefined)
    return Explanation(full_name(scorer), tuple(rows), full.value)


def full_name(scorer: Any) -> str:
    """A scorer's display name."""
    return str(scorer.name)


# ---------------------------------------------------------------------------------------------- snapshots
def snapshot_case(ratings: Case, results: Sequence[Any], name: str) -> Case:
    """A recorded snapshot as a case scored with today's ratings (queries matched by TREC id, else text)."""
    return case_from_snapshot(ratings, results, name=name)


def compare(ratings: Case, snapshots: Sequence[tuple[str, Sequence[Any]]], scorer: Any, *, k: int | None = None,
            unscored: str = "quepid", undefined: str = "zero", current: bool = False) -> SnapshotComparison:
    """Snapshots of a case side by side, every one scored with today's ratings (as Quepid does), query by query,
    with the documents that entered or left the top k and the paired tests against the first (cases'
    :func:`~gainscope.cases.snapshots.compare_snapshots`). ``snapshots`` are ``(name, recorded results)``, the first
    the baseline; with ``current`` the case's results in force come last (the newest), named ``current``."""
    cases = [snapshot_case(ratings, results, name) for name, results in snapshots]
    if current:
        cases.append(replace(ratings, name="current"))
    names = [c.name or f"S{i + 1}" for i, c in enumerate(cases)]
    from gainscope.compare import CompareSettings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compare_snapshots(cases, scorer, names=names, k=k, settings=CompareSettings(resamples=2000),
                                 **_options(unscored, undefined))
