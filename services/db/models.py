"""SQLModel tables of the service. Never used as API input: the API speaks msgspec Structs."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, DateTime, Index, LargeBinary, Text
from sqlmodel import Field, SQLModel


class PlayerRow(SQLModel, table=True):
    """A person or a bot. `bot_url` set: a push bot; unset: plays through the API (pull)."""

    __tablename__ = "king_players"

    id: str = Field(primary_key=True, max_length=40)
    name: str = Field(max_length=100)
    kind: str = Field(max_length=10)  # "human" | "bot"
    bot_url: str | None = Field(default=None, max_length=2000)
    created_at: datetime
    # The account that owns this bot (services.accounts); None for people and admin-made bots.
    owner_id: str | None = Field(default=None, index=True, max_length=40)


class AccountRow(SQLModel, table=True):
    """A player who signs in with a password (argon2id hash only). Disabled: no log-in, and
    its tokens (and its bots' tokens) were revoked when it was disabled."""

    __tablename__ = "king_accounts"

    player_id: str = Field(primary_key=True, max_length=40)
    password_hash: str = Field(max_length=200)
    disabled: bool = False
    created_at: datetime


class BotVersionRow(SQLModel, table=True):
    """A version of an account's bot, as its owner declared it (services.accounts): a label
    ("2.1", "deeper search") and the push URL it played at from `created_at` on. Version 1 is
    made with the bot; a game counts for the version current when it started."""

    __tablename__ = "king_bot_versions"

    bot_id: str = Field(primary_key=True, max_length=40)
    number: int = Field(primary_key=True)
    label: str = Field(max_length=60)
    bot_url: str | None = Field(default=None, max_length=2000)
    created_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))


class TokenRow(SQLModel, table=True):
    """An API token of a player, stored as the SHA-256 of the token text only."""

    __tablename__ = "king_tokens"

    token_hash: str = Field(primary_key=True, max_length=64)
    player_id: str = Field(index=True, max_length=40)
    created_at: datetime
    revoked: bool = False
    # Made by an account (services.accounts): a public id to name it by, the owner's label, its
    # scopes (space-separated; None: every scope, as the tokens made before scopes existed),
    # when it was last used, and for a web session when it expires.
    token_id: str | None = Field(default=None, max_length=24, unique=True, index=True)
    name: str | None = Field(default=None, max_length=60)
    scopes: str | None = Field(default=None, max_length=60)
    last_used_at: datetime | None = None
    expires_at: datetime | None = None


class GameRow(SQLModel, table=True):
    """The games index: one row per table, with what the driver needs to run it. A projection
    of the feed (services.projections): `table_opened` events make the rows, the game streams'
    `game_created` and `game_ended` move their status."""

    __tablename__ = "king_games"

    id: str = Field(primary_key=True, max_length=64)
    status: str = Field(index=True, max_length=10)  # "created" | "live" | "over"
    seats: str = Field(max_length=1000)  # JSON list of four seat owners
    rules: str = Field(max_length=2000)  # JSON object of rule options
    decision_ms: int
    client_seed: str = Field(default="", max_length=200)
    created_by: str = Field(max_length=40)
    created_at: datetime
    updated_at: datetime


class GameSeatRow(SQLModel, table=True):
    """Who sat where when the table was made: finds a player's games without reading them all
    (a projection, with the games index)."""

    __tablename__ = "king_game_seats"

    game_id: str = Field(primary_key=True, max_length=64)
    seat: int = Field(primary_key=True)
    player_id: str = Field(index=True, max_length=60)


class GameStreamRow(SQLModel, table=True):
    """Every game stream's progress and result, from its `game_created` and `game_ended`
    events (a projection): the home page's leaderboard and the index's status read it, so no
    request replays a game to learn how it ended. `ladder`: JSON list of ladder points, numbers
    (rows written before them hold fractions as text; both are read)."""

    __tablename__ = "king_game_streams"

    game_id: str = Field(primary_key=True, max_length=200)
    phase: str = Field(max_length=10)  # "live" | "over"
    players: str = Field(max_length=1000)  # JSON list of the four seat owners at the start
    totals: str | None = Field(default=None, max_length=200)
    winners: str | None = Field(default=None, max_length=100)
    ladder: str | None = Field(default=None, max_length=400)
    ended_position: int | None = None
    # The feed position and time of `game_created`: the home page lists the newest first with
    # one indexed query. Null for a stream whose start was unreadable.
    started_position: int | None = Field(default=None, index=True)
    started_at: datetime | None = Field(
        default=None, sa_column=Column(DateTime(timezone=True), nullable=True)
    )
    # JSON list of [seat, player] pairs, who took over a seat (`seat_substituted`), in the order
    # they came, each pair once; null: nobody. `players` stays who started.
    substitutes: str | None = Field(default=None, sa_column=Column(Text(), nullable=True))


class GamePlayerRow(SQLModel, table=True):
    """Everyone who sat in each game stream (a projection, with `king_game_streams`): one row per
    seat and occupant, the four who started it (`game_created`) and every substitute
    (`seat_substituted`), so a player's games, the service's and `king tournament run`'s alike,
    are one indexed query away however old they are. `started_position`: the game's start (its
    stream row's), newest first; `points` and `won`: the seat's game points and whether the seat
    won, once the game is over (null before)."""

    __tablename__ = "king_game_players"
    __table_args__ = (
        Index("ix_king_game_players_player_started_position", "player", "started_position"),
    )

    game_id: str = Field(primary_key=True, max_length=200)
    seat: int = Field(primary_key=True)
    player: str = Field(primary_key=True, max_length=200)
    substitute: bool
    started_position: int
    points: int | None = None
    won: bool | None = None


