"""PostgreSQL's one-statement append (`eventstore.pg_append`): what it costs, and that its
cache of stream heads can go stale without ever changing an outcome.

Two `EventStore` instances on one schema stand for two processes: each has its own cache,
so one appending behind the other's back is exactly a stale head.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_store_concurrency import check_feed

from eventstore import (
    ANY,
    NO_STREAM,
    EventStore,
    GroupConflict,
    IdempotencyConflict,
    Lease,
    LeaseLost,
    NewEvent,
    VersionConflict,
)
from eventstore.canonical import GENESIS_HASH
from tests.eventstore.conftest import StoreTarget

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.parametrize("backend", ["postgres"], indirect=True),
]


@pytest.fixture
def two(
    target: StoreTarget, make_store: Callable[..., EventStore]
) -> tuple[EventStore, EventStore]:
    url, settings_ = target
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(f'TRUNCATE "{settings_.pg_schema}".leases'))
    engine.dispose()
    return make_store(), make_store()


def ev(n: int, **kw: object) -> NewEvent:
    return NewEvent("T", {"n": n}, **kw)  # type: ignore[arg-type]


def cost(store: EventStore, fn: Callable[[], object]) -> int:
    before = store.statements
    fn()
    return store.statements - before


def held(store: EventStore, name: str, owner: str = "me") -> Lease:
    lease = store.acquire_lease(name, owner, 600_000)
    assert lease is not None
    return lease


# ----------------------------------------------------------------- cost


def test_a_fenced_append_of_one_event_is_at_most_two_statements(
    two: tuple[EventStore, EventStore],
) -> None:
    a, _ = two
    lease = held(a, "game-1")
    assert cost(a, lambda: a.append("game-1", [ev(1)], NO_STREAM, fence=lease)) <= 2
    for v in range(1, 4):
        assert cost(a, lambda v=v: a.append("game-1", [ev(v)], v, fence=lease)) <= 2  # type: ignore[misc]
    assert cost(a, lambda: a.append("game-1", [ev(9)], ANY)) <= 2
    assert a.verify("game-1").ok


def test_the_general_path_costs_what_an_append_cost_before(
    two: tuple[EventStore, EventStore],
) -> None:
    """With the one-statement path switched off an append is today's sequence: checkout ping,
    BEGIN, lock, fence, max(position), head, insert, stream row, notify, COMMIT."""
    a, _ = two
    lease = held(a, "game-1")
    a.append("game-1", [ev(0)], NO_STREAM, fence=lease)
    a._fast = None  # the general path only
    spent = cost(a, lambda: a.append("game-1", [ev(1)], 1, fence=lease))
    assert 9 <= spent <= 10  # the ping is skipped on a fresh connection
    assert a.verify("game-1").ok


def test_a_stale_head_costs_two_statements_more_at_most(
    two: tuple[EventStore, EventStore],
) -> None:
    a, b = two
    a.append("game-1", [ev(1)], NO_STREAM)
    b.append("game-1", [ev(2)], 1)  # a's cached head is behind now
    assert cost(a, lambda: a.append("game-1", [ev(3)], 2)) <= 2  # read the head, append
    b.append("game-1", [ev(4)], 3)
    assert cost(a, lambda: a.append("game-1", [ev(5)], ANY)) <= 3  # moved, read, append
    assert [e.version for e in a.read_stream("game-1")] == [1, 2, 3, 4, 5]
    assert a.verify("game-1").ok


def test_a_head_another_instance_moved_costs_no_read_once_the_feed_showed_it(
    two: tuple[EventStore, EventStore],
) -> None:
    """A process following the feed learns the heads other processes wrote (by a read of the
    feed, or a notification that carries the events), so its next append to such a stream is
    the one statement; a feed behind what it wrote itself never moves a head back."""
    a, b = two
    a.append("game-1", [ev(1)], NO_STREAM)
    b.append("game-1", [ev(2)], 1)
    assert [e.version for e in a.read_all(1)] == [1, 2]  # the feed, as the watcher reads it
    assert cost(a, lambda: a.append("game-1", [ev(3)], 2)) == 1
    a.append("game-1", [ev(4)], 3)
    a.read_all(1, limit=2)  # a lagging read: versions 1 and 2 only
    assert cost(a, lambda: a.append("game-1", [ev(5)], 4)) == 1
    import concurrent.futures
    import time

    sub = a.subscribe(1, poll_interval=5.0)
    try:
        assert len(sub.next_batch()) == 5  # LISTEN, then the first read
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(sub.next_batch)
            time.sleep(0.05)
            b.append("game-1", [ev(6)], 5)
            assert [r.version for r in waiting.result(timeout=10)] == [6]  # carried
        assert cost(a, lambda: a.append("game-1", [ev(7)], 6)) == 1
    finally:
        sub.close()
    assert a.verify("game-1").ok


# ----------------------------------------------------------------- stale heads


def test_a_stale_head_gives_the_version_conflict_the_database_holds(
    two: tuple[EventStore, EventStore],
) -> None:
    a, b = two
    a.append("game-1", [ev(1), ev(2)], NO_STREAM)
    theirs = b.append("game-1", [ev(3)], 2)
    with pytest.raises(VersionConflict) as info:
        a.append("game-1", [ev(4)], 2)
    assert (info.value.expected, info.value.actual) == (2, 3)
    mine = a.append("game-1", [ev(4)], 3)
    assert mine[0].version == 4 and mine[0].prev_hash == theirs[0].hash
    assert mine[0].position == theirs[0].position + 1
    assert a.verify("game-1").ok and b.verify_all().ok
    assert b.read_stream("game-1")[-1].hash == mine[0].hash


def test_a_cached_head_with_the_right_version_but_another_hash_is_refused(
    two: tuple[EventStore, EventStore],
) -> None:
    """The function compares the head hash too, not just the version (which the unique
    (stream, version) constraint would catch anyway): a chain is never built on a wrong link,
    e.g. a stream deleted and made again behind this process's back."""
    a, _ = two
    a.append("game-1", [ev(1)], NO_STREAM)
    assert a._fast is not None
    a._head_cache.remember({"game-1": (1, "f" * 64)})
    out = a.append("game-1", [ev(2)], 1)
    assert out[0].prev_hash == a.read_stream("game-1")[0].hash
    assert a.verify("game-1").ok


