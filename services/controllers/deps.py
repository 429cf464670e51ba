"""Dependencies the controllers receive: the service container and who is calling."""

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from sqlalchemy.exc import SQLAlchemyError

from services.container import Services
from services.identity import Principal, hash_token
from services.observability import get_logger
from services.play.errors import Forbidden
from services.ratelimit import MAX_TOKEN_LENGTH, PRINCIPAL_SCOPE_KEY, SeenToken

SESSION_COOKIE = "king_session"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# A route's `opt` keys for the central scope check (`_authenticate`): ANY_SCOPE lets a token of
# any scope through an unsafe method (log-out revokes the caller's own token); NEEDS_SCOPE names
# the one scope an operation needs beyond the default (acting needs `play` or `bot`).
ANY_SCOPE = "king_any_scope"
NEEDS_SCOPE = "king_needs_scope"

log = get_logger("king.auth")
ServicesDep = NamedDependency[Services]
Connection = ASGIConnection[Any, Any, Any, Any]  # a request or a WebSocket
PrincipalDep = NamedDependency[Principal]
MaybePrincipalDep = NamedDependency[Principal | None]


class RecentMisses:
    """Tokens the database did not know, by their hashes (`hash_token`), remembered briefly so
    a repeated bad token costs no second read. Safe to cache: tokens are random, so one unknown
    now is not issued later, and a revoked one stays revoked. Known tokens are cached by the
    PlayerService itself. Used on the event loop only."""

    def __init__(self, seconds: float = 30.0, size: int = 10_000) -> None:
        self.seconds = seconds
        self.size = size
        self._seen: OrderedDict[str, float] = OrderedDict()

    def __contains__(self, digest: str) -> bool:
        until = self._seen.get(digest)
        if until is None:
            return False
        if until < time.monotonic():
            del self._seen[digest]
            return False
        return True

    def add(self, digest: str) -> None:
        self._seen[digest] = time.monotonic() + self.seconds
        self._seen.move_to_end(digest)
        while len(self._seen) > self.size:
            self._seen.popitem(last=False)


def _misses(request: Connection) -> RecentMisses:
    """The app's RecentMisses (one per app: apps in one process may use different databases)."""
    state = request.app.state
    misses = state.get("king_token_misses")
    if not isinstance(misses, RecentMisses):
        misses = RecentMisses()
        state["king_token_misses"] = misses
    return misses


def services_provider(services: Services) -> Callable[[], Services]:
    """The `services` dependency of an app built on `services` (its `state.king`): a function
    of no arguments, so resolving it on every request costs no parameter parsing."""

    def provide() -> Services:
        return services

    return provide


def _bearer(request: Connection) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise NotAuthorizedException("use Authorization: Bearer <token>")
    return token.strip()


def session_secret(request: Request[Any, Any, Any]) -> str | None:
    """The web session cookie's text (only read when no Authorization header is sent)."""
    value = request.cookies.get(SESSION_COOKIE)
    return value if value else None


class Known(NamedTuple):
    """A token the lookup recognised: its principal and its hash (`hash_token`), computed once
    per request and handed on to whatever else needs it (the last-used time)."""

    principal: Principal
    digest: str


async def _lookup(request: Connection, services: Services, token: str) -> Known | None:
    """The token's principal and hash, else None (unknown, revoked or expired)."""
    # The rate limiter may have looked this very token up in memory (and hashed it) a moment ago.
    seen = request.scope.get(PRINCIPAL_SCOPE_KEY)
    if isinstance(seen, SeenToken) and seen.token == token:
        digest, principal = seen.digest, seen.principal
    else:
        digest = hash_token(token)
        principal = services.players.cached(digest)
    if principal is None:
        misses = _misses(request)
        if digest in misses:
            return None
        principal = await asyncio.to_thread(services.players.authenticate, digest)
        if principal is None:
            misses.add(digest)
            return None
    return Known(principal, digest)


def _check_scope(request: Request[Any, Any, Any], principal: Principal) -> None:
    """The one place every token's scopes are enforced: an unsafe method acts, and acting
    needs `play` or `bot` (a `read` token reads only); a route may need one scope more."""
    opt = request.route_handler.opt
    needs = opt.get(NEEDS_SCOPE)
    if needs is not None and not principal.has(needs):
        raise Forbidden(f"this needs a token with the {needs} scope")
    if request.method not in SAFE_METHODS and not opt.get(ANY_SCOPE):
        _check_acts(principal)


