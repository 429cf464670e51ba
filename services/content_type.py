"""The API takes bodies as JSON only, and exactly as the OpenAPI document describes them.

A body sent as anything else is refused (415) before a handler sees it, so it can never be
parsed as JSON by accident and never cost a strike. A JSON body is then checked strictly
against the handler's body type: Litestar converts bodies leniently (it would take `0` for a
boolean, `"3"` for a number), which would accept what the document says is invalid; the
strictly decoded value is the one the handler receives."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response
from litestar.handlers import HTTPRouteHandler
from litestar.utils.scope.state import ScopeState

from services.problems import problem

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def is_json(content_type: str) -> bool:
    """`application/json`, or a structured `application/*+json`, parameters allowed."""
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def _has_body(request: Request[Any, Any, Any]) -> bool:
    headers = request.headers
    length = headers.get("content-length")
    if length is not None:
        return length.strip() not in ("", "0")
    return "chunked" in headers.get("transfer-encoding", "").lower()


async def require_json(request: Request[Any, Any, Any]) -> Response[Any] | None:
    """Litestar `before_request`: a 415 problem for an API body that is not JSON."""
    if request.method not in BODY_METHODS or not request.url.path.startswith("/api/"):
        return None
    if not _has_body(request):
        return None
    if is_json(request.headers.get("content-type", "")):
        return await _strict(request)
    sent = request.headers.get("content-type", "").split(";", 1)[0].strip() or "none"
    return problem(
        415,
        "unsupported media type",
        f"the body must be JSON (Content-Type: application/json), not {sent[:80]}",
        kind="unsupported-media-type",
    )


def _body_type(handler: HTTPRouteHandler) -> Any:
    # Not cached here: the handler memoizes its parsed signature, and a cache keyed by handlers
    # kept every app that ever answered a body alive (each app has handlers of its own).
    data = handler.parsed_fn_signature.parameters.get("data")
    return None if data is None else data.annotation


def _integral(value: Any) -> Any:
    """JSON Schema counts 3.0 as an integer; msgspec's strict mode does not: whole floats
    become ints before the check (an int still fits a float field)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_integral(v) for v in value]
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    return value


async def _strict(request: Request[Any, Any, Any]) -> Response[Any] | None:
    """A 400 problem for a JSON body that does not fit its type exactly. A body that fits is
    decoded here once, strictly, and handed on: Litestar's own `request.json()` reads the
    value kept in the connection's state, and its conversion of a Struct instance into its own
    type is the instance itself, so the body is neither decoded nor converted a second time."""
    handler = request.route_handler
    body_type = _body_type(handler) if isinstance(handler, HTTPRouteHandler) else None
    if body_type is None:
        return None
    try:
        value = msgspec.convert(
            _integral(msgspec.json.decode(await request.body())), body_type, strict=True
        )
    except msgspec.ValidationError as exc:
        return problem(
            400,
            "bad request",
            f"the body does not fit the document: {exc}",
            code="invalid_request",
            errors=[{"message": str(exc), "key": "data", "source": "body"}],
        )
    except msgspec.DecodeError:
        return None  # not JSON at all: Litestar says so, as for any body
    ScopeState.from_scope(request.scope).json = value
    return None
