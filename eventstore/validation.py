"""Checks and encoding done before a write transaction begins, so bad input writes nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from eventstore.canonical import canonical_json, check_size
from eventstore.errors import InvalidEventError, InvalidStreamIdError, InvalidVersionError
from eventstore.records import AppendRequest, ExpectedVersion, NewEvent, StreamState
from eventstore.tables import EVENT_ID_MAX, STREAM_ID_MAX, TYPE_MAX


class EncodedEvent(NamedTuple):
    """A validated event with its canonical payload and meta bytes (a tuple: the hot path
    makes one per event, and a frozen dataclass costs a setattr call per field)."""

    event_id: str
    type: str
    schema_version: int
    payload: bytes
    meta: bytes


class PreparedAppend(NamedTuple):
    """A validated append: what the write transaction needs and nothing else."""

    stream_id: str
    expected: ExpectedVersion
    events: tuple[EncodedEvent, ...]


def storable(text: str) -> bool:
    """True when `text` encodes to UTF-8 (no lone surrogate) and holds no NUL, which
    PostgreSQL's text types refuse: checked up front so both backends refuse alike."""
    if "\x00" in text:
        return False
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def check_stream_id(stream_id: object) -> str:
    if not isinstance(stream_id, str) or not stream_id or not stream_id.strip():
        raise InvalidStreamIdError(f"stream id must be a non-empty string, got {stream_id!r}")
    if len(stream_id) > STREAM_ID_MAX:
        raise InvalidStreamIdError(f"stream id longer than {STREAM_ID_MAX} characters")
    if not storable(stream_id):
        raise InvalidStreamIdError(
            f"stream id must be UTF-8 text without NUL characters, got {stream_id!r}"
        )
    return stream_id


def check_expected(expected: object) -> ExpectedVersion:
    if isinstance(expected, StreamState):
        return expected
    if isinstance(expected, bool) or not isinstance(expected, int):
        raise InvalidVersionError(
            f"expected version must be an int >= 0, NO_STREAM or ANY, got {expected!r}"
        )
    if expected < 0:
        raise InvalidVersionError(f"expected version must be >= 0, got {expected}")
    return expected


def check_non_negative(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidVersionError(f"{what} must be an int >= 0, got {value!r}")
    return value


def check_positive(value: object, what: str) -> int:
    """A batch size: 0 would read nothing forever (or end a verify before its first row)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidVersionError(f"{what} must be an int >= 1, got {value!r}")
    return value


def check_interval(value: object, what: str) -> float:
    """A wait in seconds: 0, negative or NaN would turn a poll loop into a busy loop."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise InvalidVersionError(f"{what} must be a number of seconds > 0, got {value!r}")
    if value == float("inf"):
        raise InvalidVersionError(f"{what} must be finite")
    return float(value)


def check_text(value: object, what: str, limit: int) -> str:
    """A non-empty, storable string of at most `limit` characters, else `InvalidEventError`."""
    if not isinstance(value, str) or not value:
        raise InvalidEventError(f"{what} must be a non-empty string, got {value!r}")
    if len(value) > limit:
        raise InvalidEventError(f"{what} longer than {limit} characters")
    if not storable(value):
        raise InvalidEventError(f"{what} must be UTF-8 text without NUL characters: {value!r}")
    return value


def encode_event(event: object) -> EncodedEvent:
    if not isinstance(event, NewEvent):
        raise InvalidEventError(f"expected a NewEvent, got {type(event).__name__}")
    schema_version = event.schema_version
    if type(schema_version) is not int or schema_version < 1:
        raise InvalidEventError(f"schema_version must be an int >= 1, got {schema_version!r}")
    payload = canonical_json(event.payload, "payload")
    meta = canonical_json(event.meta, "meta")
    check_size(payload, meta)
    return EncodedEvent(
        event_id=check_text(event.event_id, "event_id", EVENT_ID_MAX),
        type=check_text(event.type, "event type", TYPE_MAX),
        schema_version=schema_version,
        payload=payload,
        meta=meta,
    )


def prepare(
    stream_id: object, events: Sequence[NewEvent], expected: object, seen: set[str]
) -> PreparedAppend:
    """Validate and encode one append; `seen` collects event ids across a group."""
    sid = check_stream_id(stream_id)
    exp = check_expected(expected)
    if isinstance(events, NewEvent) or not isinstance(events, Sequence) or not events:
        raise InvalidEventError("events must be a non-empty sequence of NewEvent")
    encoded = tuple(encode_event(e) for e in events)
    for e in encoded:
        if e.event_id in seen:
            raise InvalidEventError(f"event id {e.event_id!r} appears twice in one append")
        seen.add(e.event_id)
    return PreparedAppend(sid, exp, encoded)


def prepare_group(requests: Sequence[AppendRequest | tuple[object, ...]]) -> list[PreparedAppend]:
    if not requests:
        raise InvalidEventError("append_many needs at least one request")
    seen: set[str] = set()
    prepared = []
    for request in requests:
        if isinstance(request, AppendRequest):
            prepared.append(
                prepare(request.stream_id, request.events, request.expected_version, seen)
            )
        elif isinstance(request, tuple) and len(request) == 3:
            sid, events, expected = request
            if not isinstance(events, Sequence):
                raise InvalidEventError("events must be a non-empty sequence of NewEvent")
            prepared.append(prepare(sid, events, expected, seen))
        else:
            raise InvalidEventError(
                "append_many takes AppendRequest or (stream_id, events, expected_version)"
            )
    return prepared
