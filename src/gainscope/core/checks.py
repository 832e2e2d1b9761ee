"""Checks shared by the data model and the readers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gainscope.deferred import deferred_module

if TYPE_CHECKING:
    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = ["has_duplicate_pairs"]

_PAIR = ("query_id", "doc_id")


def has_duplicate_pairs(frame: pl.DataFrame) -> bool:
    """True when a (query_id, doc_id) pair repeats. Counting distinct hashes rules most inputs out in one
    multi-threaded pass; only a hash collision or a real duplicate pays for the exact check."""
    if frame.height < 2:
        return False
    if frame.select(pl.struct(_PAIR).hash().n_unique()).item() == frame.height:
        return False
    return bool(frame.select(pl.struct(_PAIR).is_duplicated().any()).item())
