"""Opening the database at start: an older PostgreSQL schema is upgraded, unless told not to."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from eventstore import migrate as store_migrate
from eventstore.backends import create_engines
from services.database import open_store, store_settings
from services.db import migrate as app_migrate
from services.errors import UserError
from services.settings import Settings, load_settings

pytestmark = pytest.mark.postgres


@pytest.fixture
def fresh_schema(postgres_url: str) -> Iterator[str]:
    """An empty PostgreSQL schema name (nothing migrated), dropped afterwards."""
    schema = f"start_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    yield schema
    engine = sa.create_engine(postgres_url)
    with engine.begin() as conn:
        conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    engine.dispose()


def _revisions(settings: Settings) -> tuple[str | None, bool]:
    engines = create_engines(settings.url, store_settings(settings))
    try:
        return store_migrate.current_revision(engines.write), app_migrate.is_compatible(engines)
    finally:
        engines.dispose()


def test_a_fresh_postgres_schema_is_upgraded_at_start(postgres_url: str, fresh_schema: str) -> None:
    settings = load_settings(database_url=postgres_url, pg_schema=fresh_schema)
    assert _revisions(settings) == (None, False)
    store = open_store(settings)
    try:
        assert store.read_stream("nothing-here") == []
    finally:
        store.close()
    assert _revisions(settings) == (store_migrate.head_revision(), True)
    open_store(settings).close()  # a second start finds the head and changes nothing


def test_with_migrate_at_start_off_an_old_schema_is_refused(
    postgres_url: str, fresh_schema: str
) -> None:
    settings = load_settings(
        database_url=postgres_url, pg_schema=fresh_schema, migrate_at_start=False
    )
    with pytest.raises(UserError, match="king db upgrade"):
        open_store(settings)
    assert _revisions(settings) == (None, False), "nothing may be created when refusing"
