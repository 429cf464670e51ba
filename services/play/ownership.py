"""Game ownership: every live game is driven by exactly one process at a time.

Each driving process holds a lease per game it drives (`game:<id>` in the event store's lease
table) and one lease of membership (`driver:<owner>`), and renews them all in one statement
every tick (a sixth of the lease). A lease that stops being renewed (the process was killed,
paused, or cut off from the database) expires, and the others take its games over at their
next tick: within `lease_seconds` plus one tick. Every write the driver makes carries its
game's lease as a fence, checked inside the append's transaction, so an owner that lost a
game can never write to it again, even if it wakes up believing otherwise.

New and orphaned games are spread by rendezvous hashing over the live members: the member
whose hash of (game, member) is highest claims it at once; any member claims a game that has
stayed unowned for a whole tick, so a wrong view of the members only delays a claim by a tick.
A graceful stop releases every lease, so the others take the games at their next tick.

A process that does not drive (`--no-driver`) still runs the tick to count the live games
without an owner, so its health check tells the truth. Renewals run on a thread of their own
and lease work on a small pool of its own, so neither waits behind the games' database work.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from eventstore import EventStore, Lease
from services.observability import Metrics, error_fields, get_logger
from services.play.driver import GameDriver
from services.play.service import GameService

log = get_logger("king.ownership")
T = TypeVar("T")
CLAIM_BATCH = 200  # leases taken per statement
EXPIRY_MARGIN = 0.02  # seconds after another owner's lease expires before looking again

GAME_LEASE = "game:"
MEMBER_LEASE = "driver:"


def owner_name() -> str:
    """This process's owner id: host, pid and a random part (a restart is a new owner)."""
    return f"{socket.gethostname()[:60]}:{os.getpid()}:{secrets.token_hex(4)}"


def _lease_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=2, thread_name_prefix="ownership")


def preferred_owner(game_id: str, members: Sequence[str]) -> str | None:
    """The member that should own `game_id` (rendezvous hashing): the same answer in every
    process that sees the same members, and only 1/n of the games move when one joins."""
    if not members:
        return None
    return max(members, key=lambda m: hashlib.blake2b(f"{game_id}\0{m}".encode()).digest())


@dataclass
class OwnershipReport:
    """What the last tick saw, for /health/ready and /metrics."""

    live: int = 0
    unowned: int = 0
    unowned_over_bound: int = 0
    owned_here: int = 0
    owners: dict[str, int] = field(default_factory=dict)
    members: int = 0
    takeovers: int = 0
    renewed_at: float | None = None  # monotonic time of the last successful renewal
    error: str | None = None


