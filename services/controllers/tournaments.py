"""Tournaments over HTTP: create, register, look, pairings, standings, live events, organise;
and the ratings leaderboard. The work is done by services.scheduler.TournamentDesk."""

import asyncio
import secrets
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeVar

import orjson
from litestar import Controller, Request, Response, delete, get, post
from litestar.exceptions import HTTPException, NotFoundException, PermissionDeniedException
from litestar.params import FromPath, FromQuery, JSONBody, Parameter
from litestar.response import Stream
from msgspec import Meta, Struct

from domain.results import points_from_json, points_number
from services.api_types import PairingsRound, StandingRow, TournamentMessage
from services.container import Services
from services.controllers.deps import PrincipalDep, ServicesDep
from services.controllers.streaming import Format, resumable, stream_response
from services.openapi import ALSO_AS, answer, problems, streamed
from services.play.service import Conflict
from services.play.streams import StreamOptions, encode, keepalive
from services.problems import Unprocessable
from services.scheduler import (
    Control,
    Entry,
    TournamentConflict,
    TournamentDesk,
    TournamentError,
    next_round_due,
)
from tournament.events import TournamentState
from tournament.planning import BadPairing
from tournament.runner import stream_id as tournament_stream
from tournament.standings import to_csv, to_json

T = TypeVar("T")
TournamentId = Annotated[
    str, Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$", examples=["spring-open"])
]
PlayerRef = Annotated[str, Meta(max_length=60)]
Strategy = Annotated[str, Meta(max_length=40, examples=["heuristic"])]


class TournamentPlayerIn(Struct, forbid_unknown_fields=True):
    """A service player (`player`: a person or a bot) or a builtin strategy (`strategy`,
    played by a house bot)."""

    player: PlayerRef | None = None
    strategy: Strategy | None = None


class TournamentCreate(Struct, forbid_unknown_fields=True):
    id: TournamentId | None = None
    name: Annotated[str, Meta(max_length=100)] = ""
    format: Literal["swiss", "round_robin"] = "swiss"
    rounds: Annotated[int, Meta(ge=1, le=200)] | None = None
    rules: Annotated[dict[str, Any], Meta(description="rule options of docs/RULES.md")] = {}
    fill: Literal["bye", "house_bot"] = "bye"
    bye_points: Annotated[str, Meta(pattern=r"^(mean|-?\d{1,4}(/[1-9]\d{0,3})?)$")] = "0"
    duplicate: bool = False
    seed: Annotated[str, Meta(max_length=64)] = ""
    secret: Annotated[
        str,
        Meta(
            pattern=r"^([0-9a-f]{64})?$",
            description=(
                "64 hex digits that decide every deal (default: random, sealed). Give one only "
                "to play a tournament again with the same deals: whoever knows it knows them."
            ),
        ),
    ] = ""
    house_strategy: Strategy = "heuristic"
    start_at: (
        Annotated[
            datetime,
            Meta(tz=True, description="with its time zone", examples=["2030-01-01T18:00:00Z"]),
        ]
        | None
    ) = None
    decision_seconds: Annotated[float, Meta(ge=0.05, le=3600)] | None = None
    round_minutes: (
        Annotated[
            float,
            Meta(
                gt=0,
                le=10_080,
                description=(
                    "a round every this many minutes from the start: round n is paired at "
                    "start + (n-1) x round_minutes, or when round n-1 has finished if later "
                    "(default: as soon as it has finished)"
                ),
            ),
        ]
        | None
    ) = None
    players: Annotated[list[TournamentPlayerIn], Meta(max_length=1000)] = []


class RegisterIn(Struct, forbid_unknown_fields=True):
    """Empty (or no body) with a player's token: register yourself. The admin names a player
    or a strategy."""

    player: PlayerRef | None = None
    strategy: Strategy | None = None


class ReasonIn(Struct, forbid_unknown_fields=True):
    reason: Annotated[str, Meta(max_length=200)] = ""


class ManualPairingIn(Struct, forbid_unknown_fields=True):
    """The next round by hand: tables of four tournament player ids in seat order (a
    `house-bot-<n>` id is a house bot's seat) and the players given a bye."""

    tables: Annotated[list[Annotated[list[PlayerRef], Meta(max_length=16)]], Meta(max_length=2500)]
    byes: Annotated[list[PlayerRef], Meta(max_length=10_000)] = []


