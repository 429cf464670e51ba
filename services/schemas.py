"""The API's request and reply shapes (msgspec Structs; never the ORM rows)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from msgspec import Meta, Struct

from domain.contracts import Contract

PlayerId = Annotated[str, Meta(pattern=r"^[a-z0-9][a-z0-9_-]{1,39}$", examples=["ada"])]
SeatOwner = Annotated[
    str,
    Meta(
        max_length=60, description="a player id, or house:<strategy>", examples=["house:heuristic"]
    ),
]
Seat = Annotated[int, Meta(ge=0, le=3)]


class PlayerCreate(Struct, forbid_unknown_fields=True):
    id: PlayerId
    name: Annotated[str, Meta(min_length=1, max_length=100)] | None = None
    kind: Literal["human", "bot"] = "human"
    bot_url: Annotated[str, Meta(max_length=2000)] | None = None


class PlayerOut(Struct):
    id: str
    name: str
    kind: str
    bot_url: str | None
    created_at: datetime


class PlayerCreated(Struct):
    player: PlayerOut
    token: str


class BotUrlIn(Struct, forbid_unknown_fields=True):
    url: Annotated[str, Meta(max_length=2000)] | None


class TokenOut(Struct):
    token: str


class GameCreate(Struct, forbid_unknown_fields=True):
    seats: Annotated[list[SeatOwner], Meta(min_length=4, max_length=4)]
    rules: Annotated[dict[str, Any], Meta(description="rule options of KING_RULES.md")] = {}
    decision_seconds: Annotated[float, Meta(ge=0.05, le=3600)] | None = None
    client_seed: Annotated[str, Meta(max_length=200)] = ""
    id: Annotated[str, Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")] | None = None
    start: bool = True
    invitation_seconds: (
        Annotated[
            float,
            Meta(
                ge=10, le=86400, description="how long the invitations to other players stay open"
            ),
        ]
        | None
    ) = None


class GameOut(Struct):
    id: str
    status: str
    seats: list[str]
    rules: dict[str, Any]
    decision_seconds: float
    client_seed: str
    created_by: str
    created_at: datetime


class GameDetail(Struct):
    game: GameOut
    view: dict[str, Any] | None
    version: int


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


class MyInvitations(Struct):
    received: list[InvitationOut]
    sent: list[InvitationOut]


class TableDetail(GameDetail):
    """A table just set: the game, and the invitations it sent (it starts once they are all
    accepted)."""

    invitations: list[InvitationOut] = []


CardName = Annotated[
    str, Meta(pattern="^[2-9TJQKA][SHDC]$", description="rank then suit", examples=["QS"])
]
ActionSeat = Annotated[
    Seat | None,
    Meta(description="the seat acting: needed only by a token holding two seats of the table"),
]
ActionVersion = Annotated[
    Annotated[int, Meta(ge=0)] | None,
    Meta(
        description=(
            "the game version the action answers (the view's `version`): an action for an "
            "older version is refused (409) instead of being decided on a newer state"
        )
    ),
]


class PlayIn(Struct, tag_field="type", tag="play", forbid_unknown_fields=True):
    """Play a card."""

    card: CardName
    seat: ActionSeat = None
    version: ActionVersion = None

    def as_dict(self) -> dict[str, Any]:
        return {"type": "play", "card": self.card}


class DeclareIn(Struct, tag_field="type", tag="declare", forbid_unknown_fields=True):
    """Declare the deal's contract (the declarer only)."""

    contract: Contract
    seat: ActionSeat = None
    version: ActionVersion = None

    def as_dict(self) -> dict[str, Any]:
        return {"type": "declare", "contract": self.contract.value}


class RedealIn(Struct, tag_field="type", tag="redeal", forbid_unknown_fields=True):
    """Ask for a redeal of a weak hand (where the rules allow it)."""

    seat: ActionSeat = None
    version: ActionVersion = None

    def as_dict(self) -> dict[str, Any]:
        return {"type": "redeal"}


# One body per kind of action, told apart by `type`: a play without a card, or a declaration
# without a contract, does not fit the document (400) rather than reaching the rules.
ActionIn = PlayIn | DeclareIn | RedealIn


class StrikeOut(Struct):
    seat: int
    reason: str
    count: int
    forfeited: bool
    default_action: dict[str, str] | None


class ActionOut(Struct):
    ok: bool
    seat: int
    version: int
    view: dict[str, Any]
    strike: StrikeOut | None = None


class SeatViewOut(Struct):
    game_id: str
    seat: int
    version: int
    deadline: str | None
    view: dict[str, Any]


class ValidationError(Struct, omit_defaults=True):
    """One reason a request did not fit the document: what was wrong, and where."""

    message: str
    key: str | None = None
    source: str | None = None


class Problem(Struct, omit_defaults=True):
    """RFC 9457 problem details. `type` is one stable URI per kind of problem and `code` a
    machine-readable reason; a rules refusal adds the rule id, its message and the strike it
    cost, a request that does not fit the document every reason in `errors`."""

    type: Annotated[str, Meta(examples=["https://king.example/problems/illegal-action"])]
    title: str
    status: Annotated[int, Meta(ge=400, le=599)]
    detail: str
    code: Annotated[str, Meta(examples=["must_follow_suit"])]
    rule: Annotated[str, Meta(examples=["R-FOLLOW"])] | None = None
    message: str | None = None
    strike: StrikeOut | None = None
    errors: list[ValidationError] | None = None
