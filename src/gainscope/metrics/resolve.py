"""The one name lookup: metric names (ir_measures style or trec_eval's), metric objects and profiles to metric
objects. The command line, the Python API and every lookup in results (``results["map"]``,
``results.per_query("ndcg_cut.10")``, ``Results.select``) go through :func:`resolve_metrics`.

>>> [str(m) for m in resolve_metrics(["ndcg_cut.10", "map", "nDCG@10"])]
['nDCG@10', 'AP']
>>> [str(m) for m in resolve_metrics(["nDCG@10", "NDCG_CUT@10", "P@5"], profile="quepid")]
['nDCG(gain=exponential, ideal_depth=all)@10', 'nDCG(gain=exponential)@10', 'P(denominator=retrieved)@5']
"""

from __future__ import annotations

from collections.abc import Iterable

from gainscope.core.policies import Policies
from gainscope.errors import MetricError
from gainscope.metrics.base import Metric, format_value
from gainscope.metrics.names import build_metric, metric_parts
from gainscope.metrics.profiles import Profile, get_profile
from gainscope.metrics.registry import lookup

__all__ = ["MetricsArg", "resolve_metrics", "resolve_metrics_noting"]

MetricsArg = str | Metric | Iterable[str | Metric]


def resolve_metrics(metrics: MetricsArg, *, profile: str | Profile | None = None,
                    policies: Policies | None = None) -> list[Metric]:
    """Turn names (ir_measures style or trec_eval style, including ``official`` and ``all_trec``) and metric
    objects into a de-duplicated list of metric objects, in request order.

    Under a ``profile`` its names are known too (``NDCG_CUT``) and its parameter defaults fill the parameters
    a name does not give (``policies``: the evaluation's, for a default that follows the relevance level);
    trec_eval names and metric objects are taken as they are.
    """
    return resolve_metrics_noting(metrics, profile=profile, policies=policies)[0]


def resolve_metrics_noting(metrics: MetricsArg, *, profile: str | Profile | None = None,
                           policies: Policies | None = None,
                           trec_rounding: str = "nearest") -> tuple[list[Metric], tuple[str, ...]]:
    """:func:`resolve_metrics`, and a note for every parameter written in a name that overrides the profile's
    value (``nDCG(gain=linear)@10: gain=linear (the quepid profile: exponential)``). ``trec_rounding`` is the
    recall-level rounding of the trec_eval names ``iprec_at_recall`` and ``11pt_avg`` (``"legacy"``: trec_eval 9
    and pytrec_eval; see :mod:`gainscope.metrics.families.curves`)."""
    from gainscope.metrics.trec_eval import is_trec_name, trec_metrics

    prof = get_profile(profile) if profile is not None else None
    pol = policies if policies is not None else Policies()
    if isinstance(metrics, (str, Metric)):
        items: list[str | Metric] = [metrics]
    elif isinstance(metrics, Iterable):
        items = list(metrics)
    else:
        raise MetricError(f"metrics must be a name, a Metric object or a list of them (metrics=['nDCG@10', 'AP']); "
                          f"got {metrics!r}")
    if not items:
        raise MetricError("no metric requested; name at least one, for example 'nDCG@10'")
    out: list[Metric] = []
    notes: list[str] = []
    seen: set[str] = set()
    for item in items:
        if isinstance(item, Metric):
            found = [item]
        elif isinstance(item, str):
            text = item.strip()
            if is_trec_name(text):
                found = [m for _, m in trec_metrics([text], rounding=trec_rounding)]
            else:
                metric, overridden = _parse(text, prof, pol)
                found = [metric]
                notes += overridden
        else:
            raise MetricError(f"a metric must be a name or a Metric object; got {item!r}")
        for m in found:
            if str(m) not in seen:
                seen.add(str(m))
                out.append(m)
    return out, tuple(dict.fromkeys(notes))


def _parse(text: str, profile: Profile | None, policies: Policies) -> tuple[Metric, list[str]]:
    """One name in the grammar, under ``profile``: the metric and the profile values it overrides."""
    name, params, at_value, has_at = metric_parts(text)
    if profile is None:
        return build_metric(lookup(name), params, at_value, has_at, text), []
    fixed: dict[str, object] = {}
    if name in profile.names:
        target, fixed = profile.names[name][0], dict(profile.names[name][1])
        cls = lookup(target)
    else:
        cls = lookup(name, also=profile.names)
    defaults = profile.parameter_defaults(cls.name, policies)
    given = {**fixed, **params}
    metric = build_metric(cls, {**defaults, **given}, at_value, has_at, text)
    overridden = [f"{metric}: {key}={format_value(getattr(metric, key))} (the {profile.name} profile: "
                  f"{format_value(value)})" for key, value in defaults.items()
                  if key in params and format_value(getattr(metric, key)) != format_value(value)]
    return metric, overridden
