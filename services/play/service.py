"""The game service: tables, starting games, actions, strikes and forfeits.

Every write to a game goes through `GameRepository.execute`, one command at a time per game
(an asyncio lock per game in this process), so a late action and the driver's default move
can never both land. Blocking database work runs in worker threads.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

import orjson
from sqlalchemy import Engine, select
from sqlmodel import Session, col

from domain.game import (
    Abandon,
    Command,
    GameState,
    InconsistentEvent,
    Phase,
    RecordStrike,
    Substitute,
    apply,
    decide,
)
from domain.rules import BadRuleOption, Rules
from domain.view import Action, seat_view
from domain.violations import Violation
from eventstore import Lease, RecordedEvent
from services.db.models import GameRow, GameSeatRow
from services.identity import Player, PlayerService, Principal
from services.observability import Metrics, get_logger
from services.play.house import HouseBots, check_house, house_owner, is_house
from services.play.notifier import Notifier
from services.play.views import ViewCache
from services.projections import games_projector, open_table, table_event
from services.settings import Settings
from tournament.games import (
    GameExists,
    GameNotFound,
    GameRepository,
    Outcome,
    stream_id,
    to_domain_event,
)

GAME_ID = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
MIN_DECISION_SECONDS = 0.05
TAIL_EVENTS = 256
# Strike reasons as stored (public): never a card, never a bot's reply.
TIMEOUT = "timeout"
ILLEGAL = "illegal_action"
BAD_REPLY = "bad_reply"
UNREACHABLE = "unreachable"

log = get_logger("king.games")


class TableError(ValueError):
    """A table that cannot be set: bad seats, rules or time limit (HTTP 400)."""


class Forbidden(PermissionError):
    """The token may not do this (HTTP 403)."""


class Conflict(RuntimeError):
    """The request does not fit the game's state (HTTP 409)."""


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


@dataclass(frozen=True, slots=True)
class Turn:
    """A decision the driver waits for: the seat, at which version, until when (epoch s)."""

    seat: int
    version: int
    deadline: float


@dataclass(frozen=True, slots=True)
class StrikeInfo:
    seat: int
    reason: str
    count: int
    forfeited: bool
    default_action: dict[str, str] | None


