"""Safe retries of an action: the `Idempotency-Key` request header (IETF httpapi draft).

A key is chosen by the client, one per decision, and sent again on every retry of it. The
first request with a key claims it in the table `king_action_keys` (its primary key is the
unique constraint that lets one process win on a shared PostgreSQL), is decided, and leaves
its answer there: a repeat gets that first answer (status and bytes), marked as a replay,
and is never decided again, so a resent illegal action never costs a second strike. A key
is scoped to (player, game): the stored answer holds the seat's own view, and only the same
player can have it replayed.

A repeat while the first is being decided waits for it in this process; in another process
it gets `KeyInProgress` (409 with `Retry-After`). The same key with another body is
`KeyReused` (422). An answer of 500 or more (the service busy or failing) is not kept: the
key is let go, so the retry is decided afresh. Keys expire after `TTL_SECONDS`; expired rows
are pruned on write, at most once a `PRUNE_SECONDS` per process.

`ActionKeys` is the blocking table work (call it off the event loop); `Idempotency` is the
async side the action handler uses.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any

from litestar import Response
from litestar.serialization import encode_json
from sqlalchemy import Engine, Table, and_, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError

from eventstore import StoreBusy, StoreUnavailable
from services.db.models import ActionKeyRow
from services.observability import get_logger

KEY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
KEY_MAX = 128
# A UUID, a ULID, base64 or base64url text, a client's own counter: printable, no spaces.
KEY_PATTERN = re.compile(rf"\A[A-Za-z0-9._~:+/=-]{{1,{KEY_MAX}}}\Z")
TTL_SECONDS = 24 * 3600
PRUNE_SECONDS = 60.0
WAIT_SECONDS = 10.0  # how long a repeat in the same process waits for the first answer
RETRY_SECONDS = 1  # `Retry-After` of a key in progress elsewhere

IN_PROGRESS = f"the first request with this {KEY_HEADER} is still being decided: ask again soon"

TABLE: Table = ActionKeyRow.__table__  # type: ignore[attr-defined]
log = get_logger("king.idempotency")


class IdempotencyError(Exception):
    """The root of the refusals of an `Idempotency-Key`."""


class MalformedKey(IdempotencyError, ValueError):
    """The header is not a key this service keeps (HTTP 400)."""


class KeyReused(IdempotencyError):
    """The key was first sent with another body (HTTP 422)."""


class KeyInProgress(IdempotencyError):
    """The key's first request is still being decided (HTTP 409, `Retry-After`)."""


def parse_key(header: str | None) -> str | None:
    """The key of an `Idempotency-Key` header, None without one. The draft's form is a
    structured-field string (`"8e03978e-..."`); the bare text is taken too."""
    if header is None:
        return None
    text = header.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    if not KEY_PATTERN.match(text):
        raise MalformedKey(
            f"an {KEY_HEADER} is 1-{KEY_MAX} letters, digits or the characters ._~:+/=- "
            "(a UUID, say), optionally in double quotes"
        )
    return text


def fingerprint(body: bytes) -> str:
    """What identifies a request's body: the SHA-256 of its canonical bytes."""
    return hashlib.sha256(body).hexdigest()


@dataclass(frozen=True, slots=True)
class Scope:
    """One key of one player in one game."""

    player_id: str
    game_id: str
    key: str


@dataclass(frozen=True, slots=True)
class Answer:
    """A first answer as kept: status, media type, body bytes."""

    status: int
    media_type: str
    body: bytes

    @classmethod
    def of(cls, response: Response[Any]) -> Answer:
        media = response.media_type
        media_type = media.value if isinstance(media, Enum) else str(media)
        content = response.content
        body = content if isinstance(content, bytes) else encode_json(content)
        return cls(response.status_code or 200, media_type, body)

    def replay(self) -> Response[bytes]:
        return Response(
            content=self.body,
            status_code=self.status,
            media_type=self.media_type,
            headers={REPLAYED_HEADER: "true"},
        )


def _store_error(exc: DBAPIError) -> StoreBusy | StoreUnavailable:
    """A driver's OperationalError as the store's own (503 either way), without its SQL."""
    message = str(exc.orig).lower()
    if "locked" in message or "lock timeout" in message or "busy" in message:
        return StoreBusy("database busy")
    return StoreUnavailable("database unavailable")


