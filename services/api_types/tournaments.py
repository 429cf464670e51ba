"""A tournament's standings (tournament.standings.to_json, GET
/api/v1/tournaments/{id}/standings), pairings (services.scheduler.TournamentDesk.pairings,
GET /api/v1/tournaments/{id}/pairings) and the messages of its event stream (GET
/api/v1/tournaments/{id}/events: the tournament stream's events as
`{"id", "tournament_id", "type", "at", "data"}`, tagged by `type`)."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, UnsetType

from services.api_types.common import (
    Four,
    Fraction,
    GamePoints,
    Players,
    RuleChanges,
    Seat,
    SeatOrNone,
    Seats,
    Shape,
)

Display = Annotated[
    str, Meta(pattern=r"^-?\d+\.\d{2}$", description="the exact value with two decimals")
]
Fill = Literal["bye", "house_bot"]
HouseSeats = Annotated[list[Seat], Meta(description="the seats played by house bots")]


class StandingRow(Shape):
    """One player's line, best first; players equal on every tie-break share a rank."""

    rank: int
    player: str
    ladder: Annotated[Fraction, Meta(description="ladder points, byes included")]
    ladder_display: Display
    game_points: Annotated[int, Meta(description="tie-break 2: the totals of the player's seats")]
    table_mates: Annotated[Fraction, Meta(description="tie-break 3: table-mates' ladder points")]
    table_mates_display: Display
    wins: int
    games: int
    byes: int
    bye_points: Annotated[Fraction, Meta(description="what the byes added to `ladder`")]
    forfeits: int


class RoundTable(Shape):
    """A table of a round as paired (a king-pairing/1 round's table)."""

    table: int
    seats: Players
    house_seats: HouseSeats


class PairingRoundDoc(Shape):
    """A round as king-pairing/1 writes it (what `verify(input, pairing)` re-checks)."""

    round: int
    tables: list[RoundTable]
    byes: list[str]


class SwissEntrant(Shape):
    player: str
    ladder: Fraction
    game_points: int
    table_mates: Fraction
    wins: int


class SwissInput(Shape, tag_field="system", tag="swiss"):
    """The king-pairing/1 input of a Swiss round."""

    format: Literal["king-pairing/1"]
    round: int
    seed: str
    fill: Fill
    entrants: list[SwissEntrant]
    history: list[PairingRoundDoc]


class RoundRobinInput(Shape, tag_field="system", tag="round_robin"):
    """The king-pairing/1 input of a round-robin plan."""

    format: Literal["king-pairing/1"]
    seed: str
    fill: Fill
    rounds: Annotated[int | None, Meta(description="rounds planned (null: the default)")]
    players: list[str]
    history: list[PairingRoundDoc]


class Balance(Shape):
    """How evenly a round-robin spreads the meetings of pairs of players."""

    players: int
    pairs: int
    ideal_low: int
    ideal_high: int
    min_meetings: int
    max_meetings: int
    never_met: int
    below_ideal: int
    above_ideal: int
    min_byes: int
    max_byes: int
    min_house_games: int
    max_house_games: int
    ideal: Annotated[bool, Meta(description="no pair outside the ideal band")]


class ScheduleReport(Shape):
    """How a round-robin round's plan was built."""

    method: Annotated[str, Meta(description='"search", or the name of the design used')]
    balance: Balance


class PairedTable(Shape):
    """A table of a paired round with its game."""

    table: int
    game_id: str
    seats: Players
    house_seats: HouseSeats


class PairingsRound(Shape):
    """One round of GET /api/v1/tournaments/{id}/pairings."""

    round: int
    tables: list[PairedTable]
    byes: list[str]
    closed: bool
    manual: Annotated[bool, Meta(description="paired by hand (then `input` is null)")]
    pairing: PairingRoundDoc
    input: Annotated[
        SwissInput | RoundRobinInput | None, Meta(description="the king-pairing/1 input")
    ]
    schedule: Annotated[ScheduleReport, Meta(description="round-robin rounds only")] | (
        UnsetType
    ) = UNSET


# --- a tournament's events (GET /api/v1/tournaments/{id}/events) -----------------------------


