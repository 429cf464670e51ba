"""The transparency log as the service offers it: the tree brought up to date, checkpoints
signed, proofs in base64."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import threading
import time

import structlog

from eventstore import EventStore
from eventstore.logtree import LogTree
from services.tlog.notes import Checkpoint, Signer
from tournament.log_keys import game_leaf_keys

BATCH = 500
"""Events the integrator hashes a transaction."""
CHECKPOINT_EVENTS = 2000
"""At most this many events are integrated for one checkpoint request."""
INTERVAL = 1.0
"""Seconds between the background integrator's passes."""

log = structlog.get_logger("king.tlog")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


class TransparencyLog:
    """Checkpoints and proofs over a store's events, signed by `signer`."""

    def __init__(self, store: EventStore, signer: Signer) -> None:
        # small batches: on SQLite each holds the write lock that appends wait for
        self.tree = LogTree(store, game_leaf_keys(store), batch=BATCH)
        self.signer = signer
        self._lock = threading.Lock()  # one integrator a process; processes take turns in SQL
        self._recent: tuple[float, str, Checkpoint] | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def origin(self) -> str:
        return self.signer.name

    def integrate(self, limit: int | None = None) -> int:
        with self._lock:
            return self.tree.integrate(limit=limit)

    def checkpoint(self) -> str:
        """The signed note of the tree extended over every committed event."""
        return self.signed()[0]

    def signed(self) -> tuple[str, Checkpoint]:
        """A checkpoint of the tree extended by at most `CHECKPOINT_EVENTS` events: the
        background integrator keeps it near the log's head, and a request never waits for a
        long catch-up (the checkpoint then covers a little less than the whole log)."""
        self.integrate(limit=CHECKPOINT_EVENTS)
        size, root = self.tree.root()
        checkpoint = Checkpoint(self.origin, size, root)
        return self.signer.sign(checkpoint.text()), checkpoint

    def recent(self, max_age: float = 5.0) -> tuple[str, Checkpoint]:
        """A checkpoint (note and content) signed at most `max_age` seconds ago: pages show
        one without extending the tree on every view."""
        now = time.monotonic()
        kept = self._recent
        if kept is None or now - kept[0] > max_age:
            kept = self._recent = (now, *self.signed())
        return kept[1], kept[2]

    async def start(self) -> None:
        """Keep the tree near the log's head in the background (every process may: the
        integrators take turns on the size row)."""
        self._task = asyncio.create_task(self._run(), name="tlog-integrator")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        failing = False
        while True:
            try:
                await asyncio.to_thread(self.integrate)
                failing = False
            except Exception as exc:  # a broken log or a busy database: said once, retried
                if not failing:
                    log.warning("tlog_integrate_failed", error=type(exc).__name__)
                failing = True
            await asyncio.sleep(INTERVAL)

    def key(self) -> str:
        return str(self.signer.verifier)

    def _reach(self, size: int) -> None:
        """Extend the tree when a proof asks for a size it has not reached yet."""
        if size > self.tree.size():
            self.integrate(limit=CHECKPOINT_EVENTS)

    def inclusion(self, index: int, size: int) -> dict[str, object]:
        self._reach(size)
        leaf, path = self.tree.inclusion(index, size)
        return {
            "index": index,
            "size": size,
            "leaf_hash": b64(leaf),
            "proof": [b64(p) for p in path],
        }

    def consistency(self, first: int, second: int) -> dict[str, object]:
        self._reach(second)
        path = self.tree.consistency(first, second)
        return {"first": first, "second": second, "proof": [b64(p) for p in path]}
