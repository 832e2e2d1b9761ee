"""``compare`` and ``report`` of two runs against evaluating them: time, peak memory and the report's size.

    python bench/compare_report.py [--data DIR] [--size M] [--rounds 3] [--pythonpath SRC] [--no-figures]

On the judgments of SIZE and two runs of them (``SIZE.run`` and ``SIZE.b.run``, see bench/generate.py; made when
missing), with the metrics nDCG@10 AP RR P@10, each round runs in a rotating order, each a fresh process:

* ``gainscope evaluate QRELS RUN RUN_B -m METRICS``: the yardstick (both runs read and evaluated);
* ``gainscope compare QRELS RUN RUN_B -m METRICS``: the same evaluation, then intervals and paired tests
  (10,000 resamples, the default);
* ``gainscope report QRELS RUN RUN_B -m METRICS -o FILE``: all of that, the figures and the HTML page (skipped
  with ``--no-figures``);
* the same with ``--no-plots``.

Reported: median wall and CPU time (user + system), peak memory, the report's size in bytes, and the median
over rounds of each command's time divided by evaluate's in the same round. ``--pythonpath SRC`` measures the
gainscope of another source tree (an earlier commit, its C scanner built in place) for before/after figures.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from processes import compile_gainscope, gainscope_command, gainscope_env, in_rounds, median, paired_ratio  # noqa: E402

METRICS = "nDCG@10 AP RR P@10"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--size", default="M", choices=("S", "M"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pythonpath", type=Path, default=None, help="measure the gainscope of this source tree")
    ap.add_argument("--no-figures", action="store_true", help="leave out the report with figures")
    args = ap.parse_args()
    qrels, run, run_b = (args.data / f"{args.size}{suffix}" for suffix in (".qrels", ".run", ".b.run"))
    if not run_b.exists():
        from generate import second_run  # numpy and polars, only to make the data (a child's peak memory starts
        second_run(args.size, args.data)  # from its parent's size at fork)
    env = gainscope_env(args.pythonpath)
    package = compile_gainscope(env)
    inputs = [str(qrels), str(run), str(run_b), "-m", METRICS]
    with tempfile.TemporaryDirectory() as tmp:
        with_figures, tables_only = Path(tmp) / "report.html", Path(tmp) / "report-no-plots.html"
        commands = {"evaluate": gainscope_command("evaluate", *inputs),
                    "compare": gainscope_command("compare", *inputs)}
        if not args.no_figures:
            commands["report"] = gainscope_command("report", *inputs, "-o", str(with_figures))
        commands["report --no-plots"] = gainscope_command("report", *inputs, "--no-plots", "-o", str(tables_only))
        seen = in_rounds(commands, env, args.rounds)
        sizes = {"report": with_figures, "report --no-plots": tables_only}
        lines = [f"gainscope from {package}; {args.size}, 2 runs, {METRICS}; {args.rounds} rounds", "",
                 "| command | median wall s | median CPU s | peak RSS MB | output bytes | / evaluate (wall) | "
                 "/ evaluate (CPU) |", "|---|---:|---:|---:|---:|---:|---:|"]
        for name, usages in seen.items():
            size = f"{sizes[name].stat().st_size:,}" if name in sizes else ""
            lines.append(f"| {name} | {median(usages, 'wall'):.2f} | {median(usages, 'cpu'):.2f} | "
                         f"{max(u.rss_mb for u in usages):.0f} | {size} | "
                         f"{paired_ratio(usages, seen['evaluate'], 'wall'):.3f} | "
                         f"{paired_ratio(usages, seen['evaluate'], 'cpu'):.3f} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
