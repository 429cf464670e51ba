"""The game service: tables and the games index, starting games, and the live parts that a
game is played through (play.commands, play.clock, play.live), put together.

The HTTP controllers, the driver, the watcher and the scheduler all reach games through here.
Blocking work (the store, the rules core) runs in worker threads called from the event loop;
nothing in a worker thread calls back into the loop.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import Engine, or_, select
from sqlmodel import Session, col

from domain.game import GameState
from domain.rules import BadRuleOption, Rules
from domain.view import seat_view
from services.db.models import GamePlayerRow, GameRow, GameSeatRow
from services.identity import Player, PlayerService, Principal
from services.observability import Metrics, get_logger
from services.play.clock import GameClock, Turn
from services.play.commands import (
    BAD_REPLY,
    ILLEGAL,
    TIMEOUT,
    UNREACHABLE,
    ActResult,
    GameCommands,
    StrikeInfo,
    seats_of,
)
from services.play.errors import Conflict, Forbidden, PlayError, TableError
from services.play.handoff import Handoff
from services.play.house import check_house, is_house
from services.play.invitations import InvitationBook, check_seconds
from services.play.live import LiveGames
from services.projections import games_projector, open_table, table_event
from services.settings import Settings
from services.wakeup import Wakeup
from tournament.games import (
    GameExists,
    GameNotFound,
    GameRepository,
    Outcome,
    Request,
    stream_id,
)

__all__ = [
    "BAD_REPLY",
    "ILLEGAL",
    "TIMEOUT",
    "UNREACHABLE",
    "ActResult",
    "Conflict",
    "Forbidden",
    "GameInfo",
    "GameService",
    "PlayError",
    "StrikeInfo",
    "TableError",
    "Turn",
]

GAME_ID = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
MIN_DECISION_SECONDS = 0.05
COMMAND_THREADS = 4
"""Threads for the game commands' store work on PostgreSQL (one on SQLite)."""

log = get_logger("king.games")


def check_rules(rules: Mapping[str, Any]) -> dict[str, Any]:
    """A table's rule options as the changes from the defaults; TableError if one is bad."""
    try:
        return Rules.from_dict(dict(rules)).changes()
    except BadRuleOption as exc:
        raise TableError(str(exc)) from None


def decision_ms(seconds: float | None, default: float) -> int:
    """A table's time per decision in ms (`default` s when not given); TableError if out of
    its range."""
    value = default if seconds is None else seconds
    if not MIN_DECISION_SECONDS <= value <= 3600:
        raise TableError(f"decision_seconds must be {MIN_DECISION_SECONDS}-3600")
    return round(value * 1000)


@dataclass(frozen=True, slots=True)
class GameInfo:
    id: str
    status: str
    seats: tuple[str, ...]
    rules: dict[str, Any]
    decision_ms: int
    client_seed: str
    created_by: str
    created_at: datetime

    @property
    def decision_seconds(self) -> float:
        return self.decision_ms / 1000


def _info(row: GameRow) -> GameInfo:
    return GameInfo(
        id=row.id,
        status=row.status,
        seats=tuple(orjson.loads(row.seats)),
        rules=orjson.loads(row.rules),
        decision_ms=row.decision_ms,
        client_seed=row.client_seed,
        created_by=row.created_by,
        created_at=row.created_at,
    )


