"""Custom scorers in Python, and finding a scorer from a name.

A Python scorer is any function of a :class:`~gainscope.cases.view.QueryView` that returns a number (the
query score) or None (no score: Quepid's ``null``, so a query without results is labelled ``zsr`` and one
without ratings ``--``, and both are left out of the case score; elsewhere None counts as 0, see
:mod:`~gainscope.cases.scoring`)::

    from gainscope.cases import python_scorer

    @python_scorer(scale="0-3", depth=5)
    def top5_perfect(q):
        "Share of the top 5 rated Perfect."
        return sum(1 for i in range(5) if q.doc_rating(i) == 3) / 5

    score_case(case, top5_perfect)

It is unit-testable like any function, needs no sandbox (it is your code, run as your code) and gets the
same post-processing as every scorer (negative scores become 0). An exception inside it becomes a
:class:`~gainscope.cases.errors.ScorerError` naming the query; the original is chained.

:func:`resolve_scorer` turns what a user typed into a scorer: a built-in name (``nDCG@10``: a metric), a JavaScript
file (``my_scorer.js``, run sandboxed, see :mod:`gainscope.cases.javascript`) or ``module:function`` (a Python
scorer; imported, so only from the command line or Python, never from a case file).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gainscope.cases.errors import ScorerError
from gainscope.cases.evaluation import runtime_distance
from gainscope.cases.scale import RatingScale
from gainscope.cases.scorers import Scorer, ScorerResult, builtin_scorer
from gainscope.cases.view import QueryView
from gainscope.errors import InputError, MetricError
from gainscope.plugins import load_object

__all__ = ["PythonScorer", "python_scorer", "resolve_scorer"]


@dataclass(frozen=True)
class PythonScorer:
    """A Python function used as a scorer (see the module docstring)."""

    function: Callable[[QueryView], float | None]
    scorer_name: str | None = None
    scale: RatingScale | None = None
    k: int | None = None
    notes: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        if self.scorer_name:
            return self.scorer_name
        fn = self.function
        return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"

    @property
    def default_scale(self) -> RatingScale | None:
        return self.scale

    @property
    def depth(self) -> int | None:
        return self.k

    @property
    def conventions(self) -> tuple[str, ...]:
        return ("custom Python scorer: its own conventions", *self.notes)

    def score_all(self, views: Sequence[QueryView]) -> list[ScorerResult]:
        out = []
        for v in views:
            try:
                value = self.function(v)
            except Exception as exc:
                raise ScorerError(f"{type(exc).__name__}: {exc}", scorer=self.name, query=v.query) from exc
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ScorerError(f"a scorer returns a number or None; got {value!r}", scorer=self.name,
                                  query=v.query)
            if value is None:
                out.append(ScorerResult(None, reason="no score (None, Quepid's null)", depth=self.k, null=True))
            else:
                out.append(ScorerResult(float(value), depth=self.k))
        return out


def python_scorer(function: Callable[[QueryView], float | None] | None = None, *, name: str | None = None,
                  scale: Any = None, depth: int | None = None) -> Any:
    """Wrap a function as a scorer; usable as ``python_scorer(fn)`` or as a decorator with options."""

    def wrap(fn: Callable[[QueryView], float | None]) -> PythonScorer:
        return PythonScorer(fn, name, RatingScale.parse(scale) if scale is not None else None, depth)

    return wrap(function) if function is not None else wrap


def _from_module(spec: str) -> Scorer:
    obj = load_object(spec, "scorer")
    if hasattr(obj, "score_all") and hasattr(obj, "name"):
        return obj
    if not callable(obj):
        raise InputError(f"scorer {spec!r} is neither a function of a QueryView nor a scorer object")
    return PythonScorer(obj, spec)


def _distance(edit_distance: str | None) -> dict[str, Any]:
    """``edit_distance=`` for a JavaScript scorer when one was asked for (else the scorer's default: Quepid's), in
    the runtime's spelling (``quepid`` is ``quepid-legacy`` there)."""
    return {} if edit_distance is None else {"edit_distance": runtime_distance(edit_distance)}


def resolve_scorer(spec: Any, *, base: str | Path | None = None, allow_python: bool = True,
                   edit_distance: str | None = None, **js_options: Any) -> Scorer:
    """A scorer from a built-in name, a ``.js`` path (relative to ``base``'s folder), ``module:function``
    (only when ``allow_python``), ``{"code": "...", "name": ...}`` (inline JavaScript, as a case file may
    hold) or a scorer object. A built-in name is any metric name in gainscope's grammar, resolved under the
    quepid profile (see :mod:`~gainscope.cases.scorers`). ``edit_distance`` is the distance behind
    ``editDistanceFromBest`` (``quepid``, also spelled ``quepid-legacy``, or ``levenshtein``; None: Quepid's
    own, for the built-ins and JavaScript scorers alike); ``js_options`` go to
    :class:`~gainscope.cases.javascript.JavaScriptScorer`."""
    if hasattr(spec, "score_all") and hasattr(spec, "name"):
        return spec
    if callable(spec):
        return PythonScorer(spec)
    if isinstance(spec, dict):
        if "code" not in spec or not isinstance(spec["code"], str):
            raise InputError(f"an inline scorer is {{\"name\": ..., \"code\": \"<JavaScript>\"}}; got keys "
                             f"{sorted(spec)}")
        from gainscope.cases.javascript import JavaScriptScorer

        scale = RatingScale.parse(spec["scale"]) if spec.get("scale") is not None else None
        return JavaScriptScorer(spec["code"], name=str(spec.get("name") or "inline scorer"), scale=scale,
                                **_distance(edit_distance), **js_options)
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"a scorer is a name, a .js file or module:function; got {spec!r}")
    text = spec.strip()
    if text.lower().endswith(".js"):
        from gainscope.cases.javascript import JavaScriptScorer

        path = Path(text)
        if not path.is_absolute() and base is not None:
            path = Path(base).parent / path
        return JavaScriptScorer.from_file(path, **_distance(edit_distance), **js_options)
    if ":" in text:
        if not allow_python:
            raise InputError(f"scorer {text!r}: a case file may name built-in or JavaScript scorers only; give "
                             f"Python scorers (module:function) on the command line or in Python")
        return _from_module(text)
    if base is None:
        return builtin_scorer(text, edit_distance=edit_distance)
    try:
        return builtin_scorer(text, edit_distance=edit_distance)
    except MetricError as exc:  # a case file's scorer: the file is the input to fix
        raise InputError(f"{base}: the case's scorer {text!r}: {exc}") from exc
