"""Focus-time extraction from text, rule by rule, with every decision kept for inspection.

:func:`extract_focus_time` reads a query or a document and returns an :class:`Extraction`: the focus time, and
for every piece of text that decided it a :class:`Mention` (the text, its character span, the rule, the years).
Rules run in this order; a later rule never reads text that an earlier rule matched:

1. ``publication`` (documents only): bylines -- "Published: 2024", "Published 2024-03-01", "Posted on March 3,
   2021", "Posted by Jane Doe on 3 March 2021", "Updated: ...", "Last updated ..." at the start of the text or of a
   line (or after a ``|``/``·`` separator) -- and copyright notices: "© 2020" or "Copyright 2020 Acme" anywhere
   ("© 2010-2020": 2020), "(c) 2020" at the start of a line ("(a) 2018, (b) 2019, (c) 2020" is a list). The year is
   the document's *publication year*, kept in :attr:`Extraction.publication_year` and **not** in its focus time (a
   2024 article about the 2008 crisis is about 2008). The same words in running text are narrative, read by the
   other rules: "The novel was published in 1851 by Melville" is about 1851, and so is "Published in 1851,
   Moby-Dick sold poorly" ("in" introduces what the text is about, not a byline date).
2. ``date``: ISO dates ``2020-03-15`` -> 2020.
3. ``range``: ``1990-1995``, ``1990\u201395`` (en dash), ``2019-20``, ``from 1990 to 1995``, ``1990 through 1995``,
   ``between 1990 and 1995`` -> every year from start to end, both included (a range ending before it starts is
   not a range; its years are read one by one).
4. ``decade``: ``1990s``, ``the 1990s`` -> 1990..1999; ``early 1990s`` -> 1990..1993, ``mid 1990s`` ->
   1994..1996, ``late 1990s`` -> 1997..1999.
5. ``century``: ``19th century`` -> 1800..1899 (the colloquial reading, as "the 1800s").
6. ``period``: named periods, :data:`PERIODS` plus the caller's ``periods`` (which win on equal names):
   World War I 1914-1918, World War II 1939-1945, the Cold War 1947-1991, the Great Depression 1929-1939, the Great
   Recession 2007-2009, the Victorian era 1837-1901, the COVID-19 pandemic 2020-2023. A bare "pandemic" is not
   read (1918? 2020?).
7. ``relative``: against a reference year ``y``: "recently"/"recent"/"lately" -> y-2..y, "this year"/
   "currently"/"today"/"nowadays" -> y, "last year"/"past year"/"previous year" -> y-1, "next year" -> y+1,
   "last/past decade" -> y-10..y-1, "past N years" -> y-N..y, "N years ago" -> y-N (N in digits or a word up
   to twenty). The reference year is ``reference_date``'s; for a document whose publication year is known it is
   the publication year (its "last year" is the year before it was published). **The wall clock is never
   read**: without a reference a relative expression raises :class:`~gainscope.errors.InputError`, or, with
   ``unresolved="report"``, is listed in :attr:`Extraction.unresolved` and adds no year.
8. ``year``: a four-digit number within ``year_bounds`` (default 1000..2099). It is *rejected* (listed in
   :attr:`Extraction.rejected` with the reason) when it is part of a larger number (``2,000``, ``2000.5``), is
   followed by ``%`` or by a count or unit noun (``2000 items``, ``1500 words``, ``2000 km``), or follows a
   currency sign or ``page``/``p.``/``pp.``/``no.``/``#``/``ISO``/``RFC`` -- unless "in", "since", "during",
   "until", "before", "after", "from" or "around" comes right before it ("in 2000 people ..." is a year).
9. ``dateparser`` (``use_dateparser=True``, needs ``pip install 'gainscope[temporal]'``): the rest of the text
   through ``dateparser.search.search_dates``. Its matches are parsed against two different bases to tell
   absolute dates from relative ones ("two weeks ago", "yesterday"), which are then resolved against the
   reference year like rule 7, never against the clock. A match with no digit and no relative word ("may" in
   "it may rain") is rejected.

The differences with TempoEval's regex extractor (which reads "2000 items" as the year 2000, puts the
publication year into the focus time, resolves "recently" against ``datetime.now()`` and unions all methods) are
listed in :mod:`gainscope.temporal`.

>>> e = extract_focus_time("Published 2024. The 2008 crisis; page 1234 of 2000 items", kind="document")
>>> str(e.focus_time), e.publication_year, [m.text for m in e.rejected]
('{2008}', 2024, ['1234', '2000'])
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from gainscope.errors import InputError, MissingDependencyError, PolicyError
from gainscope.temporal.focus_time import FocusTime, FocusTimeLike, as_focus_time

__all__ = ["PERIODS", "Extraction", "Mention", "extract_focus_time", "reference_year"]

Kind = Literal["query", "document"]

#: named periods: (pattern, first year, last year); matched case-insensitively on word boundaries
PERIODS: dict[str, tuple[str, int, int]] = {
    "World War I": (r"world\s+war\s+(?:i|1|one)|first\s+world\s+war|wwi|ww1|great\s+war", 1914, 1918),
    "World War II": (r"world\s+war\s+(?:ii|2|two)|second\s+world\s+war|wwii|ww2", 1939, 1945),
    "Cold War": (r"cold\s+war", 1947, 1991),
    "Great Depression": (r"great\s+depression", 1929, 1939),
    "Great Recession": (r"great\s+recession", 2007, 2009),
    "Victorian era": (r"victorian\s+(?:era|age|period)", 1837, 1901),
    "COVID-19 pandemic": (r"covid(?:-?19)?(?:\s+pandemic)?|coronavirus\s+pandemic", 2020, 2023),
}

_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_N = r"(\d{1,3}|" + "|".join(_NUMBER_WORDS) + r")"

_COUNT_NOUNS = frozenset("""
item items people person persons page pages word words unit units copy copies member members employee employees
user users customer customers vote votes point points time times case cases death deaths student students soldier
soldiers troop troops participant participants document documents record records row rows file files sample samples
token tokens km kilometre kilometres kilometer kilometers mile miles meter meters metre metres m kg kilogram
kilograms ton tons tonne tonnes dollar dollars euro euros pound pounds usd eur gbp calorie calories foot feet ft
hour hours minute minutes second seconds mph rpm mw gw kw kwh mb gb tb pixel pixels character characters
""".split())
_COUNT_BEFORE = re.compile(r"(?:[$€£¥#]|\b(?:page|p\.|pp\.|no\.|number|iso|rfc))\s*$", re.I)
_YEAR_BEFORE = re.compile(r"\b(?:in|since|during|until|till|before|after|from|around|circa|c\.)\s+$", re.I)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
#: the date of a byline: 2024, 2024-03-01, March 3, 2021, 3 March 2021, March 2021, 03/01/2021
_BYLINE_DATE = (r"(?:(?P<y1>\d{4})(?:-\d{2}(?:-\d{2})?)?|" + _MONTH + r"\s+" + _DAY + r",?\s+(?P<y2>\d{4})|"
                + _DAY + r"\s+" + _MONTH + r",?\s+(?P<y3>\d{4})|" + _MONTH + r",?\s+(?P<y4>\d{4})|"
                r"\d{1,2}[/.]\d{1,2}[/.](?P<y5>\d{4}))(?![\d-])")
_PUBLICATION = re.compile(
    # "Published: 2024", "Posted on March 3, 2021", "Posted by Jane Doe on ...", "Updated 2024-03-01": at the start
    # of the text or of a line (after markdown marks), or after a byline separator (|, ·, •)
    r"(?:^|(?<=\n)|(?<=[|\u00b7\u2022]))[ \t>*#_|-]*"
    r"(?:first\s+published|published|posted|last\s+updated|updated|last\s+modified|modified)"
    r"(?:\s*[:\u2013\u2014-]\s*|\s+on\s+|\s+by\s+[^\d\n:]{1,40}?\s+on\s+|\s+)" + _BYLINE_DATE +
    # "© 2020", "Copyright 2020 Acme", "Copyright © 2010-2020": anywhere (the last year of a range); "(c) 2020" at
    # the start of a line only ("(a) 2018, (b) 2019, (c) 2020" is a list)
    r"|(?:\bcopyright\s*(?:©|\(c\))?|©|(?:^|(?<=\n))[ \t]*\(c\))\s*(?:\d{4}\s*[\u2013-]\s*)?(?P<y6>\d{4})\b",
    re.I)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_RANGES = (
    re.compile(r"\bbetween\s+(\d{4})\s+and\s+(\d{4})\b", re.I),
    re.compile(r"\b(?:from\s+)?(\d{4})\s*(?:-|\u2013|\u2014|\bto\b|\buntil\b|\bthrough\b|\bthru\b)\s*(\d{4}|\d{2})\b(?![-\u2013]\d)",
               re.I),
)
_DECADE = re.compile(r"\b(?:the\s+)?(?:(early|mid|late)[\s-]+)?(\d{3}0)s\b", re.I)
_CENTURY = re.compile(r"\b(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)[\s-]+century\b", re.I)
_YEAR = re.compile(r"(?<![\d.,])\b(\d{4})\b(?!,\d|\.\d|\d)")
_RELATIVE_WORDS = re.compile(r"\b(?:ago|last|next|past|previous|yesterday|today|tomorrow|tonight|this|recent\w*)\b",
                             re.I)


def _n(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBER_WORDS[text.lower()]


#: relative expressions: (pattern, years from the reference year y and the match)
_RELATIVE: tuple[tuple[re.Pattern[str], Callable[[int, re.Match[str]], range]], ...] = (
    (re.compile(r"\b(?:last|past|previous)\s+" + _N + r"\s+years\b", re.I), lambda y, m: range(y - _n(m[1]), y + 1)),
    (re.compile(r"\b" + _N + r"\s+years?\s+ago\b", re.I), lambda y, m: range(y - _n(m[1]), y - _n(m[1]) + 1)),
    (re.compile(r"\b(?:last|past|previous)\s+decade\b", re.I), lambda y, m: range(y - 10, y)),
    (re.compile(r"\b(?:last|past|previous)\s+year\b", re.I), lambda y, m: range(y - 1, y)),
    (re.compile(r"\bnext\s+year\b", re.I), lambda y, m: range(y + 1, y + 2)),
    (re.compile(r"\b(?:this\s+year|currently|today|nowadays)\b", re.I), lambda y, m: range(y, y + 1)),
    (re.compile(r"\b(?:recently|recent|lately)\b", re.I), lambda y, m: range(y - 2, y + 1)),
)


@dataclass(frozen=True)
class Mention:
    """A piece of text a rule matched: ``text[start:end]``, the rule, the years it gives (empty when rejected or
    unresolved) and a note (how it was resolved, or why it was rejected)."""

    text: str
    start: int
    end: int
    rule: str
    years: FocusTime = FocusTime()
    note: str = ""

    def __str__(self) -> str:
        tail = f" -> {self.years}" if self.years else ""
        return f"{self.start}-{self.end} {self.rule} {self.text!r}{tail}{f' ({self.note})' if self.note else ''}"


@dataclass(frozen=True)
class Extraction:
    """What :func:`extract_focus_time` found. ``focus_time`` is the union of the years of ``mentions``;
    ``publication_year`` is kept apart; ``unresolved`` relative expressions (no reference) and ``rejected``
    year-like numbers add no year."""

    text: str
    kind: Kind
    focus_time: FocusTime
    mentions: tuple[Mention, ...]
    publication_year: int | None = None
    publication: tuple[Mention, ...] = ()
    unresolved: tuple[Mention, ...] = ()
    rejected: tuple[Mention, ...] = ()
    reference_year: int | None = None

    def explain(self) -> list[str]:
        """One line per decision, in text order, for reading or logging."""
        rows = [(m, "") for m in self.mentions] + [(m, "publication ") for m in self.publication] + \
               [(m, "unresolved ") for m in self.unresolved] + [(m, "rejected ") for m in self.rejected]
        return [f"{tag}{m}" for m, tag in sorted(rows, key=lambda r: r[0].start)] + \
               [f"focus time {self.focus_time}" + (f"; published {self.publication_year}"
                                                   if self.publication_year is not None else "")]


def reference_year(value: dt.date | int | str | None, where: str = "reference_date") -> int | None:
    """The year of a reference date given as a date, a datetime, an int year or an ISO string (``2024`` or
    ``2024-06-01``); None stays None."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise InputError(f"{where}: expected a date or a year; got {value!r}")
    if isinstance(value, dt.date):
        return value.year
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d{4})(?:-\d{2}(?:-\d{2})?(?:[T ].*)?)?\s*", value)
        if m is not None:
            return int(m[1])
    raise InputError(f"{where}: expected a date (2024-06-01), a year (2024) or a datetime; got {value!r}")