class GameOwnership:
    def __init__(
        self,
        store: EventStore,
        games: GameService,
        driver: GameDriver,
        metrics: Metrics,
        lease_seconds: float,
        drive: bool = True,
        owner: str | None = None,
    ) -> None:
        self.store = store
        self.games = games
        self.driver = driver
        self.metrics = metrics
        self.drive = drive
        self.owner = owner or owner_name()
        self.lease_seconds = lease_seconds
        self.ttl_ms = max(int(lease_seconds * 1000), 1)
        self.tick_seconds = max(lease_seconds / 6, 0.05)
        self.held: dict[str, Lease] = {}
        self.report = OwnershipReport()
        self._claimed_at: dict[str, float] = {}
        self._unowned_since: dict[str, float] = {}
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._members: list[str] = []
        self._running = False
        self._claiming: set[str] = set()
        # Lease work never queues behind the games' own database work in the default
        # executor: a renewal held up for a lease's length would lose every game.
        self._pool = _lease_pool()
        self._renewer: threading.Thread | None = None
        self._halt = threading.Event()
        self._loop_ref: asyncio.AbstractEventLoop | None = None
        self._next_expiry: float | None = None
        driver.on_over.append(self._over)
        driver.on_lost.append(self._lost)
        if drive:
            games.on_start.append(self.consider)

    @property
    def bound_seconds(self) -> float:
        """How long a game may go without an owner: a lease, then one tick to notice."""
        return self.lease_seconds + self.tick_seconds

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def _io(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, partial(fn, *args))

    # --- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        self._running = True
        self._loop_ref = asyncio.get_running_loop()
        # An Event belongs to the loop that first waits on it: an app started again on another
        # loop (a second TestClient, Schemathesis's own) needs one of this loop's.
        self._wake = asyncio.Event()
        self._halt.clear()
        if self.drive:
            await self.driver.start()
        await self.tick()
        self._task = self._loop_ref.create_task(self._surveys(), name="ownership")
        if self.drive:
            self._renewer = threading.Thread(
                target=self._renewals, name="lease-renewer", daemon=True
            )
            self._renewer.start()
        log.info("ownership_started", owner=self.owner, drive=self.drive)

    async def stop(self) -> None:
        """Stop driving and hand every game over at once (release the leases)."""
        self._running = False
        self._halt.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        if self._renewer is not None:
            await self._io(self._renewer.join, 30)
            self._renewer = None
        await self.driver.stop()
        if self.drive:
            held = len(self.held)
            self.held.clear()
            self._claimed_at.clear()
            try:
                await self._io(self.store.release_leases, self.owner)
                log.info("ownership_released", owner=self.owner, games=held)
            except Exception as exc:  # the leases then simply expire
                log.warning("ownership_release_failed", owner=self.owner, **error_fields(exc))
        self.metrics.games_owned.set(0)
        # Its threads would outlive the app (a test suite made hundreds); a later start gets
        # a fresh pool, whose threads start only when used.
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = _lease_pool()

    def _renewals(self) -> None:
        """The renewal thread: one statement a tick, whatever the event loop is doing; the
        loop applies the answer."""
        loop = self._loop_ref
        assert loop is not None
        while not self._halt.wait(self.tick_seconds):
            began = time.monotonic()
            result: list[Lease] | Exception
            try:
                result = self._renew_now()
            except Exception as exc:
                result = exc
            try:
                loop.call_soon_threadsafe(self._renewed, began, result)
            except RuntimeError:  # the loop has closed: the process is stopping
                return

    async def _surveys(self) -> None:
        while self._running:
            wait = self.tick_seconds
            if self._next_expiry is not None:
                wait = min(wait, max(self._next_expiry - time.monotonic(), 0.0))
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._wake.wait()
            self._wake.clear()
            try:
                await self._survey()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # never let the loop die: log, and the next tick retries
                log.warning("ownership_survey_failed", **error_fields(exc))

    # --- renewing --------------------------------------------------------------------

    async def tick(self) -> None:
        """Renew and survey once, in order (at start, and for tests)."""
        if self.drive:
            began = time.monotonic()
            result: list[Lease] | Exception
            try:
                result = await self._io(self._renew_now)
            except Exception as exc:
                result = exc
            if not self._renewed(began, result):
                return
        await self._survey()

    def _renew_now(self) -> list[Lease]:
        renewed = self.store.renew_leases(self.owner, self.ttl_ms)
        if not any(lease.name == MEMBER_LEASE + self.owner for lease in renewed):
            member = self.store.acquire_lease(MEMBER_LEASE + self.owner, self.owner, self.ttl_ms)
            if member is None:  # owner ids are unique per process start: cannot happen
                raise RuntimeError("membership lease held by another process")
        return renewed

    def _renewed(self, began: float, result: list[Lease] | Exception) -> bool:
        """Apply a renewal's answer (on the loop): drop the games whose lease is gone. False:
        the database did not answer (after a lease's length of that, stop driving)."""
        if not self._running and self._task is not None:
            return False
        if isinstance(result, Exception):
            self.metrics.lease_failures.inc()
            self.report.error = type(result).__name__
            last = self.report.renewed_at
            # Judged on this process's own clock from the start of the last renewal that
            # worked: never later than the database's expiry of those leases.
            if self.held and (last is None or time.monotonic() - last >= self.lease_seconds):
                log.warning(
                    "ownership_suspended",
                    owner=self.owner,
                    games=len(self.held),
                    reason="the leases could not be renewed",
                    **error_fields(result),
                )
                for game_id in list(self.held):
                    self._release_locally(game_id)
            else:
                log.warning("lease_renewal_failed", owner=self.owner, **error_fields(result))
            return False
        if self.report.renewed_at is None or began > self.report.renewed_at:
            self.report.renewed_at = began
        self.report.error = None
        kept = {lease.name[len(GAME_LEASE) :]: lease for lease in result if _is_game(lease)}
        for game_id in list(self.held):
            if game_id in kept:
                self.held[game_id] = kept[game_id]
            elif self._claimed_at.get(game_id, 0.0) < began:
                # Claimed (committed) before this renewal began, so the renewal saw the lease:
                # missing now, it expired or was taken. A claim that committed while the
                # renewal was under way is judged by the next one.
                log.warning("lease_lost", owner=self.owner, game_id=game_id)
                self._release_locally(game_id)
        orphans = [g for g in kept if g not in self.held and g not in self._claiming]
        if orphans and self._running:
            # Leases renewed for games nothing here drives (dropped here while the database
            # still gave them to this process): renewed, they would keep every other process
            # off those games for good. Given back, the games are claimed as usual.
            log.warning("leases_given_back", owner=self.owner, games=len(orphans))
            asyncio.get_running_loop().create_task(self._give_back(orphans))
        return True

    async def _give_back(self, game_ids: list[str]) -> None:
        try:
            for game_id in game_ids:
                await self._io(self.store.release_lease, GAME_LEASE + game_id, self.owner)
        except Exception as exc:  # the next renewal finds them again
            log.warning("lease_give_back_failed", owner=self.owner, **error_fields(exc))
        self._wake.set()  # a survey now: the games have no owner

    # --- claiming --------------------------------------------------------------------

    async def _survey(self) -> None:
        """Count owners and claim the games that have none (this process's share of them)."""
        live, leases = await self._io(self._read_ownership)
        members = sorted(x.owner for x in leases if x.name.startswith(MEMBER_LEASE))
        owners: dict[str, str] = {}
        for lease in leases:
            if _is_game(lease):
                owners[lease.name[len(GAME_LEASE) :]] = lease.owner
        self._members = members
        now = time.monotonic()
        live_set = set(live)
        for game_id in list(self._unowned_since):
            if game_id not in live_set or game_id in owners:
                del self._unowned_since[game_id]
        unowned = [g for g in live if g not in owners]
        for game_id in unowned:
            self._unowned_since.setdefault(game_id, now)
        if self.drive and self._running:
            mine = [
                g
                for g in unowned
                if now - self._unowned_since[g] >= self.tick_seconds
                or preferred_owner(g, members) == self.owner
            ]
            for game_id in await self._claim(mine):
                owners[game_id] = self.owner
        counts: dict[str, int] = {}
        for game_id in live:
            holder = owners.get(game_id)
            if holder is not None:
                counts[holder] = counts.get(holder, 0) + 1
        still = [g for g in live if g not in owners]
        report = self.report
        report.live = len(live)
        report.unowned = len(still)
        report.unowned_over_bound = sum(
            1 for g in still if now - self._unowned_since.get(g, now) > self.bound_seconds
        )
        report.owners = counts
        report.members = len(members)
        report.owned_here = len(self.held)
        self.metrics.games_unowned.set(report.unowned)
        self.metrics.games_owned.set(report.owned_here)
        self.metrics.game_owners.set(report.members)

    def _read_ownership(self) -> tuple[list[str], list[Lease]]:
        live, leases = self.games.live_ids(), self.store.leases("")
        # When the first of another owner's leases runs out, in this process's clock: the
        # next survey is due then, not a tick later (a dead owner's games are taken at once).
        foreign = [x.expires_ms for x in leases if x.owner != self.owner]
        if foreign:
            wait = (min(foreign) - self.store.clock_ms()) / 1000
            self._next_expiry = time.monotonic() + max(wait, 0.0) + EXPIRY_MARGIN
        else:
            self._next_expiry = None
        return live, leases

    def _acquire(self, game_ids: list[str]) -> list[Lease]:
        taken = []
        for at in range(0, len(game_ids), CLAIM_BATCH):
            names = [GAME_LEASE + g for g in game_ids[at : at + CLAIM_BATCH]]
            taken += self.store.acquire_leases(names, self.owner, self.ttl_ms)
        return taken

    async def _claim(self, game_ids: Sequence[str]) -> list[str]:
        """Take the games' leases (one batch on the ownership thread) and drive those won."""
        wanted = [g for g in game_ids if g not in self.held and g not in self._claiming]
        if not wanted:
            return []
        self._claiming.update(wanted)
        try:
            leases = await self._io(self._acquire, wanted)
        finally:
            self._claiming.difference_update(wanted)
        # When the claim had committed: a renewal that began later saw these leases.
        committed = time.monotonic()
        won = []
        for lease in leases:
            game_id = lease.name[len(GAME_LEASE) :]
            if not self._running:
                break
            self.held[game_id] = lease
            self._claimed_at[game_id] = committed
            self._unowned_since.pop(game_id, None)
            if lease.epoch > 1:
                self.report.takeovers += 1
                self.metrics.takeovers.inc()
                log.info("game_taken_over", owner=self.owner, game_id=game_id, epoch=lease.epoch)
            else:
                log.info("game_claimed", owner=self.owner, game_id=game_id)
            # A state cached from before someone else drove the game must not be trusted.
            self.games.forget(game_id)
            self.driver.launch(game_id, lease)
            won.append(game_id)
        return won

    # --- events ----------------------------------------------------------------------

    def consider(self, game_id: str) -> None:
        """A game just started (here, or elsewhere as the feed tells): claim it now if this
        process is its preferred owner; otherwise its owner will, or the next tick."""
        if not self.drive or not self._running or game_id in self.held:
            return
        members = self._members or [self.owner]
        if preferred_owner(game_id, members) == self.owner:
            asyncio.get_running_loop().create_task(self._claim_quietly(game_id))

    async def _claim_quietly(self, game_id: str) -> None:
        try:
            await self._claim([game_id])
        except Exception as exc:  # the tick will try again
            log.warning("game_claim_failed", game_id=game_id, **error_fields(exc))

    def _release_locally(self, game_id: str) -> None:
        self.held.pop(game_id, None)
        self._claimed_at.pop(game_id, None)
        self.driver.drop(game_id)
        self.games.forget(game_id)

    def _lost(self, game_id: str) -> None:
        """The driver found the lease gone while writing: stop, and let the tick re-check."""
        self.held.pop(game_id, None)
        self._claimed_at.pop(game_id, None)
        self.games.forget(game_id)
        self._wake.set()

    def _over(self, game_id: str) -> None:
        """A driven game ended: its lease has nothing left to guard."""
        self._claimed_at.pop(game_id, None)
        if self.held.pop(game_id, None) is not None:
            asyncio.get_running_loop().create_task(self._delete(game_id))

    async def _delete(self, game_id: str) -> None:
        try:
            await self._io(self.store.delete_lease, GAME_LEASE + game_id)
        except Exception as exc:  # harmless: an expired lease of a finished game is ignored
            log.info("lease_delete_failed", game_id=game_id, **error_fields(exc))


def _is_game(lease: Lease) -> bool:
    return lease.name.startswith(GAME_LEASE)
