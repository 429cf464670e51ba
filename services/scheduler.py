"""Tournaments on the service: their games on the game service, and the scheduler that moves
them on.

- `TournamentDesk` is the service layer of tournaments: create (with the service's options:
  start time, time limit), register, withdraw, start, pause, resume, pair the next round by
  hand, and the read models (summary, pairings, standings, leaderboard). A tournament's own
  events are its stream `tournament-<id>` (tournament.runner); what only the service needs —
  when to start, whether it is paused — is a second stream `tournament-control-<id>`, appended
  the same way.
- `service_game_factory` makes the runner create each table's game through the GameService
  (a games-index row, seats mapped to service players or `house:<strategy>`, the round's
  derived seed and shuffle id) and hand it to the game driver, which plays it (house, push
  and pull bots, people, deadlines).
- `TournamentScheduler` only *triggers* work: an APScheduler interval job that, in the leading
  process, calls `runner.step()` for each started, unpaused tournament until it waits for a
  game or is done. Every step is an optimistic append on the tournament's stream and a start is
  a claim in the store, so a double fire, a second process or a restart changes nothing.
  With PostgreSQL exactly one process leads: it holds `pg_try_advisory_lock` on a dedicated
  connection for its lifetime (the others retry at every tick); with SQLite the process leads.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import uuid
import zlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from eventstore import NO_STREAM, EventStore, NewEvent, VersionConflict
from services.identity import PlayerService, Principal
from services.observability import error_fields, get_logger
from services.play.house import HOUSE_PREFIX, check_house, house_owner
from services.play.service import Conflict, GameService
from services.projections import ratings_projector, read_ratings
from services.settings import Settings
from tournament.events import ManualPairing, TournamentState, to_payload
from tournament.games import GameExists, GameRepository
from tournament.pairing.export import input_to_json, round_to_json, schedule_to_json
from tournament.pairing.round_robin import RoundRobinInput, schedule
from tournament.planning import check_manual, current_standings, is_last_round, swiss_input
from tournament.ratings import (
    LeaderboardRow,
    leaderboard,
)
from tournament.runner import (
    GameFactory,
    GameSpec,
    PlayerSpec,
    Step,
    TournamentExists,
    TournamentNotFound,
    TournamentRunner,
)
from tournament.runner import stream_id as tournament_stream
from tournament.standings import Standings

if TYPE_CHECKING:
    from services.play.invitations import InvitationDesk

log = get_logger("king.scheduler")

CONTROL_PREFIX = "tournament-control-"
CONTROL_TYPE = "tournament_control"
START_CLAIM = "tournament-start:"
LOCK_CLASS = 0x4B494E47  # "KING": the advisory lock's first key; the second is the schema's
MAX_STEPS_PER_TICK = 200
ADMIN = Principal(player_id=None, is_admin=True)
PLAN_CACHE = 256  # round-robin plans kept for the pairings read model
INVITATION_SWEEP_SECONDS = 5.0  # expired invitations are also closed whenever read
_PLANS_LOCK = threading.Lock()


class TournamentError(ValueError):
    """A tournament request that cannot be done (HTTP 400)."""


class TournamentConflict(RuntimeError):
    """A request that does not fit the tournament's state (HTTP 409)."""


def control_stream(tournament_id: str) -> str:
    return CONTROL_PREFIX + tournament_id


# --- the service's own tournament state --------------------------------------------------


@dataclass(frozen=True, slots=True)
class Control:
    """What the service keeps beside a tournament's events: schedule, time limit, pause."""

    exists: bool = False
    start_at: datetime | None = None
    decision_ms: int | None = None
    created_by: str = ""
    started: bool = False
    started_by: str = ""
    paused: bool = False
    round_ms: int | None = None  # the store holds integers only
    started_at: datetime | None = None
    version: int = 0

    @property
    def round_minutes(self) -> float | None:
        return None if self.round_ms is None else self.round_ms / 60_000

    @property
    def decision_seconds(self) -> float | None:
        return None if self.decision_ms is None else self.decision_ms / 1000

    def round_due(self, number: int) -> datetime | None:
        """When round `number` may be paired at the earliest (None: as soon as the one before
        has finished): a round every `round_minutes` from the start."""
        if self.round_ms is None or self.started_at is None:
            return None
        return self.started_at + timedelta(milliseconds=self.round_ms * (number - 1))


