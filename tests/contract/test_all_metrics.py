"""Contract every registered metric class must honour (parametrised over ``all_metric_classes()``):

* its canonical name round-trips: ``parse_metric(str(m)) == m``, with default and random parameters;
* it is frozen and hashable, and equal metrics hash equal;
* its docstring states a formula and a ``Reference`` line; every parameter is documented;
* invalid parameters raise ``InvalidParameterError`` with the one message template;
* its aliases resolve to it;
* ``compute`` and ``reference`` are implemented; ``explain``, when implemented, agrees with ``compute``.
"""

from __future__ import annotations

import dataclasses
import math
import re
import warnings
from dataclasses import MISSING

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gainscope.core.judged_run import build_judged_run
from gainscope.core.judgments import Judgments
from gainscope.core.policies import Policies
from gainscope.core.run import Run
from gainscope.errors import GainscopeWarning, InvalidParameterError, MetricError, PolicyError
from gainscope.evaluation import evaluate, ranked_query
from gainscope.explain import explain
from gainscope.metrics import Explanation, Metric, all_metric_classes, lookup, parse_metric
from gainscope.metrics.base import (
    GENERIC_COLUMNS,
    GainMap,
    RankedQuery,
    Step,
    explains_by_position,
    metric_formula,
    metric_reference,
)
from gainscope.metrics.context import Context
from gainscope.metrics.registry import register
from gainscope.testing import strategies as gst

