"""What every temporal metric shares: the three modes, sync and async calls, scores that explain themselves,
and judge failures that are reported, never scored 0.

A metric is a frozen dataclass: its parameters are fields (``TemporalNDCG(gain="exponential")``), the mode is
chosen with ``use_focus_time=True`` or ``use_llm=True, llm=judge`` (gold ids otherwise), and the inputs are
keyword arguments of the call, as in seed 001::

    TemporalNDCG(use_focus_time=True).compute(qft={2020, 2021}, dfts=[{2020, 2021}, {2019}], k=2)
    TemporalNDCG().compute(retrieved_ids=["a", "b"], gold_ids={"a": 2}, k=5)
    await TemporalNDCG(use_llm=True, llm=judge).acompute(query="...", retrieved_docs=["...", "..."], k=5)

or, as the seed writes it, ``metric = TemporalNDCG(use_llm=True)`` then ``metric.llm = judge`` (``llm`` is the one
field that can be set after construction; every other is frozen). The judge must grade on the 0-4 temporal rubric:
a judge whose prompt has another scale is refused, and a grade outside 0-4 is a failed grade.

``compute``/``acompute`` return the value as a float; ``score``/``ascore`` return a :class:`TemporalScore` with
the grades it was computed from and, when the value is NaN, the reason. ``compute`` in LLM mode runs the judge
with :func:`asyncio.run` (call ``acompute`` from async code). Inputs that belong to another mode are an error, not
silently ignored; unknown keywords are a ``TypeError`` (TempoEval swallows them).

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

from gainscope.errors import InputError, JudgeError, PolicyError
from gainscope.temporal.grades import Graded, focus_time_grades, gold_grades, judge_grades

if TYPE_CHECKING:
    from gainscope.judges.labeling import Judge

__all__ = ["Mode", "TemporalGradeError", "TemporalMetric", "TemporalScore"]

Mode = Literal["gold", "focus_time", "llm"]


class TemporalGradeError(JudgeError):
    """The judge could not grade some documents; ``failures`` holds ``(doc id, reason)`` pairs."""

    def __init__(self, metric: str, failures: tuple[tuple[str, str], ...]) -> None:
        self.failures = failures
        shown = "; ".join(f"{d}: {why}" for d, why in failures[:3])
        more = f"; ... ({len(failures) - 3} more)" if len(failures) > 3 else ""
        super().__init__(f"{metric}: the judge could not grade {len(failures)} document(s), so the value is not "
                         f"computed (a failed grade is never 0): {shown}{more}. Pass on_failure='nan' to get NaN "
                         "with the reason instead")


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


def _check_k(k: object, metric: str) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise PolicyError(f"{metric}: k (the cutoff) must be an integer >= 1; got {k!r}")
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


def _undefined(why: str) -> tuple[float, str]:
    return math.nan, why


@dataclass(frozen=True)
class TemporalMetric(metaclass=_LLMSettable):
    """Base of the temporal metrics: mode flags, the judge, failure handling; subclasses add parameters and a
    formula (``_value``). ``rel``: minimum grade counted relevant by binary metrics in gold and LLM modes (None:
    1 in gold mode, 2 in LLM mode); ``min_jaccard``: in focus-time mode a document is relevant when its Jaccard
    with the query exceeds this (0: any shared year). ``llm``: the judge of LLM mode, given to the constructor or
    set afterwards (``metric.llm = judge``, the only field that can be set); a judge whose prompt grades on another
    scale than 0-4 is refused."""

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

    use_focus_time: bool = False
    use_llm: bool = False
    llm: Judge | None = field(default=None, compare=False, repr=False)
    rel: float | None = None
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
            raise PolicyError(f"on_failure must be 'raise' or 'nan'; got {self.on_failure!r}")
        if not 0 <= self.min_jaccard < 1:
            raise PolicyError(f"min_jaccard must be in [0, 1); got {self.min_jaccard!r}")

    @property
    def mode(self) -> Mode:
        """``gold``, ``focus_time`` or ``llm``, from the flags."""
        return "focus_time" if self.use_focus_time else "llm" if self.use_llm else "gold"

    @property
    def relevance_grade(self) -> float:
        """The minimum grade counted relevant in gold and LLM modes."""
        return self.rel if self.rel is not None else 2.0 if self.use_llm else 1.0

    def convention(self, k: int) -> str:
        """The conventions that decide this metric's numbers at cutoff ``k`` beyond its formula -- relevance, gain,
        ideal, denominators -- at their values here, defaults included (printed with the batch's results)."""
        raise NotImplementedError

    def _relevance_text(self) -> str:
        if self.mode == "gold":
            return f"relevant: gold grade >= {self.relevance_grade:g} (rel)"
        if self.mode == "focus_time":
            return f"relevant: Jaccard(QFT, DFT) > {self.min_jaccard:g} (min_jaccard)"
        return f"relevant: judge grade >= {self.relevance_grade:g} (rel) on the 0-4 temporal rubric"

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
        inner = ", ".join(f"{k}={v}" for k, v in params.items())
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
        return self._finish(self._graded_sync(inputs), inputs)

    async def ascore(self, **inputs: Any) -> TemporalScore:
        """Like :meth:`score`, awaiting the judge in LLM mode."""
        if not self.use_llm:
            return self.score(**inputs)
        return self._finish(await self._graded_llm(inputs), inputs)

    # ------------------------------------------------------------------ inputs
    def inputs(self) -> frozenset[str]:
        """The names of the inputs this metric takes in its mode (``k`` included): what a batch passes it."""
        required, optional = self.INPUTS[self.mode]
        return required | optional | self.EXTRA_INPUTS | {"k"}

    def _check_inputs(self, inputs: dict[str, Any]) -> None:
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

    def _graded_sync(self, inputs: dict[str, Any]) -> Graded | None:
        self._check_inputs(inputs)
        _check_k(inputs.get("k", 10), type(self).__name__)
        if self.mode == "gold":
            return gold_grades(inputs["retrieved_ids"], inputs["gold_ids"], self.relevance_grade)
        if self.mode == "focus_time":
            return focus_time_grades(inputs["qft"], inputs["dfts"], inputs.get("other_dfts") or (), self.min_jaccard)
        return None

    async def _graded_llm(self, inputs: dict[str, Any]) -> Graded | None:
        self._check_inputs(inputs)
        k = _check_k(inputs.get("k", 10), type(self).__name__)
        return await judge_grades(self.judge(), inputs["query"], inputs["retrieved_docs"],
                                  inputs.get("other_docs") or (), k, self.relevance_grade, self.needs_pool)

    def judge(self) -> Judge:
        """The judge of LLM mode; a :class:`~gainscope.errors.PolicyError` when none was given."""
        if self.llm is None:
            raise PolicyError(f"{type(self).__name__}(use_llm=True) has no judge: pass llm=<a judge> to the "
                              "constructor, or set metric.llm = judge (an object with .spec and async "
                              ".grade(query, document), such as gainscope.judges.labeling.LLMJudge)")
        return self.llm

    def _finish(self, graded: Graded | None, inputs: dict[str, Any]) -> TemporalScore:
        k = _check_k(inputs.get("k", 10), type(self).__name__)
        name = f"{self}@{k}"
        top = graded.ranked[:k] if graded is not None else ()
        if graded is not None and graded.failures:
            if self.on_failure == "raise":
                raise TemporalGradeError(name, graded.failures)
            return TemporalScore(name, k, self.mode, math.nan, top,
                                 f"the judge could not grade {len(graded.failures)} document(s)", graded.failures)
        if graded is not None and graded.undefined:
            return TemporalScore(name, k, self.mode, math.nan, top, graded.undefined)
        value, reason = self._value(graded, k, inputs)
        return TemporalScore(name, k, self.mode, value, top, reason)

    def _value(self, graded: Graded | None, k: int, inputs: dict[str, Any]) -> tuple[float, str]:
        """``(value, "")`` or ``(nan, reason)``."""
        raise NotImplementedError
