"""The game commands' blocking work (the rules core and the store's append) on threads of their
own, handed over and back with as little machinery as a hand-over can have.

`asyncio.to_thread` sends each call through the loop's default executor: a concurrent Future
with its condition, the pool's idle semaphore, and two chained callbacks back into the loop.
On the per-action path that machinery cost the server more CPU than the append's own Python
(`bench service`, socket protocol, three interleaved runs: 1.28-1.37 ms an action with
`to_thread`, 1.14-1.23 ms handed over here; a pool of one thread through `run_in_executor` gave
nothing, so the cost is the machinery, not the number of threads). Here a call goes on a
`SimpleQueue` to a waiting thread, which runs it in the caller's context and gives the result
back with one `call_soon_threadsafe`.

As with `to_thread`, a caller that is cancelled does not stop a call already handed over: the
call runs to its end, and its result is dropped.

A hand-over made with a `group` function also takes items (`run_grouped`): a thread that picks
one up takes every item already waiting behind it as well, up to `most`, and gives them all
to `group` in one call. The commands use it on SQLite for group commit: the appends of every
action that queued while the thread was busy share one transaction, so one flush to disk,
and each caller still has its answer only once its events are committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# (loop, future, context, then a call, or an item for the group function)
_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", contextvars.Context, Any, bool]
_Group = Callable[[list[Any]], list[Any]]


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():  # the caller was cancelled meanwhile
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


def _settle_all(settled: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    for future, ok, value in settled:
        _settle(future, ok, value)


def _give_back(loop: asyncio.AbstractEventLoop, callback: Callable[..., None], *args: Any) -> None:
    # (a loop that has closed meanwhile leaves nobody awaiting the result)
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(callback, *args)


def _run_one(job: _Job) -> None:
    loop, future, context, call, _ = job
    try:
        outcome: tuple[bool, Any] = (True, context.run(call))
    except BaseException as exc:  # the caller's to raise, as with to_thread
        outcome = (False, exc)
    _give_back(loop, _settle, future, *outcome)


def _run_group(jobs: list[_Job], group: _Group) -> None:
    """`group` over the jobs' items, in the first one's context; a result that is an
    exception is raised in its own caller, and one that `group` raises in every caller."""
    context = jobs[0][2]
    items = [item for _, _, _, item, _ in jobs]
    try:
        results: list[tuple[bool, Any]] = [
            (not isinstance(r, BaseException), r) for r in context.run(group, items)
        ]
        if len(results) != len(jobs):
            raise RuntimeError(f"a group of {len(jobs)} gave {len(results)} results")
    except BaseException as exc:
        results = [(False, exc)] * len(jobs)
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
    for (loop, future, _, _, _), (ok, value) in zip(jobs, results, strict=True):
        by_loop.setdefault(loop, []).append((future, ok, value))
    for loop, settled in by_loop.items():  # one wake-up of the loop for the whole group
        _give_back(loop, _settle_all, settled)


class Handoff:
    """`await handoff.run(call)`: `call()` on one of `threads` threads, its result (or its
    exception) back in the awaiting task. With a `group` function, `await
    handoff.run_grouped(item)`: the item's result from `group(items)`, called with the items
    waiting together (at most `most`). The threads start on the first call."""

    def __init__(
        self, threads: int, name: str, group: _Group | None = None, most: int = 64
    ) -> None:
        if threads < 1:
            raise ValueError("a hand-over needs at least one thread")
        if most < 1:
            raise ValueError("a group holds at least one item")
        self.size = threads
        self.name = name
        self.group = group
        self.most = most
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []

    async def run(self, call: Callable[[], T]) -> T:
        result: T = await self._hand(call, False)
        return result

    async def run_grouped(self, item: Any) -> Any:
        if self.group is None:
            raise RuntimeError(f"the hand-over {self.name!r} has no group function")
        return await self._hand(item, True)

    async def _hand(self, what: Any, grouped: bool) -> Any:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if not self._threads:
            self._start()
        # (the context travels as to_thread's does: log lines bound to the request keep it)
        self._jobs.put((loop, future, contextvars.copy_context(), what, grouped))
        return await future

    def _start(self) -> None:
        self._threads = [
            threading.Thread(
                target=self._work,
                args=(self._jobs, self.group, self.most),
                name=f"{self.name}-{i}",
                daemon=True,
            )
            for i in range(self.size)
        ]
        for thread in self._threads:
            thread.start()

    @staticmethod
    def _work(jobs: queue.SimpleQueue[_Job | None], group: _Group | None, most: int) -> None:
        while (job := jobs.get()) is not None:
            if not job[4] or group is None:
                _run_one(job)
                del job  # (a result is not kept alive until the next call)
                continue
            # Take the items already waiting: calls met on the way run after the group, and
            # this thread's stop after both.
            batch: list[_Job] = [job]
            calls: list[_Job] = []
            stop = False
            while len(batch) < most:
                try:
                    waiting = jobs.get_nowait()
                except queue.Empty:
                    break
                if waiting is None:
                    stop = True
                    break
                (batch if waiting[4] else calls).append(waiting)
            _run_group(batch, group)
            for call in calls:
                _run_one(call)
            del job, batch, calls
            if stop:
                return

    def close(self, timeout: float = 30.0) -> None:
        """Finish the calls handed over so far, then stop the threads (blocking: the service
        calls this before it closes the store, so that no append is cut off). A later call
        starts them again."""
        # (a new queue for the threads a later call starts: these leave with what is on theirs)
        threads, self._threads = self._threads, []
        jobs, self._jobs = self._jobs, queue.SimpleQueue()
        for _ in threads:
            jobs.put(None)
        for thread in threads:
            thread.join(timeout)