class _Scanner:
    """The text, the spans taken so far, and the mentions found."""

    def __init__(self, text: str, bounds: tuple[int, int]) -> None:
        self.text = text
        self.bounds = bounds
        self.taken: list[tuple[int, int]] = []
        self.found: list[Mention] = []
        self.publication: list[Mention] = []
        self.unresolved: list[Mention] = []
        self.rejected: list[Mention] = []

    def free(self, start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in self.taken)

    def take(self, m: Mention, into: list[Mention]) -> None:
        self.taken.append((m.start, m.end))
        into.append(m)


def _range_years(start: int, end_text: str) -> tuple[int, int] | None:
    end = int(end_text) if len(end_text) == 4 else start // 100 * 100 + int(end_text)
    return (start, end) if end > start else None


def _count_reason(text: str, start: int, end: int) -> str:
    """Why the number at ``text[start:end]`` is not a year, or "" when it may be one."""
    before = text[max(0, start - 12):start]
    if _YEAR_BEFORE.search(before):
        return ""
    if _COUNT_BEFORE.search(before):
        return f"follows {before.strip().split()[-1] if before.strip() else before!r}: a number, not a year"
    after = text[end:end + 24]
    if after.startswith("%"):
        return "a percentage"
    word = re.match(r"\s*([A-Za-z]+)", after)
    if word is not None and after[:word.start(1)].strip() == "" and word[1].lower() in _COUNT_NOUNS:
        return f"a count of {word[1]!r}, not a year"
    return ""


