"""The home page's lists: every game in the store and every tournament, with filters.

Everything comes from the games projection (services.projections), a few indexed queries per
listing, whatever the store holds: the game streams (`king_game_streams`, newest start first,
so the games `king tournament run` plays outside the service are listed beside the service's
own tables), the tables still waiting to start (the games index), the tournaments' summaries
and which tournament seats each game. All of it is public: ids, seat owners, totals, winners.

A listing reads the newest `GAMES_SCANNED` game streams. Filtered by player or tournament, it
picks that player's (`king_game_players`) or that tournament's (`king_tournament_games`) game
ids in SQL first, so the limit applies to their games, not to all games: a player's games
older than the newest 2,000 of the store are listed all the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, Select, and_, case, func, select
from sqlmodel import Session, col

from services.db.models import (
    GamePlayerRow,
    GameRow,
    GameStreamRow,
    TournamentGameRow,
    TournamentRow,
)
from services.identity import aware
from services.projections import json_list

TOURNAMENTS_READ = 50  # tournaments listed (newest first)
GAMES_SCANNED = 2000  # newest game streams considered by one listing (of the filtered ones)
CHUNK = 500
STATUSES = ("live", "over", "created")


@dataclass(slots=True)
class GameLine:
    id: str
    status: str  # "created" | "live" | "over"
    seats: list[str]  # who started in each seat (a table waiting: who will)
    totals: list[int] | None = None
    winners: list[int] = field(default_factory=list)
    tournament: str | None = None
    tournament_name: str | None = None
    created_at: datetime | None = None
    substitutes: list[tuple[int, str]] = field(default_factory=list)  # (seat, who took it over)

    @property
    def seated(self) -> list[list[str]]:
        """Each seat's occupants: who started in it, then who took it over."""
        out = [[p] for p in self.seats]
        for seat, player in self.substitutes:
            if 0 <= seat < len(out):
                out[seat].append(player)
        return out

    def sat(self, player: str) -> bool:
        """`player` held a seat of the game, from the start or as a substitute: the player
        filter's test (a substitute's games are theirs too, and still the one's who left)."""
        return player in self.seats or any(p == player for _, p in self.substitutes)

    def seat_of(self, player: str) -> int | None:
        """The lowest seat `player` held (None: none)."""
        held = [i for i, p in enumerate(self.seats) if p == player]
        held += [seat for seat, p in self.substitutes if p == player]
        return min(held) if held else None


@dataclass(slots=True)
class Listing:
    games: list[GameLine]
    total: int  # games matching the filters (before the page limit)
    counts: dict[str, int]  # by status, matching the other filters
    players: list[str]  # everyone seated in the scanned games (for the player filter)
    tournaments: list[dict[str, Any]]
    recent_over: list[str]  # the newest finished games, unfiltered (the leaderboard's)
    offset: int = 0  # games before the first shown (paging)


def tournaments(session: Session) -> list[dict[str, Any]]:
    """The newest tournaments' summaries."""
    query = (
        select(TournamentRow)
        .order_by(col(TournamentRow.opened_position).desc())
        .limit(TOURNAMENTS_READ)
    )
    return [
        {
            "id": t.id,
            "name": t.name,
            "format": t.format,
            "rounds": t.rounds,
            "played": t.played,
            "players": t.players,
            "finished": t.finished,
            "open_tables": t.open_tables,
        }
        for t in session.execute(query).scalars()
    ]


def unstarted_tournaments(engine: Engine, limit: int) -> list[str]:
    """The newest tournaments with no round paired and not finished (the only ones that may
    take registrations), from the projection: the lobby loads these, not every tournament."""
    query = (
        select(col(TournamentRow.id))
        .where(col(TournamentRow.played) == 0, col(TournamentRow.finished).is_(False))
        .order_by(col(TournamentRow.opened_position).desc())
        .limit(limit)
    )
    with Session(engine) as session:
        return list(session.execute(query).scalars())


