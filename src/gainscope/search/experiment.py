"""Experiments: every configuration of a parameter grid run over the queries into one snapshot store, evaluated
against judgments and compared with a baseline configuration.

For each configuration (a set of knob values) the queries are sent as :func:`~gainscope.search.runner.run_queries`
sends them (throttled, retried, resumable: the snapshot ``EXPERIMENT/CONFIGURATION`` is reused when the experiment
runs again), and its snapshot becomes a run (:func:`~gainscope.search.runner.results_to_run`: the engine's order).
Then:

* the runs are evaluated with the same judgments and policies and compared by :func:`gainscope.compare.compare`:
  means with bootstrap intervals, paired differences with the baseline, the paired tests, p-values corrected
  over *every* comparison of the report (all metrics x all configurations; Holm by default);
* latency per configuration: p50, p95 and p99 of the answered queries' latencies (numpy's percentile, linear
  interpolation between order statistics), in milliseconds;
* overlap with the baseline per configuration: the mean over queries of Jaccard@k of the top ``overlap_depth``
  ids and of rank-biased overlap (RBO_ext, persistence ``rbo_p``; :mod:`gainscope.overlap`);
* the best configuration: the highest mean of the first metric (on a tie the baseline, then the earliest), and
  whether its difference with the baseline is significant after correction.

The baseline is the configuration named ``baseline``; by default the engine's own knob values, named
``default`` -- added to the grid when no grid point has them. A configuration whose queries did not all get an
answer (failed or unsent) is not evaluated: the experiment stops with an error naming them, since a run with
missing queries would score them 0; fix the cause and run again (``rerun_failed``), what was recorded is kept.

The experiment file (TOML; relative paths are relative to it)::

    engine = "engines.toml:shop"      # or an index folder, or module:function
    queries = "queries.jsonl"         # JSONL, TSV or a case file
    judgments = "qrels.txt"           # any judgments file gainscope reads, or a case file (its ratings)
    metrics = ["nDCG@10", "AP", "P@5"]
    top = 100
    snapshots = "boosts.sqlite"       # default: the experiment file with .sqlite
    baseline = "default"              # a configuration's name
    overlap_depth = 10
    rbo_p = 0.9

    [grid]                            # every combination, in this order
    title_boost = [1, 2, 4]
    k1 = [0.9, 1.2]

    [[configurations]]                # and/or named configurations
    name = "tuned"
    knobs = { title_boost = 3, k1 = 1.0 }

    [send]                            # optional: how queries are sent
    concurrency = 4
    qps = 20
    max_attempts = 5
"""

from __future__ import annotations

import itertools
import math
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gainscope.errors import EngineConfigError, EngineError, FormatError, InputError, format_ids
from gainscope.search.engine import Engine, RetryPolicy, SearchQuery, resolve_knobs
from gainscope.search.runner import (
    Progress,
    RunOutcome,
    RunSettings,
    empty_queries,
    results_to_run,
    run_queries,
    unordered_queries,
)
from gainscope.search.store import SnapshotStore
from gainscope.search.templates import as_text

if TYPE_CHECKING:
    from gainscope.compare import Comparison

__all__ = ["Configuration", "ConfigurationResult", "ExperimentPlan", "ExperimentReport", "configurations_from", "grid",
           "judgments_from", "plan_from", "read_experiment", "run_experiment"]

DEFAULT_METRICS = ("nDCG@10", "AP", "RR", "P@10")
DEFAULT_NAME = "default"


@dataclass(frozen=True)
class Configuration:
    """A named set of knob values (overrides of the engine's defaults)."""

    name: str
    knobs: dict[str, Any] = field(default_factory=dict)


def grid(axes: Mapping[str, Sequence[Any]]) -> list[Configuration]:
    """Every combination of the ``axes`` values, the first axis varying slowest; named ``knob=value,...``."""
    names = list(axes)
    for name, values in axes.items():
        if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
            raise EngineConfigError(f"grid {name}: give a non-empty list of values (e.g. {name} = [1, 2, 4]); got "
                                    f"{values!r}")
    out = []
    for combination in itertools.product(*(axes[n] for n in names)):
        knobs = dict(zip(names, combination, strict=True))
        out.append(Configuration(",".join(f"{k}={as_text(v)}" for k, v in knobs.items()), knobs))
    return out


