"""The dashboard's benchmark (issue 16, item 7), printed as markdown:

1. **a case page of 1,000 queries x 10 results**: ``GET /cases/ID`` over HTTP, the first time (the scores of every
   selected scorer computed then) and again (scores known), the server's time from its ``Server-Timing`` header and
   the client's wall time; target under 1 s;
2. **a rating to a rescored case**: ``PUT /api/cases/ID/ratings`` on random queries and documents, answered with the
   query and case scores of every selected scorer (three built-ins: nDCG@10, P@5, ERR@10; then the same plus a
   JavaScript scorer); the server's time per rating; target under 50 ms;
3. **rerunning 1,000 queries against the embedded engine**: ``POST /api/cases/ID/rerun`` until its job is done
   (every query searched, recorded in a snapshot, the case's results and scores refreshed); target under 10 s.

The corpus and queries are bench/search_corpus.py's (made-up words with Zipf frequencies, seed 7): --docs
documents indexed with title^2,text, --queries queries; each query's ratings are 5 documents of its first search
(grades 0-3, seeded), so the scorers have something to score.

    python bench/dashboard.py [--docs 20000] [--queries 1000] [--data DIR] [--ratings 100] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from search_corpus import generate  # noqa: E402


def server_ms(response: httpx.Response) -> float:
    """The server's own time for a response (its Server-Timing header), in milliseconds."""
    header = response.headers["server-timing"]
    return float(header.split("dur=")[1])


def _case(index: Path, queries_file: Path, top: int, seed: int) -> dict[str, Any]:
    """A case of every query with its first search's top ``top`` as results and 5 of them rated."""
    from gainscope.search.embedded import EmbeddedEngine

    engine = EmbeddedEngine(index)
    rng = random.Random(seed)
    queries = []
    for line in queries_file.read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        hits = engine.search(q["text"], top=top).ids
        rated = rng.sample(hits, min(5, len(hits)))
        queries.append({"query": q["text"], "id": q["_id"], "results": hits,
                        "ratings": {d: rng.randint(0, 3) for d in rated}})
    engine.close()
    return {"name": "bench", "scale": "graded", "engine": str(index), "queries": queries}


def _summary(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(values):.1f} ms, p95 {p95:.1f} ms, max {max(values):.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--data", type=Path, default=None, help="Where the corpus and index go (default: a temp dir).")
    parser.add_argument("--ratings", type=int, default=100, help="Ratings timed per scorer set.")
    parser.add_argument("--repeat", type=int, default=5, help="Warm page loads timed.")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    from gainscope.search.embedded import build_index
    from gainscope.server.run import ServerThread
    from gainscope.server.workspace import Workspace

    data = args.data or Path(tempfile.mkdtemp(prefix="gainscope-bench-dashboard-"))
    corpus, queries_file = generate(args.docs, args.queries, data / "corpus", args.seed)
    index = data / "index"
    if not (index / "gainscope-index.json").exists():
        build_index(corpus, index, fields="title^2,text")
    case = _case(index, queries_file, 10, args.seed)
    lines = [f"Corpus: {args.docs:,} documents, {args.queries:,} queries (bench/search_corpus.py, seed {args.seed}); "
             f"the case: every query with 10 results, 5 rated."]
    with tempfile.TemporaryDirectory(prefix="gainscope-bench-ws-") as folder:
        ws = Workspace.open(Path(folder) / "ws")
        # TCP_NODELAY: without it, a request whose body follows its headers waits for the server's delayed ACK
        # (about 40 ms on Linux): a property of the client's socket, not of the server
        transport = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
        with ServerThread(ws) as server, httpx.Client(base_url=server.url, timeout=600, transport=transport,
                                                       headers={"X-Gainscope-Token": ws.token}) as client:
            created = client.post("/api/cases", json={"filename": "bench.json", "content": json.dumps(case)})
            created.raise_for_status()
            case_id = created.json()["id"]
            ws.scoreboard.forget(case_id)  # the import scored it: start the page from nothing known

            # 1. the case page
            started = time.perf_counter()
            first = client.get(f"/cases/{case_id}")
            first_wall = (time.perf_counter() - started) * 1000
            first.raise_for_status()
            warm_server, warm_wall = [], []
            for _ in range(args.repeat):
                started = time.perf_counter()
                again = client.get(f"/cases/{case_id}")
                warm_wall.append((time.perf_counter() - started) * 1000)
                warm_server.append(server_ms(again))
            rows = first.text.count("<tr data-query=")
            lines += ["", f"### Case page: {rows:,} queries x 10 results, 3 scorers", "",
                      "| load | server | client (wall) |", "|---|---:|---:|",
                      f"| first (scores computed) | {server_ms(first):.0f} ms | {first_wall:.0f} ms |",
                      f"| again (median of {args.repeat}) | {statistics.median(warm_server):.0f} ms | "
                      f"{statistics.median(warm_wall):.0f} ms |",
                      f"| page size | {len(first.content) / 1024:.0f} KiB | |"]

            # 2. ratings
            rng = random.Random(args.seed + 1)
            js = ("var k = 10; var dcg = 0; eachDoc(function (doc, i) { dcg += (Math.pow(2, docRating(i) || 0) - 1) "
                  "/ Math.log2(i + 2); }, k); setScore(dcg);")
            client.put("/api/scorers/dcg.js", json={"language": "javascript", "code": js}).raise_for_status()
            lines += ["", f"### A rating to a rescored case ({args.ratings} ratings each)", "",
                      "| selected scorers | server time per rating | client (wall) |", "|---|---|---|"]
            for scorers in (["nDCG@10", "P@5", "ERR@10"], ["nDCG@10", "P@5", "ERR@10", "dcg.js"]):
                client.patch(f"/api/cases/{case_id}", json={"scorers": scorers}).raise_for_status()
                client.get(f"/api/cases/{case_id}").raise_for_status()  # scores known before timing ratings
                server_times, walls = [], []
                for _ in range(args.ratings):
                    q = rng.choice(case["queries"])
                    doc = rng.choice(q["results"])
                    started = time.perf_counter()
                    answer = client.put(f"/api/cases/{case_id}/ratings",
                                        json={"query_id": str(case["queries"].index(q) + 1), "doc": doc,
                                              "rating": rng.randint(0, 3)})
                    walls.append((time.perf_counter() - started) * 1000)
                    answer.raise_for_status()
                    server_times.append(server_ms(answer))
                lines.append(f"| {', '.join(scorers)} | {_summary(server_times)} | "
                             f"median {statistics.median(walls):.1f} ms |")

            # 3. rerun
            client.patch(f"/api/cases/{case_id}", json={"scorers": ["nDCG@10", "P@5", "ERR@10"]}).raise_for_status()
            started = time.perf_counter()
            job = client.post(f"/api/cases/{case_id}/rerun", json={"note": "bench"}).json()["job"]
            while job["state"] == "running":
                time.sleep(0.05)
                job = client.get(f"/api/jobs/{job['id']}").json()
            seconds = time.perf_counter() - started
            if job["state"] != "done":
                raise SystemExit(f"the rerun failed: {job['message']}")
            lines += ["", f"### Rerun: {job['total']:,} queries against the embedded engine", "",
                      f"{seconds:.2f} s from the request to the job's end (searched with concurrency 4, recorded in "
                      f"snapshot {job['result']['snapshot']!r}, results and scores of the case refreshed)."]
        ws.close()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
