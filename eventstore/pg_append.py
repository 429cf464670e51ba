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
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final, cast

from eventstore.appending import NO_HEAD, Head, HeadCache, link_items, recorded
from eventstore.backends import Engines
from eventstore.errors import LeaseLost
from eventstore.leases import Lease
from eventstore.records import RecordedEvent
from eventstore.validation import PreparedAppend

MAX_IDLE: Final = 2
"""Connections kept for appends while idle (each is one out of the pool's)."""

_LEASE_LOST: Final = -1
_HEAD_MOVED: Final = -2

_CALL: Final = (
    "SELECT eventstore_append(%s, %s::text, %s::text, %s::bigint, "
    "%s::text[], %s::bigint[], %s::text[], %s::bigint[], %s::text[], %s::text[], %s::text[], "
    "%s::text[], %s::bigint[], %s::text[], %s::text[], %s::integer[], %s::text[], %s::text[], "
    "%s::text[], %s::text[], %s::timestamptz, %s::text)"
)
_HEADS: Final = "SELECT id, version, head_hash FROM streams WHERE id = ANY(%s::text[])"

_MOVED: Final = object()


class PgAppender:
    """The one-statement append path of one `EventStore` on PostgreSQL. Thread-safe."""

    def __init__(
        self,
        engines: Engines,
        count: Callable[[int], None],
        stream_type: Callable[[str], str],
        heads: HeadCache,
    ) -> None:
        self._engines = engines
        self._count = count
        self._default_type = stream_type
        self._dbapi: Any = engines.write.dialect.loaded_dbapi
        self._lock = threading.Lock()
        self._idle: list[Any] = []
        self._closed = False
        self._heads = heads

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
                self._heads.forget([item.stream_id for item in items])
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
        per_item = link_items(items, heads)
        if per_item is None:
            return None
        links = [link for item_links in per_item for link in item_links]
        # the function's event arrays are the rows' columns, in `Link` order
        columns = [list(column) for column in zip(*links, strict=True)]
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
                *columns,
                now,
                self._engines.settings.channel,
            ),
        )
        self._count(1)
        last = int(cur.fetchone()[0])
        if last == _LEASE_LOST:
            assert fence is not None
            raise LeaseLost(fence.name, fence.owner, fence.epoch)
        if last == _HEAD_MOVED:
            self._heads.forget(sids)
            return _MOVED
        self._heads.remember(heads)
        position = last - len(links)
        results: list[list[RecordedEvent]] = []
        for item_links in per_item:
            results.append(recorded(item_links, position, now))
            position += len(item_links)
        return results

    def _known_heads(self, cur: Any, items: list[PreparedAppend], presume: bool) -> dict[str, Head]:
        """Each stream's head as far as this process knows; one read for those it does not
        know and cannot presume new (an expected version above 0, or ANY; any at all
        unless `presume`)."""
        heads, unknown = self._heads.known(items, presume)
        if unknown:
            cur.execute(_HEADS, (unknown,))
            self._count(1)
            found = {row[0]: (int(row[1]), row[2]) for row in cur.fetchall()}
            self._heads.remember(found)
            for sid in unknown:
                heads[sid] = found.get(sid, NO_HEAD)
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
