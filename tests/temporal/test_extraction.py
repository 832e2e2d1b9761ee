"""Focus times and their extraction: every rule, the guards against counts, publication years kept apart, and
relative expressions resolved only against an explicit reference (never the clock)."""

from __future__ import annotations

import datetime as dt

import pytest

from gainscope.errors import InputError, MissingDependencyError
from gainscope.temporal import FocusTime, as_focus_time, extract_focus_time, jaccard

REF = dt.date(2024, 6, 1)


def years(text: str, **kw: object) -> set[int]:
    return set(extract_focus_time(text, **kw).focus_time.years)  # type: ignore[arg-type]


def test_focus_time_model() -> None:
    assert FocusTime.range(2019, 2021) == FocusTime.of(2019, 2020, 2021)
    assert len(FocusTime.decade(1990)) == 10 and 1999 in FocusTime.decade(1990) and 2000 not in FocusTime.decade(1990)
    # |{2020,2021} ∩ {2021,2022}| = 1, union 3
    assert jaccard(FocusTime.of(2020, 2021), FocusTime.of(2021, 2022)) == pytest.approx(1 / 3)
    assert jaccard(FocusTime(), FocusTime()) == 0.0
    assert str(FocusTime.of(1990, 1991, 1995)) == "{1990-1991, 1995}"
    assert as_focus_time(["2008-10", 2015, "1990s"]) == FocusTime.range(2008, 2010) | FocusTime.of(2015) | \
        FocusTime.decade(1990)
    with pytest.raises(InputError, match="ends before it starts"):
        as_focus_time("2010-2005")
    with pytest.raises(InputError, match="expected years"):
        as_focus_time([2020, 3.5])
    with pytest.raises(InputError, match="is not a year"):
        as_focus_time("last year")
    with pytest.raises(InputError, match="a decade starts at a multiple of 10"):
        FocusTime.decade(1995)


def test_explicit_years_ranges_decades_centuries() -> None:
    assert years("Who won the 2014 World Cup?") == {2014}
    assert years("GDP from 1990 to 1993") == {1990, 1991, 1992, 1993}
    assert years("between 2001 and 2003") == {2001, 2002, 2003}
    assert years("the 2019-20 season") == {2019, 2020}
    assert years("the 1990\u201392 recession") == {1990, 1991, 1992}
    assert years("the 1990s") == set(range(1990, 2000))
    assert years("the early 1990s") == {1990, 1991, 1992, 1993}
    assert years("the mid-1980s") == {1984, 1985, 1986}
    assert years("late 1970s") == {1977, 1978, 1979}
    assert years("the 19th century") == set(range(1800, 1900))
    assert years("on 2020-03-15 and 2021-12-01") == {2020, 2021}
    # "2020-12" is not a range (it would end before it starts): the year alone is read
    assert years("in 2020-12") == {2020}
    # "in 1990 and 1995" is two years, not a range
    assert years("in 1990 and 1995") == {1990, 1995}


def test_named_periods_and_user_periods() -> None:
    assert years("What happened during WWII?") == set(range(1939, 1946))
    assert years("World War I and World War II") == set(range(1914, 1919)) | set(range(1939, 1946))
    assert years("the Cold War") == set(range(1947, 1992))
    assert years("the COVID-19 pandemic") == {2020, 2021, 2022, 2023}
    assert years("a pandemic") == set()  # ambiguous, not read
    assert years("the dot-com bubble", periods={"dot-com bubble": "1995-2000"}) == set(range(1995, 2001))
    e = extract_focus_time("During the Great Depression")
    assert [(m.rule, m.note, m.text) for m in e.mentions] == [("period", "Great Depression", "the Great Depression")]


def test_counts_amounts_and_pages_are_not_years() -> None:
    e = extract_focus_time("Published 2024. The 2008 crisis, 1990s boom; page 1234 of 2000 items", kind="document")
    # TempoEval's regex gives {2024, 2008, 1990..1999, 2000}: the publication year and a count join the focus time
    assert e.focus_time == FocusTime.of(2008) | FocusTime.decade(1990)
    assert e.publication_year == 2024
    assert [(m.text, m.note) for m in e.rejected] == [("1234", "follows 'page': a number, not a year"),
                                                       ("2000", "a count of 'items', not a year")]
    assert years("It costs $1999 or 1500 euros, 2000% more, 1,999 units, 2000.5 km") == set()
    assert years("ISO 2022 and RFC 2119") == set()
    # a preposition that introduces years wins over the count noun after the number
    assert years("In 2000 people moved") == {2000}
    # out of the default bounds (1000..2099)
    assert years("in 2150 and 0999") == set()
    assert years("in 2150", year_bounds=(1000, 2200)) == {2150}