def test_no_stream_when_another_instance_created_it_is_a_conflict(
    two: tuple[EventStore, EventStore],
) -> None:
    a, b = two
    b.append("game-1", [ev(1)], NO_STREAM)
    for expected in (NO_STREAM, 0):
        with pytest.raises(VersionConflict) as info:
            a.append("game-1", [ev(2)], expected)
        assert info.value.actual == 1
    assert a.stream_version("game-1") == 1 and a.head_position() == 1


def test_any_after_a_stale_head_links_to_the_real_head(
    two: tuple[EventStore, EventStore],
) -> None:
    a, b = two
    a.append("game-1", [ev(1)], ANY)
    theirs = b.append("game-1", [ev(2), ev(3)], ANY)
    mine = a.append("game-1", [ev(4)], ANY)
    assert (mine[0].version, mine[0].prev_hash) == (4, theirs[-1].hash)
    assert a.verify("game-1").ok


def test_retries_across_instances_return_the_recorded_events(
    two: tuple[EventStore, EventStore],
) -> None:
    a, b = two
    events = [ev(1, event_id="e-1"), ev(2, event_id="e-2")]
    first = b.append("game-1", events, NO_STREAM)
    for expected in (NO_STREAM, 0, ANY):
        assert a.append("game-1", events, expected) == first  # a never saw game-1
    assert a.append("game-1", [ev(3, event_id="e-3")], 2)[0].version == 3
    assert a.append("game-1", events, 0) == first  # a's head is ahead of the retry now
    with pytest.raises(IdempotencyConflict):
        a.append("game-1", [ev(99, event_id="e-1"), ev(2, event_id="e-2")], NO_STREAM)
    with pytest.raises(IdempotencyConflict):
        a.append("game-2", [ev(1, event_id="e-1")], NO_STREAM)
    assert a.stream_version("game-1") == 3 and a.head_position() == 3
    assert a.verify_all().ok


def test_a_group_with_one_stale_item_writes_nothing(
    two: tuple[EventStore, EventStore],
) -> None:
    a, b = two
    a.append_many([("game-1", [ev(1)], NO_STREAM), ("game-2", [ev(1)], NO_STREAM)])
    b.append("game-2", [ev(2)], 1)
    with pytest.raises(GroupConflict) as info:
        a.append_many([("game-1", [ev(2)], 1), ("game-2", [ev(3)], 1)])
    assert info.value.index == 1 and isinstance(info.value.cause, VersionConflict)
    assert a.head_position() == 3
    done = a.append_many([("game-1", [ev(2)], 1), ("game-2", [ev(3)], 2)])
    assert [r[0].version for r in done] == [2, 3]
    assert a.verify_all().ok


