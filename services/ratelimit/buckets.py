"""What every store of token buckets offers the middleware, and the headers a bucket's answer
carries.

A bucket holds up to `burst` tokens and gains `rate` a second; a request takes one. A store
only says, for a key, how long the request must wait (0: it may go now) and how many tokens are
left: the same arithmetic in each store, so that a key is limited alike in any of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Limits:
    """The size and refill rate every bucket of a store has."""

    rate: float  # tokens a second (> 0)
    burst: int  # bucket size (>= 1)

    @property
    def refill_seconds(self) -> float:
        """How long an empty bucket takes to be full again."""
        return self.burst / self.rate

    @property
    def policy(self) -> bytes:
        """`RateLimit-Policy` (IETF draft-ietf-httpapi-ratelimit-headers): the bucket as a
        quota of `burst` requests refilled over `burst / rate` seconds."""
        window = max(1, math.ceil(self.refill_seconds))
        return f'"burst";q={self.burst};w={window}'.encode()

    def state(self, remaining: float) -> bytes:
        """`RateLimit`: the requests left now, and the seconds until the bucket is full."""
        full = max(0, math.ceil((self.burst - remaining) / self.rate))
        return f'"burst";r={int(remaining)};t={full}'.encode()


class Buckets(Protocol):
    """A store of token buckets (memory.py: this process's; redis.py: shared by processes)."""

    @property
    def limits(self) -> Limits: ...

    async def draw(self, key: str) -> tuple[float, float]:
        """Take a token from the key's bucket: (0 if the request may go now, else the seconds
        until it may; the tokens left)."""
        ...

    @property
    def warning(self) -> str | None:
        """Why the store limits worse than configured right now (for `/health/ready`), or None."""
        ...

    async def start(self) -> None:
        """Called when the app starts (before the first request)."""
        ...

    async def close(self) -> None:
        """Called when the app stops."""
        ...