def _relative(sc: _Scanner, ref: int | None, anchor: str, unresolved: str) -> None:
    for pattern, years in _RELATIVE:
        for m in pattern.finditer(sc.text):
            if not sc.free(m.start(), m.end()):
                continue
            if ref is None:
                if unresolved == "error":
                    raise InputError(
                        f"{m[0]!r} (characters {m.start()}-{m.end()}) is a relative time expression and there is "
                        "no reference date to resolve it against; give reference_date= (the wall clock is never "
                        "used), or unresolved='report' to list it without years")
                sc.take(Mention(m[0], m.start(), m.end(), "relative", note="no reference date"), sc.unresolved)
                continue
            ys = years(ref, m)
            sc.take(Mention(m[0], m.start(), m.end(), "relative", FocusTime.range(ys.start, ys.stop - 1),
                            f"against {anchor} {ref}"), sc.found)


def _dateparser(sc: _Scanner, ref: int | None, anchor: str, unresolved: str) -> None:
    try:
        from dateparser.search import search_dates  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise MissingDependencyError("use_dateparser=True needs dateparser; install it with: "
                                     "pip install 'gainscope[temporal]'") from None

    def search(base_year: int) -> list[tuple[str, Any]]:
        found = search_dates(sc.text, languages=["en"],
                             settings={"RELATIVE_BASE": dt.datetime(base_year, 7, 1)})
        return list(found or [])

    first, second = search(2000), search(2010)
    resolved = search(ref) if ref is not None else first
    cursor = 0
    for (text, a), (_, b), (_, r) in zip(first, second, resolved, strict=False):
        start = sc.text.find(text, cursor)
        if start < 0:
            continue
        end = cursor = start + len(text)
        if not sc.free(start, end):
            continue
        relative = a.year != b.year
        if (not relative and not re.search(r"\d", text)) or (relative and not _RELATIVE_WORDS.search(text)):
            sc.take(Mention(text, start, end, "dateparser", note="no digit and no relative word: not a date"),
                    sc.rejected)
        elif not relative:
            if sc.bounds[0] <= a.year <= sc.bounds[1]:
                sc.take(Mention(text, start, end, "dateparser", FocusTime.of(a.year)), sc.found)
        elif ref is None:
            if unresolved == "error":
                raise InputError(f"{text!r} (characters {start}-{end}) is a relative time expression and there is "
                                 "no reference date to resolve it against; give reference_date= (the wall clock "
                                 "is never used), or unresolved='report' to list it without years")
            sc.take(Mention(text, start, end, "dateparser", note="relative, no reference date"), sc.unresolved)
        else:
            sc.take(Mention(text, start, end, "dateparser", FocusTime.of(r.year), f"relative, against {anchor} "
                            f"{ref}"), sc.found)


