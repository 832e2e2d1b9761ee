"""A regression gate for CI: rules on a run's metrics, its change against a baseline, and single queries.

Rules say when the gate *fails* (``--fail-if``)::

    nDCG@10 < 0.35                 the run's mean is below 0.35
    delta(nDCG@10) < -0.01         the mean paired difference run - baseline is below -0.01
    reldelta(AP) < -2%             the change relative to the baseline's mean (over the paired queries) is
                                   below -2 % (``-0.02`` without the percent sign)
    significant_loss(nDCG@10)      the run is significantly worse than the baseline (the corrected p-value of
                                   the comparison's significance test is below alpha, and delta < 0)

Operators: ``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``. A rule on a run's value that can never fire, because
the threshold lies outside the metric's range (``nDCG@10 < -0.01``), is refused rather than silently passing:
it is almost always a delta rule written without ``delta(...)``. So is a relative change below -100% of a
metric that cannot be negative (``reldelta(AP) < -2``, a fraction: almost always ``-2%`` without its sign).

Per-query assertions (a file, one per line, ``#`` comments) say what must *hold*::

    q12  nDCG@10 >= 0.8
    q7   RR == 1

A query that was not evaluated, or whose value is undefined, fails its assertion. Deltas and significance use
:func:`gainscope.compare.compare_results` over every metric the gate evaluates, so the correction for multiple
comparisons covers all of them.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gainscope.compare import CompareSettings, Comparison, compare_results
from gainscope.errors import FormatError, PolicyError, option
from gainscope.metrics.base import Metric
from gainscope.results import Results

__all__ = ["Check", "GateReport", "QueryAssertion", "Rule", "gate", "metrics_of", "parse_assertion", "parse_rule",
           "read_assertions"]

def _equal(a: float, b: float) -> bool:
    """Equal up to floating-point noise (1e-9): 0.1 + 0.2 == 0.3 for a gate."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, ">=": operator.ge, "==": _equal, "!=": lambda a, b: not _equal(a, b), "<": operator.lt,
    ">": operator.gt}
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_COMPARISON = re.compile(rf"^\s*(?P<lhs>.+?)\s*(?P<op><=|>=|==|!=|<|>)\s*(?P<num>{_NUMBER})\s*(?P<pct>%)?\s*$")
_CALL = re.compile(r"^(?P<fn>delta|reldelta|significant_loss)\s*\(\s*(?P<metric>.+?)\s*\)$")

Kind = Literal["value", "delta", "reldelta", "significant_loss"]


@dataclass(frozen=True)
class Rule:
    """A ``--fail-if`` rule: the gate fails when it holds."""

    text: str
    kind: Kind
    metric: str
    op: str | None = None
    threshold: float | None = None

    @property
    def needs_baseline(self) -> bool:
        """Delta, relative delta and significance rules compare with a baseline."""
        return self.kind != "value"


@dataclass(frozen=True)
class QueryAssertion:
    """A per-query assertion: ``query_id metric op threshold`` must hold; ``where`` is ``file:line``."""

    query_id: str
    metric: str
    op: str
    threshold: float
    where: str = ""

    @property
    def text(self) -> str:
        """The assertion as written, normalised."""
        return f"{self.query_id} {self.metric} {self.op} {self.threshold:g}"


@dataclass(frozen=True)
class Check:
    """One rule or assertion checked: whether it passed and the value that decided it."""

    kind: Literal["rule", "assertion"]
    text: str
    passed: bool
    detail: str
    value: float | None = None
    where: str = ""


@dataclass(frozen=True, eq=False)
class GateReport:
    """Every check of a gate, the comparison behind its delta rules (None without a baseline) and the results."""

    run: str
    baseline: str | None
    checks: tuple[Check, ...]
    comparison: Comparison | None
    results: tuple[Results, ...]

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        """The checks that failed."""
        return [c for c in self.checks if not c.passed]

    def to_dict(self) -> dict[str, Any]:
        """Plain data: verdict, checks, and the comparison (if any)."""
        return {"passed": self.passed, "run": self.run, "baseline": self.baseline,
                "checks": [{"kind": c.kind, "check": c.text, "passed": c.passed, "detail": c.detail,
                            "value": None if c.value is None or math.isnan(c.value) else c.value,
                            "where": c.where or None} for c in self.checks],
                "comparison": None if self.comparison is None else self.comparison.to_dict(),
                "conventions": self.results[0].conventions() if self.results else {}}


# ---------------------------------------------------------------------------------------------- parsing
def _comparison(text: str, what: str) -> tuple[str, str, float]:
    m = _COMPARISON.match(text)
    if m is None:
        raise PolicyError(f"cannot read the {what} {text!r}: write 'METRIC OP NUMBER' with OP one of "
                          f"{' '.join(OPS)}, e.g. 'nDCG@10 < 0.35' or 'delta(nDCG@10) < -0.01'")
    value = float(m["num"]) / (100 if m["pct"] else 1)
    if not math.isfinite(value):  # 1e400 reads as inf
        raise PolicyError(f"cannot read the {what} {text!r}: {m['num']} is beyond the range of a number; give a "
                          "finite threshold")
    return m["lhs"], m["op"], value