CLASSES = all_metric_classes()
IDS = [c.name for c in CLASSES]
QUICK = settings(max_examples=30, derandomize=True, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: the one message template for a parameter outside its declaration
TEMPLATE = re.compile(
    r"^the '(?P<param>\w+)' parameter of (?P<metric>\S+) must be (?P<allowed>.+); got (?P<got>.+)\.$")


def default_instance(cls: type[Metric]) -> Metric:
    """The class with its defaults, and a small value for parameters that have none (cutoff, recall)."""
    kwargs = {}
    for f in cls.params():
        if f.metadata.get("required"):
            kwargs[f.name] = 0.5 if f.metadata.get("kind") == "float" else 3
    return cls(**kwargs)


def test_registry_is_not_empty_and_names_are_unique():
    names = [c.name for c in CLASSES]
    assert len(names) == len(set(names)) >= 30
    keys = names + [a for c in CLASSES for a in c.aliases]
    assert len(keys) == len(set(keys)), "an alias shadows another metric's name or alias"


# ---------------------------------------------------------------------------------------------- names
@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_default_name_round_trips(cls):
    m = default_instance(cls)
    text = str(m)
    assert text.startswith(cls.name)
    assert parse_metric(text) == m
    assert str(parse_metric(text)) == text


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
@QUICK
@given(data=st.data())
def test_random_parameters_round_trip(cls, data):
    m = data.draw(gst.metrics_of(cls))
    text = str(m)
    again = parse_metric(text)
    assert again == m, f"{text!r} parsed to {again!r}, not {m!r}"
    assert str(again) == text
    assert hash(again) == hash(m)
    # only non-default parameters are printed
    for f in cls.params():
        value = getattr(m, f.name)
        if value == f.default and not f.metadata.get("at"):
            assert not re.search(rf"[(,] ?{f.name}=", text), f"{text!r} prints the default of {f.name!r}"


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_frozen_and_hashable(cls):
    m = default_instance(cls)
    twin = default_instance(cls)
    assert m == twin and hash(m) == hash(twin)
    assert len({m, twin}) == 1
    for f in cls.params():
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(m, f.name, getattr(m, f.name))
    assert dataclasses.is_dataclass(m) and type(m).__dataclass_params__.frozen


# ---------------------------------------------------------------------------------------------- docs
def _has_formula(doc: str) -> bool:
    """A ``Formula`` paragraph, or an inline literal that is an equation or an arithmetic expression."""
    if "Formula" in doc:
        return True
    spans = re.findall(r"``([^`]+)``", doc)
    return any(re.search(r"[=/*^+]|\b(sum|min|max|log2?|exp|mean)\(", s) for s in spans)


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_docstring_has_formula_and_reference(cls):
    doc = cls.__doc__ or ""
    assert _has_formula(doc), f"{cls.name}: no formula in the docstring"
    assert re.search(r"^\s*Reference", doc, re.M) or "Reference:" in doc, f"{cls.name}: no Reference line"


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_formula_and_reference_are_found_for_the_catalogue(cls):
    # `gainscope metrics` lists every metric with the formula and reference read from its docstring
    assert metric_formula(cls), f"{cls.name}: no formula found in the docstring"
    assert metric_reference(cls), f"{cls.name}: no 'Reference:' found in the docstring"
    assert "Reference" not in metric_formula(cls)


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_every_parameter_and_class_is_documented(cls):
    assert cls.summary, f"{cls.name} has no summary"
    assert cls.bounds[0] is None or cls.bounds[1] is None or cls.bounds[0] < cls.bounds[1]
    assert cls.aggregate in ("mean", "sum", "gmean")
    for f in cls.params():
        assert f.metadata.get("doc"), f"{cls.name}.{f.name} has no doc"
        assert f.metadata.get("kind") in ("int", "float", "choice", "gain", "floats", "level", "any")
    assert sum(bool(f.metadata.get("at")) for f in cls.params()) <= 1


# ---------------------------------------------------------------------------------------------- parameters
def test_invalid_parameter_message_template_exact():
    with pytest.raises(InvalidParameterError) as err:
        parse_metric("P@0")
    assert str(err.value) == "the 'cutoff' parameter of P must be an int >= 1; got 0."
    with pytest.raises(InvalidParameterError) as err:
        lookup("AP")(cutoff=0)
    assert str(err.value) == "the 'cutoff' parameter of AP must be an int >= 1 or None; got 0."
    with pytest.raises(InvalidParameterError) as err:
        lookup("nDCG")(gain="quadratic")
    assert str(err.value) == ("the 'gain' parameter of nDCG must be one of 'linear', 'exponential' or a "
                              "{grade: gain} map; got 'quadratic'.")
    with pytest.raises(InvalidParameterError) as err:
        lookup("RBP")(p=1.0)
    assert str(err.value).startswith("the 'p' parameter of RBP must be a number > 0 and <= ")
    with pytest.raises(InvalidParameterError) as err:
        lookup("P")()
    assert str(err.value) == "P needs a 'cutoff': write for example P@10."
    # InvalidParameterError is both a MetricError (ValueError) and a TypeError
    assert issubclass(InvalidParameterError, MetricError) and issubclass(InvalidParameterError, TypeError)


def _invalid_values(meta) -> list:
    kind = meta["kind"]
    bad: list = ["not-a-value", True]
    if kind == "int":
        bad += [2.5, "3"]
        if meta["ge"] is not None:
            bad.append(int(meta["ge"]) - 1)
        if meta["le"] is not None:
            bad.append(int(meta["le"]) + 1)
    elif kind == "float":
        bad += [math.nan, math.inf, "0.5"]
        if meta["ge"] is not None:
            bad.append(meta["ge"] - 0.5)
        if meta["gt"] is not None:
            bad.append(meta["gt"])
        if meta["le"] is not None:
            bad.append(meta["le"] + 0.5)
    elif kind == "floats":
        bad = [(), "0.5", (math.nan,)] + ([(meta["le"] + 1,)] if meta["le"] is not None else [])
    elif kind == "level":
        bad = ["Positive", "not-a-level", math.nan, math.inf, -0.5, "1"]
    elif kind == "choice":
        bad = ["not-a-choice", 3]
    elif kind == "gain":
        bad = ["not-a-gain", 3]
    return bad


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_invalid_parameters_raise_with_the_template(cls):
    base = {f.name: getattr(default_instance(cls), f.name) for f in cls.params()}
    checked = 0
    for f in cls.params():
        for value in _invalid_values(f.metadata):
            with pytest.raises(InvalidParameterError) as err:
                cls(**{**base, f.name: value})
            match = TEMPLATE.match(str(err.value))
            assert match, f"{cls.name}({f.name}={value!r}): {str(err.value)!r} does not follow the template"
            assert match["param"] == f.name and match["metric"] == cls.name
            assert match["got"] == repr(value)
            checked += 1
    assert checked >= len(cls.params())  # at least one invalid value per parameter


@pytest.mark.parametrize("cls", [c for c in CLASSES if c.params()], ids=lambda c: c.name)
def test_unknown_parameter_names_the_known_ones(cls):
    with pytest.raises(InvalidParameterError) as err:
        parse_metric(f"{cls.name}(bogus=1)")
    known = ", ".join(f.name for f in cls.params())
    assert str(err.value) == f"{cls.name} has no parameter 'bogus'; its parameters are: {known}."


def test_gain_maps_are_normalised_and_validated():
    m = lookup("nDCG")(gain={2: 9, 1: 3})
    assert isinstance(m.gain, GainMap) and m.gain.items == ((1, 3.0), (2, 9.0))
    assert m == parse_metric("nDCG(gain={1: 3, 2: 9})")
    with pytest.raises(InvalidParameterError, match="numeric grades"):
        lookup("nDCG")(gain={"a": 1})
    with pytest.raises(InvalidParameterError, match="finite"):
        lookup("nDCG")(gain={1: math.inf})


# ---------------------------------------------------------------------------------------------- aliases
def _alias_params():
    out = []
    for cls in CLASSES:
        for alias in cls.aliases:
            marks = []
            if not re.fullmatch(r"\w+", alias):
                marks.append(pytest.mark.xfail(strict=True, raises=MetricError, reason=(
                    f"BUG: alias {alias!r} of {cls.name} is registered but the name grammar only reads "
                    "letters, digits and '_', so parse_metric cannot resolve it")))
            out.append(pytest.param(cls, alias, id=f"{cls.name}-{alias}", marks=marks))
    return out


@pytest.mark.parametrize(("cls", "alias"), [p for p in _alias_params()])
def test_aliases_resolve(cls, alias):
    assert lookup(alias) is cls
    m = default_instance(cls)
    at = cls.at_param()
    suffix = "" if at is None or getattr(m, at) is None else "@" + str(m).rsplit("@", 1)[1]
    assert parse_metric(alias + suffix) == m
    assert str(parse_metric(alias + suffix)) == str(m), "aliases print as the canonical name"


def test_registering_a_taken_name_is_an_error():
    from gainscope.errors import GainscopeError

    @dataclasses.dataclass(frozen=True)
    class Impostor(Metric):
        name = "nDCG"

    with pytest.raises(GainscopeError, match="already registered"):
        register(Impostor)
    assert lookup("nDCG") is not Impostor


# ---------------------------------------------------------------------------------------- reference / explain
_SMALL = Judgments.from_dict({"q1": {"a": 2, "b": 0, "c": 1, "d": -1}, "q2": {"x": 1}, "q3": {"y": 0}})
_SMALL_RUN = Run.from_dict({"q1": ["b", "a", "u", "d", "c"], "q2": ["z", "x"], "q3": ["y"]})


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_compute_and_reference_are_implemented(cls):
    m = default_instance(cls)
    jr = build_judged_run(_SMALL, _SMALL_RUN)
    fast = np.asarray(m.compute(Context(jr)), dtype=float)
    assert fast.shape == (3,)
    ref = [m.reference(ranked_query(jr, i), jr.policies) for i in range(3)]
    assert all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in ref), ref
    np.testing.assert_allclose(fast, ref, rtol=1e-12, atol=1e-12)
    # and on a query with nothing retrieved
    empty = RankedQuery(query_id="e", grades=(), judged=(1.0,))
    value = m.reference(empty, Policies())
    assert isinstance(value, (int, float)) and not isinstance(value, bool)


