"""The built-in metrics, one module per family; importing this package registers them all."""

from gainscope.metrics.families import average_precision, curves, graded, precision, ratings, sets

__all__ = ["average_precision", "curves", "graded", "precision", "ratings", "sets"]
