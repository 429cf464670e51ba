"""How every event-stream endpoint answers, so a game's, a seat's, a player's and a
tournament's streams agree: the format (`?format=` or Accept), the resume point (`?after=` or
`Last-Event-ID`), the media type and the headers that keep proxies from buffering."""

from collections.abc import AsyncIterator
from typing import Any, Literal

from litestar import Request
from litestar.response import Stream

from services.play.streams import MEDIA_TYPES, StreamFormat, StreamOptions
from services.problems import BadRequest
from services.settings import Settings

STREAM_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}
Format = Literal["sse", "ndjson"]


def stream_format(request: Request[Any, Any, Any], fmt: Format | None) -> StreamFormat:
    if fmt is not None:
        return fmt
    accept = request.headers.get("accept", "")
    return "ndjson" if "application/x-ndjson" in accept else "sse"


def resume_after(request: Request[Any, Any, Any], after: int | None) -> int:
    if after is not None:
        return after
    last = request.headers.get("last-event-id")
    if last is None or not last.strip():
        return 0
    if not last.strip().isdigit() or len(last.strip()) > 12:
        raise BadRequest("Last-Event-ID must be an event id (a version number)")
    return int(last.strip())


def resumable(
    request: Request[Any, Any, Any],
    settings: Settings,
    fmt: Format | None,
    after: int | None,
    follow: bool,
) -> StreamOptions:
    """A resumable stream's options from its query and headers, paced by the settings."""
    return StreamOptions(
        fmt=stream_format(request, fmt),
        after=resume_after(request, after),
        follow=follow,
        poll_seconds=settings.poll_seconds,
        keepalive_seconds=settings.stream_keepalive_seconds,
    )


def stream_response(body: AsyncIterator[bytes], fmt: StreamFormat) -> Stream:
    return Stream(body, media_type=MEDIA_TYPES[fmt], headers=STREAM_HEADERS)
