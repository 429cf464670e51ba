"""Value objects that cross the store's boundary: events in, recorded events out."""

from __future__ import annotations

import enum
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, TypeAlias

JSONObject: TypeAlias = dict[str, Any]


class StreamState(enum.Enum):
    """Expected-version sentinels besides a plain integer version."""

    NO_STREAM = "no_stream"
    """The stream must have no events yet (same as expected version 0)."""
    ANY = "any"
    """No concurrency check: append after whatever is there."""


NO_STREAM: Final = StreamState.NO_STREAM
ANY: Final = StreamState.ANY

ExpectedVersion: TypeAlias = int | StreamState


def new_event_id() -> str:
    """A fresh random event id (UUID4 text); callers that retry must keep theirs."""
    return str(uuid.uuid4())


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event to append. Keep the `event_id` when retrying so the retry is idempotent."""

    type: str
    payload: JSONObject
    event_id: str = field(default_factory=new_event_id)
    schema_version: int = 1
    meta: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """An event as stored: its global `position`, its `version` in the stream and its hashes.

    `payload` and `schema_version` are upcast to the current schema on reads (not on the
    result of `append`); the hashes always cover the stored form.
    """

    position: int
    stream_id: str
    version: int
    event_id: str
    type: str
    schema_version: int
    payload: JSONObject
    meta: JSONObject
    recorded_at: datetime
    prev_hash: str
    hash: str


@dataclass(frozen=True, slots=True)
class AppendRequest:
    """One item of a group commit (`EventStore.append_many`)."""

    stream_id: str
    events: Sequence[NewEvent]
    expected_version: ExpectedVersion = ANY


@dataclass(frozen=True, slots=True)
class StreamInfo:
    """A stream's row: its current version and the hash of its last event."""

    stream_id: str
    type: str
    version: int
    head_hash: str
    metadata: JSONObject
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """The outcome of checking one stream's chain: ok, or the first bad event and why."""

    stream_id: str
    ok: bool
    events_checked: int
    version: int | None = None
    position: int | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """Who holds a claim key; `acquired` tells whether this call took it."""

    key: str
    owner: str
    claimed_at: datetime
    acquired: bool


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The outcome of `verify_all`: every stream's chain and the density of the global feed."""

    ok: bool
    streams_checked: int
    events_checked: int
    failures: tuple[VerifyResult, ...]
    feed_problem: str | None = None
