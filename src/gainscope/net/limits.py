"""Sliding-window rate limits and a shared cooldown: where every request waits its turn before it is sent.

A :class:`Window` of ``length`` seconds and ``capacity`` lets a request of ``amount`` through when the amounts
sent in the ``length`` seconds before it, plus ``amount``, stay within ``capacity`` -- so *any* window of that
length holds at most ``capacity`` (a request larger than the capacity alone goes when the window is empty). A
:class:`Gate` holds a requests window, an optional tokens window and a cooldown (set after a 429 or a
``Retry-After``: no request passes before it ends), and lets requests through one at a time, in FIFO order.

A sliding window allows a burst of its whole capacity at once; ``requests=10, length=1.0`` sends at most 10 in
any second (a ``--qps 10``), ``requests=600, length=60.0`` at most 600 in any minute.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Awaitable, Callable

__all__ = ["Clock", "Gate", "Sleep", "Window"]

Sleep = Callable[[float], Awaitable[None]]
Clock = Callable[[], float]


class Window:
    """A sliding window of amounts sent: room for ``amount`` when the amounts of the last ``length`` seconds plus
    ``amount`` stay within ``capacity`` (or when the window is empty)."""

    def __init__(self, capacity: float, length: float) -> None:
        self.capacity = capacity
        self.length = length
        self._entries: deque[list[float]] = deque()  # [send time, amount]; lists so that amounts can be settled
        self._total = 0.0

    def _expire(self, now: float) -> None:
        while self._entries and self._entries[0][0] <= now - self.length:
            self._total -= self._entries.popleft()[1]

    def wait(self, now: float, amount: float) -> float:
        """Seconds until there is room for ``amount`` (0 when there is room now)."""
        self._expire(now)
        excess = self._total + amount - self.capacity
        if excess <= 0 or not self._entries:
            return 0.0
        for sent, held in self._entries:  # oldest first: each expiry frees its amount
            excess -= held
            if excess <= 0:
                return sent + self.length - now
        return self._entries[-1][0] + self.length - now  # more than the capacity: wait for an empty window

    def add(self, now: float, amount: float) -> list[float]:
        """Record ``amount`` sent at ``now``; the entry can be settled later."""
        entry = [now, amount]
        self._entries.append(entry)
        self._total += amount
        return entry

    def settle(self, entry: list[float], amount: float) -> None:
        """Replace an entry's amount (an estimate) by the real one; a no-op once the entry has expired."""
        if self._entries and entry[0] >= self._entries[0][0]:
            self._total += amount - entry[1]
        entry[1] = amount


class Gate:
    """Where every attempt waits its turn: the shared cooldown, then the requests and tokens windows (FIFO, one
    lock). ``requests`` / ``tokens``: capacities per ``length`` seconds, None for no limit. ``waited`` is the wall
    time requests were held back (not summed over the waiting requests)."""

    def __init__(self, *, requests: float | None, tokens: float | None = None, length: float, sleep: Sleep,
                 clock: Clock) -> None:
        self._requests = Window(requests, length) if requests else None
        self._tokens = Window(tokens, length) if tokens else None
        self._sleep = sleep
        self._clock = clock
        self._lock = asyncio.Lock()
        self.cooldown_until = -math.inf
        self.waited = 0.0

    def cool_down(self, seconds: float) -> None:
        """No request passes the gate for the next ``seconds``."""
        self.cooldown_until = max(self.cooldown_until, self._clock() + seconds)

    async def enter(self, tokens: float = 0.0) -> list[float] | None:
        """Wait until the request may be sent, record it, and return its tokens entry (to settle) if any."""
        async with self._lock:
            while (wait := self._wait(tokens)) > 0:
                before = self._clock()
                await self._sleep(wait)
                self.waited += self._clock() - before
            now = self._clock()
            if self._requests is not None:
                self._requests.add(now, 1)
            return self._tokens.add(now, tokens) if self._tokens is not None else None

    def settle(self, entry: list[float] | None, tokens: int | None) -> None:
        """Replace a tokens reservation by the tokens the server reported (kept as estimated when it reported
        none)."""
        if entry is not None and tokens is not None and self._tokens is not None:
            self._tokens.settle(entry, tokens)

    def _wait(self, tokens: float) -> float:
        now = self._clock()
        waits = [self.cooldown_until - now]
        if self._requests is not None:
            waits.append(self._requests.wait(now, 1))
        if self._tokens is not None:
            waits.append(self._tokens.wait(now, tokens))
        return max(waits)
