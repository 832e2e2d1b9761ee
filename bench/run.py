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

from generate import SIZES, generate  # noqa: E402  (numpy and polars only when data is made)
from processes import gainscope_command, run_process  # noqa: E402
from tools import MEASURES  # noqa: E402

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
    return run_process(gainscope_command("evaluate", str(qrels), str(run), "-m", "nDCG@10 AP RR@10 P@10 R@100",
                                         "--format", "csv")).wall


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


CURVE_POINTS = (1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000)


def _curve(trec_eval: Path, size: str, qrels: Path, run: Path, work: Path) -> list[str]:
    """Seconds against number of queries for the trec_eval binary and for gainscope (same measures), on
    prefixes of the ``size`` files (the whole files for the last point)."""
    nq, per_query = SIZES[size]
    lines = [f"## Time against the number of queries ({size} prefixes, {per_query:,} documents each)", "",
             "| queries | run lines | trec_eval s | gainscope s | trec_eval / gainscope |",
             "|---:|---:|---:|---:|---:|"]
    exe = Path(sys.executable).with_name("gainscope")
    for n in [p for p in CURVE_POINTS if p <= nq]:
        qp, rp = (qrels, run) if n == nq else _prefix_files(qrels, run, n, per_query, work / size)
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


def _many_runs(n: int, data: Path, repeat: int) -> list[str]:
    """N runs of M size against M's judgments in one ``gainscope evaluate`` (judgments read and prepared
    once), against one run alone. The runs are N links to M.run: nothing is cached per run, so each is read
    and scanned in full, like N distinct files of the same shape."""
    qrels, run = data / "M.qrels", data / "M.run"
    if not run.exists():
        generate("M", data)
    links = data / "many"
    links.mkdir(exist_ok=True)
    paths = []
    for i in range(n):
        p = links / f"run{i:02d}.run"
        if not p.exists():
            p.symlink_to(run.resolve())
        paths.append(p)
    def timed(files: list[Path]) -> tuple[float, float]:
        used = run_process(gainscope_command("evaluate", str(qrels), *map(str, files), "-m", " ".join(MEASURES),
                                             "--format", "csv"))
        return used.wall, used.rss_mb

    one = [timed([run]) for _ in range(repeat)]
    many = [timed(paths) for _ in range(repeat)]
    t1, tn = statistics.median(s for s, _ in one), statistics.median(s for s, _ in many)
    rss = max(r for _, r in many)
    print(f"many runs: 1 run {t1:.2f} s, {n} runs {tn:.2f} s", flush=True)
    return [f"## Many runs against one set of judgments ({n} runs of M size)", "",
            f"`gainscope evaluate M.qrels RUN1 ... RUN{n}` reads and prepares the judgments once (one hash index "
            "of them serves every run's scan).", "",
            "| runs | median s | s per run | peak RSS MB |", "|---:|---:|---:|---:|",
            f"| 1 | {t1:.2f} | {t1:.2f} | {max(r for _, r in one):.0f} |",
            f"| {n} | {tn:.2f} | {tn / n:.2f} | {rss:.0f} |", ""]


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
    ap.add_argument("--curve-size", choices=("M", "L"), default="M", help="files the curve takes prefixes of")
    ap.add_argument("--many-runs", type=int, default=0, metavar="N",
                    help="also evaluate N runs of M size against M's judgments in one command")
    args = ap.parse_args()
    tools = ["gainscope", *args.peers]
    report = ["# Benchmark results", "", f"Machine: {_machine()}", "",
              f"Command: `python3 dev.py bench {' '.join(sys.argv[1:])}`; "
              "measures nDCG@10, AP, RR@10, P@10, R@100; every number a median over fresh processes.", ""]
    gainscope_e2e: dict[str, float] = {}
    for size in [] if args.curve_only else args.sizes:
        qrels, run = args.data / f"{size}.qrels", args.data / f"{size}.run"
        if not run.exists():
            print(f"generating {size} ...", flush=True)
            generate(size, args.data)
        lines = sum(1 for _ in open(run, "rb"))
        report += [f"## {size}: {lines:,} run lines, {run.stat().st_size / 1e6:.0f} MB", ""]
        size_tools = ["gainscope"] if size == "L" else tools
        if size == "L":
            report += ["Peers are not run on L (they load every run line into Python or numba dictionaries; we "
                       "have not tried them at 100 million lines). L shows gainscope's streaming: time against "
                       "M and peak memory.", ""]
        e2e: dict[str, list[dict[str, object]]] = {}
        comp: dict[str, dict[str, object]] = {}
        values: dict[str, dict[str, dict[str, float]]] = {}
        with tempfile.TemporaryDirectory() as tmp:
            for tool in size_tools:
                print(f"{size} {tool} end-to-end ...", flush=True)
                e2e[tool] = []
                for i in range(args.repeat):
                    vpath = Path(tmp) / f"{tool}.json" if i == 0 else None
                    e2e[tool].append(_measure(tool, "e2e", qrels, run, vpath))
                    if vpath is not None:
                        values[tool] = json.loads(vpath.read_text())
                if size != "L":  # L is about streaming from files; its runs are not loaded into memory
                    print(f"{size} {tool} compute-only ...", flush=True)
                    comp[tool] = _measure(tool, "compute", qrels, run, repeat=args.repeat)
        med = {t: statistics.median(float(r["process_seconds"]) for r in rs) for t, rs in e2e.items()}
        rss = {t: max(float(r["maxrss_mb"]) for r in rs) for t, rs in e2e.items()}
        report += ["End to end from files (process start to exit):", "",
                   "| tool | median s | peak RSS MB | gainscope / tool (time) |", "|---|---:|---:|---:|"]
        for t in size_tools:
            report.append(f"| {t} | {med[t]:.2f} | {rss[t]:.0f} | {med['gainscope'] / med[t]:.3f} |")
        gainscope_e2e[size] = med["gainscope"]
        if size == "L":
            if "M" in gainscope_e2e:
                ratio = gainscope_e2e["L"] / gainscope_e2e["M"]
                report += ["", f"L/M end-to-end time ratio (10x the lines): {ratio:.1f}", ""]
            continue
        cmed = {t: statistics.median(comp[t]["seconds"]) for t in size_tools}  # type: ignore[arg-type]
        report += ["", "Compute only (data already loaded; first call timed apart):", "",
                   "| tool | median s | first call s | gainscope / tool |", "|---|---:|---:|---:|"]
        for t in size_tools:
            report.append(f"| {t} | {cmed[t]:.3f} | {float(comp[t]['first_call']):.3f} | "  # type: ignore[arg-type]
                          f"{cmed['gainscope'] / cmed[t]:.3f} |")
        if size == "S":
            shell = statistics.median(_shell_seconds(qrels, run) for _ in range(max(args.repeat, 5)))
            report += ["", f"`gainscope evaluate` from the shell on S, interpreter start included: {shell:.2f} s "
                       "(median)."]
        report += ["", "Agreement of per-query values with gainscope (max absolute difference):", "",
                   "| peer | measure | queries | differing (> 1e-12) | max diff |", "|---|---|---:|---:|---:|",
                   *_agreement(values), ""]
    if args.many_runs:
        report += _many_runs(args.many_runs, args.data, args.repeat)
    if args.trec_eval is not None:
        qrels, run = args.data / f"{args.curve_size}.qrels", args.data / f"{args.curve_size}.run"
        if not run.exists():
            generate(args.curve_size, args.data)
        report += _curve(args.trec_eval, args.curve_size, qrels, run, args.data / "prefixes")
    args.out.write_text("\n".join(report) + "\n")
    print(args.out.read_text())


if __name__ == "__main__":
    main()
