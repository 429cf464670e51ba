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

_Job = tuple[
    asyncio.AbstractEventLoop, "asyncio.Future[Any]", contextvars.Context, Callable[[], Any]
]


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():  # the caller was cancelled meanwhile
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class Handoff:
    """`await handoff.run(call)`: `call()` on one of `threads` threads, its result (or its
    exception) back in the awaiting task. The threads start on the first call."""

    def __init__(self, threads: int, name: str) -> None:
        if threads < 1:
            raise ValueError("a hand-over needs at least one thread")
        self.size = threads
        self.name = name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []

    async def run(self, call: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if not self._threads:
            self._start()
        # (the context travels as to_thread's does: log lines bound to the request keep it)
        self._jobs.put((loop, future, contextvars.copy_context(), call))
        return await future

    def _start(self) -> None:
        self._threads = [
            threading.Thread(
                target=self._work, args=(self._jobs,), name=f"{self.name}-{i}", daemon=True
            )
            for i in range(self.size)
        ]
        for thread in self._threads:
            thread.start()

    @staticmethod
    def _work(jobs: queue.SimpleQueue[_Job | None]) -> None:
        while (job := jobs.get()) is not None:
            loop, future, context, call = job
            try:
                outcome: tuple[bool, Any] = (True, context.run(call))
            except BaseException as exc:  # the caller's to raise, as with to_thread
                outcome = (False, exc)
            # (a loop that has closed meanwhile leaves nobody awaiting the result)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, future, *outcome)
            del job, future, outcome  # (a result is not kept alive until the next call)

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