class TournamentPlayerOut(Struct):
    id: str
    name: str
    kind: str
    active: bool


class TableOut(Struct):
    table: int
    game_id: str
    seats: list[str]
    house_seats: list[int]
    recorded: bool


class RoundOut(Struct):
    round: int
    tables: list[TableOut]
    byes: list[str]
    closed: bool
    manual: bool


class PairingTableOut(Struct):
    table: int
    seats: list[str]
    house_seats: list[int]


class ManualPairingOut(Struct):
    """A hand pairing waiting for its round to be paired."""

    round: int
    tables: list[PairingTableOut]
    byes: list[str]


class TournamentOut(Struct):
    id: str
    name: str
    status: str
    format: str
    rounds: int
    fill: str
    bye_points: str
    duplicate: bool
    seed: str
    rules: dict[str, Any]
    house_strategy: str
    start_at: datetime | None
    decision_seconds: float | None
    round_minutes: float | None
    next_round_at: datetime | None
    started: bool
    paused: bool
    current_round: int
    rounds_closed: int
    players: list[TournamentPlayerOut]
    winners: list[str]
    manual_pairing: ManualPairingOut | None
    version: int


class TournamentDetail(Struct):
    tournament: TournamentOut
    schedule: list[RoundOut]


class LeaderboardOut(Struct):
    """One rated bot identity: `player` is the rating's id (a service player id, or
    `house:<strategy>` for a builtin strategy, its entrants and house bots together), `name`
    its name, `kind` `strategy`, `bot` or `human`; `games` rated games; `ordinal` = μ − 3σ."""

    rank: int
    player: str
    name: str
    kind: str
    games: int
    mu: float
    sigma: float
    ordinal: float


def tournament_out(state: TournamentState, control: Control, desk: TournamentDesk) -> TournamentOut:
    c = state.created
    assert c is not None
    return TournamentOut(
        id=c.tournament_id,
        name=c.name,
        status=desk.status(state, control),
        format=c.format,
        rounds=c.rounds,
        fill=c.fill,
        bye_points=c.bye_points,
        duplicate=c.duplicate,
        seed=c.seed,
        rules=c.rules,
        house_strategy=c.house_strategy,
        start_at=control.start_at,
        decision_seconds=control.decision_seconds,
        round_minutes=control.round_minutes,
        next_round_at=next_round_due(state, control),
        started=control.started,
        paused=control.paused,
        current_round=state.current_round,
        rounds_closed=state.closed,
        players=[
            TournamentPlayerOut(p.player_id, p.name, p.kind, p.player_id not in state.withdrawn)
            for p in state.players
        ],
        winners=list(state.finished.winners) if state.finished else [],
        manual_pairing=_pending(state),
        version=state.version,
    )


def schedule_out(state: TournamentState) -> list[RoundOut]:
    return [
        RoundOut(
            round=i + 1,
            tables=[
                TableOut(
                    int(t["table"]),
                    t["game_id"],
                    list(t["seats"]),
                    list(t.get("house", ())),
                    state.recorded(t["game_id"]),
                )
                for t in tables
            ],
            byes=list(state.rounds[i].byes),
            closed=i + 1 <= state.closed,
            manual=i + 1 in state.manual_rounds,
        )
        for i, tables in enumerate(state.round_games)
    ]


def _pending(state: TournamentState) -> ManualPairingOut | None:
    m = state.manual
    if m is None:
        return None
    tables = [PairingTableOut(t.number, list(t.seats), list(t.house)) for t in m.tables]
    return ManualPairingOut(m.number, tables, list(m.byes))


def _desk(services: Services) -> TournamentDesk:
    desk = services.tournaments
    assert desk is not None
    return desk


