"""Per-token rate limits: a token bucket per recognised bearer token, else per client address.

A token has a bucket of its own only once this process knows it (the admin token, or a player
token it has authenticated before; no database read here). Any other request, with an unknown,
made-up or malformed token or with none, draws on its client address's bucket, so inventing
tokens buys no extra requests; a real token's first request in a process is charged to its
address, after which it has its own bucket.

Every limited answer says where its caller stands (`RateLimit-Policy` and `RateLimit`, as the
IETF draft for them gives: the bucket's size and refill time, the requests left and the seconds
until it is full). Over the limit: 429 problem details with `Retry-After` (whole seconds).
Health checks, metrics and the schema pages are not limited. Streams count once, when opened.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from typing import Any

import msgspec

from services.problems import problem_body

EXEMPT_PREFIXES = ("/health", "/metrics", "/schema")
MAX_KEYS = 100_000
MAX_TOKEN_LENGTH = 200  # longer bearer tokens are refused unread
# The scope key under which the limiter leaves (token, principal or None) of its in-memory
# lookup, so that the request's authentication (`deps`) need not repeat it for the same token.
PRINCIPAL_SCOPE_KEY = "king.cached_principal"


class TokenBuckets:
    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = float(burst)
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, key: str, now: float | None = None) -> float:
        """0 if a request may go now, else the seconds until it may."""
        return self.draw(key, now)[0]

    def draw(self, key: str, now: float | None = None) -> tuple[float, float]:
        """(0 if a request may go now, else the seconds until it may; the tokens left)."""
        now = time.monotonic() if now is None else now
        tokens, last = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        if tokens >= 1:
            self._buckets[key] = (tokens - 1, now)
            self._buckets.move_to_end(key)
            while len(self._buckets) > MAX_KEYS:
                self._buckets.popitem(last=False)
            return 0.0, tokens - 1
        self._buckets[key] = (tokens, now)
        return (1 - tokens) / self.rate, tokens

    @property
    def policy(self) -> bytes:
        """`RateLimit-Policy` (IETF draft-ietf-httpapi-ratelimit-headers): the bucket as a
        quota of `burst` requests refilled over `burst / rate` seconds."""
        window = max(1, math.ceil(self.burst / self.rate))
        return f'"burst";q={int(self.burst)};w={window}'.encode()

    def state(self, remaining: float) -> bytes:
        """`RateLimit`: the requests left now, and the seconds until the bucket is full."""
        full = max(0, math.ceil((self.burst - remaining) / self.rate))
        return f'"burst";r={int(remaining)};t={full}'.encode()


def bearer_token(scope: dict[str, Any]) -> str | None:
    """The bearer token of the request as `deps` reads it, or None."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, rest = bytes(value).decode("latin-1").partition(" ")
            token = rest.strip()
            if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN_LENGTH:
                return None
            return token
    return None


def _known_token_key(scope: dict[str, Any], token: str) -> str | None:
    """The token's rate-limit key if this process already knows the token (memory only)."""
    app = scope.get("app")
    services = getattr(getattr(app, "state", None), "king", None) if app is not None else None
    players = getattr(services, "players", None)
    if players is None:
        return None
    principal = players.cached(token)
    scope[PRINCIPAL_SCOPE_KEY] = (token, principal)
    return None if principal is None else str(principal.token_key)


def request_key(scope: dict[str, Any]) -> str:
    token = bearer_token(scope)
    if token is not None:
        key = _known_token_key(scope, token)
        if key is not None:
            return "t:" + key
    client = scope.get("client")
    return "ip:" + (client[0] if client else "?")


def rate_limit_middleware(rate: float, burst: int) -> Any:
    """An ASGI middleware factory (Litestar `middleware=[...]`)."""
    buckets = TokenBuckets(rate, burst)
    policy = buckets.policy if rate > 0 else b""

    def factory(app: Any) -> Any:
        if rate <= 0:  # no limit: no layer at all, rather than one that passes every request on
            return app

        async def middleware(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http" or scope["path"].startswith(EXEMPT_PREFIXES):
                await app(scope, receive, send)
                return
            wait, remaining = buckets.draw(request_key(scope))
            limits = [(b"ratelimit-policy", policy), (b"ratelimit", buckets.state(remaining))]
            if wait <= 0:

                async def send_with_limits(message: Any) -> None:
                    if message["type"] == "http.response.start":
                        message["headers"] = [*message.get("headers", ()), *limits]
                    await send(message)

                await app(scope, receive, send_with_limits)
                return
            retry = max(1, math.ceil(wait))
            body = msgspec.json.encode(
                problem_body(
                    429,
                    "too many requests",
                    f"rate limit of {rate:g} requests/s per token (per address without "
                    f"a known token): retry in {retry} s",
                )
            )
            await send(
                {
                    "type": "http.response.start",
                    "status": 429,
                    "headers": [
                        (b"content-type", b"application/problem+json"),
                        (b"retry-after", str(retry).encode()),
                        *limits,
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})

        return middleware

    return factory
