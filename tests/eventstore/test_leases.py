"""Leases with a fencing epoch, and fenced appends.

The same semantics on SQLite (a file, with an injected fake lease clock, so expiry is exact
and needs no sleep) and on PostgreSQL (the database's clock: short real TTLs, waited out by
reading `clock_ms()`). A Hypothesis state machine checks several owners against a model;
the forced races on PostgreSQL are in `test_leases_race.py`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from eventstore import (
    ANY,
    NO_STREAM,
    ConflictError,
    EventStore,
    InvalidEventError,
    InvalidNameError,
    InvalidVersionError,
    Lease,
    LeaseLost,
    NewEvent,
    StoreSettings,
    VersionConflict,
)
from eventstore.backends import create_engines
from eventstore.migrate import upgrade_engines
from tests.eventstore.conftest import StoreTarget, pg_schema_for

LEASE_BACKENDS = ["sqlite-file", pytest.param("postgres", marks=pytest.mark.postgres)]
on_both = pytest.mark.parametrize("backend", LEASE_BACKENDS, indirect=True)

LONG = 600_000  # a lease that cannot run out during a test
SHORT = 60  # a lease a test waits out (real milliseconds on PostgreSQL)
START = 1_700_000_000_000


class FakeClock:
    """The SQLite store's lease clock: moves only when a test moves it."""

    def __init__(self, now: int = START) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


@dataclass
class Env:
    store: EventStore
    fake: FakeClock | None

    def now(self) -> int:
        return self.store.clock_ms()

    def pass_ms(self, ms: int) -> None:
        """Let at least `ms` of lease-clock time go by."""
        if self.fake is not None:
            self.fake.now += ms
        else:
            self.wait_until(self.now() + ms)

    def wait_until(self, t: int) -> None:
        """Until the lease clock reads `t`: a lease with `expires_ms == t` has expired."""
        if self.fake is not None:
            self.fake.now = max(self.fake.now, t)
            return
        while (left := t - self.store.clock_ms()) > 0:
            time.sleep(left / 1000 + 0.001)


def truncate_leases(target: StoreTarget) -> None:
    """The shared fixture empties the other tables per test, not `leases`."""
    url, settings = target
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(f'TRUNCATE "{settings.pg_schema}".leases'))
    engine.dispose()


@pytest.fixture
def env(backend: str, target: StoreTarget, make_store: Callable[..., EventStore]) -> Env:
    if backend == "postgres":
        truncate_leases(target)
        return Env(make_store(), None)
    clock = FakeClock()
    return Env(make_store(clock_ms=clock), clock)


def ev(tag: str, **payload: Any) -> NewEvent:
    return NewEvent("Played", {"tag": tag, **payload}, event_id=f"ev-{tag}")


def state(store: EventStore, sid: str) -> tuple[object, ...]:
    """Everything a refused append must leave as it was."""
    info = store.stream_info(sid)
    ids = [e.event_id for e in store.read_stream(sid)]
    verified = store.verify(sid) if info is not None else None
    return store.stream_version(sid), store.head_position(), ids, verified, store.verify_all()


# ----------------------------------------------------------------- acquire, renew, release


@on_both
def test_a_free_lease_is_taken_at_epoch_1_and_refused_to_others_while_valid(env: Env) -> None:
    store = env.store
    before = env.now()
    lease = store.acquire_lease("game-1", "a", LONG)
    after = env.now()
    assert lease is not None
    assert (lease.name, lease.owner, lease.epoch) == ("game-1", "a", 1)
    assert before + LONG <= lease.expires_ms <= after + LONG
    assert store.acquire_lease("game-1", "b", LONG) is None
    assert store.acquire_lease("game-1", "b", LONG) is None
    assert store.leases() == [lease]
    # another name is free
    other = store.acquire_lease("game-2", "b", LONG)
    assert other is not None and other.epoch == 1


@on_both
def test_many_leases_are_taken_in_one_call_and_those_held_by_others_are_left(env: Env) -> None:
    store = env.store
    held = store.acquire_lease("game-2", "b", LONG)
    mine = store.acquire_lease("game-3", "a", LONG)
    assert held is not None and mine is not None
    taken = store.acquire_leases(["game-3", "game-1", "game-2", "game-1", "game-4"], "a", LONG)
    assert [x.name for x in taken] == ["game-1", "game-3", "game-4"]  # once each, by name
    assert all(x.owner == "a" for x in taken)
    assert next(x for x in taken if x.name == "game-3").epoch == mine.epoch  # renewed, kept
    assert store.leases("game-2") == [held]
    assert store.acquire_leases([], "a", LONG) == []
    with pytest.raises(InvalidNameError):
        store.acquire_leases(["game-5", ""], "a", LONG)
    assert store.leases("game-5") == []


