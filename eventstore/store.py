"""`EventStore`: append with optimistic concurrency, read, subscribe, verify, project, claim.

Appends are serialised (SQLite: BEGIN IMMEDIATE plus a process lock; PostgreSQL: a
transaction-scoped advisory lock), so global positions are allocated as ``max + 1`` inside the
lock: dense, and in commit order, so a reader tailing the feed never skips a later commit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from datetime import UTC, datetime
from typing import Any, NoReturn

import orjson
from sqlalchemy import event, func, select
from sqlalchemy.engine import URL
from sqlalchemy.exc import IntegrityError

from eventstore.appending import HeadCache, Link, chain_rows, link_items, recorded
from eventstore.backends import Engines, StoreSettings, create_engines
from eventstore.canonical import GENESIS_HASH, canonical_json, check_metadata_size
from eventstore.decoding import as_utc, decode_payloads, decode_rows
from eventstore.errors import (
    ChainBrokenError,
    ConflictError,
    GroupConflict,
    IdempotencyConflict,
    InvalidEventError,
    InvalidNameError,
    InvalidVersionError,
    LeaseLost,
    SchemaError,
    SealedValueConflict,
    StoreBusy,
    StoreUnavailable,
    StreamNotFound,
    VersionConflict,
)
from eventstore.leases import Lease, acquire_sql, lease_statements
from eventstore.migrate import current_revision, head_revision, is_compatible, upgrade_engines
from eventstore.pg_append import PgAppender
from eventstore.projections import ProjectionTransaction
from eventstore.records import (
    AppendRequest,
    ClaimResult,
    ExpectedVersion,
    NewEvent,
    RecordedEvent,
    StreamInfo,
    StreamState,
    VerifyReport,
    VerifyResult,
)
from eventstore.statements import compile_statements, guarded_stream_writes
from eventstore.subscription import CatchUpSubscription
from eventstore.tables import CLAIMS, EVENTS, NAME_MAX, PROJECTIONS, SEALED, STREAMS, TYPE_MAX
from eventstore.upcasting import UpcasterRegistry
from eventstore.validation import (
    PreparedAppend,
    check_non_negative,
    check_positive,
    check_stream_id,
    check_text,
    prepare,
    prepare_group,
    storable,
)
from eventstore.verification import ChainChecker

_MAX_POSITION = select(func.max(EVENTS.c.position))


def _default_stream_type(stream_id: str) -> str:
    """``game-42`` → ``game``: the convention when the caller names no type."""
    head, sep, _ = stream_id.partition("-")
    return head if sep and head else "stream"


class _Head:
    __slots__ = ("exists", "hash", "version")

    def __init__(self, exists: bool, version: int, hash: str) -> None:
        self.exists = exists
        self.version = version
        self.hash = hash


class _CountingCursor:
    """A DBAPI cursor that counts the statements executed through it."""

    __slots__ = ("_cur", "n")

    def __init__(self) -> None:
        self._cur: Any = None
        self.n = 0

    def open(self, conn: Any) -> None:
        self._cur = conn.cursor()

    def execute(self, *args: Any) -> Any:
        self.n += 1
        return self._cur.execute(*args)

    def executemany(self, *args: Any) -> Any:
        self.n += 1  # one call; psycopg pipelines the rows, SQLite steps them in-process
        return self._cur.executemany(*args)

    def fetchone(self) -> Any:
        return self._cur.fetchone()

    def fetchall(self) -> Any:
        return self._cur.fetchall()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)


class _KeptReads:
    """A few autocommit connections kept for PostgreSQL's plain reads (the feed, streams):
    taken and given back without the pool's checkout, whose pre-ping is a round trip of its
    own. A kept one found dead fails its read once (see `EventStore._plain_rows`)."""

    LIMIT = 4

    def __init__(self) -> None:
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self.closed = False

    def take(self) -> Any:
        with self._lock:
            return self._idle.pop() if self._idle else None

    def keep(self, conn: Any) -> bool:
        driver = conn.driver_connection
        if driver is None or driver.closed or getattr(driver, "broken", False):
            return False
        with self._lock:
            if self.closed or len(self._idle) >= self.LIMIT:
                return False
            self._idle.append(conn)
            return True

    def close(self) -> None:
        with self._lock:
            self.closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            with suppress(Exception):  # closing anyway
                conn.invalidate()  # autocommit: not as the pool hands it out


class _Transaction:
    """`EventStore._raw`: a DBAPI cursor inside a transaction, committed on success, rolled
    back on error, its statements counted.

    A class rather than a ``@contextmanager`` generator: entering and leaving are one call
    each, where the generator's machinery costs about eight (it is on every append and read).
    SQLite writes reuse one dedicated connection (writes are serialised by the process lock
    anyway), which spares the pool's checkout and reset on the hot path.
    """

    __slots__ = (
        "_autocommit",
        "_conn",
        "_cur",
        "_dedicated",
        "_lock",
        "_snapshot",
        "_store",
        "_write",
    )

    def __init__(self, store: EventStore, write: bool, snapshot: bool) -> None:
        self._store = store
        self._write = write
        self._snapshot = snapshot
        pg = store._pg
        self._dedicated = write and not pg
        # A plain PostgreSQL read needs no transaction: in autocommit it is one round trip,
        # not BEGIN, the query and the pool's ROLLBACK.
        self._autocommit = pg and not write and not snapshot
        self._lock: AbstractContextManager[Any] = store._write_lock if write else store._read_lock
        self._cur = _CountingCursor()

    def __enter__(self) -> _CountingCursor:
        store = self._store
        write = self._write
        self._lock.__enter__()
        try:
            if self._dedicated:
                if store._writer is None:
                    store._writer = store._engines.write.raw_connection()
                self._conn = store._writer
            elif self._autocommit:
                self._conn = store._kept_reads.take() or store._engines.read.raw_connection()
            else:
                engine = store._engines.write if write else store._engines.read
                self._conn = engine.raw_connection()
        except BaseException:
            self._lock.__exit__(None, None, None)
            raise
        st = store._sql
        cur = self._cur
        try:
            if self._autocommit:
                self._conn.driver_connection.autocommit = True
            cur.open(self._conn)
            begin = st.begin_write if write else (st.begin_read if self._snapshot else None)
            if begin is not None:
                cur.execute(begin)
        except BaseException as exc:
            self._fail(exc)
        return cur

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        if exc is not None:
            self._fail(exc)
        try:
            if self._write:
                self._conn.commit()
            elif self._snapshot:
                self._conn.rollback()
        except BaseException as failure:
            self._fail(failure)
        self._release()

    def _fail(self, exc: BaseException) -> NoReturn:
        """Roll back (a connection that cannot is dropped), release, raise `exc` (a driver's
        OperationalError as the store's own)."""
        store = self._store
        try:
            try:
                if self._autocommit and isinstance(exc, store._dbapi.Error):
                    raise exc  # a plain read that failed: drop its connection (kept or not)
                self._conn.rollback()
            except store._dbapi.Error:
                # The connection is gone (the server closed it, e.g. after this process was
                # paused inside a transaction): never hand it back to the pool.
                self._conn.invalidate()
                if self._dedicated:
                    store._writer = None
        finally:
            self._release()
        if isinstance(exc, store._dbapi.OperationalError):
            raise _unavailable(exc) from exc
        raise exc

    def _release(self) -> None:
        store = self._store
        conn = self._conn
        try:
            if self._autocommit:
                if not store._kept_reads.keep(conn):
                    if conn.driver_connection is not None:  # else invalidated already
                        try:
                            conn.driver_connection.autocommit = False  # as the pool hands it
                        except store._dbapi.Error:
                            conn.invalidate()
                    conn.close()
            elif not self._dedicated:
                conn.close()  # PostgreSQL, a read: the pool's reset rolls back
            n = self._cur.n
            if self._autocommit:
                pass  # one round trip a statement, nothing around them
            elif store._pg and n:
                n += 2  # psycopg's implicit BEGIN, and the COMMIT or ROLLBACK ending it
            elif self._write or self._snapshot:
                n += 1  # SQLite's COMMIT or ROLLBACK (its BEGIN is executed in __enter__)
            store.statements += n
        finally:
            self._lock.__exit__(None, None, None)


class EventStore:
    """The append-only, hash-chained event log. Thread-safe; one instance per process."""

    def __init__(
        self,
        engines: Engines,
        *,
        upcasters: UpcasterRegistry | None = None,
        clock_ms: Callable[[], int] | None = None,
    ) -> None:
        self._engines = engines
        self.upcasters = upcasters or UpcasterRegistry()
        self._pg = engines.kind == "postgresql"
        # SQLite: threads of one process queue here instead of in SQLite's busy handler;
        # memory: the single shared connection must never be used by two threads at once.
        self._write_lock: AbstractContextManager[Any] = (
            nullcontext() if self._pg else threading.RLock()
        )
        self._kept_reads = _KeptReads()
        self._read_lock: AbstractContextManager[Any] = (
            self._write_lock if engines.memory else nullcontext()
        )
        self._sql = compile_statements(engines.kind)
        self._leases = lease_statements(engines.kind)
        # SQLite's lease clock (PostgreSQL uses the database's): injectable for tests.
        self._clock_ms = clock_ms or (lambda: time.time_ns() // 1_000_000)
        self._dbapi: Any = engines.write.dialect.loaded_dbapi
        self._writer: Any = None
        self.statements = 0
        """SQL statements this store has sent (see `_count_statements`): a cost meter."""
        self._count_statements(engines)
        # Appends build on the heads last written or read here, checked by the database: on
        # PostgreSQL in one statement (`PgAppender`), on SQLite by the guarded stream write.
        self._head_cache = HeadCache()
        self._fast = (
            PgAppender(engines, self._count, _default_stream_type, self._head_cache)
            if self._pg
            else None
        )
        self._guards = {
            False: guarded_stream_writes(None),
            True: guarded_stream_writes(self._leases.fence),
        }

    def _count(self, n: int) -> None:
        self.statements += n

    def _count_statements(self, engines: Engines) -> None:
        """Count every statement sent: the raw paths count theirs in `_raw` (and the
        one-statement append its own); SQLAlchemy's paths are counted by its events,
        transaction control included (PostgreSQL's BEGIN is implicit: counted at "begin");
        the pool's pre-ping on PostgreSQL by wrapping the dialect's ping. Not a lock:
        under concurrent threads an increment may rarely be lost."""

        def on_execute(*_: object) -> None:
            self.statements += 1

        for engine in {id(e): e for e in (engines.write, engines.read)}.values():
            event.listen(engine, "before_cursor_execute", on_execute)
            event.listen(engine, "commit", on_execute)
            event.listen(engine, "rollback", on_execute)
            if self._pg:
                event.listen(engine, "begin", on_execute)
                dialect = engine.dialect
                ping = dialect.do_ping

                def counted_ping(dbapi_connection: Any, ping: Any = ping) -> bool:
                    self.statements += 1
                    return bool(ping(dbapi_connection))

                dialect.do_ping = counted_ping  # type: ignore[method-assign]

    # ----------------------------------------------------------------- opening

    @classmethod
    def open(
        cls,
        url: str | URL = "sqlite://",
        *,
        create: bool | None = None,
        upcasters: UpcasterRegistry | None = None,
        settings: StoreSettings | None = None,
        clock_ms: Callable[[], int] | None = None,
    ) -> EventStore:
        """Open the store at `url`; `create` runs the migrations (default: yes for SQLite)."""
        engines = create_engines(url, settings)
        try:
            if create if create is not None else engines.kind == "sqlite":
                upgrade_engines(engines)
            else:
                found = current_revision(engines.write)
                if not is_compatible(engines.write):
                    raise SchemaError(
                        f"database schema is at {found!r}, this code needs {head_revision()!r}: "
                        "run `king db upgrade` (eventstore.migrate.upgrade)"
                    )
        except BaseException:
            engines.dispose()
            raise
        return cls(engines, upcasters=upcasters, clock_ms=clock_ms)

    @property
    def engines(self) -> Engines:
        return self._engines

    @property
    def backend(self) -> str:
        return "sqlite-memory" if self._engines.memory else self._engines.kind

    def close(self) -> None:
        if self._fast is not None:
            self._fast.close()
        self._kept_reads.close()
        with self._write_lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
        self._engines.dispose()

    def __enter__(self) -> EventStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ----------------------------------------------------------------- writing

    def append(
        self,
        stream_id: str,
        events: Sequence[NewEvent],
        expected_version: ExpectedVersion,
        *,
        stream_type: str | None = None,
        stream_metadata: dict[str, Any] | None = None,
        fence: Lease | None = None,
    ) -> list[RecordedEvent]:
        """Append `events` to `stream_id` if its version is `expected_version`.

        Retrying with the same event ids and content returns the originally recorded events;
        the same ids with other content raise `IdempotencyConflict`. `stream_type` and
        `stream_metadata` are stored when the stream is created and ignored afterwards;
        metadata is canonical JSON of at most `MAX_STREAM_METADATA_BYTES`. `fence`: append only
        while this lease is still held by its owner at its epoch, else `LeaseLost` (see
        `eventstore.leases`); checked in the append's own transaction.
        """
        item = prepare(stream_id, events, expected_version, set())
        meta = self._stream_extra(stream_type, stream_metadata)
        if fence is not None and not isinstance(fence, Lease):
            raise InvalidEventError(f"fence must be a Lease, got {type(fence).__name__}")
        try:
            return self._write([item], {item.stream_id: meta}, fence)[0]
        except GroupConflict as exc:
            raise exc.cause from None

    def append_many(
        self,
        requests: Sequence[AppendRequest | tuple[str, Sequence[NewEvent], ExpectedVersion]],
    ) -> list[list[RecordedEvent]]:
        """Group commit: every request checked, all written in one transaction, or none.

        A conflict in any item raises `GroupConflict` naming the item's index (and its cause)
        and writes nothing. Items whose events are already recorded identically (a retried
        group) count as done and return their recorded events.
        """
        items = prepare_group(requests)
        return self._write(items, {})

    def _stream_extra(
        self, stream_type: str | None, metadata: dict[str, Any] | None
    ) -> tuple[str | None, str]:
        if stream_type is not None:
            check_text(stream_type, "stream_type", TYPE_MAX)
        if metadata is None:
            return stream_type, "{}"
        body = canonical_json(metadata, "stream_metadata")
        check_metadata_size(body)
        return stream_type, body.decode()

    def _write(
        self,
        items: list[PreparedAppend],
        extras: dict[str, tuple[str | None, str]],
        fence: Lease | None = None,
    ) -> list[list[RecordedEvent]]:
        dbapi = self._dbapi
        fast = self._fast
        try:
            try:
                if fast is not None:
                    done = fast.append(items, extras, fence)
                else:
                    done = None if self._pg else self._write_cached(items, extras, fence)
                if done is not None:
                    return done
                return self._write_tx(items, extras, careful=False, fence=fence)
            except dbapi.IntegrityError:
                # An event id already exists although the version matched (a retry with ANY,
                # or ids reused): look every id up first this time.
                try:
                    return self._write_tx(items, extras, careful=True, fence=fence)
                except dbapi.IntegrityError as exc:
                    raise ConflictError(f"concurrent write raced this append: {exc}") from exc
        except dbapi.OperationalError as exc:
            self._head_cache.forget([item.stream_id for item in items])  # committed or not?
            raise _unavailable(exc) from exc

    def _raw(self, *, write: bool, snapshot: bool = False) -> _Transaction:
        """A DBAPI cursor inside a transaction, committed on success, rolled back on error
        (``with store._raw(write=True) as cur:``); see `_Transaction`."""
        return _Transaction(self, write, snapshot)

    def _write_tx(
        self,
        items: list[PreparedAppend],
        extras: dict[str, tuple[str | None, str]],
        *,
        careful: bool,
        fence: Lease | None = None,
    ) -> list[list[RecordedEvent]]:
        with self._raw(write=True) as cur:
            results, heads = self._write_in(cur, items, extras, careful=careful, fence=fence)
        self._head_cache.remember(heads)  # committed: the heads read and written are real
        return results

    def _write_in(
        self,
        cur: Any,
        items: list[PreparedAppend],
        extras: dict[str, tuple[str | None, str]],
        *,
        careful: bool,
        fence: Lease | None,
    ) -> tuple[list[list[RecordedEvent]], dict[str, tuple[int, str]]]:
        """The general path, in the caller's write transaction: lock, fence, heads read,
        conflicts and retries judged on them, rows written. Returns the results and the
        heads to remember once committed."""
        st = self._sql
        if st.lock is not None:
            cur.execute(st.lock, {"k": self._engines.advisory_lock_key})
        if fence is not None:
            self._check_fence(cur, fence)
        cur.execute(st.max_position)
        position = cur.fetchone()[0] or 0
        heads = self._read_heads(cur, items)
        now = datetime.now(UTC)
        stamp = self._stamp(now)
        results: list[list[RecordedEvent]] = []
        event_rows: list[tuple[object, ...]] = []
        new_streams: dict[str, dict[str, Any]] = {}
        updated: dict[str, dict[str, Any]] = {}
        for index, item in enumerate(items):
            sid = item.stream_id
            head = heads[sid]
            try:
                existing = self._already_recorded(cur, item) if careful else None
                if existing is None:
                    expected = item.expected
                    if expected is StreamState.NO_STREAM:
                        expected = 0
                    if expected is not StreamState.ANY and expected != head.version:
                        existing = self._already_recorded(cur, item)
                        if existing is None:
                            raise VersionConflict(sid, item.expected, head.version)
            except ConflictError as exc:
                raise GroupConflict(index, exc) from None
            if existing is not None:
                results.append(existing)
                continue
            links = chain_rows(sid, head.version, head.hash, item.events)
            results.append(recorded(links, position, now))
            event_rows.extend(_event_rows(links, position, stamp))
            position += len(links)
            version, prev = links[-1][1], links[-1][8]
            if sid in new_streams:
                new_streams[sid]["version"] = version
                new_streams[sid]["head_hash"] = prev
            elif not head.exists:
                stream_type, metadata = extras.get(sid, (None, "{}"))
                new_streams[sid] = {
                    "id": sid,
                    "type": stream_type or _default_stream_type(sid),
                    "version": version,
                    "head_hash": prev,
                    "metadata": metadata,
                    "created_at": stamp,
                    "updated_at": stamp,
                }
            else:
                updated[sid] = {
                    "sid": sid,
                    "new_version": version,
                    "new_head": prev,
                    "now": stamp,
                }
            heads[sid] = _Head(True, version, prev)
        if event_rows:
            self._insert_events(cur, event_rows)
            for row in new_streams.values():
                cur.execute(st.insert_stream, row)
            for row in updated.values():
                cur.execute(st.update_stream, row)
            if st.notify is not None:
                channel = self._engines.settings.channel
                cur.execute(st.notify, {"channel": channel, "position": str(position)})
        return results, {sid: (h.version, h.hash) for sid, h in heads.items() if h.exists}

    def _write_cached(
        self,
        items: list[PreparedAppend],
        extras: dict[str, tuple[str | None, str]],
        fence: Lease | None,
    ) -> list[list[RecordedEvent]] | None:
        """SQLite: one stream's append built on its cached head, in four statements (BEGIN,
        the guarded stream write, the events, COMMIT), the fence checked by the stream write.

        None, before any transaction, when the cache cannot serve (several items, a stream
        not known, an expected version not the cached one): the general path decides. When
        the guard finds the head moved or the lease lost, nothing was written and the general
        path runs on in the same transaction, so every outcome is judged on the stored rows.
        """
        if len(items) != 1:
            return None
        heads, unknown = self._head_cache.known(items, presume=True)
        if unknown:
            return None
        item = items[0]
        sid = item.stream_id
        version, head = heads[sid]
        chained = link_items(items, heads)
        if chained is None:
            return None
        links = chained[0]
        now = datetime.now(UTC)
        stamp = self._stamp(now)
        new_version, new_head = heads[sid]
        params: dict[str, object] = {
            "sid": sid,
            "version": version,
            "head": head,
            "new_version": new_version,
            "new_head": new_head,
            "stamp": stamp,
        }
        update, insert = self._guards[fence is not None]
        if version == 0:
            stream_type, params["metadata"] = extras.get(sid, (None, "{}"))
            params["type"] = stream_type or _default_stream_type(sid)
        if fence is not None:
            params.update(self._lease_params(name=fence.name, owner=fence.owner, epoch=fence.epoch))
        with self._raw(write=True) as cur:
            cur.execute(insert if version == 0 else update, params)
            row = cur.fetchone()
            if row is None:  # moved behind this process's back, or the lease is lost
                self._head_cache.forget([sid])
                results, real = self._write_in(cur, items, extras, careful=False, fence=fence)
            else:
                position = row[0]
                self._insert_events(cur, _event_rows(links, position, stamp))
                results, real = [recorded(links, position, now)], {sid: (new_version, new_head)}
        self._head_cache.remember(real)
        return results

    def _insert_events(self, cur: Any, rows: list[tuple[object, ...]]) -> None:
        if len(rows) == 1:
            cur.execute(self._sql.insert_events, rows[0])
        else:
            cur.executemany(self._sql.insert_events, rows)

    def _stamp(self, now: datetime) -> object:
        """`recorded_at` as bound: SQLite stores the naive UTC text (isoformat, minus the
        "+00:00" of an aware UTC moment), PostgreSQL the moment."""
        return now if self._pg else now.isoformat(" ")[:-6]

    def _read_heads(self, cur: Any, items: list[PreparedAppend]) -> dict[str, _Head]:
        heads: dict[str, _Head] = {}
        for item in items:
            sid = item.stream_id
            if sid in heads:
                continue
            cur.execute(self._sql.one_head, {"sid": sid})
            row = cur.fetchone()
            heads[sid] = _Head(False, 0, GENESIS_HASH) if row is None else _Head(True, *row)
        return heads

    def _already_recorded(self, cur: Any, item: PreparedAppend) -> list[RecordedEvent] | None:
        """The recorded events when `item` is a retry of a committed append, else None.

        Raises `IdempotencyConflict` when some ids exist but not as exactly this append.
        """
        ids = [e.event_id for e in item.events]
        cur.execute(self._sql.events_by_ids(len(ids)), {f"e{i}": v for i, v in enumerate(ids)})
        rows = {row[3]: row for row in cur.fetchall()}
        if not rows:
            return None
        sid = item.stream_id
        first_version: int | None = None
        for offset, e in enumerate(item.events):
            row = rows.get(e.event_id)
            if row is None:
                raise IdempotencyConflict(
                    sid, e.event_id, "is new but others of the same append were already recorded"
                )
            _pos, row_sid, row_version, _eid, row_type, row_sv, row_payload, row_meta = row[:8]
            if row_sid != sid:
                raise IdempotencyConflict(sid, e.event_id, f"is recorded in {row_sid!r}")
            if first_version is None:
                first_version = row_version
            same = (
                row_version == first_version + offset
                and row_type == e.type
                and row_sv == e.schema_version
                and row_payload == e.payload.decode()
                and row_meta == e.meta.decode()
            )
            if not same:
                raise IdempotencyConflict(sid, e.event_id, "was recorded with different content")
        return decode_rows([rows[e.event_id] for e in item.events], None)

    # ----------------------------------------------------------------- reading

    def read_stream(
        self,
        stream_id: str,
        from_version: int = 1,
        *,
        to_version: int | None = None,
        limit: int | None = None,
        upcast: bool = True,
        must_exist: bool = False,
        verify: bool = False,
    ) -> list[RecordedEvent]:
        """The stream's events with `from_version <= version [<= to_version]`, in order.

        An unknown stream reads as empty, unless `must_exist` asks for `StreamNotFound`.
        `verify=True` recomputes the hash chain over the rows read (linking from the first
        row's prev_hash when `from_version > 1`) and raises `ChainBrokenError` on a bad one:
        one query, one pass, for replays that must be trustworthy.
        """
        sid = check_stream_id(stream_id)
        params: dict[str, Any] = {
            "sid": sid,
            "lo": check_non_negative(from_version, "from_version"),
            "lim": -1 if limit is None else check_non_negative(limit, "limit"),
            "off": 0,
        }
        if self._pg and limit is None:
            params["lim"] = None
        sql = self._sql.stream_from
        if to_version is not None:
            params["hi"] = check_non_negative(to_version, "to_version")
            sql = self._sql.stream_range
        rows = self._plain_rows(sql, params)
        if not rows and must_exist and self.stream_info(sid) is None:
            raise StreamNotFound(sid)
        if verify and rows:
            first = rows[0]
            checker = ChainChecker(
                sid, expected_version=first[2], prev_hash=first[9], prev_position=first[0] - 1
            )
            if not checker.feed(rows):
                raise ChainBrokenError(checker.failure)
        return decode_rows(rows, self.upcasters if upcast else None)

    def read_all(
        self, from_position: int = 1, *, limit: int = 1000, upcast: bool = True
    ) -> list[RecordedEvent]:
        """Up to `limit` events of the global feed with `position >= from_position`."""
        params = {
            "lo": check_non_negative(from_position, "from_position"),
            "lim": check_non_negative(limit, "limit"),
            "off": 0,
        }
        rows = self._plain_rows(self._sql.all_from, params)
        events = decode_rows(rows, self.upcasters if upcast else None)
        self._head_cache.seen(events)
        return events

    def heads_seen(self, events: Sequence[RecordedEvent]) -> None:
        """Committed events of the feed that came another way (a notification that carries
        them): their heads spare this process's next append to those streams a read."""
        self._head_cache.seen(events)

    def _plain_rows(self, sql: Any, params: dict[str, Any]) -> list[Any]:
        """A plain read's rows, tried once more when the first attempt fails for want of a
        database connection (a kept one may have died since its last use): a read is safe
        to repeat, and the second attempt goes through the pool's pre-ping."""
        try:
            with self._raw(write=False) as cur:
                cur.execute(sql, params)
                return list(cur.fetchall())
        except StoreUnavailable:
            if not self._pg:
                raise
        with self._raw(write=False) as cur:
            cur.execute(sql, params)
            return list(cur.fetchall())

    def iter_all(
        self, from_position: int = 1, *, batch_size: int = 1000, upcast: bool = True
    ) -> Iterator[RecordedEvent]:
        """The feed from `from_position` to its current end, read in batches.

        Bad arguments raise here, at the call, not at the first `next()`.
        """
        check_non_negative(from_position, "from_position")
        check_positive(batch_size, "batch_size")
        return self._iter_all(from_position, batch_size, upcast)

    def _iter_all(self, position: int, batch_size: int, upcast: bool) -> Iterator[RecordedEvent]:
        while True:
            batch = self.read_all(position, limit=batch_size, upcast=upcast)
            yield from batch
            if len(batch) < batch_size:
                return
            position = batch[-1].position + 1

    def head_position(self) -> int:
        """The last global position (0 when the store is empty)."""
        with self._read_lock, self._engines.read.connect() as conn:
            return conn.execute(_MAX_POSITION).scalar() or 0

    def stream_info(self, stream_id: str) -> StreamInfo | None:
        """The stream's row, or None when it has no events."""
        sid = check_stream_id(stream_id)
        query = select(STREAMS).where(STREAMS.c.id == sid)
        with self._read_lock, self._engines.read.connect() as conn:
            row = conn.execute(query).first()
        if row is None:
            return None
        return StreamInfo(
            stream_id=row.id,
            type=row.type,
            version=row.version,
            head_hash=row.head_hash,
            metadata=orjson.loads(row.metadata),
            created_at=as_utc(row.created_at),
            updated_at=as_utc(row.updated_at),
        )

    def stream_ids(self, stream_type: str | None = None) -> list[str]:
        """The ids of every stream (of one type, if given), oldest first."""
        query = select(STREAMS.c.id).order_by(STREAMS.c.created_at, STREAMS.c.id)
        if stream_type is not None:
            check_text(stream_type, "stream_type", TYPE_MAX)
            query = query.where(STREAMS.c.type == stream_type)
        with self._read_lock, self._engines.read.connect() as conn:
            return [row[0] for row in conn.execute(query)]

    def stream_version(self, stream_id: str) -> int:
        """The stream's current version (0 when it has no events)."""
        info = self.stream_info(stream_id)
        return 0 if info is None else info.version

    def subscribe(
        self,
        from_position: int = 1,
        *,
        batch_size: int = 500,
        poll_interval: float = 0.5,
        upcast: bool = True,
    ) -> CatchUpSubscription:
        """A catch-up subscription: iterate it to get every event from `from_position` on."""
        check_non_negative(from_position, "from_position")
        return CatchUpSubscription(
            self, from_position, batch_size=batch_size, poll_interval=poll_interval, upcast=upcast
        )

    # ----------------------------------------------------------------- verifying

    def verify(self, stream_id: str, *, batch_size: int = 2000) -> VerifyResult:
        """Recompute the stream's chain; report the first event whose hash or link is wrong.

        Also catches version gaps, rows whose positions are out of version order, and a stream
        row that disagrees with the last event (a dropped tail). The stream row and its events
        are read in one snapshot, so an append committing meanwhile is never mistaken for
        tampering. Unknown stream: `StreamNotFound`.
        """
        sid = check_stream_id(stream_id)
        check_positive(batch_size, "batch_size")
        with self._raw(write=False, snapshot=True) as cur:
            result = self._verify_stream(cur, sid, batch_size)
        if result is None:
            raise StreamNotFound(sid)
        return result

    def read_verified(
        self, stream_id: str, *, upcast: bool = True
    ) -> tuple[VerifyResult, list[RecordedEvent]]:
        """The stream's chain verdict (as `verify` gives it) and its events (as `read_stream`
        does), from one read of the rows in one snapshot: what an audit needs, at half the
        reading. The events are returned whatever the verdict. Unknown stream:
        `StreamNotFound`."""
        verdict, rows = self._verified_rows(stream_id)
        return verdict, decode_rows(rows, self.upcasters if upcast else None)

    def read_verified_payloads(
        self, stream_id: str
    ) -> tuple[VerifyResult, list[tuple[int, str, Any]]]:
        """`read_verified` for a reader of the events' bodies only (the replay audit): each
        event as (version, type, upcast payload), without the metadata, moments and hashes
        a `RecordedEvent` carries (the chain has checked those)."""
        verdict, rows = self._verified_rows(stream_id)
        return verdict, decode_payloads(rows, self.upcasters)

    def _verified_rows(self, stream_id: str) -> tuple[VerifyResult, list[Any]]:
        sid = check_stream_id(stream_id)
        st = self._sql
        params: dict[str, Any] = {"sid": sid, "lo": 1, "lim": None if self._pg else -1, "off": 0}
        with self._raw(write=False, snapshot=True) as cur:
            cur.execute(st.one_head, {"sid": sid})
            head = cur.fetchone()
            cur.execute(st.stream_from, params)
            rows = list(cur.fetchall())
        if head is None and not rows:
            raise StreamNotFound(sid)
        checker = ChainChecker(sid)
        checker.feed(rows)
        return checker.finish(*(head if head is not None else (None, None))), rows

    def _verify_stream(self, cur: Any, sid: str, batch_size: int) -> VerifyResult | None:
        """Verify one stream inside the caller's snapshot; None when it has no row nor event."""
        st = self._sql
        cur.execute(st.one_head, {"sid": sid})
        head = cur.fetchone()
        checker = ChainChecker(sid)
        last_version = 0
        while True:
            params = {"sid": sid, "lo": last_version, "lim": batch_size, "off": 0}
            cur.execute(st.stream_after, params)
            rows = cur.fetchall()
            if not rows:
                break
            if not checker.feed(rows):
                return checker.finish(None, None)
            last_version = rows[-1][2]
            if len(rows) < batch_size:
                break
        if head is None and checker.checked == 0:
            return None
        if head is None:
            return checker.finish(None, None)
        return checker.finish(head[0], head[1])

    def verify_all(self, *, batch_size: int = 2000) -> VerifyReport:
        """Verify every stream, and that global positions run 1..N without a gap.

        All in one snapshot (one read transaction): the report describes one state of the
        store, however many appends commit while it runs.
        """
        check_positive(batch_size, "batch_size")
        st = self._sql
        failures = []
        checked = 0
        with self._raw(write=False, snapshot=True) as cur:
            cur.execute(st.all_stream_ids)
            sids = sorted(row[0] for row in cur.fetchall())
            cur.execute(st.feed_extent)
            count, low, high = cur.fetchone()
            for sid in sids:
                result = self._verify_stream(cur, sid, batch_size)
                assert result is not None  # listed, so it has a row or events
                checked += result.events_checked
                if not result.ok:
                    failures.append(result)
        feed_problem = None
        if count and (low != 1 or high != count):
            feed_problem = (
                f"global positions are not dense: {count} events span positions {low}..{high}"
            )
        return VerifyReport(
            ok=not failures and feed_problem is None,
            streams_checked=len(sids),
            events_checked=checked,
            failures=tuple(failures),
            feed_problem=feed_problem,
        )

    # ----------------------------------------------------------------- projections

    @contextmanager
    def projection_transaction(self, name: str) -> Iterator[ProjectionTransaction]:
        """One transaction for a projection's own writes and its tracked position.

        ``with store.projection_transaction("standings") as tx:`` read `tx.last_position`,
        write through `tx.connection` (or `tx.session`), call `tx.advance(position)`. Leaving
        the block commits both; an exception rolls both back.
        """
        _check_name(name)
        with self._write_lock, self._engines.write.connect() as conn, conn.begin():
            query = select(PROJECTIONS.c.position).where(PROJECTIONS.c.name == name)
            if self._pg:
                query = query.with_for_update()
            row = conn.execute(query).first()
            tx = ProjectionTransaction(conn, name, 0 if row is None else row[0])
            yield tx
            tx.close_session()
            if tx.position != tx.last_position or row is None:
                now = datetime.now(UTC)
                if row is None:
                    conn.execute(
                        PROJECTIONS.insert(),
                        {"name": name, "position": tx.position, "updated_at": now},
                    )
                else:
                    conn.execute(
                        PROJECTIONS.update()
                        .where(PROJECTIONS.c.name == name)
                        .values(position=tx.position, updated_at=now)
                    )

    def projection_position(self, name: str) -> int:
        """The last position the projection recorded (0 when it never ran)."""
        _check_name(name)
        query = select(PROJECTIONS.c.position).where(PROJECTIONS.c.name == name)
        with self._read_lock, self._engines.read.connect() as conn:
            return conn.execute(query).scalar() or 0

    def reset_projection(self, name: str) -> None:
        """Forget the projection's position, so it rebuilds from position 1."""
        _check_name(name)
        with self._write_lock, self._engines.write.begin() as conn:
            conn.execute(PROJECTIONS.delete().where(PROJECTIONS.c.name == name))

    # ----------------------------------------------------------------- leases

    def _lease_params(self, **values: object) -> dict[str, object]:
        if not self._pg:
            values["now"] = self._clock_ms()
        return values

    def _check_fence(self, cur: Any, fence: Lease) -> None:
        params = self._lease_params(name=fence.name, owner=fence.owner, epoch=fence.epoch)
        cur.execute(self._leases.fence, params)
        if cur.fetchone() is None:
            raise LeaseLost(fence.name, fence.owner, fence.epoch)

    def clock_ms(self) -> int:
        """The lease clock now (ms since the Unix epoch): the database's on PostgreSQL."""
        if not self._pg:
            return self._clock_ms()
        with self._raw(write=False) as cur:
            cur.execute(self._leases.now)
            return int(cur.fetchone()[0])

    def acquire_lease(self, name: str, owner: str, ttl_ms: int) -> Lease | None:
        """Take `name` for `owner` for `ttl_ms` if it is free, expired or already ours (then
        renewed). A lease taken anew gets the next epoch; None: another owner holds it."""
        taken = self.acquire_leases([name], owner, ttl_ms)
        return taken[0] if taken else None

    def acquire_leases(self, names: Sequence[str], owner: str, ttl_ms: int) -> list[Lease]:
        """`acquire_lease` for many names in one statement: the leases taken (or renewed), by
        name; a name another owner holds is simply not in the answer."""
        wanted = sorted(set(names))  # one row per name: a statement may touch a row once
        for name in wanted:
            _check_name(name, what="lease name", limit=300)
        _check_name(owner, what="lease owner")
        _check_ttl(ttl_ms)
        if not wanted:
            return []
        params = self._lease_params(owner=owner, ttl=ttl_ms)
        params.update({f"n{i}": name for i, name in enumerate(wanted)})
        with self._raw(write=True) as cur:
            cur.execute(acquire_sql(self._leases, len(wanted)), params)
            rows = cur.fetchall()
        return sorted((Lease(r[0], r[1], int(r[2]), int(r[3])) for r in rows), key=_by_name)

    def renew_leases(self, owner: str, ttl_ms: int) -> list[Lease]:
        """Extend every unexpired lease `owner` holds by `ttl_ms` from now, in one statement;
        returns them (a lease missing from the answer is lost: it expired or was taken)."""
        _check_name(owner, what="lease owner")
        _check_ttl(ttl_ms)
        with self._raw(write=True) as cur:
            cur.execute(self._leases.renew, self._lease_params(owner=owner, ttl=ttl_ms))
            rows = cur.fetchall()
        return sorted((Lease(r[0], r[1], int(r[2]), int(r[3])) for r in rows), key=_by_name)

    def release_lease(self, name: str, owner: str) -> None:
        """Give up `name` now, if `owner` holds it: the next taker needs no wait."""
        _check_name(name, what="lease name", limit=300)
        _check_name(owner, what="lease owner")
        with self._raw(write=True) as cur:
            cur.execute(self._leases.release, {"name": name, "owner": owner})

    def release_leases(self, owner: str) -> None:
        """Give up every lease `owner` holds (a graceful stop)."""
        _check_name(owner, what="lease owner")
        with self._raw(write=True) as cur:
            cur.execute(self._leases.release_all, {"owner": owner})

    def delete_lease(self, name: str) -> None:
        """Forget `name` altogether (its resource is gone, e.g. the game is over)."""
        _check_name(name, what="lease name", limit=300)
        with self._raw(write=True) as cur:
            cur.execute(self._leases.delete, {"name": name})

    def leases(self, prefix: str = "") -> list[Lease]:
        """The unexpired leases whose names start with `prefix`, by name."""
        if not isinstance(prefix, str) or not storable(prefix):
            raise InvalidNameError("a lease prefix must be text")
        with self._raw(write=False) as cur:
            cur.execute(self._leases.listing, self._lease_params(prefix=prefix, size=len(prefix)))
            rows = cur.fetchall()
        return sorted((Lease(r[0], r[1], int(r[2]), int(r[3])) for r in rows), key=_by_name)

    # ----------------------------------------------------------------- claims

    def claim(self, key: str, owner: str) -> ClaimResult:
        """Take `key` for `owner` unless someone already holds it (idempotent job claims)."""
        _check_name(key, what="claim key", limit=300)
        _check_name(owner, what="claim owner")
        now = datetime.now(UTC)
        try:
            with self._write_lock, self._engines.write.begin() as conn:
                conn.execute(CLAIMS.insert(), {"key": key, "owner": owner, "claimed_at": now})
            return ClaimResult(key, owner, now, acquired=True)
        except IntegrityError:
            held = self.get_claim(key)
            assert held is not None  # claims are never deleted
            return held

    def get_claim(self, key: str) -> ClaimResult | None:
        """Who holds `key`, or None."""
        _check_name(key, what="claim key", limit=300)
        with self._read_lock, self._engines.read.connect() as conn:
            row = conn.execute(select(CLAIMS).where(CLAIMS.c.key == key)).first()
        if row is None:
            return None
        return ClaimResult(row.key, row.owner, as_utc(row.claimed_at), acquired=False)

    # ----------------------------------------------------------------- sealed values

    def seal(self, key: str, value: str) -> None:
        """Keep `value` under `key`, outside the log (e.g. a shuffle seed until it is revealed).

        Sealing the same value again is a no-op; another value under a sealed key raises
        `SealedValueConflict`, so a secret committed to can never be swapped.
        """
        _check_name(key, what="sealed key", limit=300)
        if not isinstance(value, str) or not storable(value):
            raise InvalidEventError("a sealed value must be UTF-8 text without NUL characters")
        try:
            with self._write_lock, self._engines.write.begin() as conn:
                conn.execute(
                    SEALED.insert(), {"key": key, "value": value, "sealed_at": datetime.now(UTC)}
                )
        except IntegrityError:
            if self.unseal(key) != value:
                raise SealedValueConflict(f"{key!r} is sealed with another value") from None

    def unseal(self, key: str) -> str | None:
        """The value sealed under `key`, or None. Callers decide who may see it."""
        _check_name(key, what="sealed key", limit=300)
        with self._read_lock, self._engines.read.connect() as conn:
            value: str | None = conn.execute(
                select(SEALED.c.value).where(SEALED.c.key == key)
            ).scalar()
        return value


MAX_LEASE_TTL_MS = 366 * 24 * 3600 * 1000  # a year: far beyond any lease, far inside BIGINT


def _check_ttl(ttl_ms: object) -> None:
    check_positive(ttl_ms, "ttl_ms")
    assert isinstance(ttl_ms, int)
    if ttl_ms > MAX_LEASE_TTL_MS:
        raise InvalidVersionError(f"ttl_ms must be at most {MAX_LEASE_TTL_MS} (a year)")


def _event_rows(links: list[Link], position: int, stamp: object) -> list[tuple[object, ...]]:
    """`links` as `insert_events` binds them, at the positions after `position`."""
    return [(*link, position + i, stamp) for i, link in enumerate(links, 1)]


def _unavailable(exc: Exception) -> StoreBusy | StoreUnavailable:
    """A driver's OperationalError as the store's own: busy (a lock wait ran out) or
    unavailable (the connection or the server is gone)."""
    message = str(exc).lower()
    if "locked" in message or "lock timeout" in message or "busy" in message:
        return StoreBusy(f"database busy: {exc}")
    return StoreUnavailable(f"database unavailable: {exc}")


def _by_name(lease: Lease) -> str:
    return lease.name


def _check_name(value: object, *, what: str = "projection name", limit: int = NAME_MAX) -> None:
    if not isinstance(value, str) or not value or len(value) > limit or not storable(value):
        raise InvalidNameError(
            f"{what} must be a non-empty string of at most {limit} characters "
            "(UTF-8 text without NUL characters)"
        )
