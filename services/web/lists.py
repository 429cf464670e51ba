"""The home page's lists: every game in the store and every tournament, with filters.

Everything comes from the games projection (services.projections), a few indexed queries per
listing, whatever the store holds: the game streams (`king_game_streams`, newest start first,
so the games `king tournament run` plays outside the service are listed beside the service's
own tables), the tables still waiting to start (the games index), the tournaments' summaries
and which tournament seats each game. All of it is public: ids, seat owners, totals, winners.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Engine, select
from sqlmodel import Session, col

from services.db.models import GameRow, GameStreamRow, TournamentGameRow, TournamentRow

TOURNAMENTS_READ = 50  # tournaments listed (newest first)
GAMES_SCANNED = 2000  # newest game streams considered by one listing
CHUNK = 500
STATUSES = ("live", "over", "created")


@dataclass(slots=True)
class GameLine:
    id: str
    status: str  # "created" | "live" | "over"
    seats: list[str]
    totals: list[int] | None = None
    winners: list[int] = field(default_factory=list)
    tournament: str | None = None
    tournament_name: str | None = None
    created_at: datetime | None = None


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


def _streams(session: Session) -> list[GameStreamRow]:
    """The newest game streams, by the feed position of their start (unreadable starts last)."""
    query = (
        select(GameStreamRow)
        .order_by(col(GameStreamRow.started_position).desc().nulls_last(), GameStreamRow.game_id)
        .limit(GAMES_SCANNED)
    )
    return list(session.execute(query).scalars())


def _waiting(session: Session) -> list[GameRow]:
    """The indexed tables that have not started (their streams do not exist yet)."""
    query = select(GameRow).where(col(GameRow.status) == "created")
    return list(session.execute(query).scalars())


def _json_list(text: str | None) -> list[Any] | None:
    if not text:
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, list) else None


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
    first; filtered (blocking). Reads the projection as it stands: the caller catches it up."""
    with Session(engine) as session:
        tlist = tournaments(session)
        streams = _streams(session)
        waiting = _waiting(session)
        started = {r.game_id for r in streams}
        lines: list[GameLine] = [
            GameLine(
                row.id,
                "created",
                [str(s) for s in _json_list(row.seats) or []],
                created_at=row.created_at,
            )
            for row in waiting
            if row.id not in started
        ]
        lines.sort(key=lambda g: g.created_at or datetime.min, reverse=True)
        for srow in streams:
            lines.append(
                GameLine(
                    srow.game_id,
                    srow.phase,
                    [str(s) for s in _json_list(srow.players) or []],
                    totals=_json_list(srow.totals),
                    winners=_json_list(srow.winners) or [],
                    created_at=srow.started_at,
                )
            )
        owner = _owners(session, [g.id for g in lines])
    rank = {"live": 0, "created": 1, "over": 2}
    lines.sort(key=lambda g: rank.get(g.status, 3))  # stable: newest first within each
    for line in lines:
        if line.id in owner:
            line.tournament, line.tournament_name = owner[line.id]
    everyone = sorted({s for g in lines for s in g.seats if not s.startswith("house:")})
    recent_over = [g.id for g in lines if g.status == "over"][:recent]
    if player:
        lines = [g for g in lines if player in g.seats]
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
