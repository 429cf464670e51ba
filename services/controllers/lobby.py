"""The lobby: open tables anyone with a token may join, the quick game, the live stream."""

import asyncio
from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.params import FromPath, FromQuery, JSONBody, Parameter
from litestar.response import Stream
from msgspec import Meta, Struct

from services.api_types import InvitationOut
from services.api_types.lobby import LobbyMessage, LobbyTableOut
from services.container import Services
from services.controllers.deps import (
    MaybePrincipalDep,
    PrincipalDep,
    ServicesDep,
    own_player,
)
from services.controllers.invitations import invitation_out
from services.controllers.streaming import Format, resumable, stream_response
from services.controllers.tournaments import TournamentOut, tournament_out
from services.identity import Principal
from services.lobby.desk import PERSON, QUICK_HOUSE, LobbyDesk
from services.lobby.errors import LobbyConflict
from services.lobby.stream import lobby_stream, table_out
from services.openapi import problems, streamed
from services.play.invitations import PENDING
from services.play.service import GameInfo
from services.web.lists import unstarted_tournaments
from tournament.games import GameNotFound

LobbySeat = Annotated[
    str,
    Meta(
        max_length=60,
        pattern=r"^(person|house:[A-Za-z0-9_.-]{1,40})$",
        description="`person`: left for a person to join; `house:<strategy>`: a house bot",
        examples=["person", "house:heuristic"],
    ),
]
OPEN_FOR_REGISTRATION = ("registering", "scheduled")
TOURNAMENTS_LOOKED_AT = 50  # the newest unstarted tournaments the lobby looks through


class LobbyTableCreate(Struct, forbid_unknown_fields=True):
    seats: Annotated[list[LobbySeat], Meta(min_length=4, max_length=4)]
    seat: (
        Annotated[
            int,
            Meta(ge=0, le=3, description="the creator's seat (a `person` one; default the first)"),
        ]
        | None
    ) = None
    rules: Annotated[
        dict[str, Any], Meta(description="rule options of docs/RULES.md, e.g. {mode: short12}")
    ] = {}
    decision_seconds: Annotated[float, Meta(ge=0.05, le=3600)] | None = None


class QuickGameIn(Struct, forbid_unknown_fields=True):
    strategy: Annotated[
        str,
        Meta(
            max_length=40,
            pattern=r"^[A-Za-z0-9_.-]{1,40}$",
            description="the three house bots' strategy",
        ),
    ] = QUICK_HOUSE


class QuickGameOut(Struct):
    """The quick game's table, started: play seat `seat` of game `game_id` (`play_url`)."""

    table: LobbyTableOut
    game_id: str
    seat: int
    play_url: str


class LobbyOut(Struct):
    """The lobby: open tables (newest first), the caller's pending invitations (with a token),
    tournaments open for registration, and `position`: follow `GET /api/v1/lobby/events`
    from here (`?after=<position>`) to miss no change."""

    tables: list[LobbyTableOut]
    invitations: list[InvitationOut]
    tournaments: list[TournamentOut]
    position: int


def _lobby(services: Services) -> LobbyDesk:
    desk = services.lobby
    assert desk is not None
    return desk


async def _invitations(services: Services, principal: Principal | None) -> list[InvitationOut]:
    if principal is None or principal.player_id is None:
        return []
    book = services.games.invitations
    received = await asyncio.to_thread(book.received, principal.player_id, PENDING, 50)
    out = []
    for invitation in received:
        try:
            info: GameInfo | None = await services.games.info(invitation.game_id)
        except GameNotFound:
            info = None
        out.append(invitation_out(invitation, info))
    return out


async def _tournaments(services: Services) -> list[TournamentOut]:
    desk = services.tournaments
    if desk is None:
        return []

    def load() -> list[TournamentOut]:
        out = []
        services.games.catch_up()
        for tid in unstarted_tournaments(services.games.read_engine, TOURNAMENTS_LOOKED_AT):
            try:
                shown = tournament_out(desk.load(tid), desk.control(tid), desk)
            except (LookupError, ValueError):  # one that does not load is not listed
                continue
            if shown.status in OPEN_FOR_REGISTRATION:
                out.append(shown)
        return out

    return await asyncio.to_thread(load)


