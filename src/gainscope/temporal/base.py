"""What every temporal metric shares: the three modes, sync and async calls, scores that explain themselves,
judge failures that are reported, never scored 0 -- and the core metric that computes the value.

A metric is a frozen dataclass: its parameters are fields (``TemporalNDCG(gain="exponential")``), the mode is
chosen with ``use_focus_time=True`` or ``use_llm=True, llm=judge`` (gold ids otherwise), and the inputs are
keyword arguments of the call, as in seed 001::

    TemporalNDCG(use_focus_time=True).compute(qft={2020, 2021}, dfts=[{2020, 2021}, {2019}], k=2)
    TemporalNDCG().compute(retrieved_ids=["a", "b"], gold_ids={"a": 2}, k=5)
    await TemporalNDCG(use_llm=True, llm=judge).acompute(query="...", retrieved_docs=["...", "..."], k=5)

or, as the seed writes it, ``metric = TemporalNDCG(use_llm=True)`` then ``metric.llm = judge`` (``llm`` is the one
field that can be set after construction; every other is frozen). The judge must grade on the 0-4 temporal rubric:
a judge whose prompt has another scale is refused, and a grade outside 0-4 is a failed grade.

**The value is the core's.** Each temporal metric is a facade over a declared core metric (:meth:`core`:
``TemporalNDCG@k`` is ``nDCG@k``, ``TemporalPrecision@k`` is ``P(denominator=retrieved)@k``, the year measures
are ``SetP``/``SetR`` over a ranking of years, buckets or anchors): the call grades the query
(:mod:`gainscope.temporal.grades`), prepares what the core metric reads at cutoff ``k`` (:meth:`prepare`: the
first ``k`` documents retrieved -- as TempoEval reads ``retrieved[:k]`` -- and the judged pool) and the core's
kernel computes it (:mod:`gainscope.temporal.engine`). Relevance is the adapter's grading: in gold and LLM modes
a grade >= ``rel`` (default 1 and 2), in focus-time mode a Jaccard above ``min_jaccard`` (default 0: any shared
year), i.e. a grade above ``4 x min_jaccard`` -- the evaluation's relevance level ``positive`` for the default,
else the smallest double above ``4 x min_jaccard``, exactly the same comparison.

``compute``/``acompute`` return the value as a float; ``score``/``ascore`` return a :class:`TemporalScore` with
the grades it was computed from and, when the value is NaN, the reason. ``compute`` in LLM mode runs the judge
with :func:`asyncio.run` (call ``acompute`` from async code). Inputs that belong to another mode are an error, not
silently ignored; unknown keywords are a ``TypeError`` (TempoEval swallows them). A parameter outside its
declared values, ``k`` included, is the core's :class:`~gainscope.errors.InvalidParameterError`.

**Undefined values are NaN, with the reason** (nDCG with no positive grade to normalise by, recall with no
relevant document, a query without focus time); TempoEval returns 0.0 for all of them. The batch
(:mod:`gainscope.temporal.batch`) applies the ``undefined`` policy (0 with a warning, or left out of the mean),
as the other gainscope metrics do.

**A failed LLM grade** (the judge's answer never parsed, the request failed, the budget ran out) is never a
grade 0. With ``on_failure="raise"`` (default) the call raises :class:`TemporalGradeError` (a
:class:`~gainscope.errors.JudgeError`, exit code 4 on the command line) naming each document and the reason;
with ``on_failure="nan"`` the value is NaN and the score lists the failures.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from gainscope.core.policies import POSITIVE, Level, format_level, is_level, level_value
from gainscope.core.rankings import Ranking
from gainscope.errors import InputError, InvalidParameterError, PolicyError, TemporalGradeError
from gainscope.metrics.base import GainMap, Metric, format_value
from gainscope.temporal.engine import Prepared, evaluate_prepared
from gainscope.temporal.grades import FOCUS_TIME_SCALE, Graded, focus_time_grades, gold_grades, judge_grades

if TYPE_CHECKING:
    from gainscope.judges.labeling import Judge

__all__ = ["Mode", "Prepared", "TemporalGradeError", "TemporalMetric", "TemporalScore", "check_k", "invalid"]

Mode = Literal["gold", "focus_time", "llm"]

#: the relevance level of each mode when ``rel`` is not given (focus time: ``min_jaccard``'s, 0 by default)
MODE_LEVELS: dict[str, Level] = {"gold": 1, "llm": 2, "focus_time": POSITIVE}


@dataclass(frozen=True)
class TemporalScore:
    """One value and what it came from. ``grades``: the grades of the top ``k`` documents, in rank order (NaN =
    failed); ``reason``: why ``value`` is NaN (empty otherwise); ``failures``: ``(doc id, reason)`` of failed LLM
    grades."""

    metric: str
    k: int
    mode: Mode
    value: float
    grades: tuple[float, ...] = ()
    reason: str = ""
    failures: tuple[tuple[str, str], ...] = ()

    @property
    def undefined(self) -> bool:
        """True when the value is NaN (see ``reason``)."""
        return math.isnan(self.value)


def invalid(owner: str, name: str, allowed: str, value: object) -> InvalidParameterError:
    """The core's message for a parameter outside its declared values (:mod:`gainscope.metrics.base`)."""
    return InvalidParameterError(f"the {name!r} parameter of {owner} must be {allowed}; got {value!r}.")


