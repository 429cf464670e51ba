"""Read models as projections of the event store's global feed.

A projection folds the feed in position order into tables of its own and records how far it
got in the store's `projections` table, in the same transaction as its writes
(`EventStore.projection_transaction`): a crash leaves both as they were, and applying an
event twice changes nothing (every write is an upsert). Position 0 means "empty": the first
transaction from 0 clears the projection's tables, so `rebuild` is `reset_projection` and a
catch-up. `king db rebuild-projections` does that for every projection.

`GamesProjection` keeps the games index (`king_games`), the seats index (`king_game_seats`),
every game stream's start, progress, substitutes and result (`king_game_streams`, which the
home page's list and leaderboard read), everyone who sat in each game stream
(`king_game_players`: the four who started it and every substitute, a row per seat and
occupant, which the player filter and the bot page read), and every tournament's summary and
games (`king_tournaments`, `king_tournament_games`), so no list folds a stream. A table is an
event of its own: `table_opened` on the stream `table-<game id>`, written when the table is
set, before its game stream exists. Rows the index got from a release before the projection
(no table stream) are turned into `table_opened` events before the first fold
(`open_legacy_tables`), so an upgrade keeps them.

A `Projector` catches a projection up: at process start, after this process's own writes
(read-your-writes: a table just created is listed), and before an index read, so other
processes' writes show up too. Catching up reads only the events since the last position.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Protocol

import orjson
from sqlalchemy import Connection, Table, bindparam, delete, insert, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError

from domain.events import GameCreated, GameEnded, SeatSubstituted, from_payload
from domain.results import points_number
from eventstore import NO_STREAM, EventStore, NewEvent, RecordedEvent, VersionConflict
from services.db.models import (
    GamePlayerRow,
    GameRow,
    GameSeatRow,
    GameStreamRow,
    RatingRow,
    TournamentGameRow,
    TournamentRow,
)
from services.observability import error_fields, get_logger
from tournament import events as tevents
from tournament.ratings import Identity, RatedGame, Rating, Ratings, rate_game, rated_games

log = get_logger("king.projections")

TABLE_PREFIX = "table-"
TABLE_TYPE = "table"
TABLE_OPENED = "table_opened"
GAME_PREFIX = "game-"
GAMES = "king-games"  # the games projection's name in the `projections` table
RATINGS = "king-ratings"
TOURNAMENT_PREFIX = "tournament-"  # tournament.runner.STREAM_PREFIX
BATCH = 1000
RETRIES = 5
_LEGACY_IDS = uuid.UUID("6b696e67-2d74-6162-6c65-2d6f70656e65")  # uuid5 namespace

GAMES_TABLE: Table = GameRow.__table__  # type: ignore[attr-defined]
SEATS_TABLE: Table = GameSeatRow.__table__  # type: ignore[attr-defined]
STREAMS_TABLE: Table = GameStreamRow.__table__  # type: ignore[attr-defined]
PLAYERS_TABLE: Table = GamePlayerRow.__table__  # type: ignore[attr-defined]
RATINGS_TABLE: Table = RatingRow.__table__  # type: ignore[attr-defined]
TOURNAMENTS_TABLE: Table = TournamentRow.__table__  # type: ignore[attr-defined]
TOURNAMENT_GAMES_TABLE: Table = TournamentGameRow.__table__  # type: ignore[attr-defined]


class Projection(Protocol):
    name: str

    def clear(self, conn: Connection) -> None:
        """Delete every row of the projection's tables."""

    def apply(self, conn: Connection, batch: Sequence[RecordedEvent]) -> set[str]:
        """Fold `batch` in (idempotently); the keys it changed."""


def table_stream(game_id: str) -> str:
    return TABLE_PREFIX + game_id


