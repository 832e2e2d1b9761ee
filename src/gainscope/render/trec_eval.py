"""trec_eval's text output: ``measure<TAB>query<TAB>value``, the name left-justified to 22 characters,
values with 4 decimals (counts as integers), per-query blocks first (``-q``), then the summary under
``all``. Byte-for-byte what trec_eval 10 prints for the same measures and options, including what it prints
where its C code divides 0 by 0 (``-nan``) and its ``-c`` count of ``num_rel`` (see
:func:`gainscope.metrics.trec_eval.trec_eval_overrides`).

Several runs: trec_eval reads one run. With ``run=`` set, every line gets a fourth column naming its run
(``measure<TAB>query<TAB>value<TAB>run``), so that the first three columns stay trec_eval's and each line
still says where it comes from (``awk -F'\\t' '$4 == "bm25"'``). One run prints exactly trec_eval's three.
"""

from __future__ import annotations

import math
import warnings

from gainscope.errors import InputWarning
from gainscope.metrics.trec_eval import TrecItem, TrecOverrides
from gainscope.results import Results, aggregate_values

__all__ = ["render_trec_eval"]

#: what trec_eval's ``%6.4f`` prints for the NaN of 0.0/0.0 on x86-64 with glibc (the sign bit is set);
#: a trec_eval built for another processor may print ``   nan``
NAN = "  -nan"


def _value(item: TrecItem, v: float) -> str:
    if item.kind == "long":
        return str(round(v))
    return f"{v:6.4f}"


def render_trec_eval(items: list[TrecItem], results: Results, *, per_query: bool = False,
                     summary: bool = True, relstrings: dict[str, str] | None = None,
                     overrides: TrecOverrides | None = None, run: str | None = None) -> str:
    """Render results computed for ``items`` (metrics in the same order as the numeric items).

    ``overrides``: what trec_eval prints instead of gainscope's values; ``run``: a fourth column on every line
    (for several runs). A query named ``all`` printed per query is warned about: trec_eval's summary lines
    use that name.
    """
    columns: dict[int, int] = {}
    names = results.metric_names
    for idx, item in enumerate(items):
        if item.metric is not None:
            columns[idx] = names.index(str(item.metric))
    nan = overrides.nan if overrides is not None else {}
    fixed = overrides.summary if overrides is not None else {}
    tail = f"\t{run}" if run is not None else ""
    lines: list[str] = []
    if per_query:
        if "all" in results.query_ids:
            warnings.warn(InputWarning(
                f"run {results.run_name}: a query is named 'all', as trec_eval's summary lines are; its lines "
                "come before the summary but read the same"), stacklevel=2)
        for qi, qid in enumerate(results.query_ids):
            for idx, item in enumerate(items):
                if not item.per_query:
                    continue
                if item.metric is None:
                    if item.family == "relstring":
                        text = (relstrings or {}).get(qid, "")
                        lines.append(f"{item.out_name:<22}\t{qid}\t'{text}'{tail}")
                    continue
                if idx in nan and nan[idx][qi]:
                    lines.append(f"{item.out_name:<22}\t{qid}\t{NAN}{tail}")
                    continue
                v = results.values[qi, columns[idx]]
                if math.isnan(v):
                    continue
                lines.append(f"{item.out_name:<22}\t{qid}\t{_value(item, v)}{tail}")
    if summary:
        for idx, item in enumerate(items):
            if not item.summary:
                continue
            if item.metric is None:
                if item.family == "runid":
                    lines.append(f"{item.out_name:<22}\tall\t{results.run_name}{tail}")
                continue
            if idx in nan:  # the NaN of one query makes trec_eval's sum, and so its mean, NaN
                lines.append(f"{item.out_name:<22}\tall\t{NAN}{tail}")
                continue
            v = fixed[idx] if idx in fixed else aggregate_values(results.values[:, columns[idx]], item.metric.aggregate)
            lines.append(f"{item.out_name:<22}\tall\t{_value(item, 0.0 if math.isnan(v) else v)}{tail}")
    return "\n".join(lines) + ("\n" if lines else "")