async def _call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a blocking desk call in a worker thread; its errors as problem details."""
    try:
        return await asyncio.to_thread(fn, *args, **kwargs)
    except TournamentError as exc:
        raise Unprocessable(str(exc)) from None
    except TournamentConflict as exc:
        raise Conflict(str(exc)) from None
    except BadPairing as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from None
    except LookupError as exc:
        raise NotFoundException(str(exc).strip("'\"")) from None


async def _may_enter(services: Services, principal: Any, player: str | None) -> bool:
    """May this (non-admin) principal enter or withdraw `player` (None: itself)? Its own
    player, or a bot its account owns (with an account-level token: `play`)."""
    if player is None or player == principal.player_id:
        return True
    accounts = services.accounts
    if accounts is None or principal.player_id is None or not principal.has("play"):
        return False
    return await asyncio.to_thread(accounts.owns, principal.player_id, player)


def _admin(principal: Any) -> None:
    if not principal.is_admin:
        raise PermissionDeniedException("this needs the admin token")


async def _detail(desk: TournamentDesk, tournament_id: str) -> TournamentDetail:
    state = await _call(desk.load, tournament_id)
    control = await _call(desk.control, tournament_id)
    return TournamentDetail(tournament_out(state, control, desk), schedule_out(state))


class TournamentController(Controller):
    path = "/api/v1/tournaments"
    tags = ("tournaments",)

    @post("/", status_code=201, responses=problems(403, 409, 422))
    async def create_tournament(
        self, data: JSONBody[TournamentCreate], services: ServicesDep, principal: PrincipalDep
    ) -> TournamentDetail:
        """Create a tournament (admin). Players: service player ids or builtin strategies.

        It starts at `start_at` (the scheduler claims the start), or when the organiser calls
        `POST /tournaments/{id}/start`; until then players may register.
        """
        _admin(principal)
        desk = _desk(services)
        tid = data.id or "t-" + secrets.token_hex(5)
        entries = [Entry(p.player, p.strategy) for p in data.players]
        await _call(
            desk.create,
            tid,
            entries,
            start_at=data.start_at,
            decision_seconds=data.decision_seconds,
            created_by="admin",
            round_minutes=data.round_minutes,
            name=data.name,
            format=data.format,
            rounds=data.rounds,
            rules=_rules(data.rules),
            fill=data.fill,
            bye_points=data.bye_points,
            duplicate=_no_live_duplicate(data.duplicate),
            seed=data.seed,
            secret=data.secret,
            house_strategy=data.house_strategy,
        )
        return await _detail(desk, tid)

    @get("/")
    async def list_tournaments(
        self,
        services: ServicesDep,
        limit: Annotated[int, Parameter(ge=1, le=500)] = 50,
        offset: Annotated[int, Parameter(ge=0, le=1_000_000)] = 0,
    ) -> list[TournamentOut]:
        """Tournaments, newest first."""
        desk = _desk(services)

        def load() -> list[TournamentOut]:
            ids = list(reversed(desk.ids()))[offset : offset + limit]
            return [tournament_out(desk.load(t), desk.control(t), desk) for t in ids]

        return await _call(load)

    @get("/{tournament_id:str}")
    async def get_tournament(
        self, tournament_id: FromPath[str], services: ServicesDep
    ) -> TournamentDetail:
        """Settings, status, players and every round's tables (game ids) and byes."""
        return await _detail(_desk(services), tournament_id)

    @post("/{tournament_id:str}/players", status_code=201, responses=problems(403, 409, 422))
    async def register_for_tournament(
        self,
        tournament_id: FromPath[str],
        services: ServicesDep,
        principal: PrincipalDep,
        data: JSONBody[RegisterIn | None] = None,
    ) -> TournamentDetail:
        """Register: a player's token registers its player, or (`player`) a bot its account
        owns; the admin names a player or a strategy. A late registration is paired from the
        next round on."""
        desk = _desk(services)
        body = data or RegisterIn()
        if principal.is_admin:
            if body.player is None and body.strategy is None:
                raise Unprocessable("name a player or a strategy to register")
            entry = Entry(body.player, body.strategy)
        else:
            if body.strategy is not None or not await _may_enter(services, principal, body.player):
                raise PermissionDeniedException(
                    "a player's token registers only its player or a bot its account owns"
                )
            entry = Entry(body.player or principal.player_id, None)
        await _call(desk.register, tournament_id, entry)
        return await _detail(desk, tournament_id)

    @delete(
        "/{tournament_id:str}/players/{player_id:str}",
        status_code=200,
        responses=problems(403, 409, 422),
    )
    async def withdraw_from_tournament(
        self,
        tournament_id: FromPath[str],
        player_id: FromPath[str],
        services: ServicesDep,
        principal: PrincipalDep,
        reason: Annotated[str, Parameter(max_length=200)] = "",
    ) -> TournamentDetail:
        """Withdraw a player (the admin, or the player itself): not paired from the next round
        on; a game in play is finished by the driver."""
        if not principal.is_admin and not await _may_enter(services, principal, player_id):
            raise PermissionDeniedException(
                "only the admin, the player or its owner may withdraw it"
            )
        desk = _desk(services)
        await _call(desk.withdraw, tournament_id, player_id, reason or "withdrawn")
        return await _detail(desk, tournament_id)

    @post("/{tournament_id:str}/start", status_code=200, responses=problems(403, 409, 422))
    async def start_tournament(
        self, tournament_id: FromPath[str], services: ServicesDep, principal: PrincipalDep
    ) -> TournamentDetail:
        """Start now (admin; idempotent). The scheduler pairs the first round at its next tick."""
        _admin(principal)
        desk = _desk(services)
        await _call(desk.start, tournament_id, "admin")
        return await _detail(desk, tournament_id)

    @post("/{tournament_id:str}/pause", status_code=200, responses=problems(403, 409, 422))
    async def pause_tournament(
        self,
        tournament_id: FromPath[str],
        services: ServicesDep,
        principal: PrincipalDep,
        data: JSONBody[ReasonIn | None] = None,
    ) -> TournamentDetail:
        """Pause (admin): no pairing, game creation or recording until resumed. Games in play
        are played to their end."""
        _admin(principal)
        desk = _desk(services)
        reason = data.reason if data else ""
        await _call(desk.set_paused, tournament_id, True, "admin", reason)
        return await _detail(desk, tournament_id)

    @post("/{tournament_id:str}/resume", status_code=200, responses=problems(403, 409, 422))
    async def resume_tournament(
        self, tournament_id: FromPath[str], services: ServicesDep, principal: PrincipalDep
    ) -> TournamentDetail:
        """Resume a paused tournament (admin)."""
        _admin(principal)
        desk = _desk(services)
        await _call(desk.set_paused, tournament_id, False, "admin")
        return await _detail(desk, tournament_id)

    @post(
        "/{tournament_id:str}/rounds/{round_no:int}/pairing",
        status_code=201,
        responses=problems(403, 409, 422),
    )
    async def pair_round_by_hand(
        self,
        tournament_id: FromPath[str],
        round_no: FromPath[int],
        data: JSONBody[ManualPairingIn],
        services: ServicesDep,
        principal: PrincipalDep,
    ) -> TournamentDetail:
        """Pair the next round by hand (admin): every active player at exactly one table or
        with one bye, else 422 with every reason and nothing recorded. The scheduler pairs the
        round as given (it shows as `manual_pairing` until then, `manual` after); pause the
        tournament first if the round before is about to end. A registration or withdrawal
        before the round is paired drops the hand pairing."""
        _admin(principal)
        desk = _desk(services)
        await _call(desk.set_pairing, tournament_id, round_no, data.tables, data.byes, "admin")
        return await _detail(desk, tournament_id)

    @get(
        "/{tournament_id:str}/pairings",
        responses={200: answer(list[PairingsRound], "every round's tables and byes")},
    )
    async def get_pairings(
        self, tournament_id: FromPath[str], services: ServicesDep
    ) -> list[dict[str, Any]]:
        """Every round's tables and byes, with the king-pairing/1 input it was paired from:
        pairing `input` again (tournament.pairing.export.verify) gives exactly `pairing`. A
        round-robin round has its plan's `schedule` (`method`, `balance`); a round paired by
        hand is `manual`, with no input."""
        return await _call(_desk(services).pairings, tournament_id)

    @get(
        "/{tournament_id:str}/standings",
        media_type="application/json",
        opt={ALSO_AS: {"text/csv": {"type": "string", "description": "one row per player"}}},
        responses={200: answer(list[StandingRow], "the standings, best first")},
    )
    async def get_standings(
        self,
        tournament_id: FromPath[str],
        services: ServicesDep,
        format: FromQuery[Literal["json", "csv"]] = "json",
    ) -> Response[Any]:
        """Standings: ladder points (exact fractions and two-decimal displays) and tie-breaks;
        `?format=csv` for CSV."""
        table = await _call(_desk(services).standings, tournament_id)
        if format == "csv":
            return Response(to_csv(table), media_type="text/csv")
        return Response(to_json(table), media_type="application/json")

    @get(
        "/{tournament_id:str}/events",
        media_type="text/event-stream",
        **streamed(TournamentMessage, "the tournament's events"),
    )
    async def tournament_events(
        self,
        request: Request[Any, Any, Any],
        tournament_id: FromPath[str],
        services: ServicesDep,
        after: Annotated[int | None, Parameter(ge=0, le=10**9)] = None,
        format: FromQuery[Format | None] = None,
        follow: FromQuery[bool] = True,
    ) -> Stream:
        """The tournament's events (SSE, or NDJSON): created, registrations, rounds paired,
        games recorded, rounds closed, finished. Resumable with `Last-Event-ID` / `?after=`;
        the stream ends after `tournament_finished`."""
        desk = _desk(services)
        await _call(desk.load, tournament_id)
        options = resumable(request, services.settings, format, after, follow)
        return stream_response(
            tournament_stream_body(services, tournament_id, options), options.fmt
        )


