"""The benchmark: gainscope against pytrec_eval, ranx and ir_measures on the same files, in the same run.

    python3 dev.py bench                      # S and M (generated on first use into bench/data)
    python3 dev.py bench --sizes S M L        # L = 100 million lines (about 3.5 GB on disk)
    python3 dev.py bench --trec-eval PATH     # also the queries-vs-seconds curve of a trec_eval binary
                                              # you built yourself (trec_eval is not shipped or built here)

Every measurement is a fresh process (bench/tools.py), so interpreter start, imports and JIT compilation
count where a user would pay them. Reported: medians over ``--repeat`` processes, peak resident memory
(``ru_maxrss``), ratios gainscope/peer, the agreement of per-query values, and the machine. Timings are
never asserted by the test suite; this file is the measurement, and it writes bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import SIZES, generate  # noqa: E402

PEERS = ("pytrec_eval", "ranx", "ir_measures")
TOOLS = ("gainscope", *PEERS)


def _measure(tool: str, mode: str, qrels: Path, run: Path, values: Path | None = None,
             repeat: int = 3) -> dict[str, object]:
    cmd = [sys.executable, str(HERE / "tools.py"), tool, mode, str(qrels), str(run), "--repeat", str(repeat)]
    if values is not None:
        cmd += ["--values", str(values)]
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    if done.returncode:
        raise RuntimeError(f"{tool} {mode} failed:\n{done.stderr[-2000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["process_seconds"] = wall
    return out


def _shell_seconds(qrels: Path, run: Path) -> float:
    """`gainscope evaluate` from the shell, interpreter start included."""
    exe = Path(sys.executable).with_name("gainscope")
    t = time.perf_counter()
    subprocess.run([str(exe), "evaluate", str(qrels), str(run), "-m", "nDCG@10 AP RR@10 P@10 R@100",
                    "--format", "csv"], capture_output=True, check=True)
    return time.perf_counter() - t


def _agreement(values: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    ours = values["gainscope"]
    lines = []
    for peer in PEERS:
        theirs = values.get(peer)
        if not theirs:
            continue
        for m, per_q in theirs.items():
            diffs = [abs(ours[m][q] - v) for q, v in per_q.items() if q in ours[m]]
            if not diffs:
                continue
            differ = sum(d > 1e-12 for d in diffs)
            lines.append(f"| {peer} | {m} | {len(diffs)} | {differ} | {max(diffs):.2e} |")
    return lines


def _machine() -> str:
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    versions = []
    for pkg in ("gainscope", "numpy", "polars", "pytrec-eval-terrier", "ranx", "ir-measures", "numba"):
        try:
            from importlib.metadata import version

            versions.append(f"{pkg} {version(pkg)}")
        except Exception:
            pass
    return (f"{os.cpu_count()} cores ({cpu}), {mem} memory, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}; " + ", ".join(versions))


def _prefix_files(qrels: Path, run: Path, n: int, per_query: int, out: Path) -> tuple[Path, Path]:
    """The first ``n`` queries of the generated files (written query by query, in order)."""
    out.mkdir(parents=True, exist_ok=True)
    qp, rp = out / f"first{n}.qrels", out / f"first{n}.run"
    if not rp.exists():
        keep = {f"q{i}" for i in range(n)}
        with open(qrels) as src, open(qp, "w") as dst:
            dst.writelines(line for line in src if line.split(" ", 1)[0] in keep)
        with open(run) as src, open(rp, "w") as dst:
            for i, line in enumerate(src):
                if i >= n * per_query:
                    break
                dst.write(line)
    return qp, rp


def _curve(trec_eval: Path, qrels: Path, run: Path, per_query: int, work: Path) -> list[str]:
    """Seconds against number of queries for the trec_eval binary and for gainscope (same measures)."""
    lines = ["## Time against the number of queries (M prefixes, 1,000 documents each)", "",
             "| queries | run lines | trec_eval s | gainscope s | trec_eval / gainscope |",
             "|---:|---:|---:|---:|---:|"]
    exe = Path(sys.executable).with_name("gainscope")
    for n in (1000, 2000, 5000, 10000):
        qp, rp = _prefix_files(qrels, run, n, per_query, work)
        t = time.perf_counter()
        subprocess.run([str(trec_eval), "-c", "-m", "ndcg_cut.10", "-m", "map", "-m", "recip_rank", "-m", "P.10",
                        "-m", "recall.100", str(qp), str(rp)], capture_output=True, check=True)
        te = time.perf_counter() - t
        t = time.perf_counter()
        subprocess.run([str(exe), "evaluate", str(qp), str(rp), "-m", "nDCG@10 AP RR P@10 R@100", "--format", "csv"],
                       capture_output=True, check=True)
        gs = time.perf_counter() - t
        print(f"curve {n}: trec_eval {te:.2f} s, gainscope {gs:.2f} s", flush=True)
        lines.append(f"| {n:,} | {n * per_query:,} | {te:.2f} | {gs:.2f} | {te / gs:.2f} |")
    return [*lines, ""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", default=["S", "M"], choices=sorted(SIZES))
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--repeat", type=int, default=3, help="processes per measurement (medians)")
    ap.add_argument("--peers", nargs="*", default=list(PEERS), choices=list(PEERS))
    ap.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    ap.add_argument("--trec-eval", type=Path, default=None,
                    help="a trec_eval binary: adds the queries-vs-seconds curve on prefixes of M")
    ap.add_argument("--curve-only", action="store_true", help="with --trec-eval: only the curve")
    args = ap.parse_args()
    tools = ["gainscope", *args.peers]
    report = ["# Benchmark results", "", f"Machine: {_machine()}", "",
              f"Command: `python3 dev.py bench --sizes {' '.join(args.sizes)} --repeat {args.repeat}`; "
              "measures nDCG@10, AP, RR@10, P@10, R@100; every number a median over fresh processes.", ""]
    for size in [] if args.curve_only else args.sizes:
        qrels, run = args.data / f"{size}.qrels", args.data / f"{size}.run"
        if not run.exists():
            print(f"generating {size} ...", flush=True)
            generate(size, args.data)
        lines = sum(1 for _ in open(run, "rb"))
        report += [f"## {size}: {lines:,} run lines, {run.stat().st_size / 1e6:.0f} MB", ""]
        e2e: dict[str, list[dict[str, object]]] = {}
        comp: dict[str, dict[str, object]] = {}
        values: dict[str, dict[str, dict[str, float]]] = {}
        with tempfile.TemporaryDirectory() as tmp:
            for tool in tools:
                print(f"{size} {tool} end-to-end ...", flush=True)
                e2e[tool] = []
                for i in range(args.repeat):
                    vpath = Path(tmp) / f"{tool}.json" if i == 0 else None
                    e2e[tool].append(_measure(tool, "e2e", qrels, run, vpath))
                    if vpath is not None:
                        values[tool] = json.loads(vpath.read_text())
                print(f"{size} {tool} compute-only ...", flush=True)
                comp[tool] = _measure(tool, "compute", qrels, run, repeat=args.repeat)
        med = {t: statistics.median(float(r["process_seconds"]) for r in rs) for t, rs in e2e.items()}
        rss = {t: max(float(r["maxrss_mb"]) for r in rs) for t, rs in e2e.items()}
        report += ["End to end from files (process start to exit):", "",
                   "| tool | median s | peak RSS MB | gainscope / tool (time) |", "|---|---:|---:|---:|"]
        for t in tools:
            report.append(f"| {t} | {med[t]:.2f} | {rss[t]:.0f} | {med['gainscope'] / med[t]:.3f} |")
        cmed = {t: statistics.median(comp[t]["seconds"]) for t in tools}  # type: ignore[arg-type]
        report += ["", "Compute only (data already loaded; first call timed apart):", "",
                   "| tool | median s | first call s | gainscope / tool |", "|---|---:|---:|---:|"]
        for t in tools:
            report.append(f"| {t} | {cmed[t]:.3f} | {float(comp[t]['first_call']):.3f} | "  # type: ignore[arg-type]
                          f"{cmed['gainscope'] / cmed[t]:.3f} |")
        if size == "S":
            shell = statistics.median(_shell_seconds(qrels, run) for _ in range(max(args.repeat, 5)))
            report += ["", f"`gainscope evaluate` from the shell on S, interpreter start included: {shell:.2f} s "
                       "(median)."]
        report += ["", "Agreement of per-query values with gainscope (max absolute difference):", "",
                   "| peer | measure | queries | differing (> 1e-12) | max diff |", "|---|---|---:|---:|---:|",
                   *_agreement(values), ""]
    if args.trec_eval is not None:
        qrels, run = args.data / "M.qrels", args.data / "M.run"
        if not run.exists():
            generate("M", args.data)
        report += _curve(args.trec_eval, qrels, run, SIZES["M"][1], args.data / "prefixes")
    args.out.write_text("\n".join(report) + "\n")
    print(args.out.read_text())


if __name__ == "__main__":
    main()
