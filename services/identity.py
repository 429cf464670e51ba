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
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, select, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from services.db.models import PlayerRow, TokenRow

PLAYER_ID = re.compile(r"\A[a-z0-9][a-z0-9_-]{1,39}\Z")
TOKEN_PREFIX = "king_"


# Names the service itself uses for who did something (`created_by` of the admin's tables):
# a player with such an id would be taken for the admin.
RESERVED_PLAYER_IDS = frozenset({"admin"})


class PlayerExists(ValueError):
    pass


class ReservedPlayerId(ValueError):
    """The id is one the service uses itself."""


class PlayerNotFound(LookupError):
    pass


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request acts for: a player, or the admin (player_id None)."""

    player_id: str | None
    is_admin: bool = False
    token_key: str = ""  # a non-secret key for rate limiting (prefix of the token's hash)


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
        self._cache: OrderedDict[str, str] = OrderedDict()
        self._players: dict[str, Player] = {}
        self._cache_size = cache_size
        self._lock = threading.Lock()

    # --- authentication ----------------------------------------------------------------

    def cached(self, token: str) -> Principal | None:
        """The principal of a token known to this process (no database read), else None."""
        digest = hash_token(token)
        if hmac.compare_digest(digest, self._admin_hash):
            return Principal(None, True, digest[:16])
        with self._lock:
            player_id = self._cache.get(digest)
        return None if player_id is None else Principal(player_id, False, digest[:16])

    def authenticate(self, token: str) -> Principal | None:
        digest = hash_token(token)
        if hmac.compare_digest(digest, self._admin_hash):
            return Principal(None, True, digest[:16])
        with self._lock:
            player_id = self._cache.get(digest)
        if player_id is None:
            with Session(self._read) as session:
                row = session.get(TokenRow, digest)
            if row is None or row.revoked:
                return None
            player_id = row.player_id
            with self._lock:
                self._cache[digest] = player_id
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return Principal(player_id, False, digest[:16])

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
        with self._lock:
            for digest in [d for d, p in self._cache.items() if p == player_id]:
                del self._cache[digest]
        return token
