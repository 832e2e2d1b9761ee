"""gainscope: ranked-retrieval evaluation with declared definitions.

Numbers reproduce trec_eval by default; every convention that changes a number is a named policy or metric
parameter, echoed with the results; every value can be explained position by position.

>>> import gainscope
>>> qrels = gainscope.Judgments.from_dict({"q1": {"d1": 2, "d2": 0, "d3": 1}})
>>> run = gainscope.Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})
>>> results = gainscope.evaluate(qrels, run, ["nDCG@10", "RR"])
>>> round(results["nDCG@10"], 4)
0.9502
"""

from gainscope import errors
from gainscope._version import __version__
from gainscope.compare import CompareSettings, Comparison, compare
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.evaluation import evaluate, evaluate_runs, resolve_metrics
from gainscope.explain import explain, explanation_frame
from gainscope.fusion import fuse, optimize_weights
from gainscope.metrics import Metric, all_metric_classes, parse_metric
from gainscope.results import Results

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