Resolver = Callable[[str], list[Metric]]


def _metric(name: str, resolve: Resolver | None) -> Metric:
    """One metric from a name in either spelling (``nDCG@10``, ``ndcg_cut.10``, ``map``), resolved by
    ``resolve`` (a profile's resolution) or as :func:`~gainscope.evaluate` resolves names without one."""
    from gainscope.evaluation import resolve_metrics

    found = (resolve or resolve_metrics)(name.strip())
    if len(found) != 1:
        raise PolicyError(f"{name!r} names {len(found)} metrics ({', '.join(map(str, found))}); a rule or an "
                          "assertion is about one metric")
    return found[0]


def parse_rule(text: str, *, resolve: Resolver | None = None) -> Rule:
    """Read a ``--fail-if`` rule (see the module docstring); metric names become canonical (``resolve``: how
    names resolve, e.g. under a profile; by default as :func:`~gainscope.evaluate` resolves them)."""
    stripped = text.strip()
    call = _CALL.match(stripped)
    if call is not None and call["fn"] == "significant_loss":
        return Rule(text=stripped, kind="significant_loss", metric=str(_metric(call["metric"], resolve)))
    lhs, op, value = _comparison(stripped, "rule")
    pct = stripped.endswith("%")
    call = _CALL.match(lhs)
    if call is not None:
        if call["fn"] == "significant_loss":
            raise PolicyError(f"significant_loss(...) takes no comparison: write 'significant_loss("
                              f"{call['metric']})'; got {text!r}")
        if pct and call["fn"] != "reldelta":
            raise PolicyError(f"a percentage only applies to reldelta(...): write 'reldelta({call['metric']}) "
                              f"{op} {stripped.split(op, 1)[1].strip()}'; got {text!r}")
        kind: Kind = "delta" if call["fn"] == "delta" else "reldelta"
        metric = _metric(call["metric"], resolve)
        if kind == "delta":
            low, high = type(metric).bounds
            span = None if low is None or high is None else high - low
            _check_reachable(stripped, f"a change of {metric}", (None if span is None else -span, span), op, value,
                             "")
        elif (low := type(metric).bounds[0]) is not None and low >= 0:  # (run - base) / base >= -1 when both >= 0
            hint = "" if pct else (f" A threshold without '%' is a fraction (-0.02 is -2%): to mean {value:g} "
                                   f"percent, write 'reldelta({metric}) {op} {value:g}%'")
            _check_reachable(stripped, f"a relative change of {metric} (a fraction: -1 is -100%)", (-1.0, None), op,
                             value, hint)
        return Rule(text=stripped, kind=kind, metric=str(metric), op=op, threshold=value)
    if pct:
        raise PolicyError(f"a percentage only applies to reldelta(...); got {text!r}")
    metric = _metric(lhs, resolve)
    _check_reachable(stripped, str(metric), type(metric).bounds, op, value,
                     f" To fail on a change against the baseline, write 'delta({metric}) {op} {value:g}'")
    return Rule(text=stripped, kind="value", metric=str(metric), op=op, threshold=value)


def _check_reachable(text: str, what: str, bounds: tuple[float | None, float | None], op: str, value: float,
                     hint: str) -> None:
    """Refuse a rule that cannot fire because the threshold lies outside the range of what it tests."""
    low, high = bounds
    never = ((op in ("<", "<=") and low is not None and (value < low or (op == "<" and value == low)))
             or (op in (">", ">=") and high is not None and (value > high or (op == ">" and value == high))))
    if never:
        rng = f"[{'-inf' if low is None else f'{low:g}'}, {'inf' if high is None else f'{high:g}'}]"
        raise PolicyError(f"the rule {text!r} can never fire, so it would always pass: {what} lies in {rng}."
                          f"{hint}")


def parse_assertion(text: str, where: str = "", *, resolve: Resolver | None = None) -> QueryAssertion:
    """Read ``QUERY_ID METRIC OP NUMBER`` (``resolve`` as for :func:`parse_rule`)."""
    parts = text.strip().split(None, 1)
    if len(parts) < 2:
        raise PolicyError(f"expected 'QUERY_ID METRIC OP NUMBER', e.g. 'q12 nDCG@10 >= 0.8'; got {text!r}")
    lhs, op, value = _comparison(parts[1], "assertion")
    return QueryAssertion(query_id=parts[0], metric=str(_metric(lhs, resolve)), op=op, threshold=value,
                          where=where)


_COMMENT = re.compile(r"(?:^|\s)#.*$")


def read_assertions(path: str | Path, *, resolve: Resolver | None = None) -> list[QueryAssertion]:
    """Per-query assertions from a file: one per line, blank lines and comments ignored (``resolve`` as
    for :func:`parse_rule`). A comment starts with ``#`` at the start of a line or after a space, so that a query
    id holding ``#`` (``q#1``) can be asserted."""
    out = []
    p = Path(path)
    for number, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        body = _COMMENT.sub("", line).strip()
        if not body:
            continue
        try:
            out.append(parse_assertion(body, where=f"{p}:{number}", resolve=resolve))
        except (PolicyError, ValueError) as exc:
            raise FormatError(str(exc), path=str(p), line=number, text=line) from None
    return out


