"""The lobby's tables (`king_lobby_tables`) as a projection of the `lobby-<id>` streams.

Folded by a services.projections.Projector like the games index: after this process's own
appends (read-your-writes), when the feed watcher sees another process's lobby events, and
before the lobby stream looks for changes. A row is rewritten only by a later event of its
stream (`version`), so folding an event twice changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson
from sqlalchemy import Connection, Table, delete, insert, select, update

from eventstore import EventStore, RecordedEvent
from services.db.models import LobbyTableRow
from services.lobby.tables import EVENT_TYPES, STREAM_PREFIX, LobbyTable, apply
from services.observability import get_logger

if TYPE_CHECKING:
    from services.projections import Projector

log = get_logger("king.lobby")

LOBBY = "king-lobby"  # the projection's name in the `projections` table
T: Table = LobbyTableRow.__table__  # type: ignore[attr-defined]


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def table_of(row: Any) -> LobbyTable:
    """A row as the table it records."""
    return LobbyTable(
        id=row.id,
        creator=row.creator,
        seats=tuple(orjson.loads(row.seats)),
        rules=orjson.loads(row.rules),
        decision_ms=row.decision_ms,
        created_at=_utc(row.created_at),
        version=row.version,
        game_id=row.game_id,
        cancelled=row.status == "cancelled",
        updated_at=_utc(row.updated_at),
    )


def _columns(table: LobbyTable, r: RecordedEvent) -> dict[str, Any]:
    return {
        "creator": table.creator,
        "status": table.status,
        "seats": orjson.dumps(list(table.seats)).decode(),
        "rules": orjson.dumps(dict(table.rules)).decode(),
        "decision_ms": table.decision_ms,
        "game_id": table.game_id,
        "version": table.version,
        "last_event": r.type,
        "position": r.position,
        "updated_at": r.recorded_at,
    }


class LobbyProjection:
    name = LOBBY

    def clear(self, conn: Connection) -> None:
        conn.execute(delete(T))

    def apply(self, conn: Connection, batch: Sequence[RecordedEvent]) -> set[str]:
        changed: set[str] = set()
        for r in batch:
            if not r.stream_id.startswith(STREAM_PREFIX) or r.type not in EVENT_TYPES:
                continue
            table_id = r.stream_id[len(STREAM_PREFIX) :]
            row = conn.execute(select(T).where(T.c.id == table_id)).first()
            if row is not None and row.version >= r.version:
                continue  # folded already
            try:
                before = table_of(row) if row is not None else None
                table = apply(before, r.type, r.payload)
            except (ValueError, KeyError, TypeError):
                log.warning("projection_skipped_event", position=r.position, type=r.type)
                continue
            if table.version != r.version:  # an event of a stream whose start was skipped
                log.warning("projection_skipped_event", position=r.position, type=r.type)
                continue
            columns = _columns(table, r)
            if row is None:
                conn.execute(
                    insert(T), {"id": table_id, "created_at": _utc(table.created_at), **columns}
                )
            else:
                conn.execute(update(T).where(T.c.id == table_id).values(columns))
            changed.add(table_id)
        return changed


def lobby_projector(store: EventStore) -> Projector:
    from services.projections import Projector  # here: services.projections lists this one

    return Projector(store, LobbyProjection())
