"""Token buckets in this process's memory: the store for one process, and the fallback of the
shared store while Redis is unreachable.

At most `MAX_KEYS` buckets are kept; the least recently allowed go first (a forgotten bucket
starts full again).
"""

from __future__ import annotations

import time
from collections import OrderedDict

from services.ratelimit.buckets import Limits

MAX_KEYS = 100_000


class MemoryBuckets:
    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    @property
    def limits(self) -> Limits:
        return self._limits

    @property
    def warning(self) -> str | None:
        return None

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def draw(self, key: str) -> tuple[float, float]:
        return self.draw_at(key, time.monotonic())

    def draw_at(self, key: str, now: float) -> tuple[float, float]:
        """`draw` at the given time (seconds on any clock that does not go back)."""
        rate, burst = self._limits.rate, float(self._limits.burst)
        tokens, last = self._buckets.get(key, (burst, now))
        # The same steps, in the same order, as the Lua script of redis.py: both give the
        # same floating-point results for the same times.
        tokens = min(burst, tokens + max(0.0, now - last) * rate)
        if tokens >= 1:
            self._buckets[key] = (tokens - 1, now)
            self._buckets.move_to_end(key)
            while len(self._buckets) > MAX_KEYS:
                self._buckets.popitem(last=False)
            return 0.0, tokens - 1
        self._buckets[key] = (tokens, now)
        return (1 - tokens) / rate, tokens
