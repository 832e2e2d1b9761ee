"""Grading scales and prompt templates of the LLM judges.

Built-in prompts (each asks for JSON only: ``{"grade": <int>, "reasoning": "<one or two sentences>"}``):

* ``graded`` -- 0-4, the rubric of seed 001 without its temporal wording: 4 perfect (fully answers the query),
  3 highly relevant (minor gaps), 2 partially relevant, 1 marginally relevant (related, does not answer),
  0 not relevant. This is the scale of the agent metrics (good gain = grade >= 2).
* ``umbrela`` -- 0-3, the TREC Deep Learning / UMBRELA scale (Upadhyay et al. 2024, after Thomas et al. 2024):
  the judge considers the searcher's intent, how well the passage matches it and how trustworthy it is, then
  gives 3 (dedicated to the query, contains the exact answer), 2 (some answer, unclear or among extraneous
  information), 1 (related, does not answer) or 0 (nothing to do with the query).
* ``binary`` -- 0-1: 1 when the document helps answer the query, else 0.
* ``temporal`` -- 0-4, seed 001's temporal rubric, for the temporal metrics.

A user template is a text file with the placeholders ``{query}`` and ``{document}`` (required) and
``{title}`` / ``{narrative}`` (optional; empty when the input has none); ``{{`` and ``}}`` are literal braces.
An optional first section ``[system]`` ... ``[user]`` splits a system message from the user message. The
answer format is the same JSON, and the scale is given with the template (``--scale 0-3``).

Each template has a ``name`` and a ``version``; both, with the full text, enter the judge's hash, so editing a
prompt never reuses labels made with the old one.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from pathlib import Path

from gainscope.errors import FileAccessError, InputError, PolicyError

__all__ = ["BUILTIN", "PromptTemplate", "Scale", "builtin_prompt", "parse_scale", "template_from_file"]


@dataclass(frozen=True)
class Scale:
    """Integer grades from ``low`` to ``high``, with a label per grade (shown in prompts and reports)."""

    low: int
    high: int
    labels: tuple[tuple[int, str], ...] = ()

    def __post_init__(self) -> None:
        if not (isinstance(self.low, int) and isinstance(self.high, int)) or self.low >= self.high:
            raise PolicyError(f"a scale needs integer bounds low < high; got {self.low!r}-{self.high!r}")

    @property
    def grades(self) -> range:
        """Every grade of the scale."""
        return range(self.low, self.high + 1)

    def __str__(self) -> str:
        return f"{self.low}-{self.high}"


def parse_scale(text: str) -> Scale:
    """``"0-4"`` -> ``Scale(0, 4)``."""
    m = re.fullmatch(r"\s*(-?\d+)\s*-\s*(-?\d+)\s*", text)
    if m is None:
        raise PolicyError(f"a scale is written LOW-HIGH, e.g. 0-4; got {text!r}")
    return Scale(int(m[1]), int(m[2]))


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt: optional system message, user message with placeholders, its scale, name and version."""

    name: str
    version: str
    user: str
    scale: Scale
    system: str = ""

    def __post_init__(self) -> None:
        fields = _placeholders(self.user, self.name) | _placeholders(self.system, self.name)
        missing = {"query", "document"} - fields
        if missing:
            raise InputError(f"prompt {self.name!r} must contain {{query}} and {{document}}; missing "
                             f"{', '.join('{' + m + '}' for m in sorted(missing))}")
        unknown = fields - {"query", "document", "title", "narrative"}
        if unknown:
            raise InputError(f"prompt {self.name!r} has unknown placeholder(s) "
                             f"{', '.join('{' + u + '}' for u in sorted(unknown))}; the placeholders are {{query}}, "
                             "{document}, {title} and {narrative} (write {{ and }} for literal braces)")

    def messages(self, query: str, document: str, *, title: str = "", narrative: str = "") -> list[dict[str, str]]:
        """The chat messages for one (query, document) pair."""
        values = {"query": query, "document": document, "title": title, "narrative": narrative}
        out = []
        if self.system:
            out.append({"role": "system", "content": self.system.format(**values)})
        out.append({"role": "user", "content": self.user.format(**values)})
        return out