def table_event(
    game_id: str,
    seats: Sequence[str],
    rules: dict[str, Any],
    decision_ms: int,
    client_seed: str,
    created_by: str,
    created_at: datetime,
    event_id: str | None = None,
) -> NewEvent:
    payload: dict[str, Any] = {
        "game_id": game_id,
        "seats": list(seats),
        "rules": rules,
        "decision_ms": decision_ms,
        "client_seed": client_seed,
        "created_by": created_by,
        "created_at": created_at.astimezone(UTC).isoformat(),
    }
    if event_id is None:
        return NewEvent(type=TABLE_OPENED, payload=payload)
    return NewEvent(type=TABLE_OPENED, payload=payload, event_id=event_id)


def open_table(store: EventStore, event: NewEvent) -> bool:
    """Append a `table_opened` event; False when the table's stream exists already."""
    try:
        store.append(
            table_stream(str(event.payload["game_id"])), [event], NO_STREAM, stream_type=TABLE_TYPE
        )
    except VersionConflict:
        return False
    return True


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def open_legacy_tables(store: EventStore) -> int:
    """Write a `table_opened` event for every indexed table that has none (rows from a release
    before the projection); the number written. Idempotent: the event ids follow from the id."""
    with store.engines.read.connect() as conn:
        rows = conn.execute(select(GAMES_TABLE)).all()
    written = 0
    for row in rows:
        if store.stream_info(table_stream(row.id)) is not None:
            continue
        try:
            seats = orjson.loads(row.seats)
            rules = orjson.loads(row.rules)
        except orjson.JSONDecodeError:
            log.warning("legacy_table_unreadable", game_id=row.id)
            continue
        event = table_event(
            row.id,
            seats,
            rules,
            row.decision_ms,
            row.client_seed,
            row.created_by,
            _utc(row.created_at),
            event_id=str(uuid.uuid5(_LEGACY_IDS, row.id)),
        )
        written += open_table(store, event)
    return written


class Projector:
    """Runs one projection: `catch_up` folds what the feed holds beyond its position.

    Thread-safe; a caller that needs what was just appended calls `catch_up` and, once it
    returns, reads the projection's tables. A failure is logged and left for the next call:
    a read then sees the projection as it was, never an error.
    """

    def __init__(
        self,
        store: EventStore,
        projection: Projection,
        *,
        before_first: Callable[[EventStore], object] | None = None,
        batch_size: int = BATCH,
    ) -> None:
        self.store = store
        self.projection = projection
        self.before_first = before_first
        self.batch_size = batch_size
        self.listeners: list[Callable[[set[str]], None]] = []
        self._lock = threading.Lock()
        self.position = 0
        self._empty_folded = False  # position 0 already applied (an empty feed): skip the write

    def catch_up(self, *, raise_errors: bool = False) -> int:
        """Fold the feed up to its head; the position reached."""
        with self._lock:
            try:
                return self._catch_up()
            except Exception as exc:
                if raise_errors:
                    raise
                log.warning(
                    "projection_error", projection=self.projection.name, **error_fields(exc)
                )
                return self.position

    def rebuild(self) -> int:
        """Forget the projection and fold the whole feed again."""
        with self._lock:
            self.store.reset_projection(self.projection.name)
            self.position = 0
            self._empty_folded = False
            return self._catch_up()

    def _catch_up(self) -> int:
        name = self.projection.name
        failures = 0
        while True:
            start = self.store.projection_position(name)
            if start == 0 and self.before_first is not None:
                self.before_first(self.store)
            batch = self.store.read_all(start + 1, limit=self.batch_size)
            if not batch and (start > 0 or self._empty_folded):
                self.position = start
                return start
            try:
                changed = self._apply(start, batch)
            except (IntegrityError, DBAPIError):
                # Another process folded the same events at the same moment: look again.
                failures += 1
                if failures >= RETRIES:
                    raise
                continue
            if changed is None:
                continue  # someone else moved the position meanwhile
            self.position = batch[-1].position if batch else start
            self._empty_folded = not batch
            if changed:
                for listener in self.listeners:
                    listener(changed)
            if len(batch) < self.batch_size:
                return self.position

    def _apply(self, start: int, batch: list[RecordedEvent]) -> set[str] | None:
        with self.store.projection_transaction(self.projection.name) as tx:
            if tx.last_position != start:
                return None
            if start == 0:
                self.projection.clear(tx.connection)
            changed = self.projection.apply(tx.connection, batch) if batch else set()
            if batch:
                tx.advance(batch[-1].position)
            return changed


