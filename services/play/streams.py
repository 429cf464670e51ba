"""Event streams as bytes: Server-Sent Events or NDJSON, for a seat or for the public.

A stream sends the game's events after the client's `after` version (`Last-Event-ID`), each in
its audience's form (domain.view.disclose), from this process's live cache when it reaches
back that far, else read from the store from that version on. A seat's stream adds a
`your_turn` message (the seat's view, legal actions, deadline) whenever the game waits for that
seat; it is not stored and carries the id of the last event. Streams end after the game's last
event (`seed_revealed`), and a seat's stream when the seat is handed to a substitute.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec

from domain.game import GameState, Phase
from domain.results import points_number
from domain.view import seat_view
from services.identity import Principal
from services.play.driver import iso
from services.play.invitations import PENDING, Invitation, InvitationNotFound, describe
from services.play.live import Message, StreamFormat, encode, messages
from services.play.service import GameInfo, GameService
from tournament.games import GameNotFound, stream_id, to_domain_event

__all__ = [
    "MEDIA_TYPES",
    "StreamFormat",
    "StreamOptions",
    "encode",
    "game_batches",
    "game_stream",
    "keepalive",
    "player_stream",
]

MEDIA_TYPES = {"sse": "text/event-stream", "ndjson": "application/x-ndjson"}
FINAL_EVENT = "seed_revealed"


@dataclass(frozen=True, slots=True)
class StreamOptions:
    """What a client asked of a resumable stream, and how often the service looks again
    (`poll_seconds`) and sends a keep-alive when there was nothing to send."""

    fmt: StreamFormat
    after: int
    follow: bool
    poll_seconds: float
    keepalive_seconds: float
    turns_only: bool = False  # a seat's stream: its turns and the game's end, nothing else


# What a seat's turns-only stream sends of the stored events (besides `your_turn`): what the
# seat must know between its turns (a strike or a hand-over of its own) and the game's end.
ENDINGS = frozenset({"game_ended", FINAL_EVENT})
OWN = frozenset({"strike_recorded", "seat_abandoned", "seat_substituted"})


def wanted(m: Message, seat: int | None, turns_only: bool) -> bool:
    """Whether a stream sends this stored event: all of them, unless it is a seat's turns-only
    stream (a bot that needs no more than a push bot gets: its turns, with the whole view)."""
    if not turns_only or seat is None:
        return True
    return m.type in ENDINGS or (m.type in OWN and m.disclosure.public.get("seat") == seat)


def keepalive(fmt: StreamFormat) -> bytes:
    return b"\n" if fmt == "ndjson" else b": keepalive\n\n"


async def messages_after(
    games: GameService, game_id: str, after: int
) -> tuple[list[Message], GameState]:
    """The game's messages after version `after` and the state they end at: from the live
    cache, else the store's events from `after + 1` only, disclosed with the current state."""
    held = games.live.since(game_id, after)
    if held is not None:
        return held
    state = await games.load(game_id)
    if state.version <= after:
        return [], state
    store = games.repo.store
    records = await asyncio.to_thread(
        store.read_stream, stream_id(game_id), after + 1, to_version=state.version
    )
    return messages(game_id, records, state, [to_domain_event(r) for r in records]), state


def _substituted_before(state: GameState, seat: int, sent: list[Message]) -> bool:
    """The seat was handed to a substitute at or before the first message to send."""
    if not state.occupants or len(state.occupants[seat]) < 2:
        return False
    return not any(
        m.type == "seat_substituted" and m.disclosure.public.get("seat") == seat for m in sent
    )


async def game_stream(
    games: GameService,
    game_id: str,
    seat: int | None,
    options: StreamOptions,
) -> AsyncIterator[bytes]:
    """The game's (or a seat's) stream as the bytes of one SSE or NDJSON response."""
    fmt = options.fmt
    if fmt == "sse":
        yield b"retry: 2000\n\n"
    async for batch in game_batches(games, game_id, seat, options):
        yield b"".join(batch) if batch else keepalive(fmt)


