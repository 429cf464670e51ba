"""Bulk export of king-record/1 games as NDJSON: one public record a line, each exactly the
bytes `GET /api/v1/games/{id}/record` gives, oldest game first (the order the game streams
were created in, so importing an export elsewhere keeps it).

The games are read in pages (`PAGE` ids by keyset on the streams' creation time and id), and
each game's record is made from its stream as it is now; nothing holds more than a page. A
stored game that no longer replays (`GameFailed`) has no record and is left out.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import String, and_, literal, or_, select

from eventstore import EventStore
from eventstore.tables import STREAMS
from services.db.models import GameStreamRow
from services.record_import import record_bytes
from tournament.games import STREAM_PREFIX, GameFailed, GameNotFound, GameRepository, LruStates
from tournament.runner import TournamentNotFound, TournamentRunner

PAGE = 100
MAX_GAMES = 10_000
DEFAULT_GAMES = 1_000
GAME_TYPE = "game"
_GAME_STREAMS = GameStreamRow.__table__  # type: ignore[attr-defined]


class ExportError(Exception):
    """An export that cannot be made as asked (nothing has been sent yet)."""


class UnknownTournament(ExportError, LookupError):
    pass


@dataclass(frozen=True, slots=True)
class Selection:
    """Which games to export: all of them, or those of a tournament, with a seated player,
    created in [since, until); at most `limit` (None: no limit)."""

    tournament: str | None = None
    player: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int | None = DEFAULT_GAMES


class RecordExport:
    """Pages of NDJSON record lines from a store (blocking; call from a worker thread)."""

    def __init__(self, store: EventStore, page: int = PAGE) -> None:
        self.store = store
        self.page = page
        # Its own small cache: an export of every game must not fill the live games' one.
        self.repo = GameRepository(store, LruStates(size=4))
        self._sqlite = store.backend == "sqlite"

    def tournament_games(self, tournament_id: str) -> list[str]:
        """The game ids of a tournament's paired tables (UnknownTournament if none)."""
        try:
            state = TournamentRunner(self.store, self.repo, drive_games=False).load(tournament_id)
        except TournamentNotFound:
            raise UnknownTournament(f"no tournament {tournament_id!r}") from None
        return [str(t["game_id"]) for tables in state.round_games for t in tables]

    def lines(self, selection: Selection) -> Iterator[bytes]:
        """Every selected record, each ending in a newline."""
        ids = self.tournament_games(selection.tournament) if selection.tournament else None
        after: tuple[Any, str] | None = None
        left = selection.limit
        while left is None or left > 0:
            page, after = self.page_of(selection, ids, after, left)
            yield from page
            if left is not None:
                left -= len(page)
            if after is None:
                return

    def page_of(
        self,
        selection: Selection,
        tournament_ids: Sequence[str] | None,
        after: tuple[Any, str] | None,
        left: int | None,
    ) -> tuple[list[bytes], tuple[Any, str] | None]:
        """Up to `left` lines from the next page of games after `after`, and the key to go
        on from (None when the selection is exhausted)."""
        rows = self._ids(selection, tournament_ids, after)
        lines: list[bytes] = []
        for sid, created in rows:
            line = self._line(sid[len(STREAM_PREFIX) :], selection.player)
            if line is not None:
                lines.append(line)
            after = (created, sid)
            if left is not None and len(lines) >= left:
                return lines, None
        return lines, (after if len(rows) == self.page else None)

    def _line(self, game_id: str, player: str | None) -> bytes | None:
        try:
            state = self.repo.load(game_id)
        except (GameNotFound, GameFailed):
            return None
        if player is not None and player not in state.players:
            return None
        return record_bytes(state) + b"\n"

    def _ids(
        self,
        selection: Selection,
        tournament_ids: Sequence[str] | None,
        after: tuple[Any, str] | None,
    ) -> list[tuple[str, Any]]:
        s = STREAMS.c
        query = select(s.id, s.created_at).where(s.type == GAME_TYPE)
        if tournament_ids is not None:
            query = query.where(s.id.in_([STREAM_PREFIX + g for g in tournament_ids]))
        if selection.since is not None:
            query = query.where(s.created_at >= self._moment(selection.since))
        if selection.until is not None:
            query = query.where(s.created_at < self._moment(selection.until))
        if selection.player is not None:
            # A first cut in SQL on the JSON list of the players (the games projection's);
            # the loaded game's own players decide.
            pattern = "%" + _like_escape(orjson.dumps(selection.player).decode()) + "%"
            streams = select(literal(STREAM_PREFIX, String) + _GAME_STREAMS.c.game_id).where(
                _GAME_STREAMS.c.players.like(pattern, escape="\\")
            )
            query = query.where(s.id.in_(streams))
        if after is not None:
            created, sid = after
            query = query.where(
                or_(s.created_at > created, and_(s.created_at == created, s.id > sid))
            )
        query = query.order_by(s.created_at, s.id).limit(self.page)
        with self.store.engines.read.connect() as conn:
            return [(row[0], row[1]) for row in conn.execute(query)]

    def _moment(self, moment: datetime) -> datetime:
        utc = moment.astimezone(UTC) if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
        return utc.replace(tzinfo=None) if self._sqlite else utc


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