class ActionKeys:
    """The keys' table: claim, finish, release, prune (blocking: call off the loop)."""

    def __init__(
        self,
        engine: Engine,
        ttl_seconds: float = TTL_SECONDS,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.engine = engine
        self.ttl = timedelta(seconds=ttl_seconds)
        self.clock = clock
        self._pruned_at = float("-inf")  # time.monotonic() of this process's last prune
        dialect = engine.dialect.name
        self._insert = postgresql.insert if dialect == "postgresql" else sqlite.insert

    @staticmethod
    def _where(scope: Scope) -> Any:
        c = TABLE.c
        return and_(c.player_id == scope.player_id, c.game_id == scope.game_id, c.key == scope.key)

    def claim(self, scope: Scope, print_: str) -> Answer | None:
        """None: this request holds the key now and decides. Else the first answer; raises
        KeyReused (another body) or KeyInProgress (not answered yet)."""
        now = self.clock()
        try:
            with self.engine.begin() as conn:
                self._maybe_prune(conn, now)
                if self._try_insert(conn, scope, print_, now):
                    return None
                expired = conn.execute(
                    delete(TABLE)
                    .where(self._where(scope), TABLE.c.created_at < now - self.ttl)
                    .returning(TABLE.c.key)
                ).first()
                if expired is not None and self._try_insert(conn, scope, print_, now):
                    return None
                row = conn.execute(
                    select(
                        TABLE.c.fingerprint, TABLE.c.status, TABLE.c.media_type, TABLE.c.body
                    ).where(self._where(scope))
                ).one_or_none()
        except OperationalError as exc:
            raise _store_error(exc) from None
        if row is None:  # let go between the insert and the read: ask again
            return self.claim(scope, print_)
        if row.fingerprint != print_:
            raise KeyReused(
                f"this {KEY_HEADER} was first sent with another body: send a new decision "
                "with a new key"
            )
        if row.status is None:
            raise KeyInProgress(IN_PROGRESS)
        body = zlib.decompress(row.body) if row.body else b""
        return Answer(row.status, row.media_type or "", body)

    def _try_insert(self, conn: Connection, scope: Scope, print_: str, now: datetime) -> bool:
        values = {
            "player_id": scope.player_id,
            "game_id": scope.game_id,
            "key": scope.key,
            "fingerprint": print_,
            "created_at": now,
        }
        # RETURNING, not the row count: a driver may not count an INSERT … ON CONFLICT
        insert = self._insert(TABLE).values(values).on_conflict_do_nothing()
        return conn.execute(insert.returning(TABLE.c.key)).first() is not None

    def finish(self, scope: Scope, answer: Answer) -> None:
        """Keep the first answer (compressed: an answer holds a whole seat view)."""
        with self.engine.begin() as conn:
            conn.execute(
                update(TABLE)
                .where(self._where(scope), TABLE.c.status.is_(None))
                .values(
                    status=answer.status,
                    media_type=answer.media_type,
                    body=zlib.compress(answer.body, 1),
                )
            )

    def release(self, scope: Scope) -> None:
        """Let an unanswered key go: its next request is decided afresh."""
        with self.engine.begin() as conn:
            conn.execute(delete(TABLE).where(self._where(scope), TABLE.c.status.is_(None)))

    def prune(self, now: datetime | None = None) -> int:
        """Delete every expired key; how many."""
        with self.engine.begin() as conn:
            return self._prune(conn, now or self.clock())

    def _maybe_prune(self, conn: Connection, now: datetime) -> None:
        tick = time.monotonic()
        if tick - self._pruned_at >= PRUNE_SECONDS:
            self._pruned_at = tick
            self._prune(conn, now)

    def _prune(self, conn: Connection, now: datetime) -> int:
        result = conn.execute(delete(TABLE).where(TABLE.c.created_at < now - self.ttl))
        return max(int(result.rowcount or 0), 0)


Decide = Callable[[], Awaitable[Response[Any]]]


class Idempotency:
    """Decide a keyed request once: the first answer for every repeat (async side)."""

    def __init__(self, keys: ActionKeys) -> None:
        self.keys = keys
        self._flights: dict[Scope, asyncio.Future[None]] = {}  # keys being decided here
        self._tasks: set[asyncio.Task[Response[Any]]] = set()

    async def run(self, scope: Scope, print_: str, decide: Decide) -> Response[Any]:
        """`decide`'s answer for the key's first request (exceptions rendered as answers),
        the kept first answer with `Idempotent-Replayed: true` for a repeat."""
        loop = asyncio.get_running_loop()
        end = loop.time() + WAIT_SECONDS
        while (flight := self._flights.get(scope)) is not None:
            try:
                await asyncio.wait_for(asyncio.shield(flight), end - loop.time())
            except TimeoutError:
                raise KeyInProgress(IN_PROGRESS) from None
        mine: asyncio.Future[None] = loop.create_future()
        self._flights[scope] = mine
        try:
            first = await asyncio.to_thread(self.keys.claim, scope, print_)
        except BaseException:
            self._land(scope, mine)
            raise
        if first is not None:
            self._land(scope, mine)
            return first.replay()
        # Decided in a task of its own: a request cancelled half-way (the client gone)
        # still keeps its answer, or lets the key go.
        task = asyncio.create_task(self._decide(scope, mine, decide))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return await asyncio.shield(task)

    async def _decide(
        self, scope: Scope, mine: asyncio.Future[None], decide: Decide
    ) -> Response[Any]:
        try:
            response = await decide()
            answer = Answer.of(response)
            try:
                if answer.status >= 500:
                    await asyncio.to_thread(self.keys.release, scope)
                else:
                    await asyncio.to_thread(self.keys.finish, scope, answer)
            except SQLAlchemyError as exc:
                # The answer stands; the key stays in progress until it expires.
                log.warning("idempotency_key_not_kept", error=type(exc).__name__)
            return response
        finally:
            self._land(scope, mine)

    def _land(self, scope: Scope, mine: asyncio.Future[None]) -> None:
        if self._flights.get(scope) is mine:
            del self._flights[scope]
        if not mine.done():
            mine.set_result(None)
