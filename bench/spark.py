"""gainscope on Apache Spark (local[2]) against the local engine, on the benchmark's data, with a cluster estimate.

    .venv/bin/python bench/spark.py --data /tmp/gs/data --sizes M L --out /tmp/spark.md

For each size (M: 10 million run lines, 10,000 queries; L: 100 million lines, 100,000 queries) the TREC files of
bench/generate.py are written (if missing) and converted once to Parquet (a folder of files, 2 million rows each,
as a Spark job would leave them). Measured, on the same machine and files:

* the local engine, ``gainscope evaluate`` from the shell (process start to exit), on the TREC run (the C
  scanner) and, for M, on the Parquet run;
* ``--backend spark --master local[2]`` from the shell (JVM start included) on M;
* in one warm session (a first job run before timing), ``gainscope.spark.evaluate`` on the Parquet run (and the
  TREC text run for M); the per-query values are compared with the local engine's, bit for bit;
* from Spark's own task metrics (the REST API of the session's UI), each stage's number of tasks and total task
  time: the time a cluster of C cores would take is estimated as the driver's share (wall time not spent in
  stages) plus, for each stage, ``ceil(tasks / C)`` times its mean task time. This is an estimate: it assumes
  tasks as long as here, no stragglers and a shuffle as fast over a network as on one disk.

Timings are never asserted by the test suite; this file is the measurement.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time
import urllib.request
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import SIZES, generate  # noqa: E402
from tools import MEASURES  # noqa: E402

METRICS = list(MEASURES)


ROWS_PER_FILE = 2_000_000


def _parquet(run: Path, folder: Path) -> Path:
    """The TREC run as a folder of Parquet files of 2 million rows (query_id, doc_id, score, rank), written once
    (streamed: L never sits in memory)."""
    if folder.exists() and any(folder.glob("*.parquet")):
        return folder
    import pyarrow as pa
    import pyarrow.csv as csv
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    names = ["query_id", "q0", "doc_id", "rank", "score", "tag"]
    types = {"query_id": pa.string(), "q0": pa.string(), "doc_id": pa.string(), "rank": pa.int64(),
             "score": pa.float64(), "tag": pa.string()}
    reader = csv.open_csv(run, read_options=csv.ReadOptions(column_names=names, block_size=64 << 20),
                          parse_options=csv.ParseOptions(delimiter=" "),
                          convert_options=csv.ConvertOptions(column_types=types,
                                                             include_columns=["query_id", "doc_id", "score", "rank"]))
    pending: list[Any] = []
    rows = files = 0
    for batch in reader:
        pending.append(batch)
        rows += batch.num_rows
        if rows >= ROWS_PER_FILE:
            pq.write_table(pa.Table.from_batches(pending), folder / f"part-{files:05d}.parquet")
            pending, rows, files = [], 0, files + 1
    if pending:
        pq.write_table(pa.Table.from_batches(pending), folder / f"part-{files:05d}.parquet")
    return folder


def _shell(args: list[str]) -> float:
    """Seconds of a ``gainscope`` command from the shell (process start to exit)."""
    exe = Path(sys.executable).with_name("gainscope")
    t = time.perf_counter()
    done = subprocess.run([str(exe), *args], capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"gainscope {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - t


def _stages(spark: Any, group: str) -> list[dict[str, Any]]:
    """The completed stages of the jobs of ``group``: tasks, total task time (s), wall time (s)."""
    base = spark.sparkContext.uiWebUrl.rstrip("/") + "/api/v1/applications/" + spark.sparkContext.applicationId

    def get(path: str) -> Any:
        with urllib.request.urlopen(base + path, timeout=30) as response:
            return json.loads(response.read())

    ids = [s for job in get("/jobs") if job.get("jobGroup") == group for s in job["stageIds"]]
    out = []
    for stage in get("/stages?status=complete"):
        if stage["stageId"] in ids:
            wall = _seconds(stage["completionTime"]) - _seconds(stage["submissionTime"])
            out.append({"stage": stage["stageId"], "name": stage["name"].split(" at ")[0], "tasks": stage["numTasks"],
                        "task_seconds": stage["executorRunTime"] / 1000.0, "wall": wall})
    return sorted(out, key=lambda s: s["stage"])


def _seconds(stamp: str) -> float:
    from datetime import datetime

    return datetime.strptime(stamp.replace("GMT", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


def _estimate(stages: list[dict[str, Any]], total: float, cores: int) -> float:
    """Driver share (wall time outside stages) plus each stage's ``ceil(tasks / cores)`` mean task times."""
    driver = max(0.0, total - sum(s["wall"] for s in stages))
    return driver + sum(math.ceil(s["tasks"] / cores) * s["task_seconds"] / max(s["tasks"], 1) for s in stages)


