"""The store's tables as SQLModel models; the hot path uses their Core `Table` objects.

The schema itself is owned by the Alembic migrations in `eventstore/migrations`; these models
must match them (a test compares the two).
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlmodel import Field, SQLModel

# SQLite only treats "INTEGER PRIMARY KEY" as the rowid alias (fast and compact).
_BIG_ID = BigInteger().with_variant(Integer(), "sqlite")

STREAM_ID_MAX = 200
EVENT_ID_MAX = 100
TYPE_MAX = 200
CLAIM_KEY_MAX = 300
NAME_MAX = 200


class StreamRow(SQLModel, table=True):
    """One row per stream: its version (= number of events) and the hash of its last event."""

    __tablename__: ClassVar[str] = "streams"

    id: str = Field(sa_column=Column("id", String(STREAM_ID_MAX), primary_key=True))
    type: str = Field(sa_column=Column("type", String(TYPE_MAX), nullable=False))
    version: int = Field(sa_column=Column("version", BigInteger, nullable=False))
    head_hash: str = Field(sa_column=Column("head_hash", String(64), nullable=False))
    stream_metadata: str = Field(sa_column=Column("metadata", Text, nullable=False))
    created_at: datetime = Field(
        sa_column=Column("created_at", DateTime(timezone=True), nullable=False)
    )
    updated_at: datetime = Field(
        sa_column=Column("updated_at", DateTime(timezone=True), nullable=False)
    )


class EventRow(SQLModel, table=True):
    """One row per event; `position` is the global, dense, commit-ordered feed index."""

    __tablename__: ClassVar[str] = "events"
    __table_args__ = (
        UniqueConstraint("stream_id", "version", name="uq_events_stream_version"),
        UniqueConstraint("event_id", name="uq_events_event_id"),
    )

    position: int = Field(
        sa_column=Column("position", _BIG_ID, primary_key=True, autoincrement=False)
    )
    stream_id: str = Field(sa_column=Column("stream_id", String(STREAM_ID_MAX), nullable=False))
    version: int = Field(sa_column=Column("version", BigInteger, nullable=False))
    event_id: str = Field(sa_column=Column("event_id", String(EVENT_ID_MAX), nullable=False))
    type: str = Field(sa_column=Column("type", String(TYPE_MAX), nullable=False))
    schema_version: int = Field(sa_column=Column("schema_version", Integer, nullable=False))
    payload: str = Field(sa_column=Column("payload", Text, nullable=False))
    meta: str = Field(sa_column=Column("meta", Text, nullable=False))
    recorded_at: datetime = Field(
        sa_column=Column("recorded_at", DateTime(timezone=True), nullable=False)
    )
    prev_hash: str = Field(sa_column=Column("prev_hash", String(64), nullable=False))
    hash: str = Field(sa_column=Column("hash", String(64), nullable=False))


class ProjectionRow(SQLModel, table=True):
    """A projection's (consumer's) last processed global position."""

    __tablename__: ClassVar[str] = "projections"

    name: str = Field(sa_column=Column("name", String(NAME_MAX), primary_key=True))
    position: int = Field(sa_column=Column("position", BigInteger, nullable=False))
    updated_at: datetime = Field(
        sa_column=Column("updated_at", DateTime(timezone=True), nullable=False)
    )


class ClaimRow(SQLModel, table=True):
    """An idempotent claim: the first owner to insert a key holds it."""

    __tablename__: ClassVar[str] = "claims"

    key: str = Field(sa_column=Column("key", String(CLAIM_KEY_MAX), primary_key=True))
    owner: str = Field(sa_column=Column("owner", String(NAME_MAX), nullable=False))
    claimed_at: datetime = Field(
        sa_column=Column("claimed_at", DateTime(timezone=True), nullable=False)
    )


class SealedRow(SQLModel, table=True):
    """A value held back from the log (a commitment's secret) until a stream reveals it."""

    __tablename__: ClassVar[str] = "sealed"

    key: str = Field(sa_column=Column("key", String(CLAIM_KEY_MAX), primary_key=True))
    value: str = Field(sa_column=Column("value", Text, nullable=False))
    sealed_at: datetime = Field(
        sa_column=Column("sealed_at", DateTime(timezone=True), nullable=False)
    )


class LeaseRow(SQLModel, table=True):
    """A named lease: who holds it, at which epoch (the fencing token), until when.

    Times are milliseconds since the Unix epoch on the database's clock (PostgreSQL), so
    processes on hosts with skewed clocks still agree on who holds a lease.
    """

    __tablename__: ClassVar[str] = "leases"

    name: str = Field(sa_column=Column("name", String(CLAIM_KEY_MAX), primary_key=True))
    owner: str = Field(sa_column=Column("owner", String(NAME_MAX), nullable=False, index=True))
    epoch: int = Field(sa_column=Column("epoch", BigInteger, nullable=False))
    expires_ms: int = Field(sa_column=Column("expires_ms", BigInteger, nullable=False))
    acquired_ms: int = Field(sa_column=Column("acquired_ms", BigInteger, nullable=False))


class LogNodeRow(SQLModel, table=True):
    """A perfect subtree of the transparency log's Merkle tree: the hash of the 2**level
    leaves from index * 2**level (level 0: the leaves). Written once, never changed."""

    __tablename__: ClassVar[str] = "log_nodes"

    level: int = Field(sa_column=Column("level", SmallInteger, primary_key=True))
    idx: int = Field(sa_column=Column("idx", BigInteger, primary_key=True, autoincrement=False))
    hash: bytes = Field(sa_column=Column("hash", LargeBinary(32), nullable=False))


class LogSizeRow(SQLModel, table=True):
    """The one row saying how many events the tree covers (locked while it grows)."""

    __tablename__: ClassVar[str] = "log_size"

    id: int = Field(sa_column=Column("id", Integer, primary_key=True, autoincrement=False))
    size: int = Field(sa_column=Column("size", BigInteger, nullable=False))


STREAMS: Table = SQLModel.metadata.tables["streams"]
EVENTS: Table = SQLModel.metadata.tables["events"]
PROJECTIONS: Table = SQLModel.metadata.tables["projections"]
CLAIMS: Table = SQLModel.metadata.tables["claims"]
SEALED: Table = SQLModel.metadata.tables["sealed"]
LEASES: Table = SQLModel.metadata.tables["leases"]
LOG_NODES: Table = SQLModel.metadata.tables["log_nodes"]
LOG_SIZE: Table = SQLModel.metadata.tables["log_size"]
STORE_TABLES: tuple[Table, ...] = (
    STREAMS,
    EVENTS,
    PROJECTIONS,
    CLAIMS,
    SEALED,
    LEASES,
    LOG_NODES,
    LOG_SIZE,
)
