"""PostgreSQL: an append's notification carries its events (migration 0006), so a follower
that is up to date takes them without reading the feed, and reads it whenever they are not
carried (too long to notify), do not follow on (a missed notification) or the LISTEN is new.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import time
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa

from eventstore import ANY, NO_STREAM, CatchUpSubscription, EventStore, NewEvent, RecordedEvent
from tests.eventstore.conftest import StoreTarget

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.parametrize("backend", ["postgres"], indirect=True),
]


@pytest.fixture
def two(
    target: StoreTarget, make_store: Callable[..., EventStore]
) -> tuple[EventStore, EventStore]:
    return make_store(), make_store()


@pytest.fixture
def follower(two: tuple[EventStore, EventStore]) -> Iterator[CatchUpSubscription]:
    a, _ = two
    a.append("seed", [NewEvent("T", {"n": 0})], NO_STREAM)
    sub = a.subscribe(1, poll_interval=5.0)
    assert [r.position for r in sub.next_batch()] == [1]  # LISTEN, then the first read
    yield sub
    sub.close()


def follow(
    a: EventStore, sub: CatchUpSubscription, write: Callable[[], object]
) -> tuple[list[RecordedEvent], int]:
    """The batch `sub` (on store `a`) returns for what `write` appends, and the statements
    `a` ran meanwhile."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        before = a.statements
        waiting = pool.submit(sub.next_batch)
        time.sleep(0.05)  # the follower is waiting for news
        write()
        got = waiting.result(timeout=10)
    return got, a.statements - before


def test_a_follower_learns_of_another_process_appends_without_a_statement(
    two: tuple[EventStore, EventStore], follower: CatchUpSubscription
) -> None:
    a, b = two
    statements = 0
    for n in range(1, 11):
        events = [
            NewEvent("T", {"n": n, "hand": ["AS", "KH"]}, meta={"by": "b"})
            for _ in range(n % 3 + 1)
        ]
        stream = f"game-{n % 2}"
        got, cost = follow(a, follower, lambda s=stream, e=events: b.append(s, e, ANY))  # type: ignore[misc]
        statements += cost
        assert got == a.read_all(got[0].position, limit=len(events))  # exactly as stored
        assert [r.event_id for r in got] == [e.event_id for e in events]
    assert statements == 0
    assert follower.next_position == a.head_position() + 1


def test_an_append_too_long_to_notify_lands_and_the_follower_reads_it(
    two: tuple[EventStore, EventStore], follower: CatchUpSubscription
) -> None:
    a, b = two
    big = [NewEvent("T", {"blob": "x" * 9000})]  # over PostgreSQL's 8000-byte limit
    got, cost = follow(a, follower, lambda: b.append("game-1", big, NO_STREAM))
    assert [r.payload for r in got] == [{"blob": "x" * 9000}]
    assert cost == 1  # one read of the feed
    small, cost = follow(a, follower, lambda: b.append("game-1", [NewEvent("T", {})], 1))
    assert [r.version for r in small] == [2] and cost == 0


def test_a_missed_notification_makes_a_gap_and_the_follower_reads(
    target: StoreTarget, two: tuple[EventStore, EventStore], follower: CatchUpSubscription
) -> None:
    """An append whose notification this follower never sees (sent on another channel here;
    a LISTEN started late in life) leaves a gap before the next carried events: they are not
    taken, the feed is read from the gap, and nothing is missed or given twice."""
    a, b = two
    url, settings = target
    with EventStore.open(
        url, settings=dataclasses.replace(settings, notify_channel="elsewhere"), create=False
    ) as quiet:
        quiet.append("game-1", [NewEvent("T", {"n": 1})], NO_STREAM)
    got, cost = follow(a, follower, lambda: b.append("game-1", [NewEvent("T", {"n": 2})], 1))
    assert [(r.stream_id, r.version) for r in got] == [("game-1", 1), ("game-1", 2)]
    assert cost == 1
    again, cost = follow(a, follower, lambda: b.append("game-1", [NewEvent("T", {"n": 3})], 2))
    assert [r.version for r in again] == [3] and cost == 0


def test_a_bare_position_is_read(
    target: StoreTarget, two: tuple[EventStore, EventStore], follower: CatchUpSubscription
) -> None:
    """The general append path (a conflict judged under the lock) and a process of an older
    release notify the last position alone: the follower reads. Emulated here by appending on
    another channel and sending what that path sends (`statements.notify`) on this one."""
    a, _ = two
    url, settings = target
    with EventStore.open(
        url, settings=dataclasses.replace(settings, notify_channel="elsewhere"), create=False
    ) as quiet:

        def write() -> None:
            last = quiet.append("game-1", [NewEvent("T", {})], NO_STREAM)[-1].position
            with quiet.engines.write.begin() as conn:
                conn.execute(
                    sa.text("SELECT pg_notify(:c, :p)"),
                    {"c": settings.notify_channel, "p": str(last)},
                )

        got, cost = follow(a, follower, write)
    assert [(r.stream_id, r.version) for r in got] == [("game-1", 1)] and cost == 1


def test_a_broken_listener_is_replaced_and_the_feed_read_again(
    two: tuple[EventStore, EventStore], follower: CatchUpSubscription
) -> None:
    """A LISTEN connection that drops is no loss: the wait falls back to a poll interval and
    a read, the next call listens anew and reads, and carried events follow on from there."""
    a, b = two
    assert follower._listener is not None
    follower._listener.close()  # the connection dropped
    got, cost = follow(a, follower, lambda: b.append("game-1", [NewEvent("T", {})], NO_STREAM))
    assert [(r.stream_id, r.version) for r in got] == [("game-1", 1)] and cost == 1
    b.append("game-1", [NewEvent("T", {})], 1)  # while nobody listens
    assert [r.version for r in follower.next_batch()] == [2]  # LISTEN anew, then a read
    assert follower._listener is not None
    got, cost = follow(a, follower, lambda: b.append("game-1", [NewEvent("T", {})], 2))
    assert [r.version for r in got] == [3] and cost == 0