STREAM_TYPES = frozenset((GameCreated.TYPE, GameEnded.TYPE, SeatSubstituted.TYPE))


def json_list(text: str | None) -> list[Any]:
    """A JSON list column's value ([] when null or not a list)."""
    if not text:
        return []
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return []
    return value if isinstance(value, list) else []


def _table_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """The columns of a `table_opened` event (ValueError/KeyError/TypeError when malformed)."""
    seats = payload["seats"]
    if not isinstance(seats, list) or len(seats) != 4 or not all(isinstance(s, str) for s in seats):
        raise ValueError("a table has four seats")
    rules = payload["rules"]
    if not isinstance(rules, dict):
        raise TypeError("rules must be an object")
    decision_ms = payload["decision_ms"]
    if isinstance(decision_ms, bool) or not isinstance(decision_ms, int):
        raise TypeError("decision_ms must be an integer")
    created_at = datetime.fromisoformat(str(payload["created_at"]))
    return {
        "id": str(payload["game_id"]),
        "seats": orjson.dumps(seats).decode(),
        "rules": orjson.dumps(rules).decode(),
        "decision_ms": decision_ms,
        "client_seed": str(payload["client_seed"]),
        "created_by": str(payload["created_by"]),
        "created_at": _utc(created_at),
    }


class TournamentFolds:
    """Each tournament's state as of the last event a projection applied: kept between batches,
    and read again from its stream (up to the event) only after a restart or a gap."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self._states: dict[str, tevents.TournamentState] = {}

    def clear(self) -> None:
        self._states.clear()

    def _before(self, tid: str, version: int) -> tevents.TournamentState:
        state = self._states.get(tid)
        if state is not None and state.version == version - 1:
            return state
        state = tevents.TournamentState()
        if version > 1:
            for r in self.store.read_stream(TOURNAMENT_PREFIX + tid, to_version=version - 1):
                state = tevents.apply(state, tevents.from_payload(r.type, r.payload))
        return state

    def step(
        self, r: RecordedEvent
    ) -> tuple[str, tevents.TournamentState, tevents.TournamentState] | None:
        """(tournament id, state before, state after) of a tournament stream's event; None for
        another stream's, or (logged) for one that does not replay."""
        if not r.stream_id.startswith(TOURNAMENT_PREFIX) or r.type not in tevents.EVENT_TYPES:
            return None
        tid = r.stream_id[len(TOURNAMENT_PREFIX) :]
        try:
            before = self._before(tid, r.version)
            after = tevents.apply(before, tevents.from_payload(r.type, r.payload))
        except (ValueError, KeyError, TypeError):  # a tournament that does not replay
            self._states.pop(tid, None)
            log.warning("projection_skipped_event", position=r.position, type=r.type)
            return None
        self._states[tid] = after
        return tid, before, after


def _seated_games(state: tevents.TournamentState) -> set[str]:
    return {str(t.get("game_id")) for tables in state.round_games for t in tables}


def _tournament_summary(tid: str, st: tevents.TournamentState) -> dict[str, Any]:
    c = st.created
    done = {g.game_id for g in st.results}
    finished = st.finished is not None
    return {
        "name": c.name if c else tid,
        "format": c.format if c else "",
        "rounds": c.rounds if c else 0,
        "played": len(st.rounds),
        "players": len(st.players),
        "finished": finished,
        "open_tables": 0 if finished else len(_seated_games(st) - done),
    }


