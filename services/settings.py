"""The service's settings: environment variables with the prefix KING_, or `king serve` flags.

A bad value stops the start with one clear line naming the variable (`load_settings`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.errors import UserError

DEFAULT_DATA_DIR = Path("var")


class Settings(BaseSettings):
    """Every tunable of the game service (see docs/API.md, "Configuration")."""

    model_config = SettingsConfigDict(env_prefix="KING_", extra="ignore", frozen=True)

    database_url: str = Field(
        default="",
        description="sqlite:///path or postgresql+psycopg://...; empty: sqlite:///<data_dir>/king.db",
    )
    data_dir: Path = Field(default=DEFAULT_DATA_DIR, description="SQLite file, admin token file")
    pg_schema: str | None = Field(default=None, description="PostgreSQL schema for all tables")
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    admin_token: str | None = Field(default=None, min_length=16)
    decision_seconds: float = Field(default=10.0, gt=0, le=3600)
    max_strikes: int = Field(default=3, ge=1, le=100)
    house_strategy: str = "heuristic"
    max_body_bytes: int = Field(default=65_536, ge=1024)
    rate_limit_per_second: float = Field(default=50.0, ge=0, description="0 switches it off")
    rate_limit_burst: int = Field(default=200, ge=1)
    rate_limit_store: str = Field(
        default="memory",
        description="memory (each process its own buckets) or a redis://, rediss:// or unix:// "
        "URL: buckets shared by every process using it",
    )
    rate_limit_prefix: str = Field(
        default="king:ratelimit:", min_length=1, description="key prefix of the Redis buckets"
    )
    rate_limit_store_timeout: float = Field(
        default=0.5,
        gt=0,
        le=30,
        description="seconds a request waits for Redis before this process's buckets answer",
    )
    login_per_minute: float = Field(
        default=6.0,
        gt=0,
        description="log-in and sign-up attempts a minute per name and per client address "
        "(kept in rate_limit_store; limited even when rate_limit_per_second is 0)",
    )
    login_burst: int = Field(default=10, ge=1, description="attempts allowed at once")
    session_days: float = Field(default=14.0, gt=0, le=365, description="web session lifetime")
    secure_cookies: bool = Field(
        default=False,
        description="mark the session and CSRF cookies Secure even when a request arrives "
        "over plain HTTP (behind a TLS-terminating proxy); over https they always are",
    )
    bot_url_allow: str = Field(
        default="",
        description="comma list: loopback, private, link-local, or CIDRs bot URLs may reach",
    )
    cors_origins: str = Field(
        default="",
        description="comma list of origins whose browser pages may call the API; empty: none",
    )
    bot_connect_timeout: float = Field(default=3.0, gt=0)
    bot_reply_max_bytes: int = Field(default=65_536, ge=256)
    stream_keepalive_seconds: float = Field(default=15.0, gt=0)
    poll_seconds: float = Field(default=1.0, gt=0, description="stream re-read without a wake-up")
    sqlite_synchronous: Literal["OFF", "NORMAL", "FULL", "EXTRA"] = "FULL"
    log_level: str = "info"
    log_json: bool = True
    migrate_at_start: bool = Field(
        default=True,
        description="upgrade an older PostgreSQL schema when the process starts (SQLite always "
        "is); false: refuse it and leave upgrades to `king db upgrade`",
    )
    run_driver: bool = True
    lease_seconds: float = Field(
        default=6.0,
        ge=0.5,
        le=300,
        description="how long a game's owner keeps it without renewing: a killed or cut-off "
        "owner's games are taken over within this plus a sixth of it",
    )
    run_scheduler: bool = Field(
        default=True,
        description="run the tournament scheduler (one leader per database, elected by a lock)",
    )
    scheduler_seconds: float = Field(
        default=1.0, gt=0, le=3600, description="how often the scheduler advances tournaments"
    )

    log_origin: str = Field(
        default="king.local/log",
        pattern=r"^[^\s+]+$",
        description="the transparency log's origin line and signing key name (no spaces, no +)",
    )
    log_key_file: Path | None = Field(
        default=None,
        description="the log's signer key file (PRIVATE+KEY+...); empty: "
        "<data_dir>/log-signer.key, generated at first start",
    )

    @field_validator("database_url")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        if value and not value.startswith(("sqlite:", "postgresql")):
            raise ValueError("must start with sqlite:// or postgresql+psycopg://")
        return value

    @field_validator("rate_limit_store")
    @classmethod
    def _known_store(cls, value: str) -> str:
        if value != "memory" and not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must be memory or a redis://, rediss:// or unix:// URL")
        return value

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, value: str) -> str:
        for origin in (o.strip() for o in value.split(",") if o.strip()):
            if origin != "*" and not re.fullmatch(r"https?://[A-Za-z0-9.\-\[\]:]+", origin):
                raise ValueError(f"{origin!r} is not an origin (scheme://host[:port], or *)")
        return value

    @property
    def cors_origin_list(self) -> list[str]:
        return [o.strip().rstrip("/") for o in self.cors_origins.split(",") if o.strip()]

    @field_validator("house_strategy")
    @classmethod
    def _known_strategy(cls, value: str) -> str:
        from tournament.strategies import UnknownStrategy, make_strategy

        try:
            make_strategy(value, 0)
        except UnknownStrategy as exc:
            raise ValueError(str(exc)) from None
        return value

    @property
    def url(self) -> str:
        """The database URL, defaulting to the SQLite file in the data directory."""
        return self.database_url or f"sqlite:///{self.data_dir / 'king.db'}"

    @property
    def is_sqlite(self) -> bool:
        return self.url.startswith("sqlite")


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment, with explicit overrides (None means "not given")."""
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**given)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            name = "KING_" + "_".join(str(p) for p in err["loc"]).upper()
            problems.append(f"{name}: {err['msg']}")
        raise UserError("bad setting: " + "; ".join(problems)) from None
