"""Leases under forced races on PostgreSQL: many takers at once, takeovers while the old
holder keeps appending, and a takeover waiting for an append in flight."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa

from eventstore import ANY, NO_STREAM, EventStore, Lease, LeaseLost, NewEvent
from tests.eventstore.conftest import StoreTarget

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.parametrize("backend", ["postgres"], indirect=True),
]

LONG = 600_000
FENCED_TTL_MS = 3_000


@pytest.fixture
def pg(target: StoreTarget, make_store: Callable[..., EventStore]) -> EventStore:
    url, settings = target
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(f'TRUNCATE "{settings.pg_schema}".leases'))
    engine.dispose()
    return make_store()


def wait_until(store: EventStore, t: int) -> None:
    while (left := t - store.clock_ms()) > 0:
        time.sleep(left / 1000 + 0.001)


def run_threads(targets: list[Callable[[], None]]) -> None:
    errors: list[BaseException] = []

    def guarded(fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                fn()
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)

        return run

    threads = [threading.Thread(target=guarded(fn), daemon=True) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
        assert not t.is_alive(), "a worker hung"
    if errors:
        raise errors[0]


def test_many_takers_of_one_expired_lease_exactly_one_wins(pg: EventStore) -> None:
    takers = 8
    first = pg.acquire_lease("race", "old", 50)
    assert first is not None
    wait_until(pg, first.expires_ms)
    epoch = first.epoch
    for round_ in range(5):
        barrier = threading.Barrier(takers)
        results: dict[str, Lease | None] = {}

        def take(
            owner: str, barrier: threading.Barrier, results: dict[str, Lease | None]
        ) -> Callable[[], None]:
            def run() -> None:
                barrier.wait(10)
                results[owner] = pg.acquire_lease("race", owner, LONG)

            return run

        run_threads([take(f"w{round_}-{i}", barrier, results) for i in range(takers)])
        winners = [lease for lease in results.values() if lease is not None]
        assert len(results) == takers
        assert len(winners) == 1, results
        (won,) = winners
        assert won.epoch == epoch + 1
        assert pg.leases("race") == [won]
        epoch = won.epoch
        pg.release_lease("race", won.owner)  # free again for the next round


def test_takeovers_while_both_owners_keep_appending_never_interleave_epochs(
    pg: EventStore,
) -> None:
    """Two owners fight for one lease (short TTL, renewed by re-acquiring; each now and then
    pauses until the other has taken over, then writes once more with its stale lease). Each
    keeps appending with the last lease it got. Afterwards: exactly the appends that returned
    are in the stream, the epochs never go down along the stream, and each event's epoch
    belongs to the owner that wrote it."""
    name, sid, ttl, steps = "game-fight", "game-fight", 25, 150
    history: dict[int, str] = {}  # epoch -> the owner acquire returned it to
    landed: dict[str, tuple[str, int]] = {}
    refused: list[str] = []
    stale_refused = {"a": 0, "b": 0}
    finished: set[str] = set()
    lock = threading.Lock()

    def worker(me: str) -> Callable[[], None]:
        other = "b" if me == "a" else "a"

        def append(lease: Lease, n: int) -> bool:
            event_id = f"{me}-{n}"
            event = NewEvent("Move", {"owner": me, "epoch": lease.epoch}, event_id=event_id)
            try:
                pg.append(sid, [event], ANY, fence=lease)
            except LeaseLost:
                with lock:
                    refused.append(event_id)
                return False
            with lock:
                landed[event_id] = (me, lease.epoch)
            return True

        def run() -> None:
            try:
                fight()
            finally:
                finished.add(me)

        def fight() -> None:
            mine: Lease | None = None
            n = 0
            for step in range(steps):
                got = pg.acquire_lease(name, me, ttl)
                if got is not None:
                    with lock:
                        assert history.setdefault(got.epoch, me) == me, "an epoch was reused"
                    mine = got
                if mine is None:
                    continue
                n += 1
                append(mine, n)
                if got is not None and step % 15 == 14 and other not in finished:
                    # pause (a GC stall, a lost network) until the other owner took over
                    deadline = time.monotonic() + 5
                    while time.monotonic() < deadline and other not in finished:
                        if any(lease.owner == other for lease in pg.leases(name)):
                            break
                        time.sleep(0.002)
                    n += 1
                    if not append(mine, n):
                        with lock:
                            stale_refused[me] += 1

        return run

    run_threads([worker("a"), worker("b")])

    events = pg.read_stream(sid)
    ids = [e.event_id for e in events]
    assert len(ids) == len(landed), "an append that was refused (or lost) wrote something"
    assert set(ids) == set(landed)
    assert not set(refused) & set(ids)
    epochs = [e.payload["epoch"] for e in events]
    assert epochs == sorted(epochs), "an older epoch wrote after a newer one"
    for e in events:
        assert landed[e.event_id] == (e.payload["owner"], e.payload["epoch"])
        assert history[e.payload["epoch"]] == e.payload["owner"]
    assert {e.payload["owner"] for e in events} == {"a", "b"}
    # every pause ended in a takeover or an expiry, so the stale lease always failed
    assert stale_refused["a"] + stale_refused["b"] >= 1
    assert refused
    assert pg.verify(sid).ok and pg.verify_all().ok


def _blocked_by(conn: sa.Connection, pid: int) -> list[int]:
    rows = conn.execute(
        sa.text("SELECT pid FROM pg_stat_activity WHERE :pid = ANY(pg_blocking_pids(pid))"),
        {"pid": pid},
    ).all()
    conn.rollback()
    return [int(row[0]) for row in rows]


def _wait_blocked_by(conn: sa.Connection, pid: int) -> list[int]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if found := _blocked_by(conn, pid):
            return found
        time.sleep(0.01)
    return []


def test_a_takeover_waits_for_a_fenced_append_in_flight(pg: EventStore) -> None:
    """An append has passed its fence check (the lease row is locked FOR SHARE) and is held
    there; the lease expires meanwhile and another owner tries to take it. The takeover
    blocks on the row lock until the append commits, so the append lands at the old epoch
    and everything after the takeover is refused to the old lease.

    The append is held inside its own transaction, after the fence check, by another
    session's uncommitted row for the same new stream: the append's stream-row insert waits
    for it (whichever write path the append takes, one statement or several)."""
    schema = pg.engines.settings.pg_schema
    holder_engine = sa.create_engine(pg.engines.write.url)
    probe = sa.create_engine(pg.engines.write.url)
    results: dict[str, Any] = {}
    lease: Lease | None = None

    def appender() -> None:
        assert lease is not None
        results["append"] = pg.append("game-1", [NewEvent("T", {"n": 1})], NO_STREAM, fence=lease)

    def taker() -> None:
        results["take"] = pg.acquire_lease("game-1", "b", LONG)

    app = threading.Thread(target=appender, daemon=True)
    take = threading.Thread(target=taker, daemon=True)
    try:
        with holder_engine.connect() as holder, probe.connect() as conn:
            holder_pid = int(holder.execute(sa.text("SELECT pg_backend_pid()")).scalar_one())
            holder.execute(
                sa.text(
                    f'INSERT INTO "{schema}".streams (id, type, version, head_hash, metadata, '
                    "created_at, updated_at) VALUES ('game-1', 'game', 0, '', '{}', now(), now())"
                )
            )
            # Taken just before the append starts, and long enough that the append reaches its
            # fence check before the lease lapses even on a loaded machine (300 ms did not).
            lease = pg.acquire_lease("game-1", "a", FENCED_TTL_MS)
            assert lease is not None
            app.start()
            try:
                waiting = _wait_blocked_by(conn, holder_pid)
                assert len(waiting) == 1, "the append did not come to wait for the held row"
                append_pid = waiting[0]
                wait_until(pg, lease.expires_ms)  # expired while the append is in flight
                take.start()
                # the taker's backend must come to wait on the append's backend
                assert _wait_blocked_by(conn, append_pid), (
                    "the takeover did not wait for the append in flight"
                )
                assert take.is_alive() and "take" not in results
            finally:
                holder.rollback()  # the append goes on and commits
                app.join(30)
    finally:
        holder_engine.dispose()
        probe.dispose()
    take.join(30)
    assert not app.is_alive() and not take.is_alive()
    assert [e.version for e in results["append"]] == [1]
    taken = results["take"]
    assert taken is not None and (taken.owner, taken.epoch) == ("b", 2)
    with pytest.raises(LeaseLost):
        pg.append("game-1", [NewEvent("T", {"n": 2})], ANY, fence=lease)
    assert pg.stream_version("game-1") == 1
    pg.append("game-1", [NewEvent("T", {"n": 3})], 1, fence=taken)
    assert pg.verify("game-1").ok