class TournamentRow(SQLModel, table=True):
    """Every tournament's summary for the lists (a projection of the tournament streams), so a
    listing reads rows instead of folding tournaments. `opened_position`: the feed position of
    its first event (newest first); `open_tables`: tables seated and not yet recorded."""

    __tablename__ = "king_tournaments"

    id: str = Field(primary_key=True, max_length=200)
    name: str = Field(max_length=300)
    format: str = Field(max_length=40)
    rounds: int
    played: int
    players: int
    finished: bool
    open_tables: int
    opened_position: int = Field(index=True)


class TournamentGameRow(SQLModel, table=True):
    """Which tournament seats a game (a projection, with `king_tournaments`)."""

    __tablename__ = "king_tournament_games"

    game_id: str = Field(primary_key=True, max_length=200)
    tournament_id: str = Field(index=True, max_length=200)


class RatingRow(SQLModel, table=True):
    """Every bot identity's rating (tournament.ratings), folded from the tournaments'
    `game_recorded` events in feed order (a projection). `position`: the feed position of the
    last game that moved it, so a game applied twice counts once."""

    __tablename__ = "king_ratings"

    id: str = Field(primary_key=True, max_length=300)
    name: str = Field(max_length=300)
    kind: str = Field(max_length=20)
    mu: float
    sigma: float
    games: int
    position: int


class ActionKeyRow(SQLModel, table=True):
    """An action's `Idempotency-Key` (services.idempotency), per player and game: claimed by
    the first request (`status` null while it is decided), then holding its first answer for
    the repeats (`body` zlib-compressed). Expires a day after `created_at`."""

    __tablename__ = "king_action_keys"

    player_id: str = Field(primary_key=True, max_length=60)
    game_id: str = Field(primary_key=True, max_length=200)
    key: str = Field(primary_key=True, max_length=128)
    fingerprint: str = Field(max_length=64)  # SHA-256 of the first request's body
    status: int | None = None
    media_type: str | None = Field(default=None, max_length=60)
    body: bytes | None = Field(default=None, sa_column=Column(LargeBinary(), nullable=True))
    created_at: datetime = Field(
        sa_column=Column(DateTime(timezone=True), nullable=False, index=True)
    )


class DealAnalysisRow(SQLModel, table=True):
    """An ended deal's analysis (services.analysis), computed once for every process: an ended
    deal never changes, so the row is written once and read by any replica. `key`: the SHA-256
    of what the analysis depends on (game, deal, attempt, version, analysis version, models,
    node budget); `body`: the deal's analysis as zlib-compressed JSON."""

    __tablename__ = "king_deal_analyses"

    key: str = Field(primary_key=True, max_length=64)
    game_id: str = Field(index=True, max_length=200)
    body: bytes = Field(sa_column=Column(LargeBinary(), nullable=False))
    created_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))


class InvitationRow(SQLModel, table=True):
    """An invitation to a seat (or seats) of a table a player set for others. Not a projection:
    answering moves `status` with one conditional UPDATE (`WHERE status = 'pending'`), so of
    an accept, a decline, a cancel and the expiry exactly one takes effect, on any number of
    processes. `seats`: JSON list of the seat numbers offered."""

    __tablename__ = "king_invitations"

    id: str = Field(primary_key=True, max_length=40)
    game_id: str = Field(index=True, max_length=64)
    inviter: str = Field(index=True, max_length=40)
    invitee: str = Field(index=True, max_length=40)
    seats: str = Field(max_length=100)
    status: str = Field(index=True, max_length=10)  # pending|accepted|declined|expired|cancelled
    start: bool = True  # start the game once every invitation of the table is accepted
    created_at: datetime
    expires_at: datetime = Field(index=True)
    answered_at: datetime | None = None
    reason: str | None = Field(default=None, max_length=200)


class LobbyTableRow(SQLModel, table=True):
    """An open table of the lobby as its events left it (a projection of the `lobby-<id>`
    streams, services.lobby.projection). `seats`: JSON list of four, `null` for a free seat;
    `position`: the feed position of its last event (the lobby stream's resume point)."""

    __tablename__ = "king_lobby_tables"

    id: str = Field(primary_key=True, max_length=64)
    creator: str = Field(index=True, max_length=40)
    status: str = Field(index=True, max_length=10)  # open | full | started | cancelled
    seats: str = Field(max_length=1000)
    rules: str = Field(max_length=2000)
    decision_ms: int
    game_id: str | None = Field(default=None, max_length=64)
    version: int
    last_event: str = Field(max_length=40)
    position: int = Field(index=True)
    created_at: datetime
    updated_at: datetime


APP_TABLES = (
    PlayerRow.__table__,  # type: ignore[attr-defined]
    AccountRow.__table__,  # type: ignore[attr-defined]
    TokenRow.__table__,  # type: ignore[attr-defined]
    GameRow.__table__,  # type: ignore[attr-defined]
    GameSeatRow.__table__,  # type: ignore[attr-defined]
    GameStreamRow.__table__,  # type: ignore[attr-defined]
    GamePlayerRow.__table__,  # type: ignore[attr-defined]
    TournamentRow.__table__,  # type: ignore[attr-defined]
    TournamentGameRow.__table__,  # type: ignore[attr-defined]
    RatingRow.__table__,  # type: ignore[attr-defined]
    ActionKeyRow.__table__,  # type: ignore[attr-defined]
    InvitationRow.__table__,  # type: ignore[attr-defined]
    DealAnalysisRow.__table__,  # type: ignore[attr-defined]
    LobbyTableRow.__table__,  # type: ignore[attr-defined]
    BotVersionRow.__table__,  # type: ignore[attr-defined]
)
