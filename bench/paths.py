"""Every input path at the plain TREC file's speed (issue 19): one row per way a run reaches ``gainscope evaluate``.

From M (``generate.py M``) this writes the run's twins into ``--data``: gzip'd (``M.run.gz``), zstd'd in one frame
(``M.run.zst``) and in frames of 8 MiB each after a skippable frame giving its size, as ``pzstd`` writes them
(``M.run.pzst``), non-ASCII doc ids throughout (``M.utf8.run`` with ``M.utf8.qrels``: every ``D`` of a doc id
becomes ``Ð``), one non-ASCII id on the last line only (``M.last.run``), and Parquet (``M.parquet``). Then it
measures, in the same rounds (each command once per round, in a rotating order, fresh processes):

* from the shell, ``gainscope evaluate QRELS RUN -m METRICS`` for the plain file and each twin, and the plain file
  with ``GAINSCOPE_NATIVE=0`` (no C scanner): wall time, CPU time, peak memory, and the ratio to the plain file
  (the median over rounds of each round's ratio);
* through the API, ``gainscope.evaluate(QRELS, RUN, METRICS)`` called alone (its own clock, inside the process) for
  a polars DataFrame, pandas DataFrames (pandas' default strings -- Arrow-backed ``str`` since pandas 3 --, object
  strings, and ``dtype_backend="pyarrow"``) and a pyarrow Table, each loaded from the Parquet file before the call,
  against the same call given the plain file's path; peak memory is the whole process's, and the peak before the
  call (the user's own frame, as loaded) is given beside it;
* the run on standard input (``-``), redirected from the file and through a pipe (plain, gzip, zstd), from the shell;
* the wide shape (``generate.py W10k W50k W200k``: 50 documents per query) from the shell, against the plain M file.

    .venv/bin/python bench/paths.py --data /tmp/gs/data --rounds 3 [--out paths.md] [--only "API: " Parquet]

``--only`` keeps the rows whose name starts with one of the given prefixes (and the plain file's rows they are
compared with).
"""

from __future__ import annotations

import argparse
import gzip
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from processes import Usage, compile_gainscope, gainscope_command, gainscope_env

METRICS = "nDCG@10 AP RR P@10 R@100"
WIDE = ("W10k", "W50k", "W200k")


def prepare(data: Path) -> None:
    """The twins of M.run (written once; kept between calls)."""
    run, qrels = data / "M.run", data / "M.qrels"
    if not run.exists():
        subprocess.run([sys.executable, str(Path(__file__).with_name("generate.py")), "M", "--out", str(data)],
                       check=True)
    for size in WIDE:
        if not (data / f"{size}.run").exists():
            subprocess.run([sys.executable, str(Path(__file__).with_name("generate.py")), size, "--out", str(data)],
                           check=True)
    content = None

    def text() -> bytes:
        nonlocal content
        if content is None:
            content = run.read_bytes()
        return content

    if not (data / "M.run.gz").exists():
        (data / "M.run.gz").write_bytes(gzip.compress(text(), compresslevel=6, mtime=0))
    if not (data / "M.run.zst").exists():
        import zstandard

        (data / "M.run.zst").write_bytes(zstandard.ZstdCompressor(level=3, threads=-1).compress(text()))
    if not (data / "M.run.pzst").exists():
        import zstandard

        with open(data / "M.run.pzst", "wb") as out:
            for i in range(0, len(text()), 8 << 20):
                frame = zstandard.ZstdCompressor(level=3, write_checksum=True).compress(text()[i:i + (8 << 20)])
                out.write(b"\x50\x2a\x4d\x18\x04\0\0\0" + len(frame).to_bytes(4, "little") + frame)
    if not (data / "M.utf8.run").exists():
        (data / "M.utf8.run").write_bytes(text().replace(b" Q0 D", " Q0 Ð".encode()))
        (data / "M.utf8.qrels").write_bytes(qrels.read_bytes().replace(b" 0 D", " 0 Ð".encode()))
    if not (data / "M.last.run").exists():
        last_query = text()[text().rstrip(b"\n").rfind(b"\n") + 1:].split(b" ", 1)[0]
        (data / "M.last.run").write_bytes(text() + last_query + " Q0 Dé 1001 0.5 bench\n".encode())
    if not (data / "M.parquet").exists():
        import polars as pl

        frame = pl.read_csv(run, separator=" ", has_header=False,
                            new_columns=["query_id", "q0", "doc_id", "rank", "score", "tag"],
                            schema_overrides={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64})
        frame.select("query_id", "doc_id", "score", "rank").write_parquet(data / "M.parquet")


def api_child(kind: str, qrels: str, source: str) -> None:
    """Child mode: load the run as ``kind`` (path, polars, pandas, pandas-object, pandas-pyarrow, arrow), time
    ``evaluate`` alone; print the peak MB before the call (the frame as loaded), the call's CPU and wall seconds."""
    import resource
    import warnings

    import gainscope

    run: object = source
    if kind == "polars":
        import polars as pl

        run = pl.read_parquet(source)
    elif kind.startswith("pandas"):
        import pandas as pd

        if kind == "pandas-object":  # object strings, as pandas before 3 made them
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the option is deprecated in pandas 3, not gone
                pd.set_option("future.infer_string", False)
        run = pd.read_parquet(source, **({"dtype_backend": "pyarrow"} if kind == "pandas-pyarrow" else {}))
    elif kind == "arrow":
        import pyarrow.parquet as pq

        run = pq.read_table(source)
    loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu, started = sum(os.times()[:2]), time.perf_counter()
    gainscope.evaluate(qrels, run, METRICS.split())
    print(loaded, sum(os.times()[:2]) - cpu, time.perf_counter() - started)


def measure(cmd: list[str], env: dict[str, str]) -> tuple[Usage, tuple[float, ...] | None]:
    """One fresh process: its usage, and the figures it printed (API children: peak MB before the call, the call's
    CPU and wall seconds), else None."""
    started = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert child.stdout is not None
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(cmd)} failed")
    lines = out.decode().split()
    figure = tuple(float(v) for v in lines[-3:]) if cmd[1:2] == [__file__] and lines else None
    return Usage(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024), figure