def _owners(session: Session, ids: list[str]) -> dict[str, tuple[str, str]]:
    """Game id -> (tournament id, name), for the games of `ids` a tournament seats."""
    out: dict[str, tuple[str, str]] = {}
    for i in range(0, len(ids), CHUNK):
        query = (
            select(col(TournamentGameRow.game_id), col(TournamentRow.id), col(TournamentRow.name))
            .join(TournamentRow, col(TournamentRow.id) == col(TournamentGameRow.tournament_id))
            .where(col(TournamentGameRow.game_id).in_(ids[i : i + CHUNK]))
        )
        out.update((gid, (tid, name)) for gid, tid, name in session.execute(query))
    return out


def _newest(query: Select[Any]) -> Select[Any]:
    """`query` on the game streams, newest start first (unreadable starts last), limited to
    `GAMES_SCANNED`."""
    order = (col(GameStreamRow.started_position).desc().nulls_last(), col(GameStreamRow.game_id))
    return query.order_by(*order).limit(GAMES_SCANNED)


def _sat_in(player: str) -> Any:
    """A condition on a game stream row: `player` sat in it (started in a seat or took one
    over). A correlated EXISTS, not an IN over the player's newest rows: combined with another
    filter (a tournament's games), a cut of the player's rows could leave out older games that
    pass both, and the listing's limit applies to what passes every filter."""
    p = GamePlayerRow
    return (
        select(col(p.game_id))
        .where(col(p.game_id) == col(GameStreamRow.game_id), col(p.player) == player)
        .exists()
    )


def _streams(session: Session, player: str | None, tournament: str | None) -> list[GameStreamRow]:
    """The newest game streams (of `player`, of `tournament`), by the feed position of their
    start (unreadable starts last)."""
    query = select(GameStreamRow)
    if player is not None:
        query = query.where(_sat_in(player))
    if tournament is not None:
        seated = select(col(TournamentGameRow.game_id)).where(
            col(TournamentGameRow.tournament_id) == tournament
        )
        query = query.where(col(GameStreamRow.game_id).in_(seated))
    return list(session.execute(_newest(query)).scalars())


def _scanned_players(session: Session) -> set[str]:
    """Everyone who sat in the newest game streams (what an unfiltered listing scans)."""
    newest = _newest(select(col(GameStreamRow.game_id)))
    query = select(col(GamePlayerRow.player)).where(col(GamePlayerRow.game_id).in_(newest))
    return set(session.execute(query.distinct()).scalars())


def _recent_over(session: Session, recent: int) -> list[str]:
    """The newest finished games among the newest game streams (an unfiltered listing's)."""
    newest = _newest(select(col(GameStreamRow.game_id)))
    query = _newest(
        select(col(GameStreamRow.game_id)).where(
            col(GameStreamRow.game_id).in_(newest), col(GameStreamRow.phase) == "over"
        )
    )
    return list(session.execute(query.limit(recent)).scalars())


def _waiting(session: Session) -> list[GameRow]:
    """The indexed tables that have not started (their streams do not exist yet)."""
    query = select(GameRow).where(col(GameRow.status) == "created")
    return list(session.execute(query).scalars())


def _substitutes(text: str | None) -> list[tuple[int, str]]:
    return [
        (p[0], str(p[1]))
        for p in json_list(text)
        if isinstance(p, list) and len(p) == 2 and type(p[0]) is int
    ]


def _line(row: GameStreamRow) -> GameLine:
    return GameLine(
        row.game_id,
        row.phase,
        [str(s) for s in json_list(row.players)],
        totals=json_list(row.totals) or None,
        winners=json_list(row.winners),
        created_at=aware(row.started_at),
        substitutes=_substitutes(row.substitutes),
    )


