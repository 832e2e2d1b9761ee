"""Objects named ``module:attribute`` (a Python scorer, a Python search engine), imported on request."""

from __future__ import annotations

import importlib
from typing import Any

from gainscope.errors import InputError

__all__ = ["load_object"]


def load_object(spec: str, what: str) -> Any:
    """The object ``spec`` names, ``module:attribute`` (the attribute may be dotted: ``module:Class.method``);
    ``what`` names it in errors ("scorer", "engine")."""
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"{what} {spec!r}: cannot import module {module_name!r} ({exc}); is it on PYTHONPATH?") \
            from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InputError(f"{what} {spec!r}: module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj
