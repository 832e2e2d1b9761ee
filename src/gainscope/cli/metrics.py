"""``gainscope metrics [NAME]``: list every metric, or describe one (formula, conventions, reference)."""

from __future__ import annotations

import click

from gainscope.cli.common import guarded
from gainscope.metrics.profiles import PROFILES


@click.command("metrics")
@click.argument("name", required=False)
@click.option("--profiles", is_flag=True, help="List the convention profiles (--profile) and what each sets.")
@click.option("--profile", type=click.Choice(list(PROFILES)), default=None,
              help="Describe NAME as this profile reads it (NDCG_CUT@10 under quepid, ...).")
@guarded
def metrics_cmd(name: str | None, profiles: bool, profile: str | None) -> None:
    """List every metric (parameters and defaults, formula, reference, the profiles that set it, what explain
    shows), or describe NAME (e.g. nDCG, 'P(rel=2)@5', ndcg_cut.10)."""
    from gainscope.evaluation import resolve_metrics
    from gainscope.render.metrics import describe_metric, list_metrics, list_profiles

    if profiles:
        click.echo(list_profiles(), nl=False)
        return
    if name is None:
        click.echo(list_metrics(), nl=False)
        return
    from gainscope.errors import InvalidParameterError
    from gainscope.metrics.registry import lookup

    try:
        found = resolve_metrics(name, profile=profile)
    except InvalidParameterError:
        cls = lookup(name)  # a bare name whose parameters are required (P, R, IPrec) still describes
        click.echo(_describe_class(cls), nl=False)
        return
    for m in found[:1]:
        click.echo(describe_metric(m), nl=False)


def _describe_class(cls: type) -> str:
    import inspect

    return f"{cls.name}  —  {cls.summary}\n\n{inspect.cleandoc(cls.__doc__ or '')}\n"  # type: ignore[attr-defined]