@on_both
def test_after_expiry_another_owner_takes_it_at_the_next_epoch(env: Env) -> None:
    store = env.store
    a = store.acquire_lease("game-1", "a", SHORT)
    assert a is not None and a.epoch == 1
    env.wait_until(a.expires_ms)
    assert store.leases() == []
    b = store.acquire_lease("game-1", "b", LONG)
    assert b is not None
    assert (b.owner, b.epoch) == ("b", 2)
    assert store.acquire_lease("game-1", "a", LONG) is None
    assert store.leases() == [b]


@pytest.mark.parametrize("backend", ["sqlite-file"], indirect=True)
def test_expiry_is_exact_to_the_millisecond_on_the_injected_clock(env: Env) -> None:
    store = env.store
    assert env.fake is not None
    a = store.acquire_lease("game-1", "a", 100)
    assert a is not None and a.expires_ms == START + 100
    env.fake.now = START + 99
    assert store.acquire_lease("game-1", "b", 100) is None
    assert store.leases() == [a]
    store.append("s", [ev("1")], NO_STREAM, fence=a)
    env.fake.now = START + 100  # expires_ms <= now: expired
    assert store.leases() == []
    with pytest.raises(LeaseLost):
        store.append("s", [ev("2")], ANY, fence=a)
    assert store.renew_leases("a", 100) == []
    b = store.acquire_lease("game-1", "b", 100)
    assert b == Lease("game-1", "b", 2, START + 200)


@on_both
def test_the_holder_reacquiring_keeps_its_epoch_and_extends_the_expiry(env: Env) -> None:
    store = env.store
    first = store.acquire_lease("game-1", "a", LONG)
    assert first is not None
    env.pass_ms(5)
    again = store.acquire_lease("game-1", "a", 2 * LONG)
    assert again is not None
    assert (again.owner, again.epoch) == ("a", 1)
    assert again.expires_ms > first.expires_ms
    assert store.leases() == [again]
    # the lease object from before is the same fence (same owner, same epoch)
    store.append("s", [ev("1")], NO_STREAM, fence=first)
    assert store.stream_version("s") == 1


@on_both
def test_the_holder_reacquiring_after_its_own_expiry_gets_a_new_epoch(env: Env) -> None:
    store = env.store
    first = store.acquire_lease("game-1", "a", SHORT)
    assert first is not None and first.epoch == 1
    env.wait_until(first.expires_ms)
    second = store.acquire_lease("game-1", "a", LONG)
    assert second is not None
    assert (second.owner, second.epoch) == ("a", 2)
    with pytest.raises(LeaseLost):
        store.append("s", [ev("1")], NO_STREAM, fence=first)
    store.append("s", [ev("2")], NO_STREAM, fence=second)
    assert [e.event_id for e in store.read_stream("s")] == ["ev-2"]


@on_both
def test_renew_extends_only_the_owners_unexpired_leases_and_returns_exactly_them(
    env: Env,
) -> None:
    store = env.store
    x = store.acquire_lease("r-x", "a", LONG)
    v = store.acquire_lease("r-v", "a", LONG)
    y = store.acquire_lease("r-y", "a", SHORT)
    w = store.acquire_lease("r-w", "a", LONG)
    z = store.acquire_lease("r-z", "b", LONG)
    assert None not in (x, v, y, w, z)
    assert x and v and y and w and z
    store.release_lease("r-w", "a")
    env.wait_until(y.expires_ms)
    before = env.now()
    renewed = store.renew_leases("a", 2 * LONG)
    after = env.now()
    assert [r.name for r in renewed] == ["r-v", "r-x"]
    for r, old in zip(renewed, (v, x), strict=True):
        assert (r.owner, r.epoch) == ("a", old.epoch)
        assert before + 2 * LONG <= r.expires_ms <= after + 2 * LONG
    # b's lease is untouched; the expired and the released ones stay lost
    listed = {lease.name: lease for lease in store.leases("r-")}
    assert set(listed) == {"r-v", "r-x", "r-z"}
    assert listed["r-z"] == z
    assert listed["r-x"] == renewed[1]
    y2 = store.acquire_lease("r-y", "c", LONG)
    w2 = store.acquire_lease("r-w", "c", LONG)
    assert y2 is not None and y2.epoch == y.epoch + 1
    assert w2 is not None and w2.epoch == w.epoch + 1
    assert store.renew_leases("nobody", LONG) == []
    # a renewed lease fences like the one it renewed (the epoch is the token)
    store.append("s", [ev("1")], NO_STREAM, fence=x)
    store.append("s", [ev("2")], 1, fence=renewed[1])


