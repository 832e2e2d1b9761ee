"""Hypothesis strategies for gainscope's inputs: judgments with runs, evaluation policies, and metrics.

The data strategies aim at the cases where evaluation tools disagree, so that a property test meets them
often rather than by luck:

* several queries, some judged but not ranked (``missing_queries``), some ranked but not judged (ignored);
* queries whose judgments hold no relevant document, or only negative ("pooled, unjudged") grades;
* grades 0..4, negative grades, and optionally float grades (``0.5``, ``2.75``); on request grades up to
  2000 (``large_grades``), where 2^grade overflows float64 and ERR's stopping probability rounds to 1;
* retrieved documents that are not judged, judged documents that are not retrieved;
* equal scores inside a query (ties), and doc ids that sort differently as bytes and as numbers
  (``"10" < "9"`` bytewise), so that trec_eval's tie order is exercised;
* runs with scores and runs given as ordered lists (no scores);
* sessions of an agent's searches (:func:`sessions`, :func:`session_runs`): several searches per iteration,
  iterations and searches that returned nothing, the same document again within and across iterations, unknown
  gains, judged pools with documents never retrieved and retrieved documents matching several judged ones.

>>> from hypothesis import given
>>> from gainscope.testing import strategies as gst
>>> @given(gst.judgments_and_runs(), gst.policies(), gst.metrics())
... def test_my_metric(data, policies, metric): ...

Importing this module needs ``hypothesis`` (``pip install gainscope[test]``); nothing else in gainscope
imports it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import MISSING, fields
from typing import Any

try:
    from hypothesis import assume
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - depends on the environment
    from gainscope.errors import MissingDependencyError

    raise MissingDependencyError(
        "gainscope.testing.strategies needs hypothesis; install it with: pip install 'gainscope[test]'"
    ) from exc

from gainscope.core.judged_run import JudgedRun
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.core.sessions import Session, build_session_run
from gainscope.errors import PolicyError
from gainscope.metrics.base import GainMap, Metric
from gainscope.metrics.registry import all_metric_classes

__all__ = ["DOC_IDS", "QUERY_IDS", "RUN_ONLY_QUERY_IDS", "grades", "judgments_and_runs", "metric_classes",
           "metrics", "metrics_of", "parameter_values", "policies", "session_runs", "sessions"]

#: Doc ids whose bytewise order differs from their numeric order ("10" < "9" < "a"), plus non-ASCII.
DOC_IDS: tuple[str, ...] = ("1", "2", "3", "9", "10", "11", "19", "20", "100", "a", "B", "d-7", "é")
#: Judged query ids (also bytewise != numeric).
QUERY_IDS: tuple[str, ...] = ("1", "2", "9", "10", "q5", "Q6")
#: Ids of queries that only the run has.
RUN_ONLY_QUERY_IDS: tuple[str, ...] = ("77", "zz")

_INT_GRADES = (-2, -1, 0, 0, 1, 1, 2, 3, 4)
_FLOAT_GRADES = (-1.0, 0.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 2.75, 3.0, 4.0)
#: large grades: around 53/54 (2^g - 1 no longer exact; ERR's p rounds to 1), 959 (exponential gains start
#: being shifted), 1024 (2^g overflows) and up to 2000, with small ones beside them
_LARGE_GRADES = (-1, 0, 0, 1, 2, 53, 54, 55, 100, 958, 959, 960, 1000, 1023, 1024, 1025, 1100, 1999, 2000, 2000)
_LARGE_FLOAT_GRADES = (0.0, 0.5, 1.5, 53.5, 54.25, 959.5, 1023.75, 1024.5, 1999.5, 2000.0)
#: few distinct values, so that equal scores inside a query are common
_SCORES = (0.0, 0.5, 1.0, 1.0, 2.0, 3.0, -1.5)


@functools.cache
def grades(*, float_grades: bool = False, no_relevant: bool = False,
           large: bool = False) -> st.SearchStrategy[int | float]:
    """One grade: 0..4 and negative ones (float grades when asked), or with ``large`` up to 2000; only
    grades <= 0 with ``no_relevant``."""
    if large:
        pool: Sequence[int | float] = _LARGE_FLOAT_GRADES if float_grades else _LARGE_GRADES
    else:
        pool = _FLOAT_GRADES if float_grades else _INT_GRADES
    if no_relevant:
        return st.sampled_from(tuple(g for g in pool if g <= 0))
    if large:
        anywhere = st.floats(0.0, 2000.0) if float_grades else st.integers(0, 2000)
        return st.one_of(st.sampled_from(tuple(pool)), anywhere)
    return st.sampled_from(tuple(pool))


@functools.cache
def _unique_lists(values: tuple[str, ...], min_size: int, max_size: int,
                  more: tuple[str, ...] = ()) -> st.SearchStrategy[list[str]]:
    """Lists of distinct ``values`` (each drawn from ``values`` or, when given, from ``more``), built once per
    argument: building strategies inside every draw was most of the time of the property tests."""
    element = st.one_of(st.sampled_from(values), st.sampled_from(more)) if more else st.sampled_from(values)
    return st.lists(element, min_size=min_size, max_size=max_size, unique=True)


_ONE_IN_FIVE = st.integers(0, 4)
_ONE_IN_THREE = st.integers(0, 2)
_SCORE_MODES = st.sampled_from(("decreasing", "few", "two"))


@st.composite
def judgments_and_runs(draw: st.DrawFn, *, min_queries: int = 1, max_queries: int = 5, max_docs: int = 10,
                       float_grades: bool | None = None, scored: bool | None = None,
                       run_only_queries: bool = True, large_grades: bool = False) -> tuple[Judgments, Run]:
    """A ``(Judgments, Run)`` pair. At least one query is both judged and ranked.

    ``float_grades`` / ``scored``: force float grades or integer grades, a run with scores or a run given as
    ordered lists; None (default) lets hypothesis choose. ``run_only_queries=False`` leaves out queries that
    only the run has (they make :func:`build_judged_run` warn). ``large_grades`` draws grades up to 2000.
    """
    use_floats = draw(st.booleans()) if float_grades is None else float_grades
    with_scores = draw(st.booleans()) if scored is None else scored
    max_queries = max(min(max_queries, len(QUERY_IDS)), min_queries)
    qids = draw(_unique_lists(QUERY_IDS, min_queries, max_queries))
    max_docs = max(1, min(max_docs, len(DOC_IDS)))

    judgments: dict[str, dict[str, int | float]] = {}
    for q in qids:
        no_relevant = draw(_ONE_IN_FIVE) == 0  # about one query in five has no relevant document
        docs = draw(_unique_lists(DOC_IDS, 1, max_docs))
        judgments[q] = {d: draw(grades(float_grades=use_floats, no_relevant=no_relevant, large=large_grades))
                        for d in docs}

    ranked = draw(_unique_lists(tuple(qids), 1, len(qids)))
    if run_only_queries:
        ranked += draw(_unique_lists(RUN_ONLY_QUERY_IDS, 0, len(RUN_ONLY_QUERY_IDS)))
    rankings: dict[str, list[str]] = {}
    for q in ranked:
        judged_docs = tuple(judgments.get(q, {}))
        # mostly judged documents, some unjudged ones; some judged documents stay unretrieved
        min_size = 0 if rankings else 1
        rankings[q] = draw(_unique_lists(judged_docs, min_size, max_docs, DOC_IDS) if judged_docs
                           else _unique_lists(DOC_IDS, min_size, max_docs))
    if all(not rankings[q] for q in ranked if q in judgments):
        first = next(q for q in ranked if q in judgments)
        rankings[first] = [next(iter(judgments[first]))]

    if with_scores:
        # "decreasing": one score per rank with some equal neighbours; "few": a handful of values;
        # "two": only two values, so that most documents tie
        mode = draw(_SCORE_MODES)
        scores: dict[str, dict[str, float]] = {}
        for q, docs in rankings.items():
            if mode == "decreasing":
                values = [float(len(docs) - i) for i in range(len(docs))]
                for i in range(1, len(values)):
                    if draw(_ONE_IN_THREE) == 0:
                        values[i] = values[i - 1]
            else:
                choices = _SCORES if mode == "few" else (0.0, 1.0)
                values = [draw(st.sampled_from(choices)) for _ in docs]
            scores[q] = dict(zip(docs, values, strict=True))
        run = Run.from_dict(scores)
    else:
        run = Run.from_dict(rankings)
    if use_floats:
        # make sure the grades really are floats even when every drawn value happens to be whole
        judgments = {q: {d: float(g) for d, g in docs.items()} for q, docs in judgments.items()}
    return Judgments.from_dict(judgments), run


@st.composite
def sessions(draw: st.DrawFn, *, min_sessions: int = 1, max_sessions: int = 4, max_iterations: int = 5,
             float_grades: bool | None = None) -> list[Session]:
    """Sessions of an agent's searches (:class:`~gainscope.core.sessions.Session`), in the shapes seed 003 cares
    about: one to three searches per iteration, searches and iterations that returned nothing (N may be 0), the
    same document again within an iteration and in later ones, unknown gains (None), negative and float grades,
    and, in about half the sessions, a judged pool of its own (documents never retrieved, retrieved documents
    not in it, some matching several judged documents)."""
    use_floats = draw(st.booleans()) if float_grades is None else float_grades
    ids = draw(st.lists(st.sampled_from(QUERY_IDS), min_size=min_sessions,
                        max_size=max(min_sessions, min(max_sessions, len(QUERY_IDS))), unique=True))
    out = []
    for sid in ids:
        pool = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=6, unique=True))
        n = draw(st.integers(0, max_iterations))
        docs: list[str] = []
        its: list[int] = []
        searches: list[int] = []
        search = 0
        for i in range(1, n + 1):
            for _ in range(draw(st.integers(1, 3))):
                search += 1
                for doc in draw(st.lists(st.sampled_from(pool), max_size=4)):
                    docs.append(doc)
                    its.append(i)
                    searches.append(search)
        grade_of: dict[str, float | None] = {
            d: None if draw(st.integers(0, 5)) == 0 else float(draw(grades(float_grades=use_floats))) for d in pool}
        judged: dict[str, float] | None = None
        matches: dict[str, tuple[str, ...]] | None = None
        if draw(st.booleans()):
            others = draw(st.lists(st.sampled_from(DOC_IDS), max_size=4, unique=True))
            judged = {d: float(draw(grades(float_grades=use_floats))) for d in dict.fromkeys([*pool[:3], *others])}
            if draw(st.booleans()):
                matches = {d: tuple(draw(st.lists(st.sampled_from(list(judged)), max_size=2, unique=True)))
                           for d in pool}
        out.append(Session(sid, tuple(docs), tuple(its), tuple(searches), n, grade_of, judged, matches))
    return out


@st.composite
def session_runs(draw: st.DrawFn, /, **fixed: Any) -> JudgedRun:
    """The judged run of :func:`sessions` under policies that apply to sessions (the order is the session's: no
    depth, no judged-only); keyword arguments fix policies as :func:`policies` does."""
    chosen = draw(policies(**{"ties": "rank", "depth": None, "judged_only": False, **fixed}))
    return build_session_run(draw(sessions()), chosen)


def policies(**fixed: Any) -> st.SearchStrategy[Policies]:
    """Evaluation policies over every valid combination; keyword arguments fix some of them, to a value or
    to a strategy (``policies(ties="rank", depth=st.none())``). Combinations that :class:`Policies` rejects
    are not generated."""
    choices: dict[str, st.SearchStrategy[Any]] = {
        "ties": st.sampled_from(("trec_eval", "rank", "average")),
        "missing_queries": st.sampled_from(("zero", "skip", "empty")),
        "depth": st.one_of(st.none(), st.integers(1, 12)),
        "judged_only": st.booleans(),
        "relevance_level": st.sampled_from((1, 1, 2, 3, 0, 0.5, 1.5, "positive")),
        "negative_grades": st.sampled_from(("unjudged", "nonrelevant")),
        "undefined": st.sampled_from(("zero", "skip")),
        "judged_grades": st.sampled_from(("as_is", "as_is", "truncated")),
        # 2 is below the top grade: exercises the error of metrics that divide by the scale
        "max_grade": st.sampled_from((None, None, 4.0, 5.0, 2.0)),
        "score_precision": st.sampled_from(("float64", "float32")),
    }
    unknown = set(fixed) - set(choices)
    if unknown:
        raise TypeError(f"unknown policy {sorted(unknown)[0]!r}; the policies are: {', '.join(choices)}")
    for name, value in fixed.items():
        choices[name] = value if isinstance(value, st.SearchStrategy) else st.just(value)
    return _valid_policies(choices)


@st.composite
def _valid_policies(draw: st.DrawFn, choices: dict[str, st.SearchStrategy[Any]]) -> Policies:
    kwargs = {name: draw(strategy) for name, strategy in choices.items()}
    try:
        return Policies(**kwargs)
    except PolicyError:  # a combination the policies reject (ties="average" with depth and judged_only)
        assume(False)
        raise  # unreachable: assume(False) rejects the example


def metric_classes() -> list[type[Metric]]:
    """Every registered metric class (built-ins and plugins)."""
    return all_metric_classes()


# ---------------------------------------------------------------------------------------------- parameters
_GAIN_MAPS: tuple[dict[float, float], ...] = ({1: 3, 2: 9}, {0: 0, 1: 1, 2: 5, 3: 10}, {1: 0.5, 3: 10},
                                                {2: 1, 4: 2}, {0: 0, 1: 1, 2: 10, 3: 100, 4: 1000})


def _gain_maps() -> st.SearchStrategy[GainMap]:
    return st.sampled_from(_GAIN_MAPS).map(GainMap.of)

_BY_NAME: dict[str, st.SearchStrategy[Any]] = {
    "cutoff": st.one_of(st.integers(1, 5), st.integers(1, 20)),  # small cutoffs cut through ties
    "rel": st.sampled_from((1, 2, 3, 0.5, "positive")),
    "p": st.floats(0.5, 0.95),
    "mult": st.sampled_from((0.2, 0.5, 1.0, 1.2, 2.0)),
    "recall": st.one_of(st.sampled_from((0.0, 0.1, 0.25, 0.3, 0.5, 0.7, 1.0)), st.floats(0.0, 1.0)),
    "levels": st.one_of(
        st.just((0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),
        st.lists(st.sampled_from((0.0, 0.2, 0.25, 0.5, 0.75, 1.0)), min_size=1, max_size=4, unique=True)
        .map(lambda xs: tuple(sorted(xs)))),
    "gain": st.one_of(st.sampled_from(("linear", "exponential")), _gain_maps()),
    "max_grade": st.sampled_from((4.0, 5.0, 4.0, 2.0)),  # 2 is below the top grade: exercises the error
    "beta": st.sampled_from((0.0, 0.25, 0.5, 1.0, 2.0)),
    "num_docs": st.integers(0, 1000),
    "good_gain": st.sampled_from((2.0, 1.0, 3.0, 0.5, 0.0, 4.0)),
    "cap": st.sampled_from((100, 1, 2, 3)),  # small caps bind: censored values
    "b": st.sampled_from((2.0, 3.0, 1.5)),
    "bq": st.sampled_from((4.0, 2.0, 10.0)),
    "depth": st.one_of(st.none(), st.integers(1, 4)),
}


#: the declared kinds each named strategy fits (a plugin's parameter of the same name may differ)
_KINDS_BY_NAME: dict[str, tuple[str, ...]] = {
    "cutoff": ("int",), "rel": ("float", "level"), "p": ("float",), "mult": ("float",), "recall": ("float",),
    "levels": ("floats",), "gain": ("gain",), "max_grade": ("float",), "beta": ("float",),
    "num_docs": ("int",), "good_gain": ("float",), "cap": ("int",), "b": ("float",), "bq": ("float",),
    "depth": ("int",),
}


def _from_metadata(meta: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A strategy for a parameter declared with :func:`gainscope.metrics.param`, from its constraints."""
    kind = meta.get("kind", "any")
    lo = meta.get("ge") if meta.get("ge") is not None else meta.get("gt")
    hi = meta.get("le")
    if kind == "int":
        first = math.ceil(lo) if lo is not None else 0
        if meta.get("gt") is not None and first == meta["gt"]:
            first += 1
        return st.integers(first, int(hi) if hi is not None else first + 20)
    if kind == "float":
        low = float(lo) if lo is not None else (float(hi) - 10.0 if hi is not None else -5.0)
        high = float(hi) if hi is not None else low + 10.0
        return st.floats(low, high, exclude_min=meta.get("gt") is not None, allow_nan=False)
    if kind == "level":
        return st.one_of(st.just("positive"), st.sampled_from((0.0, 0.5, 1.0, 2.0, 3.0)))
    if kind in ("choice", "gain"):
        base: st.SearchStrategy[Any] = st.sampled_from(tuple(meta["choices"]))
        return st.one_of(base, _gain_maps()) if kind == "gain" else base
    if kind == "floats":
        low = float(lo) if lo is not None else 0.0
        high = float(hi) if hi is not None else low + 1.0
        return st.lists(st.floats(low, high), min_size=1, max_size=4).map(tuple)
    return st.nothing()


def parameter_values(cls: type[Metric], name: str) -> st.SearchStrategy[Any]:
    """Valid values of one parameter of a metric class (including its default, when it has one)."""
    f = next(f for f in fields(cls) if f.name == name)
    meta = dict(f.metadata)
    known = _BY_NAME.get(name)
    drawn = known if known is not None and meta.get("kind") in _KINDS_BY_NAME[name] else _from_metadata(meta)
    if f.default is MISSING or (f.default is None and meta.get("required")):
        return drawn
    return st.one_of(st.just(f.default), drawn)


def metrics_of(cls: type[Metric]) -> st.SearchStrategy[Metric]:
    """Instances of one metric class with random valid parameters (each parameter sometimes default)."""
    names = [f.name for f in fields(cls)]
    return st.builds(cls, **{n: parameter_values(cls, n) for n in names})


def metrics(classes: Sequence[type[Metric]] | None = None) -> st.SearchStrategy[Metric]:
    """A metric of any registered class (or of ``classes``) with random valid parameters."""
    pool = list(classes) if classes is not None else metric_classes()
    return st.sampled_from(pool).flatmap(metrics_of)
