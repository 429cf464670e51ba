"""Game ownership in one test process: who drives a game, fenced writes, races, hand-over and
a database outage (services.play.ownership). Each "process" here is a full set of services
on its own store over the same database; the multi-process suite is test_failover.py."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eventstore import LeaseLost, StoreUnavailable
from services.container import Services, build_services
from services.database import open_store
from services.identity import Principal
from services.play.ownership import GAME_LEASE, preferred_owner
from services.play.service import TIMEOUT
from tests.service.conftest import SettingsFactory

ADMIN = Principal(player_id=None, is_admin=True)
HOUSE = ["house:random", "house:random", "house:random", "house:random"]


@asynccontextmanager
async def process(settings: Any, *, run: bool = False) -> AsyncIterator[Services]:
    """A process's services on the settings' database; `run`: start ownership (and so the
    driver) as the app's lifespan does."""
    store = open_store(settings)
    services = build_services(settings, store)
    try:
        if run:
            await services.ownership.start()
        yield services
    finally:
        if run:
            await services.ownership.stop()
        await services.push.aclose()
        store.close()


async def wait_until(predicate: Callable[[], Any], what: str, guard: float = 60.0) -> Any:
    loop = asyncio.get_running_loop()
    start = loop.time()
    while True:
        found = predicate()
        if asyncio.iscoroutine(found):
            found = await found
        if found:
            return found
        assert loop.time() - start < guard, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def started_game(services: Services, game_id: str, seats: list[str] = HOUSE) -> Any:
    games = services.games
    await games.create_table(ADMIN, game_id, seats, {"mode": "short12"}, 60.0, "")
    return await games.start(ADMIN, game_id)


WAITER_SEATS = ["waiter", "house:random", "house:random", "house:random"]


async def waiting_game(services: Services, game_id: str) -> Any:
    """A started game whose first seat, a bot that never moves, has the turn for good."""
    if services.players.find("waiter") is None:
        services.players.create("waiter", "waiter", "bot", None)
    return await started_game(services, game_id, WAITER_SEATS)


def strikes(services: Services, game_id: str) -> list[dict[str, Any]]:
    return [dict(r.payload) for r in services.repo.events(game_id) if r.type == "strike_recorded"]


# --- who should own a game --------------------------------------------------------------


@given(
    st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=6, unique=True),
    st.text(max_size=20),
)
def test_the_preferred_owner_is_one_of_the_members_whatever_their_order(
    members: list[str], game_id: str
) -> None:
    chosen = preferred_owner(game_id, members)
    assert chosen in members
    assert preferred_owner(game_id, list(reversed(members))) == chosen


def test_preferred_owners_spread_games_and_a_new_member_moves_only_its_share() -> None:
    games = [f"g-{i}" for i in range(3000)]
    three = ["a", "b", "c"]
    before = {g: preferred_owner(g, three) for g in games}
    counts = Counter(before.values())
    assert set(counts) == set(three) and min(counts.values()) > 800  # about 1000 each
    after = {g: preferred_owner(g, [*three, "d"]) for g in games}
    moved = [g for g in games if after[g] != before[g]]
    assert all(after[g] == "d" for g in moved)  # only games the newcomer takes change hands
    assert 500 < len(moved) < 1000  # about a quarter
    assert preferred_owner("g-1", []) is None


# --- fenced writes and races -------------------------------------------------------------