def _identical(a: Any, b: Any) -> bool:
    return a.query_ids == b.query_ids and a.values.tobytes() == b.values.tobytes() and a.aggregates == b.aggregates


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", default=["M"], choices=["M", "L"])
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--out", type=Path, default=None, help="write the markdown here (default: print it)")
    ap.add_argument("--cores", type=int, nargs="+", default=[2, 16, 64, 256], help="cluster sizes to estimate")
    ap.add_argument("--rows-per-partition", type=int, default=250_000,
                    help="partitions of the evaluation: run lines / this (default 250,000: M 40, L 400)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    import gainscope
    import gainscope.spark

    lines = ["## Spark", "", f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
             f"{platform.platform()}; command: `{' '.join([Path(sys.argv[0]).name, *sys.argv[1:]])}`", ""]
    spark = gainscope.spark.session("local[2]", {"spark.ui.enabled": "true", "spark.driver.memory": "6g",
                                                 "spark.sql.files.maxPartitionBytes": str(32 << 20)})
    t = time.perf_counter()
    spark.range(1000).selectExpr("sum(id)").collect()
    lines.append(f"Session start and first job (JVM and Python workers warm up): {time.perf_counter() - t:.1f} s "
                 f"after the session object; Spark {spark.version}.")
    lines.append("")
    for size in args.sizes:
        qrels, run = args.data / f"{size}.qrels", args.data / f"{size}.run"
        if not run.exists():
            generate(size, args.data)
        parquet = _parquet(run, args.data / f"{size}.parquet")
        nq, nd = SIZES[size]
        lines += [f"### {size}: {nq * nd:,} run lines, {nq:,} queries", "",
                  "| what | seconds |", "|---|---:|"]
        local_text = _shell(["evaluate", str(qrels), str(run), "-m", " ".join(METRICS), "-f", "csv"])
        lines.append(f"| local engine, TREC text (C scanner), from the shell | {local_text:.1f} |")
        if size == "M":
            import polars as pl

            t = time.perf_counter()
            gainscope.evaluate(str(qrels), pl.read_parquet(parquet / "*.parquet"), METRICS)
            lines.append(f"| local engine, the Parquet files read by polars, in process | "
                         f"{time.perf_counter() - t:.1f} |")
            shell_spark = _shell(["evaluate", str(qrels), str(run), "-m", " ".join(METRICS), "-f", "csv",
                                  "--backend", "spark", "--master", "local[2]"])
            lines.append(f"| `--backend spark --master local[2]`, TREC text, from the shell (JVM start included) | "
                         f"{shell_spark:.1f} |")
        t = time.perf_counter()
        local = gainscope.evaluate(str(qrels), str(run), METRICS)
        local_in = time.perf_counter() - t
        inputs = [("Parquet", str(parquet))] + ([("TREC text", str(run))] if size == "M" else [])
        partitions = max(1, nq * nd // args.rows_per_partition)
        stage_lines: list[str] = []
        for label, path in inputs:
            group = f"{size}-{label}"
            spark.sparkContext.setJobGroup(group, group)
            t = time.perf_counter()
            ev = gainscope.spark.evaluate(str(qrels), path, METRICS, spark=spark, partitions=partitions)
            total = time.perf_counter() - t
            same = _identical(ev.results, local)
            lines.append(f"| gainscope.spark.evaluate, {label}, warm session, local[2], {partitions} partitions "
                         f"(values bit-identical to the local engine: {'yes' if same else 'NO'}) | {total:.1f} |")
            stages = _stages(spark, group)
            work = sum(s["task_seconds"] for s in stages)
            stage_lines += ["", f"{label}: stages of the evaluation (task seconds summed over tasks):", "",
                            "| stage | tasks | task seconds | mean per task | wall |", "|---|---:|---:|---:|---:|"]
            stage_lines += [f"| {s['stage']} {s['name']} | {s['tasks']} | {s['task_seconds']:.1f} | "
                            f"{s['task_seconds'] / max(s['tasks'], 1):.2f} | {s['wall']:.1f} |" for s in stages]
            estimates = ", ".join(f"{c} cores: {_estimate(stages, total, c):.1f} s" for c in args.cores)
            stage_lines += ["", f"Work in tasks: {work:.1f} s; driver's share (wall time outside stages): "
                            f"{max(0.0, total - sum(s['wall'] for s in stages)):.1f} s. Estimate on a cluster "
                            f"(driver's share + per stage ceil(tasks / cores) x mean task time): {estimates}."]
        lines.append(f"| local engine in process (TREC text), for the comparison | {local_in:.1f} |")
        lines += [*stage_lines, ""]
    spark.stop()
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
