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
3. ``range``: ``1990-1995``, ``1990\u201395`` (en dash), ``2019-20``, ``2019/20``, ``from 1990 to 1995``,
   ``1990 through 1995``, ``between 1990 and 1995``, ``between 1990 and '95`` -> every year from start to end, both
   included. A two-digit end is in the start's century, except ``00`` after a year in the 90s (``1999-00`` ->
   1999..2000). Not a range: one that would end before it starts (``2020-12`` is a month: 2020 is read alone), a
   two-digit end after a word (``in 2010 to 20 people`` -> 2010), a range followed by a count noun, a date's
   ``2011/12/05``. A two-digit year after a year and "and"/"or" is that year when written ``'95`` or when it is
   at most ten years after the first (``in 1990 and 95`` -> 1990, 1995; the next century when smaller, ``1998 and
   02`` -> 2002), and no count noun follows (``1990 and 95 people``, ``2020 and 45 others`` are counts); after a
   comma it needs the apostrophe (``in 1990, '95``; ``In 2020, 45 of them`` is not read). ``1000s`` without "the"
   is thousands.
4. ``decade``: ``1990s``, ``the 1990s`` -> 1990..1999; ``early 1990s`` -> 1990..1993, ``mid 1990s`` ->
   1994..1996, ``late 1990s`` -> 1997..1999. Hundreds before 2000 are centuries, as people use them: ``the 1800s``
   -> 1800..1899, ``the early 1900s`` -> 1900..1932 (early, mid, late: thirds of the century); ``the 2000s`` is the
   decade 2000..2009. Two-digit and spelled-out decades with "the" or an apostrophe: ``the 80s``, ``'90s``,
   ``the late '70s``, ``the nineties``, ``the early eighties`` -> the 1930s to the 1990s, ``the noughties`` -> the
   2000s. Rejected with the reason: ``'00s``/``'10s``/``'20s``, ``the twenties``, ``the teens`` (which century?
   write it; "the Roaring Twenties" is a period) and ``his/her/their 80s`` (an age).
5. ``century``: ``19th century`` -> 1800..1899 (the colloquial reading, as "the 1800s"); ``the early/mid/late 19th
   century`` -> thirds (1800..1832, 1833..1866, 1867..1899); ``first/second half of the 20th century`` ->
   1900..1949, 1950..1999.
6. ``period``: named periods, :data:`PERIODS` plus the caller's ``periods`` (which win on equal names):
   World War I 1914-1918, World War II 1939-1945, the Cold War 1947-1991, the Great Depression 1929-1939, the Great
   Recession 2007-2009, the Victorian era 1837-1901, the Roaring Twenties 1920-1929, the Korean War 1950-1953, the
   Vietnam War 1955-1975, the Gulf War 1990-1991, the COVID-19 pandemic 2020-2023. A bare "pandemic" is not read
   (1918? 2020?).
