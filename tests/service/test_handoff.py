"""The game commands' hand-over to their threads (services/play/handoff.py): each caller gets
its own call's result or exception, in its own context, off the event loop's thread; a
cancelled caller leaves the call to finish; closing finishes what was handed over."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.play.handoff import Handoff

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


class Refused(Exception):
    pass


def test_a_call_runs_on_a_thread_of_its_own_and_its_result_comes_back() -> None:
    handoff = Handoff(1, "test-commands")

    async def main() -> tuple[str, str, str]:
        request_id.set("r-1")
        seen = await handoff.run(lambda: (threading.current_thread().name, request_id.get()))
        return threading.current_thread().name, *seen

    try:
        loop_thread, call_thread, context = asyncio.run(main())
    finally:
        handoff.close()
    assert call_thread == "test-commands-0" != loop_thread
    assert context == "r-1"  # the caller's context travelled with the call


def outcome_of(value: int) -> int:
    if value < 0:
        raise Refused(value)
    return value * 2


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-5, 50), max_size=30), st.integers(1, 4))
def test_every_caller_gets_its_own_calls_outcome(values: list[int], threads: int) -> None:
    handoff = Handoff(threads, "test-commands")

    async def one(value: int) -> object:
        try:
            return await handoff.run(lambda: outcome_of(value))
        except Refused as exc:
            return ("refused", exc.args[0])

    async def main() -> list[object]:
        return list(await asyncio.gather(*(one(v) for v in values)))

    try:
        got = asyncio.run(main())
    finally:
        handoff.close()
    assert got == [v * 2 if v >= 0 else ("refused", v) for v in values]


def test_one_thread_runs_the_calls_in_the_order_handed_over() -> None:
    handoff = Handoff(1, "test-commands")
    order: list[int] = []

    async def main() -> None:
        await asyncio.gather(*(handoff.run(lambda i=i: order.append(i)) for i in range(50)))

    try:
        asyncio.run(main())
    finally:
        handoff.close()
    assert order == list(range(50))


def test_a_cancelled_caller_leaves_its_call_to_finish_and_the_thread_serves_on() -> None:
    handoff = Handoff(1, "test-commands")
    release = threading.Event()
    finished: list[str] = []

    def slow() -> str:
        release.wait(10)
        finished.append("slow")
        return "slow"

    async def main() -> int:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(handoff.run(slow), 0.05)
        release.set()
        return await handoff.run(lambda: 42)

    try:
        assert asyncio.run(main()) == 42
    finally:
        handoff.close()
    assert finished == ["slow"]


def test_a_result_for_a_loop_that_has_closed_is_dropped_and_the_thread_serves_on() -> None:
    handoff = Handoff(1, "test-commands")
    release = threading.Event()

    async def abandon() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(handoff.run(lambda: release.wait(10)), 0.05)

    try:
        asyncio.run(abandon())  # the loop closes with the call still running
        release.set()

        async def again() -> int:
            return await handoff.run(lambda: 7)

        assert asyncio.run(again()) == 7
    finally:
        handoff.close()


def test_close_finishes_what_was_handed_over_and_a_later_call_starts_again() -> None:
    handoff = Handoff(2, "test-commands")
    done: list[int] = []

    def work(i: int) -> None:
        time.sleep(0.01)
        done.append(i)

    async def hand_over() -> None:
        # handed over, never awaited (the loop ends first): close must still run them
        tasks = [asyncio.create_task(handoff.run(lambda i=i: work(i))) for i in range(10)]
        await asyncio.sleep(0)  # the tasks reach the queue
        assert len(tasks) == 10

    asyncio.run(hand_over())
    handoff.close()
    assert sorted(done) == list(range(10))

    async def later() -> str:
        return await handoff.run(lambda: threading.current_thread().name)

    try:
        assert asyncio.run(later()).startswith("test-commands-")
    finally:
        handoff.close()


def test_a_handoff_has_at_least_one_thread() -> None:
    with pytest.raises(ValueError, match="at least one thread"):
        Handoff(0, "test-commands")