def test_publication_year_is_kept_apart() -> None:
    e = extract_focus_time("Posted on March 3, 2021. Copyright 2022. © 2023. The 1929 crash.", kind="document")
    assert e.focus_time == FocusTime.of(1929)
    assert e.publication_year == 2021  # the first one found
    assert [m.text for m in e.publication] == ["Posted on March 3, 2021", "Copyright 2022", "© 2023"]
    # a query has no publication rule: "published in 2021" is what it asks about
    assert years("books published in 2021") == {2021}
    # the caller's publication year wins over the text's and still stays out of the focus time
    e = extract_focus_time("Updated 2020. The 2008 crisis.", kind="document", publication_year=2019)
    assert e.publication_year == 2019 and e.focus_time == FocusTime.of(2008)


def test_relative_expressions_need_an_explicit_reference() -> None:
    with pytest.raises(InputError, match=r"'last year' \(characters 19-28\) is a relative time expression .* "
                                         r"give reference_date="):
        extract_focus_time("What was inflation last year?")
    e = extract_focus_time("What was inflation last year?", unresolved="report")
    assert e.focus_time == FocusTime() and [m.text for m in e.unresolved] == ["last year"]
    # reference 2024: last year 2023; recently 2022..2024; past 3 years 2021..2024; 5 years ago 2019
    assert years("last year", reference_date=REF) == {2023}
    assert years("recently", reference_date=REF) == {2022, 2023, 2024}
    assert years("over the past three years", reference_date="2024-06-01") == {2021, 2022, 2023, 2024}
    assert years("5 years ago", reference_date=2024) == {2019}
    assert years("the last decade", reference_date=REF) == set(range(2014, 2024))
    assert years("next year and this year", reference_date=REF) == {2024, 2025}
    e = extract_focus_time("What happened during WWII and recently?", reference_date=REF)
    assert e.focus_time == FocusTime.range(1939, 1945) | FocusTime.range(2022, 2024)
    assert e.mentions[1].note == "against reference date 2024-06-01"
    # the same query a year later gives the same answer with the same reference: no clock
    assert years("recently", reference_date=dt.datetime(2024, 12, 31, 23, 59)) == {2022, 2023, 2024}


def test_document_relative_expressions_use_the_publication_year() -> None:
    e = extract_focus_time("Published 2015. Sales fell last year.", kind="document", reference_date=REF)
    assert e.focus_time == FocusTime.of(2014)
    assert e.mentions[0].note == "against publication year 2015"
    with pytest.raises(InputError, match="reference_date: expected a date"):
        extract_focus_time("x", reference_date="June 2024")


def test_explain_lists_every_decision_in_text_order() -> None:
    e = extract_focus_time("Published 2024. In 2008; 2000 items; recently; since 2015.", kind="document")
    assert e.explain() == [
        "publication 0-14 publication 'Published 2024' -> {2024}",
        "19-23 year '2008' -> {2008}",
        "rejected 25-29 year '2000' (a count of 'items', not a year)",
        "37-45 relative 'recently' -> {2022-2024} (against publication year 2024)",
        "47-57 open 'since 2015' -> {2015-2024} (since 2015, up to the publication year 2024)",
        "focus time {2008, 2015-2024}; published 2024",
    ]


def test_dateparser_option() -> None:
    pytest.importorskip("dateparser")
    # "a fortnight ago" is dateparser's (the rules read "two weeks ago" themselves)
    e = extract_focus_time("A fortnight ago it may rain; on 3 March 2019", reference_date=REF, use_dateparser=True)
    assert e.focus_time == FocusTime.of(2019, 2024)
    assert [(m.text, m.note) for m in e.rejected] == [("may", "no digit and no relative word: not a date")]
    e = extract_focus_time("A fortnight ago", use_dateparser=True, unresolved="report")
    assert [(m.rule, m.text) for m in e.unresolved] == [("dateparser", "A fortnight ago")]
    with pytest.raises(InputError, match=r"'A fortnight ago' .* relative"):
        extract_focus_time("A fortnight ago", use_dateparser=True)


