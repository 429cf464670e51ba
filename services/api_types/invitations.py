"""An invitation, as the API answers it and the player's notices carry it."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from msgspec import Struct


class InvitationOut(Struct):
    """An invitation to the seat(s) of a table (services.play.invitations)."""

    id: str
    game_id: str
    inviter: str
    invitee: str
    seats: list[int]
    status: Literal["pending", "accepted", "declined", "expired", "cancelled"]
    reason: str | None
    start: bool
    created_at: datetime
    expires_at: datetime
    answered_at: datetime | None
    players: list[str]
    rules: dict[str, Any]
    decision_seconds: float | None
    game_status: str | None