7. ``relative``: against the reference date ``d`` (year ``y``): "recently"/"recent"/"lately" -> y-2..y, "this
   year"/"currently"/"today"/"nowadays" -> y, "last year"/"past year"/"previous year" -> y-1, "next year" -> y+1,
   "last/past decade" -> y-10..y-1, "past N years" -> y-N..y, "N years ago" -> y-N, "last N decades" ->
   y-10N..y-1, "N decades ago" -> y-10N; and from the day itself: "yesterday", "tomorrow", "N days/weeks/months
   ago", "last/next week/month", "past N days/weeks/months" -> the year(s) of the days they name ("yesterday"
   against 2024-01-01 is 2023, "two months ago" against 2024-01-15 is 2023). N is digits, a word up to twenty, "a"
   or "an" (1), or a vague count read as a number and said so in the note: "a couple of" 2, "a few"/"few" 3,
   "several" 5 ("the last few years" -> y-3..y). "in two years" is not read (a duration as often as a future
   time). The reference is ``reference_date`` (a date, or a year or ``YYYY-MM`` when only those are known: an
   expression then covers every year it can fall in from any day of that year or month, "yesterday" against 2024
   is 2023..2024); for a document whose publication date is known it is the publication date (its "last year" is
   the year before it was published; a byline's day and month are used when it gives them). The output has year
   precision. **The wall clock is never read**: without a reference a relative expression raises
   :class:`~gainscope.errors.InputError`, or, with ``unresolved="report"``, is listed in
   :attr:`Extraction.unresolved` and adds no year -- never silently nothing.

   ``open`` (open-ended years): "since 2015" -> 2015 up to the reference date's year, "after 2015" -> 2016 up to
   it; without a reference, their first year only (said in the note). "before 1990"/"prior to 1990" -> 1989 only:
   no lower bound is named, and the year before is the one the text points at (a document about the 1980s shares
   it; the note says so). "until 1990" is the year 1990 (rule 8).
8. ``year``: a four-digit number within ``year_bounds`` (default 1000..2100). It is *rejected* (listed in
   :attr:`Extraction.rejected` with the reason) when it is part of a larger number (``2,000``, ``2000.5``), is
   followed by ``%`` or by a count or unit noun (``2000 items``, ``1500 words``, ``2000 km``), or follows a
   currency sign, ``page``/``p.``/``pp.``/``no.``/``#``/``ISO``/``RFC``, ``room``/``suite``/``floor``/``flight``/
   ``route``/``model``/``version``/``code``/``phone``, or ``population (was)`` -- unless "in", "since", "during",
   "until", "before", "after", "from" or "around" comes right before it ("in 2000 people ..." is a year). A number
   outside ``plain_year_bounds`` (default 1800..2100) also needs *year context* to be read: one of those words,
   "year"/"the year", a month ("March 1215"), a year before it in a list ("1850 and 1215"), or AD/BC/CE after it
   ("signed in 1215" is a year; "Magna Carta, 1215" and "population 1500" are not, each with its reason). Pass
   ``plain_year_bounds=(1000, 2100)`` for historical text where bare old years are common.
9. ``dateparser`` (``use_dateparser=True``, needs ``pip install 'gainscope[temporal]'``): the rest of the text
   through ``dateparser.search.search_dates``. Its matches are parsed against two different bases to tell
   absolute dates from relative ones ("a fortnight ago", "last Tuesday"), which are then resolved against the
   reference date like rule 7 (every day of a year- or month-long reference), never against the clock. A match
   with no digit and no relative word ("may" in "it may rain") is rejected.

The differences with TempoEval's regex extractor (which reads "2000 items" as the year 2000, puts the
publication year into the focus time, resolves "recently" against ``datetime.now()`` and unions all methods) are
listed in :mod:`gainscope.temporal`.

