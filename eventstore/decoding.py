"""Rows to `RecordedEvent`s: parse the stored JSON and upcast it to the current schema."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from eventstore.records import RecordedEvent
from eventstore.tables import EVENTS
from eventstore.upcasting import UpcasterRegistry

EVENT_COLUMNS = (
    EVENTS.c.position,
    EVENTS.c.stream_id,
    EVENTS.c.version,
    EVENTS.c.event_id,
    EVENTS.c.type,
    EVENTS.c.schema_version,
    EVENTS.c.payload,
    EVENTS.c.meta,
    EVENTS.c.recorded_at,
    EVENTS.c.prev_hash,
    EVENTS.c.hash,
)


def as_utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored moment is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _utc_from_text(text: str) -> datetime:
    """SQLite's naive DATETIME text (always UTC) as an aware datetime.

    Parsing with a ``+00:00`` suffix yields `datetime.UTC` itself as tzinfo and costs a
    quarter of ``.replace(tzinfo=UTC)``; text that already carries an offset keeps the
    old reading (its wall time taken as UTC).
    """
    try:
        return datetime.fromisoformat(text + "+00:00")
    except ValueError:
        return datetime.fromisoformat(text).replace(tzinfo=UTC)


def decode_rows(rows: Sequence[Any], upcasters: UpcasterRegistry | None) -> list[RecordedEvent]:
    loads = orjson.loads
    out: list[RecordedEvent] = []
    append = out.append
    upcast = upcasters.upcast if upcasters else None
    # The frozen dataclass's __init__ sets each field through object.__setattr__; writing the
    # slots through their descriptors builds the same instance in half the time.
    new = object.__new__
    s_pos, s_sid, s_ver, s_eid, s_typ, s_sv, s_body, s_meta, s_at, s_prev, s_hash = _SETTERS
    last_text: object = None
    last_moment: Any = None
    for pos, sid, ver, eid, typ, sv, payload, meta, at, prev, h in rows:
        body = loads(payload)
        if upcast is not None:
            sv, body = upcast(typ, sv, body)
        if type(at) is str:  # SQLite: SQLAlchemy's DATETIME text, always UTC
            if at != last_text:  # events appended together share their moment
                last_text, last_moment = at, _utc_from_text(at)
            at = last_moment
        elif at.tzinfo is None:
            at = at.replace(tzinfo=UTC)
        event = new(RecordedEvent)
        s_pos(event, pos)
        s_sid(event, sid)
        s_ver(event, ver)
        s_eid(event, eid)
        s_typ(event, typ)
        s_sv(event, sv)
        s_body(event, body)
        s_meta(event, {} if meta == "{}" else loads(meta))
        s_at(event, at)
        s_prev(event, prev)
        s_hash(event, h)
        append(event)
    return out


def decode_payloads(
    rows: Sequence[Any], upcasters: UpcasterRegistry | None
) -> list[tuple[int, str, Any]]:
    """Rows as (version, type, payload), each payload parsed and upcast as `decode_rows`
    does, nothing else decoded."""
    loads = orjson.loads
    if not upcasters:
        return [(row[2], row[4], loads(row[6])) for row in rows]
    upcast = upcasters.upcast
    # A row at its type's current schema version (nearly all) skips the upcaster's call.
    current = upcasters.current_versions().get
    return [
        (row[2], row[4], loads(row[6]))
        if current(row[4], 0) <= row[5]
        else (row[2], row[4], upcast(row[4], row[5], loads(row[6]))[1])
        for row in rows
    ]


# The order decode_rows sets them in; a field added to RecordedEvent must be added there too.
_FIELDS = (
    "position",
    "stream_id",
    "version",
    "event_id",
    "type",
    "schema_version",
    "payload",
    "meta",
    "recorded_at",
    "prev_hash",
    "hash",
)
if tuple(f.name for f in fields(RecordedEvent)) != _FIELDS:
    raise RuntimeError("RecordedEvent's fields changed: update eventstore.decoding")
_SETTERS: tuple[Callable[[RecordedEvent, Any], None], ...] = tuple(
    getattr(RecordedEvent, name).__set__ for name in _FIELDS
)


@dataclass(frozen=True, slots=True)
class Notification:
    """What one append's PostgreSQL notification says: the last position it wrote and, when
    the payload carried them, its events (in position order, ending at `last`)."""

    last: int
    events: list[RecordedEvent] | None


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def decode_notification(text: str, upcasters: UpcasterRegistry | None) -> Notification | None:
    """A notification's payload (migration 0006's JSON, or a bare last position as the general
    path and older releases send), or None when it is neither: the caller reads the feed."""
    try:
        if text[:1] != "{":
            return Notification(int(text), None)
        note = orjson.loads(text)
        last = int(note["last"])
        at = _EPOCH + timedelta(microseconds=int(note["at"]))
        upcast = upcasters.upcast if upcasters else None
        events: list[RecordedEvent] = []
        for pos, sid, ver, eid, typ, sv, payload, meta, prev, h in note["events"]:
            if upcast is not None:
                sv, payload = upcast(typ, sv, payload)
            events.append(RecordedEvent(pos, sid, ver, eid, typ, sv, payload, meta, at, prev, h))
    except (ValueError, TypeError, KeyError):
        return None
    if not events or events[-1].position != last:
        return None
    return Notification(last, events)
