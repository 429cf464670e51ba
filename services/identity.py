"""Players and their API tokens. A token is shown once; only its SHA-256 is stored.

The admin token comes from the configuration (KING_ADMIN_TOKEN); without one, `king serve`
writes a fresh one to `<data_dir>/admin-token` (mode 600) and logs that path, never the token.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, select, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from services.db.models import PlayerRow, TokenRow

PLAYER_ID = re.compile(r"\A[a-z0-9][a-z0-9_-]{1,39}\Z")
TOKEN_PREFIX = "king_"
# A token's database row is re-read at most this long after the last read: a token revoked by
# another process (an admin's disable, a log-out) is refused here within this time.
GRANT_SECONDS = 30.0


# Names the service itself uses for who did something (`created_by` of the admin's tables):
# a player with such an id would be taken for the admin.
RESERVED_PLAYER_IDS = frozenset({"admin"})


class PlayerExists(ValueError):
    pass


class ReservedPlayerId(ValueError):
    """The id is one the service uses itself."""


class PlayerNotFound(LookupError):
    pass


# What a token may do (services.accounts makes tokens with them): `read` reads what its player
# may see; `play` acts in the player's own seats (and manages its account); `bot` acts for the
# bot player the token was made for. A token made before scopes existed has them all.
SCOPES = ("read", "play", "bot")
ACTING_SCOPES = frozenset({"play", "bot"})
SESSION_SCOPE = "session"  # a web session's token (services.accounts.sessions), never a bearer


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request acts for: a player, or the admin (player_id None), with the scopes of its
    token (None: every scope, as the admin's token and the tokens made before scopes)."""

    player_id: str | None
    is_admin: bool = False
    token_key: str = ""  # a non-secret key for rate limiting (prefix of the token's hash)
    scopes: frozenset[str] | None = None
    session: bool = False  # from the web session cookie, not a bearer token

    def has(self, scope: str) -> bool:
        return self.scopes is None or scope in self.scopes

    @property
    def may_act(self) -> bool:
        """May change anything (the central check of services.controllers.deps)."""
        return self.scopes is None or bool(self.scopes & ACTING_SCOPES)


@dataclass(frozen=True, slots=True)
class Grant:
    """What the database says a token is: its player, scopes and expiry (cached per process)."""

    player_id: str
    scopes: frozenset[str] | None
    expires_at: datetime | None
    read_at: float = 0.0  # time.monotonic() of the database read

    def principal(self, digest: str) -> Principal | None:
        if self.expires_at is not None and self.expires_at <= datetime.now(UTC):
            return None
        session = self.scopes is not None and SESSION_SCOPE in self.scopes
        scopes = self.scopes - {SESSION_SCOPE} if self.scopes is not None else None
        return Principal(self.player_id, False, digest[:16], scopes, session)


def parse_scopes(text: str | None) -> frozenset[str] | None:
    return None if text is None else frozenset(text.split())


