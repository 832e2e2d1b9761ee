"""Request templates: ``{{query}}``, ``{{top}}``, ``{{knob}}``, ``{{opt.x}}`` and ``{{env.NAME}}`` placeholders,
escaped for where they land.

A template is a string with placeholders ``{{ name }}`` (spaces inside the braces are allowed):

* ``{{query}}``: the query text;
* ``{{top}}``: the number of results asked for (``--top``);
* ``{{knob}}``: a tuning knob of the engine (``[engines.NAME.knobs]``, overridden by ``--set knob=value``);
* ``{{opt.x}}`` (or ``{{opt.x.y}}``): a per-query option, from the queries file's ``options`` object or a case
  query's ``options``;
* ``{{env.NAME}}``: the environment variable ``NAME``, allowed only in headers and parameters (credentials).

Where a placeholder lands decides how its value is written (:class:`Context`):

* ``json``, a request body: inside a JSON string literal the value is escaped as JSON string content
  (``"a \\"quoted\\" word"``); outside a string it is written as a JSON value -- a number or boolean as is, a
  text as a quoted JSON string -- so ``"boost": {{title_boost}}`` gives ``"boost": 2`` and
  ``"query": "{{query}}"`` never breaks out of its string. The whole body must then parse as JSON;
* ``url``: the value is percent-encoded (every reserved character, ``/`` included), so it stays one path segment;
* ``text``: parameters and headers, written as text (parameters are URL-encoded when the request is sent; a header
  value may not hold a line break or a control character).

Values are written as text like this: ``true``/``false`` for booleans, the shortest round-trip form for floats
(``1.5``, ``2.0``), integers in decimal, ``null`` as an empty text (in JSON, outside a string, ``null``).

Templates are parsed once (:func:`parse`): an unclosed ``{{``, an empty or malformed name, and a name that is
not ``query``, ``top``, a knob, ``opt.*`` or (where allowed) ``env.*`` are errors naming the engine, the key and
the fix, before anything is sent.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any
from urllib.parse import quote

from gainscope.errors import EngineConfigError

__all__ = ["Context", "Placeholder", "Template", "as_text", "parse", "parse_value"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*")
_OPEN = "{{"
_CLOSE = "}}"
BUILTINS = ("query", "top")


class Context(Enum):
    """Where a template's output goes, which decides the escaping (see the module docstring)."""

    JSON = "json"
    URL = "url"
    TEXT = "text"


@dataclass(frozen=True)
class Placeholder:
    """One ``{{name}}`` of a template: its name, its offset in the template, and (in JSON) whether it sits inside a
    string literal."""

    name: str
    offset: int
    in_string: bool = False

    @property
    def kind(self) -> str:
        """``query``, ``top``, ``knob``, ``opt`` or ``env``."""
        if self.name in BUILTINS:
            return self.name
        head = self.name.split(".", 1)[0]
        return head if head in ("opt", "env") and "." in self.name else "knob"


