"""The home page's lists: every game in the store and every tournament, with filters.

Games come from the store itself (every `game-<id>` stream, newest first), so the games that
`king tournament run` plays outside the service are listed beside the service's own tables;
their phase, seats and result come from the games projection (`king_game_streams`), and the
tables still waiting to start from the games index. A game belongs to a tournament when one of
the tournament's rounds seats it. All of it is public: ids, seat owners, totals and winners.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Engine, select
from sqlmodel import Session, col

from services.db.models import GameRow, GameStreamRow
from services.observability import error_fields, get_logger
from tournament.games import STREAM_PREFIX

try:  # the tournament code may be absent in a trimmed build: no tournaments are listed then
    from tournament.runner import TournamentRunner
except ImportError:  # pragma: no cover
    TournamentRunner = None  # type: ignore[assignment,misc]

log = get_logger("king.web")

TOURNAMENTS_READ = 50  # tournaments loaded for the list (newest first)
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


def tournaments(store: Any, repo: Any) -> tuple[list[dict[str, Any]], dict[str, tuple[str, str]]]:
    """The newest tournaments (blocking) and which tournament seats each game: game id ->
    (tournament id, name)."""
    if TournamentRunner is None:
        return [], {}
    runner = TournamentRunner(store, repo)
    out: list[dict[str, Any]] = []
    owner: dict[str, tuple[str, str]] = {}
    for tid in list(reversed(runner.tournament_ids()))[:TOURNAMENTS_READ]:
        try:
            st = runner.load(tid)
        except Exception as exc:  # left out of the list; the operator sees why
            log.warning("tournament_unlisted", tournament_id=tid, **error_fields(exc))
            continue
        c = st.created
        name = c.name if c else tid
        live = 0
        done = {r.game_id for r in st.results}
        for tables in st.round_games:
            for table in tables:
                gid = str(table.get("game_id"))
                owner[gid] = (tid, name)
                live += gid not in done
        out.append(
            {
                "id": tid,
                "name": name,
                "format": c.format if c else "",
                "rounds": c.rounds if c else 0,
                "played": len(st.rounds),
                "players": len(st.players),
                "finished": st.finished is not None,
                "open_tables": 0 if st.finished is not None else live,
            }
        )
    return out, owner


def _streams(engine: Engine, ids: list[str]) -> dict[str, GameStreamRow]:
    out: dict[str, GameStreamRow] = {}
    with Session(engine) as session:
        for i in range(0, len(ids), CHUNK):
            query = select(GameStreamRow).where(col(GameStreamRow.game_id).in_(ids[i : i + CHUNK]))
            out.update((r.game_id, r) for r in session.execute(query).scalars().all())
    return out


def _index(engine: Engine) -> dict[str, GameRow]:
    """The indexed tables that have not started (their streams do not exist yet)."""
    query = select(GameRow).where(col(GameRow.status) == "created")
    with Session(engine) as session:
        return {r.id: r for r in session.execute(query).scalars().all()}


def _json_list(text: str | None) -> list[Any] | None:
    if not text:
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, list) else None


def list_games(
    store: Any,
    repo: Any,
    engine: Engine,
    *,
    status: str | None = None,
    player: str | None = None,
    tournament: str | None = None,
    limit: int = 100,
    recent: int = 100,
) -> Listing:
    """Every game, live ones first, then tables waiting, then finished ones, each newest
    first; filtered (blocking)."""
    tlist, owner = tournaments(store, repo)
    ids = [s[len(STREAM_PREFIX) :] for s in reversed(store.stream_ids("game"))][:GAMES_SCANNED]
    rows = _streams(engine, ids)
    waiting = _index(engine)
    lines: list[GameLine] = []
    for gid, row in waiting.items():
        if gid in rows:
            continue
        seats = _json_list(row.seats) or []
        lines.append(GameLine(gid, "created", [str(s) for s in seats], created_at=row.created_at))
    lines.sort(key=lambda g: g.created_at or datetime.min, reverse=True)
    for gid in ids:
        if gid in waiting and gid not in rows:
            continue
        srow = rows.get(gid)
        # A stream the projection has not folded yet is a game that just started.
        line = GameLine(gid, srow.phase if srow else "live", [])
        if srow is not None:
            line.seats = [str(s) for s in _json_list(srow.players) or []]
            line.totals = _json_list(srow.totals)
            line.winners = _json_list(srow.winners) or []
        lines.append(line)
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
    shown = lines[:limit]
    for g in shown:
        if g.created_at is None:
            info = store.stream_info(STREAM_PREFIX + g.id)
            g.created_at = info.created_at if info else None
    return Listing(shown, len(lines), counts, everyone, tlist, recent_over)
