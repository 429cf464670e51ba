"""Alembic environment of the event store (see eventstore.migrate.MigrationSet)."""

from sqlmodel import SQLModel

from eventstore.migrate import STORE_MIGRATIONS
from eventstore.tables import STORE_TABLES

STORE_MIGRATIONS.run_in_env(SQLModel.metadata, {table.name for table in STORE_TABLES})