Known misses (not read, or read wrongly; pass ``periods=`` or use dateparser where it helps): other named
periods and events ("the Renaissance", "9/11", "the Obama years"), seasons and fiscal years beyond ranges ("FY24",
"Q3 2021" gives 2021 only), product names with a year-like number ("Windows 2000" gives 2000), years before 1000
or after 2100, BC dates, two-digit years alone ("in '95"), "the 80s" meaning temperatures or ages without a
possessive, "since the 1990s" (the decade only, not up to the reference), vague spans other than those above ("in
the coming years", "for decades"), and every language but English.

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

from gainscope.errors import InputError, MissingDependencyError, PolicyError, UnresolvedTimeError
from gainscope.temporal.focus_time import FocusTime, FocusTimeLike, as_focus_time

__all__ = ["PERIODS", "Extraction", "Mention", "Reference", "UnresolvedTimeError", "extract_focus_time",
           "reference_date", "reference_year"]

Kind = Literal["query", "document"]

#: named periods: (pattern, first year, last year); matched case-insensitively on word boundaries
PERIODS: dict[str, tuple[str, int, int]] = {
    "World War I": (r"world\s+war\s+(?:i|1|one)|first\s+world\s+war|wwi|ww1|great\s+war", 1914, 1918),
    "World War II": (r"world\s+war\s+(?:ii|2|two)|second\s+world\s+war|wwii|ww2", 1939, 1945),
    "Cold War": (r"cold\s+war", 1947, 1991),
    "Great Depression": (r"great\s+depression", 1929, 1939),
    "Great Recession": (r"great\s+recession", 2007, 2009),
    "Victorian era": (r"victorian\s+(?:era|age|period)", 1837, 1901),
    "Roaring Twenties": (r"roaring\s+(?:twenties|20s|'20s)", 1920, 1929),
    "Korean War": (r"korean\s+war", 1950, 1953),
    "Vietnam War": (r"vietnam\s+war", 1955, 1975),
    "Gulf War": (r"(?:first\s+|persian\s+)?gulf\s+war", 1990, 1991),
    "COVID-19 pandemic": (r"covid(?:-?19)?(?:\s+pandemic)?|coronavirus\s+pandemic", 2020, 2023),
}

_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
#: vague counts, read as a number (and said so in the mention's note)
_VAGUE = {"a couple of": 2, "couple of": 2, "a few": 3, "few": 3, "several": 5}
_N = r"(\d{1,3}|" + "|".join([w.replace(" ", r"\s+") for w in _VAGUE] + ["an?"] + list(_NUMBER_WORDS)) + r")"

_COUNT_NOUNS = frozenset("""
item items people person persons page pages word words unit units copy copies member members employee employees
user users customer customers vote votes point points time times case cases death deaths student students soldier
soldiers troop troops participant participants document documents record records row rows file files sample samples
token tokens km kilometre kilometres kilometer kilometers mile miles meter meters metre metres m kg kilogram
kilograms ton tons tonne tonnes dollar dollars euro euros pound pounds usd eur gbp calorie calories foot feet ft
hour hours minute minutes second seconds mph rpm mw gw kw kwh mb gb tb pixel pixels character characters
percent per pc others more
""".split())
_COUNT_BEFORE = re.compile(
    r"(?:[$€£¥#]|\b(?:page|p\.|pp\.|no\.|number|iso|rfc|room|rooms|suite|apt\.?|apartment|floor|flight|route|"
    r"highway|model|version|v\.|code|zip|tel\.?|phone|call|population(?:\s+(?:was|is|of|reached|grew\s+to))?))"
    r"\s*$", re.I)
_YEAR_BEFORE = re.compile(r"\b(?:in|since|during|until|till|before|after|from|around|circa|c\.)\s+$", re.I)
#: what makes a number outside ``plain_year_bounds`` a year: a year word or preposition, a month, a year list
_YEAR_CONTEXT_BEFORE = re.compile(
    r"(?:\b(?:in|since|during|until|till|before|after|from|around|circa|c\.|year|the\s+year|by\s+the\s+year)"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?(?:\s+\d{1,2}(?:st|nd|rd|th)?,?)?"
    r"|\b\d{4}\s*(?:,|and|or|&))\s*$", re.I)
_YEAR_CONTEXT_AFTER = re.compile(r"\s*(?:AD|A\.D\.|BC|B\.C\.|CE|BCE)\b")
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
    # "between 1990 and 1995", "between 1990 and '95"
    re.compile(r"\bbetween\s+(\d{4})\s+and\s+['\u2018\u2019]?(\d{4}|\d{2})\b(?![-\u2013/]\d|\d)", re.I),
    # "1990-1995", "1990\u201395" (en dash), "2019-20", "1999-00", "2019/20", "2019/2020" (not "2011/12/05")
    re.compile(r"\b(?:from\s+)?(\d{4})\s*(?:-|\u2013|\u2014|/)\s*(\d{4}|\d{2})\b(?![-\u2013/.]\d)", re.I),
    # "from 1990 to 1995", "1990 through 1995": words take a four-digit end ("in 2010 to 20 people" is no range)
    re.compile(r"\b(?:from\s+)?(\d{4})\s+(?:to|until|through|thru)\s+(\d{4})\b(?![-\u2013/.]\d)", re.I),
)
#: a two-digit year after a year in a list: "1990 and '95", "1990, 95"
_ABBREVIATED = re.compile(r"\b(\d{4})(?:\s*,\s*(?=['\u2018\u2019])|\s+(?:and|or|&)\s+)(['\u2018\u2019]?(\d{2}))\b"
                          r"(?![-\u2013/.,]\d|\d|')")
_DECADE = re.compile(r"\b(?:the\s+)?(?:(early|mid|late)[\s-]+)?(\d{3}0)s\b", re.I)
#: "the 80s", "'90s", "the late '70s", "his 80s" (an age)
_SHORT_DECADE = re.compile(
    r"(?:\b(?P<own>his|her|their|my|your|our|its)\s+|\b(?P<the>the)\s+)?(?:(?P<part>early|mid|late)[\s-]+)?"
    r"(?P<apos>['\u2018\u2019])?(?<!\d)\b(?P<d>\d)0s\b", re.I)
_DECADE_WORDS = {"twenties": None, "teens": None, "thirties": 1930, "forties": 1940, "fifties": 1950,
                 "sixties": 1960, "seventies": 1970, "eighties": 1980, "nineties": 1990, "noughties": 2000,
                 "aughts": 2000}
_WORD_DECADE = re.compile(r"\bthe\s+(?:(early|mid|late)[\s-]+)?(" + "|".join(_DECADE_WORDS) + r")\b", re.I)
_CENTURY = re.compile(r"\b(?:(first|second|1st|2nd)\s+half\s+of\s+)?(?:the\s+)?(?:(early|mid|late)[\s-]+)?"
                      r"(\d{1,2})(?:st|nd|rd|th)[\s-]+century\b", re.I)
