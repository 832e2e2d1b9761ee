"""One query of ten million documents through ``gainscope.spark`` in ``local[2]``: time, the peak resident memory
of the Spark Python workers (``ps``, sampled every 0.2 s) and whether the values equal the local engine's.

    .venv/bin/python bench/spark_big_query.py --data /tmp/hspark/data

Writes ``big.parquet`` (query ``big``, 10,000,000 documents, random scores) and ``big.qrels`` (200 of them
judged, grades 0-3) when missing. Timings are never asserted by the test suite; this file is the measurement.
"""

from __future__ import annotations

import argparse
import subprocess
import threading
import time
import warnings
from pathlib import Path

METRICS = ["nDCG@10", "AP", "RR", "P@10", "R@100"]
DOCS = 10_000_000


def _data(folder: Path) -> tuple[Path, Path]:
    run, qrels = folder / "big.parquet", folder / "big.qrels"
    if not run.exists() or not qrels.exists():
        import numpy as np
        import polars as pl

        folder.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(17)
        docs = rng.permutation(DOCS)
        pl.DataFrame({"query_id": ["big"] * DOCS, "doc_id": [f"D{d}" for d in docs.tolist()],
                      "score": rng.random(DOCS)}).write_parquet(run)
        judged = docs[rng.choice(DOCS, 200, replace=False)]
        qrels.write_text("".join(f"big 0 D{d} {i % 4}\n" for i, d in enumerate(judged.tolist())), encoding="utf-8")
    return qrels, run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parent / "data")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    import gainscope
    import gainscope.spark

    qrels, run = _data(args.data)
    peak = {"kb": 0}
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            listing = subprocess.run(["ps", "-eo", "rss,args"], capture_output=True, text=True).stdout
            for line in listing.splitlines()[1:]:
                rss, _, command = line.strip().partition(" ")
                if "pyspark" in command and ("daemon" in command or "worker" in command):
                    peak["kb"] = max(peak["kb"], int(rss))
            time.sleep(0.2)

    threading.Thread(target=poll, daemon=True).start()
    spark = gainscope.spark.session("local[2]", {"spark.driver.memory": "4g"})
    start = time.perf_counter()
    ev = gainscope.spark.evaluate(str(qrels), str(run), METRICS, spark=spark)
    seconds = time.perf_counter() - start
    local = gainscope.evaluate(str(qrels), str(run), METRICS)
    done.set()
    same = ev.results.values.tobytes() == local.values.tobytes() and ev.results.aggregates == local.aggregates
    print(f"one query of {DOCS:,} documents on Spark local[2]: {seconds:.1f} s, peak Spark Python worker RSS "
          f"{peak['kb'] // 1024} MB, values bit-identical to the local engine: {'yes' if same else 'NO'}")
    spark.stop()


if __name__ == "__main__":
    main()
