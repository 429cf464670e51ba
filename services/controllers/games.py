"""Tables and games: create, start, look, act, record, audit."""

import asyncio
from typing import Annotated, Any, Literal

from litestar import Controller, MediaType, Request, Response, get, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, FromQuery, HeaderParameter, JSONBody, Parameter
from litestar.serialization import encode_json

from domain.game import InconsistentEvent, Phase
from domain.record import to_record
from domain.view import Action, BadAction
from services.api_types import AuditReport, KingRecord
from services.caching import cached_json, settled
from services.compression import UNCOMPRESSED
from services.container import Services
from services.controllers.deps import MaybePrincipalDep, PrincipalDep, ServicesDep
from services.controllers.invitations import invitation_out
from services.controllers.records import game_origin, imported_detail, with_origin
from services.idempotency import KEY_DOC_PATTERN, KEY_HEADER, Scope, fingerprint, parse_key
from services.identity import Principal
from services.openapi import NOT_MODIFIED, answer, problems
from services.play.driver import iso
from services.play.service import Forbidden, GameInfo
from services.problems import BadRequest, IllegalAction, render, strike_out
from services.schemas import (
    ActionIn,
    ActionOut,
    GameCreate,
    GameDetail,
    GameOut,
    ImportedGameDetail,
    SeatViewOut,
    TableDetail,
)
from tournament.games import GameNotFound

Status = Literal["created", "live", "over"]
MINIMAL = {"preference-applied": "return=minimal"}


def prefers_minimal(prefer: str | None) -> bool:
    """Whether a `Prefer` header asks for `return=minimal` (RFC 7240: comma-separated
    preferences, names case-insensitive, optional spaces around `=`, parameters after `;`)."""
    if not prefer:
        return False
    for preference in prefer.split(","):
        name, _, value = preference.split(";", 1)[0].partition("=")
        if name.strip().lower() == "return" and value.strip().strip('"').lower() == "minimal":
            return True
    return False


def action_of(body: ActionIn) -> Action:
    """The rules engine's action for a request's body (BadRequest if it names none)."""
    try:
        return Action.from_dict(body.as_dict())
    except BadAction as exc:
        raise BadRequest(str(exc)) from None


async def act_and_answer(
    services: Services,
    principal: Principal,
    game_id: str,
    seat: int | None,
    action: Action,
    version: int | None,
    with_view: bool,
) -> ActionOut:
    """Act for the token (POST /actions, a seat socket's frame): the answer of an accepted
    action, with the seat's new view if asked; IllegalAction for one the rules refuse."""
    result = await services.games.commands.act(principal, game_id, seat, action, version)
    if result.violation is not None:
        raise IllegalAction(result.violation, result.strike)
    return ActionOut(
        ok=True,
        seat=result.seat,
        version=result.state.version,
        view=services.games.view(result.state, result.seat) if with_view else None,
        strike=strike_out(result.strike),
    )


def game_out(info: GameInfo) -> GameOut:
    return GameOut(
        id=info.id,
        status=info.status,
        seats=list(info.seats),
        rules=info.rules,
        decision_seconds=info.decision_seconds,
        client_seed=info.client_seed,
        created_by=info.created_by,
        created_at=info.created_at,
    )


