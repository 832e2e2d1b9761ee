"""Synthetic TREC judgments and runs for the benchmark, reproducible from a fixed seed.

Sizes: S = 1,000 queries x 100 documents, M = 10,000 x 1,000 (10 million run lines), L = 100,000 x 1,000
(100 million lines); the wide shape W10k, W50k, W200k = 10,000, 50,000, 200,000 queries x 50 documents. Each query has about 50 judged documents (grades 0-4, every grade present), 60% of
them retrieved; scores depend on the grade plus noise and are rounded to 3 decimals, so tied scores occur
in every query. Run files are sorted by query, then by score descending, as search engines write them.

    python bench/generate.py S M [L] --out bench/data [--seed 13] [--second-run]

:func:`second_run` writes ``{size}.b.run``, a second system over the same documents (each score plus seeded
normal noise, the ranking re-sorted): the other side of ``compare`` and ``report`` in the benchmark.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where data is made: bench/run.py imports SIZES and must stay small (its children's
    import numpy as np  # peak memory, as the kernel counts it, starts from the parent's size)
    import polars as pl

SIZES = {"S": (1_000, 100), "M": (10_000, 1_000), "L": (100_000, 1_000),
         # the wide shape (many small queries, issue 19): 50 documents each
         "W10k": (10_000, 50), "W50k": (50_000, 50), "W200k": (200_000, 50)}
JUDGED = 50
CORPUS = 50_000_000
BLOCK = 2_000  # queries generated and written per block (bounded memory for L)


def _block(rng: np.random.Generator, q0: int, nq: int, nd: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    import numpy as np
    import polars as pl

    n = nq * nd
    qidx = np.repeat(np.arange(q0, q0 + nq), nd)
    # distinct documents per query: a random offset plus a random stride keeps them unique without sorting
    base = rng.integers(0, CORPUS, size=nq)
    stride = rng.integers(1, 97, size=nq) * 2 + 1
    local = np.tile(np.arange(nd), nq)
    docs = (base[qidx - q0] + local * stride[qidx - q0]) % CORPUS
    # judged among the retrieved: ~60% of JUDGED, biased to the top of the ranking
    n_ret_judged = min(nd, int(JUDGED * 0.6))
    grades_ret = np.full(n, -1, dtype=np.int64)
    pick = np.minimum(rng.exponential(nd / 4, size=(nq, n_ret_judged)).astype(np.int64), nd - 1)
    flat = (np.arange(nq)[:, None] * nd + pick).ravel()
    grades_ret[flat] = rng.choice(5, size=flat.size, p=[0.45, 0.2, 0.15, 0.12, 0.08])
    # every grade present in every query: force grades 0..4 on the first five picks
    grades_ret[np.arange(nq) * nd + np.minimum(np.arange(5)[:, None] * 3, nd - 1)] = np.arange(5)[:, None]
    noise = rng.normal(0.0, 1.2, size=n)
    score = np.round(np.where(grades_ret > 0, grades_ret * 0.6, 0.0) + noise + 10.0, 3)
    run = pl.DataFrame({"q": qidx, "doc": docs, "score": score, "grade": grades_ret})
    run = run.sort(["q", "score"], descending=[False, True])
    run = run.with_columns((pl.int_range(pl.len()).over("q") + 1).alias("rank"))
    judged_ret = run.filter(pl.col("grade") >= 0).select("q", "doc", "grade")
    # judged but not retrieved
    n_extra = JUDGED - n_ret_judged
    eq = np.repeat(np.arange(q0, q0 + nq), n_extra)
    edoc = (rng.integers(0, CORPUS, size=eq.size) | (1 << 40))  # outside the run's id range: never retrieved
    egrade = rng.choice(5, size=eq.size, p=[0.5, 0.2, 0.15, 0.1, 0.05])
    extra = pl.DataFrame({"q": eq, "doc": edoc, "grade": egrade})
    qrels = pl.concat([judged_ret, extra]).unique(["q", "doc"], keep="first").sort(["q", "doc"])
    return run, qrels


def generate(size: str, out: Path, seed: int = 13) -> tuple[Path, Path]:
    """Write ``{size}.qrels`` and ``{size}.run`` into ``out``; returns their paths."""
    import numpy as np
    import polars as pl

    nq, nd = SIZES[size]
    out.mkdir(parents=True, exist_ok=True)
    qpath, rpath = out / f"{size}.qrels", out / f"{size}.run"
    rng = np.random.default_rng([seed, *size.encode()])  # [seed, ord(size)] for S, M, L
    with open(qpath, "wb") as qf, open(rpath, "wb") as rf:
        for q0 in range(0, nq, BLOCK):
            run, qrels = _block(rng, q0, min(BLOCK, nq - q0), nd)
            rf.write(run.select(
                pl.format("q{} Q0 D{} {} {} bench", "q", "doc", "rank", pl.col("score").round(3).cast(pl.String))
            ).to_series().str.join("\n").item().encode() + b"\n")
            qf.write(qrels.select(pl.format("q{} 0 D{} {}", "q", "doc", "grade")).to_series()
                     .str.join("\n").item().encode() + b"\n")
    return qpath, rpath


def second_run(size: str, out: Path, seed: int = 13) -> Path:
    """Write ``{size}.b.run``: the run ``{size}.run`` (generated first if missing) with every score moved by
    normal noise (sd 0.5, rounded to 3 decimals, seed ``seed``) and each query re-sorted by the new scores;
    the tag is ``bench-b``. Returns its path."""
    import numpy as np
    import polars as pl

    run = out / f"{size}.run"
    if not run.exists():
        generate(size, out, seed)
    path = out / f"{size}.b.run"
    rng = np.random.default_rng([seed, *size.encode(), 2])
    frame = pl.read_csv(run, separator=" ", has_header=False, new_columns=["q", "q0", "doc", "rank", "score", "tag"],
                        schema_overrides={"q": pl.String, "doc": pl.String, "score": pl.Float64})
    noise = np.round(rng.normal(0.0, 0.5, size=frame.height), 3)
    frame = (frame.with_row_index("_line")
             .with_columns((pl.col("score") + noise).round(3).alias("score"),
                           pl.col("_line").first().over("q").alias("_q"))  # queries stay in file order
             .sort(["_q", "score"], descending=[False, True], maintain_order=True)
             .with_columns((pl.int_range(pl.len()).over("q") + 1).alias("rank")))
    text = frame.select(pl.format("{} Q0 {} {} {} bench-b", "q", "doc", "rank",
                                  pl.col("score").round(3).cast(pl.String))).to_series().str.join("\n").item()
    path.write_bytes(text.encode() + b"\n")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sizes", nargs="+", choices=sorted(SIZES))
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "data")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--second-run", action="store_true", help="also write {size}.b.run (see second_run)")
    args = ap.parse_args()
    for size in args.sizes:
        t = time.perf_counter()
        q, r = generate(size, args.out, args.seed)
        print(f"{size}: {r} ({r.stat().st_size / 1e6:.0f} MB), {q} in {time.perf_counter() - t:.1f} s")
        if args.second_run:
            b = second_run(size, args.out, args.seed)
            print(f"{size}: {b} ({b.stat().st_size / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
