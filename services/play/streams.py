"""Event streams as bytes: Server-Sent Events or NDJSON, for a seat or for the public.

A stream reads the game's stored events from the first, maps each to its audience's form
(play.feed) and sends those after the client's `after` version (`Last-Event-ID`). A seat's
stream adds a `your_turn` message (the seat's view, legal actions, deadline) whenever the game
waits for that seat; it is not stored and carries the id of the last event. Streams end after
the game's last event (`seed_revealed`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from domain.game import Phase
from domain.view import seat_view
from services.play.driver import iso
from services.play.feed import AudienceFeed
from services.play.service import GameService

StreamFormat = Literal["sse", "ndjson"]
MEDIA_TYPES = {"sse": "text/event-stream", "ndjson": "application/x-ndjson"}


@dataclass(frozen=True, slots=True)
class StreamOptions:
    """What a client asked of a resumable stream, and how often the service looks again
    (`poll_seconds`) and sends a keep-alive when there was nothing to send."""

    fmt: StreamFormat
    after: int
    follow: bool
    poll_seconds: float
    keepalive_seconds: float


def encode(message: dict[str, Any], fmt: StreamFormat) -> bytes:
    data = orjson.dumps(message)
    if fmt == "ndjson":
        return data + b"\n"
    head = f"event: {message['type']}\n"
    if message.get("id") is not None:
        head = f"id: {message['id']}\n" + head
    return head.encode() + b"data: " + data + b"\n\n"


def keepalive(fmt: StreamFormat) -> bytes:
    return b"\n" if fmt == "ndjson" else b": keepalive\n\n"


async def game_stream(
    games: GameService,
    game_id: str,
    seat: int | None,
    options: StreamOptions,
) -> AsyncIterator[bytes]:
    fmt, after = options.fmt, options.after
    feed = AudienceFeed(game_id, seat)
    position = 0
    announced = -1
    last_sent = time.monotonic()
    if fmt == "sse":
        yield b"retry: 2000\n\n"
    woke = False
    while True:
        recent = games.recent(game_id, position) if woke else None
        if recent is not None:
            records, state = recent
        else:
            records = await asyncio.to_thread(games.repo.events, game_id, position + 1)
            state = None
        out: list[bytes] = []
        for r in records:
            message = feed.form(r)
            position = r.version
            if r.version > after:
                out.append(encode(message, fmt))
            if feed.replaced:  # a forfeited seat's stream ends: the hands are no longer its
                yield b"".join(out)
                return
        if state is None and position:
            state = await games.load(game_id)
        if (
            seat is not None
            and state is not None
            and state.version == position
            and state.to_move == seat
            and announced != position
        ):
            announced = position
            turn = games.turns.get(game_id)
            deadline = turn.deadline if turn and turn.version == position else None
            view = seat_view(state, seat)
            data = {
                "version": position,
                "seat": seat,
                "deadline": iso(deadline) if deadline else None,
                "deadline_ms": int(max(deadline - time.time(), 0) * 1000) if deadline else None,
                "legal": [a.to_dict() for a in view.legal],
                "view": games.views.to_dict(view),
            }
            message = {"id": position, "game_id": game_id, "type": "your_turn", "data": data}
            out.append(encode(message, fmt))
        if out:
            yield b"".join(out)
            last_sent = time.monotonic()
        over = feed.finished or (state is not None and state.phase is Phase.OVER and not records)
        if over or not options.follow:
            return
        woke = await games.notifier.wait(game_id, position, options.poll_seconds)
        if not woke and time.monotonic() - last_sent >= options.keepalive_seconds:
            yield keepalive(fmt)
            last_sent = time.monotonic()


async def player_stream(
    games: GameService,
    player_id: str,
    fmt: StreamFormat,
    poll_seconds: float,
    keepalive_seconds: float,
) -> AsyncIterator[bytes]:
    """`game_started` / `game_over` notices for the player's games (not resumable)."""
    live: dict[str, list[str]] = {}
    last_sent = time.monotonic()
    if fmt == "sse":
        yield b"retry: 2000\n\n"
    while True:
        epoch = games.notifier.games_epoch
        current = {
            info.id: list(info.seats)
            for info in await games.list_games("live", player_id, limit=10_000)
        }
        out: list[bytes] = []
        for game_id, seats in current.items():
            if game_id not in live:
                seat = seats.index(player_id)
                data = {"game_id": game_id, "seat": seat, "seats": seats}
                out.append(encode({"id": None, "type": "game_started", "data": data}, fmt))
        for game_id in live:
            if game_id not in current:
                out.append(
                    encode({"id": None, "type": "game_over", "data": {"game_id": game_id}}, fmt)
                )
        live = current
        if out:
            yield b"".join(out)
            last_sent = time.monotonic()
        woke = await games.notifier.wait_games(epoch, poll_seconds)
        if not woke and time.monotonic() - last_sent >= keepalive_seconds:
            yield keepalive(fmt)
            last_sent = time.monotonic()
