"""Convention profiles and the one name lookup: what each profile sets, how explicit options and parameters
override it (and say so), and every lookup in results going through resolve_metrics."""

from __future__ import annotations

import json
import math

import pytest

import gainscope
from gainscope import Judgments, Run, evaluate
from gainscope.core.policies import Policies
from gainscope.errors import MetricError, PolicyError
from gainscope.metrics.profiles import PROFILES, RELEVANCE_LEVEL, get_profile, profiled_policies
from gainscope.metrics.registry import lookup
from gainscope.metrics.resolve import resolve_metrics, resolve_metrics_noting

# q1: grades a 2, b 0, c 1.5; run [a, b, c]. q2: x 1; run [x]
QRELS = Judgments.from_dict({"q1": {"a": 2, "b": 0, "c": 1.5}, "q2": {"x": 1}})
RUN = Run.from_dict({"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 1.0}})


# ---------------------------------------------------------------------------------------------- declarations
@pytest.mark.parametrize("name", list(PROFILES))
def test_every_profile_is_valid(name):
    profile = PROFILES[name]
    assert profile.name == name and profile.description
    Policies(**profile.policies)  # every policy value is valid
    for metric, params in profile.parameters.items():
        cls = lookup(metric)
        declared = {f.name for f in cls.params()}
        assert set(params) <= declared, f"{name}: {metric} has no {set(params) - declared}"
        cls(**{k: (1 if v is RELEVANCE_LEVEL else v) for k, v in params.items()},
            **({"cutoff": 10} if any(f.metadata.get("required") for f in cls.params()) else {}))
    for alias, (target, fixed) in profile.names.items():
        lookup(target)(**fixed, **({"cutoff": 10} if lookup(target).at_param() == "cutoff" else {}))
        assert alias.isidentifier()
    json.dumps(profile.as_dict())


def test_the_trec_eval_profile_changes_nothing():
    plain = evaluate(QRELS, RUN, ["nDCG@10", "P@5", "AP"])
    profiled = evaluate(QRELS, RUN, ["nDCG@10", "P@5", "AP"], profile="trec_eval")
    assert profiled.metric_names == plain.metric_names and profiled.policies == plain.policies
    assert profiled.values.tolist() == plain.values.tolist()
    assert profiled.profile is not None and profiled.profile.name == "trec_eval" and plain.profile is None


def test_the_quepid_profile_scores_a_query_without_results_as_an_empty_list():
    # Quepid runs its scorer on a zero-result query. q2 has a relevant rating: AP = 0 / 1 = 0; q3 only a 0
    # rating: AP = 0 / 0, undefined (NaN in Quepid), where trec_eval's -c would give 0; avgRating100 null on both
    qrels = Judgments.from_dict({"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 0}})
    with pytest.warns(gainscope.errors.QueryCoverageWarning, match="scored as empty rankings"):
        res = evaluate(qrels, Run.from_dict({"q1": ["a"]}), ["AP@10", "avgRating100@10"], profile="quepid",
                       max_grade=3, undefined="skip")
    assert res.policies.missing_queries == "empty"
    assert res.values[:, 0].tolist()[:2] == [1.0, 0.0] and math.isnan(res.values[2, 0])
    assert res.undefined[:, 1].tolist() == [False, True, True]


def test_unknown_profile_is_a_policy_error_with_a_suggestion():
    with pytest.raises(PolicyError) as err:
        get_profile("qeupid")
    assert str(err.value) == ("unknown profile 'qeupid'; the profiles are: trec_eval, quepid, tempoeval, sklearn, "
                              "ranx, es_rank_eval. Did you mean 'quepid'?")


# ---------------------------------------------------------------------------------------------- resolution
@pytest.mark.parametrize(("profile", "name", "canonical"), [
    ("quepid", "nDCG@10", "nDCG(gain=exponential, ideal_depth=all)@10"),
    ("quepid", "NDCG_CUT@10", "nDCG(gain=exponential)@10"),
    ("quepid", "DCG@10", "DCG(gain=exponential)@10"),
    ("quepid", "P@10", "P(denominator=retrieved)@10"),
    ("quepid", "CG@10", "CG@10"),
    ("quepid", "default@10", "QuepidV1@10"),
    ("quepid", "v1@10", "QuepidV1@10"),
    ("quepid", "AP@10", "AP@10"),   # relevant = rating > 0 and R from truncated grades come from policies
    ("es_rank_eval", "nDCG@10", "nDCG(gain=exponential, ideal_depth=retrieved)@10"),
    ("es_rank_eval", "P@10", "P(denominator=retrieved)@10"),
    ("sklearn", "nDCG@5", "nDCG(ideal=retrieved)@5"),
    ("tempoeval", "nDCG@5", "nDCG(gain=exponential)@5"),
    ("tempoeval", "AP@5", "AP(denominator=retrieved)@5"),
    ("ranx", "nDCG@5", "nDCG(rel=1)@5"),          # the relevance level (1 by default) applies to nDCG
    ("trec_eval", "nDCG@10", "nDCG@10"),
    # trec_eval names keep trec_eval's definitions under any profile
    ("quepid", "ndcg_cut.10", "nDCG@10"),
    ("quepid", "P.5", "P@5"),
])
def test_profiles_fill_the_parameters_a_name_does_not_give(profile, name, canonical):
    assert [str(m) for m in resolve_metrics(name, profile=profile)] == [canonical]


def test_ranx_profile_follows_the_relevance_level():
    assert [str(m) for m in resolve_metrics("nDCG@5", profile="ranx", policies=Policies(relevance_level=2))] \
        == ["nDCG(rel=2)@5"]


def test_a_parameter_written_in_the_name_overrides_the_profile_and_is_noted():
    found, notes = resolve_metrics_noting(["nDCG(gain=linear)@10", "nDCG(gain=exponential)@5"], profile="quepid")
    assert [str(m) for m in found] == ["nDCG(ideal_depth=all)@10", "nDCG(gain=exponential, ideal_depth=all)@5"]
    # writing the profile's own value is no override
    assert notes == ("nDCG(ideal_depth=all)@10: gain=linear (the quepid profile: exponential)",)


def test_profile_names_are_unknown_without_the_profile():
    with pytest.raises(MetricError, match="unknown metric 'NDCG_CUT'"):
        resolve_metrics("NDCG_CUT@10")


# ---------------------------------------------------------------------------------------------- policies
def test_profile_policies_and_explicit_overrides():
    policies, use = profiled_policies(get_profile("quepid"), {"ties": "trec_eval", "relevance_level": "positive"})
    assert policies.ties == "trec_eval" and policies.relevance_level == "positive"
    assert policies.judged_grades == "truncated"
    # only values that differ from the profile's are overrides
    assert use is not None and use.overridden == ("ties=trec_eval (the quepid profile: rank)",)


def test_a_policies_object_cannot_be_combined_with_a_profile():
    with pytest.raises(PolicyError, match=r"a Policies object overrides every policy of the 'quepid' profile: "
                                          r"give the policies to change as keywords instead"):
        evaluate(QRELS, RUN, ["nDCG@10"], profile="quepid", policies=Policies())


def test_evaluate_under_a_profile_echoes_it_with_the_results():
    res = evaluate(QRELS, RUN, ["nDCG@10", "NDCG_CUT@10", "P@5"], profile="quepid", ties="trec_eval")
    assert res.policies.ties == "trec_eval" and res.policies.relevance_level == "positive"
    conv = res.conventions()["profile"]
    assert conv["name"] == "quepid" and conv["policies"]["judged_grades"] == "truncated"
    assert conv["overridden"] == ["ties=trec_eval (the quepid profile: rank)"]
    assert json.loads(res.to_json())["profile"]["name"] == "quepid"
    # q1: ranked grades [2, 0, 1.5] (decimals kept), judged pool truncated [2, 1, 0]; gain 2^g - 1:
    # DCG = 3 + 0 + (2^1.5 - 1)/2 = 3.9142; IDCG (uncut) = 3 + 1/log2(3) = 3.6309 -> 1.0780 (above 1, as Quepid)
    dcg = 3 + (2 ** 1.5 - 1) / 2
    assert res.per_query("nDCG@10")["q1"] == pytest.approx(dcg / (3 + 1 / math.log2(3)))
    # P over the documents returned: q1 3 of 3 have grade > 0? a 2, b 0, c 1.5 -> 2/3; q2 1/1
    assert res.per_query("P@5") == {"q1": pytest.approx(2 / 3), "q2": 1.0}
    assert evaluate(QRELS, RUN, ["nDCG@10"]).conventions()["profile"] is None


# ---------------------------------------------------------------------------------------------- lookups
def test_results_lookups_go_through_resolve_metrics():
    # issue 14 item 3: evaluate(q, r, ["ndcg_cut.10", "map"])["map"] works
    res = gainscope.evaluate(QRELS, RUN, ["ndcg_cut.10", "map"])
    assert res.metric_names == ["nDCG@10", "AP"]
    assert res["map"] == res["AP"] == res["MAP"]
    assert res.per_query("ndcg_cut.10") == res.per_query("nDCG@10")
    assert res.select(["map", "ndcg_cut.10"]).metric_names == ["AP", "nDCG@10"]
    with pytest.raises(MetricError, match=r"'P.5,10' names 2 metrics \(P@5, P@10\); look one up at a time"):
        res["P.5,10"]
    with pytest.raises(MetricError, match=r"^'RR' is not among the evaluated metrics: nDCG@10, AP$"):
        res["RR"]


def test_results_lookups_resolve_under_the_profile_of_the_evaluation():
    res = evaluate(QRELS, RUN, ["nDCG@10", "NDCG_CUT@5"], profile="quepid")
    assert res["nDCG@10"] == res["nDCG(gain=exponential, ideal_depth=all)@10"]
    assert res.per_query("NDCG_CUT@5") == res.per_query("nDCG(gain=exponential)@5")
    assert res.select(["NDCG_CUT@5"]).metric_names == ["nDCG(gain=exponential)@5"]


def test_comparison_rows_resolve_under_the_profile():
    other = Run.from_dict({"q1": {"c": 3.0, "b": 2.0, "a": 1.0}, "q2": {"x": 1.0}}, name="other")
    c = gainscope.compare(QRELS, [RUN, other], ["nDCG@10", "map"], profile="quepid")
    assert c.row("nDCG@10", "other").metric == "nDCG(gain=exponential, ideal_depth=all)@10"
    assert c.row("map", "other").metric == "AP"
