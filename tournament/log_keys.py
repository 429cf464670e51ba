"""The leaf keys of King's streams in the transparency log (eventstore.leaves).

A game's leaves are keyed with a key derived from its secret shuffle seed, so while the game
is live nobody — not a seat that knows 39 of the 52 cards — can test guessed hands against a
leaf hash; once the seed is revealed (`seed_revealed`, or the record's `server_seed`) anyone
can recompute every leaf. Other streams hold no secrets: their key is empty.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections import OrderedDict

from eventstore import EventStore
from eventstore.leaves import LeafKeys
from tournament.games import SEED_PREFIX, STREAM_PREFIX

LEAF_KEY_LABEL = b"king-tlog-leaf-key/1"


def leaf_key(stream_id: str, seed_hex: str | None) -> bytes:
    """HMAC-SHA256(seed, label || 0x0A || stream id) for a game with a seed, else b""."""
    if not stream_id.startswith(STREAM_PREFIX) or not seed_hex:
        return b""
    message = LEAF_KEY_LABEL + b"\n" + stream_id.encode()
    return hmac.new(bytes.fromhex(seed_hex), message, hashlib.sha256).digest()


KEYS_KEPT = 4096  # the games whose leaf keys one process keeps (the live ones, in practice)


def game_leaf_keys(store: EventStore) -> LeafKeys:
    """Leaf keys from the seeds sealed beside the log, each read once: a sealed seed never
    changes, and the log integrates a live game's events every second (one read of its seed
    each time cost a third of a statement per action). Kept in memory only, like the seeds
    the driving process deals from; a game with no seed is asked again next time."""
    kept: OrderedDict[str, bytes] = OrderedDict()
    lock = threading.Lock()

    def of(stream_id: str) -> bytes:
        if not stream_id.startswith(STREAM_PREFIX):
            return b""
        with lock:
            key = kept.get(stream_id)
            if key is not None:
                kept.move_to_end(stream_id)
                return key
        seed = store.unseal(SEED_PREFIX + stream_id[len(STREAM_PREFIX) :])
        key = leaf_key(stream_id, seed)
        if key:
            with lock:
                kept[stream_id] = key
                if len(kept) > KEYS_KEPT:
                    kept.popitem(last=False)
        return key

    return of
