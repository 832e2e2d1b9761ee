"""gainscope on Apache Spark: runs too large for one machine, evaluated where the data is, with the numbers of
:func:`gainscope.evaluate`, bit for bit.

Example (needs a Spark session, so not run as a doctest)::

    import gainscope.spark
    ev = gainscope.spark.evaluate("qrels.txt", "s3a://lake/runs/bm25/", ["nDCG@10", "AP"], depth=1000)
    ev.results["nDCG@10"], ev.per_query().count()

The run is partitioned by query; each partition runs gainscope's own pipeline (the readers' checks, the
judged-run builder, the metric kernels) through Arrow, and the driver assembles a
:class:`~gainscope.results.Results` with the same aggregates, warnings and errors as the local engine
(:mod:`gainscope.spark.evaluation` describes the plan, :mod:`gainscope.spark.partition` why the values are
identical). Needs ``pip install 'gainscope[spark]'`` and Java 17 or newer; every executor needs gainscope.
"""

from __future__ import annotations

from gainscope.errors import MissingDependencyError

try:
    import pyarrow  # noqa: F401  (partitions exchange Arrow batches)
except ImportError:  # pragma: no cover - depends on the environment
    raise MissingDependencyError("gainscope.spark needs pyarrow and pyspark; install them with: "
                                 "pip install 'gainscope[spark]'") from None

from gainscope.spark.evaluation import SparkEvaluation, compare, evaluate, evaluate_runs, read_judgments
from gainscope.spark.session import session

__all__ = ["SparkEvaluation", "compare", "evaluate", "evaluate_runs", "read_judgments", "session"]