def aware(when: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes for timezone-aware columns: they are UTC."""
    if when is None or when.tzinfo is not None:
        return when
    return when.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Player:
    id: str
    name: str
    kind: str
    bot_url: str | None
    created_at: datetime


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def _player(row: PlayerRow) -> Player:
    return Player(row.id, row.name, row.kind, row.bot_url, row.created_at)


class PlayerService:
    """Players, tokens and bot endpoints in the service's tables (synchronous; call off-loop)."""

    def __init__(
        self,
        engine: Engine,
        admin_token: str,
        read_engine: Engine | None = None,
        cache_size: int = 4096,
    ) -> None:
        self._engine = engine
        self._read = read_engine or engine
        self._admin_hash = hash_token(admin_token)
        self._cache: OrderedDict[str, Grant] = OrderedDict()
        self._players: dict[str, Player] = {}
        self._cache_size = cache_size
        self._lock = threading.Lock()

    # --- authentication ----------------------------------------------------------------

    def cached(self, digest: str) -> Principal | None:
        """The principal of a token known to this process (no database read), else None; by
        the token's hash (`hash_token`), which the caller computes once per request."""
        if hmac.compare_digest(digest, self._admin_hash):
            return Principal(None, True, digest[:16])
        with self._lock:
            grant = self._cache.get(digest)
        if grant is None or time.monotonic() - grant.read_at > GRANT_SECONDS:
            return None
        return grant.principal(digest)

    def authenticate(self, digest: str) -> Principal | None:
        """The principal of the token with this hash (`hash_token`), read from the database
        unless this process knows it; None for an unknown, revoked or expired token."""
        if hmac.compare_digest(digest, self._admin_hash):
            return Principal(None, True, digest[:16])
        with self._lock:
            grant = self._cache.get(digest)
        if grant is None or time.monotonic() - grant.read_at > GRANT_SECONDS:
            with Session(self._read) as session:
                row = session.get(TokenRow, digest)
            if row is None or row.revoked:
                self.forget_tokens(digests=frozenset({digest}))
                return None
            grant = Grant(
                row.player_id,
                parse_scopes(row.scopes),
                aware(row.expires_at),
                time.monotonic(),
            )
            with self._lock:
                self._cache[digest] = grant
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return grant.principal(digest)

    def forget_tokens(
        self, player_ids: set[str] | None = None, digests: frozenset[str] = frozenset()
    ) -> None:
        """Drop cached tokens (of these players, or these hashes) after they were revoked."""
        with self._lock:
            for digest in [
                d
                for d, g in self._cache.items()
                if d in digests or (player_ids is not None and g.player_id in player_ids)
            ]:
                del self._cache[digest]

    # --- players -----------------------------------------------------------------------

    def create(
        self, player_id: str, name: str, kind: str, bot_url: str | None
    ) -> tuple[Player, str]:
        if player_id in RESERVED_PLAYER_IDS:
            raise ReservedPlayerId(f"the player id {player_id!r} is reserved")
        token = new_token()
        now = datetime.now(UTC)
        row = PlayerRow(id=player_id, name=name, kind=kind, bot_url=bot_url, created_at=now)
        try:
            with Session(self._engine) as session:
                session.add(row)
                session.flush()
                session.add(
                    TokenRow(token_hash=hash_token(token), player_id=player_id, created_at=now)
                )
                session.commit()
                player = _player(row)
        except IntegrityError:
            raise PlayerExists(f"player {player_id!r} exists already") from None
        return player, token

    def get(self, player_id: str) -> Player:
        with Session(self._read) as session:
            row = session.get(PlayerRow, player_id)
            if row is None:
                raise PlayerNotFound(f"no player {player_id!r}")
            return _player(row)

    def known(self, player_id: str) -> Player | None:
        """The player if this process has it cached (no database read)."""
        with self._lock:
            return self._players.get(player_id)

    def find(self, player_id: str) -> Player | None:
        """The player (cached in this process; its own updates refresh the cache)."""
        with self._lock:
            known = self._players.get(player_id)
        if known is not None:
            return known
        try:
            player = self.get(player_id)
        except PlayerNotFound:
            return None
        with self._lock:
            if len(self._players) > 10_000:
                self._players.clear()
            self._players[player_id] = player
        return player

    def list(self, limit: int, offset: int) -> list[Player]:
        query = select(PlayerRow).order_by(PlayerRow.created_at, PlayerRow.id)  # type: ignore[arg-type]
        with Session(self._read) as session:
            rows = session.execute(query.limit(limit).offset(offset)).scalars().all()
            return [_player(r) for r in rows]

    def set_bot_url(self, player_id: str, url: str | None) -> Player:
        with Session(self._engine) as session:
            row = session.get(PlayerRow, player_id)
            if row is None:
                raise PlayerNotFound(f"no player {player_id!r}")
            row.bot_url = url
            if url is not None:
                row.kind = "bot"
            session.add(row)
            session.commit()
            player = _player(row)
        with self._lock:
            self._players[player_id] = player
        return player

    def rotate_token(self, player_id: str) -> str:
        """Revoke every token of the player and issue a new one."""
        self.get(player_id)
        token = new_token()
        with Session(self._engine) as session:
            session.execute(
                update(TokenRow).where(TokenRow.player_id == player_id).values(revoked=True)  # type: ignore[arg-type]
            )
            session.add(
                TokenRow(
                    token_hash=hash_token(token), player_id=player_id, created_at=datetime.now(UTC)
                )
            )
            session.commit()
        self.forget_tokens({player_id})
        return token
