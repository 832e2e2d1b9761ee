"""Side by side on S: ``gainscope evaluate`` from the shell against pytrec_eval doing the same job, and where the
time of a short command goes (``python -X importtime``).

    python bench/startup.py [--data DIR] [--rounds 21] [--trec-eval PATH] [--pythonpath SRC]

Each round runs every command once, in a rotating order (so that none always runs first), each a fresh process
with its output thrown away: ``gainscope evaluate S.qrels S.run -m "nDCG@10 AP RR P@10 R@100"`` (the console
script), ``python bench/pytrec_eval_evaluate.py S.qrels S.run`` (the same five measures, printed), and a trec_eval
binary when ``--trec-eval`` names one (you build it yourself; none is shipped). Reported: the median wall time,
the median CPU time (user + system, from ``wait4``: less disturbed than wall time by other work on the machine),
peak memory (the measuring process imports nothing heavy: a child's peak starts from its parent's size at
fork), and the median over rounds of gainscope's time divided by the other command's in the same round.

gainscope's modules are compiled to bytecode first, as an installed package has them (pip compiles at install; a
source checkout run with ``PYTHONDONTWRITEBYTECODE=1`` would compile every module in every run). ``--pythonpath
SRC`` measures the gainscope of another source tree (for example an earlier commit, its C scanner built in place
with ``python setup.py build_ext --inplace``) with the same interpreter and the same peers.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from processes import compile_gainscope, gainscope_command, gainscope_env, in_rounds, median, paired_ratio  # noqa: E402

METRICS = "nDCG@10 AP RR P@10 R@100"


def side_by_side(commands: dict[str, list[str]], env: dict[str, str], rounds: int) -> list[str]:
    """Markdown table of every command's medians and gainscope's (the first command's) ratio to it."""
    seen = in_rounds(commands, env, rounds, warmup=2)
    first = seen[next(iter(commands))]
    lines = ["| command | median wall s | median CPU s | peak RSS MB | gainscope / command (wall) | "
             "gainscope / command (CPU) |", "|---|---:|---:|---:|---:|---:|"]
    for name, usages in seen.items():
        lines.append(f"| {name} | {median(usages, 'wall'):.3f} | {median(usages, 'cpu'):.3f} | "
                     f"{max(u.rss_mb for u in usages):.0f} | {paired_ratio(first, usages, 'wall'):.3f} | "
                     f"{paired_ratio(first, usages, 'cpu'):.3f} |")
    return lines


def importtime(cmd: list[str], env: dict[str, str], runs: int, top: int) -> list[str]:
    """Where import time goes, from ``python -X importtime`` (median over ``runs`` processes): the self time of
    every module summed by top-level package (they add up to the whole import time), and gainscope's own modules
    by self time."""
    own: dict[str, list[int]] = {}
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-X", "importtime", *cmd], capture_output=True, text=True, env=env,
                              check=True)
        for line in done.stderr.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, _, name = line.removeprefix("import time:").split("|")
            own.setdefault(name.strip(), []).append(int(self_us))
    per_module = {k: statistics.median(v) / 1000 for k, v in own.items()}
    packages: dict[str, float] = {}
    for name, ms in per_module.items():
        packages[name.split(".")[0]] = packages.get(name.split(".")[0], 0.0) + ms
    total = sum(packages.values())
    lines = [f"All imports: {total:.0f} ms. By top-level package (self times summed):", "",
             "| package | ms | share |", "|---|---:|---:|"]
    for name in sorted(packages, key=lambda k: -packages[k])[:top]:
        lines.append(f"| {name} | {packages[name]:.1f} | {packages[name] / total:.0%} |")
    ours = sorted((k for k in per_module if k.split(".")[0] == "gainscope"), key=lambda k: -per_module[k])
    lines += ["", "gainscope's own modules (self time):", "", "| module | ms |", "|---|---:|"]
    lines += [f"| {k} | {per_module[k]:.1f} |" for k in ours[:top]]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--size", default="S", choices=("S", "M"))
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--trec-eval", type=Path, default=None, help="a trec_eval binary to run side by side too")
    ap.add_argument("--pythonpath", type=Path, default=None, help="measure the gainscope of this source tree")
    ap.add_argument("--importtime", type=int, default=12, metavar="TOP", help="rows of the import-time tables")
    args = ap.parse_args()
    qrels, run = args.data / f"{args.size}.qrels", args.data / f"{args.size}.run"
    if not run.exists():
        from generate import generate  # numpy and polars: imported only to make the data (a child process's peak
        generate(args.size, args.data)  # memory starts from its parent's at fork)
    env = gainscope_env(args.pythonpath)
    package = compile_gainscope(env)
    gainscope = gainscope_command("evaluate", str(qrels), str(run), "-m", METRICS)
    commands = {"gainscope evaluate": gainscope,
                "pytrec_eval": [sys.executable, str(HERE / "pytrec_eval_evaluate.py"), str(qrels), str(run)]}
    if args.trec_eval is not None:
        commands["trec_eval"] = [str(args.trec_eval), "-c", "-m", "ndcg_cut.10", "-m", "map", "-m", "recip_rank",
                                 "-m", "P.10", "-m", "recall.100", str(qrels), str(run)]
    out = [f"gainscope from {package}; {args.rounds} rounds on {args.size}; Python {sys.version.split()[0]}", "",
           *side_by_side(commands, env, args.rounds), "",
           f"`python -X importtime` of `gainscope evaluate` on {args.size} (median of 5 processes).", "",
           *importtime(gainscope, env, 5, args.importtime)]
    print("\n".join(out))


if __name__ == "__main__":
    main()
