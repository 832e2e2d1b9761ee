"""When to retry an HTTP request and how long to wait first.

* :data:`RETRYABLE_STATUSES`: 408 Request Timeout, 409 Conflict, 429 Too Many Requests and every 5xx status
  (500-599: 500, 502, 503, 504, the 520-530 of Cloudflare and other proxies, 529 "overloaded", ...) except 501 Not
  Implemented and 505 HTTP Version Not Supported, which are permanent. Timeouts and refused, reset or dropped
  connections are retried too (the callers decide that from the exception).
* :func:`retry_after_seconds`: the wait a response asks for, from ``retry-after-ms`` or ``Retry-After`` (seconds
  or an HTTP date; RFC 9110 section 10.2.3).
* :func:`backoff_delay`: before retry ``n`` (n = 1, 2, ...) wait ``max(retry_after, uniform(0, min(ceiling,
  base * 2 ** (n - 1))))``: exponential backoff with full jitter (Brooker, "Exponential Backoff And Jitter", AWS
  Architecture Blog, 2015), never less than the server asked for.
* :class:`Unanswered`: counts calls in a row that ended without any HTTP response (timeouts, connection errors);
  any response, even an error, resets it. A client stops ("not answering") when it reaches its limit.
"""

from __future__ import annotations

import datetime
import email.utils
import math
import random
import time
from collections.abc import Mapping

__all__ = ["RETRYABLE_STATUSES", "Unanswered", "backoff_delay", "retry_after_seconds"]

# 408, 409, 429 and every 5xx but 501 Not Implemented and 505 HTTP Version Not Supported (permanent)
RETRYABLE_STATUSES = frozenset({408, 409, 429, *range(500, 600)} - {501, 505})


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait a response asks for: ``retry-after-ms`` (milliseconds), else ``Retry-After`` as seconds or as an
    HTTP date (relative to ``now``, a ``time.time()`` value); None when absent or unreadable; never negative."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:  # "-0000": a date in UTC
            when = when.replace(tzinfo=datetime.UTC)
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, seconds) if math.isfinite(seconds) else None


def backoff_delay(retry: int, *, base: float, ceiling: float, rng: random.Random,
                  retry_after: float | None = None) -> float:
    """Seconds to wait before retry number ``retry`` (1 for the first retry): full jitter under
    ``min(ceiling, base * 2 ** (retry - 1))``, and never less than ``retry_after``."""
    cap = min(ceiling, base * 2 ** (retry - 1))
    return max(retry_after or 0.0, rng.uniform(0, cap))


class Unanswered:
    """Calls in a row that got no HTTP response at all; ``limit`` of them means the server is not answering."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0

    def answered(self) -> None:
        """The server answered (with anything, an error status included)."""
        self.count = 0

    def failed(self) -> bool:
        """A call ended without any answer; True when that makes ``limit`` in a row."""
        self.count += 1
        return self.count >= self.limit
