"""One CLI vocabulary (issue 14 item 5): a word means the same thing in every command, and the old spellings
keep working with a note on standard error that names the new one (:class:`gainscope.cli.spelling.Respelled`)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from tests.helpers import invoke

from gainscope.cli import cli
from gainscope.cli.spelling import Respelled

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS, BM25, HYBRID = (str(EXAMPLES / name) for name in ("qrels.txt", "bm25.run", "hybrid.run"))
CASES = EXAMPLES / "cases"
BEFORE, AFTER = str(CASES / "movies_before.json"), str(CASES / "movies_after.json")


def _commands() -> Iterator[tuple[str, click.Command]]:
    ctx = click.Context(cli)

    def walk(group: click.Group, path: str) -> Iterator[tuple[str, click.Command]]:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            assert command is not None
            if isinstance(command, click.Group):
                yield from walk(command, f"{path} {name}".strip())
            else:
                yield f"{path} {name}".strip(), command

    return walk(cli, "")


def _options(spelling: str) -> dict[str, click.Option]:
    """Every command's option spelled ``spelling`` (new spellings only: old ones are not in ``opts``)."""
    return {path: p for path, command in _commands() for p in command.params
            if isinstance(p, click.Option) and spelling in p.opts}


# ---------------------------------------------------------------------- the words, in every command
def test_o_is_a_file_in_every_command() -> None:
    found = _options("-o")
    assert {"evaluate", "compare", "report", "agent convert", "fuse"} <= set(found)
    for path, p in found.items():
        assert not (isinstance(p.type, click.Path) and not p.type.file_okay), f"{path}: -o is a directory"


def test_format_is_the_output_format_and_image_types_are_image_format() -> None:
    for path, p in _options("--format").items():
        assert isinstance(p.type, click.Choice), path
        assert not {"png", "svg"} & set(p.type.choices), f"{path}: --format is an image type"
    assert set(_options("--image-format")) == {"plot", "report"}


def test_depth_is_trec_eval_m_and_the_pool_depth_is_pool_depth() -> None:
    for path, p in _options("--depth").items():
        assert p.opts == ["-M", "--depth"], path
    assert set(_options("--pool-depth")) == {"judge", "pool"}


def test_the_llm_is_model_and_baseline_is_a_run_name() -> None:
    assert {"judge", "temporal evaluate", "agent evaluate", "agent plot"} <= set(_options("--model"))
    assert set(_options("--baseline")) == {"compare", "experiment", "plot", "pool", "report", "temporal evaluate"}
    assert set(_options("--baseline-run")) == {"gate"}
    (export,) = _options("--judge").values()  # the one --judge left names a stored judge, by its hash
    assert export.metavar == "HASH" and export.help is not None and "hash" in export.help


def test_top_is_the_first_n_results_of_each_query() -> None:
    assert set(_options("--top")) == {"case compare", "case run", "experiment", "search"}


OLD_SPELLINGS = [
    ("gate", "--baseline", "--baseline-run"),
    ("agent evaluate", "--judge", "--model"),
    ("agent plot", "--judge", "--model"),
    ("agent plot", "-o", "--output-dir"),
    ("plot", "-o", "--output-dir"),
    ("plot", "--format", "--image-format"),
    ("report", "--figure-format", "--image-format"),
    ("judge", "--depth", "--pool-depth"),
    ("pool", "--depth", "--pool-depth"),
    ("case compare", "-k", "--top"),
    ("case compare", "--depth", "--top"),
]


@pytest.mark.parametrize(("path", "old", "new"), OLD_SPELLINGS)
def test_old_spellings_are_declared_and_hidden(path: str, old: str, new: str) -> None:
    command = dict(_commands())[path]
    (p,) = [p for p in command.params if isinstance(p, click.Option) and new in p.opts]
    assert isinstance(p, Respelled) and old in p.old and old not in p.opts
    help_text = command.get_help(click.Context(command, info_name=path))
    assert new in help_text and f"{old} " not in help_text.replace(new, "")


# ---------------------------------------------------------------------- the old spellings at work
_run = partial(invoke, cli)


def _note(command: str, old: str, new: str) -> str:
    return (f"warning: {old} is deprecated in 'cli {command}'; use {new} (the same option under its new name, see "
            f"gainscope help vocabulary)\n")


def test_gate_baseline_file_still_works_with_a_note() -> None:
    new = _run("gate", QRELS, HYBRID, "--baseline-run", BM25, "--fail-if", "delta(RR) < -0.5", "--resamples", "100")
    old = _run("gate", QRELS, HYBRID, "--baseline", BM25, "--fail-if", "delta(RR) < -0.5", "--resamples", "100")
    assert new[0] == old[0] == 0 and new[1] == old[1] and new[1].startswith("gate passed")
    assert old[2] == _note("gate", "--baseline", "--baseline-run") + new[2]


