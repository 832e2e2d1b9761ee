"""The live-search benchmark (issue 15, item 8), printed as markdown:

1. the embedded engine against its peers on a synthetic corpus (bench/search_corpus.py: 100,000 documents by
   default): indexing (documents/s) and querying (queries/s, top 100, one thread) of gainscope's embedded engine,
   bm25s, tantivy and SQLite FTS5, each job in a fresh process (bench/search_peers.py), medians over --repeat,
   peak resident memory, and the agreement of the top 10 with gainscope's;
2. the HTTP path under faults: queries sent through the runner (gainscope.search.run_queries, the code of
   `gainscope search`) to the fake engine of tests/search/server.py with --faults injected (default 20% of the
   requests: 500, 503, 429 with Retry-After 0, dropped connections), at --qps; reported: the requests per second
   achieved against --qps (retries count: they are requests), queries answered, failed, lost.

    python bench/search.py --docs 100000 --queries 1000 --data /tmp/gs/search [--repeat 3] [--out FILE]
    python bench/search.py --http-only --qps 50 200 --http-queries 2000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "search"))

from search_corpus import generate  # noqa: E402

ENGINES = ("gainscope", "bm25s", "tantivy", "fts5")


def _job(engine: str, job: str, source: Path, target: Path, run: Path | None = None) -> dict[str, float]:
    cmd = [sys.executable, str(HERE / "search_peers.py"), engine, job, str(source), str(target)]
    if run is not None:
        cmd += ["--run", str(run)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{engine} {job} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _top10(run: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    with run.open() as fh:
        for line in fh:
            q, _, d, rank, *_ = line.split()
            if int(rank) <= 10:
                out.setdefault(q, []).append(d)
    return out


def engines(args: argparse.Namespace) -> list[str]:
    corpus, queries = args.data / "corpus.jsonl", args.data / "queries.jsonl"
    if not corpus.exists():
        print(f"generating {args.docs} documents ...", file=sys.stderr, flush=True)
        generate(args.docs, args.queries, args.data)
    docs = sum(1 for _ in corpus.open())
    nq = sum(1 for _ in queries.open())
    rows, runs = [], {}
    measured: dict[str, tuple[list[dict[str, float]], list[dict[str, float]]]] = {e: ([], []) for e in args.engines}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):  # the engines in turn, round after round, so that a drift of the machine's
            for engine in args.engines:  # speed falls on all of them alike
                folder = Path(tmp) / f"{engine}{i}"
                index_runs, query_runs = measured[engine]
                index_runs.append(_job(engine, "index", corpus, folder))
                run = Path(tmp) / f"{engine}.run"
                query_runs.append(_job(engine, "query", folder, queries, run))
                shutil.rmtree(folder)
                print(f"{engine} #{i + 1}: index {index_runs[-1]['seconds']:.2f} s, queries "
                      f"{query_runs[-1]['seconds']:.2f} s", file=sys.stderr, flush=True)
        for engine in args.engines:
            index_runs, query_runs = measured[engine]
            runs[engine] = _top10(Path(tmp) / f"{engine}.run")
            med = statistics.median
            rows.append((engine, med(r["per_second"] for r in index_runs), med(r["peak_mb"] for r in index_runs),
                         med(r["index_mb"] for r in index_runs), med(r["per_second"] for r in query_runs),
                         med(r["load_seconds"] for r in query_runs), med(r["peak_mb"] for r in query_runs)))
    busy = os.getloadavg()[0]
    lines = [f"### Embedded engine and peers: {docs:,} documents, {nq:,} queries (top 100)", "",
             f"Load average at the end: {busy:.1f} on {os.cpu_count()} cores (other work shared the machine).", "",
             f"Medians of {args.repeat} fresh processes each, the engines in turn. Index: read the JSONL corpus, "
             "index title and text, write to disk. Query: one thread, top 100, after loading the index (load time "
             "apart).", "",
             "| engine | index docs/s | index peak MB | index size MB | queries/s | load s | query peak MB | "
             "top-10 overlap with gainscope |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    ours = runs.get("gainscope", {})
    for engine, ips, ipeak, isize, qps, load, qpeak in rows:
        overlap = "-"
        if ours and engine != "gainscope":
            shared = [len(set(ours.get(q, [])) & set(v)) / max(1, len(set(ours.get(q, [])) | set(v)))
                      for q, v in runs[engine].items()]
            overlap = f"{statistics.mean(shared):.3f}" if shared else "-"
        lines.append(f"| {engine} | {ips:,.0f} | {ipeak:.0f} | {isize:.0f} | {qps:,.0f} | {load:.2f} | {qpeak:.0f} | "
                     f"{overlap} |")
    return [*lines, ""]


async def _http(qps: float, n: int, faults: str, concurrency: int, seed: int) -> dict[str, float]:
    import httpx

    from gainscope.search import RetryPolicy, RunSettings, SearchQuery, SnapshotStore, load_engine, run_queries

    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "search" / "server.py"), "--port", "0",
                               "--faults", faults, "--seed", str(seed), "--hits", "10"], stdout=subprocess.PIPE,
                              text=True)
    try:
        url = server.stdout.readline().strip()  # type: ignore[union-attr]
        with tempfile.TemporaryDirectory() as tmp:
            toml = Path(tmp) / "engines.toml"
            toml.write_text(f'[engines.fake]\nkind = "elasticsearch"\nurl = "{url}/products/_search"\n'
                            'body = \'{"size": {{top}}, "query": "{{query}}"}\'\n')
            engine = load_engine(f"{toml}:fake")
            queries = [SearchQuery(f"q{i}", f"query number {i}") for i in range(n)]
            settings = RunSettings(top=10, concurrency=concurrency, qps=qps, retry=RetryPolicy(max_attempts=10),
                                   max_consecutive_failures=50, seed=seed)
            with SnapshotStore.open(Path(tmp) / "s.sqlite") as store:
                started = time.perf_counter()
                outcome = await run_queries(engine, queries, store, settings=settings)
                seconds = time.perf_counter() - started
                recorded = store.statuses(outcome.snapshot)
        stats = httpx.get(f"{url}/_stats").json()
    finally:
        server.terminate()
        server.wait(30)
    arrivals = sorted(stats["arrivals"])
    low, high = int(len(arrivals) * 0.05), int(len(arrivals) * 0.95)
    sustained = (high - low) / (arrivals[high] - arrivals[low]) if high > low else math.nan
    return {"qps": qps, "queries": n, "seconds": seconds, "requests": stats["requests"],
            "rate": stats["requests"] / seconds, "sustained": sustained,
            "ok": sum(s == "ok" for s in recorded.values()),
            "failed": sum(s == "failed" for s in recorded.values()), "lost": n - len(recorded),
            "faults": sum(v for k, v in stats["replies"].items() if k != "ok")}


def http(args: argparse.Namespace) -> list[str]:
    lines = [f"### HTTP path with {args.faults} injected", "",
             f"{args.http_queries:,} queries through the runner to the fake engine (tests/search/server.py, its "
             f"own process) on 127.0.0.1, --concurrency {args.concurrency}, up to 10 attempts per query (backoff "
             "0.25 s base, full jitter). Rate = requests the server received / wall time (retries are requests, "
             "so they count against --qps).", "",
             "Each --qps is run without faults first: that row shows what the machine sustains at that rate, so "
             "that a shortfall of the faulty row is the faults', not the machine's.", "",
             "Sustained: the rate between the 5th and the 95th percentile of the arrival times (start and end "
             "left out).", "",
             "| --qps | faults | wall s | requests | faults injected | rate (req/s) | rate / --qps | sustained / --qps "
             "| answered | failed | lost |", "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for qps in args.qps:
        for faults in ("", args.faults):
            r = asyncio.run(_http(qps, args.http_queries, faults, args.concurrency, args.seed))
            print(f"http qps {qps} faults {faults or 'none'}: {r}", file=sys.stderr, flush=True)
            lines.append(f"| {qps:g} | {'20%' if faults else 'none'} | {r['seconds']:.1f} | {r['requests']:,} | "
                         f"{r['faults']:,} | {r['rate']:.1f} | {r['rate'] / qps:.3f} | {r['sustained'] / qps:.3f} | "
                         f"{r['ok']:,} | {r['failed']} | {r['lost']} |")
    return [*lines, ""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=1_000)
    ap.add_argument("--data", type=Path, default=HERE / "data" / "search")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    ap.add_argument("--qps", nargs="+", type=float, default=[50.0, 200.0])
    ap.add_argument("--http-queries", type=int, default=2_000)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--faults", default="500=0.06,503=0.05,429=0.05,drop=0.04")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--http-only", action="store_true")
    ap.add_argument("--engines-only", action="store_true")
    ap.add_argument("--out", type=Path, default=None, help="also write the markdown here")
    args = ap.parse_args()
    lines = [f"Command: `python bench/search.py {' '.join(sys.argv[1:])}`", ""]
    if not args.http_only:
        lines += engines(args)
    if not args.engines_only:
        lines += http(args)
    text = "\n".join(lines)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