@on_both
def test_release_makes_a_lease_takeable_at_once_by_another_owner(env: Env) -> None:
    store = env.store
    a = store.acquire_lease("game-1", "a", LONG)
    assert a is not None
    store.release_lease("game-1", "b")  # b does not hold it: nothing happens
    assert store.leases() == [a]
    assert store.acquire_lease("game-1", "b", LONG) is None
    store.release_lease("game-1", "a")
    assert store.leases() == []
    b = store.acquire_lease("game-1", "b", LONG)  # no wait, no clock change
    assert b is not None and (b.owner, b.epoch) == ("b", 2)
    with pytest.raises(LeaseLost):
        store.append("s", [ev("1")], NO_STREAM, fence=a)
    store.release_lease("never-taken", "a")  # no row: a no-op
    assert store.leases() == [b]


@on_both
def test_release_leases_gives_up_every_lease_of_one_owner_only(env: Env) -> None:
    store = env.store
    p1 = store.acquire_lease("p-1", "a", LONG)
    p2 = store.acquire_lease("p-2", "a", LONG)
    p3 = store.acquire_lease("p-3", "b", LONG)
    assert p1 and p2 and p3
    store.release_leases("a")
    assert store.leases() == [p3]
    assert store.renew_leases("a", LONG) == []
    for old in (p1, p2):
        taken = store.acquire_lease(old.name, "c", LONG)
        assert taken is not None and taken.epoch == old.epoch + 1
        with pytest.raises(LeaseLost):
            store.append("s", [ev(old.name)], ANY, fence=old)
    assert store.stream_version("s") == 0
    store.release_leases("nobody")
    assert [lease.owner for lease in store.leases()] == ["c", "c", "b"]


@on_both
def test_delete_forgets_a_lease(env: Env) -> None:
    store = env.store
    a = store.acquire_lease("d-1", "a", LONG)
    assert a is not None
    store.release_lease("d-1", "a")
    a2 = store.acquire_lease("d-1", "a", LONG)
    assert a2 is not None and a2.epoch == 2
    store.delete_lease("d-1")
    assert store.leases() == []
    with pytest.raises(LeaseLost):
        store.append("s", [ev("1")], NO_STREAM, fence=a2)
    b = store.acquire_lease("d-1", "b", LONG)
    assert b is not None and (b.owner, b.epoch) == ("b", 1)  # a new row starts again
    store.delete_lease("never-taken")
    assert store.leases() == [b]


@on_both
def test_listing_by_prefix_is_literal_and_skips_expired_leases(env: Env) -> None:
    store = env.store
    names = ["g-1", "g-2", "h-1", "g%1", "g_1", "gx1", "g\\1", "gz1", "g-10"]
    for name in names:
        assert store.acquire_lease(name, "a", LONG) is not None
    gone = store.acquire_lease("g-3", "a", SHORT)
    assert gone is not None
    env.wait_until(gone.expires_ms)

    def listed(prefix: str) -> list[str]:
        return [lease.name for lease in store.leases(prefix)]

    assert listed("") == sorted(names)
    assert listed("g-") == ["g-1", "g-10", "g-2"]
    assert listed("g-1") == ["g-1", "g-10"]
    assert listed("g%") == ["g%1"]
    assert listed("g_") == ["g_1"]
    assert listed("g\\") == ["g\\1"]
    assert listed("%") == []
    assert listed("_") == []
    assert listed("\\") == []
    assert listed("h") == ["h-1"]
    assert listed("zzz") == []
    assert all(lease.owner == "a" and lease.epoch == 1 for lease in store.leases())


