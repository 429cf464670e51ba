"""Alembic migrations of the service's tables, run programmatically (`king db upgrade`).

The version table is `king_alembic_version`, beside the event store's own
`eventstore_alembic_version`, so both packages' migrations share one database.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, text

from eventstore.backends import Engines

VERSION_TABLE: Final = "king_alembic_version"
MIGRATION_LOCK_KEY: Final = 0x4B494E47  # "KING"
_SCRIPTS: Final = Path(__file__).with_name("migrations")


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(_SCRIPTS))
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
        return context.get_current_revision()


def upgrade_engines(engines: Engines, revision: str = "head") -> None:
    """Upgrade the service's tables in the database behind `engines`."""
    if engines.kind == "postgresql" and engines.settings.pg_schema:
        with engines.write.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{engines.settings.pg_schema}"'))
    config = _config()
    with engines.write.connect() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
        if conn.in_transaction():
            conn.commit()


def is_current(engines: Engines) -> bool:
    return current_revision(engines.write) == head_revision()