def _fold_control(records: Sequence[Any]) -> Control:
    c = Control()
    for r in records:
        p = r.payload
        if r.type == "service_tournament":
            at = p.get("start_at")
            c = replace(
                c,
                exists=True,
                start_at=datetime.fromisoformat(at) if at else None,
                decision_ms=p.get("decision_ms"),
                created_by=p.get("created_by", ""),
                round_ms=p.get("round_ms"),
            )
        elif r.type == "tournament_started":
            c = replace(c, started=True, started_by=p.get("by", ""), started_at=r.recorded_at)
        elif r.type == "tournament_paused":
            c = replace(c, paused=True)
        elif r.type == "tournament_resumed":
            c = replace(c, paused=False)
        c = replace(c, version=r.version)
    return c


def house_tournament_id(strategy: str, n: int) -> str:
    """The tournament id of the n-th builtin player of a strategy: `house:<strategy>-<n>`."""
    return f"{HOUSE_PREFIX}{strategy}-{n}"


def seat_owner(spec: GameSpec, seat: int, house_strategy: str) -> str:
    """Who holds a seat of a tournament game on the service: a house seat of the round or a
    builtin player plays as `house:<strategy>`; a registered player as their service id."""
    if seat in spec.house:
        return house_owner(house_strategy)
    reg = spec.state.registration(spec.seats[seat])
    if reg.kind == "builtin":
        return house_owner(reg.spec)
    return reg.spec or reg.player_id


# --- the service game factory ------------------------------------------------------------


class ServiceGames:
    """Creates a round's games through the GameService and has them played by the driver.
    It runs in the scheduler's worker thread and does its blocking work there; only the
    start's wake-ups go to the app's event loop (`bind`), which never waits on this thread."""

    def __init__(self, games: GameService, store: EventStore) -> None:
        self.games = games
        self.store = store
        self.loop: asyncio.AbstractEventLoop | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def __call__(self, spec: GameSpec) -> None:
        loop = self.loop
        if loop is None:
            raise RuntimeError("the service game factory runs inside the app (bind its loop)")
        created = spec.state.created
        assert created is not None
        seats = [seat_owner(spec, s, created.house_strategy) for s in range(4)]
        control = read_control(self.store, spec.tournament_id)
        with contextlib.suppress(Conflict):  # the row may be there from before a restart
            self.games.create_table_blocking(
                ADMIN, spec.game_id, seats, spec.rules.changes(), control.decision_seconds, ""
            )
        try:
            info, state = self.games.start_blocking(
                ADMIN, spec.game_id, spec.server_seed, spec.shuffle_id
            )
        except Conflict as exc:
            raise GameExists(str(exc)) from None
        loop.call_soon_threadsafe(self.games.started, info, state)
        log.info(
            "tournament_game_started",
            tournament_id=spec.tournament_id,
            round=spec.round,
            game_id=spec.game_id,
        )

    async def ensure_live(self, game_id: str) -> None:
        """A game whose stream exists but whose row still says `created` (the index behind the
        feed, or a crash before the driver got it) is brought up to date and handed to the
        driver."""
        row = await asyncio.to_thread(self.games._row, game_id)
        if row is not None and row.status == "created" and self.games.repo.exists(game_id):
            await asyncio.to_thread(self.games.catch_up)
            for callback in self.games.on_start:
                callback(game_id)
            log.info("tournament_game_resumed", game_id=game_id)


def next_round_due(state: TournamentState, control: Control) -> datetime | None:
    """The time set for the next round while the tournament waits to pair it (else None)."""
    if state.finished is not None or state.current_round or is_last_round(state):
        return None
    return control.round_due(len(state.rounds) + 1)


