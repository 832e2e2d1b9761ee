"""The ``gainscope`` command line: one module per command, all sharing :mod:`gainscope.cli.common`."""

from __future__ import annotations

import click

from gainscope._version import __version__
from gainscope.cli.agent import agent_group
from gainscope.cli.agreement import agreement_cmd
from gainscope.cli.case import case_group
from gainscope.cli.compare import compare_cmd
from gainscope.cli.evaluate import evaluate_cmd
from gainscope.cli.experiment import experiment_cmd
from gainscope.cli.explain import explain_cmd
from gainscope.cli.fuse import fuse_cmd
from gainscope.cli.gate import gate_cmd
from gainscope.cli.index import index_cmd
from gainscope.cli.judge import judge_cmd, store_group
from gainscope.cli.metrics import metrics_cmd
from gainscope.cli.plot import plot_cmd
from gainscope.cli.pool import pool_cmd
from gainscope.cli.report import report_cmd
from gainscope.cli.search import search_cmd
from gainscope.cli.serve_engine import serve_engine_cmd
from gainscope.cli.temporal import temporal_group
from gainscope.cli.validate import validate_cmd

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gainscope")
def cli() -> None:
    """gainscope: ranked-retrieval evaluation with declared definitions.

    Numbers reproduce trec_eval by default; every convention that changes a number is an option and is
    printed with the results.
    """


cli.add_command(agent_group)
cli.add_command(agreement_cmd)
cli.add_command(case_group)
cli.add_command(compare_cmd)
cli.add_command(evaluate_cmd)
cli.add_command(experiment_cmd)
cli.add_command(explain_cmd)
cli.add_command(fuse_cmd)
cli.add_command(gate_cmd)
cli.add_command(index_cmd)
cli.add_command(judge_cmd)
cli.add_command(metrics_cmd)
cli.add_command(plot_cmd)
cli.add_command(pool_cmd)
cli.add_command(report_cmd)
cli.add_command(search_cmd)
cli.add_command(serve_engine_cmd)
cli.add_command(store_group)
cli.add_command(temporal_group)
cli.add_command(validate_cmd)


def main() -> None:
    """Entry point of the ``gainscope`` console script."""
    cli(prog_name="gainscope")
