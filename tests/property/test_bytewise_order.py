"""Query ids are ordered as trec_eval orders them, by their UTF-8 bytes (strcmp); judged_run sorts them as Python
compares strings, by code points, without encoding them: the same order, surrogates (ids read with
surrogateescape) included."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gainscope.core.judged_run import _bytewise_order, _bytewise_sorted

IDS = st.lists(st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()), max_size=4),
               max_size=30)


@settings(max_examples=500, derandomize=True, database=None, deadline=None)
@given(ids=IDS)
def test_code_point_order_is_utf8_byte_order(ids: list[str]) -> None:
    by_bytes = sorted(ids, key=lambda s: s.encode("utf-8", "surrogatepass"))
    assert _bytewise_sorted(ids) == by_bytes
    assert [ids[i] for i in _bytewise_order(ids)] == by_bytes


def test_surrogates_sort_between_the_basic_plane_and_the_others() -> None:
    ids = ["\U00010000", "\ue000", "\udc80", "\ud7ff", "a"]
    assert _bytewise_sorted(ids) == sorted(ids, key=lambda s: s.encode("utf-8", "surrogatepass"))
