"""Standings: ladder points (exact fractions, KING_RULES.md §9) and the published tie-breaks.

Order, highest first:
1. ladder points: the sum of each game's ladder points (after R-ABANDON and R-SUBSTITUTE,
   as GameEnded.results gives them) plus the bye points;
2. total game points: the sum of the game totals of the seats the player was paired into;
3. table-mates' ladder points (Buchholz-like): for every game played, the final ladder points
   of the other registered players at the table, summed (a house bot counts 0);
4. wins: games in which the player's seat won (a forfeited game is never a win);
5. then the stable seed order (`model.seed_key`), which also orders the Swiss.
Players equal on 1–4 share a rank.

Byes: each is worth the tournament's published `bye_points`: a fixed number (default 0) or
"mean", the player's own mean ladder points per game played (0 before their first game). A
bye is not a game: it adds nothing to game points, table-mates' points or wins.

Forfeits: the leaver gets −30 (GameEnded.results already says so), the game counts as played
and as a forfeit, and the seat's final total still counts to the leaver's game points (leaving
cannot hide a bad total); a registered player who substituted in another seat gets that seat's
ladder points only.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from domain.events import GameCreated, GameEnded, SeatAbandoned
from tournament.model import ByeScore, GameResult, PlayerId, Round, seed_key

CSV_COLUMNS = (
    "rank",
    "player",
    "ladder",
    "game_points",
    "table_mates",
    "wins",
    "games",
    "byes",
    "forfeits",
    "ladder_exact",
    "table_mates_exact",
)


@dataclass(frozen=True, slots=True)
class StandingRow:
    """One player's line. `ladder` includes `bye_points`; `table_mates` is tie-break 3."""

    rank: int
    player: PlayerId
    ladder: Fraction
    game_points: int
    table_mates: Fraction
    wins: int
    games: int
    byes: int
    bye_points: Fraction
    forfeits: int

    @property
    def key(self) -> tuple[Fraction, int, Fraction, int]:
        """The published ranking key (higher is better)."""
        return (self.ladder, self.game_points, self.table_mates, self.wins)


@dataclass(frozen=True, slots=True)
class Standings:
    rows: tuple[StandingRow, ...]

    def row(self, player: PlayerId) -> StandingRow:
        for r in self.rows:
            if r.player == player:
                return r
        raise KeyError(player)

    @property
    def order(self) -> tuple[PlayerId, ...]:
        return tuple(r.player for r in self.rows)


def two_decimals(x: Fraction) -> str:
    """An exact fraction shown with two decimals, halves rounded away from zero."""
    hundredths = abs(x) * 100
    whole = int(hundredths)
    if hundredths - whole >= Fraction(1, 2):
        whole += 1
    sign = "-" if x < 0 and whole else ""
    return f"{sign}{whole // 100}.{whole % 100:02d}"


def standings(
    players: Sequence[PlayerId],
    results: Iterable[GameResult],
    rounds: Iterable[Round] = (),
    bye_points: ByeScore = Fraction(0),
    seed: str = "",
) -> Standings:
    """The standings of `players` (every registered player, active or not) from the finished
    games and the rounds' byes."""
    registered = set(players)
    game_ladder = {p: Fraction(0) for p in players}
    game_points = dict.fromkeys(players, 0)
    wins = dict.fromkeys(players, 0)
    games = dict.fromkeys(players, 0)
    forfeits = dict.fromkeys(players, 0)
    mates: dict[PlayerId, list[PlayerId]] = {p: [] for p in players}
    for res in results:
        seated = [(s, p) for s, p in enumerate(res.seats) if s not in res.house and p in registered]
        for who, pts in res.points:
            if who in registered:
                game_ladder[who] += pts
        for s, p in seated:
            games[p] += 1
            game_points[p] += res.totals[s]
            if p in res.forfeited:
                forfeits[p] += 1
            elif s in res.winners:
                wins[p] += 1
            mates[p].extend(q for _, q in seated if q != p)
    byes = dict.fromkeys(players, 0)
    for rnd in rounds:
        for p in rnd.byes:
            if p in registered:
                byes[p] += 1
    per_bye: dict[PlayerId, Fraction] = {}
    for p in players:
        if bye_points == "mean":
            per_bye[p] = game_ladder[p] / games[p] if games[p] else Fraction(0)
        else:
            per_bye[p] = Fraction(bye_points)
    ladder = {p: game_ladder[p] + per_bye[p] * byes[p] for p in players}
    rows = [
        StandingRow(
            rank=0,
            player=p,
            ladder=ladder[p],
            game_points=game_points[p],
            table_mates=sum((ladder[q] for q in mates[p]), Fraction(0)),
            wins=wins[p],
            games=games[p],
            byes=byes[p],
            bye_points=per_bye[p] * byes[p],
            forfeits=forfeits[p],
        )
        for p in players
    ]
    rows.sort(
        key=lambda r: (-r.ladder, -r.game_points, -r.table_mates, -r.wins, seed_key(seed, r.player))
    )
    ranked: list[StandingRow] = []
    for i, r in enumerate(rows):
        rank = ranked[-1].rank if ranked and ranked[-1].key == r.key else i + 1
        ranked.append(
            StandingRow(
                rank,
                r.player,
                r.ladder,
                r.game_points,
                r.table_mates,
                r.wins,
                r.games,
                r.byes,
                r.bye_points,
                r.forfeits,
            )
        )
    return Standings(tuple(ranked))


def result_from_events(
    round_no: int,
    created: GameCreated,
    ended: GameEnded,
    abandoned: Iterable[SeatAbandoned] = (),
    house: Sequence[int] = (),
) -> GameResult:
    """A GameResult from a game's own events (its first, its game_ended and its
    seat_abandoned events); `house` are the seats the round gave to house bots."""
    seats = created.players
    if len(seats) != 4 or len(ended.totals) != 4:
        raise ValueError("a game has four seats")
    return GameResult(
        game_id=created.game_id,
        round=round_no,
        seats=(seats[0], seats[1], seats[2], seats[3]),
        totals=(ended.totals[0], ended.totals[1], ended.totals[2], ended.totals[3]),
        winners=tuple(ended.winners),
        points=tuple((r.player, r.points) for r in ended.results),
        forfeited=tuple(a.player for a in abandoned),
        house=tuple(house),
        king=ended.king,
    )


def to_json(st: Standings) -> list[dict[str, Any]]:
    """Rows as JSON values: exact fractions as text ("15/2") beside two-decimal displays."""
    return [
        {
            "rank": r.rank,
            "player": r.player,
            "ladder": str(r.ladder),
            "ladder_display": two_decimals(r.ladder),
            "game_points": r.game_points,
            "table_mates": str(r.table_mates),
            "table_mates_display": two_decimals(r.table_mates),
            "wins": r.wins,
            "games": r.games,
            "byes": r.byes,
            "bye_points": str(r.bye_points),
            "forfeits": r.forfeits,
        }
        for r in st.rows
    ]


def to_csv(st: Standings) -> str:
    """CSV with a header row; points shown with two decimals, exact values in the last
    columns."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in st.rows:
        w.writerow(
            [
                r.rank,
                r.player,
                two_decimals(r.ladder),
                r.game_points,
                two_decimals(r.table_mates),
                r.wins,
                r.games,
                r.byes,
                r.forfeits,
                str(r.ladder),
                str(r.table_mates),
            ]
        )
    return out.getvalue()
