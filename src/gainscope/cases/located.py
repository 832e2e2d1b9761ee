"""JSON and YAML documents whose mappings know the line they start on, so that every error in a case file or
an imported file can name ``file:line``.

:func:`load_json` and :func:`load_yaml` return plain lists and scalars and :class:`LocatedDict` mappings
(a ``dict`` with a ``line`` attribute). A key repeated within one mapping is an error (JSON would silently keep
the last one). YAML needs PyYAML; without it :func:`load_yaml` raises
:class:`~gainscope.errors.MissingDependencyError`.
"""

from __future__ import annotations

import bisect
import json
import json.decoder
import json.scanner
from collections.abc import Callable, Iterable
from typing import Any

from gainscope.errors import FormatError, MissingDependencyError

__all__ = ["LocatedDict", "line_of", "load_json", "load_yaml"]


class LocatedDict(dict[str, Any]):
    """A mapping read from a file; ``line`` is the 1-based line where it starts."""

    line: int | None = None


def line_of(obj: Any) -> int | None:
    """The line an object was read from (None for non-mappings)."""
    return getattr(obj, "line", None)


def _located(pairs: list[tuple[str, Any]], line: int, path: str) -> LocatedDict:
    out = LocatedDict()
    out.line = line
    for key, value in pairs:
        if key in out:
            raise FormatError(f"key {key!r} appears twice in the same object", path=path, line=line)
        out[key] = value
    return out


def load_json(text: str, path: str) -> Any:
    """Parse JSON text; mappings become :class:`LocatedDict`; syntax errors become FormatErrors."""
    newlines = [i for i, ch in enumerate(text) if ch == "\n"]
    decoder = json.JSONDecoder()
    plain_object: Any = getattr(json.decoder, "JSONObject")  # noqa: B009 - untyped in typeshed

    def parse_object(s_and_end: tuple[str, int], strict: bool, scan_once: Any, object_hook: Any,
                     object_pairs_hook: Any, memo: Any = None) -> tuple[LocatedDict, int]:
        start = s_and_end[1] - 1
        pairs, end = plain_object(s_and_end, strict, scan_once, None, list, memo)
        return _located(pairs, bisect.bisect_right(newlines, start) + 1, path), end

    scanner: Any = json.scanner
    patched: Any = decoder
    patched.parse_object = parse_object
    patched.scan_once = scanner.py_make_scanner(decoder)  # the pure-Python scanner calls parse_object
    body = text.lstrip("\ufeff")
    start = len(body) - len(body.lstrip())
    try:
        obj, end = decoder.raw_decode(body, start)
    except json.JSONDecodeError as exc:
        raise FormatError(f"invalid JSON: {exc.msg} (column {exc.colno})", path=path, line=exc.lineno) from None
    if body[end:].strip():
        line = body.count("\n", 0, end) + 1
        raise FormatError("invalid JSON: extra data after the document", path=path, line=line)
    return obj


def load_yaml(text: str, path: str, *, text_nodes: Callable[[Any], Iterable[Any]] | None = None) -> Any:
    """Parse YAML text (safe loader); mappings become :class:`LocatedDict`.

    ``text_nodes`` receives the composed document (PyYAML nodes) and names the plain scalars to read as the
    text written, whatever YAML would make of them (``007`` stays ``"007"``, not 7; ``0x1F`` not 31; ``12:30``
    not 750; ``yes`` not True): identifiers, which must never be converted.
    """
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        raise MissingDependencyError(f"{path}: reading YAML needs PyYAML; pip install pyyaml, or write the case "
                                     f"as JSON") from None

    class Loader(yaml.SafeLoader):  # type: ignore[misc]
        pass

    def mapping(loader: Any, node: Any) -> LocatedDict:
        loader.flatten_mapping(node)
        pairs = loader.construct_pairs(node, deep=True)
        return _located([(str(k), v) for k, v in pairs], node.start_mark.line + 1, path)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    loader = Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        for node in text_nodes(root) if text_nodes is not None else ():
            if isinstance(node, yaml.ScalarNode) and node.style is None:  # plain (unquoted) scalars only
                node.tag = yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG
        return loader.construct_document(root)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise FormatError(f"invalid YAML: {getattr(exc, 'problem', None) or exc}", path=path,
                          line=mark.line + 1 if mark is not None else None) from None
    finally:
        loader.dispose()
