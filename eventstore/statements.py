"""SQL of the hot paths, compiled once per dialect from the SQLModel tables' Core objects.

Appends and replays run these on the pooled DBAPI connection: SQLAlchemy's per-statement
execution machinery costs more than SQLite's own work for a one-card append.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import bindparam, func, select
from sqlalchemy.dialects import sqlite
from sqlalchemy.dialects.postgresql.psycopg import PGDialect_psycopg
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import ClauseElement

from eventstore.decoding import EVENT_COLUMNS
from eventstore.tables import EVENTS, STREAMS


@dataclass(frozen=True, slots=True)
class Statements:
    """Rendered SQL taking named parameters (dicts) on either driver."""

    begin_write: str | None
    begin_read: str | None
    lock: str | None
    notify: str | None
    max_position: str
    one_head: str
    insert_events: str
    insert_stream: str
    update_stream: str
    stream_from: str
    stream_range: str
    all_from: str
    events_by_id_prefix: str
    stream_after: str
    all_stream_ids: str
    feed_extent: str
    placeholder: str

    def events_by_ids(self, count: int) -> str:
        marks = ", ".join(self.placeholder % f"e{i}" for i in range(count))
        return f"{self.events_by_id_prefix} ({marks})"


INSERTED_COLUMNS = (
    *(c.name for c in EVENT_COLUMNS if c.name not in ("position", "recorded_at")),
    "position",
    "recorded_at",
)
"""`insert_events`' parameters, in order: an `eventstore.appending.Link`, then the position and
the recorded time (positional: cheaper to build and bind than a dict per row)."""


def _render(statement: ClauseElement, dialect: Dialect) -> str:
    return str(statement.compile(dialect=dialect))


def compile_statements(kind: str) -> Statements:
    if kind == "sqlite":
        dialect: Dialect = sqlite.dialect(paramstyle="named")
        placeholder = ":%s"
        mark = "?"
    else:
        dialect = PGDialect_psycopg(paramstyle="pyformat")  # type: ignore[no-untyped-call]
        placeholder = "%%(%s)s"
        mark = "%s"
    cols = EVENT_COLUMNS
    c = EVENTS.c
    head = select(STREAMS.c.version, STREAMS.c.head_hash).where(STREAMS.c.id == bindparam("sid"))
    update = (
        STREAMS.update()
        .where(STREAMS.c.id == bindparam("sid"))
        .values(
            version=bindparam("new_version"),
            head_hash=bindparam("new_head"),
            updated_at=bindparam("now"),
        )
    )
    stream_from = (
        select(*cols)
        .where(c.stream_id == bindparam("sid"), c.version >= bindparam("lo"))
        .order_by(c.version)
        .limit(bindparam("lim"))
        .offset(bindparam("off"))
    )
    stream_range = (
        select(*cols)
        .where(
            c.stream_id == bindparam("sid"),
            c.version >= bindparam("lo"),
            c.version <= bindparam("hi"),
        )
        .order_by(c.version)
        .limit(bindparam("lim"))
        .offset(bindparam("off"))
    )
    all_from = (
        select(*cols)
        .where(c.position >= bindparam("lo"))
        .order_by(c.position)
        .limit(bindparam("lim"))
        .offset(bindparam("off"))
    )
    links = (
        select(*cols)
        .where(c.stream_id == bindparam("sid"), c.version > bindparam("lo"))
        .order_by(c.version)
        .limit(bindparam("lim"))
        .offset(bindparam("off"))
    )
    ids = select(STREAMS.c.id).union(select(c.stream_id))
    extent = select(func.count(), func.min(c.position), func.max(c.position))
    by_ids = _render(select(*cols), dialect) + f" WHERE {EVENTS.name}.{c.event_id.name} IN"
    pg = kind != "sqlite"
    return Statements(
        begin_write=None if pg else "BEGIN IMMEDIATE",
        # One snapshot for reads that compare rows read by several statements (verify): on
        # PostgreSQL the first statement of the transaction psycopg opens; SQLite's deferred
        # BEGIN holds the WAL snapshot taken at its first read.
        begin_read="SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY" if pg else "BEGIN",
        lock="SELECT pg_advisory_xact_lock(%(k)s)" if pg else None,
        notify="SELECT pg_notify(%(channel)s, %(position)s)" if pg else None,
        max_position=_render(select(func.max(c.position)), dialect),
        one_head=_render(head, dialect),
        insert_events=(
            f"INSERT INTO {EVENTS.name} ({', '.join(INSERTED_COLUMNS)}) "
            f"VALUES ({', '.join([mark] * len(INSERTED_COLUMNS))})"
        ),
        insert_stream=_render(STREAMS.insert(), dialect),
        update_stream=_render(update, dialect),
        stream_from=_render(stream_from, dialect),
        stream_range=_render(stream_range, dialect),
        all_from=_render(all_from, dialect),
        events_by_id_prefix=by_ids,
        stream_after=_render(links, dialect),
        all_stream_ids=_render(ids, dialect),
        feed_extent=_render(extent, dialect),
        placeholder=placeholder,
    )


_LAST_POSITION = f"RETURNING (SELECT coalesce(max(position), 0) FROM {EVENTS.name})"


def guarded_stream_writes(fence: str | None) -> tuple[str, str]:
    """SQLite: the stream row's write of an append built on a cached head, (existing stream,
    new stream), done only while the row is still that head (and, given the lease `fence`
    query, while the lease is held); it returns the last position, else no row and nothing
    is written. Named parameters: sid, version, head (the head built on), new_version,
    new_head, stamp; type and metadata for a new stream; the fence's own."""
    held = "" if fence is None else f" AND EXISTS ({fence})"
    s = STREAMS.name
    update = (
        f"UPDATE {s} SET version = :new_version, head_hash = :new_head, updated_at = :stamp "
        f"WHERE id = :sid AND version = :version AND head_hash = :head{held} "
        f"{_LAST_POSITION}"
    )
    insert = (
        f"INSERT INTO {s} (id, type, version, head_hash, metadata, created_at, updated_at) "
        f"SELECT :sid, :type, :new_version, :new_head, :metadata, :stamp, :stamp "
        f"WHERE NOT EXISTS (SELECT 1 FROM {s} WHERE id = :sid){held} "
        f"{_LAST_POSITION}"
    )
    return update, insert
