"""Deferred imports and values: what a short command leaves unmade until something asks for it.

Importing polars takes about 0.15 s, scipy more; ``gainscope evaluate`` on two small TREC files needs neither
(the C scanner reads them and numpy computes). Modules that use polars therefore bind it with
:func:`deferred_module`, which returns a stand-in that imports the real module on the first attribute access
(``pl.DataFrame``, ``pl.col``...): importing such a module costs nothing, calling into polars costs what it
always did. Static type checkers see the real module::

    if TYPE_CHECKING:
        import polars as pl
    else:
        pl = deferred_module("polars")

:class:`DeferredSeries` is the same idea for a value: a polars Series (doc ids, for explanations) that is
built only when read.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

__all__ = ["DeferredSeries", "deferred_module"]


class _DeferredModule(types.ModuleType):
    """A module imported on first attribute access; every access then reads the real module's attribute (so a
    test that patches the real module is seen)."""

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attr)


def deferred_module(name: str) -> types.ModuleType:
    """The module ``name`` if it is imported already, else a stand-in that imports it when first used."""
    module = sys.modules.get(name)
    return module if module is not None else _DeferredModule(name)


class DeferredSeries:
    """A polars Series made by ``make()`` on first use, then used as the Series itself: every attribute,
    index, ``len`` and iteration goes to it (``ids.to_list()``, ``ids[2:5]``, ``ids.gather(rows)``)."""

    __slots__ = ("_make", "_series")

    def __init__(self, make: Callable[[], pl.Series]) -> None:
        self._make: Callable[[], pl.Series] | None = make
        self._series: pl.Series | None = None

    @property
    def series(self) -> pl.Series:
        """The Series, made now if it was not yet."""
        if self._series is None:
            assert self._make is not None
            self._series, self._make = self._make(), None
        return self._series

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.series, attr)

    def __getitem__(self, key: Any) -> Any:
        return self.series[key]

    def __len__(self) -> int:
        return len(self.series)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.series)

    def __repr__(self) -> str:
        return repr(self.series) if self._series is not None else "DeferredSeries(not made yet)"
