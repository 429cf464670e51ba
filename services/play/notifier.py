"""In-process wake-ups: "game X has a new version" and "a game was started or ended".

Every write goes through this process's GameService, which notifies here; streams and the
driver also re-read after `poll_seconds` without a wake-up, so writes by another process are
seen too, only later. All methods run on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib


class Notifier:
    def __init__(self) -> None:
        self._versions: dict[str, int] = {}
        self._events: dict[str, asyncio.Event] = {}
        self._games_changed = asyncio.Event()
        self._games_epoch = 0

    def notify(self, game_id: str, version: int) -> None:
        if version > self._versions.get(game_id, 0):
            self._versions[game_id] = version
        event = self._events.pop(game_id, None)
        if event is not None:
            event.set()

    def version(self, game_id: str) -> int:
        """The newest version of the game this process has written or been told of."""
        return self._versions.get(game_id, 0)

    def forget(self, game_id: str) -> None:
        self._versions.pop(game_id, None)
        event = self._events.pop(game_id, None)
        if event is not None:
            event.set()

    async def wait(self, game_id: str, after_version: int, timeout: float) -> bool:
        """Wait until the game is known past `after_version`, or `timeout` seconds; True if so."""
        if self._versions.get(game_id, 0) > after_version:
            return True
        event = self._events.get(game_id)
        if event is None:
            event = self._events[game_id] = asyncio.Event()
        await _wait(event, timeout)
        return self._versions.get(game_id, 0) > after_version

    @property
    def games_epoch(self) -> int:
        return self._games_epoch

    def games_changed(self) -> None:
        self._games_epoch += 1
        self._games_changed.set()
        self._games_changed = asyncio.Event()

    async def wait_games(self, epoch: int, timeout: float) -> bool:
        if self._games_epoch != epoch:
            return True
        await _wait(self._games_changed, timeout)
        return self._games_epoch != epoch


async def _wait(event: asyncio.Event, timeout: float) -> None:
    """Until the event is set or `timeout` seconds pass. `asyncio.timeout` cancels this task
    at the deadline; `wait_for` would wrap the wait in a task of its own each time, and every
    stream waits once per event of its game."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout):
            await event.wait()
