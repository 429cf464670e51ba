"""Ratings: OpenSkill Plackett–Luce over every finished game, across tournaments.

A game is a four-way ranking: seats ordered by game total, highest first, equal totals tied;
when the King was made (R-LADDERKING) the maker ranks first alone and the rest by total; a
seat whose player abandoned ranks last (tied with any other leaver). Each seat is a team of
one, keyed by the id it was paired under (a person, or a bot version such as
"house:heuristic@1"), so the same id is followed from tournament to tournament.

Folding is pure and deterministic: the games are applied in the order given (the store's
global feed order), each from the ratings the previous games left, and the result is a new
immutable `Ratings`. The leaderboard orders by the conservative ordinal μ − 3σ, so a player
is ranked high only once the system is confident of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from openskill.models import PlackettLuce

from tournament.model import GameResult, PlayerId

Z = 3.0
"""Standard deviations taken off μ in the leaderboard's ordinal."""

_MODEL = PlackettLuce()


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float = _MODEL.mu
    sigma: float = _MODEL.sigma
    games: int = 0

    @property
    def ordinal(self) -> float:
        """μ − 3σ: a lower bound the player's skill very likely exceeds."""
        return self.mu - Z * self.sigma


@dataclass(frozen=True, slots=True)
class RatedGame:
    """What a rating update needs from one finished game (seats in order)."""

    game_id: str
    players: tuple[PlayerId, PlayerId, PlayerId, PlayerId]
    totals: tuple[int, int, int, int]
    king: int | None = None
    abandoned: tuple[int, ...] = ()

    @classmethod
    def from_result(cls, result: GameResult) -> RatedGame:
        leavers = tuple(s for s, p in enumerate(result.seats) if p in result.forfeited)
        return cls(result.game_id, result.seats, result.totals, result.king, leavers)


@dataclass(frozen=True, slots=True)
class Ratings:
    """Ratings by id (read-only mapping) and how many games have been folded in."""

    by_id: Mapping[PlayerId, Rating] = field(default_factory=lambda: MappingProxyType({}))
    games: int = 0

    def get(self, player: PlayerId) -> Rating:
        return self.by_id.get(player, Rating())


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    rank: int
    player: PlayerId
    ordinal: float
    mu: float
    sigma: float
    games: int


def ranks(
    totals: Sequence[int], king: int | None = None, abandoned: Sequence[int] = ()
) -> list[int]:
    """Each seat's place, 1 = best; equal places are ties (Plackett–Luce ranks)."""

    def key(s: int) -> tuple[int, int, int]:
        return (s in abandoned, s != king if king is not None else 0, -totals[s])

    keys = [key(s) for s in range(len(totals))]
    return [1 + sum(1 for k in keys if k < keys[s]) for s in range(len(totals))]


def _apply(table: dict[PlayerId, Rating], game: RatedGame) -> None:
    if len(set(game.players)) != 4:
        raise ValueError(f"game {game.game_id}: a rated game has four different ids")
    current = [table.get(p, Rating()) for p in game.players]
    teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in current]
    new = _MODEL.rate(
        teams, ranks=[float(x) for x in ranks(game.totals, game.king, game.abandoned)]
    )
    for p, old, team in zip(game.players, current, new, strict=True):
        table[p] = Rating(team[0].mu, team[0].sigma, old.games + 1)


def rate_game(ratings: Ratings, game: RatedGame) -> Ratings:
    """The ratings after one more game."""
    table = dict(ratings.by_id)
    _apply(table, game)
    return Ratings(MappingProxyType(table), ratings.games + 1)


def fold(games: Iterable[RatedGame], ratings: Ratings | None = None) -> Ratings:
    """The ratings after every game, in the order given (one copy, not one per game)."""
    start = ratings or Ratings()
    table = dict(start.by_id)
    count = start.games
    for game in games:
        _apply(table, game)
        count += 1
    return Ratings(MappingProxyType(table), count)


def leaderboard(
    ratings: Ratings, limit: int | None = None, min_games: int = 0
) -> tuple[LeaderboardRow, ...]:
    """Ids by ordinal μ − 3σ, highest first (ties by id); equal ordinals share a rank."""
    rows = sorted(
        ((p, r) for p, r in ratings.by_id.items() if r.games >= min_games),
        key=lambda pr: (-pr[1].ordinal, pr[0]),
    )
    if limit is not None:
        rows = rows[:limit]
    out: list[LeaderboardRow] = []
    for i, (p, r) in enumerate(rows):
        rank = out[-1].rank if out and out[-1].ordinal == r.ordinal else i + 1
        out.append(LeaderboardRow(rank, p, r.ordinal, r.mu, r.sigma, r.games))
    return tuple(out)
