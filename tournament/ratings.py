"""Ratings: OpenSkill Plackett–Luce over every finished game, across tournaments.

A game is a four-way ranking: seats ordered by game total, highest first, equal totals tied;
when the King was made (R-LADDERKING) the maker ranks first alone and the rest by total; a
seat whose player abandoned ranks last (tied with any other leaver).

A rating belongs to a bot identity, not to a tournament entry: a service player by its id (the
service keeps no bot versions, so the id is the version: a new version registers a new player),
and a built-in strategy by `house:<strategy>` with its options in a canonical order, so every
entrant of one strategy, in any tournament, and the house bots that fill tables with it share
one rating. When one identity holds several seats of a game it is one team in that game, placed
at the mean of its seats' places: a strategy learns nothing from meeting itself, and a game of
one identity alone is not rated.

Folding is pure and deterministic: the games are applied in the order given (the store's
global feed order), each from the ratings the previous games left, and the result is a new
immutable `Ratings`. The leaderboard orders by the conservative ordinal μ − 3σ, so a player
is ranked high only once the system is confident of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from openskill.models import PlackettLuce

from tournament.events import Registration, TournamentState
from tournament.model import GameResult, PlayerId
from tournament.strategies.base import UnknownStrategy, parse_spec

Z = 3.0
"""Standard deviations taken off μ in the leaderboard's ordinal."""

STRATEGY_PREFIX = "house:"

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
class Identity:
    """Whom a rating belongs to: `key` is the rating's id; `kind` is `strategy` (a built-in
    strategy with its options), `bot` or `human` (a service player)."""

    key: str
    name: str
    kind: str


def strategy_identity(spec: str) -> Identity:
    """`heuristic` → `house:heuristic`; `strong:rollouts=40,budget_ms=100` →
    `house:strong:budget_ms=100,rollouts=40` (options sorted, numbers written plainly)."""
    try:
        base, options = parse_spec(spec)
    except UnknownStrategy:
        canonical = spec.strip()
    else:
        text = ",".join(f"{k}={v:g}" for k, v in sorted(options.items()))
        canonical = f"{base}:{text}" if text else base
    return Identity(STRATEGY_PREFIX + canonical, canonical, "strategy")


def entrant_identity(reg: Registration) -> Identity:
    """A builtin entrant rates as its strategy; any other as the player it registered."""
    if reg.kind == "builtin":
        return strategy_identity(reg.spec)
    return Identity(reg.player_id, reg.name or reg.player_id, reg.kind)


@dataclass(frozen=True, slots=True)
class RatedGame:
    """What a rating update needs from one finished game: each seat's rating id, in seat order
    (an id may hold several seats)."""

    game_id: str
    players: tuple[PlayerId, PlayerId, PlayerId, PlayerId]
    totals: tuple[int, int, int, int]
    king: int | None = None
    abandoned: tuple[int, ...] = ()

    @classmethod
    def from_result(
        cls, result: GameResult, key: Callable[[int, PlayerId], str] | None = None
    ) -> RatedGame:
        """The game rated under `key(seat, entry id)` (default: the entry ids themselves)."""
        leavers = tuple(s for s, p in enumerate(result.seats) if p in result.forfeited)
        ids = tuple(key(s, p) if key else p for s, p in enumerate(result.seats))
        return cls(
            result.game_id, (ids[0], ids[1], ids[2], ids[3]), result.totals, result.king, leavers
        )


def rated_games(state: TournamentState) -> tuple[tuple[RatedGame, ...], dict[str, Identity]]:
    """A tournament's recorded games under bot identities, and who each rating id is.

    House-bot seats rate as the tournament's house strategy."""
    created = state.created
    assert created is not None
    house = strategy_identity(created.house_strategy)
    entrants = {p.player_id: entrant_identity(p) for p in state.players}
    who: dict[str, Identity] = {}

    def key(result: GameResult) -> Callable[[int, PlayerId], str]:
        def of(seat: int, player: PlayerId) -> str:
            ident = house if seat in result.house else entrants.get(player)
            ident = ident or Identity(player, player, "player")
            who[ident.key] = ident
            return ident.key

        return of

    games = tuple(RatedGame.from_result(r, key(r)) for r in state.results)
    return games, who


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
    name: str = ""
    kind: str = ""


def ranks(
    totals: Sequence[int], king: int | None = None, abandoned: Sequence[int] = ()
) -> list[int]:
    """Each seat's place, 1 = best; equal places are ties (Plackett–Luce ranks)."""

    def key(s: int) -> tuple[int, int, int]:
        return (s in abandoned, s != king if king is not None else 0, -totals[s])

    keys = [key(s) for s in range(len(totals))]
    return [1 + sum(1 for k in keys if k < keys[s]) for s in range(len(totals))]


def _apply(table: dict[PlayerId, Rating], game: RatedGame) -> bool:
    """Fold one game in; False when it has a single identity (nothing to learn)."""
    places = ranks(game.totals, game.king, game.abandoned)
    ids = list(dict.fromkeys(game.players))
    if len(ids) < 2:
        return False
    mean_place = [
        sum(pl for p, pl in zip(game.players, places, strict=True) if p == who)
        / game.players.count(who)
        for who in ids
    ]
    current = [table.get(p, Rating()) for p in ids]
    teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in current]
    new = _MODEL.rate(teams, ranks=mean_place)
    for p, old, team in zip(ids, current, new, strict=True):
        table[p] = Rating(team[0].mu, team[0].sigma, old.games + 1)
    return True


def rate_game(ratings: Ratings, game: RatedGame) -> Ratings:
    """The ratings after one more game."""
    table = dict(ratings.by_id)
    rated = _apply(table, game)
    return Ratings(MappingProxyType(table), ratings.games + rated)


def fold(games: Iterable[RatedGame], ratings: Ratings | None = None) -> Ratings:
    """The ratings after every game, in the order given (one copy, not one per game)."""
    start = ratings or Ratings()
    table = dict(start.by_id)
    count = start.games
    for game in games:
        count += _apply(table, game)
    return Ratings(MappingProxyType(table), count)


def leaderboard(
    ratings: Ratings,
    limit: int | None = None,
    min_games: int = 0,
    who: Mapping[str, Identity] | None = None,
) -> tuple[LeaderboardRow, ...]:
    """Ids by ordinal μ − 3σ, highest first (ties by id); equal ordinals share a rank. `who`
    names each id's identity (its name and kind) on the rows."""
    rows = sorted(
        ((p, r) for p, r in ratings.by_id.items() if r.games >= min_games),
        key=lambda pr: (-pr[1].ordinal, pr[0]),
    )
    if limit is not None:
        rows = rows[:limit]
    out: list[LeaderboardRow] = []
    for i, (p, r) in enumerate(rows):
        rank = out[-1].rank if out and out[-1].ordinal == r.ordinal else i + 1
        ident = (who or {}).get(p)
        name, kind = (ident.name, ident.kind) if ident else (p, "")
        out.append(LeaderboardRow(rank, p, r.ordinal, r.mu, r.sigma, r.games, name, kind))
    return tuple(out)
