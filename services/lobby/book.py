"""The lobby's tables in the event store (blocking: call from worker threads).

Every change is an append to the table's stream at the version it was decided on
(services.lobby.tables); a `VersionConflict` means another request, on this process or
another, changed the table first, so the table is read again and the decision taken again.
That is what keeps two joins of the last free seat from both getting it, on SQLite and on
PostgreSQL alike. Reads of many tables go to the projection (`king_lobby_tables`), caught up
after each append here.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Table, func, select

from eventstore import NO_STREAM, EventStore, NewEvent, VersionConflict
from services.db.models import LobbyTableRow
from services.lobby import tables as lt
from services.lobby.errors import LobbyConflict, LobbyTableNotFound
from services.lobby.projection import lobby_projector, table_of
from services.observability import get_logger

log = get_logger("king.lobby")

T: Table = LobbyTableRow.__table__  # type: ignore[attr-defined]
RETRIES = 20  # a table changed under a decision this often in a row is refused as busy
MAX_OPEN_PER_CREATOR = 5  # open tables one player may have at once (the lobby is shared)
LISTED = (lt.OPEN, lt.FULL)
TABLE_ID = re.compile(r"\At-[0-9a-f]{12}\Z")


class LobbyBusy(LobbyConflict):
    """The table kept changing under the request (HTTP 409): send it again."""

    def __init__(self, table_id: str) -> None:
        super().__init__(f"table {table_id} is changing fast: try again", "table_busy")


class LobbyBook:
    def __init__(self, store: EventStore, now: Callable[[], datetime] | None = None) -> None:
        self.store = store
        self.projector = lobby_projector(store)
        self.now = now or (lambda: datetime.now(UTC))

    # --- one table from its stream --------------------------------------------------------

    def load(self, table_id: str) -> lt.LobbyTable:
        if not TABLE_ID.match(table_id):
            raise LobbyTableNotFound(f"no lobby table {table_id[:80]!r}")
        records = self.store.read_stream(lt.stream_of(table_id))
        table = lt.fold((r.type, r.payload) for r in records if r.type in lt.EVENT_TYPES)
        if table is None:
            raise LobbyTableNotFound(f"no lobby table {table_id!r}")
        return table

    def _append(self, table: lt.LobbyTable, kind: str, payload: Mapping[str, Any]) -> None:
        self.store.append(
            lt.stream_of(table.id), [NewEvent(type=kind, payload=dict(payload))], table.version
        )

    def _decide(
        self,
        table_id: str,
        kind: str,
        decide: Callable[[lt.LobbyTable], Mapping[str, Any]],
    ) -> lt.LobbyTable:
        """Read the table, decide, append at the version read; again on a conflict."""
        for _ in range(RETRIES):
            table = self.load(table_id)
            payload = decide(table)
            try:
                self._append(table, kind, payload)
            except VersionConflict:
                continue
            self.catch_up()
            return lt.apply(table, kind, payload)
        raise LobbyBusy(table_id)

    # --- changes --------------------------------------------------------------------------

    def open(
        self,
        creator: str,
        seats: Sequence[str | None],
        rules: Mapping[str, Any],
        decision_ms: int,
    ) -> lt.LobbyTable:
        """A new table (the caller checked seats, rules and time). At most
        MAX_OPEN_PER_CREATOR open tables per creator, counted in the projection."""
        if self.open_count(creator) >= MAX_OPEN_PER_CREATOR:
            raise LobbyConflict(
                f"{creator} has {MAX_OPEN_PER_CREATOR} open tables already: "
                "cancel one or wait for one to start",
                "too_many_tables",
            )
        table = lt.LobbyTable(
            id="t-" + secrets.token_hex(6),
            creator=creator,
            seats=tuple(seats),
            rules=dict(rules),
            decision_ms=decision_ms,
            created_at=self.now(),
        )
        self.store.append(
            lt.stream_of(table.id),
            [NewEvent(type=lt.OPENED, payload=lt.opened_payload(table))],
            NO_STREAM,
            stream_type=lt.STREAM_TYPE,
        )
        self.catch_up()
        log.info("lobby_table_opened", table_id=table.id, creator=creator)
        return table

    def join(self, table_id: str, player: str) -> lt.LobbyTable:
        table = self._decide(table_id, lt.SEAT_TAKEN, lambda t: lt.join(t, player))
        log.info("lobby_seat_taken", table_id=table_id, player=player)
        return table

    def leave(self, table_id: str, player: str) -> lt.LobbyTable:
        table = self._decide(table_id, lt.SEAT_LEFT, lambda t: lt.leave(t, player))
        log.info("lobby_seat_left", table_id=table_id, player=player)
        return table

    def cancel(
        self, table_id: str, by: str, allowed: Callable[[lt.LobbyTable], None]
    ) -> lt.LobbyTable:
        """Cancel; `allowed` raises for a caller who may not (checked on the table read)."""

        def decide(table: lt.LobbyTable) -> Mapping[str, Any]:
            allowed(table)
            return lt.cancel(table, by)

        table = self._decide(table_id, lt.CANCELLED, decide)
        log.info("lobby_table_cancelled", table_id=table_id, by=by)
        return table

    def started(self, table_id: str, game_id: str) -> lt.LobbyTable:
        """Record that the full table's game started (a no-op when recorded already)."""
        for _ in range(RETRIES):
            table = self.load(table_id)
            if table.game_id is not None:
                return table
            payload = {"game_id": game_id}
            try:
                self._append(table, lt.STARTED, payload)
            except VersionConflict:
                continue
            self.catch_up()
            log.info("lobby_table_started", table_id=table_id, game_id=game_id)
            return lt.apply(table, lt.STARTED, payload)
        raise LobbyBusy(table_id)

    # --- the projection -------------------------------------------------------------------

    def catch_up(self) -> int:
        position: int = self.projector.catch_up()
        return position

    def listed(self, limit: int = 200) -> list[lt.LobbyTable]:
        """Tables open or starting, newest first."""
        query = (
            select(T)
            .where(T.c.status.in_(LISTED))
            .order_by(T.c.created_at.desc(), T.c.id)
            .limit(limit)
        )
        with self.store.engines.read.connect() as conn:
            return [table_of(r) for r in conn.execute(query).all()]

    def open_count(self, creator: str) -> int:
        query = select(func.count()).where(T.c.creator == creator, T.c.status.in_(LISTED))
        with self.store.engines.read.connect() as conn:
            return int(conn.execute(query).scalar() or 0)

    def full_since(self, before: datetime, limit: int = 100) -> list[lt.LobbyTable]:
        """Full tables whose game has not been recorded as started since `before` (a process
        stopped between the last join and the start): the sweep starts them."""
        query = select(T).where(T.c.status == lt.FULL, T.c.updated_at <= before).limit(limit)
        with self.store.engines.read.connect() as conn:
            return [table_of(r) for r in conn.execute(query).all()]

    def changes(self, after: int, limit: int = 500) -> list[tuple[int, str, lt.LobbyTable]]:
        """Tables whose last event is past feed position `after`, in feed order: (position,
        last event type, table). A table changed twice since shows once, as it is now."""
        query = select(T).where(T.c.position > after).order_by(T.c.position).limit(limit)
        with self.store.engines.read.connect() as conn:
            return [(r.position, r.last_event, table_of(r)) for r in conn.execute(query).all()]

    def head(self) -> int:
        """The feed position of the lobby's latest change (0 for none)."""
        with self.store.engines.read.connect() as conn:
            return int(conn.execute(select(func.max(T.c.position))).scalar() or 0)
