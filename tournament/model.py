"""Pure value types of a tournament: tables, rounds, schedules, game results, settings.

Everything here is a frozen dataclass of tuples, so a value can be hashed, compared and shared
between threads, and a function that takes one cannot change what the caller holds. Player
ids are opaque text (a person or a bot; a new version of a bot registers as a player of its
own, since ratings follow the id); house-bot seats are marked as such on their table, never
confused with a registered player.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

PlayerId = str

Fill = Literal["bye", "house_bot"]
"""What to do with the players left over when the field is not a multiple of four: sit them
out with a bye, or complete tables with house-bot seats."""

Format = Literal["swiss", "round_robin"]

ByeScore = Fraction | Literal["mean"]
"""Ladder points a bye is worth: a fixed amount, or "mean": the player's own mean ladder points
per game played (0 before their first game)."""

HOUSE_BOT_PREFIX = "house-bot-"


def house_bot_id(n: int) -> PlayerId:
    """The id of the n-th house-bot seat of a round (1-based, unique within the round)."""
    return f"{HOUSE_BOT_PREFIX}{n}"


def seed_key(seed: str, player: PlayerId) -> bytes:
    """The stable seed-based order of players: the last tie-break everywhere.

    SHA-256 of the tournament seed and the player id, so the order is fixed for the whole
    tournament, unrelated to the ids' spelling, and the same on every machine.
    """
    return hashlib.sha256(f"king-tournament/1|{seed}|{player}".encode()).digest()


@dataclass(frozen=True, slots=True)
class Table:
    """One table of a round: the four seats in play order (seat 0 first).

    `house` lists the seats held by house bots (their ids are `house-bot-<n>`); every other
    seat is a registered player.
    """

    number: int
    seats: tuple[PlayerId, PlayerId, PlayerId, PlayerId]
    house: tuple[int, ...] = ()

    @property
    def players(self) -> tuple[PlayerId, ...]:
        """The registered players at the table, in seat order (house bots left out)."""
        return tuple(p for s, p in enumerate(self.seats) if s not in self.house)

    def seat_of(self, player: PlayerId) -> int:
        return self.seats.index(player)


@dataclass(frozen=True, slots=True)
class Round:
    """The pairing of one round: its tables (numbered from 1) and the players given a bye."""

    number: int
    tables: tuple[Table, ...]
    byes: tuple[PlayerId, ...] = ()

    @property
    def seated(self) -> tuple[PlayerId, ...]:
        """Every registered player who plays this round, table by table."""
        return tuple(p for t in self.tables for p in t.players)


@dataclass(frozen=True, slots=True)
class Balance:
    """How evenly a schedule spreads the meetings of pairs of players.

    With T table-mate meetings shared by P pairs, the ideal is that every pair meets
    `ideal_low` = floor(T/P) or `ideal_high` = ceil(T/P) times; `below_ideal` and `above_ideal`
    count the pairs outside that band (both zero means no schedule could be more even).
    Byes and house-bot games are counted per player (min and max over the field).
    """

    players: int
    pairs: int
    ideal_low: int
    ideal_high: int
    min_meetings: int
    max_meetings: int
    never_met: int
    below_ideal: int
    above_ideal: int
    min_byes: int = 0
    max_byes: int = 0
    min_house_games: int = 0
    max_house_games: int = 0

    @property
    def ideal(self) -> bool:
        return self.below_ideal == 0 and self.above_ideal == 0


@dataclass(frozen=True, slots=True)
class Schedule:
    """A round-robin: every round, how it was built (`method`) and how balanced it is."""

    players: tuple[PlayerId, ...]
    seed: str
    fill: Fill
    rounds: tuple[Round, ...]
    method: str
    balance: Balance


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished (or forfeited) game as the standings see it.

    `seats` are the players the round paired, in seat order; `totals` and `winners` are the
    game's (by seat, winners as seats); `points` is each person's ladder points after
    R-ABANDON and R-SUBSTITUTE (GameEnded.results); `forfeited` lists who abandoned (−30).
    """

    game_id: str
    round: int
    seats: tuple[PlayerId, PlayerId, PlayerId, PlayerId]
    totals: tuple[int, int, int, int]
    winners: tuple[int, ...]
    points: tuple[tuple[PlayerId, Fraction], ...]
    forfeited: tuple[PlayerId, ...] = ()
    house: tuple[int, ...] = ()
    king: int | None = None

    def points_of(self, player: PlayerId) -> Fraction:
        return sum((pts for who, pts in self.points if who == player), Fraction(0))


@dataclass(frozen=True, slots=True)
class TournamentSettings:
    """The published settings the pure functions need (the runner stores them on creation)."""

    format: Format = "swiss"
    rounds: int | None = None
    fill: Fill = "bye"
    bye_points: ByeScore = field(default_factory=Fraction)
    duplicate: bool = False
    seed: str = ""
