"""The metric name grammar: parse/str round trips, aliases, syntax errors with their position, unknown names
with suggestions, and trec_eval spellings through ``resolve_metrics``."""

from __future__ import annotations

import re

import pytest

from gainscope.errors import InvalidParameterError, MetricSyntaxError, UnknownMetricError
from gainscope.evaluation import resolve_metrics
from gainscope.metrics import GainMap, lookup, parse_metric

NDCG, P, RR, AP, RBP = (lookup(n) for n in ("nDCG", "P", "RR", "AP", "RBP"))


# ---------------------------------------------------------------------------------------------- round trips
@pytest.mark.parametrize(("text", "metric"), [
    ("nDCG@10", NDCG(cutoff=10)),
    ("P(rel=2)@5", P(cutoff=5, rel=2)),
    ("RR@10", RR(cutoff=10)),
    ("RR", RR()),
    ("AP", AP()),
    ("nDCG(gain=exponential, ideal=retrieved)@3", NDCG(cutoff=3, gain="exponential", ideal="retrieved")),
    ("nDCG(gain={1: 3, 2: 9})", NDCG(gain={1: 3, 2: 9})),
    ("RBP(p=0.8)", RBP(p=0.8)),
    ("RBP(p=0.8, rel=2)", RBP(p=0.8, rel=2)),
    ("IPrec@0.5", lookup("IPrec")(recall=0.5)),
    ("11pt_avg(levels=(0.5,))", lookup("11pt_avg")(levels=(0.5,))),
    ("Rprec(mult=2)", lookup("Rprec")(mult=2)),
    ("utility(nonrel_ret=-2)", lookup("utility")(nonrel_ret=-2)),
    ("ERR(max_grade=4)@20", lookup("ERR")(cutoff=20, max_grade=4)),
])
def test_canonical_names_round_trip(text, metric):
    assert parse_metric(text) == metric
    assert str(metric) == text
    assert str(parse_metric(text)) == text


@pytest.mark.parametrize(("text", "canonical"), [
    # aliases print as the canonical name
    ("MAP", "AP"),
    ("MAP@10", "AP@10"),
    ("MRR", "RR"),
    ("MRR@10", "RR@10"),
    ("NDCG@10", "nDCG@10"),
    ("ndcg@10", "nDCG@10"),
    ("Precision@5", "P@5"),
    ("Recall@100", "R@100"),
    ("bpref", "Bpref"),
    ("Hit@3", "Success@3"),
    # defaults are left out, parameter order and spacing do not matter, the cutoff may be a parameter
    ("nDCG(gain=linear)@10", "nDCG@10"),
    ("nDCG(ideal=retrieved, gain=exponential)@3", "nDCG(gain=exponential, ideal=retrieved)@3"),
    (" P ( rel = 2 ) @ 5 ", "P(rel=2)@5"),
    ("P(cutoff=5)", "P@5"),
    ("P()@5", "P@5"),
    ("P(rel=2.0)@5", "P(rel=2)@5"),   # a whole float prints as an int
    ("RBP(p=0.9)", "RBP"),            # the default p
    # quoted strings, either quote
    ("nDCG(gain='exponential')@3", "nDCG(gain=exponential)@3"),
    ('nDCG(gain="exponential", ideal="retrieved")', "nDCG(gain=exponential, ideal=retrieved)"),
    # maps: keys sorted, ints kept
    ("nDCG(gain={2: 9, 1: 3})", "nDCG(gain={1: 3, 2: 9})"),
    ("nDCG(gain={1: 0.5})@5", "nDCG(gain={1: 0.5})@5"),
    ("ERR(max_grade=none)", "ERR"),
])
def test_equivalent_spellings(text, canonical):
    assert str(parse_metric(text)) == canonical
    assert parse_metric(text) == parse_metric(canonical)


def test_gain_map_value():
    m = parse_metric("nDCG(gain={1: 3, 2: 9})@10")
    assert m.gain == GainMap.of({1: 3, 2: 9})
    assert m.gain.as_dict() == {1: 3.0, 2: 9.0}
    assert m.cutoff == 10


