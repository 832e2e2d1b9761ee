"""Spark sessions for gainscope, Spark's failures as :class:`~gainscope.errors.SparkError`, and Arrow results.

:func:`session` starts (or joins) a SparkSession the way the command line needs one: a master, ``key=value``
settings, Python workers running *this* interpreter in local mode (so they import the same gainscope), no
progress bars on standard error, Spark's log at ERROR. In cluster mode every executor needs gainscope
installed (``pip install gainscope`` in the executors' Python, or an environment shipped with
``spark.archives``); a worker that cannot import it is reported as such.

:func:`quiet` wraps every call into pyspark: pyspark warns (``FutureWarning``) when pandas 3 is installed,
though gainscope.spark never uses pandas (Arrow only); that warning is not about the user's data and is
silenced there, and nowhere else.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from gainscope.errors import GainscopeError, MissingDependencyError, SparkError

__all__ = ["quiet", "session", "spark_failure", "to_arrow"]


def _pyspark() -> Any:
    try:
        import pyspark
    except ImportError:
        raise MissingDependencyError(
            "the Spark backend needs pyspark (and Java 17 or newer); install it with: "
            "pip install 'gainscope[spark]'") from None
    return pyspark


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence pyspark's warning about pandas versions (gainscope.spark exchanges Arrow, never pandas)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"PySpark does not yet fully support pandas", category=FutureWarning)
        warnings.filterwarnings("ignore", message=r".*pandas.*", category=FutureWarning, module=r"pyspark\..*")
        yield


def session(master: str | None = None, conf: Mapping[str, str] | None = None, *, app_name: str = "gainscope") -> Any:
    """A SparkSession: the active one when no ``master`` is given and one is running, else one built with
    ``master`` (default ``local[*]``) and ``conf``. For a local master whose workers would run another Python,
    ``PYSPARK_PYTHON`` is set to this interpreter (only when unset)."""
    _pyspark()
    from pyspark.sql import SparkSession

    with quiet():
        active = SparkSession.getActiveSession()
        if active is not None and master in (None, active.sparkContext.master):
            for key, value in (conf or {}).items():  # a running session takes runtime settings only
                try:
                    active.conf.set(key, value)
                except Exception as exc:
                    raise SparkError(f"cannot set {key} on the running Spark session: {_first_line(exc)}") from None
            return active
        master = master or "local[*]"
        if master.startswith("local") and "PYSPARK_PYTHON" not in os.environ:
            os.environ["PYSPARK_PYTHON"] = sys.executable  # workers must import this gainscope
        builder = SparkSession.builder.master(master).appName(app_name)
        log = Path(__file__).with_name("log4j2.properties")  # errors only: stderr is for gainscope's messages
        settings = {"spark.ui.showConsoleProgress": "false", "spark.ui.enabled": "false",
                    "spark.sql.execution.arrow.maxRecordsPerBatch": "65536",
                    "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={log.as_uri()}",
                    **dict(conf or {})}
        for key, value in settings.items():
            builder = builder.config(key, value)
        try:
            spark = builder.getOrCreate()
        except Exception as exc:  # Java missing, a master that does not answer, a bad setting
            raise SparkError(f"cannot start Spark with master {master!r}: {_first_line(exc)}; Spark needs Java 17 "
                             "or newer (java -version) and a reachable master") from None
        spark.sparkContext.setLogLevel("ERROR")
        return spark


def to_arrow(frame: Any) -> pa.Table:
    """Collect a Spark DataFrame as an Arrow table (``toArrow`` from Spark 4, the same transfer in 3.5)."""
    with quiet():
        if hasattr(frame, "toArrow"):
            return frame.toArrow()
        return pa.Table.from_batches(frame._collect_as_arrow(), schema=None)  # pyspark 3.5


_WORKER_IMPORT = re.compile(r"No module named '(gainscope|polars|numpy|pyarrow)[^']*'")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("Traceback", "File ", "at ", "JVM stacktrace")):
            return line[:500]
    return type(exc).__name__


def spark_failure(exc: BaseException) -> GainscopeError:
    """The error to raise for an exception out of a Spark job: a SparkError saying what failed and what to do
    (our own errors raised inside a worker are re-raised as they are, by the caller)."""
    text = str(exc)
    missing = _WORKER_IMPORT.search(text)
    if missing:
        return SparkError(
            f"the Spark workers cannot import {missing.group(1)}: install gainscope (pip install "
            "'gainscope[spark]') in the Python the executors run (spark.pyspark.python / PYSPARK_PYTHON), or ship "
            "an environment with spark.archives")
    if "Python worker exited unexpectedly" in text or "OutOfMemory" in text or "MemoryError" in text:
        return SparkError(
            "a Spark worker died while evaluating (most often out of memory: a partition or a query too large "
            "for spark.executor.memory / spark.executor.pyspark.memory): give the workers more memory, or more "
            f"partitions (partitions=); Spark said: {_first_line(exc)}")
    return SparkError(f"the Spark job failed: {_first_line(exc)}")