#: "since 2015", "after 2015", "before 1990", "prior to 1990"
_OPEN = re.compile(r"\b(since|after|before|prior\s+to)\s+(\d{4})\b(?![-\u2013/]\d|\d|,\d|\.\d)", re.I)
#: the parts of a decade (of ten years) and of a century (of a hundred): offsets of the first and last year
_DECADE_PARTS = {"early": (0, 3), "mid": (4, 6), "late": (7, 9), "": (0, 9)}
_CENTURY_PARTS = {"early": (0, 32), "mid": (33, 66), "late": (67, 99), "first": (0, 49), "1st": (0, 49),
                  "second": (50, 99), "2nd": (50, 99), "": (0, 99)}
_YEAR = re.compile(r"(?<![\d.,])\b(\d{4})\b(?!,\d|\.\d|\d)")
_RELATIVE_WORDS = re.compile(r"\b(?:ago|last|next|past|previous|yesterday|today|tomorrow|tonight|this|recent\w*)\b",
                             re.I)


def _n(text: str) -> int:
    word = " ".join(text.lower().split())
    if text.isdigit():
        return int(text)
    if word in ("a", "an"):
        return 1
    return _VAGUE[word] if word in _VAGUE else _NUMBER_WORDS[word]


def _shift(d: dt.date, n: int, unit: str) -> dt.date:
    """``d`` moved by ``n`` days, weeks or months (a month keeps the day when it exists, else the month's last)."""
    unit = unit.lower().rstrip("s")
    if unit == "day":
        return d + dt.timedelta(days=n)
    if unit == "week":
        return d + dt.timedelta(weeks=n)
    months = d.year * 12 + d.month - 1 + n
    year, month = divmod(months, 12)
    return dt.date(year, month + 1, 1)


#: the years a relative expression covers, from an exact reference date ``d``: (first year, last year)
Resolve = Callable[[dt.date, re.Match[str]], tuple[int, int]]

_UNIT = r"(days?|weeks?|months?)"
_RELATIVE: tuple[tuple[re.Pattern[str], Resolve], ...] = (
    # against the year
    (re.compile(r"\b(?:last|past|previous)\s+" + _N + r"\s+years\b", re.I),
     lambda d, m: (d.year - _n(m[1]), d.year)),
    (re.compile(r"\b" + _N + r"\s+years?\s+ago\b", re.I), lambda d, m: (d.year - _n(m[1]), d.year - _n(m[1]))),
    (re.compile(r"\b(?:last|past|previous)\s+" + _N + r"\s+decades\b", re.I),
     lambda d, m: (d.year - 10 * _n(m[1]), d.year - 1)),
    (re.compile(r"\b" + _N + r"\s+decades?\s+ago\b", re.I),
     lambda d, m: (d.year - 10 * _n(m[1]), d.year - 10 * _n(m[1]))),
    (re.compile(r"\b(?:last|past|previous)\s+decade\b", re.I), lambda d, m: (d.year - 10, d.year - 1)),
    (re.compile(r"\b(?:last|past|previous)\s+year\b", re.I), lambda d, m: (d.year - 1, d.year - 1)),
    (re.compile(r"\bnext\s+year\b", re.I), lambda d, m: (d.year + 1, d.year + 1)),
    (re.compile(r"\b(?:this\s+year|currently|today|nowadays)\b", re.I), lambda d, m: (d.year, d.year)),
    (re.compile(r"\b(?:recently|recent|lately)\b", re.I), lambda d, m: (d.year - 2, d.year)),
    # against the day
    (re.compile(r"\byesterday\b", re.I), lambda d, m: (_shift(d, -1, "day").year,) * 2),
    (re.compile(r"\btomorrow\b", re.I), lambda d, m: (_shift(d, 1, "day").year,) * 2),
    (re.compile(r"\b" + _N + r"\s+" + _UNIT + r"\s+ago\b", re.I),
     lambda d, m: (_shift(d, -_n(m[1]), m[2]).year,) * 2),
    (re.compile(r"\b(?:last|past|previous)\s+" + _N + r"\s+" + _UNIT + r"\b", re.I),
     lambda d, m: (_shift(d, -_n(m[1]), m[2]).year, d.year)),
    (re.compile(r"\b(?:last|previous)\s+(week|month)\b", re.I), lambda d, m: (_shift(d, -1, m[1]).year,) * 2),
    (re.compile(r"\bpast\s+(week|month)\b", re.I), lambda d, m: (_shift(d, -1, m[1]).year, d.year)),
    (re.compile(r"\bnext\s+(week|month)\b", re.I), lambda d, m: (_shift(d, 1, m[1]).year,) * 2),
    (re.compile(r"\bthis\s+(?:week|month)\b", re.I), lambda d, m: (d.year, d.year)),
)


