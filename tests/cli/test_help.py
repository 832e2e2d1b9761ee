"""``gainscope help``: the shared input options documented once, the commands' pages pointing to it."""

from __future__ import annotations

import click
import pytest

from gainscope.cli.common import SEE_INPUTS, policy_options, profile_option, reader_options
from gainscope.cli.help import INPUTS, TOPICS


def _shared_options() -> list[str]:
    @click.command()
    @profile_option
    @policy_options
    @reader_options
    def toy(**kwargs: object) -> None:
        """Toy."""

    return [opt for p in toy.params for opt in p.opts if opt.startswith("--")]


def test_help_lists_the_topics(cli_runner) -> None:
    code, out, _ = cli_runner("help")
    assert code == 0
    assert out.splitlines() == [
        "Help topics (gainscope help TOPIC):",
        "  inputs      formats, standard input, encodings, ids, ties, missing queries, relevance, profiles",
        "  vocabulary  what each option word means in every command, and the old spellings still accepted",
        "Commands: gainscope COMMAND --help (or gainscope help COMMAND).",
    ]
    assert set(TOPICS) == {"inputs", "vocabulary"}


def test_inputs_documents_every_shared_option(cli_runner) -> None:
    code, out, _ = cli_runner("help", "inputs")
    assert code == 0 and out == INPUTS
    missing = [opt for opt in _shared_options() if opt not in out]
    assert missing == []


@pytest.mark.parametrize("command", ["evaluate", "compare", "gate", "plot", "report", "explain", "agreement", "pool",
                                     "fuse", "validate"])
def test_pages_with_shared_options_point_to_the_topic(cli_runner, command: str) -> None:
    code, out, _ = cli_runner(command, "--help")
    assert code == 0
    assert " ".join(out.split()).count(SEE_INPUTS) == 1


def test_vocabulary_lists_the_old_spellings_from_the_declarations(cli_runner) -> None:
    code, out, _ = cli_runner("help", "vocabulary")
    assert code == 0
    assert "  gate: --baseline -> --baseline-run\n" in out and "  case compare: -k, --depth -> --top\n" in out
    assert "  agent evaluate: --judge -> --model\n" in out and "  report: --figure-format -> --image-format\n" in out


def test_help_of_a_command_and_an_unknown_topic(cli_runner) -> None:
    assert cli_runner("help", "gate")[1] == cli_runner("gate", "--help")[1]
    code, out, err = cli_runner("help", "inptus")
    assert code == 2 and out == ""
    assert "no help topic or command 'inptus'; topics: inputs, vocabulary (or a command name)" in err
