"""The C scanner's table of code points that need no NFC check (NFC_SAFE in src/gainscope/_scan.c): every code
point it lists is one whose every string is in NFC, derived here from Python's own Unicode database. An id made of
such code points (and ASCII) is not sent to Python's NFC check; a wrong entry would hide the readers' warning about
an id not in NFC, so each entry is checked."""

from __future__ import annotations

import itertools
import re
import unicodedata
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "src" / "gainscope" / "_scan.c"


def _table() -> list[tuple[int, int]]:
    text = SOURCE.read_text(encoding="utf-8")
    body = text[text.index("NFC_SAFE[][2] = {"):]
    body = body[: body.index("};")]
    return [(int(a, 16), int(b, 16)) for a, b in re.findall(r"\{0x([0-9A-F]+), 0x([0-9A-F]+)\}", body)]


def _second_of_a_composition() -> set[int]:
    """Code points that may compose with what precedes them (NFC quick check "Maybe"): the second of every
    canonical two-character decomposition, and the Hangul vowel and trailing jamo."""
    seconds = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    for cp in range(0x110000):
        parts = unicodedata.decomposition(chr(cp)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            seconds.add(int(parts[1], 16))
    return seconds


def test_every_code_point_of_the_table_keeps_any_string_in_nfc() -> None:
    table = _table()
    assert table and all(a <= b for a, b in table)
    assert all(b < c for (_, b), (c, _) in itertools.pairwise(table))  # sorted, apart: binary search
    seconds = _second_of_a_composition()
    for a, b in table:
        for cp in range(a, b + 1):
            ch = chr(cp)
            assert unicodedata.combining(ch) == 0, hex(cp)
            assert unicodedata.normalize("NFC", ch) == ch, hex(cp)
            assert cp not in seconds, hex(cp)
            assert not 0xD800 <= cp <= 0xDFFF and not 0x80 <= cp < 0xA0, hex(cp)
