"""gainscope: ranked-retrieval evaluation with declared definitions.

Numbers reproduce trec_eval by default; every convention that changes a number is a named policy or metric
parameter, echoed with the results; every value can be explained position by position.

>>> import gainscope
>>> qrels = gainscope.Judgments.from_dict({"q1": {"d1": 2, "d2": 0, "d3": 1}})
>>> run = gainscope.Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})
>>> results = gainscope.evaluate(qrels, run, ["nDCG@10", "RR"])
>>> round(results["nDCG@10"], 4)
0.9502

The names below are imported when first used (PEP 562), so that ``import gainscope`` and the command line,
which imports ``gainscope.cli``, load only what they need.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any, ClassVar

from gainscope._version import __version__

if TYPE_CHECKING:
    from gainscope import errors
    from gainscope.compare import CompareSettings, Comparison, compare
    from gainscope.core.judgments import Judgments
    from gainscope.core.policies import Policies
    from gainscope.core.run import Run
    from gainscope.evaluation import evaluate, evaluate_runs, resolve_metrics
    from gainscope.explain import explain, explanation_frame
    from gainscope.fusion.fuse import fuse
    from gainscope.fusion.optimize import optimize_weights
    from gainscope.metrics import Metric, all_metric_classes, parse_metric
    from gainscope.results import Results

#: public name -> the module it comes from
_SOURCES = {
    "CompareSettings": "gainscope.compare",
    "Comparison": "gainscope.compare",
    "compare": "gainscope.compare",
    "Judgments": "gainscope.core.judgments",
    "Policies": "gainscope.core.policies",
    "Run": "gainscope.core.run",
    "evaluate": "gainscope.evaluation",
    "evaluate_runs": "gainscope.evaluation",
    "resolve_metrics": "gainscope.evaluation",
    "explain": "gainscope.explain",
    "explanation_frame": "gainscope.explain",
    "fuse": "gainscope.fusion",
    "optimize_weights": "gainscope.fusion",
    "Metric": "gainscope.metrics",
    "all_metric_classes": "gainscope.metrics",
    "parse_metric": "gainscope.metrics",
    "Results": "gainscope.results",
}

__all__ = [
    "CompareSettings",
    "Comparison",
    "Judgments",
    "Metric",
    "Policies",
    "Results",
    "Run",
    "__version__",
    "all_metric_classes",
    "compare",
    "errors",
    "evaluate",
    "evaluate_runs",
    "explain",
    "explanation_frame",
    "fuse",
    "optimize_weights",
    "parse_metric",
    "resolve_metrics",
]


def _lazy(name: str) -> Any:
    if name == "errors":
        return importlib.import_module("gainscope.errors")
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module 'gainscope' has no attribute {name!r}")
    value = getattr(importlib.import_module(source), name)
    globals()[name] = value  # found once; later lookups do not come here
    return value


if not TYPE_CHECKING:  # type checkers see the imports above, not a module that answers any name
    __getattr__ = _lazy


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


#: functions named as the module that holds them: gainscope.compare is the function compare, as it always was
_SHADOWED = ("compare", "explain")


class _Package(types.ModuleType):
    """This package, whose ``compare`` and ``explain`` stay the functions once their modules are imported (the
    import system records a submodule on its package when it first loads it; eager imports used to bind the
    function over it right after, a lazy package must keep it from replacing the function)."""

    _overrides: ClassVar[dict[str, Any]] = {}


def _shadowed(name: str) -> property:
    def get(self: _Package) -> Any:
        if name in self._overrides:
            return self._overrides[name]
        return getattr(importlib.import_module(_SOURCES[name]), name)

    def set_(self: _Package, value: Any) -> None:
        if value is not sys.modules.get(f"{__name__}.{name}"):  # anyone but the import system: keep it
            self._overrides[name] = value

    return property(get, set_)


for _name in _SHADOWED:
    setattr(_Package, _name, _shadowed(_name))
sys.modules[__name__].__class__ = _Package
