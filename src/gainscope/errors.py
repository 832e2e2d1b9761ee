"""Every exception and warning gainscope raises, in one tree.

::

    GainscopeError
    ├── InputError (ValueError)                bad judgments / runs / files
    │   ├── FormatError                        .path, .line, .text: a line or record that cannot be read
    │   ├── InconsistentInputError             duplicates, conflicting grades, no query overlap, empty input
    │   │   └── DuplicateError                 .query_id, .doc_id, .locations, .extra: a doc twice in a ranking
    │   └── UnknownFormatError                 the format cannot be detected or is not supported
    ├── MetricError (ValueError)
    │   ├── UnknownMetricError                 a name that no registered metric has
    │   ├── MetricSyntaxError                  .text, .position: a metric string that does not parse
    │   └── InvalidParameterError (TypeError)  a parameter outside its declared constraints
    ├── PolicyError (ValueError)               an evaluation policy that is unknown or does not apply
    ├── JudgeError                             an LLM judge could not label
    │   ├── JudgeRequestError                  .status, .attempts: a request failed after every retry
    │   ├── JudgeAnswerError                   .raw: an answer that is not a grade on the judge's scale
    │   └── BudgetExceededError                the call or cost budget is spent
    ├── StoreError (OSError)                   .path: a store (an SQLite file) cannot be opened, read or written
    ├── SparkError                             Apache Spark could not run an evaluation (gainscope.spark)
    └── MissingDependencyError (ImportError)   an optional package is needed; names the extra to install

    GainscopeWarning (UserWarning)
    ├── InputWarning                           repaired or suspicious input (identical duplicates, ties, inf)
    ├── QueryCoverageWarning                   run queries without judgments, judged queries without ranking
    └── UndefinedMetricWarning                 a value is undefined for some queries and the policy filled it

Catch ``GainscopeError`` to handle anything gainscope reports about your data or request::

    try:
        results = gainscope.evaluate("qrels.txt", "run.txt", ["nDCG@10"])
    except gainscope.errors.InputError as exc:
        print(exc)          # "run.txt:17: expected 6 columns ..."

The command line turns ``InputError`` into exit code 3, ``MetricError``/``PolicyError`` into exit code 2 and
``JudgeError``/``StoreError`` into exit code 4.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "BudgetExceededError",
    "DuplicateError",
    "FormatError",
    "GainscopeError",
    "GainscopeWarning",
    "InconsistentInputError",
    "InputError",
    "InputWarning",
    "InvalidParameterError",
    "JudgeAnswerError",
    "JudgeError",
    "JudgeRequestError",
    "MetricError",
    "MetricSyntaxError",
    "MissingDependencyError",
    "PolicyError",
    "QueryCoverageWarning",
    "SparkError",
    "StoreError",
    "UndefinedMetricWarning",
    "UnknownFormatError",
    "UnknownMetricError",
    "format_ids",
    "loose_match",
]


class GainscopeError(Exception):
    """Base class of every error gainscope raises on purpose."""


class InputError(GainscopeError, ValueError):
    """Judgments, runs or files that cannot be used as given."""


class FormatError(InputError):
    """A line or record that cannot be read.

    ``path`` and ``line`` locate it (``line`` is 1-based; for JSON arrays it is the record number),
    ``text`` is the offending content as read.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 text: str | None = None) -> None:
        self.path = path
        self.line = line
        self.text = text
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)


class InconsistentInputError(InputError):
    """Input that reads fine but contradicts itself or the other input (duplicates, no overlap)."""


class DuplicateError(InconsistentInputError):
    """A document listed more than once for a query of a run: ``query_id``, ``doc_id``, the ``locations`` of its
    first two rows (lines or rows, as the input counts them) and the ``extra`` duplicate rows of the whole run."""

    def __init__(self, message: str, *, query_id: str, doc_id: str, locations: tuple[int, int],
                 extra: int) -> None:
        self.query_id = query_id
        self.doc_id = doc_id
        self.locations = locations
        self.extra = extra
        super().__init__(message)


class UnknownFormatError(InputError):
    """A file whose format cannot be detected, or a format name that is not supported."""


class MetricError(GainscopeError, ValueError):
    """A metric request that cannot be honoured."""


class UnknownMetricError(MetricError):
    """A metric name that is not registered."""


class MetricSyntaxError(MetricError):
    """A metric string that does not parse; ``position`` is the 0-based offset of the problem."""

    def __init__(self, message: str, *, text: str, position: int) -> None:
        self.text = text
        self.position = position
        super().__init__(message)


class InvalidParameterError(MetricError, TypeError):
    """A metric parameter outside its declared constraints (both a ValueError and a TypeError)."""


class PolicyError(GainscopeError, ValueError):
    """An evaluation policy that is unknown, or that a metric cannot honour."""


class JudgeError(GainscopeError):
    """An LLM judge could not label (the server, its answers, or the budget)."""


class JudgeRequestError(JudgeError):
    """A request to the judge's server failed after every retry; ``status`` is the last HTTP status (None for a
    timeout or a dropped connection) and ``attempts`` the number of attempts made."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        self.status = status
        self.attempts = attempts
        super().__init__(message)


class JudgeAnswerError(JudgeError):
    """An answer that is not a grade on the judge's scale (unparseable, missing, out of range); ``raw`` is the text."""

    def __init__(self, message: str, *, raw: str = "") -> None:
        self.raw = raw
        super().__init__(message)


class BudgetExceededError(JudgeError):
    """The budget of calls or cost is spent; nothing more is sent."""


class StoreError(GainscopeError, OSError):
    """A store (an SQLite file: judgments, search snapshots) cannot be opened, read or written: not a store, damaged,
    read-only, a full disk. ``path`` is the store's file; the message says what happened and what to do."""

    def __init__(self, message: str, *, path: str) -> None:
        self.path = path
        super().__init__(message)


class SparkError(GainscopeError):
    """Apache Spark could not run an evaluation (:mod:`gainscope.spark`): the session does not start, a worker
    cannot import gainscope, a worker died or ran out of memory. The message says what Spark reported and
    what to change."""


class MissingDependencyError(GainscopeError, ImportError):
    """An optional dependency is needed for this feature."""


class GainscopeWarning(UserWarning):
    """Base class of gainscope's warnings."""


class InputWarning(GainscopeWarning):
    """Input that was accepted but repaired or looks suspicious."""


class QueryCoverageWarning(GainscopeWarning):
    """Queries that are judged but not ranked, or ranked but not judged."""


class UndefinedMetricWarning(GainscopeWarning):
    """A metric is undefined for some queries (for example no relevant document) and a policy filled it."""


def format_ids(ids: list[str] | tuple[str, ...], limit: int = 5) -> str:
    """Render a list of ids for a message: the first ``limit`` and how many more."""
    shown = ", ".join(ids[:limit])
    if len(ids) > limit:
        shown += f", ... ({len(ids) - limit} more)"
    return shown


def loose_match(first: Iterable[str], second: Iterable[str]) -> tuple[str, str] | None:
    """The first id of ``first`` that differs from every id of ``second`` yet matches one once surrounding
    whitespace and leading zeros are removed (``" 007"`` and ``"7"``), with that id: the likely cause when two
    inputs share no id. None when there is no such pair."""

    def loose(s: str) -> str:
        return s.strip().lstrip("0") or "0"

    exact = set(second)
    keys: dict[str, str] = {}
    for y in exact:
        keys.setdefault(loose(y), y)
    for x in first:
        near = keys.get(loose(x))
        if near is not None and x not in exact:
            return x, near
    return None