class GamesProjection:
    """The games index, the seats index, the game streams' starts, substitutes and results,
    who sat in each, and the tournaments' summaries, from the feed."""

    name = GAMES

    def __init__(self, store: EventStore) -> None:
        self.tournaments = TournamentFolds(store)

    def clear(self, conn: Connection) -> None:
        for table in (SEATS_TABLE, GAMES_TABLE, STREAMS_TABLE, PLAYERS_TABLE):
            conn.execute(delete(table))
        for table in (TOURNAMENTS_TABLE, TOURNAMENT_GAMES_TABLE):
            conn.execute(delete(table))
        self.tournaments.clear()

    def apply(self, conn: Connection, batch: Sequence[RecordedEvent]) -> set[str]:
        changed: set[str] = set()
        for r in batch:
            sid = r.stream_id
            if sid.startswith(TOURNAMENT_PREFIX):
                step = self.tournaments.step(r)
                if step is not None:
                    self._tournament(conn, *step, r)
                continue
            if sid.startswith(GAME_PREFIX):
                if r.type not in STREAM_TYPES:
                    continue
                game_id = sid[len(GAME_PREFIX) :]
                try:
                    event = from_payload(r.type, r.payload)
                except (ValueError, KeyError, TypeError):
                    log.warning("projection_skipped_event", position=r.position, type=r.type)
                    continue
                if isinstance(event, SeatSubstituted):  # the games index stays as it was
                    self._substituted(conn, game_id, event, r)
                    continue
                if isinstance(event, GameCreated):
                    self._started(conn, game_id, event, r)
                elif isinstance(event, GameEnded):
                    self._ended(conn, game_id, event, r)
                changed.add(game_id)
            elif sid.startswith(TABLE_PREFIX) and r.type == TABLE_OPENED:
                try:
                    columns = _table_payload(r.payload)
                except (ValueError, KeyError, TypeError):
                    log.warning("projection_skipped_event", position=r.position, type=r.type)
                    continue
                if columns["id"] != sid[len(TABLE_PREFIX) :]:
                    log.warning("projection_skipped_event", position=r.position, type=r.type)
                    continue
                self._opened(conn, columns, r)
                changed.add(columns["id"])
        return changed

    @staticmethod
    def _phase(conn: Connection, game_id: str) -> str | None:
        query = select(STREAMS_TABLE.c.phase).where(STREAMS_TABLE.c.game_id == game_id)
        phase: str | None = conn.execute(query).scalar()
        return phase

    def _opened(self, conn: Connection, columns: dict[str, Any], r: RecordedEvent) -> None:
        game_id = columns["id"]
        exists = conn.execute(select(GAMES_TABLE.c.id).where(GAMES_TABLE.c.id == game_id)).first()
        if exists is None:
            # The game may have started (or ended) before its table event: a table of an
            # older release, turned into an event at the upgrade.
            status = self._phase(conn, game_id) or "created"
            values = {**columns, "status": status, "updated_at": r.recorded_at}
            conn.execute(insert(GAMES_TABLE), values)
        else:  # applied again: the status and its time stay as the later events left them
            conn.execute(update(GAMES_TABLE).where(GAMES_TABLE.c.id == game_id).values(columns))
        conn.execute(delete(SEATS_TABLE).where(SEATS_TABLE.c.game_id == game_id))
        seats = orjson.loads(columns["seats"])
        conn.execute(
            insert(SEATS_TABLE),
            [{"game_id": game_id, "seat": i, "player_id": p} for i, p in enumerate(seats)],
        )

    def _started(
        self, conn: Connection, game_id: str, event: GameCreated, r: RecordedEvent
    ) -> None:
        phase = self._phase(conn, game_id)
        started = {"started_position": r.position, "started_at": r.recorded_at}
        starters = [
            {
                "game_id": game_id,
                "seat": seat,
                "player": player,
                "substitute": False,
                "started_position": r.position,
            }
            for seat, player in enumerate(event.players)
        ]
        if phase is None:
            conn.execute(
                insert(STREAMS_TABLE),
                {
                    "game_id": game_id,
                    "phase": "live",
                    "players": orjson.dumps(list(event.players)).decode(),
                    **started,
                },
            )
            conn.execute(insert(PLAYERS_TABLE), starters)
        else:  # applied again, or after an unreadable start's end: the start is known now
            values = {**started, "players": orjson.dumps(list(event.players)).decode()}
            conn.execute(
                update(STREAMS_TABLE).where(STREAMS_TABLE.c.game_id == game_id).values(values)
            )
            where = PLAYERS_TABLE.c.game_id == game_id
            conn.execute(update(PLAYERS_TABLE).where(where).values(started_position=r.position))
            query = select(PLAYERS_TABLE.c.seat, PLAYERS_TABLE.c.player).where(where)
            known = {(row.seat, row.player) for row in conn.execute(query)}
            missing = [row for row in starters if (row["seat"], row["player"]) not in known]
            if missing:
                conn.execute(insert(PLAYERS_TABLE), missing)
        self._status(conn, game_id, ("created",), "live", r)

    @staticmethod
    def _substituted(
        conn: Connection, game_id: str, event: SeatSubstituted, r: RecordedEvent
    ) -> None:
        """A substitute takes a seat: a row of its own in `king_game_players` (the one who left
        keeps theirs: the game is theirs too) and a pair in the stream's `substitutes`."""
        s = STREAMS_TABLE.c
        query = select(s.players, s.substitutes, s.started_position).where(s.game_id == game_id)
        row = conn.execute(query).first()
        if row is None or row.started_position is None:  # no readable start: nobody is seated
            log.warning("projection_skipped_event", position=r.position, type=r.type)
            return
        starters = json_list(row.players)
        pairs = [p for p in json_list(row.substitutes) if isinstance(p, list) and len(p) == 2]
        seated = {(i, p) for i, p in enumerate(starters)} | {(p[0], p[1]) for p in pairs}
        if (event.seat, event.player) in seated:
            return  # applied already, or back in a seat they held: one row each
        pairs.append([event.seat, event.player])
        conn.execute(
            update(STREAMS_TABLE)
            .where(s.game_id == game_id)
            .values(substitutes=orjson.dumps(pairs).decode())
        )
        conn.execute(
            insert(PLAYERS_TABLE),
            {
                "game_id": game_id,
                "seat": event.seat,
                "player": event.player,
                "substitute": True,
                "started_position": row.started_position,
            },
        )

    def _ended(self, conn: Connection, game_id: str, event: GameEnded, r: RecordedEvent) -> None:
        values = {
            "phase": "over",
            "totals": orjson.dumps(list(event.totals)).decode(),
            "winners": orjson.dumps(list(event.winners)).decode(),
            "ladder": orjson.dumps([points_number(p) for p in event.ladder_points]).decode(),
            "ended_position": r.position,
        }
        if self._phase(conn, game_id) is None:  # a stream whose start was unreadable
            values["players"] = "[]"
            conn.execute(insert(STREAMS_TABLE), {"game_id": game_id, **values})
        else:
            conn.execute(
                update(STREAMS_TABLE).where(STREAMS_TABLE.c.game_id == game_id).values(values)
            )
            p = PLAYERS_TABLE.c
            conn.execute(
                update(PLAYERS_TABLE)
                .where(p.game_id == bindparam("b_game"), p.seat == bindparam("b_seat"))
                .values(points=bindparam("b_points"), won=bindparam("b_won")),
                [
                    {
                        "b_game": game_id,
                        "b_seat": seat,
                        "b_points": points,
                        "b_won": seat in event.winners,
                    }
                    for seat, points in enumerate(event.totals)
                ],
            )
        self._status(conn, game_id, ("created", "live"), "over", r)

    @staticmethod
    def _tournament(
        conn: Connection,
        tid: str,
        before: tevents.TournamentState,
        after: tevents.TournamentState,
        r: RecordedEvent,
    ) -> None:
        values = _tournament_summary(tid, after)
        query = select(TOURNAMENTS_TABLE.c.id).where(TOURNAMENTS_TABLE.c.id == tid)
        if conn.execute(query).first() is None:
            conn.execute(
                insert(TOURNAMENTS_TABLE), {"id": tid, "opened_position": r.position, **values}
            )
        else:
            where = TOURNAMENTS_TABLE.c.id == tid
            conn.execute(update(TOURNAMENTS_TABLE).where(where).values(values))
        if after.round_games is before.round_games:
            return
        seated = sorted(_seated_games(after) - _seated_games(before))
        if not seated:
            return
        known = set(
            conn.execute(
                select(TOURNAMENT_GAMES_TABLE.c.game_id).where(
                    TOURNAMENT_GAMES_TABLE.c.game_id.in_(seated)
                )
            ).scalars()
        )
        rows = [{"game_id": g, "tournament_id": tid} for g in seated if g not in known]
        if rows:
            conn.execute(insert(TOURNAMENT_GAMES_TABLE), rows)

    @staticmethod
    def _status(
        conn: Connection, game_id: str, before: tuple[str, ...], after: str, r: RecordedEvent
    ) -> None:
        conn.execute(
            update(GAMES_TABLE)
            .where(GAMES_TABLE.c.id == game_id, GAMES_TABLE.c.status.in_(before))
            .values(status=after, updated_at=r.recorded_at)
        )


