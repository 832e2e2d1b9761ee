"""Run inputs as Spark DataFrames of rows with their input positions: DataFrames, Parquet, text (TREC, JSON Lines).

Every run input becomes a DataFrame of ``_kind`` (0), ``query_id`` and ``doc_id`` (strings), the ``score``,
``rank`` and ``tag`` columns the input has (typed, or text tokens for text files), and ``_ord``: the row's
input position, increasing in input order (files in path order, then lines or rows), which orders a query's
rows as the local readers see them (duplicates kept ``first``, the order given under ``ties="rank"``, the
first example of a warning) and locates problems:

* a **Spark DataFrame**: its columns matched by the readers' aliases (``qid``, ``docno``, ``sim``...),
  ``_ord`` from ``monotonically_increasing_id()`` (its partition order); problems are named by their ids;
* **Parquet** files: ``_ord = file << 44 | row index`` from Spark's ``_metadata``; problems are located as
  ``file: row N``, as the local reader does;
* **TREC, MS MARCO or JSON Lines text**: lines read by Spark's text source and read by
  :mod:`gainscope.spark.parse` with the local readers' rules; problems are located as ``file:line`` (the
  line numbers are counted only when a message needs one, with one extra pass over the text).

A path may be a file, a directory or a glob that Spark reads (``s3a://``, ``hdfs://``, local paths in local
mode or on a shared file system), or a list of them read as one run. The format is ``format=`` or detected as
the local readers detect it (extension, then the first lines). JSON documents (not splittable into lines) and
CSV/TSV files are refused with the way to read them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote

from gainscope.errors import InputError, PolicyError, UnknownFormatError
from gainscope.io.detect import check_format, detect_head_format
from gainscope.io.frames import resolve_columns
from gainscope.io.text import canonical_encoding
from gainscope.spark.assemble import RunInfo
from gainscope.spark.parse import FILE_SHIFT, LineIndex, LinePlan, normal_uri, parse_lines, stream_schema
from gainscope.spark.session import quiet

__all__ = ["RunSource", "is_spark_frame", "run_source"]

_MASK = (1 << FILE_SHIFT) - 1
_TEXT_FORMATS = ("trec", "msmarco", "jsonl")


@dataclass(frozen=True)
class RunSource:
    """A run input ready for the partitions: its rows (see the module docstring), what the driver knows
    about it (:class:`~gainscope.spark.assemble.RunInfo`) and whether its text tokens are already stripped."""

    frame: Any
    info: RunInfo
    tokens_clean: bool
    optional_values: bool = False


def is_spark_frame(obj: Any) -> bool:
    """True for a Spark DataFrame (classic or Spark Connect), recognised without importing pyspark."""
    module = type(obj).__module__ or ""
    return module.startswith("pyspark.") and any(c.__name__ == "DataFrame" for c in type(obj).__mro__)


def run_source(spark: Any, source: Any, *, format: str | None, name: str | None, nan_score: float | None,
               on_duplicate: str, allow_empty: bool, extra_columns: str = "error",
               encoding: str = "utf-8") -> RunSource:
    """The :class:`RunSource` of a Spark DataFrame, or of the path(s) of a run Spark can read (text read as
    UTF-8: any other ``encoding`` is refused for a text run; ``extra_columns`` as for
    :func:`gainscope.io.read_run`)."""
    options = {"nan_score": nan_score, "on_duplicate": on_duplicate, "allow_empty": allow_empty}
    if is_spark_frame(source):
        return _frame_source(source, name, options)
    paths = _paths(source)
    label = ", ".join(paths)
    fmt = check_format(format, "run")
    files = _listed(spark, paths, label)
    detected = fmt is None
    fmt = fmt or _detected(spark, files, _display(files, paths)[0])
    if fmt == "parquet":
        return _parquet_source(spark, paths, files, label, name, options)
    if fmt in _TEXT_FORMATS:
        if canonical_encoding(encoding) != "utf-8":
            raise PolicyError(f"{label}: the Spark backend reads text runs as UTF-8, not {encoding}; convert the "
                              f"file to UTF-8 (iconv -f {encoding} -t utf-8), write it as Parquet, or evaluate it "
                              f"with the local backend")
        return _text_source(spark, paths, files, label, fmt, name, options, extra_columns,
                            check_ranks=detected and fmt == "msmarco")
    how = {"json": "write it as JSON Lines (one object per line)",
           "csv": "read it with spark.read.csv(path, header=True) and pass the DataFrame",
           "tsv": "read it with spark.read.csv(path, header=True, sep='\\t') and pass the DataFrame"}[fmt]
    raise UnknownFormatError(f"{label}: the Spark backend reads runs from Parquet, TREC, MS MARCO or JSON Lines "
                             f"files, or Spark DataFrames; this is {fmt}: {how}")


def _paths(source: Any) -> list[str]:
    items = list(source) if isinstance(source, (list, tuple)) else [source]
    if not items or not all(isinstance(p, (str, os.PathLike)) for p in items):
        raise InputError(f"the Spark backend reads a run from a Spark DataFrame or from paths Spark can read "
                         f"(a path, or a list of paths); got {type(source).__name__}. For a run in memory, use "
                         "gainscope.evaluate")
    return [os.fspath(p) for p in items]


def _listed(spark: Any, paths: list[str], label: str) -> list[str]:
    """The files the paths name (Spark's listing: directories and globs expanded), in path order."""
    with quiet():
        try:
            files = spark.read.text(paths).inputFiles()
        except Exception as exc:  # AnalysisException: PATH_NOT_FOUND...
            if "PATH_NOT_FOUND" in str(exc) or "does not exist" in str(exc):
                raise InputError(f"no such file: {label!r}") from None
            raise
    if not files:
        raise InputError(f"no file to read at {label!r}")
    return sorted({normal_uri(f) for f in files})


def _stem(path: str) -> str:
    """A file's name without folders, ``.gz`` and one more extension (the readers' default run name)."""
    name = PurePosixPath(path.rstrip("/")).name
    if name.endswith(".gz"):
        name = name[:-3]
    return name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name


def _suffix(path: str) -> str:
    name = PurePosixPath(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return PurePosixPath(name).suffix


def _detected(spark: Any, files: list[str], shown: str) -> str:
    """The format of the first file, detected from its name and first lines as the local readers do
    (``shown``: how messages name it)."""
    first = files[0]
    if _suffix(first) in (".parquet", ".pq"):
        return "parquet"
    from pyspark.sql import functions as F

    with quiet():
        rows = (spark.read.option("lineSep", "\n").text(first).select(F.col("value").cast("binary"))
                .limit(64).collect())
    head = b"\n".join(bytes(r[0]) for r in rows)
    return detect_head_format(head, _suffix(first), "run", shown)


def _display(files: list[str], paths: list[str]) -> list[str]:
    """How messages name each file: the path as given for a single file, else the file's path or URI."""
    if len(files) == 1 and len(paths) == 1:
        return [paths[0]]
    return [unquote(f[len("file://"):]) if f.startswith("file://") else f for f in files]


def _ordinal_file(files: list[str]) -> Any:
    """The index of a row's file in ``files`` (as a Spark column), from ``_metadata.file_path``."""
    from pyspark.sql import functions as F

    spelled = F.regexp_replace(F.col("_metadata.file_path"), "^file:/+", "file:///")
    return F.array_position(F.array(*[F.lit(f) for f in files]), spelled).cast("long") - 1


# ---------------------------------------------------------------------- DataFrames
_SPARK_FLOATS = {"DoubleType": "Float64", "FloatType": "Float32"}


def _id_columns(schema: Any, found: dict[str, str], where: str) -> None:
    """Refuse float id columns as the readers do (ids must be strings; integers are written out)."""
    for role, label in (("query_id", "query id"), ("doc_id", "doc id")):
        kind = type(schema[found[role]].dataType).__name__
        if kind in _SPARK_FLOATS:
            raise InputError(f"{where}the {label} column holds floats ({_SPARK_FLOATS[kind]}); ids must be strings "
                             f"(floats usually mean missing values or ids already turned into numbers)")


def _selected(frame: Any, found: dict[str, str], ordinal: Any) -> Any:
    from pyspark.sql import functions as F

    columns = [F.lit(0).cast("tinyint").alias("_kind"), F.col(found["query_id"]).cast("string").alias("query_id"),
               F.col(found["doc_id"]).cast("string").alias("doc_id")]
    columns += [F.col(found[r]).alias(r) for r in ("score", "rank") if r in found]
    return frame.select(*columns, ordinal.alias("_ord"))


def _frame_source(frame: Any, name: str | None, options: dict[str, Any]) -> RunSource:
    from pyspark.sql import functions as F

    found = resolve_columns(frame.columns, "run")
    _id_columns(frame.schema, found, "")
    with quiet():
        rows = _selected(frame, found, F.monotonically_increasing_id())
    return RunSource(rows, RunInfo(label=None, name=name, default_name=None, unit=None, **options),
                     tokens_clean=False)


# ---------------------------------------------------------------------- Parquet
def _parquet_source(spark: Any, paths: list[str], files: list[str], label: str, name: str | None,
                    options: dict[str, Any]) -> RunSource:
    from pyspark.sql import functions as F

    with quiet():
        frame = spark.read.parquet(*paths)
    where = f"{label}: "
    found = resolve_columns(frame.columns, "run", where)
    _id_columns(frame.schema, found, where)
    ordinal = F.shiftleft(_ordinal_file(files), FILE_SHIFT).bitwiseOR(F.col("_metadata.row_index"))
    shown = _display(files, paths)

    def locate(o: int) -> tuple[str | None, int | None]:
        return shown[o >> FILE_SHIFT], (o & _MASK) + 1

    info = RunInfo(label=label, name=name, default_name=_stem(paths[0]), unit="row", locate=locate, **options)
    return RunSource(_selected(frame, found, ordinal), info, tokens_clean=False)


# ---------------------------------------------------------------------- text
def _lines(spark: Any, paths: Sequence[str], files: list[str]) -> Any:
    """The lines of the files as bytes, with their file's index in ``files`` and their block's start."""
    from pyspark.sql import functions as F

    with quiet():
        return (spark.read.option("lineSep", "\n").text(list(paths))
                .select(F.col("value").cast("binary").alias("value"), _ordinal_file(files).alias("file"),
                        F.col("_metadata.file_block_start").alias("file_block_start")))


def _text_source(spark: Any, paths: list[str], files: list[str], label: str, fmt: str, name: str | None,
                 options: dict[str, Any], extra_columns: str, *, check_ranks: bool = False) -> RunSource:
    plan = LinePlan(fmt, extra_columns, check_ranks)
    with quiet():
        rows = _lines(spark, paths, files).mapInArrow(lambda batches: parse_lines(batches, plan), stream_schema(plan))
    locations = _TextLocations(spark, paths, files, _display(files, paths))
    info = RunInfo(label=label, name=name, default_name=_stem(paths[0]) if fmt != "trec" else None, unit="line",
                   locate=locations.locate, block_offset=locations.block_offset, **options)
    return RunSource(rows, info, tokens_clean=fmt != "jsonl", optional_values=fmt == "jsonl")


class _TextLocations:
    """Line numbers and byte offsets of ordinals, counted (one pass over the text) the first time a message
    needs one."""

    def __init__(self, spark: Any, paths: list[str], files: list[str], shown: list[str]) -> None:
        self._spark, self._paths, self._files, self._shown = spark, paths, files, shown
        self._index: LineIndex | None = None

    def _counted(self) -> LineIndex:
        if self._index is None:
            from pyspark.sql import functions as F

            with quiet():
                rows = (_lines(self._spark, self._paths, self._files).groupBy("file", "file_block_start")
                        .agg(F.count("*").alias("n"), F.sum(F.octet_length("value") + 1).alias("bytes")).collect())
            self._index = LineIndex([(int(r["file"]), int(r["file_block_start"]), int(r["n"]), int(r["bytes"]))
                                     for r in rows])
        return self._index

    def locate(self, ordinal: int) -> tuple[str | None, int | None]:
        file, line = self._counted().line(ordinal)
        return self._shown[file], line

    def block_offset(self, ordinal: int) -> int:
        return self._counted().block_offset(ordinal)

