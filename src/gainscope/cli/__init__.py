"""The ``gainscope`` command line: one module per command, all sharing :mod:`gainscope.cli.common`.

A command's module is imported only when that command runs (or ``--help`` lists the commands), so that
``gainscope evaluate`` does not pay for the imports of ``agent``, ``judge`` or ``temporal``.

The console script (:func:`main`) pauses Python's cyclic garbage collector until the command is found: importing
its modules (numpy, click, the metric classes) makes some 100,000 objects and no garbage, and the collections
they would trigger cost a short command about 5% of its time. The objects made so far are then frozen
(:func:`gc.freeze`: alive as long as the process, never traversed again) and the collector resumes before the
command runs, as it always did.
"""

from __future__ import annotations

import gc
import importlib

import click

from gainscope._version import __version__

__all__ = ["cli", "main"]

#: command name -> (module, attribute) of its click command
COMMANDS: dict[str, tuple[str, str]] = {
    "agent": ("gainscope.cli.agent", "agent_group"),
    "agreement": ("gainscope.cli.agreement", "agreement_cmd"),
    "case": ("gainscope.cli.case", "case_group"),
    "compare": ("gainscope.cli.compare", "compare_cmd"),
    "evaluate": ("gainscope.cli.evaluate", "evaluate_cmd"),
    "experiment": ("gainscope.cli.experiment", "experiment_cmd"),
    "explain": ("gainscope.cli.explain", "explain_cmd"),
    "fuse": ("gainscope.cli.fuse", "fuse_cmd"),
    "gate": ("gainscope.cli.gate", "gate_cmd"),
    "help": ("gainscope.cli.help", "help_cmd"),
    "index": ("gainscope.cli.index", "index_cmd"),
    "judge": ("gainscope.cli.judge", "judge_cmd"),
    "metrics": ("gainscope.cli.metrics", "metrics_cmd"),
    "plot": ("gainscope.cli.plot", "plot_cmd"),
    "pool": ("gainscope.cli.pool", "pool_cmd"),
    "queue": ("gainscope.cli.queue", "queue_group"),
    "report": ("gainscope.cli.report", "report_cmd"),
    "search": ("gainscope.cli.search", "search_cmd"),
    "serve": ("gainscope.cli.serve", "serve_cmd"),
    "serve-engine": ("gainscope.cli.serve_engine", "serve_engine_cmd"),
    "store": ("gainscope.cli.judge", "store_group"),
    "temporal": ("gainscope.cli.temporal", "temporal_group"),
    "validate": ("gainscope.cli.validate", "validate_cmd"),
}


class _LazyGroup(click.Group):
    """A group whose commands (:data:`COMMANDS`) are imported when first looked up; commands added with
    ``add_command`` work as in any group."""

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        found = super().resolve_command(ctx, args)
        _resume_collection()
        return found

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(module), attribute)
            self.add_command(command, cmd_name)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gainscope")
def cli() -> None:
    """gainscope: ranked-retrieval evaluation with declared definitions.

    Numbers reproduce trec_eval by default; every convention that changes a number is an option and is
    printed with the results. gainscope help lists the help topics (inputs, vocabulary).
    """


#: True while :func:`main` keeps the garbage collector paused (see the module docstring)
_paused = False


def _resume_collection() -> None:
    """Freeze what the imports made and resume garbage collection, if :func:`main` paused it."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


def main() -> None:
    """Entry point of the ``gainscope`` console script."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True
    try:
        cli(prog_name="gainscope")
    finally:
        _resume_collection()
