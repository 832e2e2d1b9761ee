"""The built-in metrics, one module per family; importing this package registers them all but the families in
:data:`DEFERRED`, which the registry imports when a name is not found among the others (or when every metric is
listed): Quepid's legacy scorers and the session family (agent search sessions) cost a short ``gainscope
evaluate`` more to import than the evaluation of a small run."""

from gainscope.metrics.families import average_precision, curves, graded, precision, sets

#: families imported on first need (see the module docstring)
DEFERRED = ("gainscope.metrics.families.ratings", "gainscope.metrics.families.session")

__all__ = ["DEFERRED", "average_precision", "curves", "graded", "precision", "sets"]
