"""A counter that streams can wait on: the lobby's and the games list's wake-ups.

`bump()` counts a change and wakes every waiter; `wait(epoch, timeout)` returns at once when
the count moved past `epoch`, else waits for the next bump or the timeout. Each waiter waits on
an event of its own running loop: an `asyncio.Event` belongs to the first loop that waits on
it, so one kept across an app started again on another loop (a second TestClient, a test's
`asyncio.run`) would refuse every later wait with a RuntimeError.
"""

from __future__ import annotations

import asyncio
import contextlib


class Wakeup:
    """An epoch count with waiters; used from the event loop's thread only."""

    def __init__(self) -> None:
        self._epoch = 0
        self._event: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def epoch(self) -> int:
        return self._epoch

    def bump(self) -> None:
        """Count a change and wake everyone waiting for one."""
        self._epoch += 1
        event, loop = self._event, self._loop
        self._event = self._loop = None
        # A closed loop's waiters were cancelled with it: nothing is left there to wake.
        if event is not None and loop is not None and not loop.is_closed():
            event.set()

    async def wait(self, epoch: int, timeout: float) -> bool:
        """Until the count passes `epoch`, or `timeout` s; True if it did."""
        if self._epoch != epoch:
            return True
        loop = asyncio.get_running_loop()
        if self._event is None or self._loop is not loop:
            self._event, self._loop = asyncio.Event(), loop
        waiter = self._event
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await waiter.wait()
        return self._epoch != epoch