@on_both
def test_listing_by_prefix_is_case_sensitive(env: Env) -> None:
    """Lease names are compared exactly everywhere else (the primary key), so the listing
    must not fold case either, and both backends must answer alike."""
    store = env.store
    assert store.acquire_lease("Game-1", "a", LONG) is not None
    assert store.acquire_lease("game-2", "a", LONG) is not None
    assert [lease.name for lease in store.leases("game-")] == ["game-2"]
    assert [lease.name for lease in store.leases("Game-")] == ["Game-1"]
    assert store.leases("GAME") == []


# ----------------------------------------------------------------- fenced appends


@on_both
def test_a_fenced_append_lands_while_the_lease_is_held(env: Env) -> None:
    store = env.store
    lease = store.acquire_lease("game-7", "a", LONG)
    assert lease is not None
    out = store.append("game-7", [ev("1"), ev("2")], NO_STREAM, fence=lease)
    assert [e.version for e in out] == [1, 2]
    out = store.append("game-7", [ev("3")], 2, fence=lease)
    assert out[0].version == 3
    # a fence does not bind the lease to a stream: the caller picks what it guards
    store.append("other", [ev("4")], NO_STREAM, fence=lease)
    assert store.verify("game-7").ok and store.verify_all().ok


@on_both
def test_after_a_takeover_the_old_lease_writes_nothing(env: Env) -> None:
    store = env.store
    a = store.acquire_lease("game-7", "a", SHORT)
    assert a is not None
    store.append("game-7", [ev("1")], NO_STREAM, fence=a)
    env.wait_until(a.expires_ms)
    b = store.acquire_lease("game-7", "b", LONG)
    assert b is not None and b.epoch == 2
    before = state(store, "game-7")
    for expected in (1, ANY):
        with pytest.raises(LeaseLost) as caught:
            store.append("game-7", [ev("2")], expected, fence=a)
        assert isinstance(caught.value, ConflictError)
        assert (caught.value.name, caught.value.owner, caught.value.epoch) == ("game-7", "a", 1)
        assert state(store, "game-7") == before
    # a new stream is not created either
    with pytest.raises(LeaseLost):
        store.append("game-8", [ev("3")], NO_STREAM, fence=a, stream_type="game")
    assert store.stream_info("game-8") is None
    assert state(store, "game-7") == before
    # the new holder writes, and the refused event id was never used
    out = store.append("game-7", [ev("2")], 1, fence=b)
    assert out[0].version == 2
    assert store.verify("game-7").ok


@on_both
def test_a_stale_or_forged_epoch_is_refused_even_for_the_right_owner(env: Env) -> None:
    store = env.store
    first = store.acquire_lease("game-7", "a", LONG)
    assert first is not None
    store.release_lease("game-7", "a")
    second = store.acquire_lease("game-7", "a", LONG)
    assert second is not None and second.epoch == 2
    before = state(store, "game-7")
    forged = [
        first,  # the owner's own earlier epoch
        Lease("game-7", "a", 3, second.expires_ms),  # a future epoch
        Lease("game-7", "b", 2, second.expires_ms),  # the right epoch, another owner
        Lease("game-9", "a", 2, second.expires_ms),  # a lease nobody took
    ]
    for lease in forged:
        with pytest.raises(LeaseLost):
            store.append("game-7", [ev("x")], ANY, fence=lease)
        assert state(store, "game-7") == before
    # the fence checks the database's row, not the object's expiry
    stale_expiry = Lease("game-7", "a", 2, 0)
    store.append("game-7", [ev("y")], NO_STREAM, fence=stale_expiry)
    assert store.stream_version("game-7") == 1


@on_both
def test_a_lease_past_its_expiry_is_refused_though_nobody_took_it(env: Env) -> None:
    store = env.store
    lease = store.acquire_lease("game-7", "a", SHORT)
    assert lease is not None
    env.wait_until(lease.expires_ms)
    before = state(store, "game-7")
    with pytest.raises(LeaseLost):
        store.append("game-7", [ev("1")], NO_STREAM, fence=lease)
    assert state(store, "game-7") == before
    assert store.renew_leases("a", LONG) == []  # renewing cannot revive it either
    with pytest.raises(LeaseLost):
        store.append("game-7", [ev("1")], NO_STREAM, fence=lease)
    assert state(store, "game-7") == before


@on_both
def test_the_version_check_still_applies_under_a_valid_fence(env: Env) -> None:
    store = env.store
    lease = store.acquire_lease("game-7", "a", LONG)
    assert lease is not None
    store.append("game-7", [ev("1")], NO_STREAM, fence=lease)
    with pytest.raises(VersionConflict):
        store.append("game-7", [ev("2")], 0, fence=lease)
    assert store.stream_version("game-7") == 1