def check_k(k: object, metric: str, name: str = "k") -> int:
    """``k`` (the cutoff): an int >= 1, else the core's InvalidParameterError."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise invalid(metric, name, "an int >= 1", k)
    return k


def _check_judge(metric: str, judge: object) -> None:
    """A judge: ``.grade`` to call, and grades on seed 001's 0-4 scale when its spec names a scale."""
    if judge is None:
        return
    if not callable(getattr(judge, "grade", None)):
        raise PolicyError(f"{metric}: llm must be a judge, an object with .spec and async .grade(query, document) "
                          f"such as gainscope.judges.labeling.LLMJudge; got {judge!r}")
    prompt = getattr(getattr(judge, "spec", None), "prompt", None)
    scale = getattr(prompt, "scale", None)
    if scale is not None and (getattr(scale, "low", 0), getattr(scale, "high", 4)) != (0, 4):
        raise PolicyError(f"{metric}: the judge grades on {scale} (prompt {getattr(prompt, 'name', '?')}); the "
                          "temporal metrics read grades on seed 001's 0-4 temporal rubric (the relevance threshold "
                          "rel, nDCG gains, 4 x Jaccard in focus-time mode): use a judge with the built-in "
                          "'temporal' prompt or another 0-4 prompt")


class _LLMSettable(type):
    """The metaclass of the metrics: every field stays frozen except ``llm``, which may be set after construction
    as in seed 001 (``metric = TemporalNDCG(use_llm=True); metric.llm = judge``) and is checked when set. It wraps
    the ``__setattr__`` that ``dataclass(frozen=True)`` gives each metric class."""

    def __setattr__(cls, name: str, value: Any) -> None:
        if name == "__setattr__" and not getattr(value, "_lets_llm", False):
            frozen = value

            def settable(self: Any, attr: str, new: Any) -> None:
                if attr == "llm":
                    _check_judge(type(self).__name__, new)
                    object.__setattr__(self, attr, new)
                else:
                    frozen(self, attr, new)

            settable._lets_llm = True  # type: ignore[attr-defined]
            value = settable
        super().__setattr__(name, value)


