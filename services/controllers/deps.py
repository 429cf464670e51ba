"""Dependencies the controllers receive: the service container and who is calling."""

from __future__ import annotations

import asyncio
from typing import Any

from litestar import Request
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException

from services.container import Services
from services.identity import Principal

ServicesDep = NamedDependency[Services]
PrincipalDep = NamedDependency[Principal]
MaybePrincipalDep = NamedDependency[Principal | None]


def provide_services(state: State) -> Services:
    services: Services = state.king
    return services


def _bearer(request: Request[Any, Any, Any]) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise NotAuthorizedException("use Authorization: Bearer <token>")
    return token.strip()


async def provide_maybe_principal(
    request: Request[Any, Any, Any], services: ServicesDep
) -> Principal | None:
    token = _bearer(request)
    if token is None:
        return None
    if len(token) > 200:
        raise NotAuthorizedException("unknown or revoked token")
    principal = services.players.cached(token)
    if principal is None:
        principal = await asyncio.to_thread(services.players.authenticate, token)
    if principal is None:
        raise NotAuthorizedException("unknown or revoked token")
    return principal


async def provide_principal(maybe_principal: MaybePrincipalDep) -> Principal:
    if maybe_principal is None:
        raise NotAuthorizedException("this needs a token: Authorization: Bearer <token>")
    return maybe_principal


async def provide_admin(principal: PrincipalDep) -> Principal:
    if not principal.is_admin:
        raise PermissionDeniedException("this needs the admin token")
    return principal