def test_stream_type_and_metadata_are_stored_on_creation_only(
    two: tuple[EventStore, EventStore],
) -> None:
    a, b = two
    a.append("game-1", [ev(1)], NO_STREAM, stream_type="match", stream_metadata={"k": 1})
    b.append("game-1", [ev(2)], 1, stream_type="other", stream_metadata={"k": 2})
    a.append("game-1", [ev(3)], 2, stream_type="other", stream_metadata={"k": 3})
    info = a.stream_info("game-1")
    assert info is not None and (info.type, info.metadata, info.version) == ("match", {"k": 1}, 3)
    a.append("round-7", [ev(1)], NO_STREAM)
    created = a.stream_info("round-7")
    assert created is not None and created.type == "round" and created.head_hash != GENESIS_HASH


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    steps=st.lists(
        st.tuples(
            st.integers(0, 1),  # which instance
            st.integers(0, 2),  # which stream
            st.sampled_from(["right", "behind", "ahead", "any", "none", "read_feed"]),
            st.integers(1, 3),  # how many events
        ),
        min_size=1,
        max_size=25,
    )
)
def test_two_instances_interleaved_agree_with_a_model(
    two: tuple[EventStore, EventStore], steps: list[tuple[int, int, str, int]]
) -> None:
    """Whatever each instance's cache believes (from its own appends, or heads it saw in the
    feed, up to date or lagging), every outcome is the one the real versions decide, and every
    chain verifies."""
    run = uuid.uuid4().hex[:8]
    versions = [0, 0, 0]
    for who, stream, how, count in steps:
        store, sid, real = two[who], f"g{run}-{stream}", versions[stream]
        if how == "read_feed":  # some of the feed, from a position that may lag behind
            store.read_all(max(store.head_position() - 4 * count, 1), limit=2 * count)
            continue
        expected: object = {
            "right": real,
            "behind": real - 1,
            "ahead": real + 1,
            "any": ANY,
            "none": NO_STREAM,
        }[how]
        if expected == -1:
            expected = 0 if real else NO_STREAM
        lands = expected is ANY or expected == real or (expected is NO_STREAM and real == 0)
        try:
            out = store.append(sid, [ev(i) for i in range(count)], expected)  # type: ignore[arg-type]
        except VersionConflict as exc:
            assert not lands and exc.actual == real
            continue
        assert lands
        assert [e.version for e in out] == list(range(real + 1, real + count + 1))
        versions[stream] = real + count
    for stream, version in enumerate(versions):
        sid = f"g{run}-{stream}"
        assert two[0].stream_version(sid) == version
        if version:
            assert two[1].verify(sid).ok
    assert two[0].verify_all().ok


# ----------------------------------------------------------------- the fence


def test_lease_lost_inside_the_one_statement_writes_nothing(
    two: tuple[EventStore, EventStore],
) -> None:
    a, b = two
    mine = held(a, "game-1", "a")
    a.append("game-1", [ev(1)], NO_STREAM, fence=mine)
    a.release_lease("game-1", "a")
    theirs = held(b, "game-1", "b")
    head, version = a.head_position(), a.stream_version("game-1")
    for expected in (1, ANY, 5):
        with pytest.raises(LeaseLost):
            a.append("game-1", [ev(2)], expected, fence=mine)  # type: ignore[arg-type]
    with pytest.raises(LeaseLost):
        a.append("game-9", [ev(2)], NO_STREAM, fence=Lease("game-1", "b", theirs.epoch + 1, 0))
    before = a.statements
    with pytest.raises(LeaseLost):
        a.append("game-1", [ev(2)], 1, fence=mine)
    assert a.statements - before == 1  # refused by the function itself
    assert (a.head_position(), a.stream_version("game-1")) == (head, version)
    assert a.stream_info("game-9") is None
    # a refused append leaves the cache right: the new holder (and the old one, unfenced) go on
    b.append("game-1", [ev(3)], 1, fence=theirs)
    assert a.append("game-1", [ev(4)], 2)[0].version == 3
    assert a.verify("game-1").ok


def test_an_expired_lease_is_judged_on_the_database_clock(
    two: tuple[EventStore, EventStore],
) -> None:
    a, _ = two
    lease = a.acquire_lease("game-1", "a", 200)
    assert lease is not None
    a.append("game-1", [ev(1)], NO_STREAM, fence=lease)
    while a.clock_ms() <= lease.expires_ms:
        pass
    with pytest.raises(LeaseLost):
        a.append("game-1", [ev(2)], 1, fence=lease)
    assert a.stream_version("game-1") == 1


# ----------------------------------------------------------------- the migration