class LeaderboardController(Controller):
    path = "/api/v1/leaderboard"
    tags = ("tournaments",)

    @get("/")
    async def get_leaderboard(
        self,
        services: ServicesDep,
        limit: Annotated[int, Parameter(ge=1, le=1000)] = 100,
        min_games: Annotated[int, Parameter(ge=0, le=100_000)] = 0,
    ) -> list[LeaderboardOut]:
        """Ratings (OpenSkill Plackett–Luce) over every recorded game of every tournament, one
        per bot identity (a service player; a builtin strategy with its options), by ordinal
        μ − 3σ."""
        rows = await _call(_desk(services).leaderboard, limit, min_games)
        return [
            LeaderboardOut(r.rank, r.player, r.name, r.kind, r.games, r.mu, r.sigma, r.ordinal)
            for r in rows
        ]


def _no_live_duplicate(duplicate: bool) -> bool:
    """Duplicate rounds are for local runs (`king tournament run --duplicate`) for now: on the
    service a table's ended deals are public while another table still plays the same cards."""
    if duplicate:
        raise Unprocessable(
            "duplicate rounds are not offered on the service yet: the hands of a deal that has "
            "ended at one table would be public while another table plays the same cards; "
            "run them locally with `king tournament run --duplicate`"
        )
    return duplicate


