"""What the lobby's API calls (event loop): open, join, leave, cancel, the quick game, and the
start of a table once its last seat is taken.

A full table becomes a game through the games' own machinery: a table of the creator's
(`POST /api/v1/games`'s), the same id, seating the people who joined with their consent
recorded as accepted invitations (joining was their consent), then started. Should the
process stop in between, the periodic sweep starts it (`sweep`), as it starts an invited
table whose last acceptance was not followed by its start.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from services.identity import Principal
from services.lobby import tables as lt
from services.lobby.book import LobbyBook
from services.observability import error_fields, get_logger
from services.play.errors import Conflict, Forbidden, TableError
from services.play.house import check_house, house_owner, is_house
from services.play.service import GameService, check_rules, decision_ms
from services.wakeup import Wakeup

log = get_logger("king.lobby")

PERSON = "person"  # a seat left for a person to join
QUICK_HOUSE = "heuristic"  # the quick game's house bots
CONSENT = "joined the table at the lobby"
SWEEP_AFTER = timedelta(seconds=30)  # a full table not started this long is started


def check_seats(seats: Sequence[str], seat: int) -> list[str | None]:
    """The opened table's seats: `person` seats free (None), house bots as named, the
    creator's seat taken by the creator (filled in by the caller). TableError if unfit."""
    if len(seats) != 4:
        raise TableError("a table has four seats")
    out: list[str | None] = []
    for number, spec in enumerate(seats):
        if spec == PERSON:
            out.append(None)
        elif is_house(spec):
            why = check_house(spec)
            if why:
                raise TableError(f"seat {number} ({spec!r}): {why}")
            out.append(spec)
        else:
            raise TableError(f"seat {number}: {spec!r} is neither 'person' nor house:<strategy>")
    if not 0 <= seat < 4 or out[seat] is not None:
        raise TableError(f"seat {seat} is not one of the seats left for people")
    return out


class LobbyDesk:
    def __init__(self, games: GameService, book: LobbyBook) -> None:
        self.games = games
        self.book = book
        self._wakeup = Wakeup()

    # --- wake-ups of the lobby's streams -----------------------------------------------

    @property
    def epoch(self) -> int:
        return self._wakeup.epoch

    def changed(self) -> None:
        """A lobby table changed (here, or another process's change the watcher folded)."""
        self._wakeup.bump()

    async def wait(self, epoch: int, timeout: float) -> bool:
        """Until a lobby table changes after `epoch`, or `timeout` s; True if one did."""
        return await self._wakeup.wait(epoch, timeout)

    # --- the API's calls ---------------------------------------------------------------

    async def open(
        self,
        player: str,
        seats: Sequence[str],
        seat: int | None,
        rules: Mapping[str, Any],
        decision_seconds: float | None,
    ) -> lt.LobbyTable:
        """Open a table with the creator in `seat` (default: the first seat for a person);
        it starts at once when every other seat is a house bot."""
        if seat is None:
            seat = next((i for i, s in enumerate(seats) if s == PERSON), 0)
        placed = check_seats(seats, seat)
        placed[seat] = player
        changes = check_rules(rules)
        ms = decision_ms(decision_seconds, self.games.settings.decision_seconds)
        table = await asyncio.to_thread(self.book.open, player, placed, changes, ms)
        self.changed()
        return await self._start_if_full(table)

    async def join(self, table_id: str, player: str) -> lt.LobbyTable:
        table = await asyncio.to_thread(self.book.join, table_id, player)
        self.changed()
        return await self._start_if_full(table)

    async def leave(self, table_id: str, player: str) -> lt.LobbyTable:
        table = await asyncio.to_thread(self.book.leave, table_id, player)
        self.changed()
        return table

    async def cancel(self, table_id: str, principal: Principal) -> lt.LobbyTable:
        def allowed(table: lt.LobbyTable) -> None:
            if not principal.is_admin and principal.player_id != table.creator:
                raise Forbidden("only the table's creator or the admin may cancel it")

        by = principal.player_id or "admin"
        table = await asyncio.to_thread(self.book.cancel, table_id, by, allowed)
        self.changed()
        return table

    async def quick_game(self, player: str, strategy: str = QUICK_HOUSE) -> lt.LobbyTable:
        """A table of the player and three house bots, started at once."""
        seats = [PERSON] + [house_owner(strategy)] * 3
        return await self.open(player, seats, 0, {}, None)

    async def get(self, table_id: str) -> lt.LobbyTable:
        return await asyncio.to_thread(self.book.load, table_id)

    async def listed(self, limit: int = 200) -> list[lt.LobbyTable]:
        return await asyncio.to_thread(self.book.listed, limit)

    # --- the start ----------------------------------------------------------------------

    async def _start_if_full(self, table: lt.LobbyTable) -> lt.LobbyTable:
        if table.status != lt.FULL:
            return table
        try:
            return await self.start(table)
        except Exception as exc:  # the last join stands; the sweep starts the table later
            log.warning("lobby_start_failed", table_id=table.id, **error_fields(exc))
            return table

    async def start(self, table: lt.LobbyTable) -> lt.LobbyTable:
        """Make the full table's game and start it, then record the start. Safe to repeat
        (another process, or the sweep, may be starting the same table)."""
        creator = Principal(player_id=table.creator)
        seats = [s for s in table.seats if s is not None]
        with contextlib.suppress(Conflict):  # the game was made already
            await self.games.create_table(
                creator,
                table.id,
                seats,
                dict(table.rules),
                table.decision_ms / 1000,
                "",
                True,
                None,
                CONSENT,
            )
        info = await self.games.info(table.id)
        if info.status == "created":
            with contextlib.suppress(Conflict):  # started by someone else in between
                await self.games.start(creator, table.id)
        started = await asyncio.to_thread(self.book.started, table.id, table.id)
        self.changed()
        return started

    async def sweep(self) -> None:
        """Start the full tables a stopped process left unstarted."""
        before = self.book.now() - SWEEP_AFTER
        for table in await asyncio.to_thread(self.book.full_since, before):
            try:
                await self.start(table)
            except Exception as exc:  # one table that cannot start must not stop the others
                log.warning("lobby_sweep_start_failed", table_id=table.id, **error_fields(exc))

    # --- other processes' changes (the feed watcher's thread) ---------------------------

    def feed_batch(self, batch: Sequence[Any]) -> Any:
        """Fold a feed batch's lobby events into the projection (on the watcher's thread,
        before anyone is told) and hand back the wake-up of this process's lobby streams."""
        if not any(r.stream_id.startswith(lt.STREAM_PREFIX) for r in batch):
            return None
        self.book.catch_up()
        return self.changed
