"""The temporal metric names, read with the core's grammar (:mod:`gainscope.metrics.names`):
``TemporalNDCG@10``, ``TemporalNDCG(gain=exponential, ideal=retrieved)@5``, ``TemporalMAP`` (``k`` = 10 when no
``@`` is given, the facade's default cutoff). A name that does not parse is the core's
:class:`~gainscope.errors.MetricSyntaxError`, a parameter outside its declared values or a cutoff below 1 the core's
:class:`~gainscope.errors.InvalidParameterError` -- the same mistake gives the same error as ``nDCG@0``. The mode
is the file's (``--mode``), not a parameter.

Under a profile (``tempoeval``) a name gets the profile's parameter defaults for its core metric -- in the
file's mode (TempoEval's nDCG ideal is the top k in focus-time and LLM modes) -- where it does not give them
itself; a parameter written in the name overrides the profile, and the notes say so. The names print every
parameter that differs from the temporal metric's default, so a number never hides its conventions.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from gainscope.core.policies import Policies
from gainscope.errors import InvalidParameterError, PolicyError, UnknownMetricError
from gainscope.metrics.base import format_value
from gainscope.metrics.names import metric_parts
from gainscope.metrics.profiles import Profile, get_profile
from gainscope.temporal.base import Mode, TemporalMetric, check_k
from gainscope.temporal.ranking import TemporalMAP, TemporalMRR, TemporalNDCG, TemporalPrecision, TemporalRecall
from gainscope.temporal.years import TemporalCoverage, TemporalDiversity, TemporalYearPrecision, TemporalYearRecall

if TYPE_CHECKING:
    from gainscope.judges.labeling import Judge

__all__ = ["METRICS", "PROFILES", "MetricSpec", "parse_metric", "temporal_profile"]

#: the metric classes by name
METRICS: dict[str, type[TemporalMetric]] = {c.__name__: c for c in (
    TemporalNDCG, TemporalPrecision, TemporalRecall, TemporalMRR, TemporalMAP, TemporalYearPrecision,
    TemporalYearRecall, TemporalDiversity, TemporalCoverage)}

#: the profiles the temporal metrics take: their policies are the temporal pipeline's own (the order given)
PROFILES = ("trec_eval", "tempoeval")

_MODE_FIELDS = ("use_focus_time", "use_llm", "llm", "on_failure")
_DEFAULT_K = 10


@dataclass(frozen=True)
class MetricSpec:
    """A metric name as written: class, parameters, cutoff. ``str`` gives the canonical spelling."""

    cls: type[TemporalMetric]
    params: tuple[tuple[str, Any], ...]
    k: int

    def build(self, mode: Mode, judge: Judge | None) -> TemporalMetric:
        """The metric in ``mode`` (the judge for LLM mode; failures become NaN and are reported)."""
        flags: dict[str, Any] = {"use_focus_time": mode == "focus_time", "use_llm": mode == "llm"}
        if mode == "llm":
            flags.update(llm=judge, on_failure="nan")
        if mode not in self.cls.modes:
            offered = " or ".join(m.replace("_", "-") for m in self.cls.modes)
            raise PolicyError(f"{self.cls.__name__} has no {mode.replace('_', '-')} mode (it is computed from "
                              f"{'focus times' if self.cls.modes == ('focus_time',) else offered}); the file is "
                              f"evaluated in {mode.replace('_', '-')} mode: use --mode "
                              f"{' or --mode '.join(m.replace('_', '-') for m in self.cls.modes)}")
        if "gold" not in self.cls.modes:  # the year measures: focus time unless use_llm
            flags.pop("use_focus_time")
        return self.cls(**flags, **dict(self.params))

    def under(self, profile: Profile | None, mode: Mode) -> tuple[MetricSpec, list[str]]:
        """This name under ``profile`` in ``mode``: the profile's parameters for the core metric where the name
        gives none, and a note for each one the name overrides."""
        if profile is None:
            return self, []
        given = dict(self.params)
        core = type(self.cls().core(self.k)).name if "gold" in self.cls.modes else None
        if core is None:
            return self, []
        defaults = {key: value for key, value in profile.parameter_defaults(core, Policies(), mode).items()
                    if key in self.cls.CORE_PARAMETERS}
        spec = MetricSpec(self.cls, tuple({**defaults, **given}.items()), self.k)
        notes = [f"{spec}: {key}={format_value(given[key])} (the {profile.name} profile: {format_value(value)})"
                 for key, value in defaults.items() if key in given and format_value(given[key]) != format_value(value)]
        return spec, notes

    def __str__(self) -> str:
        return f"{self.cls(**dict(self.params))}@{self.k}"


def parse_metric(text: str) -> MetricSpec:
    """``TemporalNDCG@10``, ``TemporalNDCG(gain=exponential, ideal=retrieved)@5``, ``TemporalMAP`` (k = 10)."""
    name, params, at_value, has_at = metric_parts(text)
    if name not in METRICS:
        close = difflib.get_close_matches(name, list(METRICS), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise UnknownMetricError(f"unknown temporal metric {name!r}{hint}; the temporal metrics: {', '.join(METRICS)}")
    cls = METRICS[name]
    for key, value in params.items():
        if key in _MODE_FIELDS:
            raise PolicyError(f"{text!r}: parameters are written name=value (the mode comes from the file or "
                              f"--mode); got {key}={format_value(value)}")
    known = [f.name for f in fields(cls) if f.name not in _MODE_FIELDS]
    for key in params:
        if key not in known:  # the core's message (gainscope.metrics.names.build_metric)
            raise InvalidParameterError(f"{name} has no parameter {key!r}; its parameters are: {', '.join(known)}.")
    k = check_k(at_value, name, "cutoff") if has_at else _DEFAULT_K
    cls(**params)  # the parameters are checked where they are declared (the core metric's, the adapter's)
    return MetricSpec(cls, tuple(params.items()), k)


def temporal_profile(profile: str | Profile | None) -> Profile | None:
    """The profile the temporal metrics are evaluated under (None: their own defaults); a PolicyError naming the
    profiles they take for any other."""
    if profile is None:
        return None
    prof = get_profile(profile)
    if prof.name not in PROFILES:
        raise PolicyError(f"the temporal metrics take the {' and '.join(PROFILES)} profiles, not {prof.name!r}: their "
                          "ranking is the order given and their relevance the mode's (rel, min_jaccard); give the "
                          "parameters the profile would set in the metric names instead")
    return prof
