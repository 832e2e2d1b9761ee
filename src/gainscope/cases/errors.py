"""The one error class of :mod:`gainscope.cases`: a scorer script that cannot produce a score.

It is an :class:`~gainscope.errors.InputError` (the script is input, like a judgments file; exit code 3), and
it says where: ``query`` (the query being scored), ``line``/``column`` (1-based, in the user's script) and
``source_line`` (that line of the script, quoted in the message).
"""

from __future__ import annotations

from gainscope.errors import InputError

__all__ = ["ScorerError"]


class ScorerError(InputError):
    """A scorer (JavaScript or Python) failed: a syntax error, an exception, a time or memory limit, or no
    score at all.

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