@dataclass(frozen=True)
class TemporalMetric(metaclass=_LLMSettable):
    """Base of the temporal metrics: mode flags, the judge, failure handling, and the core metric; subclasses add
    parameters and say what the core metric reads (:meth:`core`, :meth:`prepare`). ``rel``: minimum grade counted
    relevant in gold and LLM modes (None: 1 in gold mode, 2 in LLM mode; ``positive``: any grade > 0);
    ``min_jaccard``: in focus-time mode a document is relevant when its Jaccard with the query exceeds this (0:
    any shared year). ``llm``: the judge of LLM mode, given to the constructor or set afterwards (``metric.llm =
    judge``, the only field that can be set); a judge whose prompt grades on another scale than 0-4 is refused."""

    #: the modes a metric offers, and whether it needs the grades of the whole judged pool in LLM mode
    modes: ClassVar[tuple[Mode, ...]] = ("gold", "focus_time", "llm")
    needs_pool: ClassVar[bool] = False
    #: per mode, the required and the optional inputs (``k`` is always optional)
    INPUTS: ClassVar[Mapping[Mode, tuple[frozenset[str], frozenset[str]]]] = {
        "gold": (frozenset({"retrieved_ids", "gold_ids"}), frozenset()),
        "focus_time": (frozenset({"qft", "dfts"}), frozenset({"other_dfts"})),
        "llm": (frozenset({"query", "retrieved_docs"}), frozenset({"other_docs"})),
    }
    #: inputs the metric takes in every mode (``total_relevant``, ``scope``, ...)
    EXTRA_INPUTS: ClassVar[frozenset[str]] = frozenset()
    #: the fields that are the core metric's parameters, under the same names
    CORE_PARAMETERS: ClassVar[tuple[str, ...]] = ()

    use_focus_time: bool = False
    use_llm: bool = False
    llm: Judge | None = field(default=None, compare=False, repr=False)
    rel: float | str | None = None
    min_jaccard: float = 0.0
    on_failure: Literal["raise", "nan"] = "raise"

    def __post_init__(self) -> None:
        name = type(self).__name__
        if self.use_focus_time and self.use_llm:
            raise PolicyError(f"{name}: choose one mode, use_focus_time=True or use_llm=True, not both")
        if self.mode not in self.modes:
            offered = ", ".join({"gold": "gold ids (the default)", "focus_time": "use_focus_time=True",
                                 "llm": "use_llm=True"}[m] for m in self.modes)
            raise PolicyError(f"{name} has no {self.mode} mode; its modes: {offered}")
        _check_judge(name, self.llm)
        if self.on_failure not in ("raise", "nan"):
            raise invalid(name, "on_failure", "one of 'raise', 'nan'", self.on_failure)
        m = self.min_jaccard
        if isinstance(m, bool) or not isinstance(m, int | float) or not 0 <= m < 1:
            raise invalid(name, "min_jaccard", "a number >= 0 and < 1", m)
        if self.rel is not None and not is_level(self.rel):
            raise invalid(name, "rel", "a number >= 0 or 'positive' or None", self.rel)
        for key in self.CORE_PARAMETERS:
            value = getattr(self, key)
            if isinstance(value, Mapping):  # a gain map: hashable, as the core keeps it
                object.__setattr__(self, key, GainMap.of(value))
        self.core(1)  # the core metric checks its own parameters: the same mistake, the same error

    @property
    def mode(self) -> Mode:
        """``gold``, ``focus_time`` or ``llm``, from the flags."""
        return "focus_time" if self.use_focus_time else "llm" if self.use_llm else "gold"

    @property
    def relevance_grade(self) -> float:
        """The minimum grade counted relevant in gold and LLM modes, as a threshold (``grade >= t``)."""
        return level_value(self.rel if self.rel is not None else self.level())

    # ------------------------------------------------------------------ the core metric
    def core(self, k: int) -> Metric:
        """The declared core metric that computes this metric's value at cutoff ``k``."""
        raise NotImplementedError

    def level(self) -> Level:
        """The evaluation's relevance level in this mode (what the core metric uses when its own ``rel`` is
        None): 1 in gold mode, 2 in LLM mode, ``positive`` (grade > 0, i.e. any shared year) in focus-time mode."""
        return MODE_LEVELS[self.mode]

    def own_rel(self) -> Level | None:
        """The core metric's own ``rel``, where it differs from the mode's level: ``rel`` when given (gold, LLM), or
        in focus-time mode the smallest grade above ``4 x min_jaccard`` (Jaccard > ``min_jaccard``, exactly: the
        scaling by 4 is exact in binary floating point)."""
        if self.mode == "focus_time":
            return None if self.min_jaccard == 0 else math.nextafter(FOCUS_TIME_SCALE * self.min_jaccard, math.inf)
        return self.rel

    def reason(self, k: int) -> str:
        """Why the core metric's value is undefined (NaN) for a query, in this metric's terms."""
        return "undefined"

    def convention(self, k: int) -> str:
        """The conventions that decide this metric's numbers at cutoff ``k`` beyond its formula -- relevance, gain,
        ideal, denominators -- at their values here, defaults included (printed with the batch's results)."""
        raise NotImplementedError

    def describe_core(self, k: int) -> str:
        """How this metric is computed by the core, for the conventions: ``nDCG@10``, ``SetP of ...``."""
        return f"{self.core(k)} of the first {k} documents and the judged pool"

    def rel_text(self) -> str:
        """The relevance threshold of gold and LLM modes as it reads: ``>= 2``, ``> 0`` (``positive``)."""
        return format_level(self.rel if self.rel is not None else self.level()).removeprefix("grade ")

    def _relevance_text(self) -> str:
        if self.mode == "gold":
            return f"relevant: gold grade {self.rel_text()} (rel)"
        if self.mode == "focus_time":
            return f"relevant: Jaccard(QFT, DFT) > {self.min_jaccard:g} (min_jaccard)"
        return f"relevant: judge grade {self.rel_text()} (rel) on the 0-4 temporal rubric"

    def _grades_text(self) -> str:
        return {"gold": "grades: the gold grades (0 for a document not in the gold)",
                "focus_time": "grades: 4 x Jaccard(QFT, DFT)",
                "llm": "grades: the judge's, 0-4 temporal rubric"}[self.mode]

    def parameters(self) -> dict[str, Any]:
        """The formula parameters that differ from their defaults (mode flags, judge and rel excluded)."""
        skip = {"use_focus_time", "use_llm", "llm", "on_failure"}
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name not in skip and getattr(self, f.name) != f.default}

    def __str__(self) -> str:
        params = self.parameters()
        inner = ", ".join(f"{k}={format_value(v)}" for k, v in params.items())
        return type(self).__name__ + (f"({inner})" if inner else "")

    # ------------------------------------------------------------------ calls
    def compute(self, **inputs: Any) -> float:
        """The value (NaN when undefined; see :meth:`score` for the reason)."""
        return self.score(**inputs).value

    async def acompute(self, **inputs: Any) -> float:
        """The value, awaiting the judge in LLM mode."""
        return (await self.ascore(**inputs)).value

    def score(self, **inputs: Any) -> TemporalScore:
        """The value with its grades and reasons; in LLM mode runs :meth:`ascore` with :func:`asyncio.run`."""
        if self.use_llm:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return asyncio.run(self.ascore(**inputs))
            raise PolicyError(f"{self}: compute() cannot run the judge inside a running event loop; use "
                              "await metric.acompute(...)")
        return self.finish(self.prepare(inputs), self.k_of(inputs))

    async def ascore(self, **inputs: Any) -> TemporalScore:
        """Like :meth:`score`, awaiting the judge in LLM mode."""
        if not self.use_llm:
            return self.score(**inputs)
        return self.finish(await self.aprepare(inputs), self.k_of(inputs))

    def finish(self, prepared: Prepared, k: int) -> TemporalScore:
        """The score of one prepared query: failures raised (or NaN), the adapter's undefined reason, else the
        core metric's value (NaN with :meth:`reason`)."""
        name = f"{self}@{k}"
        if prepared.failures:
            if self.on_failure == "raise":
                raise TemporalGradeError(name, prepared.failures)
            why = prepared.reason or f"the judge could not grade {len(prepared.failures)} document(s)"
            return TemporalScore(name, k, self.mode, math.nan, prepared.grades, why, prepared.failures)
        value = float(evaluate_prepared([prepared], self.core(k), self.level())[0])
        reason = prepared.reason or (self.reason(k) if math.isnan(value) else "")
        return TemporalScore(name, k, self.mode, value, prepared.grades, reason)

    # ------------------------------------------------------------------ inputs
    def inputs(self) -> frozenset[str]:
        """The names of the inputs this metric takes in its mode (``k`` included): what a batch passes it."""
        required, optional = self.INPUTS[self.mode]
        return required | optional | self.EXTRA_INPUTS | {"k"}

    def k_of(self, inputs: Mapping[str, Any]) -> int:
        """The cutoff of a call: ``k`` (default 10), checked."""
        return check_k(inputs.get("k", 10), type(self).__name__)

    def check_inputs(self, inputs: Mapping[str, Any]) -> int:
        """Refuse unknown inputs (TypeError), inputs of another mode and missing ones (InputError); the cutoff."""
        required, _ = self.INPUTS[self.mode]
        allowed = self.inputs()
        all_inputs = frozenset().union(*(r | o for r, o in self.INPUTS.values())) | self.EXTRA_INPUTS | {"k"}
        unknown = sorted(set(inputs) - all_inputs)
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown input(s) {', '.join(unknown)}; it takes "
                            f"{', '.join(sorted(all_inputs))}")
        other = sorted(n for n in set(inputs) - allowed if inputs[n] is not None)
        missing = sorted(n for n in required if inputs.get(n) is None)
        if other or missing:
            flag = {"gold": "", "focus_time": "use_focus_time=True", "llm": "use_llm=True"}[self.mode]
            got = f"; got {', '.join(other)}, which belong to another mode" if other else ""
            raise InputError(f"{type(self).__name__}({flag}) needs {', '.join(sorted(required))}"
                             f"{' (missing ' + ', '.join(missing) + ')' if missing else ''}{got}")
        return self.k_of(inputs)

    def graded(self, inputs: Mapping[str, Any]) -> Graded:
        """The query graded in gold or focus-time mode."""
        if self.mode == "gold":
            return gold_grades(inputs["retrieved_ids"], inputs["gold_ids"])
        return focus_time_grades(inputs["qft"], inputs["dfts"], inputs.get("other_dfts") or ())

    def prepare(self, inputs: Mapping[str, Any]) -> Prepared:
        """What the core metric reads for one query in gold or focus-time mode (see the module docstring)."""
        k = self.check_inputs(inputs)
        return self.prepared(self.graded(inputs), inputs, k)

    async def aprepare(self, inputs: Mapping[str, Any]) -> Prepared:
        """What the core metric reads for one query in LLM mode: the top ``k`` graded by the judge, or every
        document given when the metric needs the judged pool."""
        k = self.check_inputs(inputs)
        graded = await judge_grades(self.judge(), inputs["query"], inputs["retrieved_docs"],
                                    inputs.get("other_docs") or (), k, self.needs_pool)
        return self.prepared(graded, inputs, k)

    def prepared(self, graded: Graded, inputs: Mapping[str, Any], k: int) -> Prepared:
        """A graded query as this metric reads it at cutoff ``k``: by default the first ``k`` documents retrieved
        and the whole judged pool."""
        shown = graded.ranked[:k]
        if graded.failures:
            return Prepared(None, shown, failures=graded.failures)
        if graded.undefined:
            return Prepared(None, shown, graded.undefined)
        return Prepared(self.ranking(graded, inputs, k), shown)

    def ranking(self, graded: Graded, inputs: Mapping[str, Any], k: int) -> Ranking:
        """The ranking the core metric evaluates: the first ``k`` documents and the judged pool."""
        return Ranking("q", graded.doc_ids[:k], graded.pool)

    def judge(self) -> Judge:
        """The judge of LLM mode; a :class:`~gainscope.errors.PolicyError` when none was given."""
        if self.llm is None:
            raise PolicyError(f"{type(self).__name__}(use_llm=True) has no judge: pass llm=<a judge> to the "
                              "constructor, or set metric.llm = judge (an object with .spec and async "
                              ".grade(query, document), such as gainscope.judges.labeling.LLMJudge)")
        return self.llm
