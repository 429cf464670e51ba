"""A seat's WebSocket: its stream and its actions on one connection.

`GET /api/v1/games/{game_id}/seats/{seat}/ws` (a WebSocket upgrade) sends the seat's stream,
each message one text frame exactly as the NDJSON stream writes it (`?after=`, `?only=turns`
as there), and takes actions as frames: `{"action": <the body of POST /actions>, "ref":
<any short string, echoed>}`. Each action frame gets one answer frame: `accepted` (its `data`
as POST /actions answers with `Prefer: return=minimal`) or `problem` (its `data` the problem
details POST /actions would answer, status and code included). A bot that acts on every turn
saves an HTTP request per action: the request's parsing, routing and answer were about a
quarter of the service's CPU per action (docs/BENCHMARKS.md).

Authentication is the bearer token of the upgrade request, never the web session cookie: a
browser sends cookies with a cross-site WebSocket upgrade, and no CORS check stops it, so a
cookie would let any page act for a logged-in player. A refused upgrade is answered over HTTP
with problem details (401, 403, 404, 400, 429) where the server can (the ASGI
`websocket.http.response` extension; uvicorn can), else closed with 4000 + the status.
Opening a socket and every frame a bot sends draw on the token's rate-limit bucket, as
requests would.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from typing import Any

import msgspec
import orjson
from litestar import WebSocket, websocket
from litestar.exceptions import TooManyRequestsException, WebSocketDisconnect
from litestar.params import FromPath
from litestar.types.asgi_types import WebSocketResponseBodyEvent, WebSocketResponseStartEvent

from services.container import Services
from services.controllers.deps import ServicesDep, bearer_principal, hold_seat
from services.controllers.games import act_and_answer, action_of
from services.identity import Principal
from services.observability import get_logger
from services.play.errors import Forbidden
from services.play.streams import StreamOptions, game_batches
from services.problems import (
    PROBLEM_JSON,
    BadRequest,
    render,
)
from services.ratelimit.buckets import Buckets
from services.schemas import ActionIn

PATH = "/api/v1/games/{game_id:str}/seats/{seat:int}/ws"
MAX_REF = 64  # characters of a frame's `ref` echoed back
DENIAL = "websocket.http.response"
log = get_logger("king.socket")


class RateLimited(TooManyRequestsException):
    """Over the token's rate limit (429, with Retry-After, as the HTTP limiter answers)."""


async def draw(socket: WebSocket[Any, Any, Any], principal: Principal) -> None:
    """Take one request's worth from the token's bucket (the one its HTTP requests draw on).
    RateLimited when it is empty."""
    buckets: Buckets | None = socket.app.state.get("rate_limits")
    if buckets is None:
        return
    wait, _ = await buckets.draw("t:" + principal.token_key)
    if wait > 0:
        retry = max(1, math.ceil(wait))
        raise RateLimited(
            f"over the token's rate limit: retry in {retry} s", headers={"Retry-After": str(retry)}
        )


class ActionFrame(msgspec.Struct, forbid_unknown_fields=True):
    """What a client sends: an action, and a reference of its own to match the answer."""

    action: ActionIn
    ref: str | None = None


_decode_frame = msgspec.json.Decoder(ActionFrame).decode


def frame(kind: str, ref: str | None, data: bytes) -> bytes:
    """An answer frame: `{"type", "ref", "data"}` around already-encoded `data`."""
    return b'{"type":"%s","ref":%s,"data":%s}' % (kind.encode(), orjson.dumps(ref), data)


def query_options(socket: WebSocket[Any, Any, Any], services: Services) -> StreamOptions:
    """The stream's options from the upgrade's query (`after`, `only`); BadRequest if wrong."""
    query = socket.query_params
    unknown = set(query) - {"after", "only"}
    if unknown:
        name = sorted(unknown)[0][:40]
        raise BadRequest(f"unknown query parameter {name!r}: after and only exist")
    after_text = query.get("after", "0")
    if not after_text.isdigit() or len(after_text) > 10:
        raise BadRequest("after must be an event id (a version number)")
    only = query.get("only")
    if only not in (None, "turns"):
        raise BadRequest("only must be turns")
    s = services.settings
    return StreamOptions(
        fmt="ndjson",
        after=int(after_text),
        follow=True,
        poll_seconds=s.poll_seconds,
        keepalive_seconds=s.stream_keepalive_seconds,
        turns_only=only == "turns",
    )


async def deny(socket: WebSocket[Any, Any, Any], exc: Exception) -> None:
    """Refuse the upgrade with the problem details the app gives `exc` (over HTTP when the
    server supports it, else a close code of 4000 + status)."""
    status, content, headers = problem_of(socket, exc)
    if socket.connection_state == "init":
        await socket.receive()  # the client's connect
    if DENIAL in (socket.scope.get("extensions") or {}):
        extra = [(k.lower().encode(), str(v).encode()) for k, v in headers.items()]
        start: WebSocketResponseStartEvent = {
            "type": "websocket.http.response.start",
            "status": status,
            "headers": [
                (b"content-type", PROBLEM_JSON.encode()),
                (b"content-length", str(len(content)).encode()),
                *extra,
            ],
        }
        await socket.send(start)
        body: WebSocketResponseBodyEvent = {
            "type": "websocket.http.response.body",
            "body": content,
            "more_body": False,
        }
        await socket.send(body)
        return
    detail = getattr(exc, "detail", None) or str(exc)
    reason = detail.encode()[:120].decode(errors="ignore")  # a close reason: 123 bytes at most
    await socket.close(code=4000 + status, reason=reason)


