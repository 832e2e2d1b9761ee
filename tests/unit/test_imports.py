"""What a short command imports: ``gainscope evaluate`` on small TREC files needs numpy, never polars or scipy;
``import gainscope`` and the command line load a module when it is first used. Structural checks (which modules
are in ``sys.modules``), not timings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import gainscope
from gainscope.cli import COMMANDS, cli
from gainscope.deferred import DeferredSeries, deferred_module
from gainscope.io.scan import native_available

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEAVY = ("polars", "scipy", "pyarrow", "pandas", "matplotlib", "httpx")


def _modules_after(code: str) -> dict[str, bool]:
    """Which of HEAVY (and numpy) a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps({{m: m in sys.modules for m in {[*HEAVY, 'numpy']!r}}}))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded: dict[str, bool] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


@pytest.mark.skipif(not native_available(), reason="without the C scanner, TREC files are read with polars")
@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json", "jsonl", "trec_eval"])
def test_evaluate_on_trec_files_imports_neither_polars_nor_scipy(fmt: str) -> None:
    argv = ["gainscope", "evaluate", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "bm25.run"),
            str(EXAMPLES / "hybrid.run"), "-m", "nDCG@10 AP RR P@5 R@10", "-q", "--format", fmt]
    code = ("import contextlib, io, sys\n"
            f"sys.argv = {argv!r}\n"
            "from gainscope.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
            "    try:\n        main()\n    except SystemExit as exc:\n        assert not exc.code, exc.code")
    loaded = _modules_after(code)
    assert loaded["numpy"]  # the kernels
    assert [m for m in HEAVY if loaded[m]] == []


#: what ``gainscope evaluate -m "nDCG@10 AP RR P@10 R@100"`` of TREC files as a table does without: the metric
#: families it names none of, the Python readers of TREC files (the C scanner reads them), other formats' readers
#: and writers, the fallbacks' logging, the threads of large files (each costs the command 0.5 to 4 ms, which
#: add up against pytrec_eval's whole run: issue 13 item 28)
NOT_FOR_A_TABLE = ("gainscope.metrics.families.sets", "gainscope.metrics.families.curves",
                   "gainscope.metrics.families.ratings", "gainscope.metrics.families.session", "json", "csv",
                   "logging", "concurrent.futures", "gainscope.io.trec", "gainscope.io.jsonl",
                   "gainscope.io.tabular", "gainscope.io.writers")


@pytest.mark.skipif(not native_available(), reason="without the C scanner, TREC files are read with polars")
def test_evaluate_as_a_table_leaves_out_what_only_other_inputs_and_formats_need() -> None:
    argv = ["gainscope", "evaluate", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "bm25.run"),
            "-m", "nDCG@10 AP RR P@10 R@100"]
    code = ("import contextlib, io, sys\n"
            f"sys.argv = {argv!r}\n"
            "from gainscope.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
            "    try:\n        main()\n    except SystemExit as exc:\n        assert not exc.code, exc.code\n"
            f"print([m for m in {NOT_FOR_A_TABLE!r} if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_import_gainscope_and_the_command_line_load_no_numerics() -> None:
    loaded = _modules_after("import gainscope, gainscope.cli")
    assert not any(loaded.values()), loaded


def test_package_names_resolve_on_first_use() -> None:
    for name in gainscope.__all__:
        assert getattr(gainscope, name) is not None
    assert set(gainscope.__all__) <= set(dir(gainscope))
    from gainscope.compare import compare
    from gainscope.core.judgments import Judgments

    assert gainscope.compare is compare and gainscope.Judgments is Judgments
    assert gainscope.errors.InputError.__name__ == "InputError"
    with pytest.raises(AttributeError, match="has no attribute 'nonexistent'"):
        _ = gainscope.nonexistent  # type: ignore[attr-defined]


def test_compare_and_explain_stay_functions_whatever_is_imported_first(monkeypatch: pytest.MonkeyPatch) -> None:
    code = ("import gainscope.explain, gainscope.compare, gainscope\n"
            "assert callable(gainscope.compare) and gainscope.compare.__name__ == 'compare'\n"
            "assert gainscope.explain.__name__ == 'explain'\nprint('{}')")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    monkeypatch.setattr(gainscope, "compare", len)  # a user's (or a test's) own value is kept
    assert gainscope.compare is len
    monkeypatch.undo()
    assert gainscope.compare.__module__ == "gainscope.compare"


def test_every_command_is_listed_and_loads_under_its_name(cli_runner) -> None:  # type: ignore[no-untyped-def]
    import click

    code, out, _ = cli_runner("--help")
    assert code == 0
    listed = [line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()]
    assert listed == sorted(COMMANDS)
    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert isinstance(command, click.Command) and command.name == name
    code, _, err = cli_runner("evaluat")
    assert code == 2 and "No such command 'evaluat'" in err


def test_the_console_script_pauses_garbage_collection_only_until_the_command_is_found() -> None:
    code = ("import gc, json, sys\nfrom gainscope.cli import cli, main\nseen = []\n"
            "@cli.command('probe')\ndef probe():\n    seen.append([gc.isenabled(), gc.get_freeze_count() > 0])\n"
            "for argv in (['gainscope', 'probe'], ['gainscope', '--version'], ['gainscope', 'nosuchcommand']):\n"
            "    sys.argv = argv\n    try:\n        main()\n    except SystemExit:\n        pass\n"
            "    seen.append(gc.isenabled())\n"
            "print(json.dumps(seen))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # the command runs with the collector on, what the imports made frozen; on after --version and errors too
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [[True, True], True, True, True]


def test_the_command_line_as_a_library_leaves_garbage_collection_alone(cli_runner) -> None:  # type: ignore[no-untyped-def]
    import gc

    frozen = gc.get_freeze_count()
    code, _, _ = cli_runner("metrics")
    assert code == 0 and gc.isenabled() and gc.get_freeze_count() == frozen


def test_deferred_module_imports_on_first_use() -> None:
    assert deferred_module("json") is json  # imported already: the module itself
    code = ("import sys\nfrom gainscope.deferred import deferred_module\n"
            "m = deferred_module('xml.dom.minidom')\nassert 'xml.dom.minidom' not in sys.modules\n"
            "assert m.parseString('<a/>').documentElement.tagName == 'a'\n"
            "assert 'xml.dom.minidom' in sys.modules\nprint('{}')")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_deferred_series_is_made_once_when_read() -> None:
    import polars as pl

    made: list[int] = []

    def make() -> pl.Series:
        made.append(1)
        return pl.Series("doc_id", ["a", "b", "c"])

    ids = DeferredSeries(make)
    assert repr(ids) == "DeferredSeries(not made yet)" and made == []
    assert ids.to_list() == ["a", "b", "c"] and ids[1:].to_list() == ["b", "c"] and len(ids) == 3
    assert list(ids) == ["a", "b", "c"] and ids.gather([2, 0]).to_list() == ["c", "a"]
    assert made == [1]


def test_built_in_metrics_do_not_read_the_plugins_entry_points() -> None:
    code = ("from gainscope.metrics import registry, parse_metric\nparse_metric('nDCG@10')\n"
            "assert not registry._plugins_loaded\n"
            "try:\n    registry.lookup('NoSuchMetric')\nexcept Exception:\n    pass\n"
            "assert registry._plugins_loaded\nprint('{}')")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
