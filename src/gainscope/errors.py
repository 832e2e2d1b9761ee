"""Every exception and warning gainscope raises, in one tree.

::

    GainscopeError
    ├── InputError (ValueError)                bad judgments / runs / files
    │   ├── FormatError                        .path, .line, .text: a line or record that cannot be read
    │   ├── InconsistentInputError             duplicates, conflicting grades, no query overlap, empty input
    │   ├── UnknownFormatError                 the format cannot be detected or is not supported (input files,
    │   │                                      output formats of the renderers)
    │   ├── NotFoundError                      a named thing that does not exist (a dashboard case, query, job)
    │   ├── ScorerError                        .scorer, .query, .line: a case scorer (JavaScript or Python) failed
    │   ├── SpanError                          .line: an OpenTelemetry span that is not a step of an agent trace
    │   └── UnresolvedTimeError                .expression: a relative time ("last year") and no reference date
    ├── MetricError (ValueError)
    │   ├── UnknownMetricError                 a name that no registered metric has
    │   ├── MetricSyntaxError                  .text, .position: a metric string that does not parse
    │   └── InvalidParameterError (TypeError)  a parameter outside its declared constraints
    ├── PolicyError (ValueError)               an evaluation policy that is unknown or does not apply
    ├── FileAccessError (OSError)              .path: a file that cannot be opened, read or written (missing,
    │                                          not a regular file, unreadable, changed while read, disk full)
    ├── JudgeError                             an LLM judge could not label
    │   ├── JudgeRequestError                  .status, .attempts: a request failed after every retry
    │   │   └── FatalRequestError              .reason: the judge's client stopped (refused, or not answering)
    │   ├── JudgeAnswerError                   .raw: an answer that is not a grade on the judge's scale
    │   ├── BudgetExceededError                the call or cost budget is spent
    │   └── TemporalGradeError                 .failures: documents a temporal metric needed were not graded
    ├── EngineError                            a search engine could not answer (gainscope.search)
    │   ├── EngineRequestError                 .status, .attempts: a request failed after every retry
    │   ├── EngineResponseError                .raw: an answer that cannot be read as a ranking
    │   └── EngineStoppedError                 the run stopped: the engine refuses every request or is down
    ├── EngineConfigError (InputError)         an engine declaration, template or knob that cannot be used
    ├── StoreError (OSError)                   .path: a store (an SQLite file) cannot be opened, read or written
    ├── RenderError (ValueError)               a renderer given what it cannot draw (an HTML table, figure, SVG)
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

Exit codes of the command line, the one rule (``gainscope.cli.common`` applies it, the README states it):

* 0 ok; 1 a gate failed;
* 2 usage: a bad option, an unknown metric or policy (``MetricError``, ``PolicyError``);
* 3 invalid input data: a file that was read but whose content cannot be used (``InputError``, an engine
  declaration that cannot be used: ``EngineConfigError``);
* 4 I/O or external failure: a file that cannot be opened, read or written, a missing input file included
  (``FileAccessError`` and any ``OSError``), a judge, a search engine or a store that failed (``JudgeError``,
  ``EngineError``, ``StoreError``), a missing optional dependency (``MissingDependencyError``).

Messages that name an option to fix a problem write it with :func:`option`, so that the same message reads
``on_duplicate='first'`` in Python and ``--on-duplicate first`` on the command line: ``str()`` of an error
or a warning gives the Python spelling, :func:`spell` either one.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Iterable, Iterator
from typing import ClassVar

__all__ = [
    "BudgetExceededError",
    "EngineConfigError",
    "EngineError",
    "EngineRequestError",
    "EngineResponseError",
    "EngineStoppedError",
    "FatalRequestError",
    "FileAccessError",
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
    "NotFoundError",
    "PolicyError",
    "QueryCoverageWarning",
    "RenderError",
    "ScorerError",
    "SpanError",
    "StoreError",
    "TemporalGradeError",
    "UndefinedMetricWarning",
    "UnknownFormatError",
    "UnknownMetricError",
    "UnresolvedTimeError",
    "about",
    "format_ids",
    "loose_match",
    "option",
    "spell",
]


class GainscopeError(Exception):
    """Base class of every error gainscope raises on purpose. ``str()`` spells options as in Python."""

    def __str__(self) -> str:
        return spell(self)


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


class ScorerError(InputError):
    """A case scorer (JavaScript or Python) failed: a syntax error, an exception, a time or memory limit, or no
    score at all. The script is input, like a judgments file (exit code 3); it says where: ``scorer`` (the
    script's name), ``query`` (the query being scored), ``line``/``column`` (1-based, in the user's script) and
    ``source_line`` (that line of the script, quoted in the message).

    ``str(exc)`` reads ``scorer.js:12: TypeError: ... (query 'star wars')`` followed by the quoted line.
    """

    def __init__(self, message: str, *, scorer: str | None = None, query: str | None = None,
                 line: int | None = None, column: int | None = None, source_line: str | None = None) -> None:
        self.scorer = scorer
        self.query = query
        self.line = line
        self.column = column
        self.source_line = source_line
        where = ""
        if scorer is not None:
            where = f"{scorer}:{line}: " if line is not None else f"{scorer}: "
        text = where + message
        if query is not None:
            text += f" (query {query!r})"
        if source_line is not None:
            text += f"\n    {source_line.rstrip()}"
            if column is not None and column >= 1:
                text += "\n    " + " " * (column - 1) + "^"
        super().__init__(text)


class UnresolvedTimeError(InputError):
    """A relative time expression (``expression``, at ``start:end`` in the text) and no reference date to resolve
    it against (:mod:`gainscope.temporal.extraction`). Callers with other ways to give a reference (the command
    line) reword it from these fields."""

    def __init__(self, expression: str, start: int, end: int) -> None:
        self.expression, self.start, self.end = expression, start, end
        super().__init__(f"{expression!r} (characters {start}-{end}) is a relative time expression and there is no "
                         "reference date to resolve it against; give reference_date= (the wall clock is never "
                         "used), or unresolved='report' to list it without years")


class InconsistentInputError(InputError):
    """Input that reads fine but contradicts itself or the other input (duplicates, no overlap)."""


class UnknownFormatError(InputError):
    """A file whose format cannot be detected, or a format name that is not supported."""


class NotFoundError(InputError):
    """A thing named by its id that does not exist: a dashboard case, query, scorer, snapshot or job (the
    dashboard's API answers 404)."""


class SpanError(InputError):
    """An OpenTelemetry span that cannot be read as a step of an agent trace; ``line`` is the line of the span in
    its file (the reader adds the file's path)."""

    def __init__(self, message: str, line: int) -> None:
        self.line = line
        super().__init__(message)


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


class FileAccessError(GainscopeError, OSError):
    """A file that cannot be opened, read or written: missing, a directory or a device rather than a regular
    file, not readable or writable, changed while it was read, or a disk that is full. ``path`` names it."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        self.path = path
        super().__init__(message)


class JudgeError(GainscopeError):
    """An LLM judge could not label (the server, its answers, or the budget)."""


class JudgeRequestError(JudgeError):
    """A request to the judge's server failed after every retry; ``status`` is the last HTTP status (None for a
    timeout or a dropped connection) and ``attempts`` the number of attempts made."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        self.status = status
        self.attempts = attempts
        super().__init__(message)


