"""What one part of a distributed evaluation learned besides its values, and how parts add up.

Each part (a block of whole queries inside a Spark partition) evaluates its queries with the local code and
returns, next to the per-query values, :class:`Facts`: the counts and first examples that the local engine
turns into warnings and notes (infinite scores, NaN scores replaced, duplicates dropped, ids not in NFC form,
run tags, tie groups, rank contradictions), the ranked queries that have no judgments, the largest judged grade
of its queries (ERR's scale), and the :class:`Problem` s it found in the input. :meth:`Facts.merge` is
associative, so the driver gets the same totals whatever the partitioning; "first" means the smallest
*ordinal* (the input position: file, then line or row), so the example named is the one the local engine
names.

Problems carry a phase, the order in which the local readers check: ``line`` (a line that cannot be split into
fields: encoding, header row, column count), ``schema`` (a column of the wrong type), ``row`` (a value that is
not an id, a number, an integer), ``duplicate`` (a document twice in a ranking) and ``memory``. The driver
reports the first problem of the earliest phase, which is the error the local engine raises on the same input.

Facts travel as JSON (a string column of the partition output): floats keep their exact value
(``repr`` round-trips), infinities are written as JSON's ``Infinity``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["PHASES", "Facts", "First", "Problem"]

#: problem phases in the order the local readers check them
PHASES = ("line", "consistency", "schema", "row", "duplicate", "metric", "memory")


@dataclass(frozen=True)
class Problem:
    """Something in the input that stops the evaluation.

    ``ordinal`` is the input position of the offending line or row (None when the problem has no position,
    such as a column of the wrong type); ``message`` the local reader's message without its location;
    ``text`` the offending content; ``detail`` what the phase needs to finish the message on the driver
    (a duplicate's query, doc, second ordinal and count; an encoding error's byte position in its line).
    """

    phase: str
    message: str
    ordinal: int | None = None
    text: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def key(self) -> tuple[int, int]:
        """Sort key: earlier phase first, then earlier input position (no position sorts first)."""
        return PHASES.index(self.phase), -1 if self.ordinal is None else self.ordinal


@dataclass(frozen=True)
class First:
    """A count with the earliest example (by ordinal) and what to say about it."""

    count: int
    ordinal: int
    example: tuple[Any, ...]

    def merge(self, other: First | None) -> First:
        if other is None:
            return self
        first = self if self.ordinal <= other.ordinal else other
        return First(self.count + other.count, first.ordinal, first.example)


def _first_of(data: Any) -> First | None:
    return None if data is None else First(int(data["count"]), int(data["ordinal"]), tuple(data["example"]))


def _merge_first(a: First | None, b: First | None) -> First | None:
    return b if a is None else a.merge(b)


def _min_ordinals(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    out = dict(a)
    for key, value in b.items():
        out[key] = min(value, out.get(key, value))
    return out


@dataclass
class Facts:
    """The facts of one part of an evaluation (see the module docstring); ``Facts()`` is the empty part."""

    rows: int = 0                                           # run rows read
    ignored: list[str] = field(default_factory=list)        # ranked queries without judgments
    tied_groups: int = 0
    rank_steps: int = 0
    rank_down: int = 0
    max_grade: float | None = None                          # largest judged grade of the evaluated queries
    notes: list[str] = field(default_factory=list)          # notes of compute() (identical in every part)
    infinite: First | None = None                           # example: (score, query_id, doc_id)
    nan_scores: int = 0
    dropped: int = 0                                        # duplicate rows dropped by on_duplicate
    duplicates: int = 0                                     # duplicate rows beyond the first (on_duplicate='error')
    not_nfc: dict[str, dict[str, int]] = field(default_factory=dict)  # column -> {id: first ordinal}
    tags: dict[str, int] = field(default_factory=dict)      # run tag -> first ordinal
    problems: list[Problem] = field(default_factory=list)   # at most one per phase: the first
    # JSON Lines: per value (score, rank), the first row that gives it and the first that does not:
    # [ordinal, place in its line, query id]
    presence: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    # trec_eval's summary values that replace the mean (TrecOverrides.summary), summed: item index -> value
    trec_summary: dict[str, float] = field(default_factory=dict)
    # a detected MS MARCO run: the runs of one query's consecutive lines (gainscope.spark.parse.rank_runs)
    rank_runs: list[list[Any]] = field(default_factory=list)

    def note_presence(self, role: str, state: str, row: tuple[int, int, str]) -> None:
        """Record ``row`` as the first (so far) to give (``state="given"``) or miss ``role``."""
        known = self.presence.setdefault(role, {}).get(state)
        if known is None or tuple(row[:2]) < tuple(known[:2]):
            self.presence[role][state] = list(row)

    def merge(self, other: Facts) -> Facts:
        """These facts and ``other``'s, as if one part had seen both inputs."""
        not_nfc = {c: _min_ordinals(self.not_nfc.get(c, {}), other.not_nfc.get(c, {}))
                   for c in sorted(set(self.not_nfc) | set(other.not_nfc))}
        grades = [g for g in (self.max_grade, other.max_grade) if g is not None]
        return Facts(
            rows=self.rows + other.rows, ignored=self.ignored + other.ignored,
            tied_groups=self.tied_groups + other.tied_groups, rank_steps=self.rank_steps + other.rank_steps,
            rank_down=self.rank_down + other.rank_down, max_grade=max(grades) if grades else None,
            notes=self.notes + [n for n in other.notes if n not in self.notes],
            infinite=_merge_first(self.infinite, other.infinite), nan_scores=self.nan_scores + other.nan_scores,
            dropped=self.dropped + other.dropped, duplicates=self.duplicates + other.duplicates, not_nfc=not_nfc,
            tags=_min_ordinals(self.tags, other.tags),
            problems=_first_problems(self.problems + other.problems),
            presence=_merge_presence(self.presence, other.presence),
            trec_summary={k: self.trec_summary.get(k, 0.0) + other.trec_summary.get(k, 0.0)
                          for k in sorted(set(self.trec_summary) | set(other.trec_summary))},
            rank_runs=self.rank_runs + other.rank_runs)

    def add_problem(self, problem: Problem) -> None:
        """Record a problem (only the first of each phase is kept)."""
        self.problems = _first_problems([*self.problems, problem])

    def first_problem(self) -> Problem | None:
        """The problem the local engine would raise: the first of the earliest phase."""
        return min(self.problems, key=Problem.key) if self.problems else None

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> str:
        """The facts as JSON text (exact floats; Infinity for infinite scores)."""
        data = asdict(self)
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Facts:
        data = json.loads(text)
        return cls(
            rows=data["rows"], ignored=list(data["ignored"]), tied_groups=data["tied_groups"],
            rank_steps=data["rank_steps"], rank_down=data["rank_down"], max_grade=data["max_grade"],
            notes=list(data["notes"]), infinite=_first_of(data["infinite"]), nan_scores=data["nan_scores"],
            dropped=data["dropped"], duplicates=data["duplicates"],
            not_nfc={c: dict(v) for c, v in data["not_nfc"].items()},
            tags=dict(data["tags"]), problems=[Problem(**p) for p in data["problems"]],
            presence=data["presence"], trec_summary=dict(data.get("trec_summary", {})),
            rank_runs=list(data.get("rank_runs", [])))


def _merge_presence(a: dict[str, dict[str, list[Any]]], b: dict[str, dict[str, list[Any]]]
                    ) -> dict[str, dict[str, list[Any]]]:
    out = {role: dict(states) for role, states in a.items()}
    for role, states in b.items():
        for state, row in states.items():
            known = out.setdefault(role, {}).get(state)
            if known is None or tuple(row[:2]) < tuple(known[:2]):
                out[role][state] = row
    return out


def _first_problems(problems: list[Problem]) -> list[Problem]:
    """The first problem of each phase."""
    best: dict[str, Problem] = {}
    for p in problems:
        if p.phase not in best or p.key() < best[p.phase].key():
            best[p.phase] = p
    return sorted(best.values(), key=Problem.key)