def _check_acts(principal: Principal) -> None:
    if not principal.may_act:
        raise Forbidden("this token has the read scope only: it cannot act (play or bot can)")


async def _authenticate(
    request: Request[Any, Any, Any], services: Services, strict: bool = True
) -> Principal | None:
    """The request's principal: from its bearer token, else from its web session cookie; None
    with neither. 401 for a malformed, unknown or revoked token, and (when `strict`) for a
    session cookie that is no live session (forged or expired; not strict: ignored). 403 when
    the token's scopes do not allow the operation."""
    token = _bearer(request)
    if token is None:
        secret = session_secret(request)
        if secret is None:
            return None
        known = None if len(secret) > MAX_TOKEN_LENGTH else await _lookup(request, services, secret)
        if known is None or not known.principal.session:
            if strict:
                raise NotAuthorizedException("unknown or expired session: log in again")
            return None
    else:
        known = await _known_bearer(request, services, token)
    _check_scope(request, known.principal)
    await _touch(services, known)
    return known.principal


async def _known_bearer(connection: Connection, services: Services, token: str) -> Known:
    """The bearer token's principal; 401 for an unknown, revoked or session token."""
    if len(token) > MAX_TOKEN_LENGTH:
        raise NotAuthorizedException("unknown or revoked token")
    known = await _lookup(connection, services, token)
    if known is None or known.principal.session:  # a session's text is no bearer token
        raise NotAuthorizedException("unknown or revoked token")
    return known


async def _touch(services: Services, known: Known) -> None:
    """Note when a player's token was last used (at most once a while per token)."""
    accounts = services.accounts
    principal = known.principal
    if accounts is not None and not principal.is_admin and accounts.touch_due(known.digest):
        try:
            await asyncio.to_thread(accounts.write_last_used, known.digest)
        except SQLAlchemyError as exc:  # a last-used time is no reason to fail the request
            log.warning("token_last_used_not_written", error=type(exc).__name__)


async def bearer_principal(connection: Connection, services: Services) -> Principal:
    """A seat socket's principal: its bearer token only. A web session cookie never opens one
    (a browser sends it with a cross-site upgrade too, and no CORS check applies). 401 if
    the token is missing, malformed, unknown or revoked; 403 if it cannot act (a socket is
    for acting, as an unsafe method is)."""
    token = _bearer(connection)
    if token is None:
        raise NotAuthorizedException(
            "this needs Authorization: Bearer <token> (a web session does not open a socket)"
        )
    known = await _known_bearer(connection, services, token)
    _check_acts(known.principal)
    await _touch(services, known)
    return known.principal


async def provide_maybe_principal(
    request: Request[Any, Any, Any], services: ServicesDep
) -> Principal | None:
    return await _authenticate(request, services, strict=False)


async def provide_principal(request: Request[Any, Any, Any], services: ServicesDep) -> Principal:
    """The caller's principal, resolved here in one step (not through `maybe_principal`: one
    dependency fewer to resolve on every authenticated request)."""
    principal = await _authenticate(request, services)
    if principal is None:
        raise NotAuthorizedException(
            "this needs a token (Authorization: Bearer <token>) or a logged-in session"
        )
    return principal


async def provide_admin(principal: PrincipalDep) -> Principal:
    if not principal.is_admin:
        raise PermissionDeniedException("this needs the admin token")
    return principal


def own_player(principal: Principal) -> str:
    """The token's player, for an operation on the caller's own things (403 for the admin's
    token, which is no player)."""
    if principal.player_id is None:
        raise Forbidden("the admin token is not a player")
    return principal.player_id


async def hold_seat(services: Services, game_id: str, seat: int, principal: Principal) -> None:
    """403 unless the principal holds `seat` of the started game `game_id` now (404 for a game
    that does not exist): who may follow a seat's stream or open its socket."""
    info = await services.games.info(game_id)
    if info.status == "created" or seat not in range(4):
        raise Forbidden(f"this token does not hold seat {seat}")
    state = await services.games.load(game_id)
    if seat not in services.games.seats_of(state, principal.player_id):
        raise Forbidden(f"this token does not hold seat {seat}")
