"""Invitations: a player seats another player only with that player's consent.

A table a player (not the admin) sets that seats other players does not start: each of them
gets an invitation naming the seat(s) offered. The game starts when every invitation of the
table is accepted; a decline, an expiry or the inviter's cancel closes the table for good
(never started: nobody is struck or forfeited). The admin and tournaments seat players as
before, without invitations.

Invitations are rows of `king_invitations`, shared by every `king serve` process. Every change
is one single-row conditional UPDATE (`WHERE status = 'pending'`, or `'accepted'` when closing
a table), each in its own transaction, so of an accept, a decline, a cancel and the expiry
exactly one takes effect and no two transactions wait on each other's rows. Two facts make
the outcome stable without a lock across rows:

- only a pending invitation is answered, cancelled or expired, so once every invitation of a
  table is accepted none of them changes again (the game may start, and `start` checks it);
- a table with one closed (`declined`, `expired`, `cancelled`) invitation can never have every
  invitation accepted, so its other invitations are closed too, accepted ones included.

Expiry is checked whenever an invitation is read or answered, and swept periodically
(services.scheduler), which also starts a table whose last acceptance was not followed by its
start (a process stopped in between) and closes a table left half-closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import orjson
from sqlalchemy import Engine, Table, and_, case, func, select, update
from sqlalchemy.sql.elements import ColumnElement

from services.db.models import GameRow, InvitationRow
from services.identity import Principal
from services.observability import error_fields, get_logger
from services.play.errors import Conflict, Forbidden, PlayError, TableError
from services.play.house import is_house

if TYPE_CHECKING:
    from services.play.service import GameInfo, GameService

log = get_logger("king.invitations")

PENDING = "pending"
ACCEPTED = "accepted"
DECLINED = "declined"
EXPIRED = "expired"
CANCELLED = "cancelled"
STATUSES = (PENDING, ACCEPTED, DECLINED, EXPIRED, CANCELLED)
CLOSED = (DECLINED, EXPIRED, CANCELLED)  # a table with one of these never starts

DEFAULT_SECONDS = 600.0
MIN_SECONDS = 10.0
MAX_SECONDS = 86_400.0
ADMIN_CREATOR = "admin"  # `created_by` of the admin's tables (services.play.service)
SWEEP_LIMIT = 500

T: Table = InvitationRow.__table__  # type: ignore[attr-defined]
GAMES: Table = GameRow.__table__  # type: ignore[attr-defined]


# --- refusals ---------------------------------------------------------------------------


class InvitationNotFound(PlayError, LookupError):
    """No such invitation, or none the token may see (HTTP 404)."""


class InvitationClosed(Conflict):
    """The invitation was answered, cancelled or has expired: nothing changes (HTTP 409)."""

    def __init__(self, message: str, code: str = "invitation_closed") -> None:
        super().__init__(message)
        self.code = code


class InvitationsPending(Conflict):
    """The table seats players who have not accepted (HTTP 409): it cannot start yet."""

    code = "invitations_pending"

    def __init__(self, message: str, waiting: Sequence[str]) -> None:
        super().__init__(message)
        self.waiting = tuple(waiting)


class TableCancelled(Conflict):
    """The table's invitations were declined, expired or cancelled: it never starts (409)."""

    code = "table_cancelled"


# --- the invitation -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Invitation:
    id: str
    game_id: str
    inviter: str
    invitee: str
    seats: tuple[int, ...]
    status: str
    start: bool
    created_at: datetime
    expires_at: datetime
    answered_at: datetime | None
    reason: str | None

    def visible_to(self, principal: Principal) -> bool:
        return principal.is_admin or principal.player_id in (self.inviter, self.invitee)