# ---------------------------------------------------------------------------------------------- syntax errors
@pytest.mark.parametrize(("text", "position", "what"), [
    ("nDCG@", 5, "expected a value, got end of text"),
    ("P(rel=2@5", 7, "expected ')', got '@'"),
    ("@5", 0, "expected a metric name"),
    ("", 0, "expected a metric name"),
    ("P(=2)@5", 2, "expected a parameter name"),
    ("P(rel 2)@5", 6, "expected '=', got '2'"),
    ("nDCG@10 x", 8, "unexpected 'x'"),
    ("P(rel=2, rel=3)@5", 9, "parameter 'rel' given twice"),
    ("P(rel='2)@5", 6, "unterminated string"),
    ("nDCG(gain={1: 3, 2: 9", 21, "expected '}', got end of text"),
    ("nDCG(gain={1 3})", 13, "expected ':', got '3'"),
])
def test_syntax_errors_give_the_position(text, position, what):
    with pytest.raises(MetricSyntaxError) as err:
        parse_metric(text)
    assert err.value.position == position
    assert err.value.text == text
    assert str(err.value) == (f"cannot parse metric {text!r} at position {position}: {what}. "
                              "Expected form: Name(key=value, ...)@cutoff")


def test_non_string_is_a_syntax_error():
    with pytest.raises(MetricSyntaxError, match="must be a string"):
        parse_metric(10)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------- unknown names
@pytest.mark.parametrize(("text", "suggestion"), [
    ("NDGC@10", "'NDCG'"),
    ("nDGC@10", "'nDCG'"),
    ("Precison@5", "'Precision'"),
    ("map", "'MAP'"),       # only through parse_metric; resolve_metrics reads it as trec_eval's map
    ("bpreff", "'bpref'"),
])
def test_unknown_names_suggest_close_ones(text, suggestion):
    with pytest.raises(UnknownMetricError) as err:
        parse_metric(text)
    name = text.split("@")[0]
    assert str(err.value).startswith(f"unknown metric {name!r}. Did you mean ")
    assert suggestion in str(err.value)
    assert str(err.value).endswith("Run `gainscope metrics` to list every metric.")


@pytest.mark.parametrize(("text", "profile", "suggestion"), [
    ("cg@10", None, "'CG'"),                # differs only in case: that name alone (not difflib's 'ndcg')
    ("ap@10", None, "'AP'"),
    ("ndcg_cut@10", "quepid", "'NDCG_CUT'"),  # a profile's own names are suggested under it
    ("Default@10", "quepid", "'default'"),
])
def test_a_name_that_differs_only_in_case_gets_that_name(text, profile, suggestion):
    with pytest.raises(UnknownMetricError) as err:
        resolve_metrics(text, profile=profile)
    assert str(err.value) == (f"unknown metric {text.split('@')[0]!r}. Did you mean {suggestion}? Run `gainscope "
                              "metrics` to list every metric.")
@pytest.mark.parametrize(("text", "suggestion"), [
    ("NDCG10", "nDCG@10"),      # an alias with the cutoff glued on: the canonical name and @
    ("ndcg10", "nDCG@10"),
    ("nDCG_10", "nDCG@10"),
    ("P10", "P@10"),
    ("map10", "AP@10"),         # any letter case when one name matches (MAP)
    ("MRR10", "RR@10"),
    ("Recall100", "R@100"),
    ("ERR20", "ERR@20"),
])
def test_a_number_glued_to_a_name_suggests_the_at_form(text, suggestion):
    with pytest.raises(UnknownMetricError) as err:
        parse_metric(text)
    assert str(err.value) == (f"unknown metric {text!r}. Did you mean {suggestion!r}? Run `gainscope metrics` "
                              "to list every metric.")


def test_a_number_glued_to_a_name_without_an_integer_at_is_not_suggested_with_at():
    # IPrec's @ is a recall level in [0, 1], not a cutoff: the usual close matches
    with pytest.raises(UnknownMetricError) as err:
        parse_metric("IPrec5")
    assert "'IPrec@5'" not in str(err.value) and "'IPrec'" in str(err.value)


def test_unknown_name_without_suggestion():
    with pytest.raises(UnknownMetricError) as err:
        parse_metric("Zzyzx@3")
    assert str(err.value) == "unknown metric 'Zzyzx'. Run `gainscope metrics` to list every metric."


