"""The transparency log as the service offers it: the tree brought up to date, checkpoints
signed, proofs in base64."""

from __future__ import annotations

import base64
import threading
import time

from eventstore import EventStore
from eventstore.logtree import LogTree
from services.tlog.notes import Checkpoint, Signer
from tournament.log_keys import game_leaf_keys


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


class TransparencyLog:
    """Checkpoints and proofs over a store's events, signed by `signer`."""

    def __init__(self, store: EventStore, signer: Signer) -> None:
        self.tree = LogTree(store, game_leaf_keys(store))
        self.signer = signer
        self._lock = threading.Lock()  # one integrator a process; processes take turns in SQL
        self._recent: tuple[float, str, Checkpoint] | None = None

    @property
    def origin(self) -> str:
        return self.signer.name

    def integrate(self) -> int:
        with self._lock:
            return self.tree.integrate()

    def checkpoint(self) -> str:
        """The signed note of the tree extended over every committed event."""
        return self.signed()[0]

    def signed(self) -> tuple[str, Checkpoint]:
        self.integrate()
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

    def key(self) -> str:
        return str(self.signer.verifier)

    def _reach(self, size: int) -> None:
        """Extend the tree when a proof asks for a size it has not reached yet."""
        if size > self.tree.size():
            self.integrate()

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