def test_migration_0004_adds_and_drops_the_append_function(backend: str, postgres_url: str) -> None:
    from alembic import command

    from eventstore import SchemaError, StoreSettings
    from eventstore.backends import create_engines
    from eventstore.migrate import STORE_MIGRATIONS, upgrade_engines
    from tests.eventstore.conftest import pg_schema_for

    settings = StoreSettings(pg_schema=pg_schema_for("m0004"))
    engines = create_engines(postgres_url, settings)
    has_function = sa.text(
        "SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE p.proname = 'eventstore_append' AND n.nspname = :s"
    )

    def functions() -> int:
        with engines.write.connect() as conn:
            return int(conn.execute(has_function, {"s": settings.pg_schema}).scalar_one())

    try:
        upgrade_engines(engines, "0003")
        assert functions() == 0
        with pytest.raises(SchemaError):
            EventStore.open(postgres_url, settings=settings, create=False)
        upgrade_engines(engines)
        assert functions() == 1
        with EventStore.open(postgres_url, settings=settings, create=False) as store:
            assert store.append("game-1", [ev(1)], NO_STREAM)[0].position == 1
            assert store.verify_all().ok
        config = STORE_MIGRATIONS.config()
        with engines.write.connect() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "0003")
            conn.commit()
        assert functions() == 0
    finally:
        with engines.write.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{settings.pg_schema}" CASCADE'))
        engines.dispose()


# ----------------------------------------------------------------- connections


def test_a_kept_connection_found_dead_is_replaced(two: tuple[EventStore, EventStore]) -> None:
    a, b = two
    a.append("game-1", [ev(1)], NO_STREAM)
    assert a._fast is not None and a._fast._idle
    pids = [c.driver_connection.info.backend_pid for c in a._fast._idle]
    with b.engines.write.connect() as conn:
        for pid in pids:
            conn.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": pid})
    assert a.append("game-1", [ev(2)], 1)[0].version == 2
    assert a.append("game-1", [ev(3)], 2)[0].version == 3
    assert a.verify("game-1").ok


# ----------------------------------------------------------------- concurrency


def test_threads_of_two_instances_keep_positions_dense_and_chains_whole(
    two: tuple[EventStore, EventStore],
) -> None:
    stores = two
    errors: list[BaseException] = []
    batches: set[str] = set()
    lock = threading.Lock()

    def writer(store: EventStore, worker: int) -> None:
        try:
            known = 0
            for i in range(25):
                batch = f"w{worker}-{i}"
                events = [NewEvent("T", {"i": i}, meta={"batch": batch}) for _ in range(1 + i % 3)]
                if i % 4 == 3:
                    store.append(f"own-{worker}", events, ANY)
                else:
                    while True:  # the shared stream, at the version this thread believes
                        try:
                            known = store.append("shared", events, known)[-1].version
                            break
                        except VersionConflict as exc:
                            known = exc.actual
                with lock:
                    batches.add(batch)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [
        threading.Thread(target=writer, args=(stores[w % 2], w), daemon=True) for w in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
        assert not t.is_alive(), "a writer hung"
    assert not errors, errors[0]
    feed = check_feed(stores[0], batches)
    assert check_feed(stores[1], batches) == feed


def test_plain_reads_reuse_a_kept_connection_and_survive_its_death(
    two: tuple[EventStore, EventStore],
) -> None:
    """A plain read on a kept connection is one statement (no pool checkout, whose pre-ping
    is a round trip); a kept connection killed by the server is dropped, and the read is
    answered all the same on a fresh one."""
    a, b = two
    a.append("game-1", [ev(1)], NO_STREAM)
    a.read_stream("game-1")  # now a connection is kept
    assert cost(a, lambda: a.read_stream("game-1")) == 1
    assert cost(a, lambda: a.read_all(1)) == 1
    kept = list(a._kept_reads._idle)
    assert kept
    with b.engines.write.connect() as conn:
        for c in kept:
            pid = c.driver_connection.info.backend_pid
            conn.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": pid})
    assert [r.version for r in a.read_stream("game-1")] == [1]
    assert [r.version for r in a.read_all(1)][-1:] == [1]
    assert not any(c in a._kept_reads._idle for c in kept), "a dead connection is not kept"


def test_the_feed_is_not_read_when_the_wake_carries_the_events(
    two: tuple[EventStore, EventStore],
) -> None:
    """Following the feed on PostgreSQL: after a batch the subscription waits for the next
    commit's notification, which carries the events (migration 0006): no read at all, and
    never one to find nothing (tests/eventstore/test_notify_feed.py has the fallbacks)."""
    a, b = two
    a.append("game-1", [ev(0)], NO_STREAM)
    sub = a.subscribe(1, poll_interval=5.0)
    try:
        assert [r.version for r in sub.next_batch()] == [1]  # LISTEN, then the first read
        import concurrent.futures
        import time

        reads = 0
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            for n in range(1, 11):
                before = a.statements
                waiting = pool.submit(sub.next_batch)  # the follower waits for news
                time.sleep(0.05)
                b.append("game-1", [ev(n)], n)  # another process writes
                got = waiting.result(timeout=10)
                reads += a.statements - before
                assert [r.version for r in got] == [n + 1]
        assert reads == 0, reads
    finally:
        sub.close()
