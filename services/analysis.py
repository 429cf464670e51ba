"""The analysis of a stored game's ended deals for the HTTP API: computed off the event loop,
one at a time, and kept per (game, deal, attempt, version) so a repeat costs nothing.

An ended deal never changes, so its analysis is computed once per analysis version, solver
model and node budget; concurrent requests for the same deal wait for the one computation.
Only deals whose `deal_ended` is stored are ever analysed (tournament.analysis): a deal in play
is refused by name (`DealNotEnded`, 409), whoever asks.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from domain.events import Event
from domain.game import GameState, InconsistentEvent
from services.play.errors import Conflict
from tournament.analysis import (
    ANALYSIS_VERSION,
    EndedDeal,
    analyse_deal,
    deal_not_ended,
    default_evaluator,
    default_solver,
    ended_deals,
    select,
)
from tournament.games import GameFailed, GameNotFound, GameRepository, to_domain_event

NODE_BUDGET = 5_000
"""The solver's nodes per position for the service: a deal takes 5-10 s (docs/ANALYSIS.md)."""
KEPT = 512  # deal analyses kept in memory


class DealNotEnded(Conflict):
    """A deal that is in play or not played yet: it has no analysis (HTTP 409)."""

    code = "deal_not_ended"


Key = tuple[object, ...]


class AnalysisService:
    """Per app: the cache of deal analyses and the one computation at a time."""

    def __init__(self, repo: GameRepository, node_budget: int | None = None) -> None:
        self.repo = repo
        self.node_budget = NODE_BUDGET if node_budget is None else node_budget
        self._kept: OrderedDict[Key, dict[str, Any]] = OrderedDict()
        self._running: dict[Key, asyncio.Future[dict[str, Any]]] = {}
        self._one_at_a_time = asyncio.Lock()
        self.computed = 0  # deal analyses computed (not served from the cache)

    def _events(self, game_id: str) -> tuple[GameState, list[EndedDeal]]:
        recorded = self.repo.events(game_id)
        if not recorded:
            raise GameNotFound(f"no game {game_id!r}")
        events: Sequence[Event] = [to_domain_event(r) for r in recorded]
        try:
            return ended_deals(events)
        except InconsistentEvent as exc:
            raise GameFailed(game_id, str(exc)) from None

    async def analysis(self, game_id: str, deal: int | None = None) -> dict[str, Any]:
        """The analysis document (tournament.analysis.GameAnalysis.to_dict) of the game's ended
        deals, or of deal `deal` only (DealNotEnded when it has not ended; GameNotFound when
        the game has no such deal)."""
        state, deals = await asyncio.to_thread(self._events, game_id)
        chosen = select(deals, deal)
        if deal is not None and not chosen:
            why = deal_not_ended(state, deal)
            if deal > state.rules.deals:
                raise GameNotFound(why)
            raise DealNotEnded(why)
        solver = default_solver(node_budget=self.node_budget)
        evaluate = default_evaluator()
        done = [await self._deal(game_id, ended, solver, evaluate) for ended in chosen]
        return {
            "game_id": state.game_id,
            "version": ANALYSIS_VERSION,
            "players": list(tuple(occ[-1] for occ in state.occupants) or state.players),
            "model": solver.model,
            "node_budget": solver.node_budget,
            "contract_model": evaluate.model,
            "exact": all(d["exact"] for d in done),
            "deals": done,
        }

    async def _deal(
        self, game_id: str, ended: EndedDeal, solver: Any, evaluate: Any
    ) -> dict[str, Any]:
        d = ended.done
        key: Key = (
            game_id,
            d.deal,
            d.attempt,
            ended.version,
            ANALYSIS_VERSION,
            solver.model,
            solver.node_budget,
            evaluate.model,
        )
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
            return kept
        running = self._running.get(key)
        if running is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._running[key] = future
        try:
            async with self._one_at_a_time:  # solves are CPU-bound: one at a time
                result = await asyncio.to_thread(
                    lambda: analyse_deal(ended, solver, evaluate).to_dict()
                )
            self.computed += 1
            self._kept[key] = result
            while len(self._kept) > KEPT:
                self._kept.popitem(last=False)
            future.set_result(result)
            return result
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: a failure nobody else awaited is not logged twice
            raise
        finally:
            del self._running[key]
