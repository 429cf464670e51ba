"""Which schemas a store opens on without migrating: its own head, or a newer one (additive
migrations: old processes keep starting during a rolling upgrade); never a missing or an
older one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from eventstore import EventStore, SchemaError, StoreSettings
from eventstore.backends import create_engines
from eventstore.migrate import STORE_MIGRATIONS, head_revision, upgrade_engines
from tests.eventstore.conftest import FILE_BACKENDS, StoreTarget, pg_schema_for


@pytest.fixture(params=FILE_BACKENDS)
def fresh(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreTarget]:
    """An empty database (a schema of its own on PostgreSQL), never migrated."""
    if request.param == "sqlite-file":
        yield f"sqlite:///{tmp_path / 'm.db'}", StoreSettings()
        return
    url = request.getfixturevalue("postgres_url")
    settings = StoreSettings(pg_schema=pg_schema_for(request.node))
    yield url, settings
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{settings.pg_schema}" CASCADE'))
    engine.dispose()


def set_revision(target: StoreTarget, revision: str) -> None:
    engines = create_engines(*target)
    try:
        with engines.write.begin() as conn:
            conn.execute(
                sa.text(f"UPDATE {STORE_MIGRATIONS.version_table} SET version_num = :r"),
                {"r": revision},
            )
    finally:
        engines.dispose()


def opens(target: StoreTarget) -> bool:
    try:
        EventStore.open(target[0], settings=target[1], create=False).close()
    except SchemaError:
        return False
    return True


def test_a_store_opens_at_its_head_and_ahead_of_it_never_behind(fresh: StoreTarget) -> None:
    if fresh[0].startswith("postgresql"):
        # A schema that does not exist yet: refused, not created, without `create`.
        assert not opens(fresh)
    engines = create_engines(*fresh)
    try:
        upgrade_engines(engines)
    finally:
        engines.dispose()
    assert opens(fresh)
    set_revision(fresh, "0001")  # a revision this code ships, older than its head
    assert head_revision() != "0001" and not opens(fresh)
    set_revision(fresh, "9999_from_a_newer_release")
    assert opens(fresh)
    engines = create_engines(*fresh)
    try:
        assert STORE_MIGRATIONS.is_compatible(engines.write)
        assert not STORE_MIGRATIONS.is_current(engines)
    finally:
        engines.dispose()
