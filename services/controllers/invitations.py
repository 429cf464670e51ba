"""Invitations to a table's seats: list, look, accept, decline, cancel."""

import asyncio
from typing import Annotated, Literal

from litestar import Controller, get, post
from litestar.params import FromPath, FromQuery, Parameter

from services.api_types import InvitationOut
from services.container import Services
from services.controllers.deps import PrincipalDep, ServicesDep, own_player
from services.openapi import problems
from services.play.invitations import Invitation, InvitationDesk, describe
from services.play.service import GameInfo
from services.schemas import MyInvitations
from tournament.games import GameNotFound

Listed = Literal["pending", "accepted", "declined", "expired", "cancelled", "all"]


def invitation_out(invitation: Invitation, info: GameInfo | None) -> InvitationOut:
    return InvitationOut(**describe(invitation, info))


async def _out(services: Services, invitation: Invitation) -> InvitationOut:
    try:
        info: GameInfo | None = await services.games.info(invitation.game_id)
    except GameNotFound:
        info = None
    return invitation_out(invitation, info)


def _desk(services: Services) -> InvitationDesk:
    desk = services.invitations
    assert desk is not None
    return desk


class InvitationController(Controller):
    path = "/api/v1"
    tags = ("invitations",)

    @get("/me/invitations", responses=problems(403))
    async def my_invitations(
        self,
        services: ServicesDep,
        principal: PrincipalDep,
        status: FromQuery[Listed] = "pending",
        limit: Annotated[int, Parameter(ge=1, le=500)] = 100,
    ) -> MyInvitations:
        """The token's player's invitations: `received` (addressed to them) and `sent` (to
        the players of their tables), pending ones by default, newest first."""
        player = own_player(principal)
        book = services.games.invitations
        wanted = None if status == "all" else status
        received = await asyncio.to_thread(book.received, player, wanted, limit)
        sent = await asyncio.to_thread(book.sent, player, wanted, limit)
        return MyInvitations(
            [await _out(services, i) for i in received], [await _out(services, i) for i in sent]
        )

    @get("/invitations/{invitation_id:str}")
    async def get_invitation(
        self, invitation_id: FromPath[str], services: ServicesDep, principal: PrincipalDep
    ) -> InvitationOut:
        """One invitation, for its inviter, its invitee or the admin (404 for anyone else)."""
        return await _out(services, await _desk(services).get(invitation_id, principal))

    @post("/invitations/{invitation_id:str}/accept", status_code=200, responses=problems(403, 409))
    async def accept_invitation(
        self, invitation_id: FromPath[str], services: ServicesDep, principal: PrincipalDep
    ) -> InvitationOut:
        """Accept (the invitee): once every invitation of the table is accepted the game
        starts (`game_status` says `live`). 409 when it was answered, cancelled or expired."""
        invitation = await _desk(services).accept(invitation_id, principal)
        return await _out(services, invitation)

    @post("/invitations/{invitation_id:str}/decline", status_code=200, responses=problems(403, 409))
    async def decline_invitation(
        self, invitation_id: FromPath[str], services: ServicesDep, principal: PrincipalDep
    ) -> InvitationOut:
        """Decline (the invitee): the table is cancelled, never started."""
        return await _out(services, await _desk(services).decline(invitation_id, principal))

    @post("/invitations/{invitation_id:str}/cancel", status_code=200, responses=problems(403, 409))
    async def cancel_invitation(
        self, invitation_id: FromPath[str], services: ServicesDep, principal: PrincipalDep
    ) -> InvitationOut:
        """Cancel (the inviter or the admin): the table is cancelled, never started; 409 once
        every invitation is accepted (the game starts) or the table is closed already."""
        return await _out(services, await _desk(services).cancel(invitation_id, principal))
