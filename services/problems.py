"""Every error as JSON problem details (RFC 9457): a status, a title, a reason, a `type` (one
stable URI per kind of problem, listed in `KINDS`) and a machine-readable `code`.

400 is for a request that does not fit the OpenAPI document (malformed JSON, a missing or
mistyped field); 422 for one that fits it but is refused for what it asks (an illegal card, a
table seating one player twice): so a client can tell its own bug from a refusal.

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
from services.accounts import (
    BadName,
    BadScopes,
    BadVersion,
    LoginFailed,
    LoginThrottled,
    NameTaken,
    NotYours,
    TokenNotFound,
    WeakPassword,
)
from services.bots.urls import BadBotUrl
from services.idempotency import RETRY_SECONDS, KeyInProgress, KeyReused, MalformedKey
from services.identity import PlayerExists, PlayerNotFound
from services.lobby.errors import LobbyTableNotFound
from services.observability import current_request_id, get_logger
from services.play.invitations import (
    InvitationClosed,
    InvitationNotFound,
    InvitationsPending,
    TableCancelled,
)
from services.play.service import Conflict, Forbidden, StrikeInfo, TableError
from services.record_export import UnknownTournament
from services.record_import import (
    RecordIdTaken,
    RecordImportError,
    RecordNotJSON,
    RecordNotStorable,
    RecordRefused,
    RecordTooLarge,
)
from services.schemas import Problem, RecordProblem, StrikeOut
from tournament.games import GameBusy, GameFailed, GameNotFound

PROBLEM_JSON = "application/problem+json"
BUSY_RETRY_SECONDS = 1
PROBLEM_BASE = "https://king.example/problems/"
log = get_logger("king.http")

# Every kind of problem the API answers with: its slug (the `type` URI is PROBLEM_BASE + slug,
# its default `code` the slug with underscores), status and title. docs/API.md lists them;
# tests/service/test_openapi_document.py checks that the two agree.
KINDS: dict[str, tuple[int, str]] = {
    "bad-request": (400, "bad request"),
    "idempotency-key-malformed": (400, "bad request"),
    "unauthorized": (401, "unauthorized"),
    "forbidden": (403, "forbidden"),
    "not-found": (404, "not found"),
    "invitation-not-found": (404, "not found"),
    "method-not-allowed": (405, "method not allowed"),
    "conflict": (409, "conflict"),
    "game-failed": (409, "game failed"),
    "idempotency-key-in-progress": (409, "idempotency key in progress"),
    "invitation-closed": (409, "invitation closed"),
    "invitations-pending": (409, "invitations pending"),
    "table-cancelled": (409, "table cancelled"),
    "body-too-large": (413, "request body too large"),
    "unsupported-media-type": (415, "unsupported media type"),
    "unprocessable": (422, "unprocessable request"),
    "illegal-action": (422, "illegal action"),
    "bad-record": (400, "bad record"),
    "record-refused": (422, "record refused"),
    "bad-table": (422, "bad table"),
    "bad-bot-url": (422, "bad bot URL"),
    "idempotency-key-reused": (422, "idempotency key reused"),
    "rate-limited": (429, "too many requests"),
    "internal-error": (500, "internal error"),
    "busy": (503, "service unavailable"),
}
_BY_STATUS = {
    400: "bad-request",
    401: "unauthorized",
    403: "forbidden",
    404: "not-found",
    405: "method-not-allowed",
    409: "conflict",
    413: "body-too-large",
    415: "unsupported-media-type",
    422: "unprocessable",
    429: "rate-limited",
    500: "internal-error",
    503: "busy",
}


def kind_of(status: int) -> str:
    """The general kind of a status (`bad-request` for an unlisted 4xx, `internal-error` for
    an unlisted 5xx)."""
    return _BY_STATUS.get(status, "bad-request" if status < 500 else "internal-error")


def type_uri(kind: str) -> str:
    return PROBLEM_BASE + kind


class BadRequest(ValueError):
    """A request that does not fit the API's shapes though it passed validation (HTTP 400)."""


class Unprocessable(ValueError):
    """A well-formed request the service refuses for what it asks (HTTP 422)."""


class IllegalAction(Exception):
    """An action the rules refuse (HTTP 422), maybe with the strike it earned."""

    def __init__(self, violation: Violation, strike: StrikeInfo | None = None) -> None:
        super().__init__(violation.code)
        self.violation = violation
        self.strike = strike


def problem_body(
    status: int, title: str, detail: str, *, kind: str | None = None, **extra: Any
) -> Problem:
    """The problem of `kind` (by default the status's general kind), its `type` and `code`."""
    kind = kind or kind_of(status)
    extra.setdefault("code", kind.replace("-", "_"))
    extra.setdefault("request_id", current_request_id())
    return Problem(type=type_uri(kind), title=title, status=status, detail=detail, **extra)


def problem(
    status: int, title: str, detail: str, *, kind: str | None = None, **extra: Any
) -> Response[Any]:
    body = problem_body(status, title, detail, kind=kind, **extra)
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
        kind="illegal-action",
        code=v.code,
        rule=v.rule,
        message=v.message,
        strike=strike_out(exc.strike),
    )


