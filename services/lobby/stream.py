"""The lobby's live stream: a message per table change, SSE or NDJSON.

Each message is a table as it is after its latest change, with that change's type and its
feed position as id; a table changed twice between two looks is sent once, as it is now
(its `data` holds every seat, so nothing is lost to a client). A stream wakes when this
process changes a table or the feed watcher folds another process's change, and looks again
every `poll_seconds` anyway. Resumable: `Last-Event-ID` (or `?after=`) sends what changed
since; without it the stream starts from now (read `GET /api/v1/lobby` first), and an SSE
stream says where that is in its first lines (an `id:` without data).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import msgspec

from services.api_types.lobby import LobbyTableOut
from services.lobby import tables as lt
from services.lobby.desk import LobbyDesk
from services.play.live import encode
from services.play.streams import StreamOptions, keepalive

BATCH = 500
KINDS = {
    lt.OPENED: "table_opened",
    lt.SEAT_TAKEN: "seat_taken",
    lt.SEAT_LEFT: "seat_left",
    lt.STARTED: "table_started",
    lt.CANCELLED: "table_cancelled",
}


def table_out(table: lt.LobbyTable) -> LobbyTableOut:
    return LobbyTableOut(
        id=table.id,
        status=table.status,  # type: ignore[arg-type]
        creator=table.creator,
        seats=list(table.seats),
        free_seats=table.free,
        rules=dict(table.rules),
        decision_seconds=table.decision_ms / 1000,
        game_id=table.game_id,
        play_url=f"/play/{table.game_id}" if table.game_id else None,
        version=table.version,
        created_at=table.created_at,
    )


def message(position: int, kind: str, table: lt.LobbyTable) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(table_out(table))
    return {"id": position, "table_id": table.id, "type": KINDS.get(kind, kind), "data": data}


async def lobby_stream(
    desk: LobbyDesk, options: StreamOptions, resumed: bool
) -> AsyncIterator[bytes]:
    """`resumed`: the client named where to resume (`options.after`); else from now."""
    fmt = options.fmt
    book = desk.book
    position = options.after if resumed else await asyncio.to_thread(book.head)
    last_sent = time.monotonic()
    if fmt == "sse":
        # The starting position as the event id (no data: nothing is dispatched), so that a
        # browser reconnecting before the first change resumes from here, not from a new now.
        yield f"retry: 2000\nid: {position}\n\n".encode()
    while True:
        epoch = desk.epoch
        changes = await asyncio.to_thread(book.changes, position, BATCH)
        if changes:
            out = [encode(message(p, kind, table), fmt) for p, kind, table in changes]
            position = changes[-1][0]
            yield b"".join(out)
            last_sent = time.monotonic()
            if len(changes) == BATCH:
                continue  # more are waiting
        if not options.follow:
            return
        woke = await desk.wait(epoch, options.poll_seconds)
        if not woke:
            await asyncio.to_thread(book.catch_up)  # another process's change, unannounced
            if time.monotonic() - last_sent >= options.keepalive_seconds:
                yield keepalive(fmt)
                last_sent = time.monotonic()