@pytest.mark.parametrize(("text", "message"), [
    ("P@0", "the 'cutoff' parameter of P must be an int >= 1; got 0."),
    ("P", "P needs a 'cutoff': write for example P@10."),
    ("AP@5.5", "the 'cutoff' parameter of AP must be an int >= 1 or None; got 5.5."),
    ("RR(cutoff=3)@4", "'cutoff' given twice in 'RR(cutoff=3)@4' (as a parameter and after @)."),
    ("AP(foo=1)", "AP has no parameter 'foo'; its parameters are: cutoff, rel, denominator."),
    ("NumQ@5", "NumQ takes no @ value; got 'NumQ@5'."),
    ("nDCG(ideal=best)", "the 'ideal' parameter of nDCG must be one of 'judged', 'retrieved'; got 'best'."),
    ("RBP(p=0)", "the 'p' parameter of RBP must be a number > 0 and <= 0.999999999999; got 0."),
])
def test_invalid_parameters(text, message):
    with pytest.raises(InvalidParameterError) as err:
        parse_metric(text)
    assert str(err.value) == message


# -------------------------------------------------------------------------------------------- trec_eval names
@pytest.mark.parametrize(("spec", "names"), [
    ("ndcg_cut.10", ["nDCG@10"]),
    ("P.5", ["P@5"]),
    ("P.5,10", ["P@5", "P@10"]),
    ("P.10,5", ["P@5", "P@10"]),          # trec_eval sorts cutoffs
    ("P.23.4", ["P@23"]),                 # atol: "23.4" -> 23
    ("map", ["AP"]),
    ("map_cut.5", ["AP@5"]),
    ("recip_rank", ["RR"]),
    ("recall.100", ["R@100"]),
    ("ndcg", ["nDCG"]),
    ("ndcg.1=3,2=9", ["nDCG(gain={1: 3, 2: 9})"]),
    ("Rprec", ["Rprec"]),
    ("Rprec_mult.2", ["Rprec(mult=2)"]),
    ("iprec_at_recall.0.5", ["IPrec@0.5"]),
    ("rbp.p=0.8", ["RBP(p=0.8)"]),
    ("set_F.0.5", ["SetF(beta=0.5)"]),
    ("utility.1,-2,0,0", ["utility(nonrel_ret=-2)"]),
    ("success.1", ["Success@1"]),
    ("unj.5", ["Unj@5"]),
    ("gm_map", ["GMAP"]),
    ("num_q", ["NumQ"]),
    ("relstring", []),                    # not a number: no metric
    ("runid", []),
    ("ndcg_cut", ["nDCG@5", "nDCG@10", "nDCG@15", "nDCG@20", "nDCG@30", "nDCG@100", "nDCG@200", "nDCG@500",
                  "nDCG@1000"]),
])
def test_trec_eval_spellings(spec, names):
    assert [str(m) for m in resolve_metrics(spec)] == names


@pytest.mark.parametrize(("key", "names"), [
    # trec_eval's printed names, which pytrec_eval uses as keys: FAMILY_PARAMETER is the spec FAMILY.PARAMETER
    ("P_5", ["P@5"]),
    ("ndcg_cut_10", ["nDCG@10"]),
    ("recall_100", ["R@100"]),
    ("map_cut_10", ["AP@10"]),                # the longest family that fits: map_cut, not map
    ("iprec_at_recall_0.10", ["IPrec@0.1"]),
    ("Rprec_mult_0.20", ["Rprec(mult=0.2)"]),
    ("success_1", ["Success@1"]),
    ("relative_P_5", ["RelP@5"]),
    ("set_F", ["SetF"]),                      # names without a parameter are trec_eval's own spelling
    ("ndcg_rel", ["ndcg_rel"]),
    ("11pt_avg", ["11pt_avg"]),
])
def test_pytrec_eval_keys(key, names):
    assert [str(m) for m in resolve_metrics(key)] == names


def test_pytrec_eval_keys_of_one_family_add_up():
    from gainscope.metrics.trec_eval import trec_items

    # resolve_metrics keeps the request order; trec_eval's output (trec_items) has one P line per cutoff
    assert [str(m) for m in resolve_metrics(["P_10", "P_5", "P_5", "ndcg_cut_10"])] == ["P@10", "P@5", "nDCG@10"]
    assert [it.out_name for it in trec_items(["P_10", "P_5", "P_5", "ndcg_cut_10"])] == ["P_5", "P_10", "ndcg_cut_10"]


