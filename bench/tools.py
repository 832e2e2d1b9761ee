"""One measurement of one tool, run in a fresh process by bench/run.py and printed as a JSON line.

    python bench/tools.py TOOL MODE QRELS RUN [--values OUT.json] [--repeat N]

TOOL: gainscope | pytrec_eval | ranx | ir_measures. MODE: ``e2e`` (read both files and evaluate the five
measures) or ``compute`` (load first, warm up once, then time the evaluation alone ``--repeat`` times).
The five measures: nDCG@10, AP, RR@10, P@10, R@100 (pytrec_eval has no RR@10: its recip_rank is computed
without a cutoff and left out of the agreement check).

Prints ``{"tool", "mode", "seconds": [...], "maxrss_mb"}``; with ``--values`` writes the per-query values.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
import warnings
from typing import Any

MEASURES = ("nDCG@10", "AP", "RR@10", "P@10", "R@100")


def _gainscope(qrels: str, run: str, mode: str) -> Any:
    import gainscope
    from gainscope.io import read_judgments, read_run

    warnings.simplefilter("ignore")  # tie and coverage warnings are expected on synthetic data
    loaded: dict[str, Any] = {}

    def load() -> None:
        if mode == "e2e":  # as a user calls it: evaluate(paths) reads the run file with the C scanner
            loaded["j"], loaded["r"] = qrels, run
        else:  # Judgments and Run objects in memory
            loaded["j"] = read_judgments(qrels)
            loaded["r"] = read_run(run)

    def evaluate() -> Any:
        return gainscope.evaluate(loaded["j"], loaded["r"], list(MEASURES))

    def values(res: Any) -> dict[str, dict[str, float]]:
        return {m: res.per_query(m) for m in MEASURES}

    return load, evaluate, values


def _pytrec(qrels: str, run: str, mode: str) -> Any:
    import pytrec_eval

    loaded: dict[str, Any] = {}

    def load() -> None:
        with open(qrels) as f:
            loaded["j"] = pytrec_eval.parse_qrel(f)
        with open(run) as f:
            loaded["r"] = pytrec_eval.parse_run(f)

    def evaluate() -> Any:
        ev = pytrec_eval.RelevanceEvaluator(loaded["j"], {"ndcg_cut.10", "map", "P.10", "recall.100"})
        return ev.evaluate(loaded["r"])

    def values(res: Any) -> dict[str, dict[str, float]]:
        names = {"nDCG@10": "ndcg_cut_10", "AP": "map", "P@10": "P_10", "R@100": "recall_100"}
        return {m: {q: v[t] for q, v in res.items()} for m, t in names.items()}

    return load, evaluate, values


def _ranx(qrels: str, run: str, mode: str) -> Any:
    from ranx import Qrels, Run, evaluate

    loaded: dict[str, Any] = {}
    names = {"nDCG@10": "ndcg@10", "AP": "map", "RR@10": "mrr@10", "P@10": "precision@10", "R@100": "recall@100"}

    def load() -> None:
        loaded["j"] = Qrels.from_file(qrels, kind="trec")
        loaded["r"] = Run.from_file(run, kind="trec")

    def run_eval() -> Any:
        evaluate(loaded["j"], loaded["r"], list(names.values()))
        return loaded["r"]

    def values(r: Any) -> dict[str, dict[str, float]]:
        return {m: {q: float(v) for q, v in r.scores[t].items()} for m, t in names.items()}

    return load, run_eval, values


def _ir_measures(qrels: str, run: str, mode: str) -> Any:
    import ir_measures
    from ir_measures import AP, RR, P, R, nDCG

    measures = {"nDCG@10": nDCG @ 10, "AP": AP, "RR@10": RR @ 10, "P@10": P @ 10, "R@100": R @ 100}
    loaded: dict[str, Any] = {}

    def load() -> None:
        loaded["j"] = list(ir_measures.read_trec_qrels(qrels))
        loaded["r"] = list(ir_measures.read_trec_run(run))

    def evaluate() -> Any:
        return list(ir_measures.iter_calc(list(measures.values()), loaded["j"], loaded["r"]))

    def values(res: Any) -> dict[str, dict[str, float]]:
        back = {str(v): k for k, v in measures.items()}
        out: dict[str, dict[str, float]] = {k: {} for k in measures}
        for row in res:
            out[back[str(row.measure)]][row.query_id] = row.value
        return out

    return load, evaluate, values


TOOLS = {"gainscope": _gainscope, "pytrec_eval": _pytrec, "ranx": _ranx, "ir_measures": _ir_measures}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tool", choices=sorted(TOOLS))
    ap.add_argument("mode", choices=("e2e", "compute"))
    ap.add_argument("qrels")
    ap.add_argument("run")
    ap.add_argument("--values", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    load, evaluate, values = TOOLS[args.tool](args.qrels, args.run, args.mode)
    seconds: list[float] = []
    first: float | None = None
    if args.mode == "e2e":
        t = time.perf_counter()
        load()
        res = evaluate()
        seconds.append(time.perf_counter() - t)
    else:
        load()
        t = time.perf_counter()
        res = evaluate()  # first call: JIT compilation / caches
        first = time.perf_counter() - t
        for _ in range(args.repeat):
            t = time.perf_counter()
            res = evaluate()
            seconds.append(time.perf_counter() - t)
    if args.values:
        with open(args.values, "w") as f:
            json.dump(values(res), f)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"tool": args.tool, "mode": args.mode, "seconds": seconds, "first_call": first,
                      "maxrss_mb": rss}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
