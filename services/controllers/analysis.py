"""The analysis of ended deals: each card's cost against the open-hand solver, each declaration
against the expert (docs/ANALYSIS.md). Public: an ended deal's hands are public already."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, get
from litestar.params import FromPath, Parameter

from services.analysis import AnalysisService
from services.api_types import GameAnalysis
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


class AnalysisController(Controller):
    path = "/api/v1/games"
    tags = ("games",)

    @get(
        "/{game_id:str}/analysis",
        responses={
            200: answer(GameAnalysis, "the analysis of every ended deal"),
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
        Each deal is computed once (a few seconds, with the solver's node budget) and kept;
        a strong ETag (`If-None-Match` gets 304)."""
        body = await analysis_service(request, services).analysis(game_id)
        return cached_json(request, body, final=False)

    @get(
        "/{game_id:str}/deals/{deal:int}/analysis",
        responses={
            200: answer(GameAnalysis, "the analysis of the deal (every attempt that ended)"),
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
        about a live deal is ever analysed. A deal beyond the game's is 404."""
        body = await analysis_service(request, services).analysis(game_id, deal)
        return cached_json(request, body, final=False)