def test_an_owner_whose_lease_was_taken_writes_nothing_and_the_race_strikes_once(
    backend_settings: SettingsFactory,
) -> None:
    settings_ = backend_settings(run_driver=False, run_scheduler=False)

    async def scenario() -> None:
        async with process(settings_) as one, process(settings_) as two:
            state = await started_game(one, "race-1")
            seat, version = state.to_move, state.version
            name = GAME_LEASE + "race-1"
            old = one.store.acquire_lease(name, "owner-a", 60_000)
            assert old is not None
            one.store.release_lease(name, "owner-a")  # as if it had expired
            new = two.store.acquire_lease(name, "owner-b", 60_000)
            assert new is not None and new.epoch == old.epoch + 1

            with pytest.raises(LeaseLost):
                await one.games.commands.strike_at("race-1", seat, version, TIMEOUT, fence=old)
            assert strikes(one, "race-1") == []
            assert one.store.stream_version("game-race-1") == version

            # Both "owners" act on the same decision at once: only the lease holder lands.
            results = await asyncio.gather(
                one.games.commands.strike_at("race-1", seat, version, TIMEOUT, fence=old),
                two.games.commands.strike_at("race-1", seat, version, TIMEOUT, fence=new),
                return_exceptions=True,
            )
            # The stale owner writes nothing: refused by its fence, or, when the holder's
            # strike landed first (a busy machine), finding the decision already made.
            assert results[0] is None or isinstance(results[0], LeaseLost), results
            assert results[1] is not None and results[1].count == 1, results
            assert len(strikes(two, "race-1")) == 1

            # Two processes holding the same (valid) lease decide the same time-out twice at
            # once: it is decided at its version only, so one strike, one default move.
            moved = await two.games.load("race-1")
            results = await asyncio.gather(
                one.games.commands.strike_at(
                    "race-1", moved.to_move, moved.version, TIMEOUT, fence=new
                ),
                two.games.commands.strike_at(
                    "race-1", moved.to_move, moved.version, TIMEOUT, fence=new
                ),
            )
            assert sum(r is not None for r in results) == 1, results
            assert len(strikes(two, "race-1")) == 2

    asyncio.run(scenario())


def test_a_strike_asked_at_a_version_the_game_has_left_is_stale(
    make_settings: SettingsFactory,
) -> None:
    settings_ = make_settings(run_driver=False, run_scheduler=False)

    async def scenario() -> None:
        async with process(settings_) as one:
            state = await started_game(one, "stale-1")
            assert await one.games.commands.strike_at(
                "stale-1", state.to_move, state.version, TIMEOUT
            )
            after = await one.games.load("stale-1")
            # The time-out was already dealt with: asking again at the old version is a no-op.
            again = await one.games.commands.strike_at(
                "stale-1", state.to_move, state.version, TIMEOUT
            )
            assert again is None
            assert (await one.games.load("stale-1")).version == after.version
            assert len(strikes(one, "stale-1")) == 1

    asyncio.run(scenario())


# --- driving, hand-over, outage ----------------------------------------------------------


def test_a_graceful_stop_hands_a_game_over_before_its_lease_would_expire(
    make_settings: SettingsFactory,
) -> None:
    # Long leases: the hand-over can only come from the release, never from an expiry.
    settings_ = make_settings(lease_seconds=60.0, run_scheduler=False)

    async def scenario() -> None:
        async with process(settings_, run=True) as first:
            await waiting_game(first, "hand-1")
            await wait_until(lambda: "hand-1" in first.ownership.held, "the first to own it")
            held = first.store.leases(GAME_LEASE)[0]
            async with process(settings_, run=True) as second:
                assert "hand-1" not in second.ownership.held
                await first.ownership.stop()
                # The second's tick is 10 s here; its next one claims the released game.
                await second.ownership.tick()
                assert "hand-1" in second.ownership.held
                taken = second.store.leases(GAME_LEASE)[0]
                assert taken.owner == second.ownership.owner and taken.epoch == held.epoch + 1
                assert second.store.clock_ms() < held.expires_ms  # long before it would expire
                assert "hand-1" in second.driver.tasks
                assert second.ownership.report.takeovers == 1

    asyncio.run(scenario())


def test_games_spread_over_two_owners_and_each_is_driven_by_one(
    make_settings: SettingsFactory,
) -> None:
    settings_ = make_settings(lease_seconds=2.0, run_scheduler=False)

    async def scenario() -> None:
        async with process(settings_, run=True) as a, process(settings_, run=True) as b:
            a.players.create("waiter", "waiter", "bot", None)
            await wait_until(lambda: len(a.store.leases("driver:")) == 2, "both members")
            await a.ownership.tick()
            await b.ownership.tick()
            for i in range(12):
                await started_game(a if i % 2 else b, f"spread-{i}", WAITER_SEATS)
            await wait_until(lambda: len(a.store.leases(GAME_LEASE)) == 12, "every game claimed")
            await a.ownership.tick()
            await b.ownership.tick()
            assert not set(a.driver.tasks) & set(b.driver.tasks)
            assert len(a.driver.tasks) + len(b.driver.tasks) == 12
            owners = Counter(x.owner for x in a.store.leases(GAME_LEASE))
            assert set(owners) == {a.ownership.owner, b.ownership.owner}, owners
            assert a.ownership.report.unowned == 0 and a.ownership.report.live == 12
            assert a.ownership.report.owners == dict(owners)

    asyncio.run(scenario())