@on_both
def test_a_retried_append_after_the_lease_is_lost_raises_lease_lost(env: Env) -> None:
    """The fence is checked before the idempotency lookup: a writer that lost both the
    answer and its lease learns only that it lost the lease (and reads the stream)."""
    store = env.store
    lease = store.acquire_lease("game-7", "a", LONG)
    assert lease is not None
    first = store.append("game-7", [ev("1")], NO_STREAM, fence=lease)
    assert store.append("game-7", [ev("1")], NO_STREAM, fence=lease) == first
    store.release_lease("game-7", "a")
    with pytest.raises(LeaseLost):
        store.append("game-7", [ev("1")], NO_STREAM, fence=lease)
    assert [e.event_id for e in store.read_stream("game-7")] == ["ev-1"]


@on_both
@pytest.mark.parametrize(
    "fence",
    [
        {"name": "game-7", "owner": "a", "epoch": 1, "expires_ms": 0},
        ("game-7", "a", 1, 0),
        "game-7",
        1,
    ],
    ids=["dict", "tuple", "str", "int"],
)
def test_a_fence_that_is_not_a_lease_is_a_typed_error(env: Env, fence: object) -> None:
    store = env.store
    assert store.acquire_lease("game-7", "a", LONG) is not None
    before = state(store, "game-7")
    with pytest.raises(InvalidEventError):
        store.append("game-7", [ev("1")], NO_STREAM, fence=fence)  # type: ignore[arg-type]
    assert state(store, "game-7") == before


BAD_NAMES: list[object] = ["", "x" * 301, "a\x00b", "\ud800", 5, None]
BAD_OWNERS: list[object] = ["", "o" * 201, "a\x00b", "\ud800", 5, None]
BAD_TTLS: list[object] = [0, -1, True, 1.5, "10", None]


def _bad_calls() -> list[Any]:
    calls: list[Any] = []
    for i, name in enumerate(BAD_NAMES):
        calls += [
            pytest.param(InvalidNameError, "acquire_lease", (name, "a", LONG), id=f"acq-name{i}"),
            pytest.param(InvalidNameError, "release_lease", (name, "a"), id=f"rel-name{i}"),
            pytest.param(InvalidNameError, "delete_lease", (name,), id=f"del-name{i}"),
        ]
    for i, owner in enumerate(BAD_OWNERS):
        calls += [
            pytest.param(InvalidNameError, "acquire_lease", ("n", owner, LONG), id=f"acq-own{i}"),
            pytest.param(InvalidNameError, "renew_leases", (owner, LONG), id=f"renew-own{i}"),
            pytest.param(InvalidNameError, "release_lease", ("n", owner), id=f"rel-own{i}"),
            pytest.param(InvalidNameError, "release_leases", (owner,), id=f"relall-own{i}"),
        ]
    for i, ttl in enumerate(BAD_TTLS):
        calls += [
            pytest.param(InvalidVersionError, "acquire_lease", ("n", "a", ttl), id=f"acq-ttl{i}"),
            pytest.param(InvalidVersionError, "renew_leases", ("a", ttl), id=f"renew-ttl{i}"),
        ]
    for i, prefix in enumerate([5, None, "a\x00", "\ud800"]):
        calls.append(pytest.param(InvalidNameError, "leases", (prefix,), id=f"list{i}"))
    return calls


@pytest.fixture
def held(env: Env) -> tuple[Env, Callable[[], object]]:
    """A store holding two leases, and a view of every lease row (expired ones too)."""
    store = env.store
    assert store.acquire_lease("n", "a", LONG) is not None
    assert store.acquire_lease("m", "b", SHORT) is not None

    def rows() -> object:
        with store.engines.read.connect() as conn:
            return conn.execute(sa.text("SELECT * FROM leases ORDER BY name")).all()

    return env, rows


@on_both
@pytest.mark.parametrize(("error", "method", "args"), _bad_calls())
def test_bad_lease_arguments_are_typed_errors_and_change_nothing(
    held: tuple[Env, Callable[[], object]],
    error: type[Exception],
    method: str,
    args: tuple[Any, ...],
) -> None:
    env, rows = held
    before = rows()
    with pytest.raises(error):
        getattr(env.store, method)(*args)
    assert rows() == before


