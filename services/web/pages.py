"""The page routes: home, game replay (+ its JSON for live updates), tournament, play."""

from __future__ import annotations

import asyncio
import time
from fractions import Fraction
from typing import Any

from litestar import Controller, Request, get
from litestar.datastructures import Cookie
from litestar.params import FromPath
from litestar.response import Template

from domain.game import GameState, Phase
from services.controllers.deps import ServicesDep
from services.web.data import replay_payload
from services.web.i18n import (
    COOKIE,
    Lang,
    contract_names,
    pick_lang,
    words,
)
from tournament.games import GameNotFound

try:  # the tournament code may be absent in a trimmed build: its pages then skip
    from tournament.planning import current_standings
    from tournament.runner import TournamentNotFound, TournamentRunner
except ImportError:  # pragma: no cover
    TournamentRunner = None  # type: ignore[assignment,misc]

Req = Request[Any, Any, Any]
LEADERBOARD_GAMES = 100
_AUDITS: dict[tuple[str, int], dict[str, object]] = {}
_BOARD: dict[str, Any] = {"key": None, "rows": []}


def _lang(request: Req) -> tuple[Lang, list[Cookie]]:
    lang, remember = pick_lang(
        request.query_params.get("lang"),
        request.cookies.get(COOKIE),
        request.headers.get("accept-language"),
    )
    cookies = []
    if remember:
        cookies.append(Cookie(key=COOKIE, value=lang, max_age=365 * 86400, samesite="lax"))
    return lang, cookies


def _page(
    request: Req,
    name: str,
    context: dict[str, Any],
    status: int = 200,
) -> Template:
    lang, cookies = _lang(request)
    ctx = {
        "lang": lang,
        "t": words(lang),
        "path": request.url.path,
        **context,
    }
    return Template(
        template_name=name,
        context=ctx,
        status_code=status,
        cookies=cookies,
        headers={"content-language": lang, "vary": "Accept-Language, Cookie"},
    )


def _not_found(request: Req, what: str) -> Template:
    return _page(request, "not_found.html", {"what": what}, status=404)


def _points(x: Fraction) -> str:
    return str(int(x)) if x.denominator == 1 else f"{float(x):.2f}"


async def _game(services: Any, game_id: str) -> tuple[str, GameState | None]:
    """The game's status and state (None before it starts); GameNotFound if unknown.

    Tournament games played by the runner are in the store but not in the games index."""
    try:
        info = await services.games.info(game_id)
    except GameNotFound:
        if not await asyncio.to_thread(services.repo.exists, game_id):
            raise
        state = await services.games.load(game_id)
        return ("over" if state.phase is Phase.OVER else "live"), state
    if info.status == "created":
        return "created", None
    return info.status, await services.games.load(game_id)


def _leaderboard(services: Any, ids: list[str]) -> list[dict[str, Any]]:
    key = ",".join(ids)
    if _BOARD["key"] == key:
        rows: list[dict[str, Any]] = _BOARD["rows"]
        return rows
    table: dict[str, dict[str, Any]] = {}
    for game_id in ids:
        try:
            state = services.repo.load(game_id)
        except GameNotFound:
            continue
        result = state.result
        if result is None:
            continue
        for seat, player in enumerate(state.players):
            if player.startswith("house:"):
                continue
            row = table.setdefault(
                player,
                {"player": player, "ladder": Fraction(0), "wins": 0, "games": 0, "points": 0},
            )
            row["ladder"] += Fraction(result.ladder_points[seat])
            row["wins"] += seat in result.winners
            row["games"] += 1
            row["points"] += state.totals[seat]
    rows = sorted(table.values(), key=lambda r: (-r["ladder"], -r["wins"], r["player"]))
    for r in rows:
        r["ladder_text"] = _points(r["ladder"])
    _BOARD.update(key=key, rows=rows)
    return rows


def _tournaments(services: Any) -> list[dict[str, Any]]:
    if TournamentRunner is None:
        return []
    runner = TournamentRunner(services.store, services.repo)
    out = []
    for tid in runner.tournament_ids()[:50]:
        try:
            st = runner.load(tid)
        except Exception:  # a tournament that does not load is left out of the list
            continue
        c = st.created
        out.append(
            {
                "id": tid,
                "name": c.name if c else tid,
                "format": c.format if c else "",
                "rounds": c.rounds if c else 0,
                "played": len(st.rounds),
                "players": len(st.players),
                "finished": st.finished is not None,
            }
        )
    return out