@dataclass(frozen=True)
class Reference:
    """What relative expressions are resolved against: the days ``first..last`` the reference may be (one day for
    a full date, a month or a year when only those are known) and what it is (``reference date``,
    ``publication date``, ...). An expression covers the years it covers from any of those days."""

    first: dt.date
    last: dt.date
    what: str

    @classmethod
    def of(cls, value: dt.date | tuple[int, int | None], what: str) -> Reference:
        """A reference from a date, or from ``(year, month or None)`` when the day is not known."""
        if isinstance(value, dt.date):
            day = value.date() if isinstance(value, dt.datetime) else value
            return cls(day, day, what)
        year, month = value
        if month is None:
            return cls(dt.date(year, 1, 1), dt.date(year, 12, 31), what)
        return cls(dt.date(year, month, 1), _shift(dt.date(year, month, 1), 1, "month") - dt.timedelta(days=1), what)

    @property
    def year(self) -> int:
        """The year of the reference (the output has year precision)."""
        return self.first.year

    def __str__(self) -> str:
        if self.first == self.last:
            return f"{self.what} date {self.first.isoformat()}"
        if self.first.month == 1 and self.last.month == 12 and self.last.day == 31:
            return f"{self.what} year {self.year}"
        return f"{self.what} month {self.first.isoformat()[:7]}"

    def resolve(self, rule: Resolve, m: re.Match[str]) -> tuple[FocusTime, str]:
        """The years ``rule`` gives from every day the reference may be, and the note that says against what."""
        a, b = rule(self.first, m), rule(self.last, m)
        lo, hi = min(a[0], b[0]), max(a[1], b[1])
        note = f"against {self}"
        if a != b:
            note += f" (a {'year' if 'year' in str(self) else 'month'}-long reference: either year)"
        return FocusTime.range(lo, hi), note


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


_REFERENCE = re.compile(r"\s*(\d{4})(?:-(\d{2})(?:-(\d{2}))?(?:[T ].*)?)?\s*")


def reference_date(value: dt.date | int | str | None, where: str = "reference_date") -> dt.date | int | str | None:
    """A reference date checked and kept as precise as given: a date or datetime (kept), an int year, an ISO
    string (``2024``, ``2024-06`` or ``2024-06-01``, with a time or not; returned as given once checked); None stays
    None. Anything else is an :class:`~gainscope.errors.InputError` naming ``where``."""
    _reference(value, where, "reference")
    return value


def reference_year(value: dt.date | int | str | None, where: str = "reference_date") -> int | None:
    """The year of a reference date (see :func:`reference_date`); None stays None."""
    ref = _reference(value, where, "reference")
    return None if ref is None else ref.year


def _reference(value: object, where: str, what: str) -> Reference | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise InputError(f"{where}: expected a date or a year; got {value!r}")
    if isinstance(value, dt.date):
        return Reference.of(value, what)
    if isinstance(value, int):
        return Reference.of((value, None), what)
    if isinstance(value, str):
        m = _REFERENCE.fullmatch(value)
        if m is not None:
            try:
                if m[3] is not None:
                    return Reference.of(dt.date(int(m[1]), int(m[2]), int(m[3])), what)
                return Reference.of((int(m[1]), int(m[2]) if m[2] else None), what)
            except ValueError as exc:
                raise InputError(f"{where}: {value!r} is not a date ({exc})") from None
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
    """``(start, end)`` of a range, None when it is not one (it would end before it starts: "2020-12" is a month).
    A two-digit end is in the start's century, or in the next for ``00`` after a year in the 90s ("1999-00")."""
    end = int(end_text) if len(end_text) == 4 else start // 100 * 100 + int(end_text)
    if len(end_text) == 2 and end_text == "00" and start % 100 >= 90:
        end += 100
    return (start, end) if end > start else None


def _count_reason(text: str, start: int, end: int) -> str:
    """Why the number at ``text[start:end]`` is not a year, or "" when it may be one."""
    before = text[max(0, start - 24):start]
    if _YEAR_BEFORE.search(before):
        return ""
    cue = _COUNT_BEFORE.search(before)
    if cue is not None:
        return f"follows {' '.join(cue[0].split())!r}: a number, not a year"
    return _count_after(text, end)


def _count_after(text: str, end: int) -> str:
    """Why what follows ``text[:end]`` makes the number before it a count, or ""."""
    after = text[end:end + 24]
    if after.startswith("%"):
        return "a percentage"
    word = re.match(r"\s*([A-Za-z]+)", after)
    if word is not None and after[:word.start(1)].strip() == "" and word[1].lower() in _COUNT_NOUNS:
        return f"a count of {word[1]!r}, not a year"
    return ""


