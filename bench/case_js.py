"""Time JavaScript scorers on cases: the bundled example case and a generated case of N queries, scored with a
Quepid JavaScript scorer (the built-in nDCG@10 written in JavaScript, and Quepid's v1 default scorer), against the
same case scored by the built-in Python scorer. Prints medians of fresh ``score_case`` calls (each starts its
runtime, checks the script and scores every query) and the cost per query.

    python bench/case_js.py --queries 1000 --repeat 3

Needs mini-racer (``pip install 'gainscope[quepid]'``). Only the public API is used, so the same script times
an older checkout (``PYTHONPATH=OLD/src python bench/case_js.py``).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path
from typing import Any

from gainscope.cases import Case, CaseQuery, JavaScriptScorer, read_case, resolve_scorer, score_case
from gainscope.cases.builtin_js import builtin_source

ROOT = Path(__file__).resolve().parents[1]


def generated_case(n: int, seed: int = 13) -> Case:
    """``n`` queries on 1-10, 10 results each, about 70% of them rated, plus a few rated documents not returned."""
    rng = random.Random(seed)
    queries = []
    for i in range(n):
        results = [f"q{i}d{j}" for j in range(10)]
        ratings: dict[str, float] = {d: rng.randint(1, 10) for d in results if rng.random() < 0.7}
        ratings.update({f"q{i}x{j}": rng.randint(1, 10) for j in range(rng.randint(0, 4))})
        queries.append(CaseQuery(f"query {i}", ratings, tuple(results)))
    return Case(tuple(queries), scale=None)


def median_seconds(case: Case, scorer: Any, scale: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        score_case(case, scorer, scale=scale)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    example = read_case(ROOT / "examples" / "cases" / "movies_before.json")
    big = generated_case(args.queries)
    ndcg_js = JavaScriptScorer(builtin_source("nDCG@10"), name="nDCG@10.js")
    v1_js = JavaScriptScorer(builtin_source("default@10"), name="v1.js")  # Quepid's v1, with its edit distance
    score_case(example, ndcg_js, scale="graded")  # first use: starts what the runtime needs once per process
    rows = [
        ("example case (4 queries), nDCG@10.js", example, ndcg_js, "graded"),
        (f"{args.queries} queries, nDCG@10 (Python)", big, resolve_scorer("nDCG@10"), "1-10"),
        (f"{args.queries} queries, nDCG@10.js", big, ndcg_js, "1-10"),
        (f"{args.queries} queries, v1.js", big, v1_js, "1-10"),
    ]
    print(f"medians of {args.repeat}")
    for label, case, scorer, scale in rows:
        seconds = median_seconds(case, scorer, scale, args.repeat)
        per_query = seconds / len(case.queries) * 1000
        print(f"{label:45s} {seconds:8.3f} s  {per_query:7.3f} ms per query")


if __name__ == "__main__":
    main()
