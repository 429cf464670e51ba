"""PostgreSQL appends in one round trip: `eventstore_append` (migration 0004) on an autocommit
connection, with hashes built from a cache of stream heads.

The hash chain is computed here, so it needs each stream's head (version, head hash) before
the write. Reading it first would cost a round trip, so the heads this process last wrote or
read are cached, and the server-side function checks, under the append lock, that every
stream's head is still the one the hashes were built on. When it is not (another process
appended) the function writes nothing and says so; the heads are read and the append is
tried once more. Whenever an expected version differs from the head known here (a conflict,
or a retried append), or the second try finds a head moved again, nothing has been written
and the caller takes the general path (`EventStore._write_tx`: read the heads under the lock,
decide conflicts, idempotent retries and `GroupConflict` exactly as on SQLite), which
refreshes the cache. So the cache only ever decides how fast an append is, never whether it
lands or what it raises: that is decided under the lock, on the database's own rows.

One call: lock, fence (`LeaseLost`: nothing written), heads, ``max(position) + 1``, events,
stream rows, ``pg_notify``, commit. The connections are kept out of the pool while idle (at
most `MAX_IDLE`), so an append skips the pool's checkout ping too; a kept connection found
dead is dropped and the append goes the general path, whose checkout pings a fresh one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Final, cast

import orjson

from eventstore.backends import Engines
from eventstore.canonical import GENESIS_HASH, chain_hash, event_document
from eventstore.errors import LeaseLost
from eventstore.leases import Lease
from eventstore.records import RecordedEvent, StreamState
from eventstore.validation import PreparedAppend

MAX_IDLE: Final = 2
"""Connections kept for appends while idle (each is one out of the pool's)."""

MAX_CACHED_HEADS: Final = 100_000
"""Stream heads remembered; the oldest is forgotten beyond (it then costs one read)."""

_LEASE_LOST: Final = -1
_HEAD_MOVED: Final = -2

_CALL: Final = (
    "SELECT eventstore_append(%s, %s::text, %s::text, %s::bigint, "
    "%s::text[], %s::bigint[], %s::text[], %s::bigint[], %s::text[], %s::text[], %s::text[], "
    "%s::text[], %s::bigint[], %s::text[], %s::text[], %s::integer[], %s::text[], %s::text[], "
    "%s::text[], %s::text[], %s::timestamptz, %s::text)"
)
_HEADS: Final = "SELECT id, version, head_hash FROM streams WHERE id = ANY(%s::text[])"

Head = tuple[int, str]
"""A stream's (version, head hash); (0, GENESIS_HASH) for a stream without events."""

_NO_HEAD: Final[Head] = (0, GENESIS_HASH)
_MOVED: Final = object()


class PgAppender:
    """The one-statement append path of one `EventStore` on PostgreSQL. Thread-safe."""

    def __init__(
        self,
        engines: Engines,
        count: Callable[[int], None],
        stream_type: Callable[[str], str],
    ) -> None:
        self._engines = engines
        self._count = count
        self._default_type = stream_type
        self._dbapi: Any = engines.write.dialect.loaded_dbapi
        self._lock = threading.Lock()
        self._idle: list[Any] = []
        self._closed = False
        self._heads: dict[str, Head] = {}

    # ------------------------------------------------------------- the head cache

    def remember(self, heads: dict[str, Head]) -> None:
        """Heads known to be committed (after a write, or read)."""
        cache = self._heads
        for sid, head in heads.items():
            cache.pop(sid, None)
            cache[sid] = head
        while len(cache) > MAX_CACHED_HEADS:
            try:
                del cache[next(iter(cache))]
            except (KeyError, RuntimeError, StopIteration):  # another thread got there first
                break

    def forget(self, sids: Sequence[str]) -> None:
        """An append's outcome is unknown (or a head moved): read those heads next time."""
        for sid in sids:
            self._heads.pop(sid, None)

    # ------------------------------------------------------------- appending

    def append(
        self,
        items: list[PreparedAppend],
        extras: dict[str, tuple[str | None, str]],
        fence: Lease | None,
    ) -> list[list[RecordedEvent]] | None:
        """Append in one statement, or None: the general path must decide.

        None, nothing written, when an expected version differs from the known head (a
        conflict or a retried append: both are judged under the lock) or a head moved twice.
        None also when a kept connection was found dead: then the statement may have
        committed, which the general path (idempotent by event id) finds out. `LeaseLost`
        when the fence fails; other database errors raise.
        """
        conn, reused = self._checkout()
        try:
            result = self._append_on(conn, items, extras, fence, presume=True)
            if result is _MOVED:  # once more on the heads read now, else the general path
                result = self._append_on(conn, items, extras, fence, presume=False)
        except BaseException as exc:
            database_error = isinstance(exc, self._dbapi.Error)
            if database_error:
                self.forget([item.stream_id for item in items])
            if not isinstance(exc, Exception) or _broken(conn):
                conn.invalidate()
                if reused and database_error:
                    return None  # as the pool's pre-ping would have: take a fresh one
            else:
                self._checkin(conn)
            raise
        self._checkin(conn)
        return None if result is _MOVED else cast(list[list[RecordedEvent]] | None, result)

    def _append_on(
        self,
        conn: Any,
        items: list[PreparedAppend],
        extras: dict[str, tuple[str | None, str]],
        fence: Lease | None,
        *,
        presume: bool,
    ) -> list[list[RecordedEvent]] | object | None:
        """`_MOVED` when a head moved; `presume`: a stream unknown to the cache is new when
        the append expects it to be (else its head is read first)."""
        cur = conn.cursor()
        heads = self._known_heads(cur, items, presume)
        base = dict(heads)
        ev_sids: list[str] = []
        ev_versions: list[int] = []
        ev_ids: list[str] = []
        ev_types: list[str] = []
        ev_svs: list[int] = []
        ev_payloads: list[str] = []
        ev_metas: list[str] = []
        ev_prevs: list[str] = []
        ev_hashes: list[str] = []
        for item in items:
            sid = item.stream_id
            version, prev = heads[sid]
            expected = 0 if item.expected is StreamState.NO_STREAM else item.expected
            if expected is not StreamState.ANY and expected != version:
                return None
            for e in item.events:
                version += 1
                payload, meta = e.payload.decode(), e.meta.decode()
                digest = chain_hash(
                    prev,
                    event_document(
                        stream_id=sid,
                        version=version,
                        event_id=e.event_id,
                        type=e.type,
                        schema_version=e.schema_version,
                        payload=e.payload,
                        meta=e.meta,
                    ),
                )
                ev_sids.append(sid)
                ev_versions.append(version)
                ev_ids.append(e.event_id)
                ev_types.append(e.type)
                ev_svs.append(e.schema_version)
                ev_payloads.append(payload)
                ev_metas.append(meta)
                ev_prevs.append(prev)
                ev_hashes.append(digest)
                prev = digest
            heads[sid] = (version, prev)
        sids = list(heads)
        types, metadata = [], []
        for sid in sids:
            stream_type, body = extras.get(sid, (None, "{}"))
            types.append(stream_type or self._default_type(sid))
            metadata.append(body)
        now = datetime.now(UTC)
        fence_args = (None, None, None) if fence is None else (fence.name, fence.owner, fence.epoch)
        cur.execute(
            _CALL,
            (
                self._engines.advisory_lock_key,
                *fence_args,
                sids,
                [base[s][0] for s in sids],
                [base[s][1] for s in sids],
                [heads[s][0] for s in sids],
                [heads[s][1] for s in sids],
                types,
                metadata,
                ev_sids,
                ev_versions,
                ev_ids,
                ev_types,
                ev_svs,
                ev_payloads,
                ev_metas,
                ev_prevs,
                ev_hashes,
                now,
                self._engines.settings.notify_channel,
            ),
        )
        self._count(1)
        last = int(cur.fetchone()[0])
        if last == _LEASE_LOST:
            assert fence is not None
            raise LeaseLost(fence.name, fence.owner, fence.epoch)
        if last == _HEAD_MOVED:
            self.forget(sids)
            return _MOVED
        self.remember(heads)
        position = last - len(ev_ids)
        loads = orjson.loads
        results: list[list[RecordedEvent]] = []
        i = 0
        for item in items:
            recorded = []
            for _ in item.events:
                position += 1
                recorded.append(
                    RecordedEvent(
                        position,
                        ev_sids[i],
                        ev_versions[i],
                        ev_ids[i],
                        ev_types[i],
                        ev_svs[i],
                        loads(ev_payloads[i]),
                        loads(ev_metas[i]),
                        now,
                        ev_prevs[i],
                        ev_hashes[i],
                    )
                )
                i += 1
            results.append(recorded)
        return results

    def _known_heads(self, cur: Any, items: list[PreparedAppend], presume: bool) -> dict[str, Head]:
        """Each stream's head as far as this process knows; one read for those it does not
        know and cannot presume new (an expected version above 0, or ANY; any at all
        unless `presume`)."""
        heads: dict[str, Head] = {}
        unknown: list[str] = []
        cache = self._heads
        for item in items:
            sid = item.stream_id
            if sid in heads or sid in unknown:
                continue
            head = cache.get(sid)
            expected = item.expected
            if head is not None and not (isinstance(expected, int) and expected > head[0]):
                heads[sid] = head  # (a head behind the expected version: another appended)
            elif presume and (expected is StreamState.NO_STREAM or expected == 0):
                heads[sid] = _NO_HEAD
            else:
                unknown.append(sid)
        if unknown:
            cur.execute(_HEADS, (unknown,))
            self._count(1)
            found = {row[0]: (int(row[1]), row[2]) for row in cur.fetchall()}
            self.remember(found)
            for sid in unknown:
                heads[sid] = found.get(sid, _NO_HEAD)
        return {item.stream_id: heads[item.stream_id] for item in items}

    # ------------------------------------------------------------- connections

    def _checkout(self) -> tuple[Any, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        conn: Any = self._engines.write.raw_connection()
        conn.driver_connection.autocommit = True
        return conn, False

    def _checkin(self, conn: Any) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < MAX_IDLE:
                self._idle.append(conn)
                return
        _give_back(conn)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            _give_back(conn)


def _broken(conn: Any) -> bool:
    driver = conn.driver_connection
    return driver is None or bool(driver.closed or getattr(driver, "broken", False))


def _give_back(conn: Any) -> None:
    """Back to the pool as the pool expects it: in transaction mode."""
    try:
        conn.driver_connection.autocommit = False
    except Exception:  # a dead connection: the pool's reset will drop it
        conn.invalidate()
    conn.close()
