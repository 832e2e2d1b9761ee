"""The error of :mod:`gainscope.cases`, :class:`~gainscope.errors.ScorerError` (declared in :mod:`gainscope.errors`
with every other; importable from here as before)."""

from __future__ import annotations

from gainscope.errors import ScorerError

__all__ = ["ScorerError"]
