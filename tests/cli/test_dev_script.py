"""dev.py, the README's entry point (issue 13, items 18 and 19): ``demo`` ends by saying how to run the gainscope
it installed in .venv (not on PATH), and ``test`` says what it installs with apt-get, and why, before it does."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def dev(monkeypatch) -> ModuleType:
    """dev.py imported as a module (registered while the test runs, as its dataclass needs)."""
    spec = importlib.util.spec_from_file_location("dev_script", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "dev_script", module)
    spec.loader.exec_module(module)
    return module


def test_demo_ends_by_saying_how_to_run_gainscope(dev: ModuleType, monkeypatch, capsys) -> None:
    ran: list[tuple[str, ...]] = []
    monkeypatch.setattr(dev, "ensure_env", lambda extras: None)
    monkeypatch.setattr(dev, "_run", lambda *cmd: ran.append(tuple(map(str, cmd))))
    monkeypatch.chdir(ROOT)
    dev.demo()
    assert len(ran) >= 4 and all(cmd[0] == str(dev.BIN / "gainscope") for cmd in ran)
    assert ran[-1][1:3] == ("case", "add")  # the recipes into a dashboard workspace; no server is started
    assert capsys.readouterr().out == (
        "\nOpen the dashboard on the recipes (a case of 12 queries rated by hand, over the embedded engine):\n"
        "    .venv/bin/gainscope serve examples/search/workspace\n"
        "and open the URL it prints (rate with the keyboard, tune the knobs and rerun; Ctrl-C stops it).\n"
        f"\ngainscope is installed in {ROOT / '.venv'}, which is not on your PATH. Run it as\n"
        "    .venv/bin/gainscope --help\n"
        "or put .venv on the PATH of this shell and run gainscope by name:\n"
        "    source .venv/bin/activate\n"
        "    gainscope --help\n")
    assert (ROOT / ".venv" / "bin" / "gainscope").exists() and (ROOT / ".venv" / "bin" / "activate").exists()


def test_outside_the_checkout_the_paths_are_absolute(dev: ModuleType, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    text = dev.how_to_run()
    assert f"    {ROOT / '.venv' / 'bin' / 'gainscope'} --help\n" in text
    assert f"    source {ROOT / '.venv' / 'bin' / 'activate'}\n" in text


@pytest.fixture
def no_browser(dev: ModuleType, monkeypatch) -> list[tuple[str, ...]]:
    """No browser on PATH, apt-get present, root; apt-get calls recorded (printed as dev.py prints them)."""
    calls: list[tuple[str, ...]] = []
    monkeypatch.delenv("GAINSCOPE_CHROMIUM", raising=False)
    monkeypatch.delenv("GAINSCOPE_NO_APT", raising=False)
    monkeypatch.setattr(dev.shutil, "which", lambda name: "/usr/bin/apt-get" if name == "apt-get" else None)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    # the browser alone is missing (whether PostgreSQL is installed here or not)
    monkeypatch.setattr(dev, "SYSTEM_NEEDS", tuple(n for n in dev.SYSTEM_NEEDS if n.debian == ("chromium",)))

    def apt_get(*args: str) -> bool:
        calls.append(args)
        print("+ apt-get", *args)
        return True

    monkeypatch.setattr(dev, "_apt_get", apt_get)
    return calls


def test_test_says_what_it_installs_and_why_before_apt_get(dev: ModuleType, no_browser, capsys) -> None:
    dev.ensure_system()
    assert capsys.readouterr().out == (
        "dev.py test: the HTML report's and the dashboard's browser tests (tests/render, tests/server) need a "
        "headless Chromium, which is not installed; installing Debian's chromium with apt-get, as root "
        "(GAINSCOPE_NO_APT=1 skips this, and those tests)\n"
        "+ apt-get update -qq\n"
        "+ apt-get install -y -qq chromium\n"
        # the fake apt-get installed nothing, so the browser is still missing: said, not hidden
        "note: installing chromium failed: the HTML report's and the dashboard's browser tests (tests/render, "
        "tests/server) will be skipped\n")
    assert no_browser == [("update", "-qq"), ("install", "-y", "-qq", "chromium")]


@pytest.mark.parametrize(("setting", "reason"), [("no_apt", "GAINSCOPE_NO_APT=1"), ("user", "not running as root")])
def test_test_installs_nothing_when_told_not_to_or_not_root(dev: ModuleType, no_browser, monkeypatch, capsys,
                                                            setting: str, reason: str) -> None:
    if setting == "no_apt":
        monkeypatch.setenv("GAINSCOPE_NO_APT", "1")
    else:
        monkeypatch.setattr(os, "geteuid", lambda: 1000)
    dev.ensure_system()
    assert no_browser == []
    assert capsys.readouterr().out == (
        f"note: a headless Chromium is not installed ({reason}, so dev.py does not install Debian's chromium): the "
        "HTML report's and the dashboard's browser tests (tests/render, tests/server) will be skipped\n")


def test_postgres_is_installed_for_the_dashboard_tests_when_missing(dev: ModuleType, monkeypatch, capsys) -> None:
    calls: list[tuple[str, ...]] = []
    monkeypatch.delenv("GAINSCOPE_NO_APT", raising=False)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(dev.shutil, "which", lambda name: "/usr/bin/apt-get" if name == "apt-get" else None)
    monkeypatch.setattr(dev, "_apt_get", lambda *args: calls.append(args) or True)
    [need] = [n for n in dev.SYSTEM_NEEDS if n.debian == ("postgresql",)]
    monkeypatch.setattr(dev, "SYSTEM_NEEDS", (dev.SystemNeed(need.program, need.tests, lambda: False, need.debian),))
    dev.ensure_system()
    assert calls == [("update", "-qq"), ("install", "-y", "-qq", "postgresql")]
    assert capsys.readouterr().out.startswith(
        "dev.py test: the dashboard's PostgreSQL workspace tests (tests/server) need PostgreSQL (initdb, pg_ctl), "
        "which is not installed; installing Debian's postgresql with apt-get")


def test_readme_lists_what_dev_py_installs(dev: ModuleType) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for need in dev.SYSTEM_NEEDS:
        assert any(line.startswith(f"| {need.program}") and f"| `{' '.join(need.debian)}` |" in line
                   for line in readme.splitlines()), need
