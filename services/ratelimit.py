"""Per-token rate limits (a token bucket per bearer token, or per client address without one).

Over the limit: 429 problem details with `Retry-After` (whole seconds). Health checks,
metrics and the schema pages are not limited. Streams count once, when opened.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import OrderedDict
from typing import Any

import msgspec

from services.schemas import Problem

EXEMPT_PREFIXES = ("/health", "/metrics", "/schema")
MAX_KEYS = 100_000


class TokenBuckets:
    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = float(burst)
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, key: str, now: float | None = None) -> float:
        """0 if a request may go now, else the seconds until it may."""
        now = time.monotonic() if now is None else now
        tokens, last = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        if tokens >= 1:
            self._buckets[key] = (tokens - 1, now)
            self._buckets.move_to_end(key)
            while len(self._buckets) > MAX_KEYS:
                self._buckets.popitem(last=False)
            return 0.0
        self._buckets[key] = (tokens, now)
        return (1 - tokens) / self.rate


def request_key(scope: dict[str, Any]) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            return "t:" + hashlib.sha256(value).hexdigest()[:24]
    client = scope.get("client")
    return "ip:" + (client[0] if client else "?")


def rate_limit_middleware(rate: float, burst: int) -> Any:
    """An ASGI middleware factory (Litestar `middleware=[...]`)."""
    buckets = TokenBuckets(rate, burst)

    def factory(app: Any) -> Any:
        async def middleware(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http" or rate <= 0 or scope["path"].startswith(EXEMPT_PREFIXES):
                await app(scope, receive, send)
                return
            wait = buckets.take(request_key(scope))
            if wait <= 0:
                await app(scope, receive, send)
                return
            retry = max(1, math.ceil(wait))
            body = msgspec.json.encode(
                Problem(
                    title="too many requests",
                    status=429,
                    detail=f"rate limit of {rate:g} requests/s per token: retry in {retry} s",
                )
            )
            await send(
                {
                    "type": "http.response.start",
                    "status": 429,
                    "headers": [
                        (b"content-type", b"application/problem+json"),
                        (b"retry-after", str(retry).encode()),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})

        return middleware

    return factory