@dataclass(frozen=True)
class Template:
    """A parsed template: the literal pieces between placeholders, and the placeholders."""

    text: str
    context: Context
    where: str
    pieces: tuple[str, ...]
    placeholders: tuple[Placeholder, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The placeholder names, in order, each once."""
        return tuple(dict.fromkeys(p.name for p in self.placeholders))

    def render(self, values: Callable[[Placeholder], Any]) -> str:
        """The template with each placeholder replaced by ``values(placeholder)``, escaped for the context."""
        out = [self.pieces[0]]
        for placeholder, piece in zip(self.placeholders, self.pieces[1:], strict=True):
            out.append(_escape(values(placeholder), self.context, placeholder.in_string))
            out.append(piece)
        return "".join(out)


def parse(text: str, context: Context, *, where: str, engine: str, knobs: Iterable[str],
          env_allowed: bool = False) -> Template:
    """Parse ``text`` (the value of the key ``where`` of engine ``engine``) and check every placeholder name."""
    known = list(knobs)
    pieces: list[str] = []
    placeholders: list[Placeholder] = []
    position = 0
    while (start := text.find(_OPEN, position)) >= 0:
        end = text.find(_CLOSE, start + 2)
        if end < 0:
            raise EngineConfigError(f"engine {engine!r}: {where} has an unclosed '{{{{' at character {start + 1} "
                                    f"({_around(text, start)}); close it with '}}}}'")
        name = text[start + 2:end].strip()
        if not _NAME.fullmatch(name):
            raise EngineConfigError(f"engine {engine!r}: {where} has a placeholder {text[start:end + 2]!r} at "
                                    f"character {start + 1} that is not a name; use {{{{query}}}}, {{{{top}}}}, a "
                                    "knob such as {{title_boost}}, {{opt.NAME}} or {{env.NAME}}")
        pieces.append(text[position:start])
        placeholders.append(Placeholder(name, start))
        position = end + 2
    pieces.append(text[position:])
    template = Template(text, context, where, tuple(pieces), tuple(placeholders))
    if context is Context.JSON:
        template = _mark_strings(template, engine)
    for p in template.placeholders:
        _check_name(p, template, engine, known, env_allowed)
    return template


def _around(text: str, offset: int) -> str:
    return repr(text[max(0, offset - 15):offset + 25])


def _check_name(p: Placeholder, template: Template, engine: str, knobs: list[str], env_allowed: bool) -> None:
    kind = p.kind
    if kind == "env" and not env_allowed:
        raise EngineConfigError(f"engine {engine!r}: {template.where} uses {{{{{p.name}}}}}; environment variables "
                                "(credentials) may be used only in headers and params, so that they are never "
                                "written into a snapshot's URL or body")
    if kind != "knob" or p.name in knobs:
        return
    close = difflib.get_close_matches(p.name, [*knobs, *BUILTINS], n=1)
    hint = f"did you mean {{{{{close[0]}}}}}? " if close else ""
    listed = ", ".join(knobs) if knobs else "none"
    raise EngineConfigError(f"engine {engine!r}: {template.where} uses {{{{{p.name}}}}}, which is not query, top, "
                            f"opt.NAME or a knob; {hint}Declare it under [engines.{engine}.knobs] (knobs: {listed})")


def _mark_strings(template: Template, engine: str) -> Template:
    """The template with each placeholder marked as inside or outside a JSON string literal."""
    marked: list[Placeholder] = []
    inside = False
    escaped = False
    for index, piece in enumerate(template.pieces):
        for character in piece:
            if escaped:
                escaped = False
            elif inside and character == "\\":
                escaped = True
            elif character == '"':
                inside = not inside
        if index < len(template.placeholders):
            p = template.placeholders[index]
            if escaped:
                raise EngineConfigError(f"engine {engine!r}: {template.where} has a backslash right before "
                                        f"{{{{{p.name}}}}} ({_around(template.text, p.offset)}); the value is escaped "
                                        "for you, so remove the backslash")
            marked.append(Placeholder(p.name, p.offset, inside))
    if inside:
        raise EngineConfigError(f"engine {engine!r}: {template.where} has a JSON string that is never closed (an odd "
                                "number of '\"'); it must be a JSON document with placeholders")
    return Template(template.text, template.context, template.where, template.pieces, tuple(marked))


def as_text(value: Any) -> str:
    """A value written as text: ``true``/``false``, shortest round-trip floats, decimal integers, '' for None."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} is not a finite number")
        return repr(value)
    if isinstance(value, str | int):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _escape(value: Any, context: Context, in_string: bool) -> str:
    if context is Context.URL:
        return quote(as_text(value), safe="")
    if context is Context.TEXT:
        return as_text(value)
    if in_string:
        return json.dumps(as_text(value), ensure_ascii=False)[1:-1]
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} is not a finite number")
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def parse_value(text: str) -> Any:
    """A knob value given as text (``--set k=v``, ``--grid k=1,2``): a JSON number, ``true``/``false`` or
    ``null`` when it reads as one, otherwise the text itself."""
    stripped = text.strip()
    if stripped in ("true", "false", "null") or re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", stripped):
        value = json.loads(stripped)
        if isinstance(value, float) and value.is_integer() and "." not in stripped and "e" not in stripped.lower():
            return int(value)
        return value
    return text


def lookup_option(options: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    """``(found, value)`` of ``opt.a.b`` in a query's options (``path`` is ``a.b``)."""
    current: Any = options
    for part in path.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return False, None
        current = current[part]
    return True, current