class TournamentCreatedData(Shape):
    """The tournament's settings (the first event)."""

    tournament_id: str
    name: str
    format: Literal["swiss", "round_robin"]
    rounds: Annotated[int, Meta(description="rounds to play (0: the format's default)")]
    fill: Literal["bye", "house_bot"]
    bye_points: Annotated[str, Meta(description='"mean" or a fraction: "0", "1/2"')]
    duplicate: bool
    seed: str
    rules: RuleChanges
    house_strategy: str


class PlayerRegisteredData(Shape):
    """A player joins (paired from the next round on)."""

    player_id: str
    name: str
    kind: Annotated[Literal["builtin", "bot", "human"], Meta(description="builtin: a strategy")]
    spec: Annotated[str, Meta(description="the strategy (builtin) or the player id")]


class PlayerWithdrewData(Shape):
    """A player leaves (not paired from the next round on)."""

    player_id: str
    reason: str


class ManualTable(Shape):
    table: int
    seats: Players
    house: HouseSeats


class ManualPairingData(Shape):
    """The organiser's pairing of the next round (the round is paired as given)."""

    round: int
    tables: list[ManualTable]
    byes: list[str]
    by: Annotated[str, Meta(description="who paired it")]


class RoundTableData(Shape):
    table: int
    game_id: str
    shuffle_id: Annotated[str, Meta(description="the id fed to king-shuffle/1 for its deals")]
    seats: Players
    house: HouseSeats


class RoundPairedData(Shape):
    """A round's tables (each with its game) and byes."""

    round: int
    tables: list[RoundTableData]
    byes: list[str]


class GameRecordedData(Shape):
    """A finished game's result as the standings see it."""

    round: int
    game_id: str
    seats: Players
    totals: Four
    winners: Seats
    points: Annotated[
        list[tuple[str, GamePoints]], Meta(description="[player, ladder points] per person")
    ]
    forfeited: Annotated[list[str], Meta(description="who abandoned (-30 each)")]
    house: HouseSeats
    king: SeatOrNone


class RoundClosedData(Shape):
    """Every game of the round is recorded and its seeds revealed."""

    round: int


class TournamentFinishedData(Shape):
    """The tournament is over: the winners."""

    winners: list[str]


class _TournamentMessage(Shape, tag_field="type"):
    id: Annotated[int, Meta(ge=1, description="the tournament stream's version")]
    tournament_id: str
    at: Annotated[str, Meta(description="when it was recorded, ISO 8601 (UTC, milliseconds)")]


class TournamentCreatedMessage(_TournamentMessage, tag="tournament_created"):
    data: TournamentCreatedData


class PlayerRegisteredMessage(_TournamentMessage, tag="player_registered"):
    data: PlayerRegisteredData


class PlayerWithdrewMessage(_TournamentMessage, tag="player_withdrew"):
    data: PlayerWithdrewData


class ManualPairingMessage(_TournamentMessage, tag="manual_pairing"):
    data: ManualPairingData


class RoundPairedMessage(_TournamentMessage, tag="round_paired"):
    data: RoundPairedData


class GameRecordedMessage(_TournamentMessage, tag="game_recorded"):
    data: GameRecordedData


class RoundClosedMessage(_TournamentMessage, tag="round_closed"):
    data: RoundClosedData


class TournamentFinishedMessage(_TournamentMessage, tag="tournament_finished"):
    """The tournament's last event: its stream ends after it."""

    data: TournamentFinishedData


TournamentMessage = (
    TournamentCreatedMessage
    | PlayerRegisteredMessage
    | PlayerWithdrewMessage
    | ManualPairingMessage
    | RoundPairedMessage
    | GameRecordedMessage
    | RoundClosedMessage
    | TournamentFinishedMessage
)


__all__ = [
    "Balance",
    "PairedTable",
    "PairingRoundDoc",
    "PairingsRound",
    "RoundRobinInput",
    "RoundTable",
    "ScheduleReport",
    "StandingRow",
    "SwissEntrant",
    "SwissInput",
    "TournamentMessage",
]
