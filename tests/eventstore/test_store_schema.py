"""The SQLModel tables match what the Alembic migrations build, and every connection gets
the backend settings the store's guarantees rest on."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import MetaData

from eventstore import EventStore, StoreSettings
from eventstore.tables import STORE_TABLES

OURS = {table.name for table in STORE_TABLES}


def _only_ours(name: str | None, type_: str, _parent: object) -> bool:
    # The database also holds the migrations' version table (and, on a shared SQLModel
    # metadata, other packages' tables): compare the store's own tables only.
    return type_ != "table" or name in OURS


@pytest.mark.parametrize(
    "backend", ["sqlite-file", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
def test_models_match_the_migrated_schema(store: EventStore) -> None:
    metadata = MetaData()
    for table in STORE_TABLES:
        table.to_metadata(metadata)
    with store.engines.write.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "include_name": _only_ours}
        )
        diff = compare_metadata(context, metadata)
    assert diff == []


def _pragma(conn: object, name: str) -> object:
    return conn.exec_driver_sql(f"PRAGMA {name}").scalar()  # type: ignore[attr-defined]


@pytest.mark.parametrize("backend", ["sqlite-file"], indirect=True)
def test_sqlite_connections_are_wal_durable_and_wait_for_locks(
    make_store: Callable[..., EventStore],
) -> None:
    store = make_store()
    busy = StoreSettings().busy_timeout_ms
    for engine in (store.engines.write, store.engines.read):
        with engine.connect() as conn:
            assert _pragma(conn, "journal_mode") == "wal"
            assert _pragma(conn, "synchronous") == 2  # FULL
            assert _pragma(conn, "busy_timeout") == busy
    writer = store.engines.write.raw_connection()  # the append path's own connection
    try:
        cur = writer.cursor()
        cur.execute("PRAGMA synchronous")
        assert cur.fetchone()[0] == 2
    finally:
        writer.close()


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_postgres_connections_carry_timeouts_and_read_committed(store: EventStore) -> None:
    with store.engines.write.connect() as conn:
        shown = {
            name: conn.exec_driver_sql(f"SHOW {name}").scalar()
            for name in (
                "lock_timeout",
                "idle_in_transaction_session_timeout",
                "default_transaction_isolation",
                "transaction_isolation",
            )
        }
    assert shown == {
        "lock_timeout": "30s",
        "idle_in_transaction_session_timeout": "3s",
        "default_transaction_isolation": "read committed",
        "transaction_isolation": "read committed",
    }


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_postgres_verify_reads_in_one_repeatable_read_snapshot(store: EventStore) -> None:
    with store._raw(write=False, snapshot=True) as cur:
        cur.execute("SHOW transaction_isolation")
        isolation = cur.fetchone()[0]
        cur.execute("SHOW transaction_read_only")
        read_only = cur.fetchone()[0]
    assert (isolation, read_only) == ("repeatable read", "on")
    with store._raw(write=True) as cur:
        cur.execute("SHOW transaction_isolation")
        assert cur.fetchone()[0] == "read committed"
