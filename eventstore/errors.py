"""Typed errors of the event store: callers branch on the class, never on a message."""

from __future__ import annotations


class EventStoreError(Exception):
    """Base class of every error the event store raises on purpose."""


class InvalidEventError(EventStoreError):
    """An event (or its stream id, version or batch) was rejected before anything was written."""


class InvalidStreamIdError(InvalidEventError):
    """A stream id is empty, too long, not a string, or not storable text (a lone surrogate,
    a NUL character)."""


class InvalidVersionError(InvalidEventError):
    """An expected version, a read bound, a batch size or a poll interval is out of range or
    of the wrong type."""


class NotCanonicalJSONError(InvalidEventError):
    """A payload or meta value cannot be encoded as canonical JSON (wrong type, bad string)."""


class FloatNotAllowedError(NotCanonicalJSONError):
    """A float was found in a payload or meta; only integers keep the hash chain exact."""


class PayloadTooLargeError(InvalidEventError):
    """An event's canonical payload plus meta exceeds the documented size limit."""


class ConflictError(EventStoreError):
    """An append could not be applied as asked; nothing of it was written."""


class SealedValueConflict(ConflictError):
    """A key is already sealed with another value: a sealed secret is never replaced."""


class VersionConflict(ConflictError):
    """The stream's version is not the one the writer expected (someone else appended first)."""

    def __init__(self, stream_id: str, expected: object, actual: int) -> None:
        self.stream_id = stream_id
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"stream {stream_id!r}: expected version {expected}, actual version {actual}"
        )


class IdempotencyConflict(ConflictError):
    """An event id was already recorded with different content (or elsewhere)."""

    def __init__(self, stream_id: str, event_id: str, reason: str) -> None:
        self.stream_id = stream_id
        self.event_id = event_id
        self.reason = reason
        super().__init__(f"stream {stream_id!r}: event id {event_id!r} {reason}")


class GroupConflict(ConflictError):
    """One item of an `append_many` group conflicted; no item of the group was written."""

    def __init__(self, index: int, cause: ConflictError) -> None:
        self.index = index
        self.cause = cause
        super().__init__(f"group item {index}: {cause}")


class ChainBrokenError(EventStoreError):
    """A read with ``verify=True`` found a stored event whose hash or link is wrong."""

    def __init__(self, result: object) -> None:
        self.result = result
        super().__init__(f"hash chain broken: {result}")


class StreamNotFound(EventStoreError):
    """The stream has no events (raised by `read_stream(..., must_exist=True)` and `verify`)."""

    def __init__(self, stream_id: str) -> None:
        self.stream_id = stream_id
        super().__init__(f"stream {stream_id!r} not found")


class InvalidNameError(EventStoreError):
    """A projection name, claim key, claim owner or sealed key is empty, too long, or not
    storable text (a lone surrogate, a NUL character)."""


class SchemaError(EventStoreError):
    """The database schema is missing or older than this code expects."""


class UpcastError(EventStoreError):
    """An upcaster is missing from a chain or returned something that is not a JSON object."""


class StoreBusy(EventStoreError):
    """The database stayed locked past the configured timeout (SQLite busy, PG lock_timeout)."""


class LeaseLost(ConflictError):
    """A fenced append's lease is no longer held by its owner at its epoch (it expired, was
    released, or another owner took it): nothing was written."""

    def __init__(self, name: str, owner: str, epoch: int) -> None:
        super().__init__(f"lease {name!r} is no longer held by {owner!r} at epoch {epoch}")
        self.name = name
        self.owner = owner
        self.epoch = epoch


class StoreUnavailable(EventStoreError):
    """The database could not be reached or dropped the connection: nothing of the call was
    written (its transaction was rolled back); try again once the database is back."""
