"""Every error as JSON problem details (RFC 9457): a status, a title and a reason.

No traceback reaches a client: unexpected errors are logged (type and game path only) and
answered with a plain 500. A game or database too busy to decide in time is no bug: 503 with
`Retry-After`, and a `code` saying which.
"""

from __future__ import annotations

import traceback
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException

from domain.violations import Violation
from eventstore import InvalidEventError, InvalidStreamIdError, StoreBusy, StoreUnavailable
from services.bots.urls import BadBotUrl
from services.identity import PlayerExists, PlayerNotFound
from services.observability import get_logger
from services.play.invitations import (
    InvitationClosed,
    InvitationNotFound,
    InvitationsPending,
    TableCancelled,
)
from services.play.service import Conflict, Forbidden, StrikeInfo, TableError
from services.schemas import Problem, StrikeOut
from tournament.games import GameBusy, GameFailed, GameNotFound

PROBLEM_JSON = "application/problem+json"
BUSY_RETRY_SECONDS = 1
log = get_logger("king.http")


class BadRequest(ValueError):
    """A request the service understands but cannot accept (HTTP 400)."""


class IllegalAction(Exception):
    """An action the rules refuse (HTTP 422), maybe with the strike it earned."""

    def __init__(self, violation: Violation, strike: StrikeInfo | None = None) -> None:
        super().__init__(violation.code)
        self.violation = violation
        self.strike = strike


def problem(status: int, title: str, detail: str, **extra: Any) -> Response[Any]:
    body = Problem(title=title, status=status, detail=detail, **extra)
    return Response(content=msgspec.json.encode(body), status_code=status, media_type=PROBLEM_JSON)


def strike_out(strike: StrikeInfo | None) -> StrikeOut | None:
    if strike is None:
        return None
    return StrikeOut(
        strike.seat, strike.reason, strike.count, strike.forfeited, strike.default_action
    )


def _illegal(_: Request[Any, Any, Any], exc: IllegalAction) -> Response[Any]:
    v = exc.violation
    return problem(
        422,
        "illegal action",
        v.message,
        type="https://king.example/problems/illegal-action",
        code=v.code,
        rule=v.rule,
        message=v.message,
        strike=strike_out(exc.strike),
    )


def _simple(status: int, title: str) -> Any:
    def handler(_: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
        return problem(status, title, str(exc) or title)

    return handler


def _coded(status: int, title: str, slug: str) -> Any:
    """A refusal with a `type` URI and the exception's `code` (invitations)."""

    def handler(_: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
        return problem(
            status,
            title,
            str(exc) or title,
            type=f"https://king.example/problems/{slug}",
            code=getattr(exc, "code", slug.replace("-", "_")),
        )

    return handler


def _validation(_: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    errors = exc.extra if isinstance(exc.extra, list) else None
    clean = [e for e in errors or [] if isinstance(e, dict)]
    for e in clean:  # never echo the submitted value back (it may be anything)
        e.pop("value", None)
    return problem(400, "bad request", str(exc.detail), errors=clean or None)


def _http(_: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    response = problem(exc.status_code, _title(exc.status_code), str(exc.detail))
    if exc.headers:
        response.headers.update(exc.headers)
    return response


def _busy(code: str, detail: str) -> Any:
    """503 with Retry-After; the exception's own text is not sent (a store error may quote
    SQL), only a fixed reason."""

    def handler(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
        log.warning("busy", path=request.url.path, error=type(exc).__name__, code=code)
        response = problem(
            503,
            "service unavailable",
            detail,
            type="https://king.example/problems/busy",
            code=code,
        )
        response.headers["Retry-After"] = str(BUSY_RETRY_SECONDS)
        return response

    return handler


def _internal(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    log.error(
        "internal_error",
        path=request.url.path,
        error=type(exc).__name__,
        at=f"{where.filename}:{where.lineno}" if where else None,
    )
    return problem(500, "internal error", "the service failed to answer; it has been logged")


def _title(status: int) -> str:
    return {
        400: "bad request",
        401: "unauthorized",
        403: "forbidden",
        404: "not found",
        405: "method not allowed",
        409: "conflict",
        413: "request body too large",
        415: "unsupported media type",
        422: "unprocessable request",
        429: "too many requests",
        503: "service unavailable",
    }.get(status, "error")


EXCEPTION_HANDLERS: dict[Any, Any] = {
    IllegalAction: _illegal,
    BadRequest: _simple(400, "bad request"),
    TableError: _simple(400, "bad table"),
    BadBotUrl: _simple(400, "bad bot URL"),
    Forbidden: _simple(403, "forbidden"),
    GameNotFound: _simple(404, "not found"),
    # A stored game that does not replay: its own requests say so; nothing else depends on it.
    GameFailed: _simple(409, "game failed"),
    # An id no stream can have (too long, bad characters) names nothing that exists.
    InvalidStreamIdError: _simple(404, "not found"),
    InvalidEventError: _simple(400, "bad request"),
    PlayerNotFound: _simple(404, "not found"),
    InvitationNotFound: _coded(404, "not found", "invitation-not-found"),
    InvitationClosed: _coded(409, "invitation closed", "invitation-closed"),
    InvitationsPending: _coded(409, "invitations pending", "invitations-pending"),
    TableCancelled: _coded(409, "table cancelled", "table-cancelled"),
    Conflict: _simple(409, "conflict"),
    PlayerExists: _simple(409, "conflict"),
    GameBusy: _busy(
        "game_busy", "the game kept changing while this request was decided; send it again"
    ),
    StoreBusy: _busy("store_busy", "the database is busy; send the request again"),
    StoreUnavailable: _busy(
        "store_unavailable", "the database cannot be reached right now; send the request again"
    ),
    ValidationException: _validation,
    HTTPException: _http,
    Exception: _internal,
}