class GameController(Controller):
    path = "/api/v1/games"
    tags = ("games",)

    @post("/", status_code=201, responses=problems(403, 409, 422))
    async def create_game(
        self, data: JSONBody[GameCreate], services: ServicesDep, principal: PrincipalDep
    ) -> TableDetail:
        """Set a table: four seats (player ids or house:<strategy>), rule options, time limit.

        With `start` (the default) the game starts at once: the seed is sealed, the first
        hands dealt, and the driver runs the game. A player who seats other players (not the
        admin) invites them instead: the table starts once every invitation is accepted
        (`invitations` lists them), and never if one is declined, cancelled or expires.
        """
        games = services.games
        info = await games.create_table(
            principal,
            data.id,
            data.seats,
            data.rules,
            data.decision_seconds,
            data.client_seed,
            data.start,
            data.invitation_seconds,
        )
        invited = []
        if not principal.is_admin:
            invited = await asyncio.to_thread(games.invitations.of_game, info.id)
        if invited:
            games.games_changed()  # the invitees' notice streams look again
        if not data.start or invited:
            return TableDetail(game_out(info), None, 0, [invitation_out(i, info) for i in invited])
        state = await games.start(principal, info.id)
        info = await games.info(info.id)
        return TableDetail(game_out(info), services.games.view(state), state.version)

    @get("/")
    async def list_games(
        self,
        services: ServicesDep,
        status: FromQuery[Status | None] = None,
        player: Annotated[str | None, Parameter(max_length=40)] = None,
        limit: Annotated[int, Parameter(ge=1, le=500)] = 50,
        offset: Annotated[int, Parameter(ge=0, le=1_000_000)] = 0,
    ) -> list[GameOut]:
        """Games, newest first; filter by status or by a seated player."""
        return [game_out(i) for i in await services.games.list_games(status, player, limit, offset)]

    @get("/{game_id:str}", responses=problems(409))
    async def get_game(
        self, game_id: FromPath[str], services: ServicesDep
    ) -> GameDetail | ImportedGameDetail:
        """The table and the public view (played cards only; no hand before its deal ends).
        A game imported from a king-record/1 has no table: its `origin` is shown instead."""
        try:
            info = await services.games.info(game_id)
        except GameNotFound:
            imported = await imported_detail(services, game_id)
            if imported is None:
                raise
            return imported
        if info.status == "created":
            return GameDetail(game_out(info), None, 0)
        state = await services.games.load(game_id)
        return GameDetail(game_out(info), services.games.view(state), state.version)

    @post("/{game_id:str}/start", status_code=200, responses=problems(403, 409, 422))
    async def start_game(
        self, game_id: FromPath[str], services: ServicesDep, principal: PrincipalDep
    ) -> GameDetail:
        """Start a table created with `start: false` (its creator or the admin). A table
        whose invitations are not all accepted is refused (409, `invitations_pending` naming
        who has not; `table_cancelled` once one was declined, cancelled or expired)."""
        state = await services.games.start(principal, game_id)
        info = await services.games.info(game_id)
        return GameDetail(game_out(info), services.games.view(state), state.version)

    @get("/{game_id:str}/seats/{seat:int}", responses=problems(403, 409))
    async def get_seat_view(
        self,
        game_id: FromPath[str],
        seat: FromPath[int],
        services: ServicesDep,
        principal: PrincipalDep,
    ) -> SeatViewOut:
        """The seat's view (its own hand, legal actions, the deadline) for the seat's token."""
        state = await services.games.load(game_id)
        if seat not in services.games.seats_of(state, principal.player_id):
            raise Forbidden(f"this token does not hold seat {seat}")
        turn = services.games.turn(game_id)
        deadline = (
            turn.deadline if turn and turn.version == state.version and turn.seat == seat else None
        )
        return SeatViewOut(
            game_id,
            seat,
            state.version,
            iso(deadline) if deadline else None,
            services.games.view(state, seat),
        )

    @post(
        "/{game_id:str}/actions",
        status_code=200,
        opt=UNCOMPRESSED,
        # a keyed action answers its bytes (the first answer's); the schema is the same
        responses={
            200: ResponseSpec(ActionOut, description="the seat's new view"),
            **problems(403, 409, 422),
        },
    )
    async def submit_action(
        self,
        request: Request[Any, Any, Any],
        game_id: FromPath[str],
        data: JSONBody[ActionIn],
        services: ServicesDep,
        principal: PrincipalDep,
        idempotency_key: Annotated[
            str | None,
            HeaderParameter(
                name=KEY_HEADER,
                required=False,
                # in the document only: services.idempotency refuses a bad key with its own
                # problem (code bad_idempotency_key)
                schema_extra={"pattern": KEY_DOC_PATTERN},
                description="a key of the client's choosing (a UUID), one per decision: a "
                "repeat gets the first answer, marked `Idempotent-Replayed: true`",
            ),
        ] = None,
        prefer: Annotated[
            str | None,
            HeaderParameter(
                name="prefer",
                required=False,
                description="`return=minimal` (RFC 7240): answer without the seat's view "
                "(`view` is null, and `Preference-Applied: return=minimal` says so), for a "
                "client that follows the game on its stream",
            ),
        ] = None,
    ) -> ActionOut | Response[bytes]:
        """Play a card, declare a contract or ask for a redeal, for one of the token's seats.

        An illegal action on the seat's turn is refused (422, with the reason code and rule)
        and counts as a strike: a default move is played for the seat. With an
        `Idempotency-Key` the action is decided once: a repeat of the key gets the first
        answer again, 422 and strike included, and is never decided again.
        """
        key = parse_key(idempotency_key)
        minimal = prefers_minimal(prefer)
        action = action_of(data)

        async def act_now() -> ActionOut:
            return await act_and_answer(
                services, principal, game_id, data.seat, action, data.version, not minimal
            )

        async def respond() -> Response[Any]:
            headers = MINIMAL if minimal else None
            return Response(
                encode_json(await act_now()), media_type=MediaType.JSON, headers=headers
            )

        if key is None:
            return await respond() if minimal else await act_now()
        if principal.player_id is None:  # a key is a player's: the admin holds no seat
            raise Forbidden("the admin token holds no seat: act with the player's token")
        await services.games.commands.load_fresh(game_id)  # no key kept for a missing game

        async def answer() -> Response[Any]:
            try:
                return await respond()
            except Exception as exc:  # the app's answer to it, to be kept as the first
                return render(request, exc)

        scope = Scope(principal.player_id, game_id, key)
        return await services.idempotency.run(scope, fingerprint(encode_json(data)), answer)

    @get(
        "/{game_id:str}/record",
        responses={
            200: answer(KingRecord, "the game's king-record/1 document"),
            304: NOT_MODIFIED,
            **problems(409),
        },
    )
    async def get_record(
        self, request: Request[Any, Any, Any], game_id: FromPath[str], services: ServicesDep
    ) -> Response[bytes]:
        """king-record/1 of what is public now: ended deals with hands; the seed at the end.

        Read from the game's stream, so games played by a local `king tournament run` on the
        same database export too. A strong ETag (`If-None-Match` gets 304); once the game is
        over and its seed revealed, `Cache-Control: public, immutable`."""
        state = await services.games.load(game_id)
        response = cached_json(request, to_record(state, public=True), final=settled(state))
        return with_origin(response, await game_origin(services, game_id))

    @get(
        "/{game_id:str}/audit",
        responses={
            200: answer(AuditReport, "the audit report"),
            304: NOT_MODIFIED,
            **problems(403, 409),
        },
    )
    async def get_audit(
        self,
        request: Request[Any, Any, Any],
        game_id: FromPath[str],
        services: ServicesDep,
        maybe_principal: MaybePrincipalDep,
    ) -> Response[bytes]:
        """Hash chain and replay audit. Anyone once the game is over; the admin during it.
        Audited on every request (a changed stream is audited again); the answer carries a
        strong ETag over its bytes, and for a finished game `Cache-Control: public,
        immutable`."""
        over = await _is_over(services, game_id)  # GameNotFound: 404 for everyone
        if not over and not (maybe_principal and maybe_principal.is_admin):
            raise Forbidden("a game in progress is audited by the admin only")
        report = await asyncio.to_thread(services.repo.audit, game_id)
        services.metrics.audits.inc()
        if not report.ok:
            services.metrics.audit_failures.inc()
        settled_game = over and report.replay.finished and report.replay.seed_checked
        origin = await game_origin(services, game_id)
        body = report.to_dict() if origin is None else {**report.to_dict(), "origin": origin}
        return with_origin(cached_json(request, body, final=settled_game), origin)


async def _is_over(services: Services, game_id: str) -> bool:
    """Whether the game has ended. A stream the rules engine refuses cannot be replayed to
    say so (that is what its audit reports): then its last event decides, the seed's reveal
    ending every game."""
    try:
        state = await services.games.load(game_id)
    except (InconsistentEvent, ValueError, KeyError, TypeError):
        events = await asyncio.to_thread(services.repo.events, game_id)
        return bool(events) and events[-1].type == "seed_revealed"
    return state.phase is Phase.OVER