def _explain_classes():
    out = []
    jr = build_judged_run(_SMALL, _SMALL_RUN)
    for cls in CLASSES:
        if default_instance(cls).explain(ranked_query(jr, 0), jr.policies) is not None:
            out.append(cls)
    return out


EXPLAINED = _explain_classes()


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_every_metric_explains_itself_with_the_evaluated_value(cls):
    # explain works for every registered metric: position by position, or the value and its inputs
    m = default_instance(cls)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GainscopeWarning)
        res = evaluate(_SMALL, _SMALL_RUN, [m])
        for i, q in enumerate(res.query_ids):
            e = explain(_SMALL, _SMALL_RUN, q, m)
            assert isinstance(e, Explanation) and e.metric == str(m) and e.query_id == q
            assert e.value == pytest.approx(res.values[i, 0], rel=1e-12, abs=1e-12) or \
                (math.isnan(e.value) and res.undefined[i, 0]), (str(m), q)
            assert (e.columns != GENERIC_COLUMNS) == explains_by_position(cls)


def test_the_main_metrics_explain_themselves():
    main = {"nDCG", "DCG", "AP", "RR", "P", "R", "ERR", "RBP", "Bpref", "Rprec"}
    assert main <= {c.name for c in EXPLAINED}


def _check_explanations(metric, jr):
    try:
        fast = np.asarray(metric.compute(Context(jr)), dtype=float)
    except InvalidParameterError:
        return
    for i in range(jr.num_queries):
        e = metric.explain(ranked_query(jr, i), jr.policies)
        assert isinstance(e, Explanation)
        assert e.metric == str(metric) and e.query_id == jr.query_ids[i]
        assert all(isinstance(s, Step) for s in e.run + e.ideal)
        ranks = [s.rank for s in e.run]
        assert ranks == sorted(set(ranks)) and all(r >= 1 for r in ranks)
        if not math.isnan(fast[i]):
            assert e.value == pytest.approx(fast[i], rel=1e-12, abs=1e-12), (str(metric), jr.query_ids[i])


