"""The analysis of a stored game's ended deals for the HTTP API: computed in a worker process,
one deal at a time, and kept per (game, deal, attempt, version) so a repeat costs nothing.

Analyses are kept in the database (services.analysis_store), so every process of a deployment
computes a deal once, and in memory (the newest `KEPT`) so a repeat costs no query.

Solving is CPU work that holds the interpreter lock: in a thread of the service it would slow
every other request, so it runs in one spawned worker process. A request waits at most
`WAIT_SECONDS` for the deals it asks for; when they are not all done it is answered
`AnalysisPending` (HTTP 202 with `Retry-After`) and the work goes on, so asking again later
gets the analysis. An ended deal never changes, so its analysis is computed once per analysis
version, solver model, node budget and contract model; requests for a deal being computed wait
for that one computation.

Only deals whose `deal_ended` is stored are ever analysed (tournament.analysis): a deal in play
is refused by name (`DealNotEnded`, 409), whoever asks.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from domain.events import Event
from domain.game import GameState, InconsistentEvent
from services.analysis_store import AnalysisStore, key_hash
from services.observability import error_fields, get_logger
from services.play.errors import Conflict
from tournament.analysis import (
    ANALYSIS_VERSION,
    CONTRACT_SAMPLES,
    EndedDeal,
    analyse_deal,
    deal_not_ended,
    default_evaluator,
    default_solver,
    ended_deals,
    select,
)
from tournament.games import GameFailed, GameNotFound, GameRepository, to_domain_event

log = get_logger("king.analysis")

NODE_BUDGET = 5_000
"""The solver's nodes per position for the service: a deal takes 5-10 s (docs/ANALYSIS.md)."""
WAIT_SECONDS = 1.5
"""How long a request waits for its deals before it is answered 202 (the work goes on)."""
RETRY_SECONDS = 5
KEPT = 512  # deal analyses kept in memory


class DealNotEnded(Conflict):
    """A deal that is in play or not played yet: it has no analysis (HTTP 409)."""

    code = "deal_not_ended"


@dataclass(frozen=True, slots=True)
class Pending:
    """The deals asked for are being analysed: `done` of `total` are ready."""

    game_id: str
    done: int
    total: int


Key = tuple[object, ...]


def analyse_in_worker(
    ended: EndedDeal, node_budget: int | None, contract_samples: int = CONTRACT_SAMPLES
) -> dict[str, Any]:
    """One deal's analysis (the worker process's task)."""
    solver = default_solver(node_budget=node_budget)
    return analyse_deal(ended, solver, default_evaluator(contract_samples)).to_dict()


def _start_worker(parent: int) -> None:
    """In the worker: yield the CPU to the service's own work (answers, live games), and end
    when the service does, however it ended (a killed service leaves no solver running)."""
    with contextlib.suppress(OSError):
        os.nice(10)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _spawned_pool() -> Executor:
    # Spawned, not forked: the service runs threads, and a fork copies their locks mid-use.
    context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(
        1, mp_context=context, initializer=_start_worker, initargs=(os.getpid(),)
    )


