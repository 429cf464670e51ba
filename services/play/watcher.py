"""Wake-ups across processes: follow the store's global feed and tell this process of writes
made by the others.

Every process writes through its own GameService and wakes its own streams and driver at once
(play.live). When several `king serve` processes share one database, a move posted to
one must wake the streams and the driver of the others too. The watcher tails the event
store's feed on a thread (on PostgreSQL a LISTEN/NOTIFY wake-up makes that immediate; on
SQLite it polls every `poll_seconds`) and, on the event loop:
  * notifies each game's newest version, so streams and waits in this process move on;
  * tells this process's ownership of a game created elsewhere, so its preferred owner
    claims it at once (play.ownership; the ownership tick is the safety net).
Correctness never rests on it: streams and the driver re-read the store after `poll_seconds`
anyway. It only makes another process's writes as prompt as this one's.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from eventstore import EventStore, RecordedEvent
from eventstore.subscription import CatchUpSubscription
from services.observability import error_fields, get_logger
from services.play.service import GameService
from services.record_import import origin_of
from tournament.games import STREAM_PREFIX

log = get_logger("king.watcher")

_CREATED = "game_created"
_OVER = "seed_revealed"
# Events the games index folds (services.projections.GamesProjection).
INDEXED = frozenset({"table_opened", "game_created", "game_ended", "seed_revealed"})


@dataclass(frozen=True, slots=True)
class GameChanges:
    """What a batch of the feed says about games: each one's newest version, those created
    and those over in it, and each one's events in order."""

    versions: dict[str, int]
    created: list[str]
    over: list[str]
    records: dict[str, list[RecordedEvent]]


def game_changes(batch: Sequence[RecordedEvent]) -> GameChanges:
    changes = GameChanges({}, [], [], {})
    for recorded in batch:
        if not recorded.stream_id.startswith(STREAM_PREFIX):
            continue
        game_id = recorded.stream_id[len(STREAM_PREFIX) :]
        changes.versions[game_id] = max(changes.versions.get(game_id, 0), recorded.version)
        changes.records.setdefault(game_id, []).append(recorded)
        if recorded.type == _CREATED and origin_of(recorded.meta) is None:
            # An imported game (its first event names its origin) is a record: nobody
            # drives it, so no process is told to claim it.
            changes.created.append(game_id)
        elif recorded.type == _OVER:
            changes.over.append(game_id)
    return changes


class StoreWatcher:
    def __init__(
        self,
        store: EventStore,
        games: GameService,
        on_created: Callable[[str], None],
        poll_seconds: float,
    ) -> None:
        self.store = store
        self.games = games
        self.metrics = games.metrics
        self.on_created = on_created
        self.poll_seconds = poll_seconds
        self._subscription: CatchUpSubscription | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = threading.Event()
        # Called on the watcher's thread with each batch; a callable returned is run on the
        # event loop (the lobby folds its tables here and wakes its streams there).
        self.batch_listeners: list[
            Callable[[Sequence[RecordedEvent]], Callable[[], None] | None]
        ] = []

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    async def start(self) -> None:
        """Follow the feed from its head now: what came before is in the store for any reader."""
        self._loop = asyncio.get_running_loop()
        self._stopping.clear()
        head = await asyncio.to_thread(self.store.head_position)
        self._subscription = self.store.subscribe(head + 1, poll_interval=self.poll_seconds)
        self.metrics.feed_position.set(head)
        self._thread = threading.Thread(target=self._follow, name="store-watcher", daemon=True)
        self._thread.start()

    async def stop(self) -> None:
        self._stopping.set()
        if self._subscription is not None:
            self._subscription.close()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, self.poll_seconds + 5)
        self._thread = self._subscription = None

    def _follow(self) -> None:
        sub, loop = self._subscription, self._loop
        assert sub is not None and loop is not None
        failures = 0
        while not sub.closed:
            try:
                batch = sub.next_batch()
                failures = 0
            except Exception as exc:  # the database away for a moment: wait, then go on
                failures += 1
                self.metrics.feed_errors.inc()
                log.warning("watcher_error", **error_fields(exc))
                self._stopping.wait(min(self.poll_seconds * 2**failures, 30.0))
                continue
            if batch:
                self.metrics.feed_position.set(batch[-1].position)
                if any(r.type in INDEXED for r in batch):
                    # Fold starts and ends into the games index before telling anyone, so
                    # what they read next already shows them.
                    self.games.catch_up()
            for listener in self.batch_listeners if batch else ():
                then = listener(batch)
                if then is not None:
                    try:
                        loop.call_soon_threadsafe(then)
                    except RuntimeError:  # the loop has closed: the process is stopping
                        return
            changes = game_changes(batch)
            if changes.versions:
                try:
                    loop.call_soon_threadsafe(self._deliver, changes)
                except RuntimeError:  # the loop has closed: the process is stopping
                    return

    def _deliver(self, changes: GameChanges) -> None:
        live = self.games.live
        for game_id in changes.versions:
            live.absorb(game_id, changes.records[game_id])
        for game_id in changes.created:
            self.on_created(game_id)  # a no-op where nothing drives or it is owned here
        for game_id in changes.over:
            self.games.release(game_id)
        if changes.created or changes.over:
            self.games.games_changed()
