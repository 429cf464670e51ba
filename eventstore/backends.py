"""Engines per backend: the database URL decides SQLite (file or memory) or PostgreSQL.

SQLite: WAL, ``busy_timeout``, durable commits (``synchronous=FULL`` by default) and write
transactions begun ``IMMEDIATE`` so a writer takes the write lock before it reads the stream's
version (pysqlite's own implicit BEGIN is switched off; SQLAlchemy's "begin" event emits ours).
PostgreSQL (psycopg 3): pooled, with ``lock_timeout`` and ``idle_in_transaction_session_timeout``,
and READ COMMITTED set on every connection: appends rely on it (they read the head under the
advisory lock, which a REPEATABLE READ snapshot taken before the lock would not see), so a
server whose default is stricter cannot break them. Reads that need one snapshot ask for it
per transaction (`eventstore.statements`).
"""

from __future__ import annotations

import hashlib
import re
import zlib
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.pool import StaticPool

SqliteSync = Literal["OFF", "NORMAL", "FULL", "EXTRA"]
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


@dataclass(frozen=True, slots=True)
class StoreSettings:
    """Tunables of the store's engines; the defaults are the durable, production ones."""

    sqlite_synchronous: SqliteSync = "FULL"
    busy_timeout_ms: int = 30_000
    pg_lock_timeout_ms: int = 30_000
    # Short: appends hold the one append lock, so a writer paused or stuck inside its
    # transaction would stall every other writer until the server ends its session.
    pg_idle_in_transaction_timeout_ms: int = 3_000
    pg_schema: str | None = None
    """PostgreSQL schema holding the store's tables (search_path); None uses the default."""
    pool_size: int = 5
    max_overflow: int = 10
    notify_channel: str = ""
    """The LISTEN/NOTIFY channel; empty: `eventstore_events`, with the schema's name when there
    is one (see `channel`)."""

    @property
    def channel(self) -> str:
        """The channel in use. Stores in other schemas of one database must not hear each other:
        a notification carries the appended events themselves, and a follower would take
        another schema's events for its own."""
        if self.notify_channel:
            return self.notify_channel
        if self.pg_schema is None:
            return "eventstore_events"
        name = f"eventstore_events_{self.pg_schema}"
        if len(name) > 63:  # PostgreSQL's identifier limit
            name = "eventstore_events_" + hashlib.sha256(self.pg_schema.encode()).hexdigest()[:24]
        return name

    def __post_init__(self) -> None:
        if self.pg_schema is not None and not _SCHEMA_NAME.match(self.pg_schema):
            raise ValueError(f"pg_schema must match {_SCHEMA_NAME.pattern}: {self.pg_schema!r}")


@dataclass(frozen=True, slots=True)
class Engines:
    """A write engine and a read engine (the same object for SQLite memory and PostgreSQL)."""

    kind: Literal["sqlite", "postgresql"]
    memory: bool
    write: Engine
    read: Engine
    url: URL
    settings: StoreSettings

    @property
    def advisory_lock_key(self) -> int:
        """The key of the PostgreSQL advisory lock that serialises appends (per schema)."""
        return zlib.crc32(f"eventstore:{self.settings.pg_schema or ''}".encode())

    def dispose(self) -> None:
        self.write.dispose()
        if self.read is not self.write:
            self.read.dispose()


def _sqlite_engine(url: URL, settings: StoreSettings, *, memory: bool, write: bool) -> Engine:
    kwargs: dict[str, Any] = {"connect_args": {"check_same_thread": False}}
    if memory:
        kwargs["poolclass"] = StaticPool
    else:
        kwargs["pool_size"] = settings.pool_size
        kwargs["max_overflow"] = settings.max_overflow
    engine = create_engine(url, **kwargs)
    begin_sql = "BEGIN IMMEDIATE" if write else "BEGIN"

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # no implicit BEGIN from pysqlite
        cursor = dbapi_connection.cursor()
        try:
            if not memory:
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={int(settings.busy_timeout_ms)}")
            cursor.execute(f"PRAGMA synchronous={settings.sqlite_synchronous}")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql(begin_sql)

    return engine


def _pg_engine(url: URL, settings: StoreSettings) -> Engine:
    options = [
        f"-c lock_timeout={int(settings.pg_lock_timeout_ms)}",
        f"-c idle_in_transaction_session_timeout={int(settings.pg_idle_in_transaction_timeout_ms)}",
        "-c default_transaction_isolation=read\\ committed",  # libpq: a space is escaped
    ]
    if settings.pg_schema:
        options.append(f"-c search_path={settings.pg_schema}")
    return create_engine(
        url,
        pool_size=settings.pool_size,
        max_overflow=settings.max_overflow,
        pool_pre_ping=True,
        connect_args={"options": " ".join(options), "application_name": "eventstore"},
    )


def create_engines(url: str | URL, settings: StoreSettings | None = None) -> Engines:
    """Build the engines for `url`: ``sqlite:///path``, ``sqlite://`` or ``postgresql+psycopg://``."""
    settings = settings or StoreSettings()
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        database = parsed.database or ""
        memory = database in ("", ":memory:") or "mode=memory" in database
        write = _sqlite_engine(parsed, settings, memory=memory, write=True)
        read = write if memory else _sqlite_engine(parsed, settings, memory=False, write=False)
        return Engines("sqlite", memory, write, read, parsed, settings)
    if backend == "postgresql":
        if parsed.get_driver_name() != "psycopg":
            parsed = parsed.set(drivername="postgresql+psycopg")
        engine = _pg_engine(parsed, settings)
        return Engines("postgresql", False, engine, engine, parsed, settings)
    raise ValueError(f"unsupported database URL {parsed!r}: use sqlite:// or postgresql+psycopg://")
