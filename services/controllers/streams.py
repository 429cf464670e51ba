"""Event streams: a game's public feed, a seat's feed, and a player's game notices."""

from dataclasses import replace
from typing import Annotated, Any, Literal

from litestar import Controller, Request, get
from litestar.params import FromPath, FromQuery, Parameter, QueryParameter
from litestar.response import Stream

from services.api_types import PlayerNotice, PublicGameMessage, SeatGameMessage
from services.controllers.deps import PrincipalDep, ServicesDep, hold_seat, own_player
from services.controllers.streaming import Format, resumable, stream_format, stream_response
from services.openapi import streamed
from services.play.streams import game_stream, player_stream


class StreamController(Controller):
    path = "/api/v1"
    tags = ("streams",)

    @get(
        "/games/{game_id:str}/events",
        media_type="text/event-stream",
        **streamed(PublicGameMessage, "the game's public events", 409),
    )
    async def game_events(
        self,
        request: Request[Any, Any, Any],
        game_id: FromPath[str],
        services: ServicesDep,
        after: Annotated[int | None, Parameter(ge=0, le=10**9)] = None,
        format: FromQuery[Format | None] = None,
        follow: FromQuery[bool] = True,
    ) -> Stream:
        """The game's public events (SSE, or NDJSON with `format=ndjson` or that Accept).

        Resumable: `Last-Event-ID` or `?after=<id>`. Live hands never appear; a deal's hands
        come with its `deal_ended`; the seed with `seed_revealed`, the last event.
        """
        await services.games.info(game_id)
        options = resumable(request, services.settings, format, after, follow)
        return stream_response(game_stream(services.games, game_id, None, options), options.fmt)

    @get(
        "/games/{game_id:str}/seats/{seat:int}/events",
        media_type="text/event-stream",
        **streamed(SeatGameMessage, "the seat's events and its turns", 403, 409),
    )
    async def seat_events(
        self,
        request: Request[Any, Any, Any],
        game_id: FromPath[str],
        seat: FromPath[int],
        services: ServicesDep,
        principal: PrincipalDep,
        after: Annotated[int | None, Parameter(ge=0, le=10**9)] = None,
        format: FromQuery[Format | None] = None,
        follow: FromQuery[bool] = True,
        only: Annotated[
            Literal["turns"] | None,
            QueryParameter(
                name="only",
                description="`turns`: only the seat's `your_turn` messages (each with the whole "
                "view), its own strikes and hand-over, `game_ended` and `seed_revealed`; what a "
                "bot needs, at a quarter of the messages",
            ),
        ] = None,
    ) -> Stream:
        """The seat's events: its own hand only, plus `your_turn` (view, legal, deadline).
        With `?only=turns`, only what a bot acts on (`your_turn`) and what ends its play."""
        await hold_seat(services, game_id, seat, principal)
        options = resumable(request, services.settings, format, after, follow)
        options = replace(options, turns_only=only == "turns")
        return stream_response(game_stream(services.games, game_id, seat, options), options.fmt)

    @get(
        "/me/events",
        media_type="text/event-stream",
        **streamed(PlayerNotice, "the player's game notices", 403),
    )
    async def my_events(
        self,
        request: Request[Any, Any, Any],
        services: ServicesDep,
        principal: PrincipalDep,
        format: FromQuery[Format | None] = None,
    ) -> Stream:
        """`game_started` and `game_over` notices for the token's player (pull bots start here).

        Each is `{"id": "<game_id>:started"|"<game_id>:over", "game_id", "type", "data":
        {"game_id", "player", "seats": [the seat numbers it holds], "players": [the four ids by
        seat]}}`; a game_over adds the result (docs/BOTS.md). Not resumable: a new stream
        announces every live game of the player again, with the same ids.
        """
        player = own_player(principal)
        fmt = stream_format(request, format)
        s = services.settings
        body = player_stream(
            services.games, player, fmt, s.poll_seconds, s.stream_keepalive_seconds
        )
        return stream_response(body, fmt)