def test_printed_names_need_a_family_with_parameters_and_a_numeric_parameter():
    with pytest.raises(UnknownMetricError, match=re.escape("unknown metric 'map_10'. Did you mean 'AP@10'")):
        resolve_metrics("map_10")          # map takes no parameter: not map.10
    with pytest.raises(UnknownMetricError, match="unknown metric 'P_x'"):
        resolve_metrics("P_x")


def test_no_registered_name_reads_as_a_printed_trec_eval_name():
    from gainscope.metrics import all_metric_classes
    from gainscope.metrics.trec_eval import ORDER, is_trec_name

    for cls in all_metric_classes():
        for name in (cls.name, *cls.aliases):
            assert not is_trec_name(name) or name.split(".")[0] in ORDER, name


def test_trec_eval_and_ir_measures_spellings_mix_and_deduplicate():
    assert [str(m) for m in resolve_metrics(["P.5", "P@5", "ndcg_cut.10", "nDCG@10", "MAP"])] == \
        ["P@5", "nDCG@10", "AP"]


def test_official_set():
    # trec_eval -m official: num_q, num_ret, num_rel, num_rel_ret, map, gm_map, Rprec, bpref, recip_rank (9)
    # + iprec_at_recall at 11 levels + P at 9 cutoffs = 29 metrics (runid is not a number)
    names = [str(m) for m in resolve_metrics("official")]
    assert len(names) == 29
    assert names[:9] == ["NumQ", "NumRet", "NumRel", "NumRelRet", "AP", "GMAP", "Rprec", "Bpref", "RR"]
    assert names[9:20] == [f"IPrec@{x}" for x in ("0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8",
                                                  "0.9", "1")]
    assert names[20:] == [f"P@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]


def test_all_trec_set():
    # 98 numeric items: 9 singles of official + 11 iprec + 9 P + 9 recall + 3 unj + rbp + rbp_resid + infAP +
    # gm_bpref + utility + 11pt_avg + ndcg (7) + 9 relative_P + 10 Rprec_mult + 3 success + 9 map_cut +
    # 9 ndcg_cut + ndcg_rel + Rndcg + binG + G (4) + 5 set measures + num_nonrel_judged_ret = 98.
    # Rprec_mult at 1.0 is Rprec itself, so 97 distinct metrics.
    from gainscope.metrics.trec_eval import trec_items

    items = trec_items(["all_trec"])
    assert len(items) == 100                       # + runid, relstring
    assert sum(it.metric is not None for it in items) == 98
    metrics = resolve_metrics("all_trec")
    assert len(metrics) == 97
    assert len({str(m) for m in metrics}) == 97
    assert {"Rprec", "nDCG", "RBPResid", "Unj@20", "IPrec@1", "AP@1000"} <= {str(m) for m in metrics}
    assert len(resolve_metrics(["official", "all_trec"])) == 97


@pytest.mark.parametrize(("spec", "error", "message"), [
    ("P.0", InvalidParameterError, "trec_eval measure 'P' needs positive cutoffs; got '0'"),
    ("ndcg_cut.5,5", InvalidParameterError, "trec_eval measure 'ndcg_cut' has duplicate cutoffs in '5,5'"),
    ("map.5", InvalidParameterError, "trec_eval measure 'map' takes no parameters; got '5'"),
    ("official.5", InvalidParameterError, "the trec_eval measure set 'official' takes no parameters"),
    ("utility.1,2", InvalidParameterError, "trec_eval utility needs 4 coefficients; got 2"),
])
def test_trec_eval_spelling_errors(spec, error, message):
    with pytest.raises(error) as err:
        resolve_metrics(spec)
    assert str(err.value) == message


def test_resolve_metrics_needs_something():
    from gainscope.errors import MetricError

    with pytest.raises(MetricError, match="no metric requested"):
        resolve_metrics([])


@pytest.mark.parametrize("given", [None, 5, 0.5])
def test_metrics_of_a_wrong_type_are_refused_by_name(given):
    """``evaluate(qrels, run, None)`` raised Python's "'NoneType' object is not iterable"."""
    import gainscope
    from gainscope.errors import MetricError

    run = gainscope.Run.from_dict({"q1": {"d1": 1.0}})
    with pytest.raises(MetricError) as err:
        gainscope.evaluate({"q1": {"d1": 1}}, run, given)
    assert str(err.value) == ("metrics must be a name, a Metric object or a list of them (metrics=['nDCG@10', "
                              f"'AP']); got {given!r}")