@dataclass(frozen=True)
class ExperimentPlan:
    """What to run: the engine, the queries, the judgments, the configurations and how to compare them."""

    name: str
    engine: Engine
    queries: list[SearchQuery]
    judgments: Any
    configurations: list[Configuration]
    baseline: str | None = None
    metrics: tuple[str, ...] = DEFAULT_METRICS
    settings: RunSettings = field(default_factory=RunSettings)
    overlap_depth: int = 10
    rbo_p: float = 0.9
    compare_settings: Any = None
    sources: tuple[str, ...] = ()
    #: knob values every configuration starts from (``--set``), the engine's defaults otherwise
    base_knobs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ConfigurationResult:
    """One configuration's snapshot and what the experiment measured on it."""

    configuration: Configuration
    knobs: dict[str, Any]
    outcome: RunOutcome
    latency_ms: tuple[float, float, float]
    jaccard: float | None
    rbo: float | None
    queries: int

    @property
    def name(self) -> str:
        """The configuration's name."""
        return self.configuration.name


@dataclass(frozen=True)
class ExperimentReport:
    """Every configuration's results, the comparison with the baseline, and the best configuration. The
    comparison is the one :class:`~gainscope.compare.Comparison` (its ``results`` hold each configuration's
    :class:`~gainscope.results.Results`)."""

    name: str
    baseline: str
    configurations: tuple[ConfigurationResult, ...]
    comparison: Comparison
    best: str
    best_significant: bool
    overlap_depth: int
    rbo_p: float
    notes: tuple[str, ...] = ()

    def result(self, name: str) -> ConfigurationResult:
        """The configuration named ``name``."""
        for c in self.configurations:
            if c.name == name:
                return c
        raise InputError(f"no configuration {name!r}; the configurations are: "
                         f"{', '.join(c.name for c in self.configurations)}")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary: configurations (knobs, snapshot, latency, overlap), comparison, best."""
        return {
            "experiment": self.name, "baseline": self.baseline, "best": self.best,
            "best_significant": self.best_significant,
            "overlap": {"depth": self.overlap_depth, "rbo_p": self.rbo_p},
            "configurations": [{"name": c.name, "knobs": c.knobs, "snapshot": c.outcome.snapshot.name,
                                "queries": c.queries, "sent": c.outcome.sent, "reused": c.outcome.reused,
                                "latency_ms": {"p50": _finite(c.latency_ms[0]), "p95": _finite(c.latency_ms[1]),
                                               "p99": _finite(c.latency_ms[2])},
                                f"jaccard@{self.overlap_depth}": c.jaccard, "rbo": c.rbo}
                               for c in self.configurations],
            "comparison": self.comparison.to_dict(),
            "notes": list(self.notes),
        }


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


# ------------------------------------------------------------------------------------------------ reading
_KEYS = ("engine", "queries", "judgments", "metrics", "top", "snapshots", "baseline", "overlap_depth", "rbo_p",
         "grid", "configurations", "send", "name")
_SEND_KEYS = ("concurrency", "qps", "max_attempts", "max_consecutive_failures")


def read_experiment(path: str | Path) -> dict[str, Any]:
    """The experiment file's settings, with relative paths resolved against its folder (see the module
    docstring); unknown keys are errors."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8-sig"))
    except tomllib.TOMLDecodeError as exc:
        raise FormatError(f"not valid TOML: {exc}", path=str(p)) from None
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 ({exc.reason} at byte {exc.start})", path=str(p)) from None
    from gainscope.search.http import close_match

    for key in data:
        if key not in _KEYS:
            raise EngineConfigError(f"{p}: unknown key {key!r}{close_match(key, list(_KEYS))}")
    for key in data.get("send", {}):
        if key not in _SEND_KEYS:
            raise EngineConfigError(f"{p}: unknown key send.{key}{close_match(key, list(_SEND_KEYS))}")
    for key in ("engine", "queries", "judgments"):
        if not isinstance(data.get(key), str):
            raise EngineConfigError(f"{p}: {key} = \"...\" is required (the {_WHAT[key]})")
    folder = p.parent
    out = dict(data)
    for key in ("queries", "judgments", "snapshots"):
        if isinstance(out.get(key), str):
            out[key] = str(folder / out[key])
    engine = out["engine"]
    head, sep, tail = engine.rpartition(":")
    if sep and head.lower().endswith(".toml"):
        out["engine"] = f"{folder / head}:{tail}"
    elif not sep or engine.lower().endswith(".toml") or (folder / engine).is_dir():
        out["engine"] = str(folder / engine)
    out.setdefault("snapshots", str(p.with_suffix(".sqlite")))
    out.setdefault("name", p.stem)
    return out


_WHAT = {"engine": "engine: FILE.toml:NAME, an index folder or module:function",
         "queries": "queries file", "judgments": "judgments: a qrels file or a case file"}


