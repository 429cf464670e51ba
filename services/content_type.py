"""The API takes bodies as JSON only: a body sent as anything else is refused (415) before a
handler sees it, so it can never be parsed as JSON by accident and never cost a strike."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response

from services.problems import problem

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
UNSUPPORTED = "https://king.example/problems/unsupported-media-type"


def is_json(content_type: str) -> bool:
    """`application/json`, or a structured `application/*+json`, parameters allowed."""
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def _has_body(request: Request[Any, Any, Any]) -> bool:
    headers = request.headers
    length = headers.get("content-length")
    if length is not None:
        return length.strip() not in ("", "0")
    return "chunked" in headers.get("transfer-encoding", "").lower()


async def require_json(request: Request[Any, Any, Any]) -> Response[Any] | None:
    """Litestar `before_request`: a 415 problem for an API body that is not JSON."""
    if request.method not in BODY_METHODS or not request.url.path.startswith("/api/"):
        return None
    if not _has_body(request) or is_json(request.headers.get("content-type", "")):
        return None
    sent = request.headers.get("content-type", "").split(";", 1)[0].strip() or "none"
    return problem(
        415,
        "unsupported media type",
        f"the body must be JSON (Content-Type: application/json), not {sent[:80]}",
        type=UNSUPPORTED,
        code="unsupported_media_type",
    )
