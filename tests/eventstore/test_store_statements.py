"""`EventStore.statements`: every statement the store sends is counted, on every backend."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from eventstore import ANY, NO_STREAM, EventStore, LeaseLost, NewEvent, VersionConflict


def spent(store: EventStore, fn: object) -> int:
    before = store.statements
    fn()  # type: ignore[operator]
    return store.statements - before


def test_appends_and_reads_are_counted(store: EventStore) -> None:
    new = spent(store, lambda: store.append("game-1", one(), NO_STREAM))
    more = spent(store, lambda: store.append("game-1", [NewEvent("T", {}), NewEvent("T", {})], 1))
    if store.backend.startswith("sqlite"):
        # on the cached head: BEGIN IMMEDIATE, the guarded stream row, the events, COMMIT
        assert new == more == 4
    else:
        assert 1 <= new <= 2 and 1 <= more <= 2
    assert spent(store, lambda: store.read_stream("game-1")) >= 1  # the raw read path
    assert spent(store, lambda: store.stream_info("game-1")) >= 1  # SQLAlchemy's Core path
    assert spent(store, lambda: store.verify("game-1")) >= 3


# ----------------------------------------------------------------- SQLite, exactly

sqlite_only = pytest.mark.parametrize("backend", ["sqlite-memory", "sqlite-file"], indirect=True)
sqlite_file = pytest.mark.parametrize("backend", ["sqlite-file"], indirect=True)


@pytest.fixture
def two(make_store: Callable[..., EventStore]) -> tuple[EventStore, EventStore]:
    """Two stores on one SQLite file: two processes, each with its own head cache."""
    return make_store(), make_store()


def one() -> list[NewEvent]:
    return [NewEvent("T", {})]


@sqlite_only
def test_a_one_event_append_on_sqlite_is_four_statements_fenced_or_not(store: EventStore) -> None:
    """BEGIN IMMEDIATE, the stream row written only while it is the cached head (and the
    lease held: the fence rides in the same statement, which returns the last position),
    the event row, COMMIT. No max(position), head or fence read of its own."""
    lease = store.acquire_lease("game-1", "me", 600_000)
    assert lease is not None
    costs = [spent(store, lambda: store.append("game-1", one(), NO_STREAM))]
    for v in (1, 3, 5):
        costs.append(spent(store, lambda v=v: store.append("game-1", [NewEvent("T", {"v": v})], v)))
        costs.append(
            spent(
                store,
                lambda v=v: store.append("game-1", [NewEvent("F", {})], ANY, fence=lease),
            )
        )
    costs.append(spent(store, lambda: store.append("game-2", one(), 0, fence=lease)))
    assert costs == [4] * len(costs)
    assert [e.position for e in store.read_all()] == list(range(1, 9))
    assert store.verify_all().ok


@sqlite_file
def test_a_head_moved_by_another_process_costs_the_general_path_in_the_same_transaction(
    two: tuple[EventStore, EventStore],
) -> None:
    """Two stores on one file stand for two processes. The guarded write finds nothing to
    write, and the general path (max(position), head, events, stream row) runs on in the
    same transaction: 7 statements, 8 with the fence's own read."""
    a, b = two
    a.append("game-1", one(), NO_STREAM)
    b.append("game-1", one(), 1)  # a's cached head is behind now
    assert spent(a, lambda: a.append("game-1", one(), ANY)) == 7
    b.append("game-1", one(), 3)
    lease = a.acquire_lease("game-1", "a", 600_000)
    assert lease is not None
    assert spent(a, lambda: a.append("game-1", one(), ANY, fence=lease)) == 8
    assert spent(a, lambda: a.append("game-1", one(), 5, fence=lease)) == 4
    assert [e.version for e in b.read_stream("game-1")] == [1, 2, 3, 4, 5, 6]
    assert b.verify_all().ok


@sqlite_file
def test_a_stale_expected_version_across_processes_is_a_version_conflict(
    two: tuple[EventStore, EventStore],
) -> None:
    a, b = two
    a.append("game-1", one(), NO_STREAM)
    theirs = b.append("game-1", one(), 1)
    for expected in (1, NO_STREAM, 0):
        with pytest.raises(VersionConflict) as info:
            a.append("game-1", one(), expected)  # type: ignore[arg-type]
        assert info.value.actual == 2
    b.append("game-2", one(), NO_STREAM)  # a presumes game-2 new: it is not
    with pytest.raises(VersionConflict):
        a.append("game-2", one(), NO_STREAM)
    mine = a.append("game-1", one(), 2)
    assert mine[0].prev_hash == theirs[0].hash and mine[0].position == 4
    assert b.verify_all().ok


@sqlite_file
def test_a_lost_lease_refuses_a_cached_append_and_writes_nothing(
    two: tuple[EventStore, EventStore],
) -> None:
    a, b = two
    mine = a.acquire_lease("game-1", "a", 600_000)
    assert mine is not None
    a.append("game-1", one(), NO_STREAM, fence=mine)
    a.release_lease("game-1", "a")
    theirs = b.acquire_lease("game-1", "b", 600_000)
    assert theirs is not None
    before = a.statements
    with pytest.raises(LeaseLost):
        a.append("game-1", one(), 1, fence=mine)
    # BEGIN, the guard (refused), the general path's fence read (refused), ROLLBACK
    assert a.statements - before == 4
    with pytest.raises(LeaseLost):
        a.append("game-9", one(), NO_STREAM, fence=mine)
    assert (a.head_position(), a.stream_version("game-1")) == (1, 1)
    assert a.stream_info("game-9") is None
    assert a.append("game-1", one(), 1, fence=theirs)[0].version == 2
    assert b.verify_all().ok


@sqlite_file
def test_a_store_opened_anew_reads_the_head_once_then_uses_its_cache(
    make_store: Callable[..., EventStore],
) -> None:
    a = make_store()
    a.append("game-1", one(), NO_STREAM)
    fresh = make_store()
    # unknown head, expected 1: the general path (BEGIN, max, head, events, stream row, COMMIT)
    assert spent(fresh, lambda: fresh.append("game-1", one(), 1)) == 6
    assert spent(fresh, lambda: fresh.append("game-1", one(), 2)) == 4
    assert fresh.verify("game-1").ok
