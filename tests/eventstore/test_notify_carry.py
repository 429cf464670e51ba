"""The subscription's use of notifications that carry events, without a database: whatever
mix of carried, bare, too-long-to-carry, missed and repeated notifications arrives, the
batches it hands out are the feed exactly (nothing missed, nothing twice), and it reads the
feed only when the notifications do not follow on from where it stands."""

from __future__ import annotations

from collections import deque
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from eventstore.decoding import decode_notification
from eventstore.records import RecordedEvent
from eventstore.subscription import CatchUpSubscription
from eventstore.upcasting import UpcasterRegistry

AT = datetime(2026, 12, 2, 12, 0, 0, 123456, tzinfo=UTC)
MICROS = (AT - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


def event(position: int) -> RecordedEvent:
    return RecordedEvent(
        position, f"game-{position % 3}", position, f"id-{position}", "T", 1,
        {"n": position, "hand": ["AS"]}, {}, AT, "p" * 64, "h" * 64,
    )  # fmt: skip


def carried(events: list[RecordedEvent]) -> str:
    """What migration 0006's `eventstore_append` sends for an append of `events`."""
    rows = [
        [e.position, e.stream_id, e.version, e.event_id, e.type, e.schema_version,
         e.payload, e.meta, e.prev_hash, e.hash]
        for e in events
    ]  # fmt: skip
    return orjson.dumps({"last": events[-1].position, "at": MICROS, "events": rows}).decode()


class FakeFeed:
    """The store's side: the feed so far and a count of reads."""

    def __init__(self) -> None:
        self.feed: list[RecordedEvent] = []
        self.reads = 0
        self.engines = SimpleNamespace(kind="postgresql")
        self.upcasters = UpcasterRegistry()

    def read_all(self, start: int, *, limit: int, upcast: bool) -> list[RecordedEvent]:
        self.reads += 1
        return self.feed[start - 1 : start - 1 + limit]

    def heads_seen(self, events: list[RecordedEvent]) -> None:
        """Carried events handed to the head cache: each must be the feed's own."""
        for e in events:
            assert self.feed[e.position - 1] == e


class FakeListener:
    def __init__(self) -> None:
        self.queue: deque[str] = deque()

    def notifies(self, timeout: float, stop_after: int | None = None) -> Any:
        while self.queue and (stop_after is None or stop_after > 0):
            yield SimpleNamespace(payload=self.queue.popleft())
            if stop_after is not None:
                stop_after -= 1

    def close(self) -> None:
        pass


KINDS = st.sampled_from(["carried", "carried", "carried", "bare", "missed", "twice", "junk"])


@settings(max_examples=200, deadline=None)
@given(
    before=st.integers(0, 3),
    rounds=st.lists(st.lists(st.tuples(st.integers(1, 4), KINDS), max_size=4), max_size=8),
    batch_size=st.integers(2, 6),
)
def test_batches_are_the_feed_exactly_whatever_the_notifications(
    before: int, rounds: list[list[tuple[int, str]]], batch_size: int
) -> None:
    store = FakeFeed()
    store.feed = [event(p) for p in range(1, before + 1)]
    sub = CatchUpSubscription(store, 1, batch_size=batch_size, poll_interval=0.001)  # type: ignore[arg-type]
    listener = FakeListener()

    def listen() -> FakeListener:
        sub._listener = listener
        return listener

    sub._listen = listen  # type: ignore[method-assign]
    got: list[RecordedEvent] = []
    reads_needed = 0
    quiet = 0  # calls that find no notification: each reads once (the poll interval's read)
    for appends in [[], *rounds]:
        for size, kind in appends:
            first = len(store.feed) + 1
            events = [event(p) for p in range(first, first + size)]
            store.feed.extend(events)
            note = {"carried": carried(events), "bare": str(events[-1].position)}.get(kind)
            if kind == "twice":
                note = carried(events)
                listener.queue.append(note)
            elif kind == "junk":
                note = "{not json"
            if note is not None:
                listener.queue.append(note)
            reads_needed += kind != "carried" and kind != "twice"
        quiet += not listener.queue
        got.extend(sub.next_batch())
    while True:  # what is left: the quiet interval's read finds the rest
        quiet += not listener.queue
        batch = sub.next_batch()
        if not batch and not listener.queue and sub.next_position > len(store.feed):
            break
        got.extend(batch)
    assert [e.position for e in got] == list(range(1, len(store.feed) + 1))
    assert got == store.feed
    if (
        reads_needed == 0
        and before < batch_size
        and all(sum(size for size, _ in appends) < batch_size for appends in rounds)
    ):
        # The first read after LISTEN (a quiet call too) and the quiet calls' reads: no
        # notification that carries its events costs a read.
        assert store.reads == quiet, (store.reads, quiet)


def test_a_carried_notification_decodes_to_the_stored_events() -> None:
    events = [event(5), event(6)]
    note = decode_notification(carried(events), UpcasterRegistry())
    assert note is not None and note.last == 6 and note.events == events
    assert decode_notification("6", None) == type(note)(6, None)
    for junk in ("", "{", '{"last": 6}', '{"last": 7, "at": 0, "events": []}', "x"):
        assert decode_notification(junk, None) is None


def test_stores_in_other_schemas_of_one_database_do_not_hear_each_other() -> None:
    """The default channel carries the schema's name: a notification carries the events
    themselves, and a follower in another schema would take them for its own."""
    from eventstore import StoreSettings

    assert StoreSettings().channel == "eventstore_events"
    one, two = StoreSettings(pg_schema="tenant_one"), StoreSettings(pg_schema="tenant_two")
    assert one.channel != two.channel and "tenant_one" in one.channel
    long = StoreSettings(pg_schema="s" * 63)
    assert len(long.channel) <= 63 and long.channel != StoreSettings(pg_schema="t" * 63).channel
    assert StoreSettings(pg_schema="x", notify_channel="mine").channel == "mine"