@on_both
def test_names_and_owners_at_their_limits_are_accepted(env: Env) -> None:
    store = env.store
    name, owner = "n" * 300, "o" * 200
    lease = store.acquire_lease(name, owner, LONG)
    assert lease is not None and (lease.name, lease.owner) == (name, owner)
    assert store.renew_leases(owner, LONG)[0].name == name
    assert [lease.name for lease in store.leases("n" * 299)] == [name]
    store.append("s", [ev("1")], NO_STREAM, fence=lease)
    unicode = store.acquire_lease("partie-é-♠", "joueur-ü", LONG)
    assert unicode is not None and store.leases("partie-é") == [unicode]


@on_both
@pytest.mark.parametrize("ttl", [2**63 - 1, 2**63, 2**70])
def test_a_ttl_beyond_the_64_bit_clock_is_a_typed_error(
    held: tuple[Env, Callable[[], object]], ttl: int
) -> None:
    """`expires_ms` is a BIGINT: a TTL that cannot be added to the clock must be refused up
    front like any other bad TTL, not reach the driver as an overflow."""
    env, rows = held
    before = rows()
    with pytest.raises(InvalidVersionError):
        env.store.acquire_lease("big", "a", ttl)
    with pytest.raises(InvalidVersionError):
        env.store.renew_leases("a", ttl)
    assert rows() == before


# ----------------------------------------------------------------- migration


@pytest.fixture(params=["sqlite-file", pytest.param("postgres", marks=pytest.mark.postgres)])
def fresh(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreTarget]:
    """An empty database (a schema of its own on PostgreSQL), never migrated."""
    if request.param == "sqlite-file":
        yield f"sqlite:///{tmp_path / 'm.db'}", StoreSettings()
        return
    url = request.getfixturevalue("postgres_url")
    settings = StoreSettings(pg_schema=pg_schema_for(request.node))
    yield url, settings
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{settings.pg_schema}" CASCADE'))
    engine.dispose()


def test_migration_0003_adds_the_leases_table(fresh: StoreTarget) -> None:
    url, settings = fresh
    engines = create_engines(url, settings)
    try:
        upgrade_engines(engines, "0002")
        inspector = sa.inspect(engines.write)
        assert "leases" not in inspector.get_table_names()
        assert "sealed" in inspector.get_table_names()
        upgrade_engines(engines)
        inspector = sa.inspect(engines.write)
        assert "leases" in inspector.get_table_names()
        columns = {c["name"]: c for c in inspector.get_columns("leases")}
        assert set(columns) == {"name", "owner", "epoch", "expires_ms", "acquired_ms"}
        assert not any(c["nullable"] for c in columns.values())
        assert inspector.get_pk_constraint("leases")["constrained_columns"] == ["name"]
        assert [i["column_names"] for i in inspector.get_indexes("leases")] == [["owner"]]
    finally:
        engines.dispose()
    with EventStore.open(url, settings=settings, create=False) as store:
        lease = store.acquire_lease("game-1", "a", LONG)
        assert lease is not None and lease.epoch == 1
        store.append("game-1", [ev("1")], NO_STREAM, fence=lease)


# ----------------------------------------------------------------- the model


NAMES = ["n1", "n2"]
OWNERS = ["a", "b", "c"]
MSTREAMS = ["s1", "s2"]