def _rules(options: dict[str, Any]) -> Any:
    from domain.rules import BadRuleOption, Rules

    try:
        return Rules.from_dict(options)
    except (BadRuleOption, TypeError, ValueError) as exc:
        raise Unprocessable(f"rules: {exc}") from None


async def tournament_stream_body(
    services: Services,
    tournament_id: str,
    options: StreamOptions,
) -> AsyncIterator[bytes]:
    fmt = options.fmt
    store = services.store
    sid = tournament_stream(tournament_id)
    position = options.after
    last_sent = time.monotonic()
    if fmt == "sse":
        yield b"retry: 2000\n\n"
    while True:
        records = await asyncio.to_thread(store.read_stream, sid, position + 1)
        out: list[bytes] = []
        finished = False
        for r in records:
            position = r.version
            message = {
                "id": r.version,
                "tournament_id": tournament_id,
                "type": r.type,
                "at": r.recorded_at.astimezone(UTC).isoformat(timespec="milliseconds"),
                "data": orjson.loads(orjson.dumps(r.payload)),
            }
            if r.type == "game_recorded":  # one game's ladder points: JSON numbers (API.md)
                data = message["data"]
                data["points"] = [
                    [p, points_number(points_from_json(x))] for p, x in data["points"]
                ]
            out.append(encode(message, fmt))
            finished = finished or r.type == "tournament_finished"
        if out:
            yield b"".join(out)
            last_sent = time.monotonic()
        if finished or not options.follow or services.closing:
            return
        if not records and position >= 1:
            state_done = await asyncio.to_thread(_finished, services, tournament_id)
            if state_done:
                return
        await asyncio.sleep(options.poll_seconds)
        if time.monotonic() - last_sent >= options.keepalive_seconds:
            yield keepalive(fmt)
            last_sent = time.monotonic()


def _finished(services: Services, tournament_id: str) -> bool:
    return _desk(services).load(tournament_id).finished is not None
