"""The registry imports a metric family when one of its names is first looked up (issue 13 item 28): the static
tables that make that possible (families.NAMES, trec_eval.MEASURES) must say what the modules register and build,
and the order in which metrics are listed must not depend on which was looked up first."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gainscope.errors import UnknownMetricError
from gainscope.metrics import all_metric_classes, lookup
from gainscope.metrics.families import HOMES, MODULES, NAMES
from gainscope.metrics.trec_eval import MEASURES, NICKNAMES, ORDER, trec_items, trec_name_of


def _fresh(code: str) -> object:
    """What ``code`` prints as JSON on its last line, run in a fresh interpreter (nothing imported before)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_names_table_is_what_the_families_register_in_listing_order() -> None:
    registered: dict[str, list[str]] = {}
    for cls in all_metric_classes():
        if cls.__module__.startswith("gainscope.metrics.families."):
            registered.setdefault(cls.__module__.rsplit(".", 1)[1], []).extend([cls.name, *cls.aliases])
    assert {family: list(names) for family, names in NAMES.items()} == registered
    assert list(registered) == list(NAMES)  # the families in the order the listing gives them
    assert MODULES == tuple(f"gainscope.metrics.families.{family}" for family in NAMES)
    assert len(HOMES) == sum(len(names) for names in NAMES.values())  # no name in two families


def test_a_name_imports_its_family_alone_and_an_unknown_name_imports_them_all() -> None:
    code = ("import json, sys\nfrom gainscope.metrics import lookup, parse_metric\n"
            "def loaded():\n    return sorted(m.rsplit('.', 1)[1] for m in sys.modules\n"
            "                  if m.startswith('gainscope.metrics.families.'))\n"
            "steps = [loaded()]\nlookup('ndcg')\nsteps.append(loaded())\nparse_metric('P@10')\nsteps.append(loaded())\n"
            "try:\n    lookup('NoSuchMetric')\nexcept Exception:\n    pass\nsteps.append(loaded())\n"
            "print(json.dumps(steps))")
    assert _fresh(code) == [[], ["graded"], ["graded", "precision"], sorted(NAMES)]


def test_the_listing_order_does_not_depend_on_what_was_looked_up_first() -> None:
    code = ("import json\nfrom gainscope.metrics import all_metric_classes, lookup\n"
            "for name in ('sDCG', 'SetP', 'avgRating', 'nDCG', 'IPrec'):\n    lookup(name)\n"
            "print(json.dumps([c.name for c in all_metric_classes()]))")
    listed = _fresh(code)
    assert listed == [c.name for c in all_metric_classes()]
    assert listed[:3] == ["AP", "GMAP", "RR"] and listed[-1] == "sDCG"  # families in NAMES order, each in its own


def test_a_name_of_no_family_is_still_unknown_with_suggestions() -> None:
    with pytest.raises(UnknownMetricError, match=r"unknown metric 'SetPP'\. Did you mean 'SetP'"):
        lookup("SetPP")
    with pytest.raises(UnknownMetricError, match=r"Did you mean 'nDCG@10'\?"):
        lookup("NDCG10")


def test_the_trec_measures_table_is_the_metric_each_measure_prints() -> None:
    assert set(MEASURES) == set(ORDER)
    for measure in ORDER:
        built = {type(item.metric).name for item in trec_items([measure]) if item.metric is not None}
        assert built == ({MEASURES[measure]} if MEASURES[measure] is not None else set()), measure


def test_trec_name_of_is_the_first_all_trec_item_of_the_metric() -> None:
    # the reference: every item of all_trec in trec_eval's order, the first printed name of each metric kept
    first: dict[str, str] = {}
    for item in trec_items(list(NICKNAMES["all_trec"])):
        if item.metric is not None:
            first.setdefault(str(item.metric), item.out_name)
    for item in trec_items(list(NICKNAMES["all_trec"])):
        if item.metric is not None:
            assert trec_name_of(item.metric) == first[str(item.metric)]
    assert trec_name_of(lookup("nDCG")(cutoff=10)) == "ndcg_cut_10"
    assert trec_name_of(lookup("AP")()) == "map" and trec_name_of(lookup("P")(cutoff=7)) == "P_7"
    assert trec_name_of(lookup("ERR")(cutoff=10)) is None


def test_trec_name_of_imports_only_the_family_of_its_metric() -> None:
    code = ("import json, sys\nfrom gainscope.metrics import parse_metric\n"
            "from gainscope.metrics.trec_eval import trec_name_of\n"
            "names = [trec_name_of(parse_metric(m)) for m in ('nDCG@10', 'AP', 'RR', 'P@10', 'R@100')]\n"
            "print(json.dumps([names, sorted(m.rsplit('.', 1)[1] for m in sys.modules\n"
            "                                if m.startswith('gainscope.metrics.families.'))]))")
    assert _fresh(code) == [["ndcg_cut_10", "map", "recip_rank", "P_10", "recall_100"],
                            ["average_precision", "graded", "precision"]]