def _has_year_context(text: str, start: int, end: int) -> bool:
    return bool(_YEAR_CONTEXT_BEFORE.search(text[max(0, start - 24):start])
                or _YEAR_CONTEXT_AFTER.match(text, end))


def _no_reference(text: str, start: int, end: int) -> InputError:
    return UnresolvedTimeError(text, start, end)


def _relative(sc: _Scanner, ref: Reference | None, unresolved: str) -> None:
    for pattern, rule in _RELATIVE:
        for m in pattern.finditer(sc.text):
            if not sc.free(m.start(), m.end()):
                continue
            if ref is None:
                if unresolved == "error":
                    raise _no_reference(m[0], m.start(), m.end())
                sc.take(Mention(m[0], m.start(), m.end(), "relative", note="no reference date"), sc.unresolved)
                continue
            years, note = ref.resolve(rule, m)
            vague = next((w for w in _VAGUE if re.search(r"\b" + w.replace(" ", r"\s+") + r"\b", m[0], re.I)), None)
            if vague is not None:
                note += f"; {vague!r} read as {_VAGUE[vague]}"
            sc.take(Mention(m[0], m.start(), m.end(), "relative", years, note), sc.found)


def _dateparser(sc: _Scanner, ref: Reference | None, unresolved: str) -> None:
    try:
        from dateparser.search import search_dates  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise MissingDependencyError("use_dateparser=True needs dateparser; install it with: "
                                     "pip install 'gainscope[temporal]'") from None

    def search(base: dt.date) -> list[tuple[str, Any]]:
        found = search_dates(sc.text, languages=["en"],
                             settings={"RELATIVE_BASE": dt.datetime(base.year, base.month, base.day, 12)})
        return list(found or [])

    # the same text parsed against two far-apart bases: a date that moves with the base is relative
    first, second = search(dt.date(2000, 7, 1)), search(dt.date(2010, 7, 1))
    early = search(ref.first) if ref is not None else first
    late = search(ref.last) if ref is not None and ref.last != ref.first else early
    cursor = 0
    for (text, a), (_, b), (_, r1), (_, r2) in zip(first, second, early, late, strict=False):
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
                raise _no_reference(text, start, end)
            sc.take(Mention(text, start, end, "dateparser", note="relative, no reference date"), sc.unresolved)
        else:
            lo, hi = min(r1.year, r2.year), max(r1.year, r2.year)
            sc.take(Mention(text, start, end, "dateparser", FocusTime.range(lo, hi), f"relative, against {ref}"),
                    sc.found)


_MONTHS = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), start=1)}


def _byline_reference(m: re.Match[str], year: int) -> Reference:
    """The publication date of a byline, to the day when it says so (``2024-03-01``, ``March 3, 2021``,
    ``3 March 2021``), else to the month or the year."""
    found = re.fullmatch(r"(\d{4})-(\d{2})(?:-(\d{2}))?", _after_keyword(m[0]))
    month_day = re.search(r"(" + _MONTH + r")\s+(\d{1,2})\b|(\d{1,2})(?:st|nd|rd|th)?\s+(" + _MONTH + r")|(" + _MONTH +
                          r"),?\s+\d{4}", m[0], re.I)
    try:
        if found is not None:
            if found[3] is not None:
                return Reference.of(dt.date(year, int(found[2]), int(found[3])), "publication")
            return Reference.of((year, int(found[2])), "publication")
        if month_day is not None:
            name = (month_day[1] or month_day[4] or month_day[5])[:3].lower()
            day = month_day[2] or month_day[3]
            if name in _MONTHS:
                if day is None:
                    return Reference.of((year, _MONTHS[name]), "publication")
                return Reference.of(dt.date(year, _MONTHS[name], int(day)), "publication")
    except ValueError:  # "February 30": the year is still right
        pass
    return Reference.of((year, None), "publication")


def _after_keyword(byline: str) -> str:
    """The date part of a byline (what follows its last separator or space)."""
    return re.split(r"[\s:\u2013\u2014]+", byline.strip())[-1]