def read_control(store: EventStore, tournament_id: str) -> Control:
    return _fold_control(store.read_stream(control_stream(tournament_id)))


# --- the service layer -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Entry:
    """A player to register: a service player id, or a builtin strategy (a house bot)."""

    player: str | None = None
    strategy: str | None = None


class TournamentDesk:
    """Tournament commands and read models for the HTTP API and the scheduler (blocking:
    call from worker threads)."""

    def __init__(
        self, store: EventStore, repo: GameRepository, players: PlayerService, games: GameService
    ) -> None:
        self.store = store
        self.players = players
        self.factory = ServiceGames(games, store)
        self.runner = TournamentRunner(
            store, repo, drive_games=False, game_factory=self._factory_for_runner()
        )
        # Round-robin plans' method and balance by their canonical input (a plan is a pure
        # function of it, and a search can take a while): kept for the pairings read model.
        self._plans: dict[str, dict[str, Any]] = {}
        self._ratings = ratings_projector(store)

    def _factory_for_runner(self) -> GameFactory:
        return self.factory

    # --- control stream ----------------------------------------------------------------

    def control(self, tournament_id: str) -> Control:
        return read_control(self.store, tournament_id)

    def _control_append(
        self, tournament_id: str, expected: int, type_: str, **payload: Any
    ) -> bool:
        try:
            self.store.append(
                control_stream(tournament_id),
                [NewEvent(type_, payload)],
                expected if expected else NO_STREAM,
                stream_type=CONTROL_TYPE,
            )
        except VersionConflict:
            return False
        return True

    # --- commands ----------------------------------------------------------------------

    def player_spec(self, entry: Entry, counts: dict[str, int], taken: set[str]) -> PlayerSpec:
        if (entry.player is None) == (entry.strategy is None):
            raise TournamentError("name a player or a strategy, not both")
        if entry.strategy is not None:
            why = check_house(HOUSE_PREFIX + entry.strategy)
            if why:
                raise TournamentError(f"strategy {entry.strategy!r}: {why}")
            n = counts.get(entry.strategy, 0) + 1
            while house_tournament_id(entry.strategy, n) in taken:
                n += 1
            counts[entry.strategy] = n
            pid = house_tournament_id(entry.strategy, n)
            return PlayerSpec(pid, "builtin", entry.strategy, pid)
        assert entry.player is not None
        player = self.players.find(entry.player)
        if player is None:
            raise TournamentError(f"no player {entry.player!r}")
        kind = "bot" if player.kind == "bot" or player.bot_url else "human"
        return PlayerSpec(player.id, kind, player.id, player.name)

    def create(
        self,
        tournament_id: str,
        entries: Sequence[Entry],
        *,
        start_at: datetime | None,
        decision_seconds: float | None,
        created_by: str,
        round_minutes: float | None = None,
        **options: Any,
    ) -> TournamentState:
        counts: dict[str, int] = {}
        taken: set[str] = set()
        specs: list[PlayerSpec] = []
        for e in entries:
            spec = self.player_spec(e, counts, taken)
            if spec.player_id in taken:
                raise TournamentError(f"player {spec.player_id!r} is given twice")
            taken.add(spec.player_id)
            specs.append(spec)
        if self.store.stream_info(control_stream(tournament_id)) is not None:
            raise TournamentConflict(f"tournament {tournament_id!r} exists already")
        try:
            state = self.runner.create(tournament_id, specs, **options)
        except TournamentExists as exc:
            raise TournamentConflict(str(exc)) from None
        except ValueError as exc:
            raise TournamentError(str(exc)) from None
        at = start_at.astimezone(UTC).isoformat() if start_at is not None else None
        ms = None if decision_seconds is None else round(decision_seconds * 1000)
        if not self._control_append(
            tournament_id,
            0,
            "service_tournament",
            start_at=at,
            decision_ms=ms,
            created_by=created_by,
            round_ms=None if round_minutes is None else round(round_minutes * 60_000),
        ):
            raise TournamentConflict(f"tournament {tournament_id!r} exists already")
        return state

    def register(self, tournament_id: str, entry: Entry) -> TournamentState:
        state = self.load(tournament_id)
        if state.finished is not None:
            raise TournamentConflict("the tournament is finished")
        taken = {p.player_id for p in state.players}
        counts: dict[str, int] = {}
        spec = self.player_spec(entry, counts, taken)
        if spec.player_id in taken:
            raise TournamentConflict(f"{spec.player_id} is registered already")
        try:
            return self.runner.register(tournament_id, spec)
        except ValueError as exc:
            raise TournamentConflict(str(exc)) from None

    def withdraw(self, tournament_id: str, player_id: str, reason: str) -> TournamentState:
        state = self.load(tournament_id)
        try:
            state.registration(player_id)
        except KeyError:
            raise TournamentError(f"{player_id!r} is not registered") from None
        return self.runner.withdraw(tournament_id, player_id, reason)

    def start(self, tournament_id: str, by: str) -> bool:
        """Start now (idempotent: the claim `tournament-start:<id>` decides who started it);
        True when this call started it."""
        state = self.load(tournament_id)
        control = self.control(tournament_id)
        if not control.exists:
            raise TournamentConflict("this tournament is run by the command line, not the service")
        if state.finished is not None:
            raise TournamentConflict("the tournament is finished")
        if len(state.active) < 2 and not state.rounds:
            raise TournamentConflict("a tournament needs at least two active players to start")
        claim = self.store.claim(START_CLAIM + tournament_id, by)
        self._record_start(tournament_id, claim.owner)
        return claim.acquired

    def _record_start(self, tournament_id: str, by: str) -> None:
        while True:
            control = self.control(tournament_id)
            if control.started:
                return
            if self._control_append(tournament_id, control.version, "tournament_started", by=by):
                log.info("tournament_started", tournament_id=tournament_id, by=by)
                return

    def set_paused(self, tournament_id: str, paused: bool, by: str, reason: str = "") -> Control:
        self.load(tournament_id)
        while True:
            control = self.control(tournament_id)
            if not control.exists:
                raise TournamentConflict("this tournament is run by the command line")
            if control.paused == paused:
                return control
            type_ = "tournament_paused" if paused else "tournament_resumed"
            if self._control_append(tournament_id, control.version, type_, by=by, reason=reason):
                log.info(type_, tournament_id=tournament_id, by=by)
                return self.control(tournament_id)

    def set_pairing(
        self,
        tournament_id: str,
        round_no: int,
        tables: Sequence[Sequence[str]],
        byes: Sequence[str],
        by: str,
    ) -> TournamentState:
        """Record the organiser's pairing of the next round (BadPairing, nothing recorded, when
        it is not the next round or does not seat every active player exactly once). The
        runner pairs that round as given; a later hand pairing of the same round replaces it,
        and a registration or withdrawal before the round is paired drops it."""
        while True:
            state = self.load(tournament_id)
            rnd = check_manual(state, round_no, tables, byes)
            event = ManualPairing(
                rnd.number,
                tuple(
                    {"table": t.number, "seats": list(t.seats), "house": list(t.house)}
                    for t in rnd.tables
                ),
                rnd.byes,
                by,
            )
            try:
                self.store.append(
                    tournament_stream(tournament_id),
                    [NewEvent(event.TYPE, to_payload(event))],
                    state.version,
                    stream_type="tournament",
                )
            except VersionConflict:
                continue  # the tournament moved (maybe the round was paired): check again
            log.info("tournament_paired_by_hand", tournament_id=tournament_id, round=round_no)
            return self.load(tournament_id)

    # --- reading -----------------------------------------------------------------------

    def load(self, tournament_id: str) -> TournamentState:
        try:
            return self.runner.load(tournament_id)
        except TournamentNotFound as exc:
            raise LookupError(str(exc)) from None

    def ids(self) -> list[str]:
        return self.runner.tournament_ids()

    def service_ids(self) -> list[str]:
        return [s[len(CONTROL_PREFIX) :] for s in self.store.stream_ids(CONTROL_TYPE)]

    def is_started(self, tournament_id: str, control: Control) -> bool:
        if control.started:
            return True
        held = self.store.get_claim(START_CLAIM + tournament_id)
        if held is not None:  # claimed, but the event was not written (a crash): write it
            self._record_start(tournament_id, held.owner)
            return True
        return False

    def status(self, state: TournamentState, control: Control) -> str:
        if state.finished is not None:
            return "finished"
        if not control.exists:
            return "local"
        if control.paused:
            return "paused"
        if control.started:
            return "running"
        return "scheduled" if control.start_at is not None else "registering"

    def standings(self, tournament_id: str) -> Standings:
        return current_standings(self.load(tournament_id))

    def pairings(self, tournament_id: str) -> list[dict[str, Any]]:
        """Each round: its tables (game ids, seats, house seats), byes, and the king-pairing/1
        input it was paired from (re-check with `king tournament pairings --check FILE` or
        export.verify); a round-robin's rounds also say how their schedule was built and how
        balanced it is. A round paired by hand is `manual` and has no input: no system
        reproduces it."""
        from tournament.events import RoundPaired, apply, from_payload

        out: list[dict[str, Any]] = []
        state = TournamentState()
        for r in self.store.read_stream(tournament_stream(tournament_id)):
            event = from_payload(r.type, r.payload)
            if isinstance(event, RoundPaired):
                before = state
                state = apply(state, event)
                rnd = state.rounds[-1]
                manual = rnd.number in state.manual_rounds
                item: dict[str, Any] = {
                    "round": event.round,
                    "tables": [
                        {
                            "table": t["table"],
                            "game_id": t["game_id"],
                            "seats": list(t["seats"]),
                            "house_seats": list(t.get("house", ())),
                        }
                        for t in event.tables
                    ],
                    "byes": list(event.byes),
                    "closed": False,
                    "manual": manual,
                    "pairing": round_to_json(rnd),
                    "input": None if manual else _pairing_input(before),
                }
                if not manual and before.settings.format == "round_robin":
                    item["schedule"] = _schedule_report(item["input"], self._plans)
                out.append(item)
            else:
                state = apply(state, event)
        for item in out:
            item["closed"] = item["round"] <= state.closed
        if not out and not state.created:
            raise LookupError(f"no tournament {tournament_id!r}")
        return out

    def leaderboard(self, limit: int, min_games: int) -> tuple[LeaderboardRow, ...]:
        """Ratings over every recorded game, by bot identity (tournament.ratings): a service
        player by its id, a builtin strategy (entrants and house bots alike) as
        `house:<strategy>`. Read from the ratings projection (services.projections), caught up
        first: only the feed's events since the last call are folded, never a tournament
        replayed per request."""
        self._ratings.catch_up()
        with self.store.engines.read.connect() as conn:
            ratings, who = read_ratings(conn)
        return leaderboard(ratings, limit, min_games, who)