def test_a_database_outage_stops_driving_and_it_resumes_after(
    make_settings: SettingsFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_ = make_settings(lease_seconds=0.6, run_scheduler=False)

    async def scenario() -> None:
        async with process(settings_, run=True) as one:
            await waiting_game(one, "outage-1")
            await wait_until(lambda: "outage-1" in one.driver.tasks, "the game driven")
            real = one.store.renew_leases

            def down(owner: str, ttl_ms: int) -> Any:
                raise StoreUnavailable("database unavailable: connection refused")

            monkeypatch.setattr(one.store, "renew_leases", down)
            await wait_until(lambda: not one.driver.tasks, "driving to stop")
            assert not one.ownership.held
            assert one.ownership.report.error == "StoreUnavailable"
            monkeypatch.setattr(one.store, "renew_leases", real)
            await wait_until(lambda: "outage-1" in one.driver.tasks, "driving to resume")
            assert one.ownership.report.error is None

    asyncio.run(scenario())


def test_a_claim_that_commits_while_a_renewal_is_under_way_is_not_taken_for_lost(
    make_settings: SettingsFactory,
) -> None:
    """The renewal thread's statement can start before a claim commits and so not return its
    lease: that is no loss. (It was taken for one: the game was dropped while its lease, still
    this process's, was renewed for good, and nobody drove it again: a rolling-restart test
    hung on such a game.)"""
    settings_ = make_settings(lease_seconds=60.0, run_scheduler=False)  # renewals on demand

    async def scenario() -> None:
        async with process(settings_) as maker:  # not running: starts a game, claims nothing
            await waiting_game(maker, "race-1")
        async with process(settings_) as one:
            own = one.ownership
            acquire = own._acquire
            renewal: dict[str, Any] = {}

            def acquire_behind_a_renewal(game_ids: list[str]) -> Any:
                renewal["began"] = time.monotonic()
                renewal["result"] = own._renew_now()  # before the claim commits
                return acquire(game_ids)

            own._acquire = acquire_behind_a_renewal  # type: ignore[method-assign]
            await own.start()  # its first survey claims the game
            try:
                assert "race-1" in own.held
                assert not any(x.name == GAME_LEASE + "race-1" for x in renewal["result"])
                own._renewed(renewal["began"], renewal["result"])  # that renewal's answer
                assert "race-1" in own.held and "race-1" in one.driver.tasks
                await own.tick()
                assert "race-1" in own.held and "race-1" in one.driver.tasks
            finally:
                await own.stop()

    asyncio.run(scenario())


def test_a_lease_renewed_for_a_game_nothing_drives_is_given_back_and_the_game_driven(
    make_settings: SettingsFactory,
) -> None:
    settings_ = make_settings(lease_seconds=60.0, run_scheduler=False)

    async def scenario() -> None:
        async with process(settings_, run=True) as one:
            await waiting_game(one, "orphan-1")
            await wait_until(lambda: "orphan-1" in one.driver.tasks, "the game driven")
            epoch = one.store.leases(GAME_LEASE)[0].epoch
            # Dropped here while the database still gives the lease to this process.
            one.ownership._release_locally("orphan-1")
            assert "orphan-1" not in one.driver.tasks
            await one.ownership.tick()
            await wait_until(lambda: "orphan-1" in one.driver.tasks, "the game driven again")
            lease = one.store.leases(GAME_LEASE)[0]
            assert lease.owner == one.ownership.owner and lease.epoch == epoch + 1
            assert one.ownership.report.unowned == 0

    asyncio.run(scenario())


def test_ownership_started_again_on_another_event_loop_keeps_surveying(
    make_settings: SettingsFactory,
) -> None:
    """An app can be started, stopped and started again on a new loop (a second TestClient
    of one app, as Schemathesis makes): the survey loop must run in the second life too."""
    settings_ = make_settings(lease_seconds=0.6, run_scheduler=False)
    store = open_store(settings_)
    services = build_services(settings_, store)

    async def life() -> bool:
        await services.ownership.start()
        try:
            await asyncio.sleep(0.3)  # a few surveys
            return services.ownership.running
        finally:
            await services.ownership.stop()

    try:
        assert asyncio.run(life())
        assert asyncio.run(life())  # another loop
    finally:
        asyncio.run(services.push.aclose())
        store.close()