def list_games(
    engine: Engine,
    *,
    status: str | None = None,
    player: str | None = None,
    tournament: str | None = None,
    limit: int = 100,
    offset: int = 0,
    recent: int = 100,
) -> Listing:
    """Every game, live ones first, then tables waiting, then finished ones, each newest
    first; filtered (blocking). Reads the projection as it stands: the caller catches it up.

    The newest `GAMES_SCANNED` game streams are read: of all games, or (with `player` or
    `tournament`) of the matching ones, chosen in SQL; the counts and the pages are those of
    what was read. `players` (the filter's choices) and `recent_over` (the leaderboard's) are
    the unfiltered listing's either way: filtered, two more queries, bounded as that one is."""
    player, tournament = player or None, tournament or None
    filtered = player is not None or tournament is not None
    with Session(engine) as session:
        tlist = tournaments(session)
        streams = _streams(session, player, tournament)
        waiting = _waiting(session)
        started = {r.game_id for r in streams}
        waiting_seats = [[str(s) for s in json_list(row.seats)] for row in waiting]
        lines: list[GameLine] = [
            GameLine(row.id, "created", seats, created_at=aware(row.created_at))
            for row, seats in zip(waiting, waiting_seats, strict=True)
            if row.id not in started
        ]
        lines.sort(key=lambda g: g.created_at or datetime.min.replace(tzinfo=UTC), reverse=True)
        lines += [_line(srow) for srow in streams]
        owner = _owners(session, [g.id for g in lines])
        seated = {s for seats in waiting_seats for s in seats}
        recent_over: list[str] = []
        if filtered:
            seated |= _scanned_players(session)
            recent_over = _recent_over(session, recent) if recent > 0 else []
        else:
            seated |= {s for g in lines for names in g.seated for s in names}
    rank = {"live": 0, "created": 1, "over": 2}
    lines.sort(key=lambda g: rank.get(g.status, 3))  # stable: newest first within each
    for line in lines:
        if line.id in owner:
            line.tournament, line.tournament_name = owner[line.id]
    everyone = sorted(s for s in seated if not s.startswith("house:"))
    if not filtered:
        recent_over = [g.id for g in lines if g.status == "over"][: max(recent, 0)]
    if player:  # the streams are the player's already; this narrows the tables waiting
        lines = [g for g in lines if g.sat(player)]
    if tournament:
        lines = [g for g in lines if g.tournament == tournament]
    counts = {s: sum(g.status == s for g in lines) for s in STATUSES}
    if status in STATUSES:
        lines = [g for g in lines if g.status == status]
    shown = lines[offset : offset + limit]
    return Listing(shown, len(lines), counts, everyone, tlist, recent_over, offset)


def listing_of(services: Any, **filters: Any) -> Listing:
    """`list_games` on the service's projection, once it has folded what the feed holds: games
    and tournaments another process (or `king tournament run`) wrote are listed at once."""
    services.games.catch_up()
    return list_games(services.games.read_engine, **filters)


def results_by_period(
    engine: Engine, player: str, starts: Sequence[datetime]
) -> list[tuple[int, int, int]]:
    """(finished games, wins, game points) of `player` in each period of `starts` (ascending
    times): period i holds the games that started at or after `starts[i]` and before
    `starts[i + 1]`; a game without a start time counts for the first, one that started before
    `starts[0]` for none. Every finished game of the player counts, however old (one aggregate
    over `king_game_players`, no scan limit), each once, for the lowest seat it held there (as
    `GameLine.seat_of`)."""
    if not starts:
        return []
    p, g = GamePlayerRow, GameStreamRow
    first = (
        select(col(p.game_id), func.min(col(p.seat)).label("seat"))
        .where(col(p.player) == player, col(p.points).is_not(None))
        .group_by(col(p.game_id))
        .subquery()
    )
    started = col(g.started_at)
    whens = [(started >= when.astimezone(UTC), i) for i, when in reversed(list(enumerate(starts)))]
    period = case((started.is_(None), 0), *whens, else_=-1).label("period")
    games = (
        select(period, col(p.points), col(p.won))
        .select_from(first)
        .join(
            GamePlayerRow,
            and_(
                col(p.game_id) == first.c.game_id,
                col(p.seat) == first.c.seat,
                col(p.player) == player,
            ),
        )
        .join(GameStreamRow, col(g.game_id) == first.c.game_id)
        .subquery()
    )
    query = select(
        games.c.period,
        func.count(),
        func.sum(case((games.c.won, 1), else_=0)),
        func.sum(games.c.points),
    ).group_by(games.c.period)
    out = [(0, 0, 0)] * len(starts)
    with Session(engine) as session:
        for i, n, wins, points in session.execute(query):
            if 0 <= i < len(starts):
                out[i] = (int(n), int(wins or 0), int(points or 0))
    return out