def _placeholders(text: str, name: str) -> set[str]:
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise InputError(f"prompt {name!r} is not a valid template ({exc}); write {{{{ and }}}} for literal "
                         "braces") from None
    out = set()
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if not field.isidentifier() or spec or conversion:
            raise InputError(f"prompt {name!r}: placeholders are plain names like {{query}}; got {{{field}}}")
        out.add(field)
    return out


_ANSWER = """Answer with JSON only, no other text:
{{"grade": <an integer from LOW to HIGH>, "reasoning": "<one or two sentences>"}}"""  # braces stay doubled


def _answer(low: int, high: int) -> str:
    return _ANSWER.replace("LOW", str(low)).replace("HIGH", str(high))

_SYSTEM = ("You are a careful relevance assessor for a search engine. You judge how well a document meets the "
           "information need behind a query, using only the document's content.")

_GRADED = """Rate how relevant the document is to the query, on a scale of 0 to 4.

Query: {query}
{narrative}
Document title: {title}
Document:
{document}

Scale:
4 = perfect: the document fully answers the query
3 = highly relevant: it answers the query with minor gaps
2 = partially relevant: it contains part of the answer, incomplete
1 = marginally relevant: it is related to the query but does not answer it
0 = not relevant: nothing useful for this query

""" + _answer(0, 4)

_UMBRELA = """Given a query and a passage, judge how well the passage answers the query.

Query: {query}
Passage:
{document}

First consider what the searcher is looking for (the intent behind the query). Then measure how well the
content of the passage matches that intent (M) and how trustworthy the passage is (T). Weigh M and T into a
final grade:
3 = the passage is dedicated to the query and contains the exact answer
2 = the passage has some answer for the query, but it is unclear or hidden among extraneous information
1 = the passage seems related to the query but does not answer it
0 = the passage has nothing to do with the query

""" + _answer(0, 3)

_BINARY = """Does the document help answer the query?

Query: {query}
{narrative}
Document title: {title}
Document:
{document}

1 = yes, it contains information that answers the query or part of it
0 = no

""" + _answer(0, 1)

_TEMPORAL = """Rate the temporal relevance of the document to the query on a scale of 0 to 4: does it hold the
time information (dates, periods, durations, order of events) the query needs?

Query: {query}
Document:
{document}

Scale:
4 = perfect: contains the exact temporal information needed to fully answer the query
3 = highly relevant: contains most of the temporal information, minor gaps
2 = partially relevant: contains some temporal context, incomplete
1 = marginally relevant: mentions related time periods but does not answer
0 = not relevant: no useful temporal information for this query

""" + _answer(0, 4)

_GRADED_LABELS = ((0, "not relevant"), (1, "marginally relevant"), (2, "partially relevant"),
                  (3, "highly relevant"), (4, "perfect"))

_UMBRELA_LABELS = ((0, "irrelevant"), (1, "related"), (2, "highly relevant"), (3, "perfectly relevant"))

BUILTIN: dict[str, PromptTemplate] = {
    "graded": PromptTemplate("graded", "1", _GRADED, Scale(0, 4, _GRADED_LABELS), _SYSTEM),
    "umbrela": PromptTemplate("umbrela", "1", _UMBRELA, Scale(0, 3, _UMBRELA_LABELS), _SYSTEM),
    "binary": PromptTemplate("binary", "1", _BINARY, Scale(0, 1, ((0, "not relevant"), (1, "relevant"))), _SYSTEM),
    "temporal": PromptTemplate("temporal", "1", _TEMPORAL, Scale(0, 4, _GRADED_LABELS), _SYSTEM),
}


def builtin_prompt(name: str) -> PromptTemplate:
    """One of :data:`BUILTIN`, by name."""
    if name not in BUILTIN:
        raise PolicyError(f"unknown prompt {name!r}; the built-in prompts are {', '.join(BUILTIN)} (or give a "
                          "template file)")
    return BUILTIN[name]


def template_from_file(path: str | Path, scale: Scale, *, version: str = "1") -> PromptTemplate:
    """A user template (see the module docstring); named after the file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileAccessError(f"{p}: no such prompt template file", path=str(p)) from None
    system = ""
    m = re.match(r"\s*\[system\]\s*\n(.*?)\n\s*\[user\]\s*\n(.*)", text, re.S)
    if m is not None:
        system, text = m[1].strip(), m[2]
    return PromptTemplate(name=f"file:{p.name}", version=version, user=text.strip() + "\n", scale=scale,
                          system=system)
