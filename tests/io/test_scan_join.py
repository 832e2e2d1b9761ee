"""``_scan.join_blocks``: the per-hit arrays of a run scanned in parts, joined. The first part's memory is taken
over (grown, not copied) only when it is a Block that nothing views; anything viewed is copied and left intact."""

from __future__ import annotations

import pytest

from gainscope.io.scan import native_available

pytestmark = pytest.mark.skipif(not native_available(), reason="the C scanner is not built")


def block(data: bytes):  # type: ignore[no-untyped-def]
    """A Block (the scanner's output type) holding ``data``: join_blocks of one part copies it into one."""
    from gainscope import _scan  # type: ignore[attr-defined]

    return _scan.join_blocks([data])


def test_parts_are_joined_in_order() -> None:
    from gainscope import _scan  # type: ignore[attr-defined]

    assert bytes(_scan.join_blocks([b"ab", bytearray(b"cd"), memoryview(b"e"), b""])) == b"abcde"
    assert bytes(_scan.join_blocks([])) == b""


def test_a_first_block_nothing_views_is_taken_over_and_left_empty() -> None:
    from gainscope import _scan  # type: ignore[attr-defined]

    first = block(b"abc")
    assert bytes(_scan.join_blocks([first, b"de", block(b"f")])) == b"abcdef"
    assert bytes(first) == b""


def test_a_viewed_block_is_copied_and_kept() -> None:
    from gainscope import _scan  # type: ignore[attr-defined]

    first = block(b"abc")
    view = memoryview(first)
    assert bytes(_scan.join_blocks([first, b"de"])) == b"abcde"
    assert bytes(view) == b"abc" and bytes(first) == b"abc"
    view.release()
    assert bytes(_scan.join_blocks([first, first])) == b"abcabc"  # the same Block twice: viewed, so copied
    assert bytes(first) == b"abc"


def test_anything_but_buffers_is_refused() -> None:
    from gainscope import _scan  # type: ignore[attr-defined]

    first = block(b"abc")
    with pytest.raises(TypeError):
        _scan.join_blocks([first, 1])
    assert bytes(first) == b"abc"  # nothing taken over
    with pytest.raises(TypeError, match="sequence of buffers"):
        _scan.join_blocks(3)