@pytest.mark.parametrize("cls", EXPLAINED, ids=lambda c: c.name)
@settings(QUICK, max_examples=25)
@given(data=st.data())
def test_explain_value_equals_compute(cls, data):
    metric = data.draw(gst.metrics_of(cls))
    judgments, run = data.draw(gst.judgments_and_runs())
    policies = data.draw(gst.policies(ties=st.sampled_from(("trec_eval", "rank"))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GainscopeWarning)
        jr = build_judged_run(judgments, run, policies)
    _check_explanations(metric, jr)


@pytest.mark.parametrize("cls", [c for c in EXPLAINED if c.linear_in_gains], ids=lambda c: c.name)
@settings(QUICK, max_examples=25)
@given(data=st.data())
def test_explain_value_equals_compute_with_average_ties(cls, data):
    metric = data.draw(gst.metrics_of(cls))
    judgments, run = data.draw(gst.judgments_and_runs(scored=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GainscopeWarning)
        jr = build_judged_run(judgments, run, data.draw(gst.policies(ties="average")))
    _check_explanations(metric, jr)


@pytest.mark.parametrize("metric", ["P@1", "R@1", "Rprec", "RBP"])
def test_explain_average_ties(metric):
    # a (grade 1) and u (unjudged) tie at the top, b (grade 0) follows; ties='average' gives both tied
    # positions the mean relevance 1/2: P@1 = R@1 = Rprec = 0.5;
    # RBP (p = 0.9, grades / max 1): (1 - 0.9) * (0.5 + 0.5 * 0.9) = 0.095
    # (Regression: explain() of these four used to ignore the tie and report 0.0.)
    m = parse_metric(metric)
    jr = build_judged_run(Judgments.from_dict({"q": {"a": 1, "b": 0}}),
                          Run.from_dict({"q": {"u": 1.0, "a": 1.0, "b": 0.5}}), Policies(ties="average"))
    expected = 0.095 if metric == "RBP" else 0.5
    assert float(m.compute(Context(jr))[0]) == pytest.approx(expected)
    assert m.explain(ranked_query(jr, 0), jr.policies).value == pytest.approx(expected)


def test_explanation_of_ndcg_shows_the_arithmetic():
    # ranked grades [2, 0, 1] (a, b, c) with judged positive grades {2, 1, 1} (d: 1 is not retrieved):
    # DCG = 2/log2(2) + 0 + 1/log2(4) = 2.5; IDCG = 2 + 1/log2(3) + 1/log2(4) = 3.1309; nDCG = 0.7985
    j = Judgments.from_dict({"q": {"a": 2, "b": 0, "c": 1, "d": 1}})
    jr = build_judged_run(j, Run.from_dict({"q": ["a", "b", "c"]}))
    e = parse_metric("nDCG").explain(ranked_query(jr, 0), jr.policies)
    assert [s.doc_id for s in e.run] == ["a", "b", "c"]
    assert [s.contribution for s in e.run] == pytest.approx([2.0, 0.0, 0.5])
    assert e.numerator == pytest.approx(2.5)
    assert e.denominator == pytest.approx(2 + 1 / math.log2(3) + 0.5)
    assert e.value == pytest.approx(0.7985, abs=5e-5)
    assert [s.gain for s in e.ideal] == [2.0, 1.0, 1.0]


def test_policy_error_for_nonlinear_metric_names_the_metric():
    with pytest.raises(PolicyError, match=r"^RR@10 does not support ties='average'"):
        parse_metric("RR@10").check_policies(Policies(ties="average"))


def test_defaults_are_declared_values():
    # every default is a valid value of its own declaration (the class builds with its defaults)
    for cls in CLASSES:
        for f in cls.params():
            assert f.default is not MISSING, f"{cls.name}.{f.name} has no default"