def configurations_from(data: Mapping[str, Any]) -> list[Configuration]:
    """The ``[grid]`` combinations then the ``[[configurations]]``, each name once."""
    configs = grid(data["grid"]) if data.get("grid") else []
    for i, item in enumerate(data.get("configurations") or [], start=1):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str) or not isinstance(
                item.get("knobs", {}), Mapping):
            raise EngineConfigError(f"configuration {i}: give name = \"...\" and knobs = {{ KNOB = VALUE }}")
        configs.append(Configuration(item["name"], dict(item.get("knobs", {}))))
    seen: set[str] = set()
    for c in configs:
        if c.name in seen:
            raise EngineConfigError(f"configuration {c.name!r} is named twice; give each configuration its own name")
        seen.add(c.name)
    return configs


def judgments_from(path: str | Path) -> Any:
    """Judgments from a judgments file, or from a case file's ratings (keyed by the case's TREC query ids)."""
    p = Path(path)
    if p.suffix.lower() in (".json", ".yaml", ".yml"):
        try:
            from gainscope.cases.files import read_case

            case = read_case(p)
        except InputError:
            case = None
        if case is not None:
            from gainscope.cases.trec import trec_ids
            from gainscope.core.judgments import Judgments

            ids = trec_ids(case)
            ratings = {ids[q.query]: dict(q.ratings) for q in case.queries if q.ratings}
            if not ratings:
                raise InputError(f"{p}: the case has no rating to evaluate against")
            return Judgments.from_dict(ratings, source=str(p))
    from gainscope.io import read_judgments

    return read_judgments(p)


# ------------------------------------------------------------------------------------------------ running
def _percentiles(values: list[float]) -> tuple[float, float, float]:
    if not values:
        return math.nan, math.nan, math.nan
    import numpy as np

    p50, p95, p99 = np.percentile(np.asarray(values) * 1000, [50, 95, 99])
    return float(p50), float(p95), float(p99)


def _overlap(a: RunOutcome, b: RunOutcome, depth: int, p: float) -> tuple[float | None, float | None]:
    from gainscope.overlap import jaccard_at_k, rbo

    base = {r.query_id: [h.id for h in r.hits] for r in b.results if r.ok}
    pairs = [([h.id for h in r.hits], base[r.query_id]) for r in a.results if r.ok and r.query_id in base]
    if not pairs:
        return None, None
    jaccard = sum(jaccard_at_k(x, y, depth) for x, y in pairs) / len(pairs)
    overlap = sum(rbo(x[:depth], y[:depth], p) for x, y in pairs) / len(pairs)
    return jaccard, overlap


