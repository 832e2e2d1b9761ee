"""The metric name grammar, ir_measures style, parsed by hand (no borrowing of Python's parser)::

    metric  := NAME [ "(" param { "," param } ")" ] [ "@" value ]
    param   := KEY "=" value
    value   := number | quoted string | bare word | "{" value ":" value { "," ... } "}"
             | "(" value { "," value } ")"

Examples: ``nDCG@10``, ``P(rel=2)@5``, ``RR@10``, ``AP``, ``nDCG(gain=exponential, ideal=retrieved)@3``,
``nDCG(gain={1: 3, 2: 9})``, ``RBP(p=0.8)``. Bare words are strings (``exponential``); ``true``/``false``
are booleans; ``none`` is None.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from gainscope.errors import InvalidParameterError, MetricSyntaxError
from gainscope.metrics.base import Metric
from gainscope.metrics.registry import lookup

__all__ = ["build_metric", "metric_parts", "parse_metric"]

_FORM = "Expected form: Name(key=value, ...)@cutoff"


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    # -- helpers
    def error(self, what: str, at: int | None = None) -> MetricSyntaxError:
        at = self.pos if at is None else at
        return MetricSyntaxError(f"cannot parse metric {self.text!r} at position {at}: {what}. {_FORM}",
                                 text=self.text, position=at)

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_ws()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            got = repr(self.text[self.pos]) if self.pos < len(self.text) else "end of text"
            raise self.error(f"expected {ch!r}, got {got}")
        self.pos += 1

    def word(self) -> str:
        self.skip_ws()
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] in "_-.+"):
            self.pos += 1
        return self.text[start:self.pos]

    # -- grammar
    def metric(self) -> tuple[str, dict[str, Any], Any, bool]:
        self.skip_ws()
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] == "_"):
            self.pos += 1
        name = self.text[start:self.pos]
        if not name:
            raise self.error("expected a metric name")
        params: dict[str, Any] = {}
        if self.peek() == "(":
            self.pos += 1
            if self.peek() != ")":
                while True:
                    key_at = self.pos
                    self.skip_ws()
                    key_at = self.pos
                    key = self.word()
                    if not key.isidentifier():
                        raise self.error("expected a parameter name", key_at)
                    if key in params:
                        raise self.error(f"parameter {key!r} given twice", key_at)
                    self.expect("=")
                    params[key] = self.value()
                    if self.peek() == ",":
                        self.pos += 1
                        continue
                    break
            self.expect(")")
        at_value: Any = None
        has_at = False
        if self.peek() == "@":
            self.pos += 1
            at_value = self.value()
            has_at = True
        if self.peek():
            raise self.error(f"unexpected {self.text[self.pos]!r}")
        return name, params, at_value, has_at

    def value(self) -> Any:
        ch = self.peek()
        if ch in ("'", '"'):
            end = self.text.find(ch, self.pos + 1)
            if end < 0:
                raise self.error("unterminated string")
            out = self.text[self.pos + 1:end]
            self.pos = end + 1
            return out
        if ch == "{":
            self.pos += 1
            mapping: dict[Any, Any] = {}
            if self.peek() != "}":
                while True:
                    k = self.value()
                    self.expect(":")
                    mapping[k] = self.value()
                    if self.peek() == ",":
                        self.pos += 1
                        continue
                    break
            self.expect("}")
            return mapping
        if ch == "(":
            self.pos += 1
            items = []
            if self.peek() != ")":
                while True:
                    items.append(self.value())
                    if self.peek() == ",":
                        self.pos += 1
                        if self.peek() == ")":
                            break
                        continue
                    break
            self.expect(")")
            return tuple(items)
        at = self.pos
        token = self.word()
        if not token:
            raise self.error("expected a value" if ch else "expected a value, got end of text", at)
        return _literal(token)


def _literal(token: str) -> Any:
    low = token.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    try:
        return int(token)
    except ValueError:
        pass
    try:
        return float(token)
    except ValueError:
        return token


def parse_metric(text: str) -> Metric:
    """Parse a metric string in ir_measures style into a metric object.

    >>> str(parse_metric("nDCG@10"))
    'nDCG@10'
    >>> str(parse_metric("P(rel=2)@5"))
    'P(rel=2)@5'
    """
    name, params, at_value, has_at = metric_parts(text)
    return build_metric(lookup(name), params, at_value, has_at, text)


def metric_parts(text: str) -> tuple[str, dict[str, Any], Any, bool]:
    """The parts of a metric string, checked for syntax only: the name as written, the parameters given in
    brackets, the ``@`` value and whether there was one (profiles resolve names and add parameters between
    this and :func:`build_metric`)."""
    if not isinstance(text, str):
        raise MetricSyntaxError(f"a metric name must be a string; got {text!r}", text=repr(text), position=0)
    return _Parser(text).metric()


def build_metric(cls: type[Metric], params: dict[str, Any], at_value: Any, has_at: bool, text: str) -> Metric:
    """The metric of class ``cls`` with ``params`` and the ``@`` value, each checked against its declaration
    (``text`` is the metric string, for messages)."""
    known = [f.name for f in fields(cls)]
    at_name = cls.at_param()
    kwargs = dict(params)
    if has_at:
        if at_name is None:
            raise InvalidParameterError(f"{cls.name} takes no @ value; got {text!r}.")
        if at_name in kwargs:
            raise InvalidParameterError(f"{at_name!r} given twice in {text!r} (as a parameter and after @).")
        kwargs[at_name] = at_value
    for key in kwargs:
        if key not in known:
            accepted = ", ".join(known) if known else "none"
            raise InvalidParameterError(
                f"{cls.name} has no parameter {key!r}; its parameters are: {accepted}.")
    return cls(**kwargs)
