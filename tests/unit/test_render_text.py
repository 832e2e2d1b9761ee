"""render/text.py: the CSV-injection guard of every CSV gainscope writes (OWASP: text that a spreadsheet
would run as a formula gets a leading single quote; numbers and non-text cells are left alone), and numbers
too large for 4 decimals to mean anything."""

from __future__ import annotations

import pytest

from gainscope.render.text import csv_cell, csv_text


@pytest.mark.parametrize(("cell", "written"), [
    ("=1+1", "'=1+1"),
    ("+cmd", "'+cmd"),
    ("-2+3", "'-2+3"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"),
    ("\rx", "'\rx"),
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
    ("-", "'-"),
    # numbers stay numbers, whatever their sign or form
    ("-0.5", "-0.5"), ("+3", "+3"), ("-1e-3", "-1e-3"), ("-.5", "-.5"), ("-inf", "-inf"), ("-12", "-12"),
    # other text is untouched, including formula characters further in
    ("q1", "q1"), ("a=b", "a=b"), (" =1", " =1"), ("", ""),
])
def test_csv_cell(cell, written):
    assert csv_cell(cell) == written


def test_non_text_cells_are_left_alone():
    assert csv_cell(-1) == -1 and csv_cell(-0.5) == -0.5 and csv_cell(None) is None


def test_csv_text_guards_every_row():
    assert csv_text([["id", "value"], ["=1+1", "-0.5"], ["q", -2]]) == "id,value\n'=1+1,-0.5\nq,-2\n"


def test_numbers_beyond_float64_precision_display_in_exponent_form():
    from gainscope.render.text import fmt_number

    assert fmt_number(2.0 ** 1000) == "1.0715e+301"
    assert fmt_number(123456789012345.0) == "123456789012345.0000"  # below 1e15: decimals as usual
    assert fmt_number(-1e15) == "-1.0000e+15"
