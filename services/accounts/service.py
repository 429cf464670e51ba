"""Accounts: sign-up and log-in with a password, the account's tokens (named, scoped, shown
once, stored as SHA-256 only), its web sessions and the bots it owns; the admin's disable and
revoke. Synchronous (argon2 and the database): call off the event loop.

A bot owned by an account is a player of its own (its seats, tokens and ratings are its own);
`king_players.owner_id` names the account. Tokens act as the player they were made for: an
account's tokens may have `read` and `play`, a bot's `read` and `bot`.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from services.accounts.errors import (
    BadName,
    BadScopes,
    LoginFailed,
    NameTaken,
    NotYours,
    TokenNotFound,
)
from services.accounts.names import display_name, normalise_name
from services.accounts.passwords import check_strength, hash_password, verify_password
from services.accounts.versions import FIRST_LABEL, BotVersion, clean_label
from services.db.models import AccountRow, BotVersionRow, PlayerRow, TokenRow
from services.identity import (
    SESSION_SCOPE,
    Player,
    PlayerNotFound,
    PlayerService,
    aware,
    hash_token,
    new_token,
)

ACCOUNT_SCOPES = frozenset({"read", "play"})
BOT_SCOPES = frozenset({"read", "bot"})
MAX_TOKEN_NAME = 60
VERSION_RETRIES = 5
TOUCH_EVERY = timedelta(minutes=1)  # last-used times are written at most this often per token


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """A token as its owner sees it (never its text)."""

    id: str
    player_id: str
    name: str
    scopes: tuple[str, ...]
    created_at: datetime
    last_used_at: datetime | None


def _info(row: TokenRow) -> TokenInfo:
    return TokenInfo(
        row.token_id or "",
        row.player_id,
        row.name or "",
        tuple(sorted((row.scopes or "").split())),
        aware(row.created_at) or row.created_at,
        aware(row.last_used_at),
    )


def now_utc() -> datetime:
    return datetime.now(UTC)


def _player(row: PlayerRow) -> Player:
    return Player(row.id, row.name, row.kind, row.bot_url, row.created_at)


class AccountService:
    def __init__(self, engine: Engine, players: PlayerService, read_engine: Engine | None = None):
        self._engine = engine
        self._read = read_engine or engine
        self.players = players
        self._touched: dict[str, datetime] = {}

    # --- sign-up and log-in --------------------------------------------------------------

    def sign_up(self, raw_name: str, password: str, raw_display: str | None = None) -> Player:
        """A new account (a human player with a password). Nothing is stored on a refusal."""
        name = normalise_name(raw_name)
        check_strength(password, name)
        shown = display_name(raw_display, name)
        digest = hash_password(password)
        now = datetime.now(UTC)
        try:
            with Session(self._engine) as session:
                session.add(PlayerRow(id=name, name=shown, kind="human", created_at=now))
                session.flush()
                session.add(AccountRow(player_id=name, password_hash=digest, created_at=now))
                session.commit()
        except IntegrityError:
            raise NameTaken("that name is taken") from None
        return Player(name, shown, "human", None, now)

    def log_in(self, raw_name: str, password: str) -> str:
        """The account's id, or LoginFailed (the same for an unknown name, a wrong password
        and a disabled account; as slow for each)."""
        try:
            name = normalise_name(raw_name)
        except BadName:
            name = None
        row = None
        if name is not None:
            with Session(self._read) as session:
                row = session.get(AccountRow, name)
        ok = verify_password(row.password_hash if row is not None else None, password)
        if not ok or row is None or row.disabled:
            raise LoginFailed("wrong name or password")
        return row.player_id

    def is_account(self, player_id: str) -> bool:
        with Session(self._read) as session:
            row = session.get(AccountRow, player_id)
        return row is not None and not row.disabled

    # --- tokens and sessions -------------------------------------------------------------

    def _acts_for(self, session: Session, owner_id: str, player_id: str) -> frozenset[str]:
        """The scopes a token of `player_id` made by `owner_id` may have (NotYours if none)."""
        if player_id == owner_id:
            if session.get(AccountRow, owner_id) is None:
                raise NotYours("only an account (signed up with a password) makes tokens")
            return ACCOUNT_SCOPES
        row = session.get(PlayerRow, player_id)
        if row is None or row.owner_id != owner_id:
            raise NotYours(f"{player_id!r} is not a bot of yours")
        return BOT_SCOPES

    def issue(
        self, owner_id: str, player_id: str, name: str, scopes: list[str]
    ) -> tuple[TokenInfo, str]:
        """A new token of `player_id` (the account or one of its bots): (what it is, its text,
        shown once)."""
        wanted = frozenset(scopes)
        name = name.strip()
        if not name or len(name) > MAX_TOKEN_NAME:
            raise BadScopes(f"a token's name has 1 to {MAX_TOKEN_NAME} characters")
        secret = new_token()
        now = datetime.now(UTC)
        with Session(self._engine) as session:
            allowed = self._acts_for(session, owner_id, player_id)
            if not wanted or not wanted <= allowed:
                kind = "an account's" if allowed == ACCOUNT_SCOPES else "a bot's"
                raise BadScopes(f"{kind} token has scopes among {', '.join(sorted(allowed))}")
            row = TokenRow(
                token_hash=hash_token(secret),
                player_id=player_id,
                created_at=now,
                token_id="t" + secrets.token_hex(8),
                name=name,
                scopes=" ".join(sorted(wanted)),
            )
            session.add(row)
            session.commit()
            info = _info(row)
        return info, secret

    def tokens(self, owner_id: str) -> list[TokenInfo]:
        """The live tokens of the account and its bots (not its web sessions), newest first."""
        with Session(self._read) as session:
            bots = select(col(PlayerRow.id)).where(col(PlayerRow.owner_id) == owner_id)
            rows = session.execute(
                select(TokenRow)
                .where(
                    or_(TokenRow.player_id == owner_id, TokenRow.player_id.in_(bots)),  # type: ignore[arg-type,attr-defined]
                    TokenRow.revoked == False,  # type: ignore[arg-type]  # noqa: E712
                    TokenRow.token_id.is_not(None),  # type: ignore[union-attr]
                )
                .order_by(TokenRow.created_at.desc())  # type: ignore[attr-defined]
            ).scalars()
            return [_info(r) for r in rows if SESSION_SCOPE not in (r.scopes or "").split()]

    def revoke(self, owner_id: str, token_id: str) -> TokenInfo:
        """Revoke one token of the account or of one of its bots."""
        with Session(self._engine) as session:
            row = session.execute(
                select(TokenRow).where(TokenRow.token_id == token_id)  # type: ignore[arg-type]
            ).scalar_one_or_none()
            if row is None or row.revoked:
                raise TokenNotFound(f"no live token {token_id!r} of yours")
            try:
                self._acts_for(session, owner_id, row.player_id)
            except NotYours:
                raise TokenNotFound(f"no live token {token_id!r} of yours") from None
            row.revoked = True
            session.add(row)
            session.commit()
            info = _info(row)
            digest = row.token_hash
        self.players.forget_tokens(digests=frozenset({digest}))
        return info

    def open_session(self, player_id: str, lifetime: timedelta) -> str:
        """A web session of the account: its cookie's text (stored as SHA-256 only)."""
        secret = new_token()
        now = datetime.now(UTC)
        with Session(self._engine) as session:
            session.add(
                TokenRow(
                    token_hash=hash_token(secret),
                    player_id=player_id,
                    created_at=now,
                    scopes=f"{SESSION_SCOPE} play read",
                    expires_at=now + lifetime,
                )
            )
            session.commit()
        return secret

    def close_session(self, secret: str) -> None:
        """Revoke a web session (log-out); an unknown one is no error."""
        digest = hash_token(secret)
        with Session(self._engine) as session:
            session.execute(
                update(TokenRow)
                .where(TokenRow.token_hash == digest)  # type: ignore[arg-type]
                .values(revoked=True)
            )
            session.commit()
        self.players.forget_tokens(digests=frozenset({digest}))

    def revoke_token_text(self, secret: str) -> None:
        """Revoke the token with this text (an API log-out)."""
        self.close_session(secret)

    def touch_due(self, digest: str) -> bool:
        """Whether the last-used time of the token with this hash (`hash_token`, as the
        request's authentication computed it) is due to be written (at most once a
        `TOUCH_EVERY` per token and process). Memory only: call on the loop."""
        now = datetime.now(UTC)
        last = self._touched.get(digest)
        if last is not None and now - last < TOUCH_EVERY:
            return False
        if len(self._touched) > 50_000:
            self._touched.clear()
        self._touched[digest] = now
        return True

    def write_last_used(self, digest: str) -> None:
        with Session(self._engine) as session:
            session.execute(
                update(TokenRow)
                .where(TokenRow.token_hash == digest)  # type: ignore[arg-type]
                .values(last_used_at=datetime.now(UTC))
            )
            session.commit()

    # --- bots ----------------------------------------------------------------------------

    def create_bot(
        self,
        owner_id: str,
        raw_name: str,
        raw_display: str | None,
        url: str | None,
        version: str | None = None,
    ) -> Player:
        """A bot player owned by the account: push (`url`, already checked by the URL guard)
        or pull (None), with its version 1 (labelled `version`, default "1")."""
        name = normalise_name(raw_name)
        shown = display_name(raw_display, name)
        label = clean_label(version, FIRST_LABEL)
        now = datetime.now(UTC)
        try:
            with Session(self._engine) as session:
                if session.get(AccountRow, owner_id) is None:
                    raise NotYours("only an account (signed up with a password) owns bots")
                row = PlayerRow(
                    id=name, name=shown, kind="bot", bot_url=url, created_at=now, owner_id=owner_id
                )
                session.add(row)
                session.flush()  # the player first: the version refers to it
                session.add(
                    BotVersionRow(bot_id=name, number=1, label=label, bot_url=url, created_at=now)
                )
                session.commit()
                return _player(row)
        except IntegrityError:
            raise NameTaken("that name is taken") from None

    def versions(self, bot_id: str) -> list[BotVersion]:
        """The bot's versions, oldest first (none for a player no account owns)."""
        with Session(self._read) as session:
            rows = session.execute(
                select(BotVersionRow)
                .where(col(BotVersionRow.bot_id) == bot_id)
                .order_by(col(BotVersionRow.number))
            ).scalars()
            return [
                BotVersion(r.bot_id, r.number, r.label, r.bot_url, aware(r.created_at) or now_utc())
                for r in rows
            ]

    def new_version(
        self, owner_id: str, bot_id: str, label: str, url: str | None, keep_url: bool
    ) -> BotVersion:
        """Declare the owner's bot's next version, from now on; with a new push URL (already
        checked by the URL guard) unless `keep_url`. Two declared at once: one gets the number,
        the other is refused (NameTaken is not it: the caller retries)."""
        text = clean_label(label, FIRST_LABEL)
        for _ in range(VERSION_RETRIES):
            try:
                return self._new_version(owner_id, bot_id, text, url, keep_url)
            except IntegrityError:  # another declaration took the number: take the next
                continue
        raise NameTaken("the bot's versions kept changing: declare it again")

    def _new_version(
        self, owner_id: str, bot_id: str, text: str, url: str | None, keep_url: bool
    ) -> BotVersion:
        now = datetime.now(UTC)
        with Session(self._engine) as session:
            bot = session.get(PlayerRow, bot_id)
            if bot is None or bot.owner_id != owner_id:
                raise NotYours(f"{bot_id!r} is not one of your bots")
            last = session.execute(
                select(BotVersionRow.number)  # type: ignore[call-overload]
                .where(col(BotVersionRow.bot_id) == bot_id)
                .order_by(col(BotVersionRow.number).desc())
                .limit(1)
            ).scalar()
            bot_url = bot.bot_url if keep_url else url
            number = (last or 0) + 1
            session.add(
                BotVersionRow(
                    bot_id=bot_id, number=number, label=text, bot_url=bot_url, created_at=now
                )
            )
            session.commit()
        if not keep_url:
            self.players.set_bot_url(bot_id, url)
        return BotVersion(bot_id, number, text, bot_url, now)

    def bots(self, owner_id: str) -> list[Player]:
        with Session(self._read) as session:
            rows = session.execute(
                select(PlayerRow)
                .where(PlayerRow.owner_id == owner_id)  # type: ignore[arg-type]
                .order_by(PlayerRow.created_at, PlayerRow.id)  # type: ignore[arg-type]
            ).scalars()
            return [_player(r) for r in rows]

    def owner_of(self, player_id: str) -> str | None:
        with Session(self._read) as session:
            row = session.get(PlayerRow, player_id)
            if row is None:
                raise PlayerNotFound(f"no player {player_id!r}")
            return row.owner_id

    def owns(self, owner_id: str, player_id: str) -> bool:
        try:
            return self.owner_of(player_id) == owner_id
        except PlayerNotFound:
            return False

    # --- the admin's -----------------------------------------------------------------------

    def revoke_all(self, player_id: str) -> int:
        """Revoke every token and session of the player and, for an account, of its bots: how
        many were live."""
        with Session(self._engine) as session:
            if session.get(PlayerRow, player_id) is None:
                raise PlayerNotFound(f"no player {player_id!r}")
            ids = {player_id}
            ids.update(
                session.execute(
                    select(col(PlayerRow.id)).where(col(PlayerRow.owner_id) == player_id)
                ).scalars()
            )
            result = session.execute(
                update(TokenRow)
                .where(TokenRow.player_id.in_(ids), TokenRow.revoked == False)  # type: ignore[attr-defined,arg-type]  # noqa: E712
                .values(revoked=True)
            )
            session.commit()
        self.players.forget_tokens(ids)
        return int(result.rowcount or 0)  # type: ignore[attr-defined]

    def set_disabled(self, player_id: str, disabled: bool) -> int:
        """Disable (no log-in; every token revoked: the number) or enable an account."""
        with Session(self._engine) as session:
            row = session.get(AccountRow, player_id)
            if row is None:
                raise PlayerNotFound(f"no account {player_id!r}")
            row.disabled = disabled
            session.add(row)
            session.commit()
        return self.revoke_all(player_id) if disabled else 0
