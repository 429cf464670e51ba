"""Alembic environment of the event store: online only, on the connection it is handed."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, text
from sqlmodel import SQLModel

from eventstore.migrate import VERSION_TABLE, migration_lock_key
from eventstore.tables import STORE_TABLES

_OWN = {table.name for table in STORE_TABLES}


def _include_name(name: str | None, type_: str, _parent: object) -> bool:
    # Other packages may share the metadata and the database: compare our tables only.
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
            # Two processes upgrading at once: the second waits, then finds the head applied.
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": migration_lock_key})
        context.run_migrations()


_connection = context.config.attributes.get("connection")
if context.is_offline_mode() or _connection is None:
    raise RuntimeError("run the event store's migrations through eventstore.migrate.upgrade()")
_run(_connection)
