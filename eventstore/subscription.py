"""Catch-up subscription: read the feed from a position, then poll for what commits later.

Positions are allocated in commit order, so reading ``position >= next`` never skips an event
that commits after the read. On PostgreSQL a LISTEN connection shortens the wait between polls,
and a notification that carries its append's events (migration 0006) is taken instead of a
read when they are exactly the next positions. Anything else (a bare position, a payload too
long to carry them, a gap before them, a fresh or broken LISTEN, a quiet poll interval) means
a read of the feed, so correctness never depends on a notification arriving.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from eventstore.decoding import decode_notification
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
        waits for one (every one already queued taken in the same wake). When the queued
        notifications carry exactly the events from `next_position` on, they are the batch and
        nothing is read; otherwise one read answers them all. A quiet interval reads too."""
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
            notes = None
        else:
            notes = self._wait()
        if self._stopped.is_set():
            return []
        carried = self._carried(notes) if notes else None
        if carried is not None:
            self._full = False
            return carried
        batch = self.poll()
        self._full = len(batch) >= self._batch_size
        return batch

    def _carried(self, notes: list[str]) -> list[RecordedEvent] | None:
        """The events the notifications carry beyond `next_position`, when they follow on from
        it with no gap; None when the feed must be read (nothing is taken then). Events before
        `next_position` are ones already delivered and are dropped."""
        registry = self._store.upcasters if self._upcast else None
        expected = self.next_position
        out: list[RecordedEvent] = []
        for text in notes:
            note = decode_notification(text, registry)
            if note is None:
                return None
            if note.last < expected:
                continue  # delivered already (by a read that went further)
            if note.events is None or note.events[0].position > expected:
                return None  # not carried, or a gap before them: read
            out.extend(note.events[expected - note.events[0].position :])
            expected = note.last + 1
        if out:
            self.next_position = expected
            self._store.heads_seen(out)
        return out

    def _wait(self) -> list[str] | None:
        """Wait for notifications (PostgreSQL) or one poll interval (else); the payloads of
        those that came, every one already queued included, or None when none came."""
        if self._store.engines.kind != "postgresql":
            self._stopped.wait(self._poll_interval)
            return None
        try:
            listener = self._listen()
            # In slices of at most a second, so that `close()` ends a long wait soon.
            end = time.monotonic() + self._poll_interval
            while not self._stopped.is_set():
                left = end - time.monotonic()
                if left <= 0:
                    return None
                first = [n.payload for n in listener.notifies(timeout=min(left, 1.0), stop_after=1)]
                if first:
                    # Take every notification already queued too: one batch answers them all.
                    return first + [n.payload for n in listener.notifies(timeout=0.0)]
        except Exception:  # a broken wake-up channel only means plain polling
            self._close_listener()
            self._stopped.wait(self._poll_interval)
        return None

    def _listen(self) -> Any:
        if self._listener is None:
            import psycopg

            engines = self._store.engines
            url = engines.url.set(drivername="postgresql")
            conn = psycopg.connect(url.render_as_string(hide_password=False), autocommit=True)
            conn.execute(f'LISTEN "{engines.settings.channel}"')
            self._listener = conn
        return self._listener

    def _close_listener(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._close_listener()
