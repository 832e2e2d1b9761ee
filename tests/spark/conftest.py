"""One local[2] SparkSession for every Spark test (starting one costs seconds; the tests share it)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local SparkSession with few shuffle partitions (the test data is small); skipped without pyspark or
    Java (dev.py installs both for CI)."""
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17 or newer (java is not on PATH)")
    import gainscope.spark

    session = gainscope.spark.session("local[2]", {"spark.sql.shuffle.partitions": "3",
                                                   "spark.default.parallelism": "2"})
    yield session
    session.stop()
