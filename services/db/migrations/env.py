"""Alembic environment of the service's tables (see eventstore.migrate.MigrationSet)."""

from sqlmodel import SQLModel

from services.db.migrate import APP_MIGRATIONS
from services.db.models import APP_TABLES

APP_MIGRATIONS.run_in_env(SQLModel.metadata, {table.name for table in APP_TABLES})
