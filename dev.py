#!/usr/bin/env python3
"""Set up a virtual environment and run the project's jobs, with nothing but Python 3.11+ installed.

    python3 dev.py demo     # set up .venv, evaluate the bundled example runs, explain one value, compare two runs,
                            # then index the bundled recipes, search them with two configurations, compare them
    python3 dev.py test     # set up .venv with the test extras, run the whole test suite
    python3 dev.py bench    # set up .venv with the benchmark peers, run the benchmark (bench/README.md)

Extra arguments after ``test`` go to pytest. The environment is reinstalled only when pyproject.toml,
setup.py or the C scanner's source changes. The HTML report's tests drive a headless Chromium
(tests/render/browser.py): when none is found, ``test`` installs Debian's chromium if it runs as root with
apt-get (as CI does), and otherwise says that those tests will be skipped.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")


# the C scanner (gainscope._scan) is optional for users; here its build failing is an error
ENV = {**os.environ, "GAINSCOPE_REQUIRE_NATIVE": "1"}

# the browsers tests/render/browser.py looks for on PATH (or the one GAINSCOPE_CHROMIUM names)
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _run(*cmd: str | Path) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    done = subprocess.run([str(c) for c in cmd], cwd=ROOT, env=ENV)
    if done.returncode:
        sys.exit(done.returncode)


def ensure_env(extras: str) -> None:
    """Create .venv and install the package (editable) with ``extras`` unless already done."""
    if sys.version_info < (3, 11):
        sys.exit(f"gainscope needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    if not PY.exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    sources = [ROOT / "pyproject.toml", ROOT / "setup.py", ROOT / "src" / "gainscope" / "_scan.c"]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources) + extras.encode()).hexdigest()[:16]
    stamp = VENV / f".installed-{digest}"
    if stamp.exists():
        return
    target = f".[{extras}]" if extras else "."
    _run(PY, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", target)
    for old in VENV.glob(".installed-*"):
        old.unlink()
    stamp.touch()


def _apt_get(*args: str) -> bool:
    print("+ DEBIAN_FRONTEND=noninteractive apt-get", *args, flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(["apt-get", *args], env=env, stdout=subprocess.DEVNULL).returncode == 0


def ensure_browser() -> None:
    """Install Debian's chromium for the browser tests when no browser is found and we are root with apt-get."""
    if os.environ.get("GAINSCOPE_CHROMIUM") or any(shutil.which(name) for name in BROWSERS):
        return
    if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        print("chromium not found: installing Debian's chromium for the HTML report's browser tests", flush=True)
        if all(_apt_get(*step) for step in (["update", "-qq"], ["install", "-y", "-qq", "chromium"])):
            return
    print("note: no chromium found (and it could not be installed here); the HTML report's browser tests will be "
          "skipped", flush=True)


def demo() -> None:
    ensure_env("")
    gs = BIN / "gainscope"
    _run(gs, "evaluate", "examples/qrels.txt", "examples/bm25.run", "examples/hybrid.run",
         "-m", "nDCG@10 nDCG(gain=exponential)@10 AP RR P@5 R@10 Judged@10")
    _run(gs, "explain", "examples/qrels.txt", "examples/bm25.run", "--query", "MQ003", "-m", "nDCG@5")
    _run(gs, "compare", "examples/qrels.txt", "examples/bm25.run", "examples/hybrid.run", "-m", "nDCG@10 AP RR P@5")
    _run(gs, "evaluate", "examples/dataset.json", "examples/agent_run.jsonl", "-m", "nDCG@5 RR AP P@5", "-q")
    search_demo(gs)


def search_demo(gs: Path) -> None:
    """Live search on the bundled recipes: index, two configurations, compare; then a grid experiment."""
    ex = "examples/search"
    _run(gs, "index", f"{ex}/corpus.jsonl", "--index", f"{ex}/index", "--fields", "title^2,text", "--overwrite")
    for name, boost in (("plain", "0"), ("boosted", "4")):
        _run(gs, "search", "--engine", f"{ex}/index", "--queries", f"{ex}/queries.jsonl", "--top", "10",
             "--set", f"title_boost={boost}", "--snapshot", f"{ex}/snapshots.sqlite", "--name", name,
             "-o", f"{ex}/{name}.run")
    _run(gs, "compare", f"{ex}/qrels.txt", f"{ex}/plain.run", f"{ex}/boosted.run", "--name", "plain",
         "--name", "boosted", "-m", "nDCG@10 RR P@5")
    _run(gs, "experiment", f"{ex}/experiment.toml", "--format", "markdown")


def test(args: list[str]) -> None:
    ensure_env("test")
    ensure_browser()
    _run(PY, "-m", "pytest", *(args or ["-q"]))


def bench(args: list[str]) -> None:
    ensure_env("test,bench")
    _run(PY, "bench/run.py", *args)


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in ("demo", "test", "bench"):
        sys.exit(__doc__)
    job, rest = sys.argv[1], sys.argv[2:]
    if job == "demo":
        demo()
    elif job == "test":
        test(rest)
    else:
        bench(rest)


if __name__ == "__main__":
    main()
