#!/usr/bin/env python3
"""Set up a virtual environment and run the project's jobs, with nothing but Python 3.11+ installed.

    python3 dev.py demo     # set up .venv, evaluate the bundled example runs, explain one value, compare two runs,
                            # then index the bundled recipes, search them with two configurations, compare them,
                            # and add them to a dashboard workspace (it prints how to open the dashboard)
    python3 dev.py test     # set up .venv with the test extras, run the whole test suite
    python3 dev.py bench    # set up .venv with the benchmark peers, run the benchmark (bench/README.md)

Extra arguments after ``test`` go to pytest. The environment is reinstalled only when pyproject.toml,
setup.py or the C scanner's source changes. ``demo`` ends by printing how to run ``gainscope`` yourself (it is
installed in .venv, which is not on your PATH).

Some tests need programs that PyPI does not provide (SYSTEM_NEEDS below; the README lists them): a headless
Chromium for the browser tests of the HTML report and the dashboard (tests/render/browser.py), PostgreSQL for the
dashboard's workspace in PostgreSQL (tests/server/postgres.py starts a server), and Java 17 for the Spark
backend's tests (tests/spark). When one is missing, ``test`` says what it needs and why, then installs the Debian
package with apt-get if it runs as root where apt-get exists (as CI does) and GAINSCOPE_NO_APT is not 1;
otherwise it says which tests will be skipped.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import venv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")


# the C scanner (gainscope._scan) is optional for users; here its build failing is an error
ENV = {**os.environ, "GAINSCOPE_REQUIRE_NATIVE": "1"}

# the browsers tests/render/browser.py looks for on PATH (or the one GAINSCOPE_CHROMIUM names)
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


@dataclass(frozen=True)
class SystemNeed:
    """A program some tests need that PyPI does not provide: what it is, which tests need it, whether it is
    here, and the Debian packages that provide it."""

    program: str
    tests: str
    found: Callable[[], bool]
    debian: tuple[str, ...]


def _browser_found() -> bool:
    return bool(os.environ.get("GAINSCOPE_CHROMIUM")) or any(shutil.which(name) for name in BROWSERS)


def _postgres_found() -> bool:
    """Debian's PostgreSQL programs (/usr/lib/postgresql/VERSION/bin), or initdb on PATH (tests/server/postgres.py)."""
    return bool(list(Path("/usr/lib/postgresql").glob("*/bin/initdb"))) or bool(shutil.which("initdb"))


def _java_found() -> bool:
    """Java 17 or newer on PATH (what Spark 4 runs on)."""
    java = shutil.which("java")
    if java is None:
        return False
    done = subprocess.run([java, "-version"], capture_output=True, text=True)
    match = re.search(r'version "(\d+)', done.stderr + done.stdout)
    return bool(match) and int(match.group(1)) >= 17


#: what ``test`` installs with apt-get when missing (as root); the README's table lists the same
SYSTEM_NEEDS = (
    SystemNeed("a headless Chromium", "the HTML report's and the dashboard's browser tests (tests/render, "
               "tests/server)", _browser_found, ("chromium",)),
    SystemNeed("PostgreSQL (initdb, pg_ctl)", "the dashboard's PostgreSQL workspace tests (tests/server)",
               _postgres_found, ("postgresql",)),
    SystemNeed("Java 17 or newer", "the Spark backend's tests (tests/spark)", _java_found,
               ("openjdk-17-jre-headless",)),
)


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


def _may_install() -> str:
    """Empty when ``test`` may install Debian packages; else why not."""
    if os.environ.get("GAINSCOPE_NO_APT") == "1":
        return "GAINSCOPE_NO_APT=1"
    if not shutil.which("apt-get"):
        return "no apt-get here"
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "not running as root"
    return ""


def ensure_system() -> None:
    """Say what SYSTEM_NEEDS lacks and why; install it with apt-get when allowed (see the module docstring)."""
    missing = [need for need in SYSTEM_NEEDS if not need.found()]
    if not missing:
        return
    refused = _may_install()
    updated = False
    for need in missing:
        packages = " ".join(need.debian)
        if refused:
            print(f"note: {need.program} is not installed ({refused}, so dev.py does not install Debian's "
                  f"{packages}): {need.tests} will be skipped", flush=True)
            continue
        print(f"dev.py test: {need.tests} need {need.program}, which is not installed; installing Debian's "
              f"{packages} with apt-get, as root (GAINSCOPE_NO_APT=1 skips this, and those tests)", flush=True)
        updated = updated or _apt_get("update", "-qq")
        if not (updated and _apt_get("install", "-y", "-qq", *need.debian) and need.found()):
            print(f"note: installing {packages} failed: {need.tests} will be skipped", flush=True)


def how_to_run() -> str:
    """How to run the gainscope that ``demo`` installed: .venv is not on PATH (paths relative to the checkout
    when run from there)."""
    here = Path.cwd().resolve() == ROOT
    gs, activate = ((BIN / name).relative_to(ROOT) if here else BIN / name for name in ("gainscope", "activate"))
    return (f"\ngainscope is installed in {VENV}, which is not on your PATH. Run it as\n"
            f"    {gs} --help\n"
            "or put .venv on the PATH of this shell and run gainscope by name:\n"
            f"    {'' if os.name == 'nt' else 'source '}{activate}\n"
            "    gainscope --help")


def demo() -> None:
    ensure_env("serve")
    gs = BIN / "gainscope"
    _run(gs, "evaluate", "examples/qrels.txt", "examples/bm25.run", "examples/hybrid.run",
         "-m", "nDCG@10 nDCG(gain=exponential)@10 AP RR P@5 R@10 Judged@10")
    _run(gs, "explain", "examples/qrels.txt", "examples/bm25.run", "--query", "MQ003", "-m", "nDCG@5")
    _run(gs, "compare", "examples/qrels.txt", "examples/bm25.run", "examples/hybrid.run", "-m", "nDCG@10 AP RR P@5")
    _run(gs, "evaluate", "examples/dataset.json", "examples/agent_run.jsonl", "-m", "nDCG@5 RR AP P@5", "-q")
    search_demo(gs)
    dashboard_demo(gs)
    print(how_to_run(), flush=True)


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


def dashboard_demo(gs: Path) -> None:
    """The recipes as a dashboard case: run against the embedded engine, added to a fresh workspace; then how to open
    the dashboard (the demo starts no server: it would not end)."""
    ex = "examples/search"
    shutil.rmtree(ROOT / ex / "workspace", ignore_errors=True)  # a fresh workspace each time (it is generated)
    _run(gs, "case", "run", f"{ex}/recipes_case.json", "--top", "10", "-o", f"{ex}/recipes_run.json")
    _run(gs, "case", "add", f"{ex}/workspace", f"{ex}/recipes_run.json")
    here = Path.cwd().resolve() == ROOT
    shown = gs.relative_to(ROOT) if here else gs
    print(f"\nOpen the dashboard on the recipes (a case of 12 queries rated by hand, over the embedded engine):\n"
          f"    {shown} serve {ex if here else ROOT / ex}/workspace\n"
          "and open the URL it prints (rate with the keyboard, tune the knobs and rerun; Ctrl-C stops it).", flush=True)


def test(args: list[str]) -> None:
    ensure_env("test")
    ensure_system()
    # two worker processes, each test file on one (its fixtures set up once): half the wall time on two cores
    _run(PY, "-m", "pytest", *(args or ["-q", "-n", "2", "--dist", "loadfile"]))


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