def stop_pool(pool: Executor) -> None:
    """Drop the queued work and end the worker now, abandoning a deal it is solving (asked
    again, it is computed again). `shutdown` alone lets the solve finish, and the process
    cannot exit before: a stopping service waited half a minute and more for a deal at its
    default budget, in a worker that runs at a low priority."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14 and later
    if terminate is not None:
        terminate()
        return
    # Before 3.14, the executor's own map of its workers (a private attribute), taken before
    # `shutdown` lets go of it.
    processes = list(dict(getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()


class AnalysisService:
    """Per app: the cache of deal analyses and the worker that computes them."""

    def __init__(
        self,
        repo: GameRepository,
        node_budget: int | None = None,
        contract_samples: int | None = None,
    ) -> None:
        self.repo = repo
        self.stored = AnalysisStore(repo.store.engines.write)
        self.node_budget = NODE_BUDGET if node_budget is None else node_budget
        self.contract_samples = CONTRACT_SAMPLES if contract_samples is None else contract_samples
        self._kept: OrderedDict[Key, dict[str, Any]] = OrderedDict()
        self._running: dict[Key, asyncio.Future[dict[str, Any]]] = {}
        self._saving: set[asyncio.Future[None]] = set()  # writes in flight (kept referenced)
        self._pool: Executor | None = None
        self.computed = 0  # deal analyses computed (not served from the cache)

    def close(self) -> None:
        """Stop the worker at once (see `stop_pool`)."""
        if self._pool is not None:
            stop_pool(self._pool)
            self._pool = None

    def _events(self, game_id: str) -> tuple[GameState, list[EndedDeal]]:
        recorded = self.repo.events(game_id)
        if not recorded:
            raise GameNotFound(f"no game {game_id!r}")
        events: Sequence[Event] = [to_domain_event(r) for r in recorded]
        try:
            return ended_deals(events)
        except InconsistentEvent as exc:
            raise GameFailed(game_id, str(exc)) from None

    async def analysis(self, game_id: str, deal: int | None = None) -> dict[str, Any] | Pending:
        """The analysis document (tournament.analysis.GameAnalysis.to_dict) of the game's ended
        deals, or of deal `deal` only, or Pending while they are computed. DealNotEnded when
        that deal has not ended; GameNotFound when the game has no such deal."""
        state, deals = await asyncio.to_thread(self._events, game_id)
        chosen = select(deals, deal)
        if deal is not None and not chosen:
            why = deal_not_ended(state, deal)
            if deal > state.rules.deals:
                raise GameNotFound(why)
            raise DealNotEnded(why)
        solver = default_solver(node_budget=self.node_budget)
        evaluate = default_evaluator(self.contract_samples)
        keys = [self._key(game_id, e, solver.model, evaluate.model) for e in chosen]
        if any(k not in self._kept for k in keys):
            await asyncio.to_thread(self._recall, game_id, keys)
        waits = [self._start(k, e) for k, e in zip(keys, chosen, strict=True)]
        running = [w for w in waits if w is not None]
        if running:
            await asyncio.wait(running, timeout=WAIT_SECONDS)
        if any(not w.done() for w in running):
            ready = sum(1 for w in waits if w is None or w.done())
            return Pending(game_id, ready, len(chosen))
        for w in running:
            w.result()  # a failure of the worker is this request's too
        done = [self._kept[k] for k in keys]
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

    def _recall(self, game_id: str, keys: list[Key]) -> None:
        """Keep in memory what another process (or this one, before a restart) computed of
        these keys' deals: only those not kept already are read."""
        missing = {key_hash(key): key for key in keys if key not in self._kept}
        try:
            stored = self.stored.read(list(missing))
        except Exception as exc:  # computed again rather than not answered
            log.warning("analysis_store_unavailable", game_id=game_id, **error_fields(exc))
            return
        for row_key, key in missing.items():
            found = stored.get(row_key)
            if found is not None and key not in self._kept:
                self._keep(key, found)

    def _keep(self, key: Key, analysis: dict[str, Any]) -> None:
        self._kept[key] = analysis
        while len(self._kept) > KEPT:
            self._kept.popitem(last=False)

    def _save(self, key: Key, analysis: dict[str, Any]) -> None:
        try:
            self.stored.save(key_hash(key), str(key[0]), analysis)
        except Exception as exc:  # still kept in memory; the next process computes it again
            log.warning("analysis_not_stored", game_id=key[0], **error_fields(exc))

    def _key(self, game_id: str, ended: EndedDeal, model: str, contract_model: str) -> Key:
        d = ended.done
        return (
            game_id,
            d.deal,
            d.attempt,
            ended.version,
            ANALYSIS_VERSION,
            model,
            self.node_budget,
            contract_model,
            self.contract_samples,
        )

    def _start(self, key: Key, ended: EndedDeal) -> asyncio.Future[dict[str, Any]] | None:
        """None when the deal's analysis is kept; else its computation (started if need be)."""
        if key in self._kept:
            self._kept.move_to_end(key)
            return None
        running = self._running.get(key)
        if running is not None:
            return running
        if self._pool is None:
            self._pool = _spawned_pool()
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(
            self._pool, analyse_in_worker, ended, self.node_budget, self.contract_samples
        )
        self._running[key] = future

        def finished(f: asyncio.Future[dict[str, Any]]) -> None:
            del self._running[key]
            if f.cancelled() or f.exception() is not None:
                return  # asked again, it is computed again
            self.computed += 1
            self._keep(key, f.result())
            saving = loop.run_in_executor(None, self._save, key, f.result())
            self._saving.add(saving)
            saving.add_done_callback(self._saving.discard)

        future.add_done_callback(finished)
        return future
