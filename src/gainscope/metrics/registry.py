"""The registry of metric classes, keyed by canonical name; aliases resolve to canonical names.

Registration is explicit (the :func:`register` decorator) and a name registered twice is an error, never a
silent overwrite. Third-party packages can register metrics through the ``gainscope.metrics`` entry-point
group.

The built-in families register when first needed: a name of
:data:`~gainscope.metrics.families.HOMES` imports its family alone; any other name, and the list of every
metric, import them all (then the plugins).
"""

from __future__ import annotations

import difflib
import importlib
import re
from collections.abc import Iterable
from dataclasses import fields
from typing import TypeVar

from gainscope.errors import GainscopeError, UnknownMetricError
from gainscope.metrics.base import Metric

__all__ = ["all_metric_classes", "lookup", "register"]

_REGISTRY: dict[str, type[Metric]] = {}
_ALIASES: dict[str, str] = {}

M = TypeVar("M", bound=type[Metric])


def register(cls: M) -> M:
    """Class decorator: add a metric class to the registry under its name and aliases."""
    for key in (cls.name, *cls.aliases):
        owner = _REGISTRY.get(key) or (_REGISTRY.get(_ALIASES[key]) if key in _ALIASES else None)
        if owner is not None:
            raise GainscopeError(f"metric name {key!r} is already registered by "
                                 f"{owner.__module__}.{owner.__qualname__}")
    _REGISTRY[cls.name] = cls
    for alias in cls.aliases:
        _ALIASES[alias] = cls.name
    return cls


def lookup(name: str, *, also: Iterable[str] = ()) -> type[Metric]:
    """The metric class for a canonical name or alias; UnknownMetricError with close matches otherwise.

    ``also`` are more names the caller knows (a profile's: ``NDCG_CUT``, ``v1``), offered as close matches
    too. A name that differs from a known one only in case gets that one alone (``ap``: ``AP``; ``ndcg_cut``:
    ``NDCG_CUT``). A name that is a known one with a number glued on (``NDCG10``, ``P_5``, ``map10``) is
    suggested in the ``@`` form (``nDCG@10``), when the metric takes an integer after ``@``. Plugins are
    loaded when a name is not a built-in metric's (reading every installed package's entry points takes
    longer than evaluating a small run).
    """
    _load_home(name)
    if name not in _REGISTRY and name not in _ALIASES:
        _load_builtin()
    if name not in _REGISTRY and name not in _ALIASES:
        _load_plugins()
    found = _find(name)
    if found is not None:
        return found
    glued = re.fullmatch(r"(.*?[A-Za-z])[_.-]?(\d+)", name)
    base = _find(glued.group(1), any_case=True) if glued else None
    if glued and base is not None and _int_at(base):
        close = [f"{base.name}@{int(glued.group(2))}"]
    else:
        candidates = list(_REGISTRY) + list(_ALIASES) + [n for n in also if n not in _REGISTRY and n not in _ALIASES]
        same = [c for c in candidates if c.lower() == name.lower()]
        close = same[:1] or difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise UnknownMetricError(f"unknown metric {name!r}.{hint} Run `gainscope metrics` to list every metric.")


def _find(name: str, *, any_case: bool = False) -> type[Metric] | None:
    """The class registered under ``name`` (a canonical name or an alias; in any letter case when asked and
    only one name matches)."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    if name in _ALIASES:
        return _REGISTRY[_ALIASES[name]]
    if any_case:
        owners = {c for key, c in [*_REGISTRY.items(), *((a, _REGISTRY[n]) for a, n in _ALIASES.items())]
                  if key.lower() == name.lower()}
        if len(owners) == 1:
            return owners.pop()
    return None


def _int_at(cls: type[Metric]) -> bool:
    """The metric takes an integer after ``@`` (a rank cutoff)."""
    at = cls.at_param()
    return at is not None and any(f.name == at and f.metadata.get("kind") == "int" for f in fields(cls))


def all_metric_classes() -> list[type[Metric]]:
    """Every registered metric class: the built-in families in the order of
    :data:`~gainscope.metrics.families.NAMES` (each in the order of its module), then the plugins' in
    registration order, whichever were looked up first."""
    from gainscope.metrics.families import MODULES

    _load_builtin()
    _load_plugins()
    rank = {module: i for i, module in enumerate(MODULES)}
    # a stable sort: within a module (and among the plugins), registration order
    return sorted(_REGISTRY.values(), key=lambda cls: rank.get(cls.__module__, len(rank)))


_loaded = False
_plugins_loaded = False


def _load_home(name: str) -> None:
    """Import the family of a built-in metric's name or alias (nothing for other names)."""
    from gainscope.metrics.families import HOMES

    if name in HOMES and name not in _REGISTRY and name not in _ALIASES:
        importlib.import_module(HOMES[name])


def _load_builtin() -> None:
    """Import every built-in family (:data:`gainscope.metrics.families.MODULES`)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    from gainscope.metrics.families import MODULES

    for module in MODULES:
        importlib.import_module(module)


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    try:
        from importlib.metadata import entry_points

        for ep in entry_points(group="gainscope.metrics"):
            ep.load()
    except Exception as exc:  # a broken plugin must not break the built-in metrics
        raise GainscopeError(f"a gainscope.metrics plugin failed to load: {exc}") from exc