def stdin_rows(command: list[str], data: Path) -> dict[str, list[str]]:
    """The run on standard input (``-``): redirected from the file, and through a pipe from ``cat`` (plain, gzip,
    zstd), by ``sh -c``; the pipe's rows count ``cat``'s CPU time too (a pipe has a writer)."""
    run = " ".join(shlex.quote(c) for c in command)
    return {"stdin, redirected (< M.run)": ["sh", "-c", f"exec {run} < {shlex.quote(str(data / 'M.run'))}"],
            **{f"stdin, piped from cat ({name})": ["sh", "-c", f"cat {shlex.quote(str(data / name))} | {run}"]
               for name in ("M.run", "M.run.gz", "M.run.zst")}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path(__file__).parent / "data")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--only", nargs="+", metavar="PREFIX", help="measure only the rows whose name starts so")
    ap.add_argument("--api", nargs=3, metavar=("KIND", "QRELS", "RUN"), help=argparse.SUPPRESS)
    ap.add_argument("--prepare-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.api:
        api_child(*args.api)
        return
    data = args.data
    if args.prepare_only:
        prepare(data)
        return
    # the twins are written by a child process: a child forked from this one would otherwise start with the
    # resident memory that writing them leaves here (hundreds of MB), and its ru_maxrss would report that
    subprocess.run([sys.executable, __file__, "--data", str(data), "--prepare-only"], check=True)
    env = gainscope_env()
    compile_gainscope(env)
    qrels, utf8_qrels = str(data / "M.qrels"), str(data / "M.utf8.qrels")

    def cli(q: str, r: str) -> list[str]:
        return gainscope_command("evaluate", q, r, "-m", METRICS)

    def api(kind: str, r: str) -> list[str]:
        return [sys.executable, __file__, "--api", kind, qrels, r]

    zlib_only = [sys.executable, "-c", "import sys; sys.modules['isal'] = None; from gainscope.cli import main; main()",
                 *cli(qrels, str(data / "M.run.gz"))[1:]]  # ISA-L hidden: zlib inflates
    shell = {"plain": cli(qrels, str(data / "M.run")), "gzip": cli(qrels, str(data / "M.run.gz")),
             "gzip, zlib only": zlib_only, "zstd": cli(qrels, str(data / "M.run.zst")),
             "zstd, frames of 8 MiB (pzstd)": cli(qrels, str(data / "M.run.pzst")),
             "non-ASCII ids throughout": cli(utf8_qrels, str(data / "M.utf8.run")),
             "one non-ASCII id, last line": cli(qrels, str(data / "M.last.run")),
             "Parquet (CLI)": cli(qrels, str(data / "M.parquet")), "no native (GAINSCOPE_NATIVE=0)": None,
             **stdin_rows(cli(qrels, "-"), data),
             **{f"wide {size} x 50": cli(str(data / f"{size}.qrels"), str(data / f"{size}.run")) for size in WIDE}}
    parquet = str(data / "M.parquet")
    calls = {"API: path": api("path", str(data / "M.run")), "API: polars": api("polars", parquet),
             "API: pandas (default str)": api("pandas", parquet), "API: pandas object": api("pandas-object", parquet),
             "API: pandas pyarrow": api("pandas-pyarrow", parquet), "API: Arrow table": api("arrow", parquet)}
    if args.only:
        def kept(name: str) -> bool:
            return name in ("plain", "API: path") or name.startswith(tuple(args.only))

        shell = {n: c for n, c in shell.items() if kept(n)}
        calls = {n: c for n, c in calls.items() if kept(n)}
    commands = {name: cmd or cli(qrels, str(data / "M.run")) for name, cmd in {**shell, **calls}.items()}
    envs = {name: {**env, "GAINSCOPE_NATIVE": "0"} if name.startswith("no native") else env for name in commands}
    names = list(commands)
    seen: dict[str, list[tuple[Usage, float | None]]] = {n: [] for n in names}
    for n in names:  # warm-up: file cache, bytecode
        measure(commands[n], envs[n])
    for r in range(args.rounds):
        for k in range(len(names)):
            n = names[(r + k) % len(names)]
            seen[n].append(measure(commands[n], envs[n]))
            print(f"round {r + 1}: {n}: {seen[n][-1][0].wall:.2f} s", file=sys.stderr)

    def med(name: str, field: str) -> float:
        return statistics.median(getattr(u, field) for u, _ in seen[name])

    def ratio(name: str, base: str, field: str) -> float:
        return statistics.median(getattr(a, field) / getattr(b, field)
                                 for (a, _), (b, _) in zip(seen[name], seen[base], strict=True))

    lines = [f"{args.rounds} rounds, every command once per round in a rotating order; medians; load average "
             f"{os.getloadavg()[0]:.1f} at the end.", "",
             "| input path (M: 10,000 queries x 1,000 documents) | wall s | CPU s | peak MB | x plain (wall) "
             "| x plain (CPU) |", "|---|---:|---:|---:|---:|---:|"]
    for name in shell:
        lines.append(f"| {name} | {med(name, 'wall'):.2f} | {med(name, 'cpu'):.2f} | {med(name, 'rss_mb'):.0f} | "
                     f"{ratio(name, 'plain', 'wall'):.2f} | {ratio(name, 'plain', 'cpu'):.2f} |")
    lines += ["", "| API, `evaluate` call alone | call s | call CPU s | peak MB before the call | process peak MB "
              "| x path (call) | x path (call CPU) |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name in calls:
        figures = [f for _, f in seen[name] if f is not None]
        base = [f for _, f in seen["API: path"] if f is not None]

        def fig(k: int, figures: list[tuple[float, ...]] = figures) -> float:
            return statistics.median(f[k] for f in figures)

        def times(k: int, figures: list[tuple[float, ...]] = figures, base: list[tuple[float, ...]] = base) -> float:
            return statistics.median(a[k] / b[k] for a, b in zip(figures, base, strict=True))

        lines.append(f"| {name} | {fig(2):.2f} | {fig(1):.2f} | {fig(0):.0f} | {med(name, 'rss_mb'):.0f} | "
                     f"{times(2):.2f} | {times(1):.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
