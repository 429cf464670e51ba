"""Rows to `RecordedEvent`s: parse the stored JSON and upcast it to the current schema."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
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


def decode_rows(rows: Sequence[Any], upcasters: UpcasterRegistry | None) -> list[RecordedEvent]:
    loads = orjson.loads
    fromiso = datetime.fromisoformat
    out: list[RecordedEvent] = []
    append = out.append
    upcast = upcasters.upcast if upcasters else None
    for pos, sid, ver, eid, typ, sv, payload, meta, at, prev, h in rows:
        body = loads(payload)
        if upcast is not None:
            sv, body = upcast(typ, sv, body)
        if type(at) is str:  # SQLite: SQLAlchemy's DATETIME text, always UTC
            at = fromiso(at).replace(tzinfo=UTC)
        elif at.tzinfo is None:
            at = at.replace(tzinfo=UTC)
        extra = {} if meta == "{}" else loads(meta)
        append(RecordedEvent(pos, sid, ver, eid, typ, sv, body, extra, at, prev, h))
    return out