@dataclass(frozen=True, slots=True)
class ActResult:
    state: GameState
    seat: int
    violation: Violation | None = None
    strike: StrikeInfo | None = None


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
        notifier: Notifier,
        metrics: Metrics,
        read_engine: Engine | None = None,
    ) -> None:
        self.repo = repo
        self.players = players
        self.engine = engine
        self.read_engine = read_engine or engine
        self.settings = settings
        self.notifier = notifier
        self.metrics = metrics
        self.house = HouseBots()
        self.views = ViewCache()
        self.turns: dict[str, Turn] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._infos: dict[str, GameInfo] = {}
        # What this process appended lately, per game: streams woken by a write read the new
        # events and state from here instead of the database (a poll re-reads the database).
        self._tails: dict[str, list[RecordedEvent]] = {}
        self._states: dict[str, GameState] = {}
        self.on_start: list[Any] = []  # callbacks(game_id) run when a game starts
        # The games index is a projection of the feed: caught up after this process's writes
        # and before each read of the index, so it answers with every write committed so far.
        self.projector = games_projector(repo.store)
        self.projector.listeners.append(self._changed)

    # --- the games index --------------------------------------------------------------

    def _lock(self, game_id: str) -> asyncio.Lock:
        lock = self._locks.get(game_id)
        if lock is None:
            lock = self._locks[game_id] = asyncio.Lock()
        return lock

    def _changed(self, game_ids: set[str]) -> None:
        for game_id in game_ids:
            self._infos.pop(game_id, None)

    def catch_up(self) -> int:
        """Bring the games index up to the feed's head (blocking); the position reached."""
        return self.projector.catch_up()

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
            tables = select(col(GameSeatRow.game_id)).where(col(GameSeatRow.player_id) == player)
            query = query.where(GameRow.id.in_(tables))  # type: ignore[attr-defined]
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

    def _create_row(
        self,
        principal: Principal,
        game_id: str | None,
        seats: Sequence[str],
        rules: dict[str, Any],
        decision_seconds: float | None,
        client_seed: str,
    ) -> GameInfo:
        if game_id is None:
            game_id = "g-" + secrets.token_hex(6)
        elif not GAME_ID.match(game_id):
            raise TableError("a game id is 1-64 letters, digits, '_', '.' or '-'")
        self._check_seats(seats)
        try:
            parsed = Rules.from_dict(rules)
        except BadRuleOption as exc:
            raise TableError(str(exc)) from None
        seconds = self.settings.decision_seconds if decision_seconds is None else decision_seconds
        if not MIN_DECISION_SECONDS <= seconds <= 3600:
            raise TableError(f"decision_seconds must be {MIN_DECISION_SECONDS}-3600")
        created_by = principal.player_id or "admin"
        event = table_event(
            game_id,
            list(seats),
            parsed.changes(),
            round(seconds * 1000),
            client_seed,
            created_by,
            datetime.now(UTC),
        )
        if self.repo.exists(game_id) or self._legacy_row(game_id):
            raise Conflict(f"game {game_id!r} exists already")
        if not open_table(self.repo.store, event):
            raise Conflict(f"game {game_id!r} exists already")
        self.catch_up()  # read-your-writes: the index lists the table from now on
        row = self._row(game_id)
        if row is None:  # the index could not catch up (logged): answer from the event
            return GameInfo(
                game_id,
                "created",
                tuple(seats),
                parsed.changes(),
                round(seconds * 1000),
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
    ) -> GameInfo:
        return await asyncio.to_thread(
            self._create_row, principal, game_id, seats, rules, decision_seconds, client_seed
        )

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
        async with self._lock(game_id):
            info = await self.info(game_id)
            if info.status != "created":
                raise Conflict(f"game {game_id!r} has started already")
            try:
                state = await asyncio.to_thread(
                    self.repo.create,
                    game_id,
                    info.seats,
                    Rules.from_dict(info.rules),
                    info.client_seed,
                    server_seed,
                    shuffle_id,
                )
            except GameExists as exc:
                raise Conflict(str(exc)) from None
            await asyncio.to_thread(self.catch_up)  # the index says "live" from now on
            self._infos.pop(game_id, None)
        self.metrics.appends.inc(state.version)
        await self.info(game_id)
        self.publish_turn(game_id, state)
        self.notifier.notify(game_id, state.version)
        self.notifier.games_changed()
        log.info("game_started", game_id=game_id, seats=list(info.seats))
        for callback in self.on_start:
            callback(game_id)
        return state

    async def mark_over(self, game_id: str) -> None:
        info = await self.info(game_id)
        if info.status != "over":
            await asyncio.to_thread(self.catch_up)  # the game's end moves its index row
            self.release(game_id)
            self.notifier.games_changed()
            log.info("game_over", game_id=game_id)

    # --- reading ----------------------------------------------------------------------

    async def load(self, game_id: str) -> GameState:
        state = await asyncio.to_thread(self.repo.load, game_id)
        if game_id in self._states and state.version > self.notifier.version(game_id):
            # Another process wrote and the feed has not said so yet: from now on the cached
            # state is known to be behind, and waiters here see the news.
            self.notifier.notify(game_id, state.version)
        return state

    async def load_fresh(self, game_id: str) -> GameState:
        """The state after this process's last write when nothing newer is known, else a load.
        Only for checks before a command: the command itself decides on the stored state."""
        state = self._states.get(game_id)
        if state is not None and state.version == self.notifier.version(game_id):
            return state
        return await self.load(game_id)

    async def player(self, player_id: str) -> Player | None:
        known = self.players.known(player_id)
        if known is not None:
            return known
        return await asyncio.to_thread(self.players.find, player_id)

    def seats_of(self, state: GameState, player_id: str | None) -> list[int]:
        """The seats a player occupies now (a forfeited player holds none)."""
        if player_id is None:
            return []
        return [s for s in range(4) if state.occupants and state.occupants[s][-1] == player_id]

    # --- writing ----------------------------------------------------------------------

    def publish_turn(
        self, game_id: str, state: GameState, started: float | None = None
    ) -> Turn | None:
        """The clock of the decision the game now waits for (None: nobody to move).

        The clock starts when the event that made it this seat's turn was recorded (`started`,
        else that event's time from the recent tail, else now), so every process, and an owner
        taking the game over, agrees on the same deadline."""
        seat = state.to_move
        known = self.turns.get(game_id)
        if seat is None:
            self.turns.pop(game_id, None)
            return None
        if known is not None and known.version == state.version:
            return known
        if started is None:
            started = self.recorded_at(game_id, state.version)
        info = self._infos.get(game_id)
        seconds = info.decision_seconds if info else self.settings.decision_seconds
        begun = started if started is not None else time.time()
        turn = self.turns[game_id] = Turn(seat, state.version, begun + seconds)
        return turn

    def recorded_at(self, game_id: str, version: int) -> float | None:
        """When the game's event at `version` was recorded (epoch s), from the recent tail."""
        tail = self._tails.get(game_id)
        if tail and tail[0].version <= version <= tail[-1].version:
            return tail[version - tail[0].version].recorded_at.timestamp()
        return None

    async def turn_for(self, game_id: str, state: GameState) -> Turn | None:
        """publish_turn, reading the time of the state's last event when no tail holds it
        (a game this process has just taken over)."""
        known = self.turns.get(game_id)
        if (known is not None and known.version == state.version) or state.to_move is None:
            return self.publish_turn(game_id, state)
        started = self.recorded_at(game_id, state.version)
        if started is None and state.version > 0:
            sid = stream_id(game_id)
            version = state.version
            rows = await asyncio.to_thread(
                self.repo.store.read_stream, sid, version, to_version=version, upcast=False
            )
            if rows:
                started = rows[0].recorded_at.timestamp()
        return self.publish_turn(game_id, state, started)

    def _remember(self, game_id: str, outcome: Outcome) -> None:
        if outcome.recorded:
            self._keep(game_id, outcome.recorded, outcome.state)

    def _keep(self, game_id: str, records: Sequence[RecordedEvent], state: GameState) -> None:
        """Extend the game's recent tail with `records` (starting it afresh when they do not
        follow on), trim it to TAIL_EVENTS, and keep `state` when it is the state at the last."""
        tail = self._tails.setdefault(game_id, [])
        if tail and tail[-1].version + 1 != records[0].version:
            tail.clear()
        tail.extend(records)
        del tail[:-TAIL_EVENTS]
        if state.version == records[-1].version:
            self._states[game_id] = state

    def recent(
        self, game_id: str, after_version: int
    ) -> tuple[list[RecordedEvent], GameState] | None:
        """The events after `after_version` and the state at the last, from this process's
        recent writes; None when they do not reach back that far (read the database)."""
        tail = self._tails.get(game_id)
        state = self._states.get(game_id)
        if not tail or state is None or state.version != tail[-1].version:
            return None
        if self.notifier.version(game_id) > tail[-1].version:  # another process wrote since
            return None
        if tail[0].version > after_version + 1 or tail[-1].version < after_version:
            return None
        return [r for r in tail if r.version > after_version], state

    def absorb(self, game_id: str, records: Sequence[RecordedEvent]) -> None:
        """Events of a game that the feed brought (written by any process): carry this
        process's recent tail and state forward, so its streams and checks need no read.
        Only for a game already cached here, and only when the events follow on."""
        tail = self._tails.get(game_id)
        state = self._states.get(game_id)
        if not tail or state is None or state.version != tail[-1].version:
            return
        fresh = [r for r in records if r.version > state.version]
        if not fresh or fresh[0].version != state.version + 1:
            return  # nothing new, or a gap: the next read fills it from the store
        try:
            for r in fresh:
                state = apply(state, to_domain_event(r))
        except (InconsistentEvent, ValueError, KeyError, TypeError):
            self.forget(game_id)  # never serve a state the store does not give
            return
        self._keep(game_id, fresh, state)

    def forget(self, game_id: str) -> None:
        self._tails.pop(game_id, None)
        self._states.pop(game_id, None)
        self.views.forget(game_id)

    def release(self, game_id: str) -> None:
        """Drop what this process keeps of a game that is over (ended here or elsewhere)."""
        self.turns.pop(game_id, None)
        self._infos.pop(game_id, None)
        self.house.forget(game_id)
        self.forget(game_id)
        self.notifier.forget(game_id)

    async def _execute(
        self,
        game_id: str,
        command: Command,
        *,
        at_version: int | None = None,
        fence: Lease | None = None,
    ) -> Outcome:
        start = time.perf_counter()
        known = self.notifier.version(game_id) or None
        outcome = await asyncio.to_thread(
            partial(self.repo.execute, game_id, command, known, at_version=at_version, fence=fence)
        )
        self.metrics.action_seconds.observe(time.perf_counter() - start)
        if outcome.events:
            self.metrics.appends.inc(len(outcome.events))
            self._remember(game_id, outcome)
            self.publish_turn(game_id, outcome.state)
            self.notifier.notify(game_id, outcome.state.version)
            if outcome.state.phase is Phase.OVER:
                await self.mark_over(game_id)
        elif outcome.violation is not None:
            self.metrics.rejections.labels(outcome.violation.code).inc()
        return outcome

    async def act(
        self,
        principal: Principal,
        game_id: str,
        seat: int | None,
        action: Action,
        expected_version: int | None = None,
    ) -> ActResult:
        """An action sent over HTTP by the seat's own token (pull bots, people)."""
        if principal.player_id is None:
            raise Forbidden("the admin token holds no seat: act with the player's token")
        async with self._lock(game_id):
            state = await self.load_fresh(game_id)
            behind = expected_version is not None and expected_version != state.version
            if behind or state.to_move not in self.seats_of(state, principal.player_id):
                # Before refusing, make sure the state is not this process's cache lagging
                # behind a write by another process.
                state = await self.load(game_id)
            mine = self.seats_of(state, principal.player_id)
            if seat is None:
                if not mine:
                    raise Forbidden("this token holds no seat in this game")
                seat = state.to_move if state.to_move in mine else mine[0]
            if seat not in mine:
                raise Forbidden(f"this token does not hold seat {seat}")
            if expected_version is not None and expected_version != state.version:
                raise Conflict(
                    f"the game is at version {state.version}, not {expected_version}: "
                    "read the new state and decide again"
                )
            if state.to_move != seat:  # refused without a strike: not this seat's decision
                refused = decide(state, action.command(seat))
                if not isinstance(refused, Violation):
                    raise Conflict("the game is between decisions: try again")
                self.metrics.rejections.labels(refused.code).inc()
                return ActResult(state, seat, refused)
            outcome = await self._execute(game_id, action.command(seat))
            if outcome.violation is None:
                return ActResult(outcome.state, seat)
            strike = await self._strike(
                game_id, outcome.state, seat, ILLEGAL, outcome.violation.code
            )
            return ActResult(await self.load(game_id), seat, outcome.violation, strike)

    async def apply_decision(
        self,
        game_id: str,
        seat: int,
        version: int,
        action: Action,
        owner: str,
        fence: Lease | None = None,
    ) -> ActResult | None:
        """A house or push bot's action, asked at `version` (None if the game moved on).
        `fence`: the driving process's lease on the game (nothing is written without it)."""
        async with self._lock(game_id):
            # The cached state when current: `at_version` makes the command decide on the
            # stored state if not, and the append refuses a stale version anyway.
            state = await self.load_fresh(game_id)
            if state.version != version or state.to_move != seat:
                return None
            outcome = await self._execute(
                game_id, action.command(seat), at_version=version, fence=fence
            )
            if outcome.stale:
                return None
            if outcome.violation is None:
                return ActResult(outcome.state, seat)
            refused = outcome.violation
            if is_house(owner):  # a house bot never plays illegally: play the first legal
                fallback = seat_view(outcome.state, seat).legal[0]
                outcome = await self._execute(
                    game_id, fallback.command(seat), at_version=version, fence=fence
                )
                return ActResult(outcome.state, seat, refused)
            strike = await self._strike(
                game_id, outcome.state, seat, ILLEGAL, refused.code, fence=fence
            )
            return ActResult(await self.load(game_id), seat, refused, strike)

    async def strike_at(
        self,
        game_id: str,
        seat: int,
        version: int,
        reason: str,
        detail: str = "",
        fence: Lease | None = None,
    ) -> StrikeInfo | None:
        """A time-out or a bad reply for the decision asked at `version` (None: the game has
        moved on, so there is nothing to strike)."""
        async with self._lock(game_id):
            state = await self.load(game_id)
            if state.version != version or state.to_move != seat:
                return None
            return await self._strike(game_id, state, seat, reason, detail, fence=fence)

    async def _strike(
        self,
        game_id: str,
        state: GameState,
        seat: int,
        reason: str,
        detail: str,
        fence: Lease | None = None,
    ) -> StrikeInfo | None:
        """Record a strike; forfeit at the limit, else play the default move (lock held).

        Every step is decided at the version the step before left, so a move landing in
        between (a late action, another process) makes the rest stale instead of doubling a
        strike or playing for a seat that has moved. None: the strike itself was stale."""
        outcome = await self._execute(
            game_id, RecordStrike(seat, reason), at_version=state.version, fence=fence
        )
        if outcome.stale or outcome.violation is not None:
            return None
        count = outcome.state.strikes[seat]
        self.metrics.strikes.labels(reason).inc()
        player = state.occupants[seat][-1]
        log.warning(
            "strike",
            game_id=game_id,
            seat=seat,
            player=player,
            reason=reason,
            detail=detail,
            count=count,
        )
        substitute = house_owner(self.settings.house_strategy)
        if count >= self.settings.max_strikes:
            gone = await self._execute(
                game_id,
                Abandon(seat, "strikes"),
                at_version=outcome.state.version,
                fence=fence,
            )
            if not gone.stale:
                await self._execute(
                    game_id,
                    Substitute(seat, substitute),
                    at_version=gone.state.version,
                    fence=fence,
                )
            self.metrics.forfeits.inc()
            log.warning("forfeit", game_id=game_id, seat=seat, player=player, substitute=substitute)
            return StrikeInfo(seat, reason, count, True, None)
        view = seat_view(outcome.state, seat)
        action = await asyncio.to_thread(self.house.choose, game_id, seat, substitute, view)
        at = outcome.state.version
        done = await self._execute(game_id, action.command(seat), at_version=at, fence=fence)
        if done.violation is not None:  # cannot happen with a legal action; be safe anyway
            action = view.legal[0]
            await self._execute(game_id, action.command(seat), at_version=at, fence=fence)
        return StrikeInfo(seat, reason, count, False, action.to_dict())

    async def house_action(self, game_id: str, state: GameState, seat: int, owner: str) -> Action:
        view = seat_view(state, seat)
        return await asyncio.to_thread(self.house.choose, game_id, seat, owner, view)
