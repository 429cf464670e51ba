"""A lobby table as a fold of its events, and the decisions taken on it (pure: no I/O).

A lobby table is the stream `lobby-<table id>` of the event store. Its events:

- `lobby_table_opened`: creator, the four seats (`null` for a seat left for people, the
  creator's id for the seat they took, `house:<strategy>` for a house bot), rules, time limit;
- `lobby_seat_taken` / `lobby_seat_left`: a person took or gave up a free seat;
- `lobby_table_started`: every seat was filled and the game (id `game_id`) started;
- `lobby_table_cancelled`: the creator (or the admin) closed the table before its start.

Each decision reads the table at some version and appends at that version: of two joins of
the last free seat, the store lets one append through and the other reads the table again
(and finds it full). Nothing here is secret: no card, seed or token is in a lobby event.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from services.lobby.errors import LobbyConflict

STREAM_PREFIX = "lobby-"
STREAM_TYPE = "lobby"
OPENED = "lobby_table_opened"
SEAT_TAKEN = "lobby_seat_taken"
SEAT_LEFT = "lobby_seat_left"
STARTED = "lobby_table_started"
CANCELLED = "lobby_table_cancelled"
EVENT_TYPES = frozenset({OPENED, SEAT_TAKEN, SEAT_LEFT, STARTED, CANCELLED})

OPEN = "open"  # a free seat left
FULL = "full"  # every seat filled: the game is being started
STATUS_STARTED = "started"
STATUS_CANCELLED = "cancelled"


def stream_of(table_id: str) -> str:
    return STREAM_PREFIX + table_id


@dataclass(frozen=True, slots=True)
class LobbyTable:
    id: str
    creator: str
    seats: tuple[str | None, ...]  # None: a free seat for a person
    rules: Mapping[str, Any]
    decision_ms: int
    created_at: datetime
    version: int = 1
    game_id: str | None = None
    cancelled: bool = False
    updated_at: datetime | None = None

    @property
    def free(self) -> list[int]:
        return [i for i, s in enumerate(self.seats) if s is None]

    @property
    def status(self) -> str:
        if self.cancelled:
            return STATUS_CANCELLED
        if self.game_id is not None:
            return STATUS_STARTED
        return FULL if not self.free else OPEN

    def seat_of(self, player: str) -> int | None:
        return next((i for i, s in enumerate(self.seats) if s == player), None)

    def people(self) -> list[str]:
        return [s for s in self.seats if s is not None and not s.startswith("house:")]


def opened_payload(table: LobbyTable) -> dict[str, Any]:
    return {
        "table_id": table.id,
        "creator": table.creator,
        "seats": list(table.seats),
        "rules": dict(table.rules),
        "decision_ms": table.decision_ms,
        "created_at": table.created_at.isoformat(),
    }


def apply(table: LobbyTable | None, kind: str, payload: Mapping[str, Any]) -> LobbyTable:
    """The table after one more of its events (ValueError for an event it cannot follow)."""
    if kind == OPENED:
        seats = payload["seats"]
        if not isinstance(seats, list) or len(seats) != 4:
            raise ValueError("a lobby table has four seats")
        return LobbyTable(
            id=str(payload["table_id"]),
            creator=str(payload["creator"]),
            seats=tuple(None if s is None else str(s) for s in seats),
            rules=dict(payload["rules"]),
            decision_ms=int(payload["decision_ms"]),
            created_at=datetime.fromisoformat(str(payload["created_at"])),
        )
    if table is None:
        raise ValueError(f"{kind} before {OPENED}")
    bumped = replace(table, version=table.version + 1)
    if kind in (SEAT_TAKEN, SEAT_LEFT):
        seat = int(payload["seat"])
        seats = list(table.seats)
        seats[seat] = str(payload["player"]) if kind == SEAT_TAKEN else None
        return replace(bumped, seats=tuple(seats))
    if kind == STARTED:
        return replace(bumped, game_id=str(payload["game_id"]))
    if kind == CANCELLED:
        return replace(bumped, cancelled=True)
    raise ValueError(f"not a lobby event: {kind}")


def fold(events: Iterable[tuple[str, Mapping[str, Any]]]) -> LobbyTable | None:
    table: LobbyTable | None = None
    for kind, payload in events:
        table = apply(table, kind, payload)
    return table


# --- decisions: the event to append, or the refusal ---------------------------------------


def _closed(table: LobbyTable) -> LobbyConflict | None:
    if table.status == STATUS_STARTED:
        return LobbyConflict(
            f"table {table.id} has started (game {table.game_id})", "table_started"
        )
    if table.status == STATUS_CANCELLED:
        return LobbyConflict(f"table {table.id} was cancelled", "table_cancelled")
    if table.status == FULL:
        return LobbyConflict(f"table {table.id} is full: its game is starting", "table_full")
    return None


def join(table: LobbyTable, player: str) -> dict[str, Any]:
    """`lobby_seat_taken` for the first free seat."""
    if table.seat_of(player) is not None:
        raise LobbyConflict(
            f"{player} holds seat {table.seat_of(player)} of table {table.id} already",
            "already_seated",
        )
    refusal = _closed(table)
    if refusal is not None:
        raise refusal
    return {"seat": table.free[0], "player": player}


def leave(table: LobbyTable, player: str) -> dict[str, Any]:
    """`lobby_seat_left` for a person who joined (the creator cancels instead)."""
    seat = table.seat_of(player)
    if seat is None:
        raise LobbyConflict(f"{player} holds no seat of table {table.id}", "not_seated")
    if player == table.creator:
        raise LobbyConflict(
            "the table's creator does not leave it: cancel the table instead", "creator_leaves"
        )
    refusal = _closed(table)
    if refusal is not None:
        raise refusal
    return {"seat": seat, "player": player}


def cancel(table: LobbyTable, by: str) -> dict[str, Any]:
    """`lobby_table_cancelled` (the caller checked that `by` may)."""
    refusal = _closed(table)
    if refusal is not None:
        raise refusal
    return {"by": by}
