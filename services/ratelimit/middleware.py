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
The buckets live in a store (`Buckets`): this process's memory, or Redis shared by every
process (`KING_RATE_LIMIT_STORE`); the keys, headers and answers are the same in both.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import msgspec

from services.identity import Principal, hash_token
from services.problems import problem_body
from services.ratelimit.buckets import Buckets

EXEMPT_PREFIXES = ("/health", "/metrics", "/schema")
MAX_TOKEN_LENGTH = 200  # longer bearer tokens are refused unread
# The scope key under which the limiter leaves its in-memory lookup (a `SeenToken`), so that
# the request's authentication (`deps`) need not repeat it, nor hash the token again.
PRINCIPAL_SCOPE_KEY = "king.cached_principal"


class SeenToken(NamedTuple):
    """A bearer token as the limiter looked it up: its text, its hash and its principal if
    this process knew it (None: unknown here, the database may still know it)."""

    token: str
    digest: str
    principal: Principal | None


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
    digest = hash_token(token)
    principal = players.cached(digest)
    scope[PRINCIPAL_SCOPE_KEY] = SeenToken(token, digest, principal)
    return None if principal is None else str(principal.token_key)


def request_key(scope: dict[str, Any]) -> str:
    token = bearer_token(scope)
    if token is not None:
        key = _known_token_key(scope, token)
        if key is not None:
            return "t:" + key
    client = scope.get("client")
    return "ip:" + (client[0] if client else "?")


def rate_limit_middleware(buckets: Buckets | None) -> Any:
    """An ASGI middleware factory (Litestar `middleware=[...]`) drawing on `buckets`."""

    def factory(app: Any) -> Any:
        if buckets is None:  # no limit: no layer at all, not one that passes every request on
            return app
        limits = buckets.limits
        policy = limits.policy

        async def middleware(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http" or scope["path"].startswith(EXEMPT_PREFIXES):
                await app(scope, receive, send)
                return
            wait, remaining = await buckets.draw(request_key(scope))
            headers = [(b"ratelimit-policy", policy), (b"ratelimit", limits.state(remaining))]
            if wait <= 0:

                async def send_with_limits(message: Any) -> None:
                    if message["type"] == "http.response.start":
                        message["headers"] = [*message.get("headers", ()), *headers]
                    await send(message)

                await app(scope, receive, send_with_limits)
                return
            retry = max(1, math.ceil(wait))
            body = msgspec.json.encode(
                problem_body(
                    429,
                    "too many requests",
                    f"rate limit of {limits.rate:g} requests/s per token (per address without "
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
                        *headers,
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})

        return middleware

    return factory