async def game_batches(
    games: GameService,
    game_id: str,
    seat: int | None,
    options: StreamOptions,
) -> AsyncIterator[list[bytes]]:
    """The stream's messages, each encoded in `options.fmt`, in batches as they come; an
    empty batch when a keep-alive is due (nothing was sent for `keepalive_seconds`). Ends after
    the game's last event, or with the seat's hand-over to a substitute."""
    fmt = options.fmt
    position = options.after
    announced = -1
    last_sent = time.monotonic()
    first = True
    while True:
        try:
            batch, state = await messages_after(games, game_id, position)
        except GameNotFound:
            # A table set but not started yet has no events: nothing to send until its
            # first one (a page waiting for the start follows this); not following: done.
            if not options.follow:
                return
            if not await games.live.wait(game_id, position, options.poll_seconds) and (
                time.monotonic() - last_sent >= options.keepalive_seconds
            ):
                yield []
                last_sent = time.monotonic()
            continue
        if first and seat is not None and _substituted_before(state, seat, batch):
            return  # a forfeited seat's stream has ended: the hands are no longer its
        first = False
        out: list[bytes] = []
        finished = False
        for m in batch:
            if wanted(m, seat, options.turns_only):
                out.append(m.encoded(seat, fmt))
            position = m.version
            finished = finished or m.type == FINAL_EVENT
            if (
                seat is not None
                and m.type == "seat_substituted"
                and m.disclosure.public.get("seat") == seat
            ):
                yield out  # the seat's stream ends with its hand-over
                return
        position = max(position, state.version)
        if seat is not None and state.to_move == seat and announced != state.version:
            announced = state.version
            out.append(your_turn(games, game_id, seat, state, fmt))
        if out:
            yield out
            last_sent = time.monotonic()
        over = finished or (state.phase is Phase.OVER and not batch)
        if over or not options.follow:
            return
        turn_of = seat if options.turns_only else None
        woke = await games.live.wait(game_id, position, options.poll_seconds, turn_of)
        if not woke and time.monotonic() - last_sent >= options.keepalive_seconds:
            yield []
            last_sent = time.monotonic()


def your_turn(
    games: GameService, game_id: str, seat: int, state: GameState, fmt: StreamFormat
) -> bytes:
    """The seat's turn: its view, its legal actions and the deadline (not a stored event)."""
    turn = games.turn(game_id)
    deadline = turn.deadline if turn and turn.version == state.version else None
    view = games.live.view_dict(seat_view(state, seat), history_as_json=True)
    data = {
        "version": state.version,
        "seat": seat,
        "deadline": iso(deadline) if deadline else None,
        "deadline_ms": int(max(deadline - time.time(), 0) * 1000) if deadline else None,
        "legal": view["legal"],
        "view": view,
    }
    message = {"id": state.version, "game_id": game_id, "type": "your_turn", "data": data}
    return encode(message, fmt)


def _seats_held(seats: tuple[str, ...] | list[str], player_id: str) -> list[int]:
    return [i for i, who in enumerate(seats) if who == player_id]


def game_notice(
    game_id: str, player_id: str, players: tuple[str, ...] | list[str]
) -> dict[str, Any]:
    """What every notice of a game says: the player, the seats it holds (numbers, ascending),
    and the four players by seat. One notice however many seats the player holds."""
    return {
        "game_id": game_id,
        "player": player_id,
        "seats": _seats_held(players, player_id),
        "players": list(players),
    }


def over_notice(
    game_id: str, player_id: str, players: tuple[str, ...] | list[str], state: GameState | None
) -> dict[str, Any]:
    """`game_over`'s data: the notice plus the result (null fields if there is none to show):
    totals and winners by seat, ladder points by seat, and `points`, the player's own for each
    of its seats (after R-ABANDON and R-SUBSTITUTE: −30 for a seat it forfeited)."""
    data = game_notice(game_id, player_id, players)
    result = state.result if state is not None else None
    if result is None:
        return {**data, "totals": None, "winners": None, "ladder_points": None, "points": None}
    own = {r.seat: r.points for r in result.results if r.player == player_id}
    return {
        **data,
        "totals": list(result.totals),
        "winners": list(result.winners),
        "ladder_points": [points_number(p) for p in result.ladder_points],
        "points": [
            points_number(own.get(seat, result.ladder_points[seat])) for seat in data["seats"]
        ],
    }


