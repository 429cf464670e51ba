"""Run the store's Alembic migrations programmatically (``king db upgrade`` calls `upgrade`).

No alembic.ini is needed: the script location is this package's ``migrations`` folder, and
the version table is ``eventstore_alembic_version`` so other packages' migrations in the same
database keep their own.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Final

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, text
from sqlalchemy.engine import URL

from eventstore.backends import Engines, StoreSettings, create_engines

VERSION_TABLE: Final = "eventstore_alembic_version"
migration_lock_key: Final = zlib.crc32(b"eventstore:migrations")
_SCRIPTS: Final = Path(__file__).with_name("migrations")


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(_SCRIPTS))
    return config


def head_revision() -> str:
    """The newest revision shipped with this code."""
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at (None before the first upgrade)."""
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
        return context.get_current_revision()


def upgrade_engines(engines: Engines, revision: str = "head") -> None:
    """Upgrade the database behind `engines` (used by `EventStore.open`)."""
    if engines.kind == "postgresql" and engines.settings.pg_schema:
        with engines.write.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{engines.settings.pg_schema}"'))
    config = _config()
    with engines.write.connect() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
        if conn.in_transaction():
            conn.commit()


def upgrade(url: str | URL, revision: str = "head", settings: StoreSettings | None = None) -> None:
    """Bring the database at `url` to `revision` (default: the newest). Safe to run twice."""
    engines = create_engines(url, settings)
    try:
        upgrade_engines(engines, revision)
    finally:
        engines.dispose()
