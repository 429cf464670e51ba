"""Every message of the event streams (Server-Sent Events or NDJSON lines), one Struct per
message type, tagged by `type`, and a tagged union per stream:

- `PublicGameMessage`: GET /api/v1/games/{id}/events (services.play.streams.game_stream,
  the public's form of domain.view.disclose);
- `SeatGameMessage`: GET /api/v1/games/{id}/seats/{seat}/events (the seat's own hand in
  `deal_started`, plus `your_turn`);
- `PlayerNotice`: GET /api/v1/me/events (services.play.streams.player_stream);
- `TournamentMessage` (in services.api_types.tournaments): GET /api/v1/tournaments/{id}/events.

A game message is `{"id": <version>, "game_id", "type", "data"}`; SSE sends it as
`id:`/`event:`/`data:`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from services.api_types.common import (
    Attempt,
    Card,
    Cards,
    ContractName,
    DealNo,
    Four,
    GamePoints,
    Hands,
    Hex64,
    LegalAction,
    Players,
    RuleOptions,
    Seat,
    SeatOrNone,
    Seats,
    Shape,
)
from services.api_types.invitations import InvitationOut
from services.api_types.lobby import LobbyMessage
from services.api_types.tournaments import TournamentMessage
from services.api_types.views import SeatView

Version = Annotated[int, Meta(ge=1, description="the game's version: the event's number")]

# --- a game's events, as every audience sees them ----------------------------------------


class GameCreatedData(Shape):
    """The table: rules, players by seat and the shuffle commitment (never the seed)."""

    game_id: str
    rules: RuleOptions
    players: Players
    commitment: Annotated[str, Meta(description="SHA-256 of the server seed, hex (or empty)")]
    client_seed: str
    shuffle: Annotated[
        Literal["king-shuffle/1", "explicit"], Meta(description="how the hands are dealt")
    ]
    shuffle_id: Annotated[str, Meta(description="the game id text fed to king-shuffle/1")]


class DealStartedData(Shape):
    """A deal begins (the public's form: no hand)."""

    deal: DealNo
    attempt: Attempt
    declarer: Seat


class SeatDealStartedData(DealStartedData):
    """A deal begins (a seat's form: with its own hand)."""

    hand: Annotated[Cards, Meta(min_length=13, max_length=13, description="the seat's hand")]


class ContractDeclaredData(Shape):
    """The deal's declarer chose its contract."""

    deal: DealNo
    seat: Seat
    contract: ContractName


class RedealAskedData(Shape):
    """R-WEAKHAND: the declarer gave the hands back; they are public from now on."""

    deal: DealNo
    seat: Seat
    hands: Annotated[Hands, Meta(description="the hands given back")]


class CardPlayedData(Shape):
    """A seat played a card."""

    deal: DealNo
    seat: Seat
    card: Card


class TrickTakenData(Shape):
    """A trick is complete: its four cards and who took it."""

    deal: DealNo
    trick: Annotated[int, Meta(ge=1, le=13, description="the trick's number, 1-based")]
    leader: Seat
    cards: Annotated[
        list[Card], Meta(min_length=4, max_length=4, description="in play order from the leader")
    ]
    winner: Seat


class DealEndedData(Shape):
    """The deal's result and its four hands as dealt, public from now on."""

    deal: DealNo
    attempt: Attempt
    contract: ContractName
    tricks: Annotated[int, Meta(ge=0, le=13, description="tricks played")]
    tricks_won: Four
    scores: Four
    void: Annotated[bool, Meta(description="queens_one_each_void: the deal does not count")]
    king: Annotated[SeatOrNone, Meta(description="the seat that made King (R-KING)")]
    hands: Hands


class SeatResult(Shape):
    """One person's ladder points (after R-ABANDON and R-SUBSTITUTE)."""

    seat: Seat
    player: str
    points: GamePoints


class GameEndedData(Shape):
    """The game's result: totals, winning seats, ladder points by seat and by person."""

    totals: Four
    winners: Annotated[Seats, Meta(description="the winning seats")]
    ladder_points: Annotated[
        list[GamePoints], Meta(min_length=4, max_length=4, description="by seat")
    ]
    king: SeatOrNone
    results: Annotated[list[SeatResult], Meta(description="by person")]


class SeedRevealedData(Shape):
    """The server seed, published as the game's last event."""

    server_seed: Hex64


class StrikeRecordedData(Shape):
    """A time-out or an illegal action: a default move was played for the seat."""

    seat: Seat
    reason: Annotated[str, Meta(description='why: "timeout", "illegal_action", ...')]
    count: Annotated[int, Meta(ge=1, description="the seat's strikes so far")]


class SeatAbandonedData(Shape):
    """R-ABANDON: the player left or was forfeited."""

    seat: Seat
    player: str
    reason: Annotated[str, Meta(description='why: "strikes", ...')]


class SeatSubstitutedData(Shape):
    """R-SUBSTITUTE: someone (a house bot) takes over an abandoned seat."""

    seat: Seat
    player: str


class _GameMessage(Shape, tag_field="type"):
    id: Version
    game_id: str


class GameCreatedMessage(_GameMessage, tag="game_created"):
    """The game's first event."""

    data: GameCreatedData


class DealStartedMessage(_GameMessage, tag="deal_started"):
    """The public's `deal_started`: no hand."""

    data: DealStartedData


class SeatDealStartedMessage(_GameMessage, tag="deal_started"):
    """A seat's `deal_started`: with the seat's own hand."""

    data: SeatDealStartedData


class ContractDeclaredMessage(_GameMessage, tag="contract_declared"):
    data: ContractDeclaredData


class RedealAskedMessage(_GameMessage, tag="redeal_asked"):
    data: RedealAskedData


class CardPlayedMessage(_GameMessage, tag="card_played"):
    data: CardPlayedData


class TrickTakenMessage(_GameMessage, tag="trick_taken"):
    data: TrickTakenData


class DealEndedMessage(_GameMessage, tag="deal_ended"):
    data: DealEndedData


class GameEndedMessage(_GameMessage, tag="game_ended"):
    data: GameEndedData


class SeedRevealedMessage(_GameMessage, tag="seed_revealed"):
    """The game's last event: its stream ends after it."""

    data: SeedRevealedData


class StrikeRecordedMessage(_GameMessage, tag="strike_recorded"):
    data: StrikeRecordedData


class SeatAbandonedMessage(_GameMessage, tag="seat_abandoned"):
    data: SeatAbandonedData


class SeatSubstitutedMessage(_GameMessage, tag="seat_substituted"):
    """A seat's stream ends with its own hand-over."""

    data: SeatSubstitutedData


class YourTurnData(Shape):
    """The seat's turn: its view, legal actions and deadline (not a stored event)."""

    version: Annotated[Version, Meta(description="act at this version")]
    seat: Seat
    deadline: Annotated[str | None, Meta(description="ISO 8601 time the turn ends")]
    deadline_ms: Annotated[Annotated[int, Meta(ge=0)] | None, Meta(description="milliseconds left")]
    legal: list[LegalAction]
    view: SeatView


class YourTurnMessage(_GameMessage, tag="your_turn"):
    """Sent on a seat's stream whenever the game waits for the seat; `id` is the version of
    the last event."""

    data: YourTurnData


_SharedGameMessage = (
    GameCreatedMessage
    | ContractDeclaredMessage
    | RedealAskedMessage
    | CardPlayedMessage
    | TrickTakenMessage
    | DealEndedMessage
    | GameEndedMessage
    | SeedRevealedMessage
    | StrikeRecordedMessage
    | SeatAbandonedMessage
    | SeatSubstitutedMessage
)
PublicGameMessage = DealStartedMessage | _SharedGameMessage
SeatGameMessage = SeatDealStartedMessage | YourTurnMessage | _SharedGameMessage

# --- a player's notices (GET /api/v1/me/events) ---------------------------------------------

PlayerSeats = Annotated[
    list[Seat], Meta(min_length=1, max_length=4, description="the seats the player holds")
]
Number = Annotated[int | float, Meta(description="ladder points as a JSON number")]


class GameStartedNoticeData(Shape):
    """Which of the player's games is live, and where the player sits in it."""

    game_id: str
    player: Annotated[str, Meta(description="the token's player")]
    seats: PlayerSeats
    players: Players


class GameOverNoticeData(GameStartedNoticeData):
    """A game of the player's has ended, with its result (null when there is none to show)."""

    totals: Annotated[Four | None, Meta(description="by seat")]
    winners: Annotated[Seats | None, Meta(description="the winning seats")]
    ladder_points: Annotated[list[Number] | None, Meta(description="by seat")]
    points: Annotated[
        list[Number] | None, Meta(description="the player's own, for each of its seats")
    ]


class _Notice(Shape, tag_field="type"):
    id: Annotated[
        str,
        Meta(
            pattern="^.+:(started|over)$",
            description="<game_id>:started or <game_id>:over: the same notice, the same id",
        ),
    ]
    game_id: str


class GameStartedNotice(_Notice, tag="game_started"):
    """One of the player's games is live (sent for each live game when the stream opens)."""

    data: GameStartedNoticeData


class GameOverNotice(_Notice, tag="game_over"):
    """One of the player's games has ended."""

    data: GameOverNoticeData


class _InvitationNotice(Shape, tag_field="type"):
    id: Annotated[
        str,
        Meta(
            pattern="^.+:(invited|closed)$",
            description="<invitation_id>:invited or <invitation_id>:closed",
        ),
    ]
    game_id: str
    data: InvitationOut


class InvitationNotice(_InvitationNotice, tag="invitation"):
    """An invitation to the player is open: accept or decline it through the API."""


class InvitationClosedNotice(_InvitationNotice, tag="invitation_closed"):
    """An invitation to the player was answered, cancelled or has expired (`data.status`)."""


PlayerNotice = GameStartedNotice | GameOverNotice | InvitationNotice | InvitationClosedNotice

STREAMS: dict[str, object] = {
    "GET /api/v1/games/{id}/events": PublicGameMessage,
    "GET /api/v1/games/{id}/seats/{seat}/events": SeatGameMessage,
    "GET /api/v1/me/events": PlayerNotice,
    "GET /api/v1/tournaments/{id}/events": TournamentMessage,
    "GET /api/v1/lobby/events": LobbyMessage,
}
"""Each stream's message union, by endpoint."""