def test_gate_baseline_that_is_no_file_is_a_run_name_and_refused() -> None:
    code, out, err = _run("gate", QRELS, HYBRID, "--baseline", "bm25", "--fail-if", "delta(RR) < 0")
    assert code == 2 and out == ""
    assert ("--baseline names a run in gainscope commands; gate compares with a baseline run FILE: give "
            "--baseline-run FILE (no file 'bm25')") in err


def test_both_spellings_at_once_are_refused() -> None:
    code, _, err = _run("gate", QRELS, HYBRID, "--baseline", BM25, "--baseline-run", BM25, "--fail-if", "RR < 0")
    assert code == 2 and "--baseline is the old spelling of --baseline-run; give --baseline-run only" in err


def test_pool_depth_old_spelling() -> None:
    new = _run("pool", BM25, HYBRID, "--budget", "3", "--pool-depth", "1")
    old = _run("pool", BM25, HYBRID, "--budget", "3", "--depth", "1")
    assert new[0] == old[0] == 0 and new[1] == old[1] and "depth-1 pool" in new[1]
    assert old[2] == _note("pool", "--depth", "--pool-depth") + new[2]


def test_judge_pool_depth_old_spelling_reaches_the_option() -> None:
    code, _, err = _run("judge", "--queries", "q", "--corpus", "c", "--model", "m", "--run", BM25, "--depth", "0")
    assert code == 2
    assert err.startswith(_note("judge", "--depth", "--pool-depth"))
    assert "Invalid value for '--pool-depth'" in err


@pytest.mark.parametrize("old", ["-k", "--depth"])
def test_case_compare_top_old_spellings(old: str) -> None:
    new = _run("case", "compare", BEFORE, AFTER, "--top", "3", "--resamples", "100")
    was = _run("case", "compare", BEFORE, AFTER, old, "3", "--resamples", "100")
    assert new[0] == was[0] == 0 and new[1] == was[1]
    assert was[2] == _note("case compare", old, "--top") + new[2]


def test_agent_judge_old_spelling_is_the_model() -> None:
    code, _, err = _run("agent", "evaluate", str(EXAMPLES / "agents" / "traces.jsonl"), "--judgments", QRELS,
                        "--judge", "m")
    assert err.startswith(_note("agent evaluate", "--judge", "--model"))
    # the value reached --model: the command refuses two sources of gains
    assert code == 2 and "give gains from --judgments or from --model, not both" in err


def test_plot_old_spellings(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    new = _run("plot", QRELS, BM25, HYBRID, "--kind", "delta", "-m", "RR", "--image-format", "svg",
               "--output-dir", str(tmp_path / "new"))
    old = _run("plot", QRELS, BM25, HYBRID, "--kind", "delta", "-m", "RR", "--format", "svg",
               "-o", str(tmp_path / "old"))
    assert new[0] == old[0] == 0
    assert new[1].replace("new", "old") == old[1] and old[1].strip().endswith("delta-RR.svg")
    assert old[2] == _note("plot", "--format", "--image-format") + _note("plot", "-o", "--output-dir") + new[2]


# ---------------------------------------------------------------------- Respelled itself
@click.command("toy")
@click.option("--new", "value", cls=Respelled, old=("--old", "-x"), required=True, type=int)
@click.option("--many", cls=Respelled, old=("--several",), multiple=True)
def _toy(value: int, many: tuple[str, ...]) -> None:
    click.echo(f"{value} {list(many)}")


def test_respelled_options() -> None:
    runner = CliRunner()
    assert runner.invoke(_toy, ["--new", "3"]).output == "3 []\n"
    result = runner.invoke(_toy, ["-x", "4", "--several", "a", "--several", "b"])
    assert result.exit_code == 0 and result.stdout == "4 ['a', 'b']\n"
    assert "warning: -x is deprecated in 'toy'; use --new" in result.stderr
    assert "warning: --several is deprecated in 'toy'; use --many" in result.stderr
    result = runner.invoke(_toy, ["--old", "1", "-x", "2"])
    assert result.exit_code == 2 and "--old/-x are old spellings of --new; give --new only" in result.stderr
    result = runner.invoke(_toy, ["--old", "x"])  # the value goes through the option's type
    assert result.exit_code == 2 and "Invalid value for '--new'" in result.stderr
    result = runner.invoke(_toy, [])  # required: either spelling
    assert result.exit_code == 2 and "Missing option '--new'" in result.stderr
    assert "--old" not in runner.invoke(_toy, ["--help"]).stdout
    with pytest.raises(TypeError, match="not flags"):
        Respelled(["--flag"], old=("--f",), is_flag=True)