def _decades(sc: _Scanner) -> None:
    """Rule 4: "1990s", "the 1800s" (a century), "the 80s", "'90s", "the nineties", each with early/mid/late."""
    text = sc.text
    for m in _DECADE.finditer(text):
        if not sc.free(m.start(), m.end()):
            continue
        start, part = int(m[2]), (m[1] or "").lower()
        if start == 1000 and not m[0].lower().startswith("the"):
            sc.take(Mention(m[0], m.start(), m.end(), "decade", note="'1000s' without 'the': thousands, not years"),
                    sc.rejected)
        elif start % 100 == 0 and start < 2000:  # "the 1800s", "the early 1900s": the century, as people say it
            a, b = _CENTURY_PARTS[part]
            sc.take(Mention(m[0], m.start(), m.end(), "decade", FocusTime.range(start + a, start + b),
                            f"the {start}s read as the century"), sc.found)
        else:
            a, b = _DECADE_PARTS[part]
            sc.take(Mention(m[0], m.start(), m.end(), "decade", FocusTime.range(start + a, start + b)), sc.found)
    for m in _SHORT_DECADE.finditer(text):
        if not sc.free(m.start(), m.end()) or not (m["own"] or m["the"] or m["apos"]):
            continue
        short = f"'{m['d']}0s"
        if m["own"]:
            sc.take(Mention(m[0], m.start(), m.end(), "decade", note=f"an age ({' '.join(m[0].split())!r}), not a "
                            "decade"), sc.rejected)
        elif m["d"] in "012":
            sc.take(Mention(m[0], m.start(), m.end(), "decade", note=f"'{m['d']}0s' may be the 19{m['d']}0s or the "
                            f"20{m['d']}0s; write the century"), sc.rejected)
        else:
            start = 1900 + 10 * int(m["d"])
            a, b = _DECADE_PARTS[(m["part"] or "").lower()]
            sc.take(Mention(m[0], m.start(), m.end(), "decade", FocusTime.range(start + a, start + b),
                            f"{short} read as the {start}s"), sc.found)
    for m in _WORD_DECADE.finditer(text):
        if not sc.free(m.start(), m.end()):
            continue
        word = m[2].lower()
        decade = _DECADE_WORDS[word]
        if decade is None:
            sc.take(Mention(m[0], m.start(), m.end(), "decade", note=f"{'the ' + word!r} may be the 1900s or the "
                            "2000s; write the century"), sc.rejected)
        else:
            a, b = _DECADE_PARTS[(m[1] or "").lower()]
            sc.take(Mention(m[0], m.start(), m.end(), "decade", FocusTime.range(decade + a, decade + b)), sc.found)


def _centuries(sc: _Scanner) -> None:
    """Rule 5: "19th century" -> 1800..1899; "the late 19th century", "first half of the 20th century"."""
    for m in _CENTURY.finditer(sc.text):
        n = int(m[3])
        if n >= 1 and sc.free(m.start(), m.end()):
            a, b = _CENTURY_PARTS[(m[1] or m[2] or "").lower()]
            start = (n - 1) * 100
            sc.take(Mention(m[0], m.start(), m.end(), "century", FocusTime.range(start + a, start + b)), sc.found)


def _open_ended(sc: _Scanner, ref: Reference | None) -> None:
    """Rule 7b: "since 2015" -> 2015 up to the reference date; "after 2015" -> 2016 up to it; "before 1990" /
    "prior to 1990" -> 1989 only (no lower bound is named); without a reference, "since"/"after" give their first
    year only. Each says so in its note."""
    for m in _OPEN.finditer(sc.text):
        year = int(m[2])
        if not sc.bounds[0] <= year <= sc.bounds[1] or not sc.free(m.start(), m.end()) or \
                _count_after(sc.text, m.end()):
            continue
        word = " ".join(m[1].lower().split())
        said = f"{word} {year}"
        if word in ("before", "prior to"):
            years, note = FocusTime.of(year - 1), f"{said}, open-ended into the past: the year before only"
        else:
            first = year if word == "since" else year + 1
            if ref is None or ref.last.year < first:
                years = FocusTime.of(first)
                note = (f"{said}, open-ended and no reference date to end it: the first year only" if ref is None
                        else f"{said}, after the {ref}: the first year only")
            else:
                years, note = FocusTime.range(first, ref.last.year), f"{said}, up to the {ref}"
        sc.take(Mention(m[0], m.start(), m.end(), "open", years, note), sc.found)


