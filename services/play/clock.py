"""The clock of each live game's pending decision: which seat, at which version, until when.

The clock starts when the event that made it this seat's turn was recorded, so every process,
and an owner taking a game over, agrees on the same deadline. That time comes from the live
cache's tail, or for a game just taken over from one read of that event.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from domain.game import GameState
from services.play.live import LiveGames


@dataclass(frozen=True, slots=True)
class Turn:
    """A decision the driver waits for: the seat, at which version, until when (epoch s)."""

    seat: int
    version: int
    deadline: float


class GameClock:
    def __init__(
        self,
        live: LiveGames,
        seconds_of: Callable[[str], float],
        read_time: Callable[[str, int], float | None],
    ) -> None:
        """`seconds_of(game_id)`: the game's time per decision; `read_time(game_id, version)`:
        when that event was recorded, read from the store (blocking, run in a thread)."""
        self.live = live
        self.seconds_of = seconds_of
        self.read_time = read_time
        self.turns: dict[str, Turn] = {}

    def get(self, game_id: str) -> Turn | None:
        return self.turns.get(game_id)

    def publish(self, game_id: str, state: GameState, started: float | None = None) -> Turn | None:
        """The clock of the decision the game now waits for (None: nobody to move).
        `started`: when its turn began (default: its event's time from the tail, else now)."""
        seat = state.to_move
        if seat is None:
            self.turns.pop(game_id, None)
            return None
        known = self.turns.get(game_id)
        if known is not None and known.version == state.version:
            return known
        if started is None:
            started = self.live.recorded_at(game_id, state.version)
        begun = started if started is not None else time.time()
        turn = self.turns[game_id] = Turn(seat, state.version, begun + self.seconds_of(game_id))
        return turn

    async def turn_for(self, game_id: str, state: GameState) -> Turn | None:
        """`publish`, reading the time of the state's last event when the tail does not hold
        it (a game this process has just taken over)."""
        known = self.turns.get(game_id)
        if (known is not None and known.version == state.version) or state.to_move is None:
            return self.publish(game_id, state)
        started = self.live.recorded_at(game_id, state.version)
        if started is None and state.version > 0:
            started = await asyncio.to_thread(self.read_time, game_id, state.version)
        return self.publish(game_id, state, started)

    def forget(self, game_id: str) -> None:
        self.turns.pop(game_id, None)
