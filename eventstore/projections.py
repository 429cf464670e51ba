"""The handle a projection gets inside `EventStore.projection_transaction`."""

from __future__ import annotations

from sqlalchemy import Connection
from sqlmodel import Session

from eventstore.errors import InvalidVersionError


class ProjectionTransaction:
    """A projection's transaction: its connection, where it was, and where it got to.

    The projection's own tables are written through `connection` (Core) or `session`
    (SQLModel); `advance` records the new position. Both commit together.
    """

    __slots__ = ("_session", "connection", "last_position", "name", "position")

    def __init__(self, connection: Connection, name: str, last_position: int) -> None:
        self.connection = connection
        self.name = name
        self.last_position = last_position
        self.position = last_position
        self._session: Session | None = None

    @property
    def session(self) -> Session:
        """A SQLModel session joined to this transaction (flushed, not committed, by it)."""
        if self._session is None:
            self._session = Session(bind=self.connection, join_transaction_mode="rollback_only")
        return self._session

    def advance(self, position: int) -> None:
        """Record that every event up to `position` has been applied."""
        if isinstance(position, bool) or not isinstance(position, int) or position < self.position:
            raise InvalidVersionError(
                f"projection {self.name!r} cannot move from {self.position} to {position!r}"
            )
        self.position = position

    def close_session(self) -> None:
        if self._session is not None:
            self._session.flush()
            self._session.close()
            self._session = None
