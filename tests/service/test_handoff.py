"""The game commands' hand-over to their threads (services/play/handoff.py): each caller gets
its own call's result or exception, in its own context, off the event loop's thread; a
cancelled caller leaves the call to finish; closing finishes what was handed over."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Awaitable, Callable

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


def gathered(
    handoff: Handoff, values: list[int], hand: Callable[[int], Awaitable[object]]
) -> list[object]:
    """Every value handed over at once (`hand`), each caller's result or ("refused", v);
    the hand-over closed after."""

    async def one(value: int) -> object:
        try:
            return await hand(value)
        except Refused as exc:
            return ("refused", exc.args[0])

    async def main() -> list[object]:
        return list(await asyncio.gather(*(one(v) for v in values)))

    try:
        return asyncio.run(main())
    finally:
        handoff.close()


def outcome_of(value: int) -> int:
    if value < 0:
        raise Refused(value)
    return value * 2


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-5, 50), max_size=30), st.integers(1, 4))
def test_every_caller_gets_its_own_calls_outcome(values: list[int], threads: int) -> None:
    handoff = Handoff(threads, "test-commands")
    got = gathered(handoff, values, lambda v: handoff.run(lambda: outcome_of(v)))
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


def doubled_group(calls: list[list[int]]) -> Callable[[list[int]], list[object]]:
    """A group function that records each group and answers each item (negative: refused)."""

    def group(items: list[int]) -> list[object]:
        calls.append(list(items))
        return [Refused(v) if v < 0 else v * 2 for v in items]

    return group


def test_items_waiting_together_are_given_to_the_group_function_in_one_call() -> None:
    """While the thread is busy, items queue; the next pick takes all of them at once (up to
    `most`), in the order handed over, and calls handed over between them run after."""
    groups: list[list[int]] = []
    handoff = Handoff(1, "test-commands", group=doubled_group(groups), most=4)
    gate = threading.Event()
    order: list[str] = []

    async def main() -> list[object]:
        busy = asyncio.ensure_future(handoff.run(gate.wait))  # holds the thread
        await asyncio.sleep(0.05)
        tasks = [asyncio.ensure_future(handoff.run_grouped(v)) for v in (1, 2, 3)]
        tasks.append(asyncio.ensure_future(handoff.run(lambda: order.append("call"))))
        tasks += [asyncio.ensure_future(handoff.run_grouped(v)) for v in (4, 5, 6)]
        await asyncio.sleep(0.05)  # every item is queued behind the busy thread
        gate.set()
        await busy
        return list(await asyncio.gather(*tasks))

    try:
        got = asyncio.run(main())
    finally:
        handoff.close()
    assert got == [2, 4, 6, None, 8, 10, 12]
    assert groups == [[1, 2, 3, 4], [5, 6]]  # `most` items a group, in order
    assert order == ["call"]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-5, 50), max_size=40), st.integers(1, 8))
def test_every_grouped_caller_gets_its_own_items_outcome(values: list[int], most: int) -> None:
    groups: list[list[int]] = []
    handoff = Handoff(1, "test-commands", group=doubled_group(groups), most=most)
    got = gathered(handoff, values, handoff.run_grouped)
    assert got == [v * 2 if v >= 0 else ("refused", v) for v in values]
    assert [v for g in groups for v in g] == values  # each item once, in order
    assert all(1 <= len(g) <= most for g in groups)


def test_a_group_function_that_fails_fails_every_caller_of_its_group() -> None:
    def broken(items: list[int]) -> list[object]:
        raise Refused(len(items))

    def short(items: list[int]) -> list[object]:
        return []  # fewer results than items: a bug, said to every caller

    for group, kind in ((broken, Refused), (short, RuntimeError)):
        handoff = Handoff(1, "test-commands", group=group)

        async def main(handoff: Handoff) -> list[BaseException | None]:
            results = await asyncio.gather(
                *(handoff.run_grouped(v) for v in range(3)), return_exceptions=True
            )
            return [r if isinstance(r, BaseException) else None for r in results]

        try:
            errors = asyncio.run(main(handoff))
        finally:
            handoff.close()
        assert all(isinstance(e, kind) for e in errors), errors


def test_grouped_items_need_a_group_function() -> None:
    handoff = Handoff(1, "test-commands")
    with pytest.raises(RuntimeError, match="no group function"):
        asyncio.run(handoff.run_grouped(1))
    with pytest.raises(ValueError, match="at least one item"):
        Handoff(1, "test-commands", group=lambda items: items, most=0)
