"""The page routes: home, game replay (+ its JSON for live updates), tournament, play."""

import asyncio
import base64
from collections import OrderedDict
from fractions import Fraction
from typing import Any, Literal
from urllib.parse import urlencode

from litestar import Controller, Request, Response, get
from litestar.datastructures import Cookie
from litestar.params import FromPath, FromQuery
from litestar.response import Template

from domain.game import GameState, Phase
from services.caching import cached_json, settled
from services.controllers.deps import SESSION_COOKIE, ServicesDep
from services.observability import error_fields, get_logger
from services.web.data import replay_payload
from services.web.i18n import (
    COOKIE,
    Lang,
    contract_names,
    pick_lang,
    words,
)
from services.web.lists import STATUSES, Listing, listing_of
from services.web.session import STALE_KEY, load_user, user_of
from services.web.tables import describe, index_statuses, live_line, results_of
from services.web.tv import ranked
from tournament.games import GameAudit, GameFailed, GameNotFound, stream_id

log = get_logger("king.web")

try:  # the tournament code may be absent in a trimmed build: its pages then skip
    from tournament.planning import current_standings
    from tournament.runner import TournamentNotFound, TournamentRunner
except ImportError:  # pragma: no cover
    TournamentRunner = None  # type: ignore[assignment,misc]

