"""The game driver: one asyncio task per game this process owns, making every decision happen
in time.

For the seat to move it asks the house strategy, POSTs the view to a push bot, or waits for
a pull seat's action, each until the game's per-decision deadline; a time-out or a bad reply
is a strike (GameService). Which games it drives is decided by `play.ownership`: a game is
launched with the lease that makes this process its one owner, every write the driver makes
carries that lease as its fence, and a game whose lease is lost is dropped at once. A pull
seat's clock runs from the event that made it the seat's turn (so a takeover resumes it); a
push seat's from the moment its request is sent (a bot cannot answer before it is asked).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from domain.game import GameState, Phase
from domain.view import Action, BadAction, seat_view
from eventstore import Lease, LeaseLost, StoreBusy, StoreUnavailable
from services.bots.push import PushClient, PushReply
from services.observability import (
    Metrics,
    error_fields,
    get_logger,
    log_failure,
    safe_message,
    stack_trace,
)
from services.play.house import is_house
from services.play.live import LiveGames
from services.play.service import BAD_REPLY, TIMEOUT, GameService, Turn
from tournament.games import GameNotFound, stream_id

log = get_logger("king.driver")
SAFETY_POLLS = 5  # poll intervals between re-reads of a game that waits for a pull seat


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")


def decision_request(
    state: GameState, seat: int, turn: Turn, live: LiveGames | None = None
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
        "view": live.view_dict(view) if live is not None else view.to_dict(),
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
        self.fences: dict[str, Lease] = {}
        self.running = False
        # Told when a driven game is over or its lease turned out lost (play.ownership).
        self.on_over: list[Callable[[str], None]] = []
        self.on_lost: list[Callable[[str], None]] = []

    async def start(self) -> None:
        self.running = True

    async def stop(self) -> None:
        self.running = False
        tasks = list(self.tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.tasks.clear()
        self.fences.clear()
        self.metrics.live_games.set(0)

    def launch(self, game_id: str, lease: Lease | None = None) -> None:
        """Drive `game_id` under `lease` (None: unfenced, for a store that has one process);
        a game already driven only takes the renewed lease."""
        if lease is not None:
            self.fences[game_id] = lease
        if not self.running or game_id in self.tasks:
            return
        task = asyncio.get_running_loop().create_task(self._run(game_id), name=f"game:{game_id}")
        self.tasks[game_id] = task
        self.metrics.live_games.set(len(self.tasks))
        task.add_done_callback(lambda done: self._done(game_id, done))

    def drop(self, game_id: str) -> None:
        """Stop driving `game_id` now (its lease is lost or handed over)."""
        self.fences.pop(game_id, None)
        task = self.tasks.pop(game_id, None)
        if task is not None:
            task.cancel()
        self.metrics.live_games.set(len(self.tasks))

    def _done(self, game_id: str, task: asyncio.Task[None]) -> None:
        if self.tasks.get(game_id) is task:  # not a task launched since for the same game
            self.tasks.pop(game_id, None)
            self.fences.pop(game_id, None)
        self.metrics.live_games.set(len(self.tasks))

    async def _run(self, game_id: str) -> None:
        failures = 0
        while True:
            try:
                if await self._step(game_id):
                    for callback in self.on_over:
                        callback(game_id)
                    return
                failures = 0
            except asyncio.CancelledError:
                raise
            except LeaseLost:
                # Another process owns the game now (this one was paused or cut off past its
                # lease): nothing was written; stop at once.
                log.info("lease_lost", game_id=game_id)
                for callback in self.on_lost:
                    callback(game_id)
                return
            except GameNotFound:
                # Not a game of this service (its index has no row, as for the games a local
                # `king tournament run` plays on the same database): its own runner drives it.
                log.info("driver_skipped", game_id=game_id, reason="not in the games index")
                return
            except (StoreBusy, StoreUnavailable) as exc:
                # The database is away or busy for a moment (an outage, a pause): expected,
                # and nothing was written; the lease decides whether this process goes on.
                failures += 1
                log.warning("driver_waiting_for_database", game_id=game_id, **error_fields(exc))
                await asyncio.sleep(min(0.1 * 2**failures, 5.0))
            except Exception as exc:  # keep the game going: log, back off, try again
                failures += 1
                log_failure(log, "driver_error", exc, game_id=game_id)
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
            await games.live.wait(game_id, state.version, self.poll_seconds)
            return False
        owner = state.occupants[seat][-1]
        info = await games.info(game_id)  # also caches the game's time limit for the clock
        turn = await games.turn_for(game_id, state)
        assert turn is not None
        fence = self.fences.get(game_id)
        if is_house(owner):
            started = time.perf_counter()
            action = await games.commands.house_action(game_id, state, seat, owner)
            self.metrics.observe_decision("house", owner, time.perf_counter() - started)
            await games.commands.apply_decision(game_id, seat, state.version, action, owner, fence)
            return False
        player = await games.player(owner)
        if player is not None and player.bot_url:
            # The bot's clock starts with its request: a new owner asks again in full.
            asked = Turn(turn.seat, turn.version, time.time() + info.decision_seconds)
            await self._push(game_id, state, seat, owner, player.bot_url, asked, fence)
        else:
            await self._wait_for_pull(game_id, state, seat, turn, fence)
            # From the turn's start (its deadline less the time limit) to the move or time-out.
            started = turn.deadline - info.decision_seconds
            self.metrics.observe_decision("pull", owner, max(time.time() - started, 0.0))
        return False

    async def _push(
        self,
        game_id: str,
        state: GameState,
        seat: int,
        owner: str,
        url: str,
        turn: Turn,
        fence: Lease | None,
    ) -> None:
        body = orjson.dumps(decision_request(state, seat, turn, self.games.live))
        reply = await self.push.ask(url, body, turn.deadline - time.time())
        self.metrics.observe_decision("push", owner, reply.seconds)
        games = self.games
        if reply.failure is not None or reply.reply is None:
            reason = reply.failure or BAD_REPLY
            self.metrics.push_failures.labels(reply.code or reason).inc()
            self._log_push_failure(game_id, seat, owner, reply)
            await games.commands.strike_at(
                game_id, seat, state.version, reason, reply.detail, fence
            )
            return
        answer = reply.reply
        if answer.get("game_id", game_id) != game_id or answer.get("seat", seat) != seat:
            self.metrics.push_failures.labels("wrong_seat").inc()
            await games.commands.strike_at(
                game_id,
                seat,
                state.version,
                BAD_REPLY,
                "the reply names another game or seat",
                fence,
            )
            return
        try:
            action = Action.from_dict(answer.get("action"))
        except BadAction:
            self.metrics.push_failures.labels("bad_action").inc()
            await games.commands.strike_at(
                game_id, seat, state.version, BAD_REPLY, "no valid action", fence
            )
            return
        await games.commands.apply_decision(game_id, seat, state.version, action, owner, fence)

    @staticmethod
    def _log_push_failure(game_id: str, seat: int, owner: str, reply: PushReply) -> None:
        """One line per failed push request, at info (a bot's failure is no fault of the
        service): the kind of failure and, for a network error, its message where it can hold
        no card or token (`safe_message`); never the URL (a bot may keep a secret in it) nor
        the reply. The exception's stack trace at debug."""
        fields: dict[str, Any] = {"game_id": game_id, "seat": seat, "player": owner}
        fields["code"] = reply.code or reply.failure
        if reply.error is not None:
            fields["error"] = type(reply.error).__name__
            detail = safe_message(reply.error)
            if detail is not None:
                fields["detail"] = detail
            log.info("push_failed", **fields)
            log.debug("push_failed", **fields, trace=stack_trace(reply.error))
        else:
            log.info("push_failed", **fields)

    async def _wait_for_pull(
        self, game_id: str, state: GameState, seat: int, turn: Turn, fence: Lease | None
    ) -> None:
        games = self.games
        store = games.repo.store
        while True:
            remaining = turn.deadline - time.time()
            if remaining <= 0:
                await games.commands.strike_at(game_id, seat, state.version, TIMEOUT, "", fence)
                return
            # The feed watcher wakes this wait for a move posted to any process; the re-read
            # after a quiet interval is only a safety net, so it need not come often.
            quiet = self.poll_seconds * SAFETY_POLLS
            if await games.live.wait(game_id, state.version, min(remaining, quiet)):
                return
            version = await asyncio.to_thread(store.stream_version, stream_id(game_id))
            if version != state.version:
                games.live.told(game_id, version)  # the cached state is behind
                return
