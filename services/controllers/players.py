"""Players, tokens and push-bot URLs.

A push bot's URL is shown only to the player itself and the admin: it names a host the bot's
author may not want every other player to know (or to load).
"""

import asyncio
from typing import Annotated

from litestar import Controller, get, post, put
from litestar.di import NamedDependency, Provide
from litestar.params import FromPath, JSONBody, Parameter

from services.controllers.deps import PrincipalDep, ServicesDep, own_player, provide_admin
from services.identity import Player, Principal, ReservedPlayerId
from services.openapi import problems
from services.problems import Unprocessable
from services.schemas import BotUrlIn, PlayerCreate, PlayerCreated, PlayerOut, TokenOut


def player_out(p: Player, viewer: Principal) -> PlayerOut:
    """The player as `viewer` may see it: the bot URL for the player itself and the admin."""
    url = p.bot_url if viewer.is_admin or viewer.player_id == p.id else None
    return PlayerOut(p.id, p.name, p.kind, url, p.created_at)


class PlayerController(Controller):
    path = "/api/v1"
    tags = ("players",)

    @post(
        "/players",
        dependencies={"admin": Provide(provide_admin)},
        status_code=201,
        responses=problems(409, 422),
    )
    async def create_player(
        self, data: JSONBody[PlayerCreate], services: ServicesDep, admin: NamedDependency[Principal]
    ) -> PlayerCreated:
        """Create a player (admin). The reply holds the player's API token: shown once."""
        url = data.bot_url
        if url is not None:
            url = await asyncio.to_thread(services.policy.validate, url)
        kind = "bot" if url is not None else data.kind
        try:
            player, token = await asyncio.to_thread(
                services.players.create, data.id, data.name or data.id, kind, url
            )
        except ReservedPlayerId as exc:
            raise Unprocessable(str(exc)) from None
        return PlayerCreated(player_out(player, admin), token)

    @get("/players")
    async def list_players(
        self,
        services: ServicesDep,
        principal: PrincipalDep,
        limit: Annotated[int, Parameter(ge=1, le=500)] = 100,
        offset: Annotated[int, Parameter(ge=0, le=1_000_000)] = 0,
    ) -> list[PlayerOut]:
        """Players in the order they were created; bot URLs only for the player itself and
        the admin."""
        players = await asyncio.to_thread(services.players.list, limit, offset)
        return [player_out(p, principal) for p in players]

    @get("/players/{player_id:str}")
    async def get_player(
        self, player_id: FromPath[str], services: ServicesDep, principal: PrincipalDep
    ) -> PlayerOut:
        """One player; its bot URL only for the player itself and the admin."""
        return player_out(await asyncio.to_thread(services.players.get, player_id), principal)

    @get("/me", responses=problems(403))
    async def get_me(self, services: ServicesDep, principal: PrincipalDep) -> PlayerOut:
        """The token's own player."""
        player = await asyncio.to_thread(services.players.get, own_player(principal))
        return player_out(player, principal)

    @put("/me/bot", responses=problems(403, 422))
    async def set_my_bot_url(
        self, data: JSONBody[BotUrlIn], services: ServicesDep, principal: PrincipalDep
    ) -> PlayerOut:
        """Register (or, with null, clear) the push-bot URL the service POSTs decisions to."""
        url = data.url
        if url is not None:
            url = await asyncio.to_thread(services.policy.validate, url)
        player = await asyncio.to_thread(services.players.set_bot_url, own_player(principal), url)
        return player_out(player, principal)

    @post("/me/token", status_code=201, responses=problems(403))
    async def rotate_my_token(self, services: ServicesDep, principal: PrincipalDep) -> TokenOut:
        """Revoke the player's tokens and issue a new one (shown once)."""
        player = own_player(principal)
        return TokenOut(await asyncio.to_thread(services.players.rotate_token, player))