Req = Request[Any, Any, Any]
LEADERBOARD_GAMES = 100
TV_TABLES = 50  # live tables the TV page weighs
HOME_GAMES = 100  # games listed on the home page (the filters narrow them down)
MAX_PAGE = 1000  # the home page's pages of games (the listing scans the newest 2,000 anyway)
# Finished games' replay audits kept, by (game, version, head hash). The hash chain is checked
# afresh on every page (one read of the stream): rows changed in place fail it at once.
AUDITS_KEPT = 256
LIVE_TABLES_BUDGET_S = 1.0  # reading live tables' states for a tournament page stops here
LOBBY_STRATEGIES = ("heuristic", "strong", "random")  # the house bots a lobby table offers
_AUDITS: OrderedDict[tuple[object, ...], dict[str, object]] = OrderedDict()


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
    user = user_of(request)
    if request.state.get(STALE_KEY):
        cookies.append(Cookie(key=SESSION_COOKIE, value="", max_age=0, path="/", httponly=True))
    ctx = {
        "lang": lang,
        "t": words(lang),
        "path": request.url.path,
        "user": user.player_id if user is not None else None,
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


async def _tournament(services: Any, tournament_id: str) -> Any:
    """The tournament's state, or None when there is no such tournament (or no tournaments
    in this installation)."""
    if TournamentRunner is None:
        return None
    runner = TournamentRunner(services.store, services.repo)
    try:
        return await asyncio.to_thread(runner.load, tournament_id)
    except TournamentNotFound:
        return None


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
        # This process's index entry may lag a start made by another process: the stream
        # says for sure (only asked while the index says "created").
        if not await asyncio.to_thread(services.repo.exists, game_id):
            return "created", None
        state = await services.games.load(game_id)
        return ("over" if state.phase is Phase.OVER else "live"), state
    state = await services.games.load(game_id)
    # The index is marked over just after the last event: a page reading in between must
    # still see the end (the live page fetches the audit only when it sees "over").
    return ("over" if state.phase is Phase.OVER else info.status), state


def _result(state: GameState) -> dict[str, Any] | None:
    """A finished game's result for the play page: each seat's total and ladder points, the
    winners first (all public once the game is over)."""
    result = state.result
    if result is None:
        return None
    rows: list[dict[str, Any]] = [
        {
            "seat": seat,
            "player": player,
            "total": state.totals[seat],
            "ladder": _points(Fraction(result.ladder_points[seat])),
            "winner": seat in result.winners,
        }
        for seat, player in enumerate(state.players)
    ]
    rows.sort(key=lambda r: (-r["total"], r["seat"]))
    return {
        "winners": [state.players[w] for w in result.winners],
        "rows": rows,
    }


def _page_number(text: str | None) -> int:
    """`?page=N` (1 for anything that is not a page number from 1 to 1000)."""
    return int(text) if text and text.isdigit() and 1 <= int(text) <= MAX_PAGE else 1


def _pages(listing: Listing, page: int, **filters: str | None) -> dict[str, Any]:
    """Where the home page's newer and older games are (links keep the filters)."""
    last = max(1, -(-listing.total // HOME_GAMES))

    def link(n: int) -> str:
        query = {k: v for k, v in filters.items() if v}
        if n > 1:
            query["page"] = str(n)
        return "/?" + urlencode(query) if query else "/"

    return {
        "page": page,
        "last": last,
        "newer": link(page - 1) if page > 1 else None,
        "older": link(page + 1) if page < min(last, MAX_PAGE) else None,
    }


def _leaderboard(services: Any, ids: list[str]) -> list[dict[str, Any]]:
    """Ladder points, wins, games and points of the people in `ids` (finished games), from the
    games projection's results: no game is replayed."""
    table: dict[str, dict[str, Any]] = {}
    for result in results_of(services.games.read_engine, ids).values():
        for seat, player in enumerate(result.players):
            if player.startswith("house:"):
                continue
            row = table.setdefault(
                player,
                {"player": player, "ladder": Fraction(0), "wins": 0, "games": 0, "points": 0},
            )
            row["ladder"] += result.ladder[seat]
            row["wins"] += seat in result.winners
            row["games"] += 1
            row["points"] += result.totals[seat]
    rows = sorted(table.values(), key=lambda r: (-r["ladder"], -r["wins"], r["player"]))
    for r in rows:
        r["ladder_text"] = _points(r["ladder"])
    return rows


def _audit(services: Any, game_id: str) -> dict[str, object]:
    """The game's audit (blocking): the chain checked now, the replay audit cached under the
    stream's version and head hash, so a changed stream is audited again."""
    from domain.audit import audit_events

    store = services.store
    sid = stream_id(game_id)
    chain = store.verify(sid)
    info = store.stream_info(sid)
    key = (game_id, chain.events_checked, info.head_hash if info else "")
    if chain.ok:
        cached = _cached_audit(key)
        if cached is not None:
            return cached
    recorded = store.read_stream(sid)
    report = audit_events(game_id, ((r.version, r.type, r.payload) for r in recorded))
    audit = GameAudit(game_id, chain, report).to_dict()
    if chain.ok:
        _keep_audit(key, audit)
    return audit


def _log_entry(services: Any, game_id: str) -> dict[str, object] | None:
    """Which signed checkpoint includes the finished game: its origin, size and root, the
    game's positions, and where its last event's inclusion proof is (None if unavailable)."""
    tlog = services.tlog
    store = services.store
    sid = stream_id(game_id)
    try:
        info = store.stream_info(sid)
        if tlog is None or info is None:
            return None
        first = store.read_stream(sid, to_version=1, upcast=False)[0].position
        last = store.read_stream(sid, from_version=info.version, upcast=False)[0].position
        note, checkpoint = tlog.recent()
        if checkpoint.size < last:
            note, checkpoint = tlog.recent(max_age=0)
        if checkpoint.size < last:
            return None  # the tree is catching up: the next view will say
    except Exception as exc:  # the page shows the game without it; the operator sees why
        log.warning("log_entry_unavailable", game_id=game_id, **error_fields(exc))
        return None
    return {
        "origin": checkpoint.origin,
        "size": checkpoint.size,
        "root": base64.b64encode(checkpoint.root).decode(),
        "first": first,
        "last": last,
        "proof": f"/api/v1/log/proof/inclusion?index={last - 1}&size={checkpoint.size}",
        "note": note,
    }


def _safe_audit(services: Any, game_id: str) -> dict[str, object] | None:
    try:
        return _audit(services, game_id)
    except (GameNotFound, ValueError):  # rows too damaged to read: the page says it failed
        return None


def _cached_audit(key: tuple[object, ...]) -> dict[str, object] | None:
    audit = _AUDITS.get(key)
    if audit is not None:
        _AUDITS.move_to_end(key)
    return audit


def _keep_audit(key: tuple[object, ...], audit: dict[str, object]) -> None:
    _AUDITS[key] = audit
    _AUDITS.move_to_end(key)
    while len(_AUDITS) > AUDITS_KEPT:
        _AUDITS.popitem(last=False)


def _round_tables(services: Any, state: Any) -> list[dict[str, Any]]:
    """Every round's tables (blocking). A recorded result settles a table; the others take
    their status from the games index in one query, and the live ones (within a time budget)
    a line from the public view."""
    results = {r.game_id: r for r in state.results}
    planned = [
        [dict(t) for t in (state.round_games[i] if i < len(state.round_games) else ())]
        for i in range(len(state.rounds))
    ]
    open_ids = [str(t["game_id"]) for ts in planned for t in ts]
    open_ids = [g for g in open_ids if g not in results]
    if open_ids:
        services.games.catch_up()  # the index may not know yet of another process's starts
    statuses = index_statuses(services.games.read_engine, open_ids) if open_ids else {}
    for gid in open_ids:
        if gid not in statuses:  # played by a runner outside the service: not indexed
            statuses[gid] = "live" if services.repo.exists(gid) else "created"
    wanted = [g for g in open_ids if statuses[g] != "created"]
    states = describe(services.repo, wanted, LIVE_TABLES_BUDGET_S)
    rounds = []
    for rnd, tables in zip(state.rounds, planned, strict=True):
        rows = []
        for table in tables:
            game_id = str(table["game_id"])
            result = results.get(game_id)
            row: dict[str, Any] = {
                "number": table.get("table"),
                "game_id": game_id,
                "seats": list(table.get("seats", [])),
                "house": list(table.get("house", [])),
                "status": "over" if result else statuses[game_id],
                "totals": list(result.totals) if result else None,
                "winners": list(result.winners) if result else [],
                "now": None,
            }
            gs = states.get(game_id)
            if result is None and gs is not None:
                if gs.phase is Phase.OVER:
                    row["status"] = "over"
                    row["totals"] = list(gs.totals)
                    row["winners"] = list(gs.result.winners) if gs.result else []
                elif gs.phase in (Phase.DECLARING, Phase.PLAYING):
                    row["status"] = "live"
                    row["now"] = live_line(gs)
                    row["totals"] = row["now"]["totals"]
            rows.append(row)
        rounds.append({"number": rnd.number, "tables": rows, "byes": list(rnd.byes)})
    return rounds


class WebController(Controller):
    path = "/"
    include_in_schema = False
    tags = ("web",)
    before_request = load_user  # type: ignore[assignment]

    @get("/", name="web-home")
    async def home(self, request: Req, services: ServicesDep) -> Template:
        """Every game (the service's tables and the tournament runner's games alike) and every
        tournament, with filters: `?status=live|over|created`, `?player=`, `?tournament=`."""
        q = request.query_params
        status = q.get("status") if q.get("status") in STATUSES else None
        player = (q.get("player") or "").strip()[:200] or None
        tournament = (q.get("tournament") or "").strip()[:200] or None
        page = _page_number(q.get("page"))
        listing = await asyncio.to_thread(
            listing_of,
            services,
            status=status,
            player=player,
            tournament=tournament,
            limit=HOME_GAMES,
            offset=(page - 1) * HOME_GAMES,
            recent=LEADERBOARD_GAMES,
        )
        board = await asyncio.to_thread(_leaderboard, services, listing.recent_over)
        return _page(
            request,
            "home.html",
            {
                "listing": listing,
                "filters": {"status": status, "player": player, "tournament": tournament},
                "pages": _pages(listing, page, status=status, player=player, tournament=tournament),
                "filtered": bool(status or player or tournament),
                "board": board,
                "tournaments": listing.tournaments,
                "has_tournaments": TournamentRunner is not None,
            },
        )

    @get("/games/{game_id:str}", name="web-game")
    async def game(self, request: Req, game_id: FromPath[str], services: ServicesDep) -> Template:
        try:
            status, state = await _game(services, game_id)
        except GameNotFound:
            return _not_found(request, "game")
        except GameFailed as exc:
            found = await asyncio.to_thread(_safe_audit, services, game_id)
            return _page(
                request,
                "game.html",
                {"game_id": game_id, "payload": None, "failed": exc.reason, "audit": found},
            )
        if state is None:
            return _page(request, "game.html", {"game_id": game_id, "payload": None})
        payload = replay_payload(state, status)
        audit: dict[str, object] | None = None
        log_entry: dict[str, object] | None = None
        if status == "over":
            audit = await asyncio.to_thread(_safe_audit, services, game_id)
            log_entry = await asyncio.to_thread(_log_entry, services, game_id)
        return _page(
            request,
            "game.html",
            {
                "game_id": game_id,
                "payload": payload,
                "status": status,
                "audit": audit,
                "log_entry": log_entry,
                "contracts": contract_names(),
                # the TV page shows the replay in a frame, without the page's header and lists
                "body_class": "tv-mode" if request.query_params.get("tv") == "1" else "",
            },
        )

    @get("/games/{game_id:str}/replay.json", name="web-game-data")
    async def game_data(
        self, request: Req, game_id: FromPath[str], services: ServicesDep
    ) -> Response[bytes]:
        """The replay page's data (public record + per-trick winners and scores), for live
        pages to refresh. A game that does not load answers 409 with the reason. A strong
        ETag; immutable once the game is over and its seed revealed."""
        status, state = await _game(services, game_id)
        if state is None:
            return cached_json(
                request, {"game_id": game_id, "status": status, "deals": []}, final=False
            )
        return cached_json(request, replay_payload(state, status), final=settled(state))

    @get("/tournaments/{tournament_id:str}", name="web-tournament")
    async def tournament(
        self,
        request: Req,
        tournament_id: FromPath[str],
        services: ServicesDep,
        part: FromQuery[Literal["live"] | None] = None,
    ) -> Template:
        """The tournament page; `?part=live` gives only its changing parts (meta line,
        standings, rounds), which the page's script re-fetches as the tournament moves."""
        state = await _tournament(services, tournament_id)
        if state is None:
            return _not_found(request, "tournament")
        standings = current_standings(state) if state.created is not None else None
        rounds = await asyncio.to_thread(_round_tables, services, state)
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
            "_tournament_live.html" if part == "live" else "tournament.html",
            {
                "tid": tournament_id,
                "version": state.version,
                # tables not over yet: while any is, the page refreshes its live lines
                "playing": sum(t["status"] != "over" for r in rounds for t in r["tables"]),
                "name": c.name if c else tournament_id,
                "format": c.format if c else "",
                "planned_rounds": c.rounds if c else 0,
                "finished": state.finished is not None,
                "rows": rows,
                "rounds": list(reversed(rounds)),
                "current_round": state.current_round,
                "contracts": contract_names(),
            },
        )

    @get("/play/{game_id:str}", name="web-play")
    async def play(
        self,
        request: Req,
        game_id: FromPath[str],
        services: ServicesDep,
        part: FromQuery[Literal["result"] | None] = None,
    ) -> Template:
        """The play page; a finished game's page shows its result (winners, totals, ladder
        points, links to the replay and the audit) to anyone. `?part=result` gives that panel
        alone, which the page's script fetches when the game ends under the player's eyes."""
        try:
            status, state = await _game(services, game_id)
        except GameNotFound:
            return _not_found(request, "game")
        except GameFailed:
            status, state = "failed", None
        try:  # a game the tournament runner played outside the service is not indexed
            info = await services.games.info(game_id)
            seats, deals = list(info.seats), info.rules.get("deals")
        except GameNotFound:
            seats = list(state.players) if state is not None else []
            deals = None
        if state is not None:
            deals = state.rules.deals
        result = _result(state) if state is not None and state.phase is Phase.OVER else None
        context = {
            "game_id": game_id,
            "seats": seats,
            "status": status,
            "result": result,
            "deal_count": int(deals) if isinstance(deals, int) and deals > 0 else None,
            "contracts": contract_names(),
        }
        if part == "result":
            return _page(request, "_play_result.html", context, status=200 if result else 404)
        return _page(request, "play.html", context)

    @get("/tv", name="web-tv")
    async def tv(self, request: Req, services: ServicesDep) -> Template:
        """The live table most worth watching, of the whole service; switches when it ends."""
        return _page(request, "tv.html", {"tid": None, "name": None, "contracts": {}})

    @get("/tournaments/{tournament_id:str}/tv", name="web-tournament-tv")
    async def tournament_tv(
        self, request: Req, tournament_id: FromPath[str], services: ServicesDep
    ) -> Template:
        """The same for one tournament's tables."""
        state = await _tournament(services, tournament_id)
        if state is None:
            return _not_found(request, "tournament")
        name = state.created.name if state.created else tournament_id
        return _page(request, "tv.html", {"tid": tournament_id, "name": name, "contracts": {}})

    @get("/tv.json", name="web-tv-data")
    async def tv_data(self, request: Req, services: ServicesDep) -> dict[str, Any]:
        """The live tables (of `?tournament=`, else all), most interesting first (public)."""
        tournament = (request.query_params.get("tournament") or "").strip()[:200] or None
        listing = await asyncio.to_thread(
            listing_of,
            services,
            status="live",
            tournament=tournament,
            limit=TV_TABLES,
            recent=0,
        )
        ids = [g.id for g in listing.games]
        states = await asyncio.to_thread(describe, services.repo, ids, LIVE_TABLES_BUDGET_S)
        latest = await asyncio.to_thread(
            listing_of,
            services,
            status="over",
            tournament=tournament,
            limit=1,
            recent=0,
        )
        return {
            "tables": ranked(states),
            "latest_over": latest.games[0].id if latest.games else None,
        }

    @get("/lobby", name="web-lobby")
    async def lobby(self, request: Req) -> Template:
        """The lobby: open tables, live; a signed-in player (token asked for in the page, as
        on /invitations) opens, joins, leaves, cancels and starts a quick game."""
        return _page(
            request,
            "lobby.html",
            {"contracts": contract_names(), "strategies": LOBBY_STRATEGIES},
        )

    @get("/invitations", name="web-invitations")
    async def invitations(self, request: Req) -> Template:
        """The signed-in player's pending invitations (the token is asked for in the page and
        kept in the tab; the page itself holds nothing of anyone's)."""
        return _page(request, "invitations.html", {"contracts": contract_names()})
