"""The metric catalogue for ``gainscope metrics`` (every registered metric with its parameters and their
defaults, formula, reference, the profiles that set its parameters and how it explains itself) and
``gainscope metrics NAME`` (one metric in full, with the parameters as given)."""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import fields

from gainscope.metrics.base import Metric, explains_by_position, format_value, metric_formula, metric_reference
from gainscope.metrics.profiles import PROFILES, profiles_of
from gainscope.metrics.registry import all_metric_classes
from gainscope.render.text import text_table

__all__ = ["describe_metric", "list_metrics", "list_profiles"]

WIDTH = 110


def _parameters(cls: type[Metric]) -> str:
    """``@cutoff (required), gain=linear, rel=none``: each parameter with its default (the convention)."""
    out = []
    for f in fields(cls):
        label = ("@" if f.metadata.get("at") else "") + f.name
        if f.metadata.get("required"):
            out.append(f"{label} (required)")
        else:
            out.append(f"{label}={'none' if f.default is None else format_value(f.default)}")
    return ", ".join(out) or "none"


def _explains(cls: type[Metric]) -> str:
    return "position by position" if explains_by_position(cls) else "the value and the inputs it used"


def _block(label: str, text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=f"  {label:<12}", subsequent_indent=" " * 14,
                         break_on_hyphens=False) or [f"  {label}"]


def list_metrics() -> str:
    """Every registered metric: name and summary, then its parameters with their defaults, formula, reference,
    the profiles that set its parameters and what ``gainscope explain`` shows for it."""
    lines = []
    for cls in all_metric_classes():
        lines.append(f"{cls.name}  —  {cls.summary}")
        lines += _block("parameters", _parameters(cls))
        lines += _block("formula", metric_formula(cls))
        lines += _block("reference", metric_reference(cls))
        for entry in profiles_of(cls.name):
            lines += _block("profile", entry)
        lines += _block("explain", _explains(cls))
        lines.append("")
    return ("\n".join(lines)
            + "Run `gainscope metrics NAME` for the conventions of one metric in full, `gainscope metrics --profiles` "
              "for the profiles.\nNames are written like nDCG@10, P(rel=2)@5, nDCG(gain=exponential)@10; trec_eval "
              "names (ndcg_cut.10, P.5, map, official, all_trec) are accepted too.\n")


def list_profiles() -> str:
    """Every convention profile: its description, what it sets and its notes."""
    lines = []
    for p in PROFILES.values():
        lines += textwrap.wrap(f"{p.name}  —  {p.description}", WIDTH, subsequent_indent=" " * 14,
                               break_on_hyphens=False)
        for setting in p.settings():
            lines += _block("sets", setting)
        for note in p.notes:
            lines += _block("note", note)
        lines.append("")
    return "\n".join(lines) + ("Use one with --profile NAME (Python: profile=\"NAME\"); options given explicitly "
                               "override it.\n")


def describe_metric(metric: Metric) -> str:
    """Full description of one metric (with the parameters as given)."""
    from gainscope.metrics.trec_eval import trec_name_of

    cls = type(metric)
    lines = [f"{metric}  —  {cls.summary}", ""]
    lines.append(inspect.cleandoc(cls.__doc__ or ""))
    lines.append("")
    rows = []
    for f in fields(cls):
        default = f.default
        current = getattr(metric, f.name)
        rows.append([("@" if f.metadata.get("at") else "") + f.name, format_value(current),
                     "-" if default is None else format_value(default), f.metadata.get("doc", "")])
    if rows:
        lines.append(text_table(["parameter", "value", "default", "meaning"], rows, align=["l", "l", "l", "l"]))
        lines.append("")
    lo, hi = cls.bounds
    lines.append(f"range: [{'-inf' if lo is None else format_value(lo)}, {'inf' if hi is None else format_value(hi)}]"
                 f"   aggregate over queries: {cls.aggregate}")
    if cls.aliases:
        lines.append("aliases: " + ", ".join(cls.aliases))
    trec = trec_name_of(metric)
    if trec:
        lines.append(f"trec_eval name: {trec}")
    if cls.uses_relevance_level:
        lines.append("relevance: grade >= rel (default: the evaluation's relevance level, -l)")
    for entry in profiles_of(cls.name):
        lines.append(f"profile {entry}")
    lines.append(f"explain: {_explains(cls)}")
    return "\n".join(lines) + "\n"