def extract_focus_time(text: str, *, kind: Kind = "query", reference_date: dt.date | int | str | None = None,
                       publication_year: int | None = None, unresolved: Literal["error", "report"] = "error",
                       periods: Mapping[str, FocusTimeLike] | None = None, use_dateparser: bool = False,
                       year_bounds: tuple[int, int] = (1000, 2099)) -> Extraction:
    """Extract the focus time of a query or document (see the module docstring for the rules).

    ``reference_date`` (a date, an ISO string or a year) resolves relative expressions; for a document the
    publication year, when known (``publication_year`` or rule 1), is used instead. ``unresolved``: ``"error"``
    (default) raises on a relative expression with no reference, ``"report"`` lists it. ``periods`` adds or
    overrides named periods (name -> years, e.g. ``{"dot-com bubble": "1995-2000"}``).
    """
    if not isinstance(text, str):
        raise InputError(f"expected text to extract a focus time from; got {type(text).__name__}")
    if kind not in ("query", "document"):
        raise PolicyError(f"kind must be 'query' or 'document'; got {kind!r}")
    if unresolved not in ("error", "report"):
        raise PolicyError(f"unresolved must be 'error' or 'report'; got {unresolved!r}")
    sc = _Scanner(text, year_bounds)
    pub = publication_year
    if kind == "document":
        for m in _PUBLICATION.finditer(text):
            year = int(next(y for y in m.groups() if y is not None))
            sc.take(Mention(m[0], m.start(), m.end(), "publication", FocusTime.of(year)), sc.publication)
            pub = year if pub is None else pub
    ref = reference_year(reference_date)
    anchor = "reference year"
    if kind == "document" and pub is not None:
        ref, anchor = pub, "publication year"
    for m in _ISO_DATE.finditer(text):
        if sc.free(m.start(), m.end()):
            sc.take(Mention(m[0], m.start(), m.end(), "date", FocusTime.of(int(m[1]))), sc.found)
    for pattern in _RANGES:
        for m in pattern.finditer(text):
            bounds = _range_years(int(m[1]), m[2])
            if bounds is not None and sc.free(m.start(), m.end()):
                sc.take(Mention(m[0], m.start(), m.end(), "range", FocusTime.range(*bounds)), sc.found)
    for m in _DECADE.finditer(text):
        if sc.free(m.start(), m.end()):
            start = int(m[2])
            part = (m[1] or "").lower()
            first, last = {"early": (0, 3), "mid": (4, 6), "late": (7, 9)}.get(part, (0, 9))
            sc.take(Mention(m[0], m.start(), m.end(), "decade", FocusTime.range(start + first, start + last)),
                    sc.found)
    for m in _CENTURY.finditer(text):
        n = int(m[1])
        if n >= 1 and sc.free(m.start(), m.end()):
            sc.take(Mention(m[0], m.start(), m.end(), "century", FocusTime.range((n - 1) * 100, (n - 1) * 100 + 99)),
                    sc.found)
    table: dict[str, tuple[str, FocusTime]] = {name: (pat, FocusTime.range(a, b)) for name, (pat, a, b) in
                                                PERIODS.items()}
    for name, given in (periods or {}).items():
        table[name] = (r"\s+".join(re.escape(w) for w in name.split()), as_focus_time(given, f"periods[{name!r}]"))
    for name, (pat, span) in sorted(table.items(), key=lambda kv: -len(kv[0])):
        for m in re.finditer(r"\b(?:the\s+)?(?:" + pat + r")\b", text, re.I):
            if sc.free(m.start(), m.end()):
                sc.take(Mention(m[0], m.start(), m.end(), "period", span, name), sc.found)
    _relative(sc, ref, anchor, unresolved)
    for m in _YEAR.finditer(text):
        year = int(m[1])
        if not year_bounds[0] <= year <= year_bounds[1] or not sc.free(m.start(), m.end()):
            continue
        reason = _count_reason(text, m.start(), m.end())
        if reason:
            sc.take(Mention(m[0], m.start(), m.end(), "year", note=reason), sc.rejected)
        else:
            sc.take(Mention(m[0], m.start(), m.end(), "year", FocusTime.of(year)), sc.found)
    if use_dateparser:
        _dateparser(sc, ref, anchor, unresolved)
    union: frozenset[int] = frozenset().union(*(m.years.years for m in sc.found))
    order = sorted(sc.found, key=lambda m: m.start)
    return Extraction(text, kind, FocusTime(union), tuple(order), pub, tuple(sc.publication),
                      tuple(sorted(sc.unresolved, key=lambda m: m.start)),
                      tuple(sorted(sc.rejected, key=lambda m: m.start)), ref)