def metrics_of(rules: Sequence[Rule], assertions: Sequence[QueryAssertion]) -> list[str]:
    """The metrics the rules and assertions need, in the order they are first named."""
    return list(dict.fromkeys([r.metric for r in rules] + [a.metric for a in assertions]))


# ---------------------------------------------------------------------------------------------- checking
def gate(run: Results, rules: Sequence[Rule], assertions: Sequence[QueryAssertion] = (), *,
         baseline: Results | None = None, settings: CompareSettings | None = None) -> GateReport:
    """Check ``rules`` and ``assertions`` on ``run`` (and against ``baseline`` for delta and significance rules).

    ``run`` and ``baseline`` are results of one evaluation (same metrics, same policies) that include every
    metric the rules and assertions name.
    """
    missing = [m for m in metrics_of(rules, assertions) if m not in run.metric_names]
    if missing:
        raise PolicyError(f"{', '.join(missing)} not evaluated; evaluate the run with every metric the gate needs")
    needing = [r.text for r in rules if r.needs_baseline]
    if needing and baseline is None:
        raise PolicyError(f"the rule {needing[0]!r} compares with a baseline; give one "
                          f"({option('baseline', ..., cli='--baseline-run FILE')})")
    comparison = None
    if baseline is not None:
        if baseline.run_name == run.run_name:
            from dataclasses import replace

            baseline = replace(baseline, run_name=f"{baseline.run_name} (baseline)")
        comparison = compare_results([baseline, run], baseline=baseline.run_name, settings=settings)
    checks = [_check_rule(r, run, comparison) for r in rules]
    checks += [_check_assertion(a, run) for a in assertions]
    results = (run,) if baseline is None else (run, baseline)
    return GateReport(run=run.run_name, baseline=None if baseline is None else baseline.run_name,
                      checks=tuple(checks), comparison=comparison, results=results)


def _check_rule(rule: Rule, run: Results, comparison: Comparison | None) -> Check:
    if rule.kind == "value":
        value = run[rule.metric]
        counted = int((~_nan(run, rule.metric)).sum())
        if math.isnan(value):  # nothing to compare: a gate must not pass on it
            return Check("rule", rule.text, False, f"{rule.metric} is undefined (no query has a value)", value)
        fired = OPS[rule.op or "<"](value, rule.threshold or 0.0)
        return Check("rule", rule.text, not fired, f"{rule.metric} = {_num(value)} over {counted} queries", value)
    assert comparison is not None  # checked by gate()
    row = comparison.row(rule.metric, run.run_name)
    base = (f"{row.paired} paired queries; run {_num(row.paired_mean)}, baseline {_num(row.baseline_mean)} over "
            "them")
    if rule.kind == "significant_loss":
        test = comparison.settings.significance
        if not row.p_value:  # fewer than 2 paired queries: untestable, which must not pass silently
            return Check("rule", rule.text, False, f"cannot be tested: {base}")
        p = row.p_corrected.get(test)
        fired = bool(row.significant) and (row.delta or 0.0) < 0
        shown_p = "-" if p is None or math.isnan(p) else ("<0.0001" if p < 1e-4 else f"{p:.4f}")
        return Check("rule", rule.text, not fired, f"delta = {_signed(row.delta)}, corrected p({test}) = "
                     f"{shown_p} (alpha {comparison.settings.alpha:g}); {base}", p)
    change = row.delta if rule.kind == "delta" else row.relative_delta
    if change is None or math.isnan(change):
        return Check("rule", rule.text, False, f"{rule.kind} is undefined ({base})", change)
    fired = OPS[rule.op or "<"](change, rule.threshold or 0.0)
    shown = _signed(change) if rule.kind == "delta" else f"{change * 100:+.2f}%"
    interval = (f" [{_signed(row.delta_ci_low)}, {_signed(row.delta_ci_high)}]" if rule.kind == "delta"
                and row.delta_ci_low is not None else "")
    return Check("rule", rule.text, not fired, f"{rule.kind} = {shown}{interval}; {base}", change)


def _check_assertion(a: QueryAssertion, run: Results) -> Check:
    per_query = run.per_query(a.metric)
    if a.query_id not in per_query:
        return Check("assertion", a.text, False, f"query {a.query_id} was not evaluated (not in the judgments, "
                     "or skipped by the missing-queries policy)", None, a.where)
    value = per_query[a.query_id]
    if math.isnan(value):
        return Check("assertion", a.text, False, f"{a.metric} is undefined for {a.query_id}", value, a.where)
    ok = OPS[a.op](value, a.threshold)
    return Check("assertion", a.text, ok, f"{a.query_id}: {a.metric} = {_num(value)}", value, a.where)


def _nan(run: Results, metric: str) -> Any:
    import numpy as np

    return np.isnan(run.values[:, run.metric_names.index(metric)])


def _num(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:.4f}"


def _signed(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{round(x, 12) + 0.0:+.4f}"