async def player_stream(
    games: GameService,
    player_id: str,
    fmt: StreamFormat,
    poll_seconds: float,
    keepalive_seconds: float,
) -> AsyncIterator[bytes]:
    """`game_started` / `game_over` notices for the player's games.

    Not resumable: a (re)connected stream first announces every live game of the player, then
    each start and end as it happens; a game that ended while no stream was open gets no
    `game_over`. Invitations to the player: `invitation` when one is open, `invitation_closed`
    when it is answered, cancelled or expires. Each notice's id (`<game_id>:started`,
    `<game_id>:over`, `<invitation_id>:invited`, `<invitation_id>:closed`) is stable, so a
    client that reconnects can tell a notice it has seen from a new one."""
    live: dict[str, tuple[str, ...]] = {}
    invited: dict[str, Invitation] = {}
    watch = InvitationWatch()
    woke = False
    last_sent = time.monotonic()
    if fmt == "sse":
        yield b"retry: 2000\n\n"
    while True:
        epoch = games.games_epoch
        current = {
            info.id: info.seats for info in await games.list_games("live", player_id, limit=10_000)
        }
        out: list[bytes] = []
        for game_id, players in current.items():
            if game_id not in live:
                data = game_notice(game_id, player_id, players)
                out.append(_notice(f"{game_id}:started", game_id, "game_started", data, fmt))
        for game_id, players in live.items():
            if game_id not in current:
                try:
                    state: GameState | None = await games.load(game_id)
                except GameNotFound:
                    state = None
                data = over_notice(game_id, player_id, players, state)
                out.append(_notice(f"{game_id}:over", game_id, "game_over", data, fmt))
        live = current
        if await watch.changed(games, player_id, polled=not woke):
            invited = await invitation_notices(games, player_id, invited, fmt, out)
            watch.shown(invited.values())
        if out:
            yield b"".join(out)
            last_sent = time.monotonic()
        woke = await games.wait_games(epoch, poll_seconds)
        if not woke and time.monotonic() - last_sent >= keepalive_seconds:
            yield keepalive(fmt)
            last_sent = time.monotonic()


@dataclass(slots=True)
class InvitationWatch:
    """Whether a player's stream must read its invitations again: only when this process
    wrote one (the book's in-memory `version` moved), when one it shows is due to expire, or,
    on a poll (the wait timed out: another process may have written), when the player's
    `stamp` has changed. A wake-up for a game that starts or ends reads none."""

    version: int = -1
    stamp: tuple[int, int] | None = None
    due: datetime | None = None  # the earliest expiry of the invitations shown

    async def changed(self, games: GameService, player_id: str, polled: bool) -> bool:
        book = games.invitations
        version = book.version
        expiring = self.due is not None and book.now() >= self.due
        if version == self.version and not expiring and not polled:
            return False
        stamp = await asyncio.to_thread(book.stamp, player_id)
        if version == self.version and not expiring and stamp == self.stamp:
            return False
        self.version, self.stamp = version, stamp  # taken before the read that follows
        return True

    def shown(self, pending: Iterable[Invitation]) -> None:
        self.due = min((i.expires_at for i in pending), default=None)


def _notice(
    notice_id: str, game_id: str, kind: str, data: dict[str, Any], fmt: StreamFormat
) -> bytes:
    return encode({"id": notice_id, "game_id": game_id, "type": kind, "data": data}, fmt)


async def invitation_notices(
    games: GameService,
    player_id: str,
    seen: dict[str, Invitation],
    fmt: StreamFormat,
    out: list[bytes],
) -> dict[str, Invitation]:
    """Add an `invitation` notice for each pending invitation to the player not yet told of,
    and an `invitation_closed` one for each told of that is no longer pending; the pending
    ones now. Each notice's `data` is the invitation as `GET /api/v1/invitations/{id}`
    shows it."""
    book = games.invitations
    pending = await asyncio.to_thread(book.received, player_id, PENDING, 500)
    current = {i.id: i for i in pending}
    for invitation_id, invitation in current.items():
        if invitation_id not in seen:
            data = _shown(describe(invitation, await _table(games, invitation.game_id)))
            out.append(
                _notice(f"{invitation_id}:invited", invitation.game_id, "invitation", data, fmt)
            )
    for invitation_id, before in seen.items():
        if invitation_id in current:
            continue
        try:
            now = await asyncio.to_thread(book.get, invitation_id, Principal(player_id))
        except InvitationNotFound:
            now = before
        data = _shown(describe(now, await _table(games, now.game_id)))
        out.append(_notice(f"{invitation_id}:closed", now.game_id, "invitation_closed", data, fmt))
    return current


async def _table(games: GameService, game_id: str) -> GameInfo | None:
    try:
        return await games.info(game_id)
    except LookupError:
        return None


def _shown(invitation: dict[str, Any]) -> dict[str, Any]:
    """The invitation's values in the API's own forms (times as msgspec writes them), so that a
    notice shows an invitation exactly as `GET /api/v1/invitations/{id}` does."""
    shown: dict[str, Any] = msgspec.to_builtins(invitation)
    return shown
