"""Commands on live games: actions sent over HTTP, bots' decisions, strikes and forfeits.

Every write goes through `GameRepository.execute`, one command at a time per game (an asyncio
lock per game in this process), so a late action and the driver's default move never both
land; across processes the owner's lease fences the driver's writes. On SQLite the unfenced
writes of different games that wait together are committed together (`execute_group`). The
repository's work (the store, the rules core) runs on the commands' own threads (`handoff`),
called from here and nowhere deeper: the threads never call back into the event loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial

from domain.commands import Abandon, Command, RecordStrike, Substitute
from domain.game import GameState, Phase, decide
from domain.view import Action, seat_view
from domain.violations import Violation
from eventstore import Lease
from services.identity import Principal
from services.observability import Metrics, get_logger
from services.play.clock import GameClock
from services.play.errors import Conflict, Forbidden
from services.play.handoff import Handoff
from services.play.house import HouseBots, house_owner, is_house
from services.play.live import LiveGames
from services.settings import Settings
from tournament.games import GameRepository, Outcome, Request

# Strike reasons as stored (public): never a card, never a bot's reply.
TIMEOUT = "timeout"
ILLEGAL = "illegal_action"
BAD_REPLY = "bad_reply"
UNREACHABLE = "unreachable"

log = get_logger("king.games")


@dataclass(frozen=True, slots=True)
class StrikeInfo:
    seat: int
    reason: str
    count: int
    forfeited: bool
    default_action: dict[str, str] | None


@dataclass(frozen=True, slots=True)
class ActResult:
    state: GameState
    seat: int
    violation: Violation | None = None
    strike: StrikeInfo | None = None


def seats_of(state: GameState, player_id: str | None) -> list[int]:
    """The seats a player occupies now (a forfeited player holds none)."""
    if player_id is None:
        return []
    return [s for s in range(4) if state.occupants and state.occupants[s][-1] == player_id]


class GameCommands:
    def __init__(
        self,
        repo: GameRepository,
        live: LiveGames,
        clock: GameClock,
        settings: Settings,
        metrics: Metrics,
        on_over: Callable[[str], Awaitable[None]],
        handoff: Handoff,
    ) -> None:
        self.repo = repo
        self.live = live
        self.clock = clock
        self.settings = settings
        self.metrics = metrics
        self.on_over = on_over  # a game's last event was appended here
        self.handoff = handoff  # the threads the commands' store work runs on
        self.house = HouseBots()
        self._locks: dict[str, asyncio.Lock] = {}

    def lock(self, game_id: str) -> asyncio.Lock:
        lock = self._locks.get(game_id)
        if lock is None:
            lock = self._locks[game_id] = asyncio.Lock()
        return lock

    def forget(self, game_id: str) -> None:
        self._locks.pop(game_id, None)
        self.house.forget(game_id)

    async def load(self, game_id: str) -> GameState:
        """The stored state (read through the live cache, which keeps it)."""
        state, records, events = await asyncio.to_thread(self.repo.load_news, game_id)
        # What was read extends the tail; when another process wrote and the feed has not
        # said so yet, waiters here see the news now.
        self.live.record(game_id, records, state, events)
        return state

    async def load_fresh(self, game_id: str) -> GameState:
        """The live cache's state when nothing newer is known, else a load. Only for checks
        before a command: the command itself decides on the stored state."""
        state = self.live.state(game_id)
        return state if state is not None else await self.load(game_id)

    async def _execute(
        self,
        game_id: str,
        command: Command | list[Command],
        *,
        at_version: int | None = None,
        fence: Lease | None = None,
    ) -> Outcome:
        start = time.perf_counter()
        known = self.live.version(game_id) or None
        if fence is None and self.handoff.group is not None:
            # Committed with the other games' appends waiting beside it (group commit).
            # (run_grouped raises a request's exception here, else gives its Outcome)
            outcome: Outcome = await self.handoff.run_grouped(
                Request(game_id, command, known, at_version)
            )
        else:
            outcome = await self.handoff.run(
                partial(
                    self.repo.execute, game_id, command, known, at_version=at_version, fence=fence
                )
            )
        self.metrics.action_seconds.observe(time.perf_counter() - start)
        if outcome.events:
            self.metrics.appends.inc(len(outcome.events))
            self.live.record(game_id, outcome.recorded, outcome.state, outcome.events)
            self.clock.publish(game_id, outcome.state)
            if outcome.state.phase is Phase.OVER:
                await self.on_over(game_id)
        elif outcome.violation is not None:
            self.metrics.rejections.labels(outcome.violation.code).inc()
        return outcome

    async def act(
        self,
        principal: Principal,
        game_id: str,
        seat: int | None,
        action: Action,
        expected_version: int | None = None,
    ) -> ActResult:
        """An action sent over HTTP by the seat's own token (pull bots, people)."""
        if principal.player_id is None:
            raise Forbidden("the admin token holds no seat: act with the player's token")
        async with self.lock(game_id):
            state = await self.load_fresh(game_id)
            behind = expected_version is not None and expected_version != state.version
            if behind or state.to_move not in seats_of(state, principal.player_id):
                # Before refusing, make sure the state is not this process's cache lagging
                # behind a write by another process.
                state = await self.load(game_id)
            mine = seats_of(state, principal.player_id)
            if seat is None:
                if not mine:
                    raise Forbidden("this token holds no seat in this game")
                seat = state.to_move if state.to_move in mine else mine[0]
            if seat not in mine:
                raise Forbidden(f"this token does not hold seat {seat}")
            if expected_version is not None and expected_version != state.version:
                raise Conflict(
                    f"the game is at version {state.version}, not {expected_version}: "
                    "read the new state and decide again"
                )
            if state.to_move != seat:  # refused without a strike: not this seat's decision
                refused = decide(state, action.command(seat))
                if not isinstance(refused, Violation):
                    raise Conflict("the game is between decisions: try again")
                self.metrics.rejections.labels(refused.code).inc()
                return ActResult(state, seat, refused)
            outcome = await self._execute(game_id, action.command(seat))
            if outcome.violation is None:
                return ActResult(outcome.state, seat)
            strike = await self._strike(
                game_id, outcome.state, seat, ILLEGAL, outcome.violation.code
            )
            return ActResult(await self.load(game_id), seat, outcome.violation, strike)

    async def apply_decision(
        self,
        game_id: str,
        seat: int,
        version: int,
        action: Action,
        owner: str,
        fence: Lease | None = None,
    ) -> ActResult | None:
        """A house or push bot's action, asked at `version` (None if the game moved on).
        `fence`: the driving process's lease on the game (nothing is written without it)."""
        async with self.lock(game_id):
            # The cached state when current: `at_version` makes the command decide on the
            # stored state if not, and the append refuses a stale version anyway.
            state = await self.load_fresh(game_id)
            if state.version != version or state.to_move != seat:
                return None
            outcome = await self._execute(
                game_id, action.command(seat), at_version=version, fence=fence
            )
            if outcome.stale:
                return None
            if outcome.violation is None:
                return ActResult(outcome.state, seat)
            refused = outcome.violation
            if is_house(owner):  # a house bot never plays illegally: play the first legal
                fallback = seat_view(outcome.state, seat).legal[0]
                outcome = await self._execute(
                    game_id, fallback.command(seat), at_version=version, fence=fence
                )
                return ActResult(outcome.state, seat, refused)
            strike = await self._strike(
                game_id, outcome.state, seat, ILLEGAL, refused.code, fence=fence
            )
            return ActResult(await self.load(game_id), seat, refused, strike)

    async def strike_at(
        self,
        game_id: str,
        seat: int,
        version: int,
        reason: str,
        detail: str = "",
        fence: Lease | None = None,
    ) -> StrikeInfo | None:
        """A time-out or a bad reply for the decision asked at `version` (None: the game has
        moved on, so there is nothing to strike)."""
        async with self.lock(game_id):
            state = await self.load(game_id)
            if state.version != version or state.to_move != seat:
                return None
            return await self._strike(game_id, state, seat, reason, detail, fence=fence)

    async def _strike(
        self,
        game_id: str,
        state: GameState,
        seat: int,
        reason: str,
        detail: str,
        fence: Lease | None = None,
    ) -> StrikeInfo | None:
        """Record a strike with what follows it: at the limit the seat's forfeit to a house
        bot, else the default move (lock held).

        All of it is one append decided at `state`'s version: a move landing in between (a
        late action, another process) makes it stale instead of doubling a strike or playing
        for a seat that has moved, and no reader or crash ever sees a strike without its
        sequel. None: the strike was stale."""
        count = state.strikes[seat] + 1
        substitute = house_owner(self.settings.house_strategy)
        forfeit = count >= self.settings.max_strikes
        strike = RecordStrike(seat, reason)
        action: Action | None = None
        if forfeit:
            commands: list[Command] = [
                strike,
                Abandon(seat, "strikes"),
                Substitute(seat, substitute),
            ]
        else:
            # The strike changes nothing a bot decides on: choose on the state before it.
            view = seat_view(state, seat)
            action = await asyncio.to_thread(self.house.choose, game_id, seat, substitute, view)
            commands = [strike, action.command(seat)]
        outcome = await self._execute(game_id, commands, at_version=state.version, fence=fence)
        if outcome.stale or outcome.violation is not None:
            return None
        self.metrics.strikes.labels(reason).inc()
        player = state.occupants[seat][-1]
        log.warning(
            "strike",
            game_id=game_id,
            seat=seat,
            player=player,
            reason=reason,
            detail=detail,
            count=count,
        )
        if forfeit:
            self.metrics.forfeits.inc()
            log.warning("forfeit", game_id=game_id, seat=seat, player=player, substitute=substitute)
        default = action.to_dict() if action is not None else None
        return StrikeInfo(seat, reason, count, forfeit, default)

    async def house_action(self, game_id: str, state: GameState, seat: int, owner: str) -> Action:
        view = seat_view(state, seat)
        return await asyncio.to_thread(self.house.choose, game_id, seat, owner, view)
