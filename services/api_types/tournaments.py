"""A tournament's standings (tournament.standings.to_json, GET
/api/v1/tournaments/{id}/standings) and pairings (services.scheduler.TournamentDesk.pairings,
GET /api/v1/tournaments/{id}/pairings)."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, UnsetType

from services.api_types.common import Fraction, Players, Seat, Shape

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
]
