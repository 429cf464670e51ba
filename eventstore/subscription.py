"""Catch-up subscription: read the feed from a position, then poll for what commits later.

Positions are allocated in commit order, so reading ``position >= next`` never skips an event
that commits after the read. On PostgreSQL a LISTEN connection only shortens the wait between
polls; correctness never depends on a notification arriving.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from eventstore.records import RecordedEvent
from eventstore.validation import check_interval, check_positive

if TYPE_CHECKING:
    from eventstore.store import EventStore


class CatchUpSubscription:
    """Iterate to receive every event from `from_position` on; `close()` ends the iteration."""

    def __init__(
        self,
        store: EventStore,
        from_position: int,
        *,
        batch_size: int = 500,
        poll_interval: float = 0.5,
        upcast: bool = True,
    ) -> None:
        self._store = store
        self.next_position = max(from_position, 1)
        self._batch_size = check_positive(batch_size, "batch_size")
        self._poll_interval = check_interval(poll_interval, "poll_interval")
        self._upcast = upcast
        self._buffer: deque[RecordedEvent] = deque()
        self._stopped = threading.Event()
        self._listener: Any = None
        self._full = False  # the last read filled a batch: read on without waiting

    def close(self) -> None:
        """Stop: a blocked iteration returns within one poll interval."""
        self._stopped.set()

    @property
    def closed(self) -> bool:
        return self._stopped.is_set()

    def __iter__(self) -> CatchUpSubscription:
        return self

    def __next__(self) -> RecordedEvent:
        while not self._buffer:
            if self._stopped.is_set():
                self._close_listener()
                raise StopIteration
            batch = self._store.read_all(
                self.next_position, limit=self._batch_size, upcast=self._upcast
            )
            if batch:
                self._buffer.extend(batch)
                self.next_position = batch[-1].position + 1
            else:
                self._wait()
        return self._buffer.popleft()

    def poll(self) -> list[RecordedEvent]:
        """Return what is buffered or committed now, without waiting (may be empty)."""
        if not self._buffer:
            batch = self._store.read_all(
                self.next_position, limit=self._batch_size, upcast=self._upcast
            )
            if batch:
                self.next_position = batch[-1].position + 1
            return batch
        out = list(self._buffer)
        self._buffer.clear()
        return out

    def next_batch(self) -> list[RecordedEvent]:
        """What is buffered or committed now; when nothing is, wait one poll interval (cut
        short by a PostgreSQL notification) and look once more. Empty when nothing came, and
        always after `close()`.

        On PostgreSQL the LISTEN starts before the first read, so every commit after a read
        sends a notification this subscription will see: after a batch that was not full it
        waits for one (at once when one is queued, every queued one taken in that one wake)
        instead of reading again to find nothing. That is one read per wake, not two."""
        if self._stopped.is_set():
            self._close_listener()
            return []
        if self._buffer or self._store.engines.kind != "postgresql":
            batch = self.poll()
            if batch:
                return batch
            self._wait()
            return [] if self._stopped.is_set() else self.poll()
        if self._listener is None or self._full:
            with contextlib.suppress(Exception):  # no wake-up channel: plain polling below
                self._listen()
        else:
            self._wait()
        if self._stopped.is_set():
            return []
        batch = self.poll()
        self._full = len(batch) >= self._batch_size
        return batch

    def _wait(self) -> None:
        if self._store.engines.kind != "postgresql":
            self._stopped.wait(self._poll_interval)
            return
        try:
            listener = self._listen()
            # In slices of at most a second, so that `close()` ends a long wait soon.
            end = time.monotonic() + self._poll_interval
            while not self._stopped.is_set():
                left = end - time.monotonic()
                if left <= 0:
                    return
                if any(True for _ in listener.notifies(timeout=min(left, 1.0), stop_after=1)):
                    # Take every notification already queued too: one read answers them all.
                    for _ in listener.notifies(timeout=0.0):
                        pass
                    return
        except Exception:  # a broken wake-up channel only means plain polling
            self._close_listener()
            self._stopped.wait(self._poll_interval)

    def _listen(self) -> Any:
        if self._listener is None:
            import psycopg

            engines = self._store.engines
            url = engines.url.set(drivername="postgresql")
            conn = psycopg.connect(url.render_as_string(hide_password=False), autocommit=True)
            conn.execute(f'LISTEN "{engines.settings.notify_channel}"')
            self._listener = conn
        return self._listener

    def _close_listener(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._close_listener()
