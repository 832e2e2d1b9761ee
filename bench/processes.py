"""Timing whole commands, as a user runs them: fresh processes, wall and CPU time, peak memory.

Shared by bench/startup.py, bench/compare_report.py and bench/run.py.
"""

from __future__ import annotations

import compileall
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Usage:
    """One process: wall seconds, CPU seconds (user + system, from ``wait4``) and peak resident MB."""

    wall: float
    cpu: float
    rss_mb: float


def gainscope_env(pythonpath: Path | None = None) -> dict[str, str]:
    """The environment of the measured commands; ``pythonpath`` puts another gainscope source tree first."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return env


def compile_gainscope(env: Mapping[str, str]) -> Path:
    """Compile the measured gainscope's modules to bytecode, as an installed package has them (pip compiles at
    install; a checkout run with ``PYTHONDONTWRITEBYTECODE=1`` would compile them in every process); returns the
    package folder."""
    where = subprocess.run([sys.executable, "-c", "import gainscope, os; print(os.path.dirname(gainscope.__file__))"],
                           capture_output=True, text=True, check=True, env=dict(env)).stdout.strip()
    compileall.compile_dir(where, quiet=1)
    return Path(where)


def gainscope_command(*args: str) -> list[str]:
    """``gainscope ARGS...`` through the console script of this interpreter's environment."""
    return [str(Path(sys.executable).with_name("gainscope")), *args]


def run_process(cmd: Sequence[str], env: Mapping[str, str] | None = None) -> Usage:
    """Run ``cmd`` (output thrown away) and measure it; SystemExit when it fails."""
    started = time.perf_counter()
    child = subprocess.Popen(list(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=dict(env) if env is not None else None)
    _, status, usage = os.wait4(child.pid, 0)  # this child's own resources
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code:
        raise SystemExit(f"{' '.join(cmd)} failed with exit code {code}")
    return Usage(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def in_rounds(commands: Mapping[str, Sequence[str]], env: Mapping[str, str], rounds: int,
              warmup: int = 1) -> dict[str, list[Usage]]:
    """Every command once per round, in an order that rotates from round to round (none always runs first),
    after ``warmup`` unmeasured rounds."""
    names = list(commands)
    for _ in range(warmup):
        for n in names:
            run_process(commands[n], env)
    seen: dict[str, list[Usage]] = {n: [] for n in names}
    for r in range(rounds):
        for k in range(len(names)):
            n = names[(r + k) % len(names)]
            seen[n].append(run_process(commands[n], env))
    return seen


def median(usages: Sequence[Usage], field: str) -> float:
    """The median of one field over processes."""
    return statistics.median(getattr(u, field) for u in usages)


def paired_ratio(a: Sequence[Usage], b: Sequence[Usage], field: str) -> float:
    """The median over rounds of ``a / b`` (each pair measured in the same round)."""
    return statistics.median(getattr(x, field) / getattr(y, field) for x, y in zip(a, b, strict=True))