class LobbyController(Controller):
    path = "/api/v1/lobby"
    tags = ("lobby",)

    @get("/")
    async def get_lobby(
        self, services: ServicesDep, maybe_principal: MaybePrincipalDep
    ) -> LobbyOut:
        """Open tables (and full ones whose game is starting), newest first; with a token the
        caller's pending invitations; tournaments open for registration."""
        desk = _lobby(services)
        position = await asyncio.to_thread(desk.book.head)
        tables = [table_out(t) for t in await desk.listed()]
        return LobbyOut(
            tables,
            await _invitations(services, maybe_principal),
            await _tournaments(services),
            position,
        )

    @get(
        "/events",
        media_type="text/event-stream",
        **streamed(LobbyMessage, "the lobby's table changes"),
    )
    async def lobby_events(
        self,
        request: Request[Any, Any, Any],
        services: ServicesDep,
        after: Annotated[int | None, Parameter(ge=0, le=10**12)] = None,
        format: FromQuery[Format | None] = None,
        follow: FromQuery[bool] = True,
    ) -> Stream:
        """The lobby's changes, live (SSE, or NDJSON with `format=ndjson` or that Accept):
        `table_opened`, `seat_taken`, `seat_left`, `table_started`, `table_cancelled`, each
        with the table as it is now. Resumable with `Last-Event-ID` or `?after=<id>`."""
        options = resumable(request, services.settings, format, after, follow)
        resumed = after is not None or bool(request.headers.get("last-event-id", "").strip())
        body = lobby_stream(_lobby(services), options, resumed)
        return stream_response(body, options.fmt)

    @get("/tables/{table_id:str}")
    async def get_lobby_table(
        self, table_id: FromPath[str], services: ServicesDep
    ) -> LobbyTableOut:
        """One table of the lobby, in any status."""
        return table_out(await _lobby(services).get(table_id))

    @post("/tables", status_code=201, responses=problems(403, 409, 422))
    async def open_lobby_table(
        self,
        data: JSONBody[LobbyTableCreate],
        services: ServicesDep,
        principal: PrincipalDep,
    ) -> LobbyTableOut:
        """Open a table: each seat `person` (left for people to join) or `house:<strategy>`;
        the creator takes `seat`. It starts as soon as every seat is filled (at once, when
        every other seat is a house bot). At most 5 open tables per player."""
        player = own_player(principal)
        table = await _lobby(services).open(
            player, data.seats, data.seat, data.rules, data.decision_seconds
        )
        return table_out(table)

    @post("/tables/{table_id:str}/join", status_code=200, responses=problems(403, 409))
    async def join_lobby_table(
        self, table_id: FromPath[str], services: ServicesDep, principal: PrincipalDep
    ) -> LobbyTableOut:
        """Take the first free seat. The last one starts the game (`status: started`,
        `game_id`). 409 for a full, started or cancelled table, or a seat held already."""
        player = own_player(principal)
        return table_out(await _lobby(services).join(table_id, player))

    @post("/tables/{table_id:str}/leave", status_code=200, responses=problems(403, 409))
    async def leave_lobby_table(
        self, table_id: FromPath[str], services: ServicesDep, principal: PrincipalDep
    ) -> LobbyTableOut:
        """Give up one's seat before the start (the creator cancels instead)."""
        player = own_player(principal)
        return table_out(await _lobby(services).leave(table_id, player))

    @post("/tables/{table_id:str}/cancel", status_code=200, responses=problems(403, 409))
    async def cancel_lobby_table(
        self, table_id: FromPath[str], services: ServicesDep, principal: PrincipalDep
    ) -> LobbyTableOut:
        """Cancel a table not started (its creator or the admin)."""
        return table_out(await _lobby(services).cancel(table_id, principal))

    @post("/quick-game", status_code=201, responses=problems(403, 409, 422))
    async def quick_game(
        self,
        services: ServicesDep,
        principal: PrincipalDep,
        data: JSONBody[QuickGameIn | None] = None,
    ) -> QuickGameOut:
        """One call to a game against three house bots: a table of the caller (seat 0) and
        three `house:<strategy>` (default heuristic), started at once."""
        player = own_player(principal)
        strategy = data.strategy if data is not None else QUICK_HOUSE
        table = await _lobby(services).quick_game(player, strategy)
        if table.game_id is None:  # the start failed (logged): the sweep starts it later
            raise LobbyConflict(f"table {table.id} did not start: try again", "not_started")
        return QuickGameOut(table_out(table), table.game_id, 0, f"/play/{table.game_id}")


__all__ = ["PERSON", "LobbyController"]
