"""The transparency log's Merkle tree, kept beside the event log (tables `log_nodes`,
`log_size`).

The tree is extended by `integrate` (a CT log's sequencer), not by appends: appends stay as
fast as before, and whoever wants a checkpoint first brings the tree up to the committed log.
Positions are dense and commit-ordered, so the events after the tree's size are exactly the
next leaves; `integrate` holds the `log_size` row's lock while it extends the tree, so
integrators in several processes take turns and never write a node twice. Each leaf writes
itself and the perfect subtrees it completes (two rows a leaf on average); a root or a proof
at any size the tree has reached reads only the O(log n) perfect subtrees it needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy import and_, func, or_, select, text, tuple_, update

from eventstore.decoding import EVENT_COLUMNS, _utc_from_text, as_utc
from eventstore.errors import EventStoreError
from eventstore.leaves import LeafKeys, event_leaf, no_keys
from eventstore.merkle import (
    CompactTree,
    Node,
    ProofError,
    consistency_ranges,
    fold,
    inclusion_ranges,
    proof_nodes,
    range_hash_from,
    range_nodes,
)
from eventstore.tables import EVENTS, LOG_NODES, LOG_SIZE

if TYPE_CHECKING:
    from eventstore.store import EventStore

BATCH: Final = 2000
"""Events hashed per transaction while the tree catches up."""


_PG_INSERT_NODES: Final = text(
    "INSERT INTO log_nodes (level, idx, hash) "
    "SELECT * FROM unnest(CAST(:levels AS smallint[]), CAST(:idxs AS bigint[]), "
    "CAST(:hashes AS bytea[]))"
)
"""PostgreSQL: every new node in one statement (an executemany is a round trip a row)."""
_SQLITE_INSERT_NODES: Final = "INSERT INTO log_nodes (level, idx, hash) VALUES (?, ?, ?)"


class TreeError(EventStoreError):
    """The stored tree cannot be extended or read: a node is missing, or the events after
    its size are not the next positions (a deleted or renumbered row)."""


_EVENT_COLUMNS: Final = EVENT_COLUMNS[:9]
"""An event's columns up to `recorded_at`: what its leaf covers (not the chain's hashes)."""


def _moment(value: datetime | str) -> datetime:
    return _utc_from_text(value) if isinstance(value, str) else as_utc(value)


def row_leaf(row: Any, key: bytes) -> bytes:
    """The leaf hash of an `events` row (the columns of `_EVENT_COLUMNS`)."""
    return event_leaf(
        position=row.position,
        stream_id=row.stream_id,
        version=row.version,
        event_id=row.event_id,
        type=row.type,
        schema_version=row.schema_version,
        payload=row.payload.encode(),
        meta=row.meta.encode(),
        recorded_at=_moment(row.recorded_at),
        key=key,
    )


class KeyCache:
    """Leaf keys looked up once per stream (a game's key costs a read of its seed)."""

    __slots__ = ("_keys", "_of")

    def __init__(self, leaf_keys: LeafKeys) -> None:
        self._of = leaf_keys
        self._keys: dict[str, bytes] = {}

    def __call__(self, stream_id: str) -> bytes:
        key = self._keys.get(stream_id)
        if key is None:
            key = self._keys[stream_id] = self._of(stream_id)
        return key


class LogTree:
    """The Merkle tree over a store's events: extend it, read roots and proofs."""

    def __init__(
        self, store: EventStore, leaf_keys: LeafKeys = no_keys, *, batch: int = BATCH
    ) -> None:
        self._store = store
        self._engines = store.engines
        self._lock = store._write_lock
        self._read_lock = store._read_lock
        self._leaf_keys = leaf_keys
        self._batch = batch
        self._for_update = store.backend == "postgresql"

    # --- growing -------------------------------------------------------------------------

    def size(self) -> int:
        """How many events the tree covers (the log may be longer: see `integrate`)."""
        with self._read_lock, self._engines.read.connect() as conn:
            return int(conn.execute(select(LOG_SIZE.c.size).where(LOG_SIZE.c.id == 1)).scalar_one())

    def integrate(self, up_to: int | None = None, *, limit: int | None = None) -> int:
        """Extend the tree over the committed events (to position `up_to` at most, and by
        `limit` events at most); the new size. Safe to call from any number of processes.

        A tree already at the log's head (or at `up_to`) costs one read and no write
        transaction: the background integrator and the public checkpoint call this often, and
        a write transaction would take the row lock (PostgreSQL) or the append lock (SQLite)."""
        size, head = self._size_and_head()
        if size >= (head if up_to is None else min(head, up_to)):
            return size
        if limit is not None:
            bound = size + limit
            up_to = bound if up_to is None else min(up_to, bound)
        keys = KeyCache(self._leaf_keys)
        while True:
            size, more = self._extend(keys, up_to)
            if not more:
                return size

    def _size_and_head(self) -> tuple[int, int]:
        """The tree's size and the last committed position, read together."""
        query = select(
            select(LOG_SIZE.c.size).where(LOG_SIZE.c.id == 1).scalar_subquery(),
            select(func.coalesce(func.max(EVENTS.c.position), 0)).scalar_subquery(),
        )
        with self._read_lock, self._engines.read.connect() as conn:
            size, head = conn.execute(query).one()
        return int(size), int(head)

    def _extend(self, keys: KeyCache, up_to: int | None) -> tuple[int, bool]:
        query = select(LOG_SIZE.c.size).where(LOG_SIZE.c.id == 1)
        if self._for_update:
            query = query.with_for_update()
        with self._lock, self._engines.write.begin() as conn:
            size = int(conn.execute(query).scalar_one())
            limit = self._batch if up_to is None else min(self._batch, up_to - size)
            if limit <= 0:
                return size, False
            rows = conn.execute(
                select(*_EVENT_COLUMNS)
                .where(EVENTS.c.position > size)
                .order_by(EVENTS.c.position)
                .limit(limit)
            ).all()
            if not rows:
                return size, False
            tree = CompactTree(size, self._read(conn, range_nodes(0, size)))
            made: list[tuple[int, int, bytes]] = []
            for row in rows:
                if row.position != tree.size + 1:
                    raise TreeError(
                        f"the log has no event at position {tree.size + 1} (the next is "
                        f"{row.position}): a row was deleted or renumbered"
                    )
                for (level, idx), h in tree.append(row_leaf(row, keys(row.stream_id))):
                    made.append((level, idx, h))
            self._insert(conn, made)
            conn.execute(update(LOG_SIZE).where(LOG_SIZE.c.id == 1).values(size=tree.size))
            return tree.size, len(rows) == limit

    def recompute(self, batch: int = 5000) -> Iterator[tuple[int, bytes]]:
        """(position, leaf hash) of every stored event, re-derived from its row, in position
        order (what an auditor compares with the stored tree and a checkpoint)."""
        keys = KeyCache(self._leaf_keys)
        position = 0
        while True:
            with self._read_lock, self._engines.read.connect() as conn:
                rows = conn.execute(
                    select(*_EVENT_COLUMNS)
                    .where(EVENTS.c.position > position)
                    .order_by(EVENTS.c.position)
                    .limit(batch)
                ).all()
            for row in rows:
                yield int(row.position), row_leaf(row, keys(row.stream_id))
            if len(rows) < batch:
                return
            position = rows[-1].position

    def _insert(self, conn: Any, made: list[tuple[int, int, bytes]]) -> None:
        if not made:
            return
        if not self._for_update:
            # SQLite: in process, no round trips. The driver's own executemany: the Core
            # insert's per-value bind processing was about a quarter of the integrator's time.
            conn.exec_driver_sql(_SQLITE_INSERT_NODES, made)
            return
        levels, idxs, hashes = zip(*made, strict=True)
        conn.execute(
            _PG_INSERT_NODES,
            {"levels": list(levels), "idxs": list(idxs), "hashes": list(hashes)},
        )

    # --- reading -------------------------------------------------------------------------

    def _read(self, conn: Any, nodes: Iterable[Node]) -> list[bytes]:
        """The hashes of `nodes`, in the order given."""
        wanted = list(nodes)
        found = self._fetch(conn, wanted)
        return [found[n] for n in wanted]

    def _fetch(self, conn: Any, nodes: Iterable[Node]) -> dict[Node, bytes]:
        wanted = set(nodes)
        if not wanted:
            return {}
        found: dict[Node, bytes] = {}
        ordered = sorted(wanted)
        for i in range(0, len(ordered), 500):
            chunk = ordered[i : i + 500]
            # PostgreSQL plans a row-value IN list well; SQLite scans the table for one (it
            # finds each (level, idx) by the primary key when the pairs are ORed).
            if self._for_update:
                cond: Any = tuple_(LOG_NODES.c.level, LOG_NODES.c.idx).in_(chunk)
            else:
                cond = or_(
                    *(and_(LOG_NODES.c.level == lv, LOG_NODES.c.idx == ix) for lv, ix in chunk)
                )
            for level, idx, h in conn.execute(
                select(LOG_NODES.c.level, LOG_NODES.c.idx, LOG_NODES.c.hash).where(cond)
            ):
                found[(level, idx)] = bytes(h)
        missing = wanted - found.keys()
        if missing:
            raise TreeError(f"the stored tree lacks node {min(missing)} (level, index)")
        return found

    def _within(self, size: int) -> None:
        have = self.size()
        if size > have:
            raise ProofError(f"the tree has {have} leaves, not {size}")

    def root(self, size: int | None = None) -> tuple[int, bytes]:
        """(size, root hash) of the tree at `size` (default: as far as it is integrated)."""
        with self._read_lock, self._engines.read.connect() as conn:
            have = int(conn.execute(select(LOG_SIZE.c.size).where(LOG_SIZE.c.id == 1)).scalar_one())
            if size is None:
                size = have
            elif type(size) is not int or not 0 <= size <= have:
                raise ProofError(f"the tree has {have} leaves, not {size}")
            return size, fold(self._read(conn, range_nodes(0, size)))

    def leaves(self, start: int, end: int) -> Iterator[tuple[int, bytes]]:
        """The stored leaf hashes with indexes in [start, end), in order, read in batches."""
        while start < end:
            stop = min(end, start + 10_000)
            with self._read_lock, self._engines.read.connect() as conn:
                rows = conn.execute(
                    select(LOG_NODES.c.idx, LOG_NODES.c.hash)
                    .where(LOG_NODES.c.level == 0, LOG_NODES.c.idx >= start, LOG_NODES.c.idx < stop)
                    .order_by(LOG_NODES.c.idx)
                ).all()
            for idx, h in rows:
                yield int(idx), bytes(h)
            start = stop

    def inclusion(self, index: int, size: int) -> tuple[bytes, list[bytes]]:
        """(leaf hash, audit path) of leaf `index` in the tree of `size` (RFC 9162 2.1.3)."""
        ranges = inclusion_ranges(index, size)
        self._within(size)
        return self._hashes(ranges, extra=[(0, index)])

    def consistency(self, first: int, second: int) -> list[bytes]:
        """The proof that the tree of `second` leaves extends that of `first` (2.1.4)."""
        ranges = consistency_ranges(first, second)
        self._within(second)
        return self._hashes(ranges)[1]

    def _hashes(
        self, ranges: Sequence[tuple[int, int]], extra: Sequence[Node] = ()
    ) -> tuple[bytes, list[bytes]]:
        with self._read_lock, self._engines.read.connect() as conn:
            found = self._fetch(conn, proof_nodes(ranges) | set(extra))
        of = range_hash_from(found)
        first = found[extra[0]] if extra else b""
        return first, [of(start, end) for start, end in ranges]
