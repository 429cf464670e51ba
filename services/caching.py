"""HTTP caching of what a finished game publishes: a strong ETag over the exact bytes sent,
`If-None-Match` answered with 304, and `Cache-Control: public, immutable` once the game has
nothing more to publish (it is over and its seed revealed). Before that the answer may still
change, so a cache must ask again (`no-cache`, the ETag still saving the body)."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from litestar import Request, Response

from domain.game import GameState, Phase

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


def settled(state: GameState) -> bool:
    """Nothing about the game will change: it is over and its seed is public."""
    return state.phase is Phase.OVER and state.seed is not None


def etag_of(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def matches(if_none_match: str | None, tag: str) -> bool:
    """RFC 9110's weak comparison, as `If-None-Match` asks: `*`, or any listed tag whose
    opaque part equals ours."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    return any(t.strip().removeprefix("W/") == tag for t in if_none_match.split(","))


def cached_json(request: Request[Any, Any, Any], data: Any, *, final: bool) -> Response[bytes]:
    """`data` as JSON with its ETag, or a bodiless 304 when the client holds those bytes."""
    body = orjson.dumps(data)
    tag = etag_of(body)
    headers = {"ETag": tag, "Cache-Control": IMMUTABLE if final else REVALIDATE}
    if matches(request.headers.get("if-none-match"), tag):
        return Response(b"", status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)