async def run_experiment(plan: ExperimentPlan, store: SnapshotStore, *,
                         progress: Callable[[str, Progress], None] | None = None) -> ExperimentReport:
    """Run every configuration of ``plan`` into ``store``, evaluate and compare (see the module docstring)."""
    from gainscope.compare import compare

    engine = plan.engine
    default = resolve_knobs(engine.name, engine.knobs, plan.base_knobs)
    configs = [Configuration(c.name, {**plan.base_knobs, **c.knobs}) for c in plan.configurations]
    effective = [resolve_knobs(engine.name, engine.knobs, c.knobs) for c in configs]  # unknown knobs: error now
    baseline = plan.baseline
    if baseline is None:
        same = [c for c, knobs in zip(configs, effective, strict=True) if knobs == default]
        if same:
            baseline = same[0].name
        else:
            configs.insert(0, Configuration(DEFAULT_NAME, dict(plan.base_knobs)))
            effective.insert(0, default)
            baseline = DEFAULT_NAME
    names = [c.name for c in configs]
    if baseline not in names:
        from gainscope.search.http import close_match

        raise EngineConfigError(f"the baseline {baseline!r} is not a configuration{close_match(baseline, names)}")
    if len(configs) < 2:
        raise EngineConfigError("an experiment compares at least two configurations; give a grid or configurations")
    outcomes: list[RunOutcome] = []
    for config in configs:
        report = (lambda p, name=config.name: progress(name, p)) if progress is not None else None
        outcomes.append(await run_queries(engine, plan.queries, store, knobs=config.knobs,
                                          name=f"{plan.name}/{config.name}", source=plan.sources[0] if plan.sources
                                          else None, settings=plan.settings, progress=report))
    incomplete = [(c, o) for c, o in zip(configs, outcomes, strict=True) if not o.complete]
    if incomplete:
        parts = []
        for c, o in incomplete:
            failed = [f"{r.query_id}: {r.error}" for r in o.failed[:2]]
            parts.append(f"configuration {c.name!r}: {len(o.failed)} failed, {len(o.unsent)} not sent"
                         + (f" ({'; '.join(failed)})" if failed else "")
                         + (f"; stopped: {o.stopped}" if o.stopped else ""))
        raise EngineError("the experiment is not evaluated: " + " | ".join(parts) + ". A run with missing queries "
                          "would score them 0; fix the cause and run the experiment again (with --rerun-failed for "
                          "failed queries): what was recorded is kept")
    notes: list[str] = []
    runs = []
    reordered = []
    empty = []
    for config, outcome in zip(configs, outcomes, strict=True):
        run, _ = results_to_run(outcome.results, name=config.name)
        runs.append(run)
        unordered = unordered_queries(outcome.results)
        if unordered:
            reordered.append(f"{config.name} ({len(unordered)})")
        nothing = empty_queries(outcome.results)
        if nothing:
            empty.append(f"{config.name} ({len(nothing)}: {format_ids(nothing)})")
    if empty:
        notes.append("queries that came back with no document, scored 0 where judged: " + ", ".join(empty))
    if reordered:
        notes.append("scores that tie, are missing or do not decrease in some queries of " + ", ".join(reordered)
                     + ": trec_eval would order ties by doc id, not as the engine did, so these runs are scored in "
                     "the engine's order (scores n - rank + 1); the engine's scores are in the snapshots")
    comparison = compare(plan.judgments, runs, list(plan.metrics), baseline=baseline, names=names,
                         settings=plan.compare_settings)
    base_outcome = outcomes[names.index(baseline)]
    results = []
    for config, knobs, outcome in zip(configs, effective, outcomes, strict=True):
        latencies = [r.latency for r in outcome.results if r.ok and r.latency is not None]
        jaccard, overlap = _overlap(outcome, base_outcome, plan.overlap_depth, plan.rbo_p)
        results.append(ConfigurationResult(config, knobs, outcome, _percentiles(latencies), jaccard, overlap,
                                           len(outcome.results)))
    first = comparison.metrics[0]
    means = {r.run: r.mean for r in comparison.rows if r.metric == first}
    # the highest mean; on a tie the baseline (a change must do better to be chosen), then the earliest
    best = max(names, key=lambda n: (means[n] if not math.isnan(means[n]) else -math.inf, n == baseline,
                                     -names.index(n)))
    best_row = comparison.row(first, best)
    return ExperimentReport(plan.name, baseline, tuple(results), comparison, best,
                            bool(best_row.significant) and best != baseline, plan.overlap_depth, plan.rbo_p,
                            tuple(notes))


def plan_from(data: Mapping[str, Any], *, engine: Engine, queries: list[SearchQuery], judgments: Any,
              extra: Sequence[Configuration] = (), compare_settings: Any = None,
              overrides: Mapping[str, Any] | None = None,
              base_knobs: Mapping[str, Any] | None = None) -> ExperimentPlan:
    """An :class:`ExperimentPlan` from an experiment file's settings (``data``, as :func:`read_experiment` gives),
    with command-line ``extra`` configurations and ``overrides`` (``top``, ``metrics``, ``baseline``, send
    settings) on top."""
    overrides = dict(overrides or {})
    send = dict(data.get("send") or {})
    for key in _SEND_KEYS:
        if overrides.get(key) is not None:
            send[key] = overrides.pop(key)
    top = overrides.pop("top", None) or data.get("top", 100)
    settings = RunSettings(top=top, concurrency=send.get("concurrency", 4), qps=send.get("qps"),
                           retry=RetryPolicy(max_attempts=send.get("max_attempts", 5)),
                           max_consecutive_failures=send.get("max_consecutive_failures", 10),
                           rerun_failed=bool(overrides.pop("rerun_failed", False)))
    metrics = overrides.pop("metrics", None) or data.get("metrics") or DEFAULT_METRICS
    if isinstance(metrics, str):
        metrics = [metrics]
    configs = configurations_from(data) + list(extra)
    depth = data.get("overlap_depth", 10)
    rbo_p = data.get("rbo_p", 0.9)
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise EngineConfigError(f"overlap_depth must be an integer >= 1; got {depth!r}")
    if isinstance(rbo_p, bool) or not isinstance(rbo_p, int | float) or not 0 < rbo_p < 1:
        raise EngineConfigError(f"rbo_p must be a number between 0 and 1 (exclusive); got {rbo_p!r}")
    return ExperimentPlan(str(data.get("name") or "experiment"), engine, queries, judgments, configs,
                          overrides.pop("baseline", None) or data.get("baseline"), tuple(metrics), settings, depth,
                          float(rbo_p), compare_settings, tuple(str(data[k]) for k in ("queries", "judgments")
                                                                 if data.get(k)), dict(base_knobs or {}))