class RatingsProjection:
    """The ratings (tournament.ratings) of every bot identity, from the tournaments' events:
    each `game_recorded` rates its game under the identities its tournament gives the seats,
    in feed order. A tournament's state is kept between batches and read again (up to the
    event) only after a restart or a gap."""

    name = RATINGS

    def __init__(self, store: EventStore) -> None:
        self.tournaments = TournamentFolds(store)

    def clear(self, conn: Connection) -> None:
        conn.execute(delete(RATINGS_TABLE))
        self.tournaments.clear()

    def apply(self, conn: Connection, batch: Sequence[RecordedEvent]) -> set[str]:
        changed: set[str] = set()
        for r in batch:
            step = self.tournaments.step(r)
            if step is None:
                continue
            state = step[2]
            if r.type == tevents.GameRecorded.TYPE and state.created is not None:
                games, who = rated_games(replace(state, results=state.results[-1:]))
                changed |= self._rate(conn, games[0], who, r.position)
        return changed

    @staticmethod
    def _rate(
        conn: Connection, game: RatedGame, who: dict[str, Identity], position: int
    ) -> set[str]:
        ids = list(dict.fromkeys(game.players))
        rows = {
            row.id: row
            for row in conn.execute(select(RATINGS_TABLE).where(RATINGS_TABLE.c.id.in_(ids)))
        }
        if any(row.position >= position for row in rows.values()):
            return set()  # applied already
        before = Ratings(
            MappingProxyType({i: Rating(row.mu, row.sigma, row.games) for i, row in rows.items()})
        )
        after = rate_game(before, game)
        for i in ids:
            rating = after.by_id.get(i)
            if rating is None or (i in rows and rating == before.by_id[i]):
                continue
            ident = who.get(i) or Identity(i, i, "player")
            values = {
                "name": ident.name,
                "kind": ident.kind,
                "mu": rating.mu,
                "sigma": rating.sigma,
                "games": rating.games,
                "position": position,
            }
            if i in rows:
                conn.execute(update(RATINGS_TABLE).where(RATINGS_TABLE.c.id == i).values(values))
            else:
                conn.execute(insert(RATINGS_TABLE), {"id": i, **values})
        return set(ids)


def read_ratings(conn: Connection) -> tuple[Ratings, dict[str, Identity]]:
    """The ratings projection's rows as `Ratings` and the identities they belong to."""
    table: dict[str, Rating] = {}
    who: dict[str, Identity] = {}
    for row in conn.execute(select(RATINGS_TABLE)):
        table[row.id] = Rating(row.mu, row.sigma, row.games)
        who[row.id] = Identity(row.id, row.name, row.kind)
    return Ratings(MappingProxyType(table)), who


def games_projector(store: EventStore) -> Projector:
    return Projector(store, GamesProjection(store), before_first=open_legacy_tables)


def ratings_projector(store: EventStore) -> Projector:
    return Projector(store, RatingsProjection(store))


def projectors(store: EventStore) -> list[Projector]:
    """Every projection of the service, for `king db rebuild-projections`."""
    from services.lobby.projection import lobby_projector  # it builds on Projector, above

    return [games_projector(store), ratings_projector(store), lobby_projector(store)]
