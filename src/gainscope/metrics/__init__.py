"""Metrics: declarations with formulas and conventions, vectorised kernels, and the name grammar.

``parse_metric("nDCG@10")`` returns a metric object; ``str(metric)`` gives back its canonical name.
``all_metric_classes()`` lists every registered metric (``gainscope metrics`` on the command line).
"""

from gainscope.metrics.base import Explanation, GainMap, Metric, RankedQuery, Step, param
from gainscope.metrics.names import parse_metric
from gainscope.metrics.registry import all_metric_classes, lookup, register

__all__ = ["Explanation", "GainMap", "Metric", "RankedQuery", "Step", "all_metric_classes", "lookup",
           "param", "parse_metric", "register"]
