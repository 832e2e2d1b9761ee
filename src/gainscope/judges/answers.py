"""Reading a judge's answer strictly: a grade on the scale, or an error carrying the raw text; never a guess.

Accepted: one JSON object, optionally inside a Markdown code fence (```json ... ```) and optionally surrounded by
text that contains no other brace, with an integer grade under ``grade`` (also ``relevance_score``, ``score`` or
``relevance``, for prompts written for other tools) and an optional string ``reasoning``. The grade may be a JSON
integer, a number with an integral value (``2.0``), or a string holding an integer (``"2"``); it must lie on the
judge's scale. Anything else -- no JSON, several objects, no grade, ``2.5``, ``true``, ``7`` on a 0-4 scale --
raises :class:`~gainscope.errors.JudgeAnswerError`, which the judge retries and finally records as a failure.
"""

from __future__ import annotations

import json
import math
import re

from gainscope.errors import JudgeAnswerError
from gainscope.judges.prompts import Scale

__all__ = ["GRADE_KEYS", "parse_answer"]

GRADE_KEYS = ("grade", "relevance_score", "score", "relevance")
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.S)


def _json_object(text: str) -> dict[str, object]:
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced is not None:
        body = fenced[1].strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        raise JudgeAnswerError("the answer holds no JSON object", raw=text)
    try:
        value = json.loads(body[start:end + 1])
    except json.JSONDecodeError as exc:
        raise JudgeAnswerError(f"the answer is not valid JSON ({exc.msg} at character {exc.pos})", raw=text) from None
    if not isinstance(value, dict):
        raise JudgeAnswerError("the answer's JSON is not an object", raw=text)
    return value


def _integer(value: object, raw: str) -> int:
    if isinstance(value, bool):
        raise JudgeAnswerError(f"the grade is a boolean ({value}), not a number", raw=raw)
    # ASCII digits only: not full-width or Arabic-Indic ones
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value, re.ASCII):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    raise JudgeAnswerError(f"the grade {value!r} is not an integer", raw=raw)


def parse_answer(text: str, scale: Scale) -> tuple[int, str]:
    """``(grade, reasoning)`` from an answer, or JudgeAnswerError saying what is wrong."""
    obj = _json_object(text)
    keys = [k for k in GRADE_KEYS if k in obj]
    if not keys:
        raise JudgeAnswerError(f"the answer has no grade (expected a key {', '.join(GRADE_KEYS)}); keys: "
                               f"{', '.join(map(str, obj)) or 'none'}", raw=text)
    grades = {k: _integer(obj[k], text) for k in keys}
    if len(set(grades.values())) > 1:
        shown = ", ".join(f"{k} = {v}" for k, v in grades.items())
        raise JudgeAnswerError(f"the answer gives two different grades ({shown})", raw=text)
    grade = grades[keys[0]]
    if grade not in scale.grades:
        raise JudgeAnswerError(f"the grade {grade} is outside the scale {scale}", raw=text)
    reasoning = obj.get("reasoning")
    if reasoning is None:
        return grade, ""
    return grade, reasoning if isinstance(reasoning, str) else json.dumps(reasoning)
