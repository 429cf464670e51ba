"""A lobby table, as the lobby's answers and its stream show it (services.lobby)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from msgspec import Meta

from services.api_types.common import Shape

LobbyStatus = Literal["open", "full", "started", "cancelled"]


class LobbyTableOut(Shape):
    """An open table of the lobby: who sits where (`null`: a seat left for a person), its
    rules and time limit, and once started the game to play (`game_id`, `play_url`)."""

    id: Annotated[str, Meta(examples=["t-5b2f0c9e8a71"])]
    status: Annotated[
        LobbyStatus,
        Meta(description="open (a free seat), full (its game is starting), started, cancelled"),
    ]
    creator: str
    seats: Annotated[
        list[str | None],
        Meta(min_length=4, max_length=4, description="by seat: a player, house:<strategy>, null"),
    ]
    free_seats: list[int]
    rules: Annotated[dict[str, Any], Meta(description="the rule options that differ from default")]
    decision_seconds: float
    game_id: str | None
    play_url: Annotated[str | None, Meta(description="/play/<game_id> once started")]
    version: Annotated[int, Meta(description="how many changes the table has seen")]
    created_at: datetime


class _LobbyMessage(Shape, tag_field="type"):
    id: Annotated[int, Meta(ge=1, description="the change's feed position (Last-Event-ID)")]
    table_id: str
    data: LobbyTableOut


class TableOpenedMessage(_LobbyMessage, tag="table_opened"):
    """A table was opened."""


class SeatTakenMessage(_LobbyMessage, tag="seat_taken"):
    """A person took a free seat."""


class SeatLeftMessage(_LobbyMessage, tag="seat_left"):
    """A person gave up their seat before the start."""


class TableStartedMessage(_LobbyMessage, tag="table_started"):
    """Every seat was filled and the game started: `data.game_id`, `data.play_url`."""


class TableCancelledMessage(_LobbyMessage, tag="table_cancelled"):
    """The creator (or the admin) cancelled the table before its start."""


LobbyMessage = (
    TableOpenedMessage
    | SeatTakenMessage
    | SeatLeftMessage
    | TableStartedMessage
    | TableCancelledMessage
)