class WebController(Controller):
    path = "/"
    include_in_schema = False
    tags = ("web",)

    @get("/", name="web-home")
    async def home(self, request: Req, services: ServicesDep) -> Template:
        games = services.games
        live = await games.list_games("live", None, 50)
        over = await games.list_games("over", None, 50)
        created = await games.list_games("created", None, 20)
        board_ids = [i.id for i in await games.list_games("over", None, LEADERBOARD_GAMES)]
        board = await asyncio.to_thread(_leaderboard, services, board_ids)
        tournaments = await asyncio.to_thread(_tournaments, services)
        return _page(
            request,
            "home.html",
            {
                "live": live,
                "over": over,
                "created": created,
                "board": board,
                "tournaments": tournaments,
                "has_tournaments": TournamentRunner is not None,
            },
        )

    @get("/games/{game_id:str}", name="web-game")
    async def game(self, request: Req, game_id: FromPath[str], services: ServicesDep) -> Template:
        try:
            status, state = await _game(services, game_id)
        except GameNotFound:
            return _not_found(request, "game")
        if state is None:
            return _page(request, "game.html", {"game_id": game_id, "payload": None})
        payload = replay_payload(state, status)
        audit: dict[str, object] | None = None
        if status == "over":
            audit = _AUDITS.get((game_id, state.version))
            if audit is None:
                audit = (await asyncio.to_thread(services.repo.audit, game_id)).to_dict()
                _AUDITS[(game_id, state.version)] = audit
        return _page(
            request,
            "game.html",
            {
                "game_id": game_id,
                "payload": payload,
                "status": status,
                "audit": audit,
                "contracts": contract_names(),
            },
        )

    @get("/games/{game_id:str}/replay.json", name="web-game-data")
    async def game_data(self, game_id: FromPath[str], services: ServicesDep) -> dict[str, Any]:
        """The replay page's data (public record + per-trick winners and scores), for live
        pages to refresh."""
        status, state = await _game(services, game_id)
        if state is None:
            return {"game_id": game_id, "status": status, "deals": []}
        return replay_payload(state, status)

    @get("/tournaments/{tournament_id:str}", name="web-tournament")
    async def tournament(
        self, request: Req, tournament_id: FromPath[str], services: ServicesDep
    ) -> Template:
        if TournamentRunner is None:
            return _not_found(request, "tournament")
        started = time.monotonic()
        runner = TournamentRunner(services.store, services.repo)
        try:
            state = await asyncio.to_thread(runner.load, tournament_id)
        except TournamentNotFound:
            return _not_found(request, "tournament")
        standings = current_standings(state) if state.created is not None else None
        results = {r.game_id: r for r in state.results}
        rounds = []
        for i, rnd in enumerate(state.rounds):
            tables = []
            for table in state.round_games[i] if i < len(state.round_games) else ():
                game_id = str(table["game_id"])
                result = results.get(game_id)
                status = "over" if result is not None else "created"
                totals: list[int] | None = list(result.totals) if result else None
                if result is None and time.monotonic() - started < 2.0:
                    try:
                        _, gs = await _game(services, game_id)
                    except GameNotFound:
                        gs = None
                    if gs is not None:
                        status = "over" if gs.phase is Phase.OVER else "live"
                        totals = list(gs.totals)
                tables.append(
                    {
                        "number": table.get("table"),
                        "game_id": game_id,
                        "seats": list(table.get("seats", [])),
                        "house": list(table.get("house", [])),
                        "status": status,
                        "totals": totals,
                        "winners": list(result.winners) if result else [],
                    }
                )
            rounds.append({"number": rnd.number, "tables": tables, "byes": list(rnd.byes)})
        rows = []
        if standings is not None:
            for r in standings.rows:
                rows.append(
                    {
                        "rank": r.rank,
                        "player": r.player,
                        "ladder": _points(r.ladder),
                        "game_points": r.game_points,
                        "table_mates": _points(r.table_mates),
                        "wins": r.wins,
                        "games": r.games,
                        "byes": r.byes,
                    }
                )
        c = state.created
        return _page(
            request,
            "tournament.html",
            {
                "tid": tournament_id,
                "name": c.name if c else tournament_id,
                "format": c.format if c else "",
                "planned_rounds": c.rounds if c else 0,
                "finished": state.finished is not None,
                "rows": rows,
                "rounds": list(reversed(rounds)),
                "current_round": state.current_round,
            },
        )

    @get("/play/{game_id:str}", name="web-play")
    async def play(self, request: Req, game_id: FromPath[str], services: ServicesDep) -> Template:
        try:
            info = await services.games.info(game_id)
        except GameNotFound:
            return _not_found(request, "game")
        return _page(
            request,
            "play.html",
            {
                "game_id": game_id,
                "seats": list(info.seats),
                "status": info.status,
                "contracts": contract_names(),
            },
        )
