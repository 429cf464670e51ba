"""An append-only, hash-chained event store (SQLite or PostgreSQL). It knows nothing of King.

Start here: `EventStore.open(url)`, `NewEvent`, `append(stream_id, events, expected_version)`.
"""

from eventstore.backends import StoreSettings
from eventstore.canonical import (
    GENESIS_HASH,
    MAX_EVENT_BYTES,
    MAX_STREAM_METADATA_BYTES,
    canonical_json,
)
from eventstore.errors import (
    ChainBrokenError,
    ConflictError,
    EventStoreError,
    FloatNotAllowedError,
    GroupConflict,
    IdempotencyConflict,
    InvalidEventError,
    InvalidNameError,
    InvalidStreamIdError,
    InvalidVersionError,
    LeaseLost,
    NotCanonicalJSONError,
    PayloadTooLargeError,
    SchemaError,
    SealedValueConflict,
    StoreBusy,
    StoreUnavailable,
    StreamNotFound,
    UpcastError,
    VersionConflict,
)
from eventstore.leases import Lease
from eventstore.projections import ProjectionTransaction
from eventstore.records import (
    ANY,
    NO_STREAM,
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
from eventstore.store import EventStore
from eventstore.subscription import CatchUpSubscription
from eventstore.upcasting import UpcasterRegistry

__all__ = [
    "ANY",
    "GENESIS_HASH",
    "MAX_EVENT_BYTES",
    "MAX_STREAM_METADATA_BYTES",
    "NO_STREAM",
    "AppendRequest",
    "CatchUpSubscription",
    "ChainBrokenError",
    "ClaimResult",
    "ConflictError",
    "EventStore",
    "EventStoreError",
    "ExpectedVersion",
    "FloatNotAllowedError",
    "GroupConflict",
    "IdempotencyConflict",
    "InvalidEventError",
    "InvalidNameError",
    "InvalidStreamIdError",
    "InvalidVersionError",
    "Lease",
    "LeaseLost",
    "NewEvent",
    "NotCanonicalJSONError",
    "PayloadTooLargeError",
    "ProjectionTransaction",
    "RecordedEvent",
    "SchemaError",
    "SealedValueConflict",
    "StoreBusy",
    "StoreSettings",
    "StoreUnavailable",
    "StreamInfo",
    "StreamNotFound",
    "StreamState",
    "UpcastError",
    "UpcasterRegistry",
    "VerifyReport",
    "VerifyResult",
    "VersionConflict",
    "canonical_json",
]