async def admit(
    socket: WebSocket[Any, Any, Any], services: Services, game_id: str, seat: int
) -> tuple[Principal, StreamOptions]:
    """Who may open this seat's socket: its seat's own token, able to act."""
    options = query_options(socket, services)
    principal = await bearer_principal(socket, services)
    if principal.player_id is None:
        raise Forbidden("the admin token holds no seat: connect with the player's token")
    await hold_seat(services, game_id, seat, principal)
    return principal, options


@websocket(PATH)
async def seat_socket(
    socket: WebSocket[Any, Any, Any],
    game_id: FromPath[str],
    seat: FromPath[int],
    services: ServicesDep,
) -> None:
    """The seat's stream and its actions on one WebSocket (docs/API.md, "Seat sockets")."""
    try:
        principal, options = await admit(socket, services, game_id, seat)
        await draw(socket, principal)
    except Exception as exc:  # refused (401, 403, 404, 400, 429), or the app's 409 or 503
        await deny(socket, exc)
        return
    await socket.accept()
    metrics = services.metrics
    sending = asyncio.Lock()
    closed = False  # the pump has closed the socket: an answer finished later is not sent

    async def send(data: bytes) -> None:
        async with sending:
            if not closed:
                await socket.send({"type": "websocket.send", "bytes": None, "text": data.decode()})

    async def pump() -> None:
        nonlocal closed
        code, reason = 1000, "the stream has ended"  # the game is over, or the seat handed on
        try:
            async for batch in game_batches(services.games, game_id, seat, options):
                for message in batch:  # NDJSON lines: one frame each, without the newline
                    await send(message[:-1])
        except (WebSocketDisconnect, OSError):
            return
        except Exception as exc:  # a game that no longer loads, a store gone: say so, end
            log.error("socket_stream_failed", game_id=game_id, error=type(exc).__name__)
            code, reason = 1011, "the stream failed; reconnect with ?after= to resume"
        async with sending:
            closed = True
            with contextlib.suppress(WebSocketDisconnect, OSError):
                await socket.close(code=code, reason=reason)

    pumping = asyncio.create_task(pump())
    metrics.sockets_open.inc()
    try:
        while True:
            event = await socket.receive()
            if event["type"] == "websocket.disconnect":
                break
            text = event.get("text")
            if isinstance(text, str):
                status, reply = await answer(socket, services, principal, game_id, seat, text)
            else:
                status, reply = refusal(socket, None, BadRequest("send actions as text frames"))
            metrics.socket_frames.labels(str(status)).inc()
            await send(reply)
    except (WebSocketDisconnect, OSError):
        pass  # the client went away: nothing more to send it
    finally:
        metrics.sockets_open.dec()
        pumping.cancel()
        await asyncio.gather(pumping, return_exceptions=True)


async def answer(
    socket: WebSocket[Any, Any, Any],
    services: Services,
    principal: Principal,
    game_id: str,
    seat: int,
    text: str,
) -> tuple[int, bytes]:
    """The status and answer frame of one action frame (never raises: every failure is a
    `problem`, with the status POST /actions would have answered)."""
    ref: str | None = None
    try:
        await draw(socket, principal)  # every frame, as every request: bad ones too
        try:
            received = _decode_frame(text)
        except msgspec.ValidationError as exc:
            ref = loose_ref(text)  # so the client can tell which of its frames this was
            raise BadRequest(f"not an action frame: {exc}") from None
        except msgspec.DecodeError:
            raise BadRequest("a frame must be one JSON object") from None
        ref = received.ref[:MAX_REF] if received.ref is not None else None
        body = received.action
        if body.seat is not None and body.seat != seat:
            raise Forbidden(f"this socket acts for seat {seat}, not {body.seat}")
        out = await act_and_answer(
            services, principal, game_id, seat, action_of(body), body.version, with_view=False
        )
        return 200, frame("accepted", ref, msgspec.json.encode(out))
    except Exception as exc:  # the problem the same action sent over HTTP would get
        return refusal(socket, ref, exc)


def loose_ref(text: str) -> str | None:
    """The `ref` of a frame that is JSON but no action frame, if it has a string one."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    ref = value.get("ref") if isinstance(value, dict) else None
    return ref[:MAX_REF] if isinstance(ref, str) else None


def problem_of(
    socket: WebSocket[Any, Any, Any], exc: Exception
) -> tuple[int, bytes, dict[str, str]]:
    """The status, problem details and headers the app answers `exc` with over HTTP (its own
    handlers: they read nothing of a request but its path, which a socket has)."""
    response = render(socket, exc)  # type: ignore[arg-type]
    content = response.content if isinstance(response.content, bytes) else b"{}"
    return response.status_code or 500, content, dict(response.headers)


def refusal(socket: WebSocket[Any, Any, Any], ref: str | None, exc: Exception) -> tuple[int, bytes]:
    status, content, _ = problem_of(socket, exc)
    return status, frame("problem", ref, content)