class FatalRequestError(JudgeRequestError):
    """The judge's client has stopped: the server refused a request in a way that will not change, or stopped
    answering (see :mod:`gainscope.judges.client`). Every later call raises it too, without sending anything.

    ``reason``: ``"refused"`` (fix the API key, the model name, the base URL or the parameters, then run again) or
    ``"not_answering"`` (the server at the base URL gives no answer). ``status``: the HTTP status of the refusal
    (None when there was none). ``attempts``: the HTTP requests this call sent (0 for a call made after the stop).
    ``fatal`` is always True: stop the run instead of going on with the next pair.
    """

    fatal: ClassVar[bool] = True

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1,
                 reason: str = "refused") -> None:
        super().__init__(message, status=status, attempts=attempts)
        self.reason = reason


class JudgeAnswerError(JudgeError):
    """An answer that is not a grade on the judge's scale (unparseable, missing, out of range); ``raw`` is the text."""

    def __init__(self, message: str, *, raw: str = "") -> None:
        self.raw = raw
        super().__init__(message)


class BudgetExceededError(JudgeError):
    """The budget of calls or cost is spent; nothing more is sent."""


class TemporalGradeError(JudgeError):
    """The judge could not grade some documents a temporal metric needs, so its value is not computed (a failed
    grade is never 0); ``failures`` holds ``(doc id, reason)`` pairs."""

    def __init__(self, metric: str, failures: tuple[tuple[str, str], ...]) -> None:
        self.failures = failures
        shown = "; ".join(f"{d}: {why}" for d, why in failures[:3])
        more = f"; ... ({len(failures) - 3} more)" if len(failures) > 3 else ""
        super().__init__(f"{metric}: the judge could not grade {len(failures)} document(s), so the value is not "
                         f"computed (a failed grade is never 0): {shown}{more}. Pass on_failure='nan' to get NaN "
                         "with the reason instead")


class EngineError(GainscopeError):
    """A search engine could not answer a query (the server, its answer, or the run was stopped)."""