class GameService:
    def __init__(
        self,
        repo: GameRepository,
        players: PlayerService,
        engine: Engine,
        settings: Settings,
        live: LiveGames,
        metrics: Metrics,
        read_engine: Engine | None = None,
    ) -> None:
        self.repo = repo
        self.players = players
        self.engine = engine
        self.read_engine = read_engine or engine
        self.settings = settings
        self.live = live
        self.metrics = metrics
        self._infos: dict[str, GameInfo] = {}
        self.clock = GameClock(live, self._decision_seconds, self._read_time)
        # One thread on SQLite, whose appends take turns on one lock anyway (more would only
        # contend for the GIL), committing together the games' appends that queued while it
        # was busy: one flush to disk for them all (the flush per append was a fifth of the
        # server's CPU per action under `bench service`). A few threads on PostgreSQL, where
        # games' appends overlap their round trips.
        sqlite = repo.store.backend == "sqlite"
        handoff = (
            Handoff(1, "king-commands", group=self._commit_group)
            if sqlite
            else Handoff(COMMAND_THREADS, "king-commands")
        )
        self.commands = GameCommands(
            repo, live, self.clock, settings, metrics, self.mark_over, handoff
        )
        self.house = self.commands.house
        self.invitations = InvitationBook(engine, self.read_engine)
        self._games_wakeup = Wakeup()
        self.on_start: list[Any] = []  # callbacks(game_id) run when a game starts
        # The games index is a projection of the feed: caught up after this process's writes
        # and before each read of the index, so it answers with every write committed so far.
        self.projector = games_projector(repo.store)
        self.projector.listeners.append(self._changed)

    def _commit_group(self, requests: list[Request]) -> list[Outcome | Exception]:
        """The commands' group commit (on their thread), its size counted."""
        self.metrics.commit_group.observe(len(requests))
        return self.repo.execute_group(requests)

    def _decision_seconds(self, game_id: str) -> float:
        info = self._infos.get(game_id)
        return info.decision_seconds if info else self.settings.decision_seconds

    def _read_time(self, game_id: str, version: int) -> float | None:
        rows = self.repo.store.read_stream(
            stream_id(game_id), version, to_version=version, upcast=False
        )
        return rows[0].recorded_at.timestamp() if rows else None

    # --- games started and ended (the lobby's wake-up) --------------------------------

    @property
    def games_epoch(self) -> int:
        return self._games_wakeup.epoch

    def games_changed(self) -> None:
        self._games_wakeup.bump()

    async def wait_games(self, epoch: int, timeout: float) -> bool:
        """Until a game starts or ends after `epoch`, or `timeout` s; True if one did."""
        return await self._games_wakeup.wait(epoch, timeout)

    # --- the games index --------------------------------------------------------------

    def _changed(self, game_ids: set[str]) -> None:
        for game_id in game_ids:
            self._infos.pop(game_id, None)

    def catch_up(self) -> int:
        """Bring the games index up to the feed's head (blocking); the position reached."""
        return self.projector.catch_up()

    def close(self) -> None:
        """Finish the commands' work already handed to their threads (blocking): call it
        before the store closes, so no action handed over meets a closed store."""
        self.commands.handoff.close()

    def _row(self, game_id: str) -> GameRow | None:
        # The feed watcher folds other processes' starts and ends into the index before it
        # tells this process of them (so a cached info it drops is re-read as it now is); a
        # table this process has not heard of yet is looked for again after a catch-up.
        with Session(self.read_engine) as session:
            row = session.get(GameRow, game_id)
        if row is None and self.catch_up() > 0:
            with Session(self.read_engine) as session:
                row = session.get(GameRow, game_id)
        return row

    async def info(self, game_id: str) -> GameInfo:
        cached = self._infos.get(game_id)
        if cached is not None:
            return cached
        row = await asyncio.to_thread(self._row, game_id)
        if row is None:
            raise GameNotFound(f"no game {game_id!r}")
        info = _info(row)
        if info.status != "created":
            # A table may be started by any process (an invitation accepted there): nothing
            # here would learn of it, so only a started game's info is kept.
            self._infos[game_id] = info
        return info

    def _list(
        self, status: str | None, player: str | None, limit: int, offset: int
    ) -> list[GameInfo]:
        # No catch-up per read: this process's own writes catch up at once, and the feed
        # watcher folds the others' as they come (a read may be that far behind).
        query = select(GameRow).order_by(GameRow.created_at.desc(), GameRow.id)  # type: ignore[attr-defined]
        if status is not None:
            query = query.where(GameRow.status == status)  # type: ignore[arg-type]
        if player is not None:
            # The seats as the table was made (a table not started has no stream yet), and
            # everyone who sat in its stream (a substitute too).
            tables = select(col(GameSeatRow.game_id)).where(col(GameSeatRow.player_id) == player)
            sat = select(col(GamePlayerRow.game_id)).where(col(GamePlayerRow.player) == player)
            query = query.where(or_(col(GameRow.id).in_(tables), col(GameRow.id).in_(sat)))
        with Session(self.read_engine) as session:
            rows = session.execute(query.limit(limit).offset(offset)).scalars().all()
            return [_info(r) for r in rows]

    async def list_games(
        self, status: str | None, player: str | None, limit: int = 50, offset: int = 0
    ) -> list[GameInfo]:
        return await asyncio.to_thread(self._list, status, player, limit, offset)

    def live_ids(self) -> list[str]:
        """Every live game's id (blocking: call from a worker thread), as far as the index has
        folded the feed (the watcher keeps it close behind)."""
        query = select(col(GameRow.id)).where(col(GameRow.status) == "live")
        with Session(self.read_engine) as session:
            return list(session.execute(query).scalars().all())

    async def live_game_ids(self) -> list[str]:
        return await asyncio.to_thread(self.live_ids)

    # --- tables -----------------------------------------------------------------------

    def _check_seats(self, seats: Sequence[str]) -> None:
        if len(seats) != 4:
            raise TableError("a table has four seats")
        people = [s for s in seats if not is_house(s)]
        if len(set(people)) != len(people):
            raise TableError("a player may hold only one seat of a table")
        for owner in seats:
            if is_house(owner):
                why = check_house(owner)
                if why:
                    raise TableError(f"seat {owner!r}: {why}")
            elif self.players.find(owner) is None:
                raise TableError(f"seat {owner!r}: no such player (or house:<strategy>)")

    def create_table_blocking(
        self,
        principal: Principal,
        game_id: str | None,
        seats: Sequence[str],
        rules: dict[str, Any],
        decision_seconds: float | None,
        client_seed: str,
        start: bool = True,
        invitation_seconds: float | None = None,
        consented: str | None = None,
    ) -> GameInfo:
        """Set a table. A player (not the admin) who seats other players invites them: the
        table starts only once they all accept (services.play.invitations); `start` says
        whether it then starts by itself. `consented`: the players seated have consented
        already, and how (a lobby table they joined): their invitations are made accepted."""
        if game_id is None:
            game_id = "g-" + secrets.token_hex(6)
        elif not GAME_ID.match(game_id):
            raise TableError("a game id is 1-64 letters, digits, '_', '.' or '-'")
        self._check_seats(seats)
        changes = check_rules(rules)
        ms = decision_ms(decision_seconds, self.settings.decision_seconds)
        open_seconds = check_seconds(invitation_seconds)
        created_by = principal.player_id or "admin"
        event = table_event(
            game_id,
            list(seats),
            changes,
            ms,
            client_seed,
            created_by,
            datetime.now(UTC),
        )
        if self.repo.exists(game_id) or self._legacy_row(game_id):
            raise Conflict(f"game {game_id!r} exists already")
        if not open_table(self.repo.store, event):
            raise Conflict(f"game {game_id!r} exists already")
        if not principal.is_admin:
            # After the table is set: a table without its invitations never starts (consent).
            self.invitations.invite(game_id, created_by, seats, start, open_seconds, consented)
        self.catch_up()  # read-your-writes: the index lists the table from now on
        row = self._row(game_id)
        if row is None:  # the index could not catch up (logged): answer from the event
            return GameInfo(
                game_id,
                "created",
                tuple(seats),
                changes,
                ms,
                client_seed,
                created_by,
                datetime.fromisoformat(str(event.payload["created_at"])),
            )
        return _info(row)

    def _legacy_row(self, game_id: str) -> bool:
        """An index row without a table stream: written by a release before the projection."""
        with Session(self.read_engine) as session:
            return session.get(GameRow, game_id) is not None

    async def create_table(
        self,
        principal: Principal,
        game_id: str | None,
        seats: Sequence[str],
        rules: dict[str, Any],
        decision_seconds: float | None,
        client_seed: str,
        start: bool = True,
        invitation_seconds: float | None = None,
        consented: str | None = None,
    ) -> GameInfo:
        return await asyncio.to_thread(
            self.create_table_blocking,
            principal,
            game_id,
            seats,
            rules,
            decision_seconds,
            client_seed,
            start,
            invitation_seconds,
            consented,
        )

    def start_blocking(
        self,
        principal: Principal,
        game_id: str,
        server_seed: bytes | None = None,
        shuffle_id: str = "",
    ) -> tuple[GameInfo, GameState]:
        """Seal the seed, deal and mark the game live (blocking: a worker thread's part of
        `start`; then call `started` on the event loop). Two starts of one table cannot both
        deal: the seed's seal and the stream's first append each let only one through."""
        row = self._row(game_id)
        if row is None:
            raise GameNotFound(f"no game {game_id!r}")
        info = _info(row)
        if not principal.is_admin and principal.player_id != info.created_by:
            raise Forbidden("only the table's creator or the admin may start it")
        if info.status != "created":
            raise Conflict(f"game {game_id!r} has started already")
        # Never seat a player who has not accepted (InvitationsPending, TableCancelled).
        self.invitations.consent(game_id, info.created_by, info.seats)
        try:
            state = self.repo.create(
                game_id,
                info.seats,
                Rules.from_dict(info.rules),
                info.client_seed,
                server_seed,
                shuffle_id,
            )
        except GameExists as exc:
            raise Conflict(str(exc)) from None
        self.catch_up()  # the index says "live" from now on
        return info, state

    def started(self, info: GameInfo, state: GameState) -> None:
        """A game this process has just started (event loop): its clock runs, its streams
        wake, and it is handed to the driver's owner."""
        game_id = info.id
        self._infos[game_id] = replace(info, status="live")
        self.metrics.appends.inc(state.version)
        self.clock.publish(game_id, state)
        self.live.told(game_id, state.version)
        self.games_changed()
        log.info("game_started", game_id=game_id, seats=list(info.seats))
        for callback in self.on_start:
            callback(game_id)

    async def start(
        self,
        principal: Principal,
        game_id: str,
        server_seed: bytes | None = None,
        shuffle_id: str = "",
    ) -> GameState:
        """Seal the seed, deal, mark the game live and hand it to the driver. server_seed and
        shuffle_id: a tournament's derived deal (default: a fresh CSPRNG seed)."""
        info = await self.info(game_id)
        if not principal.is_admin and principal.player_id != info.created_by:
            raise Forbidden("only the table's creator or the admin may start it")
        async with self.commands.lock(game_id):
            info, state = await asyncio.to_thread(
                self.start_blocking, principal, game_id, server_seed, shuffle_id
            )
        self.started(info, state)
        return state

    async def mark_over(self, game_id: str) -> None:
        info = await self.info(game_id)
        if info.status != "over":
            await asyncio.to_thread(self.catch_up)  # the game's end moves its index row
            self.release(game_id)
            self.games_changed()
            log.info("game_over", game_id=game_id)

    # --- reading and playing (play.commands, play.clock, play.live) ---------------------

    async def load(self, game_id: str) -> GameState:
        return await self.commands.load(game_id)

    async def load_fresh(self, game_id: str) -> GameState:
        return await self.commands.load_fresh(game_id)

    async def player(self, player_id: str) -> Player | None:
        known = self.players.known(player_id)
        if known is not None:
            return known
        return await asyncio.to_thread(self.players.find, player_id)

    def seats_of(self, state: GameState, player_id: str | None) -> list[int]:
        return seats_of(state, player_id)

    def view(self, state: GameState, seat: int | None = None) -> dict[str, Any]:
        """The seat's view (None: the public's) as JSON, ended deals encoded once a game."""
        return self.live.view_dict(seat_view(state, -1 if seat is None else seat))

    def turn(self, game_id: str) -> Turn | None:
        return self.clock.get(game_id)

    async def turn_for(self, game_id: str, state: GameState) -> Turn | None:
        return await self.clock.turn_for(game_id, state)

    def forget(self, game_id: str) -> None:
        """Drop what is cached of a game whose driving moved (taken over, handed on, lost)."""
        self.live.forget(game_id)

    def release(self, game_id: str) -> None:
        """Drop what this process keeps of a game that is over (ended here or elsewhere)."""
        self._infos.pop(game_id, None)
        self.clock.forget(game_id)
        self.commands.forget(game_id)
        self.live.forget(game_id)
