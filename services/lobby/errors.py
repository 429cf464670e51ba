"""What the lobby refuses. Each is one of the play package's refusals (services.play.errors),
so the API answers it as it answers a table's: 422 for a table that cannot be set, 403, 409
with a `code` saying which conflict, and 404 for a table that does not exist."""

from __future__ import annotations

from services.play.errors import Conflict, PlayError


class LobbyTableNotFound(PlayError, LookupError):
    """No open table of that id (HTTP 404)."""


class LobbyConflict(Conflict):
    """The table's state does not allow it (HTTP 409): `code` says why (`table_full`,
    `table_started`, `table_cancelled`, `already_seated`, `not_seated`, `creator_leaves`,
    `too_many_tables`)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code