def _utc(value: datetime) -> datetime:
    # SQLite hands back naive datetimes; every stored time is UTC.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _invitation(row: Any) -> Invitation:
    return Invitation(
        id=row.id,
        game_id=row.game_id,
        inviter=row.inviter,
        invitee=row.invitee,
        seats=tuple(orjson.loads(row.seats)),
        status=row.status,
        start=bool(row.start),
        created_at=_utc(row.created_at),
        expires_at=_utc(row.expires_at),
        answered_at=_utc(row.answered_at) if row.answered_at is not None else None,
        reason=row.reason,
    )


def invitees(created_by: str, seats: Sequence[str]) -> dict[str, list[int]]:
    """The players a table's creator must invite, with their seat numbers: every seated
    player but the creator and the house bots."""
    out: dict[str, list[int]] = {}
    for number, owner in enumerate(seats):
        if not is_house(owner) and owner != created_by:
            out.setdefault(owner, []).append(number)
    return out


def check_seconds(seconds: float | None) -> float:
    """How long a table's invitations stay open (TableError outside the bounds)."""
    value = DEFAULT_SECONDS if seconds is None else float(seconds)
    if not MIN_SECONDS <= value <= MAX_SECONDS:
        raise TableError(f"invitation_seconds must be {MIN_SECONDS:g}-{MAX_SECONDS:g}")
    return value


def describe(invitation: Invitation, info: GameInfo | None) -> dict[str, Any]:
    """An invitation as the API and the player's stream show it: with the table's players,
    rules and time limit (all public) when the table is known."""
    return {
        "id": invitation.id,
        "game_id": invitation.game_id,
        "inviter": invitation.inviter,
        "invitee": invitation.invitee,
        "seats": list(invitation.seats),
        "status": invitation.status,
        "reason": invitation.reason,
        "start": invitation.start,
        "created_at": invitation.created_at,
        "expires_at": invitation.expires_at,
        "answered_at": invitation.answered_at,
        "players": list(info.seats) if info else [],
        "rules": dict(info.rules) if info else {},
        "decision_seconds": info.decision_seconds if info else None,
        "game_status": info.status if info else None,
    }


# --- the book: the invitations table (blocking) -------------------------------------------


