"""Who is logged in on a page: the web session cookie resolved by the same dependency code as
the API's bearer tokens (services.controllers.deps), once per page request."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.exceptions import NotAuthorizedException

from services.container import Services
from services.controllers.deps import SESSION_COOKIE, _authenticate
from services.identity import Principal
from services.play.errors import Forbidden

Req = Request[Any, Any, Any]
USER_KEY = "king_user"
STALE_KEY = "king_stale_session"  # a session cookie that is no live session: the page clears it


async def load_user(request: Req) -> None:
    """`before_request` of the page controllers."""
    services: Services = request.app.state.king
    try:
        principal = await _authenticate(request, services, strict=False)
    except (NotAuthorizedException, Forbidden):
        principal = None
    user = principal if principal is not None and principal.session else None
    request.state[USER_KEY] = user
    request.state[STALE_KEY] = user is None and bool(request.cookies.get(SESSION_COOKIE))


def user_of(request: Req) -> Principal | None:
    user = request.state.get(USER_KEY)
    return user if isinstance(user, Principal) else None
