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


PROBE_ENV = """
from pathlib import Path
from sqlalchemy import MetaData
from eventstore.migrate import MigrationSet

MigrationSet(Path(__file__).parent, "probe_alembic_version", 4242).run_in_env(MetaData(), set())
"""

PROBE_REVISION = """
import sqlalchemy as sa
from alembic import op

revision = "probe1"
down_revision = None


def upgrade() -> None:
    op.execute(sa.text(
        "CREATE TABLE probe_settings AS SELECT "
        "current_setting('idle_in_transaction_session_timeout') AS idle, "
        "current_setting('lock_timeout') AS lock_wait"
    ))
"""


@pytest.mark.postgres
def test_a_migration_is_not_cut_off_by_the_idle_in_transaction_timeout(
    postgres_url: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The pool's 3 s idle-in-transaction timeout is for request transactions: a migration's
    transaction (Python runs between its statements, and a CPU-starved process once idled past
    3 s) runs without it, and with every other setting of the pool."""
    from eventstore.migrate import MigrationSet

    fresh = postgres_url, StoreSettings(pg_schema=pg_schema_for(request.node))
    scripts = tmp_path / "probe"
    (scripts / "versions").mkdir(parents=True)
    (scripts / "env.py").write_text(PROBE_ENV)
    (scripts / "versions" / "probe1.py").write_text(PROBE_REVISION)
    engines = create_engines(*fresh)
    try:
        with engines.write.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA IF NOT EXISTS "{fresh[1].pg_schema}"'))
        MigrationSet(scripts, "probe_alembic_version", 4242).upgrade_engines(engines)
        with engines.write.connect() as conn:
            row = conn.execute(sa.text("SELECT idle, lock_wait FROM probe_settings")).one()
            outside = conn.exec_driver_sql("SHOW idle_in_transaction_session_timeout").scalar()
        with engines.write.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{fresh[1].pg_schema}" CASCADE'))
    finally:
        engines.dispose()
    assert tuple(row) == ("0", "30s")
    assert outside == "3s"  # the pool's own connections keep it