class EngineRequestError(EngineError):
    """A request to a search engine failed after every retry; ``status`` is the last HTTP status (None for a
    timeout, a dropped connection or a Python engine's exception), ``attempts`` the requests sent, ``retryable``
    whether another attempt could succeed, ``retry_after`` the seconds the server asked to wait, ``fatal`` whether
    every other request would fail the same way (401, 403, 404, ...)."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1, retryable: bool = False,
                 retry_after: float | None = None, fatal: bool = False) -> None:
        self.status = status
        self.attempts = attempts
        self.retryable = retryable
        self.retry_after = retry_after
        self.fatal = fatal
        super().__init__(message)


class EngineResponseError(EngineError):
    """An engine's answer that cannot be read as a ranking (not JSON, a mapping that finds no hits or no id,
    the same id twice, too large); ``raw`` is the start of the answer."""

    def __init__(self, message: str, *, raw: str = "") -> None:
        self.raw = raw
        super().__init__(message)


class EngineStoppedError(EngineError):
    """A run stopped before its end because the engine refuses every request or does not answer; what was
    recorded before stays recorded."""


class EngineConfigError(InputError):
    """An engine declaration (TOML), template, mapping or knob that cannot be used; checked before the first
    request."""


class StoreError(GainscopeError, OSError):
    """A store (an SQLite file: judgments, search snapshots) cannot be opened, read or written: not a store, damaged,
    read-only, a full disk. ``path`` is the store's file; the message says what happened and what to do."""

    def __init__(self, message: str, *, path: str) -> None:
        self.path = path
        super().__init__(message)


class RenderError(GainscopeError, ValueError):
    """A renderer was given what it cannot draw: an HTML table whose rows do not fit its header, SVG or PNG that
    is not one, a section left open (:mod:`gainscope.render.html`). A fault of the calling code, not of the data."""


class MissingDependencyError(GainscopeError, ImportError):
    """An optional dependency is needed for this feature."""


class GainscopeWarning(UserWarning):
    """Base class of gainscope's warnings. ``str()`` spells options as in Python."""

    def __str__(self) -> str:
        return spell(self)


class InputWarning(GainscopeWarning):
    """Input that was accepted but repaired or looks suspicious."""


class QueryCoverageWarning(GainscopeWarning):
    """Queries that are judged but not ranked, or ranked but not judged."""


class UndefinedMetricWarning(GainscopeWarning):
    """A metric is undefined for some queries (for example no relevant document) and a policy filled it."""


@contextlib.contextmanager
def about(label: str) -> Iterator[None]:
    """Make every gainscope warning raised inside start with ``label`` (a run's file or name) unless it already
    names it: with several runs, each warning says which run it is about. The warnings are re-emitted when the
    block ends, with their category and origin."""
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:
        for w in caught:
            message: Warning | str = w.message
            if isinstance(message, GainscopeWarning):
                text = BaseException.__str__(message)
                if not text.startswith(f"{label}:"):
                    message = type(message)(f"{label}: {text}")
            warnings.warn_explicit(message, w.category, w.filename, w.lineno, source=w.source)


def format_ids(ids: list[str] | tuple[str, ...], limit: int = 5) -> str:
    """Render a list of ids for a message: the first ``limit`` and how many more."""
    shown = ", ".join(ids[:limit])
    if len(ids) > limit:
        shown += f", ... ({len(ids) - limit} more)"
    return shown


# ---------------------------------------------------------------------- options named in messages
_OPEN, _SEP, _CLOSE = "\ue000", "\ue001", "\ue002"  # private-use code points: never in a repr'd id
_OPTION = re.compile(f"{_OPEN}([^{_SEP}]*){_SEP}([^{_CLOSE}]*){_CLOSE}")
INTERFACES = ("python", "cli")


def option(keyword: str, value: object = True, *, cli: str | None = None) -> str:
    """An option named in a message, to be spelled for the interface the message is shown in.

    Python: ``keyword=repr(value)`` (``on_duplicate='first'``, ``float_grades=True``; ``...`` as the value
    gives ``name=...``). Command line: ``cli`` when given, else ``--keyword-with-dashes value``, the value
    left out when it is True (``--on-duplicate first``, ``--float-grades``, ``--name ...``). A tuple of
    values offers a choice: ``on_duplicate='first' or 'max'``, ``--on-duplicate first or max``.
    """
    if isinstance(value, tuple):
        python = f"{keyword}={_choices([repr(v) for v in value])}"
        shown = _choices([str(v) for v in value])
    else:
        python = f"{keyword}={'...' if value is Ellipsis else repr(value)}"
        shown = "..." if value is Ellipsis else str(value)
    if cli is None:
        flag = "--" + keyword.replace("_", "-")
        cli = flag if value is True else f"{flag} {shown}"
    return f"{_OPEN}{python}{_SEP}{cli}{_CLOSE}"


def _choices(values: list[str]) -> str:
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " or " + values[-1]


def spell(message: BaseException | str, interface: str = "python") -> str:
    """The text of an error, a warning or a message with every :func:`option` in it spelled for
    ``interface``: ``"python"`` (keyword arguments) or ``"cli"`` (command-line flags)."""
    if interface not in INTERFACES:
        raise ValueError(f"interface must be 'python' or 'cli'; got {interface!r}")
    text = BaseException.__str__(message) if isinstance(message, BaseException) else str(message)
    if _OPEN not in text:
        return text
    group = 1 if interface == "python" else 2
    return _OPTION.sub(lambda m: m.group(group), text)


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
