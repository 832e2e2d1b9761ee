"""Every number option of the command line is a finite number: ``nan`` and ``inf`` (which Python's ``float``
reads, and which every range check lets through, since NaN compares false) are refused as the option's value,
in the option's own name, before anything runs -- never left to a library error in Python spelling
(``the 'max_grade' policy ...``) or, worse, accepted (a NaN budget never stops spending)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from gainscope.cli.common import Number

QRELS = "q1 0 a 1\nq1 0 b 0\n"
RUN = "q1 Q0 a 1 2 r\nq1 Q0 b 2 1 r\n"


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e400"])
@pytest.mark.parametrize(("command", "flag"), [
    ("evaluate", "--max-grade"), ("compare", "--alpha"), ("compare", "--level"), ("fuse", "--rrf-k"),
    ("agreement", "--threshold"), ("pool", "--alpha"),
])
def test_a_number_option_refuses_what_is_not_a_finite_number(cli_runner, tmp_path: Path, command: str, flag: str,
                                                              value: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    code, _, err = cli_runner(command, str(tmp_path / "q"), str(tmp_path / "r"), flag, value)
    assert code == 2
    # -inf under an option's minimum is out of its range first; every other value is not a finite number
    below = value == "-inf" and (command, flag) in {("evaluate", "--max-grade"), ("fuse", "--rrf-k")}
    assert (f"Invalid value for '{flag}': -inf is not in the range" if below else
            f"Invalid value for '{flag}': {value!r} is not a finite number") in err


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_the_relevance_level_is_a_finite_number_or_positive(cli_runner, tmp_path: Path, value: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    code, _, err = cli_runner("evaluate", str(tmp_path / "q"), str(tmp_path / "r"), "-l", value)
    assert code == 2
    assert (f"Invalid value for '-l' / '--relevance-level': expected a number or 'positive' (any grade > 0); got "
            f"{value!r}") in err


def test_number_keeps_its_range_and_reads_numbers() -> None:
    number = Number(min=0, min_open=True)
    assert number.convert("0.5", None, None) == 0.5 and number.convert(2, None, None) == 2.0
    with pytest.raises(click.BadParameter, match=r"^-1\.0 is not in the range x>0\.$"):
        number.convert("-1", None, None)
    with pytest.raises(click.BadParameter, match=r"^'x' is not a valid number\.$"):
        number.convert("x", None, None)
    assert Number()._describe_range() == "" and Number(min=0)._describe_range() == "x>=0"
