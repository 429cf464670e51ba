"""Run Alembic migrations programmatically (``king db upgrade`` calls `upgrade`).

No alembic.ini is needed: a `MigrationSet` names its script folder, its own version table and
its PostgreSQL lock, so several packages' migrations share one database without touching each
other's tables. The store's own set is `STORE_MIGRATIONS` (version table
``eventstore_alembic_version``); the service defines another with the same machinery.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, MetaData, text
from sqlalchemy.engine import URL

from eventstore.backends import Engines, StoreSettings, create_engines


@dataclass(frozen=True, slots=True)
class MigrationSet:
    """One package's migrations: where its scripts are, its version table, its upgrade lock."""

    scripts: Path
    version_table: str
    lock_key: int

    def config(self) -> Config:
        config = Config()
        config.set_main_option("script_location", str(self.scripts))
        return config

    def head_revision(self) -> str:
        """The newest revision shipped with this code."""
        return _head_revision(self)

    def current_revision(self, engine: Engine) -> str | None:
        """The revision the database is at (None before the first upgrade)."""
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"version_table": self.version_table})
            return context.get_current_revision()

    def is_current(self, engines: Engines) -> bool:
        return self.current_revision(engines.write) == self.head_revision()

    def is_compatible(self, engine: Engine) -> bool:
        """At this code's head, or ahead of it. Migrations are additive, so a revision this
        code does not ship is a newer one it still works on: during a rolling upgrade the old
        processes keep starting after `king db upgrade` has run."""
        found = self.current_revision(engine)
        if found is None or found == self.head_revision():
            return found is not None
        known = {s.revision for s in ScriptDirectory.from_config(self.config()).walk_revisions()}
        return found not in known

    def upgrade_engines(self, engines: Engines, revision: str = "head") -> None:
        """Upgrade the database behind `engines` to `revision`."""
        if engines.kind == "postgresql" and engines.settings.pg_schema:
            with engines.write.begin() as conn:
                conn.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{engines.settings.pg_schema}"'))
        if revision == "head" and self.is_current(engines):
            # Nothing to run; Alembic would load every script and env.py only to find that out
            # (a third of a SQLite service's start, which upgrades at every start).
            return
        config = self.config()
        with engines.write.connect() as conn:
            config.attributes["connection"] = conn
            command.upgrade(config, revision)
            if conn.in_transaction():
                conn.commit()

    def run_in_env(self, metadata: MetaData, own_tables: Collection[str]) -> None:
        """The body of a set's Alembic env.py: online only, on the connection it is handed."""
        from alembic import context

        connection: Connection | None = context.config.attributes.get("connection")
        if context.is_offline_mode() or connection is None:
            raise RuntimeError(f"run the migrations in {self.scripts} through MigrationSet")

        def include_name(name: str | None, type_: str, _parent: object) -> bool:
            # Other packages share the metadata and the database: compare our tables only.
            return type_ != "table" or name in own_tables

        context.configure(
            connection=connection,
            target_metadata=metadata,
            version_table=self.version_table,
            include_name=include_name,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            if connection.dialect.name == "postgresql":
                # The pool's idle-in-transaction timeout guards request transactions; a migration
                # runs Python between its statements, and a CPU-starved process (seen under load)
                # would be cut off half-way through one: not for this transaction.
                connection.execute(text("SET LOCAL idle_in_transaction_session_timeout = 0"))
                # Two processes upgrading at once: the second waits, then finds the head applied.
                connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": self.lock_key})
            context.run_migrations()


@functools.cache
def _head_revision(migrations: MigrationSet) -> str:
    """A set's head: read once per process (the scripts ship with the code; the frozen set
    is its own cache key)."""
    head = ScriptDirectory.from_config(migrations.config()).get_current_head()
    assert head is not None
    return head


STORE_MIGRATIONS: Final = MigrationSet(
    Path(__file__).with_name("migrations"),
    "eventstore_alembic_version",
    zlib.crc32(b"eventstore:migrations"),
)
VERSION_TABLE: Final = STORE_MIGRATIONS.version_table
migration_lock_key: Final = STORE_MIGRATIONS.lock_key


def head_revision() -> str:
    return STORE_MIGRATIONS.head_revision()


def current_revision(engine: Engine) -> str | None:
    return STORE_MIGRATIONS.current_revision(engine)


def is_compatible(engine: Engine) -> bool:
    return STORE_MIGRATIONS.is_compatible(engine)


def upgrade_engines(engines: Engines, revision: str = "head") -> None:
    """Upgrade the store's tables behind `engines` (used by `EventStore.open`)."""
    STORE_MIGRATIONS.upgrade_engines(engines, revision)


def upgrade(url: str | URL, revision: str = "head", settings: StoreSettings | None = None) -> None:
    """Bring the database at `url` to `revision` (default: the newest). Safe to run twice."""
    engines = create_engines(url, settings)
    try:
        upgrade_engines(engines, revision)
    finally:
        engines.dispose()