def _schedule_report(doc: dict[str, Any], plans: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """How a round-robin's schedule was built (`method`) and its `balance`, planned once per
    distinct input (the rounds of one plan share it) and kept in `plans`."""
    from tournament.pairing.export import dumps, input_from_json

    key = dumps(doc)
    with _PLANS_LOCK:
        kept = plans.get(key)
    if kept is not None:
        return kept
    inp = input_from_json(doc)
    assert isinstance(inp, RoundRobinInput)
    report = schedule_to_json(schedule(inp))
    kept = {"method": report["method"], "balance": report["balance"]}
    with _PLANS_LOCK:  # read models run in worker threads
        if len(plans) >= PLAN_CACHE:
            del plans[next(iter(plans))]  # the oldest
        plans[key] = kept
    return kept


def _pairing_input(state: TournamentState) -> dict[str, Any]:
    """The king-pairing/1 input of the round paired next from `state` (see planning)."""
    s = state.settings
    if s.format == "swiss":
        return input_to_json(swiss_input(state))
    since = state.field_changed_after
    total = s.rounds or 0
    inp = RoundRobinInput(tuple(state.active), s.seed, total - since, s.fill, state.rounds[:since])
    return input_to_json(inp)


# --- leader election ---------------------------------------------------------------------


def _signed32(n: int) -> int:
    return n - 2**32 if n >= 2**31 else n


class LeaderLock:
    """Who leads: on PostgreSQL the holder of an advisory lock (per schema) on a connection
    kept for the process's life; on SQLite always this process."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.sqlite = settings.is_sqlite
        schema = settings.pg_schema or "public"
        self.key = (LOCK_CLASS, _signed32(zlib.crc32(schema.encode())))
        self._engine: sa.Engine | None = None
        self._conn: sa.Connection | None = None

    @property
    def held(self) -> bool:
        return self.sqlite or self._conn is not None

    def acquire(self) -> bool:
        """Take or keep the lock (blocking); False when another process holds it."""
        if self.sqlite:
            return True
        if self._conn is not None:
            try:
                self._conn.execute(sa.text("select 1"))
                return True
            except sa.exc.SQLAlchemyError:
                log.warning("scheduler_leadership_lost")
                self._drop()
        if self._engine is None:
            self._engine = sa.create_engine(
                self.settings.url, poolclass=NullPool, isolation_level="AUTOCOMMIT"
            )
        conn = self._engine.connect()
        try:
            got = conn.execute(
                sa.text("select pg_try_advisory_lock(:a, :b)"), {"a": self.key[0], "b": self.key[1]}
            ).scalar()
        except sa.exc.SQLAlchemyError:
            conn.close()
            raise
        if not got:
            conn.close()
            return False
        self._conn = conn
        return True

    def release(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sa.exc.SQLAlchemyError):
                self._conn.execute(
                    sa.text("select pg_advisory_unlock(:a, :b)"),
                    {"a": self.key[0], "b": self.key[1]},
                )
        self._drop()
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sa.exc.SQLAlchemyError):
                self._conn.close()
            self._conn = None


# --- the scheduler -----------------------------------------------------------------------


class TournamentScheduler:
    """An APScheduler (AsyncIOScheduler, the app's loop) interval job that advances
    tournaments in the leading process (live games are driven by their owners:
    play.ownership)."""

    def __init__(
        self,
        settings: Settings,
        desk: TournamentDesk,
        games: GameService,
        invitations: InvitationDesk | None = None,
    ) -> None:
        self.settings = settings
        self.desk = desk
        self.games = games
        self.invitations = invitations
        # Other sweeps run beside the invitations' (the lobby's start of full tables).
        self.sweeps: list[Callable[[], Awaitable[None]]] = []
        self.lock = LeaderLock(settings)
        self.owner = f"{socket.gethostname()}:{uuid.uuid4().hex[:8]}"[:100]
        self.running = False
        self.leader = False
        self._aps: Any = None
        self._tick_task: asyncio.Task[None] | None = None
        self._sweep_task: asyncio.Task[None] | None = None
        self._finished: set[str] = set()
        self.last_error: str | None = None

    async def start(self) -> None:
        from apscheduler.schedulers.asyncio import AsyncIOScheduler

        loop = asyncio.get_running_loop()
        self.desk.factory.bind(loop)
        self.running = True
        # Know whether this process leads before it reports ready, not a firing later.
        try:
            self.leader = await asyncio.to_thread(self.lock.acquire)
        except Exception as exc:
            log.warning("scheduler_lock_failing", error=type(exc).__name__)
        if self.leader:
            log.info("scheduler_leader", owner=self.owner)
        aps = AsyncIOScheduler(event_loop=loop, timezone=UTC)
        aps.add_job(
            self._fire,
            "interval",
            seconds=self.settings.scheduler_seconds,
            id="tournaments",
            max_instances=1,
            coalesce=True,
            next_run_time=datetime.now(UTC),
        )
        if self.invitations is not None:
            aps.add_job(
                self._sweep_invitations,
                "interval",
                seconds=INVITATION_SWEEP_SECONDS,
                id="invitations",
                max_instances=1,
                coalesce=True,
            )
        aps.start()
        self._aps = aps
        log.info("scheduler_started", owner=self.owner)

    async def stop(self) -> None:
        self.running = False  # a firing from now on returns at once
        # The firings under way finish first: APScheduler's shutdown cancels the job tasks it
        # is running, and a tick cancelled in mid-read was logged as a job that raised (with a
        # traceback) whenever a server was stopped during a tick.
        for task in (self._tick_task, self._sweep_task):
            if task is not None and not task.done():
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(task), 30)
        if self._aps is not None:
            self._aps.shutdown(wait=False)
            self._aps = None
        if self.leader:
            await asyncio.to_thread(self.lock.release)
            self.leader = False
            log.info("scheduler_leadership_released", owner=self.owner)

    async def _fire(self) -> None:
        if not self.running:
            return
        self._tick_task = asyncio.current_task()
        try:
            await self.tick()
            self.last_error = None
        except Exception as exc:  # a failing tick must not stop the scheduler: log, retry
            fields = error_fields(exc)
            self.last_error = ": ".join(str(v) for v in fields.values())
            log.error("scheduler_error", **fields)

    async def _sweep_invitations(self) -> None:
        """Expire invitations and start tables left ready, in the leading process (the
        sweep's every change is conditional, so a second sweeper would change nothing)."""
        if not self.running or not self.leader or self.invitations is None:
            return
        self._sweep_task = asyncio.current_task()
        try:
            await self.invitations.sweep()
            for sweep in self.sweeps:
                await sweep()
        except Exception as exc:  # logged and tried again at the next firing
            log.error("invitation_sweep_error", **error_fields(exc))

    async def tick(self) -> None:
        """One firing: lead (or not), and advance tournaments when leading."""
        was = self.leader
        try:
            self.leader = await asyncio.to_thread(self.lock.acquire)
        except Exception as exc:
            self.leader = False
            log.warning("scheduler_lock_failing", error=type(exc).__name__)
        if self.leader != was:
            log.info("scheduler_leader" if self.leader else "scheduler_standby", owner=self.owner)
        if not self.leader:
            return
        for tournament_id in await asyncio.to_thread(self.desk.service_ids):
            if not self.running:
                return
            if tournament_id in self._finished:
                continue
            try:
                await self.advance(tournament_id)
            except Exception as exc:
                log.error(
                    "tournament_step_failed",
                    tournament_id=tournament_id,
                    **error_fields(exc),
                )

    def _next_round_due(self, tournament_id: str, control: Control) -> datetime | None:
        return next_round_due(self.desk.load(tournament_id), control)

    async def advance(self, tournament_id: str) -> Step | None:
        """Step one tournament until it waits for a game or is done (None: not running)."""
        desk = self.desk
        control = await asyncio.to_thread(desk.control, tournament_id)
        if control.paused:
            return None
        if not await asyncio.to_thread(desk.is_started, tournament_id, control):
            if control.start_at is None or datetime.now(UTC) < control.start_at:
                return None
            state = await asyncio.to_thread(desk.load, tournament_id)
            if len(state.active) < 2:
                return None
            await asyncio.to_thread(desk.start, tournament_id, self.owner)
            control = await asyncio.to_thread(desk.control, tournament_id)
        step = Step("none")
        for _ in range(MAX_STEPS_PER_TICK):
            if not self.running:
                break
            if control.round_ms is not None:
                due = await asyncio.to_thread(self._next_round_due, tournament_id, control)
                if due is not None and datetime.now(UTC) < due:
                    break  # the next round has its time: a later tick pairs it
            step = await asyncio.to_thread(desk.runner.step, tournament_id)
            if step.kind == "waiting":
                await desk.factory.ensure_live(step.game_id)
                break
            if step.kind == "done":
                self._finished.add(tournament_id)
                break
            log.info(
                "tournament_step",
                tournament_id=tournament_id,
                step=step.kind,
                round=step.round,
                game_id=step.game_id or None,
            )
        return step
