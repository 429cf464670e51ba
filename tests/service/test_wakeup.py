"""The lobby's and the games list's wake-ups (`services.wakeup.Wakeup`)."""

from __future__ import annotations

import asyncio

from services.wakeup import Wakeup


def test_a_moved_epoch_answers_at_once_and_a_quiet_one_times_out() -> None:
    wakeup = Wakeup()
    wakeup.bump()
    assert wakeup.epoch == 1
    assert asyncio.run(wakeup.wait(0, timeout=30)) is True
    assert asyncio.run(wakeup.wait(1, timeout=0.01)) is False


def test_a_bump_wakes_every_waiter() -> None:
    wakeup = Wakeup()

    async def scenario() -> list[bool]:
        waiters = [asyncio.create_task(wakeup.wait(0, timeout=30)) for _ in range(3)]
        await asyncio.sleep(0)  # all three are waiting
        wakeup.bump()
        return await asyncio.gather(*waiters)

    assert asyncio.run(scenario()) == [True, True, True]


def test_waits_on_a_second_loop_after_the_first_closed() -> None:
    """An app started again (a second TestClient) waits on a new loop: a plain asyncio.Event
    kept from the first loop's wait would raise 'bound to a different event loop' here."""
    wakeup = Wakeup()
    assert asyncio.run(wakeup.wait(0, timeout=0.01)) is False  # the first loop, now closed

    async def second_loop() -> bool:
        waiter = asyncio.create_task(wakeup.wait(0, timeout=30))
        await asyncio.sleep(0)
        wakeup.bump()
        return await waiter

    assert asyncio.run(second_loop()) is True


def test_a_bump_between_loops_reaches_the_next_loops_waiters() -> None:
    wakeup = Wakeup()
    assert asyncio.run(wakeup.wait(0, timeout=0.01)) is False
    wakeup.bump()  # no loop runs: nothing to wake, and no error
    assert asyncio.run(wakeup.wait(0, timeout=30)) is True
    assert asyncio.run(wakeup.wait(1, timeout=0.01)) is False