class LeaseModel(RuleBasedStateMachine):
    """Several owners racing for two leases on a fake clock, against a dict of rows."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock()
        self.store = EventStore.open("sqlite://", clock_ms=self.clock)
        # name -> (owner, epoch, expires_ms): the table as it must be
        self.rows: dict[str, tuple[str, int, int]] = {}
        self.history: dict[str, list[tuple[str, int]]] = {n: [] for n in NAMES}
        self.issued: list[Lease] = []
        self.appended: dict[str, list[str]] = {s: [] for s in MSTREAMS}
        self.counter = 0

    def teardown(self) -> None:
        self.store.close()

    def _valid(self, name: str) -> tuple[str, int, int] | None:
        row = self.rows.get(name)
        return row if row is not None and row[2] > self.clock.now else None

    @rule(name=st.sampled_from(NAMES), owner=st.sampled_from(OWNERS), ttl=st.integers(1, 60))
    def acquire(self, name: str, owner: str, ttl: int) -> None:
        now = self.clock.now
        row = self.rows.get(name)
        got = self.store.acquire_lease(name, owner, ttl)
        if row is None:
            want: Lease | None = Lease(name, owner, 1, now + ttl)
        elif row[0] == owner and row[2] > now:
            want = Lease(name, owner, row[1], now + ttl)
        elif row[2] <= now:
            want = Lease(name, owner, row[1] + 1, now + ttl)
        else:
            want = None
        assert got == want
        if got is not None:
            self.rows[name] = (owner, got.epoch, got.expires_ms)
            self.issued.append(got)

    @rule(owner=st.sampled_from(OWNERS), ttl=st.integers(1, 60))
    def renew(self, owner: str, ttl: int) -> None:
        now = self.clock.now
        got = self.store.renew_leases(owner, ttl)
        want = [
            Lease(n, owner, r[1], now + ttl)
            for n, r in sorted(self.rows.items())
            if r[0] == owner and r[2] > now
        ]
        assert got == want
        for lease in got:
            self.rows[lease.name] = (owner, lease.epoch, lease.expires_ms)
            self.issued.append(lease)

    @rule(name=st.sampled_from(NAMES), owner=st.sampled_from(OWNERS))
    def release(self, name: str, owner: str) -> None:
        self.store.release_lease(name, owner)
        row = self.rows.get(name)
        if row is not None and row[0] == owner:
            self.rows[name] = (owner, row[1], 0)

    @rule(owner=st.sampled_from(OWNERS))
    def release_all(self, owner: str) -> None:
        self.store.release_leases(owner)
        for name, row in list(self.rows.items()):
            if row[0] == owner:
                self.rows[name] = (owner, row[1], 0)

    @rule(ms=st.integers(0, 40))
    def advance(self, ms: int) -> None:
        self.clock.now += ms

    def _fenced_append(self, lease: Lease, sid: str) -> None:
        valid = self._valid(lease.name)
        current = valid is not None and valid[:2] == (lease.owner, lease.epoch)
        self.counter += 1
        event_id = f"e{self.counter}"
        event = NewEvent("T", {"owner": lease.owner, "epoch": lease.epoch}, event_id=event_id)
        try:
            self.store.append(sid, [event], ANY, fence=lease)
        except LeaseLost as exc:
            assert not current, f"{lease} is current but was refused"
            assert (exc.name, exc.owner, exc.epoch) == (lease.name, lease.owner, lease.epoch)
        else:
            assert current, f"{lease} is not current but its append landed"
            self.appended[sid].append(event_id)

    @precondition(lambda self: bool(self.issued))
    @rule(pick=st.integers(0, 10**6), sid=st.sampled_from(MSTREAMS))
    def append_issued(self, pick: int, sid: str) -> None:
        self._fenced_append(self.issued[pick % len(self.issued)], sid)

    @rule(
        name=st.sampled_from(NAMES),
        owner=st.sampled_from(OWNERS),
        epoch=st.integers(0, 6),
        sid=st.sampled_from(MSTREAMS),
    )
    def append_forged(self, name: str, owner: str, epoch: int, sid: str) -> None:
        self._fenced_append(Lease(name, owner, epoch, 0), sid)

    @invariant()
    def table_matches_the_model(self) -> None:
        with self.store.engines.read.connect() as conn:
            found = conn.execute(sa.text("SELECT name, owner, epoch, expires_ms FROM leases")).all()
        assert {r[0]: (r[1], r[2], r[3]) for r in found} == self.rows

    @invariant()
    def one_valid_holder_per_name_and_epochs_rise_with_every_new_holder(self) -> None:
        listed = self.store.leases()
        assert [lease.name for lease in listed] == sorted({lease.name for lease in listed})
        assert {lease.name: (lease.owner, lease.epoch) for lease in listed} == {
            n: v[:2] for n in NAMES if (v := self._valid(n)) is not None
        }
        for name, row in self.rows.items():
            seen = self.history[name]
            holder = (row[0], row[1])
            if seen and seen[-1] != holder:
                last_owner, last_epoch = seen[-1]
                assert row[1] >= last_epoch, "an epoch went down"
                if row[0] != last_owner:
                    assert row[1] > last_epoch, "a new holder kept the old epoch"
            if not seen or seen[-1] != holder:
                seen.append(holder)

    @invariant()
    def only_current_fences_wrote(self) -> None:
        for sid, ids in self.appended.items():
            assert [e.event_id for e in self.store.read_stream(sid)] == ids


LeaseModel.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestLeaseModel = LeaseModel.TestCase
