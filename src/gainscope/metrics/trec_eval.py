"""trec_eval's measure names, parameters, nicknames and output order, mapped onto gainscope metrics.

``-m P.5,10`` becomes ``P@5`` and ``P@10`` printed as ``P_5`` and ``P_10``; a printed name is also accepted as
a request for that one measure (``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``: pytrec_eval's result
keys); ``-m official`` and
``-m all_trec`` expand to trec_eval 10's sets; parameters follow trec_eval's parsing (cutoffs are sorted,
truncated to integers where trec_eval uses ``atol``, and must be positive and distinct). Output follows
trec_eval's own measure order, whatever the order of the request.

Two trec_eval items are not numbers: ``runid`` (the run's tag, summary only) and ``relstring`` (per query,
the grades of the first documents as characters: a digit per judged grade, ``>`` above 9, ``-`` not in the
judgments, ``.`` a negative grade).

Where trec_eval prints something other than the value it means, :func:`trec_eval_overrides` says what, so
that ``--format trec_eval`` prints it too while every other output keeps gainscope's value: ``-nan`` where
its C code divides 0 by 0 (``iprec_at_recall`` and ``11pt_avg`` of a query left with nothing retrieved
under ``-J``; ``Rndcg`` of a query with relevant documents but no positive gain), and under ``-c`` the
``num_rel`` summary, which counts the positive grades of the whole judgments whatever ``-l``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gainscope.core.judged_run import JudgedRun
from gainscope.errors import InvalidParameterError, MetricSyntaxError, UnknownMetricError
from gainscope.metrics.base import GainMap, Metric
from gainscope.metrics.gains import gain_array
from gainscope.metrics.registry import lookup

__all__ = ["NICKNAMES", "TrecItem", "TrecOverrides", "is_trec_name", "relstrings", "trec_eval_overrides",
           "trec_items", "trec_metrics", "trec_name_of"]

_ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_P_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class TrecItem:
    """One output line kind: trec_eval's printed name, the metric (None for runid/relstring), how it
    prints (``float``, ``long``, ``string``) and whether it appears per query and in the summary."""

    family: str
    out_name: str
    metric: Metric | None
    kind: str = "float"
    per_query: bool = True
    summary: bool = True
    param: float = 0.0  # relstring length


@dataclass(frozen=True)
class _Family:
    params: str  # none | long_cutoffs | double_cutoffs | double_params | pairs
    default: tuple[float, ...] | None
    build: Callable[[tuple, str | None, dict], list[TrecItem]]  # type: ignore[type-arg]


def _long_cutoffs(text: str, family: str) -> tuple[int, ...]:
    values = sorted(_atol(x) for x in text.split(","))
    if values[0] <= 0:
        raise InvalidParameterError(f"trec_eval measure {family!r} needs positive cutoffs; got {text!r}")
    if len(set(values)) != len(values):
        raise InvalidParameterError(f"trec_eval measure {family!r} has duplicate cutoffs in {text!r}")
    return tuple(values)


def _double_cutoffs(text: str, family: str) -> tuple[float, ...]:
    values = sorted(_atof(x) for x in text.split(","))
    if len(set(values)) != len(values):
        raise InvalidParameterError(f"trec_eval measure {family!r} has duplicate cutoffs in {text!r}")
    return tuple(values)


def _atol(text: str) -> int:
    """C ``atol``: leading integer digits, 0 when there are none (``"23.4"`` -> 23)."""
    s = text.strip()
    sign = 1
    if s[:1] in "+-" and s[:1]:
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    digits = ""
    for ch in s:
        if not ch.isdigit():
            break
        digits += ch
    return sign * int(digits) if digits else 0


def _atof(text: str) -> float:
    """C ``atof`` on the longest numeric prefix (``".25"`` -> 0.25)."""
    s = text.strip()
    for end in range(len(s), 0, -1):
        try:
            return float(s[:end])
        except ValueError:
            continue
    return 0.0


def _pairs(text: str, family: str) -> list[tuple[str, float]]:
    out = []
    for part in text.split(","):
        if "=" not in part:
            raise MetricSyntaxError(f"trec_eval measure {family!r} expects name=value pairs; got {text!r}",
                                    text=text, position=0)
        name, value = part.split("=", 1)
        out.append((name, _atof(value)))
    return out


def _gain_map(pairs: list[tuple[str, float]]) -> GainMap | None:
    mapping: dict[int, float] = {}
    for name, value in pairs:
        stripped = name[1:] if name[:1] in "+-" else name
        if stripped.isdigit():
            mapping[int(name)] = value
    return GainMap.of(mapping) if mapping else None


def _fmt2(x: float) -> str:
    return f"{x:3.2f}"


def _build_family(name: str) -> _Family:
    def make(**params: Any) -> Metric:  # the measure's metric (:data:`MEASURES`), its family imported if need be
        metric = MEASURES[name]
        assert metric is not None  # runid and relstring make none
        return lookup(metric)(**params)

    def plain(metric: Metric, kind: str = "float", per_query: bool = True, summary: bool = True) -> _Family:
        return _Family("none", None, lambda p, t, o: [TrecItem(name, name, metric, kind, per_query, summary)])

    def cut_long(at: Callable[[int], Metric], default: tuple[int, ...]) -> _Family:
        return _Family("long_cutoffs", default,
                       lambda p, t, o: [TrecItem(name, f"{name}_{k}", at(int(k))) for k in p])

    def cut_double(at: Callable[[float], Metric], default: tuple[float, ...]) -> _Family:
        return _Family("double_cutoffs", default,
                       lambda p, t, o: [TrecItem(name, f"{name}_{_fmt2(x)}", at(x)) for x in p])

    def gains() -> _Family:  # G, ndcg, ndcg_rel, Rndcg: grade=gain pairs
        return _Family("pairs", None, lambda p, t, o: [TrecItem(name, out_name(t), make(gain=_gain_or_linear(p)))])

    def out_name(text: str | None) -> str:
        return name if text is None else f"{name}_{text}"

    rounding = "nearest"
    table: dict[str, Callable[[], _Family]] = {
        "runid": lambda: _Family("none", None, lambda p, t, o: [TrecItem(name, name, None, "string", False, True)]),
        "num_q": lambda: plain(make(), "long", per_query=False),
        "num_ret": lambda: plain(make(), "long"),
        "num_rel": lambda: plain(make(), "long"),
        "num_rel_ret": lambda: plain(make(), "long"),
        "map": lambda: plain(make()),
        "gm_map": lambda: plain(make(), per_query=False),
        "Rprec": lambda: plain(make()),
        "bpref": lambda: plain(make()),
        "recip_rank": lambda: plain(make()),
        "iprec_at_recall": lambda: _Family(
            "double_cutoffs", _ELEVEN,
            lambda p, t, o: [TrecItem(name, f"{name}_{_fmt2(x)}", make(recall=x, rounding=o.get("rounding", rounding)))
                             for x in p]),
        "P": lambda: cut_long(lambda k: make(cutoff=k), _P_CUTS),
        "relstring": lambda: _Family(
            "double_params", (10.0,),
            lambda p, t, o: [TrecItem(name, out_name(t), None, "string", True, False, param=p[0])]),
        "recall": lambda: cut_long(lambda k: make(cutoff=k), _P_CUTS),
        "infAP": lambda: plain(make()),
        "gm_bpref": lambda: plain(make(), per_query=False),
        "Rprec_mult": lambda: cut_double(lambda x: make(mult=x),
                                         (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
        "utility": lambda: _Family(
            "double_params", (1.0, -1.0, 0.0, 0.0),
            lambda p, t, o: [TrecItem(name, out_name(t), _utility(make, p, o))]),
        "11pt_avg": lambda: _Family(
            "double_params", _ELEVEN,
            lambda p, t, o: [TrecItem(name, out_name(t), make(levels=tuple(p), rounding=o.get("rounding", rounding)))]),
        "binG": lambda: plain(make()),
        "G": gains,
        "ndcg": gains,
        "ndcg_rel": gains,
        "Rndcg": gains,
        "ndcg_cut": lambda: cut_long(lambda k: make(cutoff=k), _P_CUTS),
        "map_cut": lambda: cut_long(lambda k: make(cutoff=k), _P_CUTS),
        "relative_P": lambda: cut_long(lambda k: make(cutoff=k), _P_CUTS),
        "success": lambda: cut_long(lambda k: make(cutoff=k), (1, 5, 10)),
        "set_P": lambda: plain(make()),
        "set_relative_P": lambda: plain(make()),
        "set_recall": lambda: plain(make()),
        "set_map": lambda: plain(make()),
        "set_F": lambda: _Family("double_params", (1.0,),
                                 lambda p, t, o: [TrecItem(name, out_name(t), make(beta=p[0]))]),
        "num_nonrel_judged_ret": lambda: plain(make(), "long"),
        "rbp": lambda: _Family("pairs", None, lambda p, t, o: [TrecItem(name, out_name(t), make(p=_rbp_p(p, name)))]),
        "rbp_resid": lambda: _Family("pairs", None,
                                     lambda p, t, o: [TrecItem(name, out_name(t), make(p=_rbp_p(p, name)))]),
        "unj": lambda: cut_long(lambda k: make(cutoff=k), (5, 10, 20)),
    }
    return table[name]()


def _gain_or_linear(pairs: tuple) -> GainMap | str:  # type: ignore[type-arg]
    gm = _gain_map(list(pairs)) if pairs else None
    return gm if gm is not None else "linear"


def _rbp_p(pairs: tuple, family: str) -> float:  # type: ignore[type-arg]
    p = 0.9
    for name, value in pairs:
        if name == "p":
            p = value
        elif name.lstrip("+-").isdigit():
            raise InvalidParameterError(f"trec_eval {family} with custom gains is not supported by gainscope; "
                                        f"use RBP(rel=...) for binary gains")
    return p


def _utility(make: Callable[..., Metric], p: tuple, opts: dict) -> Metric:  # type: ignore[type-arg]
    if len(p) != 4:
        raise InvalidParameterError(f"trec_eval utility needs 4 coefficients; got {len(p)}")
    return make(rel_ret=p[0], nonrel_ret=p[1], rel_nonret=p[2], nonrel_nonret=p[3],
                   num_docs=int(opts.get("num_docs", 0)))


#: trec_eval 10's measures in its output order (``te_trec_measures`` in measures.c), those gainscope has.
ORDER: tuple[str, ...] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
    "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
    "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj",
)

#: the gainscope metric (its canonical name) whose values each trec_eval measure prints; None: not a number
MEASURES: dict[str, str | None] = {
    "runid": None, "num_q": "NumQ", "num_ret": "NumRet", "num_rel": "NumRel", "num_rel_ret": "NumRelRet",
    "map": "AP", "gm_map": "GMAP", "Rprec": "Rprec", "bpref": "Bpref", "recip_rank": "RR", "iprec_at_recall": "IPrec",
    "P": "P", "relstring": None, "recall": "R", "infAP": "infAP", "gm_bpref": "GMBpref", "Rprec_mult": "Rprec",
    "utility": "utility", "11pt_avg": "11pt_avg", "binG": "binG", "G": "G", "ndcg": "nDCG", "ndcg_rel": "ndcg_rel",
    "Rndcg": "Rndcg", "ndcg_cut": "nDCG", "map_cut": "AP", "relative_P": "RelP", "success": "Success",
    "set_P": "SetP", "set_relative_P": "SetRelP", "set_recall": "SetR", "set_map": "SetAP", "set_F": "SetF",
    "num_nonrel_judged_ret": "NumNonrelJudgedRet", "rbp": "RBP", "rbp_resid": "RBPResid", "unj": "Unj",
}

NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid",
                 "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
                 "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
                 "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
}


def _split(spec: str) -> tuple[str, str | None]:
    name, dot, rest = spec.partition(".")
    return name, (rest if dot else None)


def _as_spec(text: str) -> str | None:
    """``text`` as a trec_eval ``-m`` spec: itself when it is one (``map``, ``P.5,10``, ``all_trec``), a
    printed name of one measure turned back into its spec (``ndcg_cut_10`` -> ``ndcg_cut.10``,
    ``iprec_at_recall_0.10`` -> ``iprec_at_recall.0.10``; pytrec_eval keys its results so), else None.

    A printed name is ``FAMILY_PARAMETER`` for a family that takes parameters, read with the longest family
    that fits (``map_cut_10`` is map_cut's) and a parameter that starts with a digit or a point."""
    if "(" in text or "@" in text:
        return None
    name, _ = _split(text)
    if name in ORDER or name in NICKNAMES:
        return text
    for family in sorted(ORDER, key=len, reverse=True):
        rest = text[len(family) + 1:]
        if (text.startswith(family + "_") and rest[:1] in tuple("0123456789.")
                and _build_family(family).params != "none"):
            return f"{family}.{rest}"
    return None


def is_trec_name(text: str) -> bool:
    """True when ``text`` is a trec_eval measure spec (``map``, ``P.5,10``, ``all_trec``, ...) or a printed
    trec_eval name (``P_5``, ``ndcg_cut_10``: pytrec_eval's keys)."""
    return _as_spec(text) is not None


def trec_items(specs: Iterable[str], *, rounding: str = "nearest", num_docs: int = 0) -> list[TrecItem]:
    """Expand trec_eval ``-m`` specs into output items, in trec_eval's order.

    ``rounding`` is the recall-level rounding of ``iprec_at_recall`` and ``11pt_avg`` (``"legacy"`` for
    trec_eval 9 / pytrec_eval); ``num_docs`` is trec_eval's ``-N`` (for ``utility``). Printed names of one
    cutoff each add up (``P_5 P_10`` is ``P.5,10``); a later spec of the same measure replaces an earlier one.
    """
    chosen: dict[str, str | None] = {}
    for given in specs:
        spec = given.strip()
        as_spec = _as_spec(spec) or spec
        name, text = _split(as_spec)
        if name in NICKNAMES:
            if text is not None:
                raise InvalidParameterError(f"the trec_eval measure set {name!r} takes no parameters")
            for member in NICKNAMES[name]:
                chosen.setdefault(member, None)
        elif name in ORDER:
            before = chosen.get(name)
            if (as_spec != spec and before and text is not None
                    and _build_family(name).params in ("long_cutoffs", "double_cutoffs")):
                text = before if text in before.split(",") else f"{before},{text}"
            chosen[name] = text
        else:
            raise UnknownMetricError(f"unknown trec_eval measure {name!r}; trec_eval measures: "
                                     f"{', '.join(ORDER)}; sets: {', '.join(NICKNAMES)}")
    opts = {"rounding": rounding, "num_docs": num_docs}
    items: list[TrecItem] = []
    for name in ORDER:
        if name not in chosen:
            continue
        fam = _build_family(name)
        text = chosen[name]
        params: tuple = ()  # type: ignore[type-arg]
        if fam.params == "long_cutoffs":
            params = _long_cutoffs(text, name) if text else fam.default  # type: ignore[assignment]
            text = None
        elif fam.params == "double_cutoffs":
            params = _double_cutoffs(text, name) if text else fam.default  # type: ignore[assignment]
            text = None
        elif fam.params == "double_params":
            params = tuple(_atof(x) for x in text.split(",")) if text else fam.default  # type: ignore[assignment]
        elif fam.params == "pairs":
            params = tuple(_pairs(text, name)) if text else ()
        elif text:
            raise InvalidParameterError(f"trec_eval measure {name!r} takes no parameters; got {text!r}")
        items.extend(fam.build(params, text, opts))
    return items


def trec_metrics(specs: Iterable[str], **kwargs: object) -> list[tuple[str, Metric]]:
    """``(trec_eval output name, metric)`` for the numeric items of trec_eval specs."""
    return [(it.out_name, it.metric) for it in trec_items(specs, **kwargs) if it.metric is not None]  # type: ignore[arg-type]


#: metric name -> (canonical string -> trec_eval's printed name) of every ``all_trec`` item of that metric
_REVERSE: dict[str, dict[str, str]] = {}


def trec_name_of(metric: Metric) -> str | None:
    """trec_eval's printed name for a metric when trec_eval has it with default gains (``nDCG@10`` ->
    ``ndcg_cut_10``), else None. The first ``all_trec`` item that prints the metric, found among the measures
    of its class (:data:`MEASURES`: the other families are not imported)."""
    cls = type(metric).name
    if cls not in _REVERSE:
        reverse = _REVERSE[cls] = {}
        for it in trec_items([m for m in NICKNAMES["all_trec"] if MEASURES[m] == cls]):
            if it.metric is not None:
                reverse.setdefault(str(it.metric), it.out_name)
    key = str(metric)
    if key in _REVERSE[cls]:
        return _REVERSE[cls][key]
    cutoff = getattr(metric, "cutoff", None)
    simple = {"P": "P", "R": "recall", "nDCG": "ndcg_cut", "AP": "map_cut", "RelP": "relative_P",
              "Success": "success", "Unj": "unj"}
    if cutoff is not None and cls in simple and str(type(metric)(cutoff=cutoff)) == key:  # type: ignore[call-arg]
        return f"{simple[cls]}_{cutoff}"
    return None


def relstrings(jr: JudgedRun, length: float) -> dict[str, str]:
    """trec_eval's ``relstring`` per query: the grades of the first ``length`` ranked documents."""
    out: dict[str, str] = {}
    n = int(length)
    for i, q in enumerate(jr.query_ids):
        if jr.missing[i]:
            out[q] = ""
            continue
        chars = ["-"] * max(min(n, int(jr.num_ret[i])), 0)  # not in the judgments unless listed below
        s = jr.query_slice(i)
        for r, g in zip(jr.rank[s].tolist(), jr.grades[s].tolist(), strict=True):
            if r > len(chars) or np.isnan(g):
                continue
            chars[r - 1] = "." if g < 0 else ">" if g > 9 else str(math.floor(g))
        out[q] = "".join(chars)
    return out


@dataclass(frozen=True)
class TrecOverrides:
    """What trec_eval 10 prints instead of gainscope's values, by index into the items: ``nan[i]`` marks the
    queries whose line reads ``-nan``, ``summary[i]`` replaces the summary value."""

    nan: dict[int, np.ndarray]
    summary: dict[int, float]


def trec_eval_overrides(items: list[TrecItem], jr: JudgedRun, *, complete: bool) -> TrecOverrides:
    """Where trec_eval's output differs from the values it means, for ``items`` evaluated on ``jr``;
    ``complete`` is trec_eval's ``-c`` as given on the command line.

    * ``iprec_at_recall`` / ``11pt_avg``: trec_eval starts interpolating from ``num_rel_ret / num_ret``, 0/0
      for a query with nothing retrieved; only ``-J`` leaves a query so (a judged query without a ranking
      gets one unjudged placeholder document under ``-c``, which ``-J`` drops too). The NaN stays at the
      recall levels that need no relevant document, and makes the 11-point average NaN when one of its
      levels does.
    * ``Rndcg``: ``sum / num_changed_ideal_gain`` is 0/0 for a query with relevant documents (at ``-l``) but
      no positive gain.
    * ``num_rel`` under ``-c``: the summary counts every judgment with a grade above 0, in every judged
      query, whatever ``-l`` (``te_calc_avg_num_rel``); without ``-c`` it is the sum of the per-query values.
    """
    from gainscope.metrics.families.curves import ElevenPointAverage, IPrec, relevant_needed
    from gainscope.metrics.families.graded import Rndcg
    from gainscope.metrics.families.sets import NumRel

    nan: dict[int, np.ndarray] = {}
    summary: dict[int, float] = {}
    policies = jr.policies
    nq = jr.num_queries

    def num_rel(level: float) -> np.ndarray:
        return np.bincount(jr.judged_segment, weights=jr.judged_grades >= level, minlength=nq)

    empty = (jr.num_ret == 0) if policies.judged_only else np.zeros(nq, dtype=bool)
    for idx, item in enumerate(items):
        m = item.metric
        if isinstance(m, (IPrec, ElevenPointAverage)) and empty.any():
            levels = m.levels if isinstance(m, ElevenPointAverage) else (float(m.recall or 0.0),)
            r = num_rel(m.level(policies))
            no_need = np.zeros(nq, dtype=bool)
            for level in levels:
                no_need |= relevant_needed(level, r, m.rounding) == 0
            mask = empty & no_need
        elif isinstance(m, Rndcg):
            positive = np.bincount(jr.judged_segment, weights=gain_array(jr.judged_grades, m.gain) > 0,
                                   minlength=nq)
            mask = (num_rel(m.level(policies)) > 0) & (positive == 0)
        else:
            if isinstance(m, NumRel) and complete:
                summary[idx] = float(np.count_nonzero(jr.judged_grades > 0))
            continue
        if mask.any():
            nan[idx] = mask
    return TrecOverrides(nan, summary)
