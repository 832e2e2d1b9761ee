"""Label many pairs through the real client against the fake chat-completions server with injected faults, and
print what came out: every pair labelled or reported failed, requests, retries, concurrency, wall time.

    python bench/judge_faults.py --pairs 2000 --concurrency 32 \
        --faults 429=0.05,500=0.05,503=0.03,drop=0.03,malformed=0.04

The server is tests/chat_server.py (standard library only), on 127.0.0.1 in this process.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from chat_server import FakeChatServer, fault_behaviour, parse_faults  # noqa: E402

from gainscope.io.texts import Document, Query  # noqa: E402
from gainscope.judges.client import ChatClient, ClientSettings  # noqa: E402
from gainscope.judges.labeling import LLMJudge, Prices, label_pairs  # noqa: E402
from gainscope.judges.prompts import builtin_prompt  # noqa: E402
from gainscope.judges.spec import JudgeSpec  # noqa: E402
from gainscope.judges.store import JudgmentStore  # noqa: E402


async def main(args: argparse.Namespace) -> None:
    queries = {f"q{i}": Query(f"q{i}", f"query {i}") for i in range(max(1, args.pairs // 20))}
    docs = {f"d{j}": Document(f"d{j}", f"document {j} grade={j % 5}") for j in range(args.pairs)}
    pairs = [(f"q{j % len(queries)}", f"d{j}") for j in range(args.pairs)]
    with FakeChatServer(fault_behaviour(parse_faults(args.faults), seed=1, retry_after=0.05)) as server, \
            tempfile.TemporaryDirectory() as tmp:
        settings = ClientSettings(base_url=server.url, concurrency=args.concurrency, max_attempts=6,
                                  backoff_base=0.05, backoff_max=1.0, timeout=5.0,
                                  requests_per_minute=args.rpm)
        spec = JudgeSpec("fake", builtin_prompt("graded"))
        for label in ("first run", "second run (store)"):
            started = time.perf_counter()
            async with ChatClient(settings) as client:
                with JudgmentStore(Path(tmp) / "s.sqlite") as store:
                    state, labels = await label_pairs(pairs, queries, docs, judge=LLMJudge(
                        spec, client, prices=Prices(1.0, 4.0)), store=store, workers=args.concurrency)
                stats = client.stats
            wall = time.perf_counter() - started
            right = sum(1 for (_, d), lb in labels.items() if lb.grade == int(d[1:]) % 5)
            print(f"{label}: {len(pairs)} pairs in {wall:.2f} s: {state.judged} judged, {state.cached} from the "
                  f"store, {state.failed} failed (recorded, no grade), {len(labels)} grades ({right} equal to the "
                  f"server's); "
                  f"{state.requests} judge requests, HTTP requests seen by the server so far {server.count()}, "
                  f"retries {dict(stats.retries)}, max in flight {server.max_concurrency()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rpm", type=float, default=None)
    parser.add_argument("--faults", default="429=0.05,500=0.05,503=0.03,drop=0.03,malformed=0.04")
    asyncio.run(main(parser.parse_args()))