def _record(kind: str) -> Any:
    """A record an import does not store: its `code`, and for a rule the checker's `rule`,
    `deal`, `play` and `message` (RECORD.md); the id when it is taken."""
    status, title = KINDS[kind]

    def handler(_: Request[Any, Any, Any], exc: RecordImportError) -> Response[Any]:
        extra: dict[str, Any] = {}
        if isinstance(exc, RecordRefused):
            e = exc.error
            extra = {"rule": e.get("rule"), "deal": e.get("deal"), "play": e.get("play")}
            extra["message"] = e.get("message")
        if isinstance(exc, RecordIdTaken):
            extra["game_id"] = exc.game_id
        body = RecordProblem(
            type=type_uri(kind),
            title=title,
            status=status,
            detail=str(exc) or title,
            code=exc.code,
            request_id=current_request_id(),
            **extra,
        )
        return Response(
            content=msgspec.json.encode(body), status_code=status, media_type=PROBLEM_JSON
        )

    return handler


def _kind(kind: str, code: str | None = None, retry: int | None = None) -> Any:
    """The handler answering an exception with a problem of `kind`: its `code` the one given
    (the idempotency key's refusals), else the exception's own `code` if it carries one (the
    invitations' refusals), else the kind's; `Retry-After: retry` when given."""
    status, title = KINDS[kind]

    def handler(_: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
        own = getattr(exc, "code", None)
        chosen = code or (own if isinstance(own, str) else None)
        extra = {"code": chosen} if chosen else {}
        response = problem(status, title, str(exc) or title, kind=kind, **extra)
        if retry is not None:
            response.headers["Retry-After"] = str(retry)
        return response

    return handler


def _throttled(_: Request[Any, Any, Any], exc: LoginThrottled) -> Response[Any]:
    response = problem(429, "too many requests", str(exc), kind="rate-limited", code=exc.code)
    response.headers["Retry-After"] = str(exc.retry)
    return response


def render(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """The answer the app gives `exc` (the handler of its nearest class), for a handler that
    keeps its answers (services.idempotency)."""
    for cls in type(exc).__mro__:
        handler = EXCEPTION_HANDLERS.get(cls)
        if handler is not None:
            response: Response[Any] = handler(request, exc)
            return response
    return _internal(request, exc)


def _validation(_: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    errors = exc.extra if isinstance(exc.extra, list) else None
    clean = [e for e in errors or [] if isinstance(e, dict)]
    for e in clean:  # never echo the submitted value back (it may be anything)
        e.pop("value", None)
    return problem(
        400, "bad request", str(exc.detail), code="invalid_request", errors=clean or None
    )


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
            kind="busy",
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
    return KINDS[kind_of(status)][1] if status in _BY_STATUS else "error"


EXCEPTION_HANDLERS: dict[Any, Any] = {
    IllegalAction: _illegal,
    BadRequest: _kind("bad-request"),
    Unprocessable: _kind("unprocessable"),
    TableError: _kind("bad-table"),
    BadBotUrl: _kind("bad-bot-url"),
    Forbidden: _kind("forbidden"),
    GameNotFound: _kind("not-found"),
    MalformedKey: _kind("idempotency-key-malformed", "bad_idempotency_key"),
    KeyReused: _kind("idempotency-key-reused", "idempotency_key_reused"),
    KeyInProgress: _kind(
        "idempotency-key-in-progress", "idempotency_key_in_progress", RETRY_SECONDS
    ),
    # A stored game that does not replay: its own requests say so; nothing else depends on it.
    GameFailed: _kind("game-failed"),
    # An id no stream can have (too long, bad characters) names nothing that exists.
    InvalidStreamIdError: _kind("not-found"),
    InvalidEventError: _kind("unprocessable"),
    PlayerNotFound: _kind("not-found"),
    InvitationNotFound: _kind("invitation-not-found"),
    LobbyTableNotFound: _kind("not-found"),
    InvitationClosed: _kind("invitation-closed"),
    InvitationsPending: _kind("invitations-pending"),
    TableCancelled: _kind("table-cancelled"),
    Conflict: _kind("conflict"),
    PlayerExists: _kind("conflict"),
    BadName: _kind("unprocessable"),
    WeakPassword: _kind("unprocessable"),
    BadScopes: _kind("unprocessable"),
    BadVersion: _kind("unprocessable"),
    NameTaken: _kind("conflict"),
    LoginFailed: _kind("unauthorized"),
    LoginThrottled: _throttled,
    NotYours: _kind("forbidden"),
    TokenNotFound: _kind("not-found"),
    RecordImportError: _record("record-refused"),
    RecordNotJSON: _record("bad-record"),
    RecordTooLarge: _record("body-too-large"),
    RecordRefused: _record("record-refused"),
    RecordNotStorable: _record("record-refused"),
    RecordIdTaken: _record("conflict"),
    UnknownTournament: _kind("not-found"),
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
