"""The analysis of ended deals: each card's cost against the open-hand solver, each declaration
against the expert (docs/ANALYSIS.md). Public: an ended deal's hands are public already."""

from typing import Annotated, Any

from litestar import Controller, MediaType, Request, Response, get
from litestar.params import FromPath, Parameter
from litestar.serialization import encode_json

from services.analysis import RETRY_SECONDS, AnalysisService, Pending
from services.api_types import AnalysisPending, GameAnalysis
from services.caching import cached_json
from services.container import Services
from services.controllers.deps import ServicesDep
from services.openapi import NOT_MODIFIED, answer, problems

STATE_KEY = "king_analysis"


def analysis_service(request: Request[Any, Any, Any], services: Services) -> AnalysisService:
    """The app's AnalysisService (one per app: apps in one process may use other databases)."""
    state = request.app.state
    found = state.get(STATE_KEY)
    if not isinstance(found, AnalysisService) or found.repo is not services.repo:
        found = AnalysisService(services.repo)
        state[STATE_KEY] = found
    return found


def close_analysis(state: Any) -> None:
    """Stop the app's analysis worker, if it has one (at the app's shutdown)."""
    found = state.get(STATE_KEY)
    if isinstance(found, AnalysisService):
        found.close()


def _answer(request: Request[Any, Any, Any], body: dict[str, Any] | Pending) -> Response[bytes]:
    if isinstance(body, Pending):
        pending = {"game_id": body.game_id, "status": "computing", "done": body.done}
        return Response(
            encode_json({**pending, "total": body.total}),
            status_code=202,
            media_type=MediaType.JSON,
            headers={"Retry-After": str(RETRY_SECONDS), "Cache-Control": "no-store"},
        )
    return cached_json(request, body, final=False)


PENDING = answer(AnalysisPending, "being computed: ask again after `Retry-After` seconds")


class AnalysisController(Controller):
    path = "/api/v1/games"
    tags = ("games",)

    @get(
        "/{game_id:str}/analysis",
        responses={
            200: answer(GameAnalysis, "the analysis of every ended deal"),
            202: PENDING,
            304: NOT_MODIFIED,
            **problems(409),
        },
    )
    async def get_analysis(
        self, request: Request[Any, Any, Any], game_id: FromPath[str], services: ServicesDep
    ) -> Response[bytes]:
        """Every ended deal's analysis: for each card played, the best card(s) and its cost
        in deal points; for each declaration, the expert's choice and its expected value.

        The deal in play (of a live game) is left out: it is analysed once it has ended.
        Each deal is computed once (5-10 s, in a worker process) and kept: a request waits a
        few seconds, then, while deals are still being computed, is answered 202 with
        `Retry-After` (the work goes on). A strong ETag (`If-None-Match` gets 304)."""
        return _answer(request, await analysis_service(request, services).analysis(game_id))

    @get(
        "/{game_id:str}/deals/{deal:int}/analysis",
        responses={
            200: answer(GameAnalysis, "the analysis of the deal (every attempt that ended)"),
            202: PENDING,
            304: NOT_MODIFIED,
            **problems(409),
        },
    )
    async def get_deal_analysis(
        self,
        request: Request[Any, Any, Any],
        game_id: FromPath[str],
        deal: Annotated[int, Parameter(ge=1, le=20, description="the deal number, 1-based")],
        services: ServicesDep,
    ) -> Response[bytes]:
        """One ended deal's analysis, in the shape of the game's (`deals` holds the deal).

        A deal in play, or not played yet, is refused (409, code `deal_not_ended`): nothing
        about a live deal is ever analysed. A deal beyond the game's is 404. 202 with
        `Retry-After` while the deal is being computed."""
        found = await analysis_service(request, services).analysis(game_id, deal)
        return _answer(request, found)
