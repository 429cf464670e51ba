"""The commands a game answers: what a seat, the service or a tool asks of it.

Values as given: `domain.game.decide` reads their fields as values of any kind and refuses a
wrong one with a Violation (a player's command) or a CommandError (the service's), so nothing
here checks types. This module is never compiled (docs/rules-engine.md, "The native build"):
a compiled class would check its fields' types on construction and raise TypeError instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from domain.rules import Rules


@dataclass(frozen=True, slots=True)
class CreateGame:
    game_id: str
    players: tuple[str, ...]
    rules: Rules = field(default_factory=Rules)
    commitment: str = ""
    client_seed: str = ""
    shuffle: str = "king-shuffle/1"
    shuffle_id: str = ""  # the id king-shuffle/1 uses; empty means the game's own id


@dataclass(frozen=True, slots=True)
class StartDeal:
    """Deal the next hands (the caller derives them, e.g. with king-shuffle/1)."""

    hands: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Declare:
    seat: int
    contract: str


@dataclass(frozen=True, slots=True)
class AskRedeal:
    seat: int


@dataclass(frozen=True, slots=True)
class Play:
    seat: int
    card: int | str


@dataclass(frozen=True, slots=True)
class RecordStrike:
    seat: int
    reason: str


@dataclass(frozen=True, slots=True)
class Abandon:
    seat: int
    reason: str


@dataclass(frozen=True, slots=True)
class Substitute:
    seat: int
    player: str


@dataclass(frozen=True, slots=True)
class RevealSeed:
    server_seed: str


Command = (
    CreateGame
    | StartDeal
    | Declare
    | AskRedeal
    | Play
    | RecordStrike
    | Abandon
    | Substitute
    | RevealSeed
)