def test_dateparser_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "dateparser", None)
    monkeypatch.setitem(sys.modules, "dateparser.search", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'gainscope\[temporal\]'"):
        extract_focus_time("in 2020", use_dateparser=True)


@pytest.mark.parametrize(("text", "focus", "published"), [
    # narrative: what the text is about, not when it was published
    ("The novel was published in 1851 by Melville.", {1851}, None),
    ("The rules were updated in 2019 after the 2018 review.", {2018, 2019}, None),
    ("Scientists posted the 2012 results online.", {2012}, None),
    ("Published in 1851, Moby-Dick sold poorly.", {1851}, None),
    # bylines: at the start of the text or of a line, or a copyright notice
    ("Published: 2024\nThe novel was published in 1851 by Melville.", {1851}, 2024),
    ("Published 2024-03-01. The 2008 crisis.", {2008}, 2024),
    ("The 2008 crisis, ten years on.\n  Updated: March 3, 2018", {2008}, 2018),
    ("By Jane Doe | Posted on 3 March 2021\nThe 1929 crash.", {1929}, 2021),
    ("The 1929 crash.\n\u00a9 2020 Acme Corp.", {1929}, 2020),
    ("The 1929 crash. Copyright 2020 Acme Corp. All rights reserved.", {1929}, 2020),
    ("Posted by Jane Doe on March 3, 2021. The 1929 crash.", {1929}, 2021),
])
def test_the_publication_rule_reads_bylines_only(text: str, focus: set[int], published: int | None) -> None:
    e = extract_focus_time(text, kind="document")
    assert (set(e.focus_time.years), e.publication_year) == (focus, published)


def test_copyright_forms() -> None:
    e = extract_focus_time("Copyright \u00a9 2010\u20132020 Acme. The 1929 crash.", kind="document")
    assert (e.publication_year, e.focus_time) == (2020, FocusTime.of(1929))
    e = extract_focus_time("Scores: (a) 2018, (b) 2019, (c) 2020", kind="document")
    assert (e.publication_year, e.focus_time) == (None, FocusTime.of(2018, 2019, 2020))
    e = extract_focus_time("The 1929 crash.\n(c) 2020 Acme", kind="document")
    assert (e.publication_year, e.focus_time) == (2020, FocusTime.of(1929))


@pytest.mark.parametrize(("text", "reference", "expected"), [
    ("yesterday", dt.date(2024, 1, 1), {2023}),
    ("yesterday", dt.date(2024, 1, 2), {2024}),
    ("tomorrow", "2023-12-31", {2024}),
    ("two months ago", dt.date(2024, 1, 15), {2023}),
    ("two months ago", dt.date(2024, 3, 15), {2024}),
    ("3 weeks ago", dt.date(2024, 1, 10), {2023}),
    ("last month", dt.datetime(2024, 1, 31, 23, 0), {2023}),
    ("next month", dt.date(2024, 12, 5), {2025}),
    ("over the past 6 months", dt.date(2024, 3, 1), {2023, 2024}),
    # a year-level expression needs only the year
    ("last year", dt.date(2024, 1, 1), {2023}),
    # a reference known to the year only: a day or month expression may fall in either year
    ("yesterday", 2024, {2023, 2024}),
    ("yesterday", "2024-06", {2024}),
    ("yesterday", "2024-01", {2023, 2024}),
])
def test_relative_expressions_use_the_full_reference_date(text: str, reference: object, expected: set[int]) -> None:
    assert years(text, reference_date=reference) == expected


def test_the_reference_is_named_at_its_precision() -> None:
    e = extract_focus_time("yesterday", reference_date=dt.date(2024, 1, 1))
    assert e.mentions[0].note == "against reference date 2024-01-01" and e.reference_year == 2024
    e = extract_focus_time("yesterday", reference_date=2024)
    assert e.mentions[0].note == "against reference year 2024 (a year-long reference: either year)"
    e = extract_focus_time("Published 2024-01-01. Sales fell yesterday.", kind="document")
    assert e.focus_time == FocusTime.of(2023) and e.mentions[0].note == "against publication date 2024-01-01"
    e = extract_focus_time("Posted on March 3, 2021\nSales fell two months ago.", kind="document")
    assert e.focus_time == FocusTime.of(2021) and e.mentions[0].note == "against publication date 2021-03-03"


def test_dateparser_resolves_against_the_full_reference_date() -> None:
    pytest.importorskip("dateparser")
    # "3 days ago" is read by the rules, "a fortnight ago" by dateparser
    assert years("the storm hit 3 days ago", reference_date=dt.date(2024, 1, 2), use_dateparser=True) == {2023}
    e = extract_focus_time("it snowed a fortnight ago", reference_date=dt.date(2024, 1, 5), use_dateparser=True)
    assert e.focus_time == FocusTime.of(2023), e.explain()


@pytest.mark.parametrize(("text", "expected"), [
    # two-digit and spelled-out decades: the 1930s to the 1990s
    ("What happened in the 80s?", set(range(1980, 1990))),
    ("music of the '90s", set(range(1990, 2000))),
    ("in \u201990s fashion", set(range(1990, 2000))),
    ("the nineties", set(range(1990, 2000))),
    ("the late '70s", {1977, 1978, 1979}),
    ("the early eighties", {1980, 1981, 1982, 1983}),
    ("the noughties", set(range(2000, 2010))),
    ("the Roaring Twenties", set(range(1920, 1930))),
    # hundreds: "the 1800s" is the century, as "the 19th century"; "the 2000s" the decade
    ("the 1800s", set(range(1800, 1900))),
    ("the early 1900s", set(range(1900, 1933))),
    ("the 2000s", set(range(2000, 2010))),
    ("first half of the 20th century", set(range(1900, 1950))),
    ("the late 19th century", set(range(1867, 1900))),
    # ranges
    ("the 1999-00 season", {1999, 2000}),
    ("the 2019/20 season", {2019, 2020}),
    ("between 1990 and 95", set(range(1990, 1996))),
    ("in 1990 and '95", {1990, 1995}),
    ("in 1990 and 95", {1990, 1995}),
    # not ranges
    ("in 2010 to 20 people", {2010}),
    ("in 1990 and 95 people", {1990}),
    ("on 2011/12/05", {2011}),
    ("in 2020-12", {2020}),
    # periods
    ("the Vietnam War", set(range(1955, 1976))),
    ("the Korean War", {1950, 1951, 1952, 1953}),
])
def test_extraction_misses_fixed(text: str, expected: set[int]) -> None:
    assert years(text) == expected, extract_focus_time(text).explain()


@pytest.mark.parametrize(("text", "reason"), [
    ("in his 80s", "an age ('his 80s'), not a decade"),
    ("the 20s", "'20s' may be the 1920s or the 2020s; write the century"),
    ("Room 1205 on floor 3", "follows 'Room': a number, not a year"),
    ("the population was 2000", "follows 'population was': a number, not a year"),
    ("Magna Carta, 1215", "1215 has no year context (outside 1800-2100, and no 'in', 'since', 'year'... before it)"),
])
def test_rejections_say_why(text: str, reason: str) -> None:
    e = extract_focus_time(text)
    assert e.focus_time == FocusTime() and [m.note for m in e.rejected] == [reason], e.explain()


def test_year_context_and_bounds() -> None:
    e = extract_focus_time("The population was 1500 in 1850")
    assert e.focus_time == FocusTime.of(1850) and [m.text for m in e.rejected] == ["1500"]
    # with year context, an old year is read
    assert years("signed in 1215") == {1215}
    assert years("the year 1066") == {1066}
    assert years("Magna Carta, 1215", plain_year_bounds=(1000, 2100)) == {1215}
    assert years("in 1850 and 1215") == {1215, 1850}


def test_open_ended_years() -> None:
    assert years("since 2015", reference_date=REF) == set(range(2015, 2025))
    assert years("after 2015", reference_date=dt.date(2018, 1, 1)) == {2016, 2017, 2018}
    e = extract_focus_time("since 2015")
    assert e.focus_time == FocusTime.of(2015)
    assert e.mentions[0].note == "since 2015, open-ended and no reference date to end it: the first year only"
    e = extract_focus_time("before 1990")
    assert e.focus_time == FocusTime.of(1989)
    assert e.mentions[0].note == "before 1990, open-ended into the past: the year before only"


@pytest.mark.parametrize(("text", "expected"), [
    ("a decade ago", {2014}),
    ("two decades ago", {2004}),
    ("the last two decades", set(range(2004, 2024))),
    ("the past few decades", set(range(1994, 2024))),
    ("in the last few years", set(range(2021, 2025))),
    ("over the past several years", set(range(2019, 2025))),
    ("the last couple of years", set(range(2022, 2025))),
    ("a year ago", {2023}),
    ("several years ago", {2019}),
    # a duration, not a time: "in two years" stays unread
    ("sales doubled in two years", set()),
])
def test_more_relative_expressions(text: str, expected: set[int]) -> None:
    assert years(text, reference_date=REF) == expected


def test_vague_relative_expressions_are_never_silently_empty() -> None:
    with pytest.raises(InputError, match="'a decade ago'"):
        extract_focus_time("a decade ago")
    e = extract_focus_time("in the last few years", unresolved="report")
    assert [m.text for m in e.unresolved] == ["last few years"]


@pytest.mark.parametrize(("text", "expected"), [
    # a number after a year and a comma or "and" is a year only when written '95, or a few years after the first
    ("In 2020, 45 of them left", {2020}),
    ("in 2020 and 45 others", {2020}),
    ("In 2019 and 20 percent", {2019}),
    ("in 1990, '95 and 2001", {1990, 1995, 2001}),
    ("in 1998 and 02", {1998, 2002}),
    # thousands, not years
    ("1000s of people", set()),
])
def test_abbreviated_years_and_thousands_are_not_guessed(text: str, expected: set[int]) -> None:
    assert years(text) == expected, extract_focus_time(text).explain()
