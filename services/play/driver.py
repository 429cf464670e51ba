"""The game driver: one asyncio task per live game, making every decision happen in time.

For the seat to move it asks the house strategy, POSTs the view to a push bot, or waits for
a pull seat's action, each until the game's per-decision deadline; a time-out or a bad reply
is a strike (GameService). At start it resumes every live game of the games index, so a
restart loses nothing: the game is in the store, and the seat to move gets a fresh deadline.
Run one driver per database (the `king serve` that has `KING_RUN_DRIVER=true`).
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

import orjson

from domain.game import GameState, Phase
from domain.view import Action, BadAction, seat_view
from services.bots.push import PushClient
from services.observability import Metrics, error_fields, get_logger
from services.play.house import is_house
from services.play.service import BAD_REPLY, TIMEOUT, GameService, Turn
from services.play.views import ViewCache
from tournament.games import GameNotFound, stream_id

log = get_logger("king.driver")
SAFETY_POLLS = 5  # poll intervals between re-reads of a game that waits for a pull seat


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")


def decision_request(
    state: GameState, seat: int, turn: Turn, views: ViewCache | None = None
) -> dict[str, Any]:
    """What a push bot receives: the seat's view (own hand only), legal actions, deadline."""
    view = seat_view(state, seat)
    remaining = max(turn.deadline - time.time(), 0.0)
    return {
        "type": "decision",
        "game_id": state.game_id,
        "seat": seat,
        "version": state.version,
        "deadline": iso(turn.deadline),
        "deadline_ms": int(remaining * 1000),
        "legal": [a.to_dict() for a in view.legal],
        "view": views.to_dict(view) if views is not None else view.to_dict(),
    }


class GameDriver:
    def __init__(
        self, games: GameService, push: PushClient, metrics: Metrics, poll_seconds: float
    ) -> None:
        self.games = games
        self.push = push
        self.metrics = metrics
        self.poll_seconds = poll_seconds
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.running = False
        games.on_start.append(self.launch)

    async def start(self) -> None:
        self.running = True
        for game_id in await self.games.live_game_ids():
            self.launch(game_id)
        if self.tasks:
            log.info("driver_resumed", games=len(self.tasks))

    async def stop(self) -> None:
        self.running = False
        tasks = list(self.tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.tasks.clear()
        self.metrics.live_games.set(0)

    def launch(self, game_id: str) -> None:
        if not self.running or game_id in self.tasks:
            return
        task = asyncio.get_running_loop().create_task(self._run(game_id), name=f"game:{game_id}")
        self.tasks[game_id] = task
        self.metrics.live_games.set(len(self.tasks))
        task.add_done_callback(lambda _t: self._done(game_id))

    def _done(self, game_id: str) -> None:
        self.tasks.pop(game_id, None)
        self.metrics.live_games.set(len(self.tasks))

    async def _run(self, game_id: str) -> None:
        failures = 0
        while True:
            try:
                if await self._step(game_id):
                    return
                failures = 0
            except asyncio.CancelledError:
                raise
            except GameNotFound:
                # Not a game of this service (its index has no row, as for the games a local
                # `king tournament run` plays on the same database): its own runner drives it.
                log.info("driver_skipped", game_id=game_id, reason="not in the games index")
                return
            except Exception as exc:  # keep the game going: log, back off, try again
                failures += 1
                log.error("driver_error", game_id=game_id, **error_fields(exc))
                await asyncio.sleep(min(0.1 * 2**failures, 5.0))

    async def _step(self, game_id: str) -> bool:
        """Make (or wait for) one decision; True when the game is over."""
        games = self.games
        state = await games.load_fresh(game_id)
        if state.phase is Phase.OVER:
            await games.mark_over(game_id)
            return True
        seat = state.to_move
        if seat is None:
            await games.notifier.wait(game_id, state.version, self.poll_seconds)
            return False
        owner = state.occupants[seat][-1]
        info = await games.info(game_id)  # also caches the game's time limit for publish_turn
        turn = games.publish_turn(game_id, state)
        assert turn is not None
        if is_house(owner):
            started = time.perf_counter()
            action = await games.house_action(game_id, state, seat, owner)
            self.metrics.decision_seconds.labels("house", owner).observe(
                time.perf_counter() - started
            )
            await games.apply_decision(game_id, seat, state.version, action, owner)
            return False
        player = await games.player(owner)
        if player is not None and player.bot_url:
            await self._push(game_id, state, seat, owner, player.bot_url, turn)
        else:
            await self._wait_for_pull(game_id, state, seat, turn)
            # From the turn's start (its deadline less the time limit) to the move or time-out.
            started = turn.deadline - info.decision_seconds
            self.metrics.decision_seconds.labels("pull", owner).observe(
                max(time.time() - started, 0.0)
            )
        return False

    async def _push(
        self, game_id: str, state: GameState, seat: int, owner: str, url: str, turn: Turn
    ) -> None:
        body = orjson.dumps(decision_request(state, seat, turn, self.games.views))
        reply = await self.push.ask(url, body, turn.deadline - time.time())
        self.metrics.decision_seconds.labels("push", owner).observe(reply.seconds)
        games = self.games
        if reply.failure is not None or reply.reply is None:
            reason = reply.failure or BAD_REPLY
            self.metrics.push_failures.labels(reply.code or reason).inc()
            await games.strike_at(game_id, seat, state.version, reason, reply.detail)
            return
        answer = reply.reply
        if answer.get("game_id", game_id) != game_id or answer.get("seat", seat) != seat:
            self.metrics.push_failures.labels("wrong_seat").inc()
            await games.strike_at(
                game_id, seat, state.version, BAD_REPLY, "the reply names another game or seat"
            )
            return
        try:
            action = Action.from_dict(answer.get("action"))
        except BadAction:
            self.metrics.push_failures.labels("bad_action").inc()
            await games.strike_at(game_id, seat, state.version, BAD_REPLY, "no valid action")
            return
        await games.apply_decision(game_id, seat, state.version, action, owner)

    async def _wait_for_pull(self, game_id: str, state: GameState, seat: int, turn: Turn) -> None:
        games = self.games
        store = games.repo.store
        while True:
            remaining = turn.deadline - time.time()
            if remaining <= 0:
                await games.strike_at(game_id, seat, state.version, TIMEOUT)
                return
            # The feed watcher wakes this wait for a move posted to any process; the re-read
            # after a quiet interval is only a safety net, so it need not come often.
            quiet = self.poll_seconds * SAFETY_POLLS
            if await games.notifier.wait(game_id, state.version, min(remaining, quiet)):
                return
            version = await asyncio.to_thread(store.stream_version, stream_id(game_id))
            if version != state.version:
                games.notifier.notify(game_id, version)  # the cached state is behind
                return