def extract_focus_time(text: str, *, kind: Kind = "query", reference_date: dt.date | int | str | None = None,
                       publication_year: int | None = None, unresolved: Literal["error", "report"] = "error",
                       periods: Mapping[str, FocusTimeLike] | None = None, use_dateparser: bool = False,
                       year_bounds: tuple[int, int] = (1000, 2100),
                       plain_year_bounds: tuple[int, int] = (1800, 2100)) -> Extraction:
    """Extract the focus time of a query or document (see the module docstring for the rules).

    ``reference_date`` (a date, an ISO string ``YYYY-MM-DD``/``YYYY-MM``/``YYYY`` or an int year) resolves relative
    expressions, to the day when it gives the day; for a document the publication date, when known
    (``publication_year``, or a byline by rule 1, to the day when the byline gives it), is used instead.
    ``unresolved``: ``"error"`` (default) raises on a relative expression with no reference, ``"report"`` lists it.
    ``periods`` adds or overrides named periods (name -> years, e.g. ``{"dot-com bubble": "1995-2000"}``).
    ``year_bounds``: a four-digit number outside them is never a year; ``plain_year_bounds``: outside them it needs
    year context (rule 8).
    """
    if not isinstance(text, str):
        raise InputError(f"expected text to extract a focus time from; got {type(text).__name__}")
    if kind not in ("query", "document"):
        raise PolicyError(f"kind must be 'query' or 'document'; got {kind!r}")
    if unresolved not in ("error", "report"):
        raise PolicyError(f"unresolved must be 'error' or 'report'; got {unresolved!r}")
    sc = _Scanner(text, year_bounds)
    pub = publication_year
    ref = _reference(reference_date, "reference_date", "reference")
    if kind == "document" and pub is not None:
        ref = Reference.of((pub, None), "publication")
    if kind == "document":
        for m in _PUBLICATION.finditer(text):
            year = int(next(y for y in m.groups() if y is not None))
            sc.take(Mention(m[0], m.start(), m.end(), "publication", FocusTime.of(year)), sc.publication)
            if pub is None:
                pub, ref = year, _byline_reference(m, year)
    for m in _ISO_DATE.finditer(text):
        if sc.free(m.start(), m.end()):
            sc.take(Mention(m[0], m.start(), m.end(), "date", FocusTime.of(int(m[1]))), sc.found)
    for pattern in _RANGES:
        for m in pattern.finditer(text):
            bounds = _range_years(int(m[1]), m[2])
            if bounds is not None and sc.free(m.start(), m.end()) and not _count_after(text, m.end()):
                sc.take(Mention(m[0], m.start(), m.end(), "range", FocusTime.range(*bounds)), sc.found)
    for m in _ABBREVIATED.finditer(text):
        first, short = int(m[1]), int(m[3])
        year = first // 100 * 100 + short
        year += 100 if year <= first else 0
        # "1990 and '95" is a year; "2020 and 45 others" is a count unless the year is a few years after the first
        near = m[2][0] in "'\u2018\u2019" or year - first <= 10
        if near and year_bounds[0] <= first <= year_bounds[1] and sc.free(m.start(2), m.end(2)) and \
                not _count_after(text, m.end(2)):
            sc.take(Mention(m[2], m.start(2), m.end(2), "year", FocusTime.of(year), f"abbreviated, after {first}"),
                    sc.found)
    _decades(sc)
    _centuries(sc)
    table: dict[str, tuple[str, FocusTime]] = {name: (pat, FocusTime.range(a, b)) for name, (pat, a, b) in
                                                PERIODS.items()}
    for name, given in (periods or {}).items():
        table[name] = (r"\s+".join(re.escape(w) for w in name.split()), as_focus_time(given, f"periods[{name!r}]"))
    for name, (pat, span) in sorted(table.items(), key=lambda kv: -len(kv[0])):
        for m in re.finditer(r"\b(?:the\s+)?(?:" + pat + r")\b", text, re.I):
            if sc.free(m.start(), m.end()):
                sc.take(Mention(m[0], m.start(), m.end(), "period", span, name), sc.found)
    _relative(sc, ref, unresolved)
    _open_ended(sc, ref)
    plain = plain_year_bounds
    for m in _YEAR.finditer(text):
        year = int(m[1])
        if not year_bounds[0] <= year <= year_bounds[1] or not sc.free(m.start(), m.end()):
            continue
        reason = _count_reason(text, m.start(), m.end())
        if not reason and not plain[0] <= year <= plain[1] and not _has_year_context(text, m.start(), m.end()):
            reason = (f"{year} has no year context (outside {plain[0]}-{plain[1]}, and no 'in', 'since', 'year'... "
                      "before it)")
        if reason:
            sc.take(Mention(m[0], m.start(), m.end(), "year", note=reason), sc.rejected)
        else:
            sc.take(Mention(m[0], m.start(), m.end(), "year", FocusTime.of(year)), sc.found)
    if use_dateparser:
        _dateparser(sc, ref, unresolved)
    union: frozenset[int] = frozenset().union(*(m.years.years for m in sc.found))
    order = sorted(sc.found, key=lambda m: m.start)
    return Extraction(text, kind, FocusTime(union), tuple(order), pub, tuple(sc.publication),
                      tuple(sorted(sc.unresolved, key=lambda m: m.start)),
                      tuple(sorted(sc.rejected, key=lambda m: m.start)), None if ref is None else ref.year)
