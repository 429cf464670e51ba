"""Alembic environment of the service's tables: online only, on the connection it is handed."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, text
from sqlmodel import SQLModel

from services.db.migrate import MIGRATION_LOCK_KEY, VERSION_TABLE
from services.db.models import APP_TABLES

_OWN = {table.name for table in APP_TABLES}


def _include_name(name: str | None, type_: str, _parent: object) -> bool:
    return type_ != "table" or name in _OWN


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=SQLModel.metadata,
        version_table=VERSION_TABLE,
        include_name=_include_name,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
        context.run_migrations()


_connection = context.config.attributes.get("connection")
if context.is_offline_mode() or _connection is None:
    raise RuntimeError("run the service's migrations through services.db.migrate")
_run(_connection)