class InvitationBook:
    """Reads and moves invitations (blocking: call from worker threads). `now` is the clock
    that expiry is judged by (replaceable in tests)."""

    def __init__(
        self,
        engine: Engine,
        read_engine: Engine | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.engine = engine
        self.read_engine = read_engine or engine
        self.now = now
        # Bumped after each write this process commits (in memory, so a stream checks it for
        # nothing): a player's stream reads the invitations again only when it moved, when
        # one it shows is due to expire, or when `stamp` says another process wrote.
        self.version = 0
        self._version_lock = threading.Lock()

    def _wrote(self) -> None:
        with self._version_lock:
            self.version += 1

    # --- writing --------------------------------------------------------------------------

    def invite(
        self,
        game_id: str,
        inviter: str,
        seats: Sequence[str],
        start: bool,
        seconds: float,
        consented: str | None = None,
    ) -> list[Invitation]:
        """One pending invitation per player the inviter seats (none for themselves or a
        house bot), every one expiring `seconds` from now. With `consented` (how the players
        consented: they joined the table at the lobby) they are recorded accepted, so the
        table starts as any table whose invitations were all accepted."""
        now = self.now()
        made = [
            Invitation(
                id="inv-" + secrets.token_hex(8),
                game_id=game_id,
                inviter=inviter,
                invitee=player,
                seats=tuple(numbers),
                status=PENDING if consented is None else ACCEPTED,
                start=start,
                created_at=now,
                expires_at=now + timedelta(seconds=seconds),
                answered_at=None if consented is None else now,
                reason=consented,
            )
            for player, numbers in invitees(inviter, seats).items()
        ]
        if made:
            rows = [{**asdict(i), "seats": orjson.dumps(list(i.seats)).decode()} for i in made]
            with self.engine.begin() as conn:
                conn.execute(T.insert(), rows)
            self._wrote()
            log.info("table_invitations", game_id=game_id, invitees=[i.invitee for i in made])
        return made

    def _move(self, invitation_id: str, from_status: str, **values: Any) -> bool:
        """One conditional UPDATE in a transaction of its own: True if this one took effect."""
        extra: list[ColumnElement[bool]] = []
        if from_status == PENDING and values.get("status") != EXPIRED:
            extra.append(T.c.expires_at > values["answered_at"])  # an answer in time only
        query = (
            update(T)
            .where(T.c.id == invitation_id, T.c.status == from_status, *extra)
            .values(**values)
        )
        with self.engine.begin() as conn:
            moved: bool = conn.execute(query).rowcount == 1
        if moved:
            self._wrote()
        return moved

    def _close_table(self, game_id: str, reason: str) -> list[str]:
        """Close every invitation of a table that has a closed one (never to start): pending
        ones become `cancelled`, and so do accepted ones. The ids it changed."""
        now = self.now()
        changed = []
        for invitation in self._rows(T.c.game_id == game_id):
            if invitation.status in (PENDING, ACCEPTED) and self._move(
                invitation.id,
                invitation.status,
                status=CANCELLED,
                answered_at=now,
                reason=reason,
            ):
                changed.append(invitation.id)
        return changed

    def _expire(self, invitations: Iterable[Invitation]) -> set[str]:
        """Expire the pending ones past their time and close their tables; the tables."""
        now = self.now()
        closed: set[str] = set()
        for invitation in invitations:
            if invitation.status != PENDING or invitation.expires_at > now:
                continue
            reason = f"{invitation.invitee} did not answer in time"
            if self._move(invitation.id, PENDING, status=EXPIRED, answered_at=now, reason=reason):
                log.info(
                    "invitation_expired", invitation_id=invitation.id, game_id=invitation.game_id
                )
                self._close_table(invitation.game_id, reason)
                closed.add(invitation.game_id)
        return closed

    def accept(self, invitation_id: str, principal: Principal) -> Invitation:
        return self._answer(invitation_id, principal, ACCEPTED)

    def decline(self, invitation_id: str, principal: Principal) -> Invitation:
        return self._answer(invitation_id, principal, DECLINED)

    def _answer(self, invitation_id: str, principal: Principal, status: str) -> Invitation:
        invitation = self.get(invitation_id, principal)
        if principal.player_id != invitation.invitee:
            raise Forbidden(f"only {invitation.invitee} may answer this invitation")
        now = self.now()
        reason = f"{invitation.invitee} declined" if status == DECLINED else None
        if not self._move(invitation_id, PENDING, status=status, answered_at=now, reason=reason):
            raise _closed(self.get(invitation_id, principal))
        log.info(
            "invitation_answered",
            invitation_id=invitation_id,
            game_id=invitation.game_id,
            status=status,
        )
        if status == DECLINED and reason is not None:
            self._close_table(invitation.game_id, reason)
        return self.get(invitation_id, principal)

    def cancel(self, invitation_id: str, principal: Principal) -> Invitation:
        """The inviter (or the admin) withdraws the invitation, and with it the table: its
        pending invitations are cancelled, then the accepted ones. Refused once every
        invitation is accepted (the game starts) or the table is closed already."""
        invitation = self.get(invitation_id, principal)
        if not principal.is_admin and principal.player_id != invitation.inviter:
            raise Forbidden("only the inviter or the admin may cancel an invitation (decline it)")
        reason = "cancelled by the admin" if principal.is_admin else "cancelled by the inviter"
        now = self.now()
        took = False
        for other in self._rows(T.c.game_id == invitation.game_id):
            if other.status == PENDING:
                took |= self._move(
                    other.id, PENDING, status=CANCELLED, answered_at=now, reason=reason
                )
        table = self._rows(T.c.game_id == invitation.game_id)
        if not took and not any(i.status in CLOSED for i in table):
            raise InvitationClosed(
                f"every invitation of table {invitation.game_id} is accepted: the game starts",
                "invitations_accepted",
            )
        if not took:
            raise _closed(self.get(invitation_id, principal))
        log.info("invitation_cancelled", invitation_id=invitation_id, game_id=invitation.game_id)
        self._close_table(invitation.game_id, reason)
        return self.get(invitation_id, principal)

    def sweep(self) -> set[str]:
        """Expire what is past its time and finish closing half-closed tables (a process
        stopped between a closing and the rest of its table); the tables closed."""
        now = self.now()
        due = self._rows(T.c.status == PENDING, T.c.expires_at <= now, limit=SWEEP_LIMIT)
        closed = self._expire(due)
        half = select(T.c.game_id).where(T.c.status.in_(CLOSED))
        open_rows = self._rows(
            T.c.status.in_((PENDING, ACCEPTED)), T.c.game_id.in_(half), limit=SWEEP_LIMIT
        )
        for game_id in {i.game_id for i in open_rows}:
            table = self._rows(T.c.game_id == game_id)
            reason = next((i.reason for i in table if i.status in CLOSED and i.reason), None)
            if self._close_table(game_id, reason or "the table was cancelled"):
                closed.add(game_id)
        return closed

    # --- reading --------------------------------------------------------------------------

    def _rows(self, *where: ColumnElement[bool], limit: int | None = None) -> list[Invitation]:
        query = select(T).where(*where).order_by(T.c.created_at.desc(), T.c.id)
        if limit is not None:
            query = query.limit(limit)
        with self.engine.connect() as conn:
            return [_invitation(r) for r in conn.execute(query).all()]

    def _fresh(self, rows: list[Invitation], *where: ColumnElement[bool]) -> list[Invitation]:
        """`rows` with expiry applied to their whole tables (an accepted invitation is
        closed when another of its table expires): read again if any expired."""
        tables = {i.game_id for i in rows if i.status in (PENDING, ACCEPTED)}
        if not tables:
            return rows
        due = self._rows(
            T.c.game_id.in_(tables), T.c.status == PENDING, T.c.expires_at <= self.now()
        )
        if self._expire(due):
            return self._rows(*where)
        return rows

    def get(self, invitation_id: str, principal: Principal) -> Invitation:
        """The invitation, for its inviter, its invitee or the admin (else not found)."""
        where = T.c.id == invitation_id
        rows = self._fresh(self._rows(where), where)
        if not rows or not rows[0].visible_to(principal):
            raise InvitationNotFound(f"no invitation {invitation_id!r}")
        return rows[0]

    def of_game(self, game_id: str) -> list[Invitation]:
        where = T.c.game_id == game_id
        return self._fresh(self._rows(where), where)

    def stamp(self, player_id: str) -> tuple[int, int]:
        """How many invitations the player has received, and how many are pending: one small
        read that changes whenever the player's pending invitations do, whichever process
        wrote (rows are never deleted, and one only ever leaves `pending`)."""
        pending = func.count(case((T.c.status == PENDING, 1)))
        query = select(func.count(), pending).where(T.c.invitee == player_id)
        with self.engine.connect() as conn:
            total, waiting = conn.execute(query).one()
        return int(total), int(waiting)

    def received(self, player_id: str, status: str | None, limit: int) -> list[Invitation]:
        return self._listed(T.c.invitee == player_id, status, limit)

    def sent(self, player_id: str, status: str | None, limit: int) -> list[Invitation]:
        return self._listed(T.c.inviter == player_id, status, limit)

    def _listed(self, who: ColumnElement[bool], status: str | None, limit: int) -> list[Invitation]:
        where = [who] if status is None else [who, T.c.status == status]
        return self._fresh(self._rows(*where, limit=limit), *where)

    def ready_tables(self, limit: int = SWEEP_LIMIT) -> list[str]:
        """Tables not started whose every invitation is accepted and asked to start."""
        ready = func.sum(case((and_(T.c.status == ACCEPTED, T.c.start.is_(True)), 1), else_=0))
        query = (
            select(T.c.game_id)
            .join(GAMES, GAMES.c.id == T.c.game_id)
            .where(GAMES.c.status == "created")
            .group_by(T.c.game_id)
            .having(ready == func.count())
            .limit(limit)
        )
        with self.read_engine.connect() as conn:
            return [str(r[0]) for r in conn.execute(query).all()]

    def consent(self, game_id: str, created_by: str, seats: Sequence[str]) -> None:
        """Refuse to start a table that would seat a player without their consent: every
        player seated by a player (not the admin) must have accepted an invitation from the
        table's creator to exactly the seats they hold."""
        table = self.of_game(game_id)
        needed = invitees(created_by, seats)
        if not table and (created_by == ADMIN_CREATOR or not needed):
            return  # the admin's table, or a player seating only themselves and house bots
        closed = [i for i in table if i.status in CLOSED]
        if closed:
            raise TableCancelled(f"table {game_id} was cancelled: {closed[0].reason}")
        waiting = sorted({i.invitee for i in table if i.status == PENDING})
        accepted = {
            i.invitee: list(i.seats)
            for i in table
            if i.status == ACCEPTED and i.inviter == created_by
        }
        missing = sorted(p for p, numbers in needed.items() if accepted.get(p) != numbers)
        if waiting or missing:
            who = sorted(set(waiting) | set(missing))
            raise InvitationsPending(
                f"table {game_id} waits for {', '.join(who)} to accept"
                + (" (not invited)" if not waiting else ""),
                who,
            )


def _closed(invitation: Invitation) -> InvitationClosed:
    if invitation.status == EXPIRED:
        return InvitationClosed(f"invitation {invitation.id} has expired", "invitation_expired")
    why = f": {invitation.reason}" if invitation.reason else ""
    return InvitationClosed(f"invitation {invitation.id} is {invitation.status} already{why}")


# --- the desk: answering, with the game's start (event loop) ------------------------------


class InvitationDesk:
    """What the API and the scheduler call: the book's moves in worker threads, then the
    table's start once every invitation is accepted, and the players' wake-up."""

    def __init__(self, games: GameService) -> None:
        self.games = games
        self.book: InvitationBook = games.invitations

    async def get(self, invitation_id: str, principal: Principal) -> Invitation:
        return await asyncio.to_thread(self.book.get, invitation_id, principal)

    async def accept(self, invitation_id: str, principal: Principal) -> Invitation:
        invitation = await asyncio.to_thread(self.book.accept, invitation_id, principal)
        self.games.games_changed()
        try:
            await self.start_if_ready(invitation.game_id)
        except Exception as exc:  # the acceptance stands; the sweep starts the table later
            log.warning(
                "invited_table_start_failed", game_id=invitation.game_id, **error_fields(exc)
            )
        return invitation

    async def decline(self, invitation_id: str, principal: Principal) -> Invitation:
        invitation = await asyncio.to_thread(self.book.decline, invitation_id, principal)
        self.games.games_changed()
        return invitation

    async def cancel(self, invitation_id: str, principal: Principal) -> Invitation:
        invitation = await asyncio.to_thread(self.book.cancel, invitation_id, principal)
        self.games.games_changed()
        return invitation

    async def start_if_ready(self, game_id: str) -> bool:
        """Start the table if every invitation is accepted and it was set to start; True if
        this call started it. Another accept, process or sweep starting it first is fine."""
        table = await asyncio.to_thread(self.book.of_game, game_id)
        if not table or not all(i.status == ACCEPTED and i.start for i in table):
            return False
        creator = Principal(player_id=table[0].inviter)
        with contextlib.suppress(Conflict):  # started by someone else in between
            await self.games.start(creator, game_id)
            log.info("invited_table_started", game_id=game_id)
            return True
        return False

    async def sweep(self) -> None:
        """The periodic job: expiry, half-closed tables, tables ready but not started."""
        closed = await asyncio.to_thread(self.book.sweep)
        ready = await asyncio.to_thread(self.book.ready_tables)
        for game_id in ready:
            await self.start_if_ready(game_id)
        if closed:
            self.games.games_changed()
