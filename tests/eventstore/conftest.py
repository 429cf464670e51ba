"""Backends for the event store's contract suite: SQLite memory, SQLite file, PostgreSQL.

PostgreSQL tests get a schema of their own per test module (dropped afterwards) and empty
tables per test, so they never collide with other suites on the shared server.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

# pytest puts tests/ first on sys.path, where this folder (no __init__.py) would pass for a
# namespace package named `eventstore` when the project is installed through an editable
# finder; the repository root must win.
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import pytest  # noqa: E402
import sqlalchemy as sa  # noqa: E402

from eventstore import EventStore, StoreSettings  # noqa: E402
from eventstore.backends import create_engines  # noqa: E402
from eventstore.migrate import upgrade_engines  # noqa: E402

BACKENDS = ["sqlite-memory", "sqlite-file", "postgres"]
FILE_BACKENDS = ["sqlite-file", "postgres"]


def pg_schema_for(node: pytest.Item | pytest.Module | object) -> str:
    name = getattr(node, "name", "mod")
    base = re.sub(r"[^a-z0-9_]", "_", str(name).lower())[:30]
    return f"es_{base}_{os.getpid()}_{uuid.uuid4().hex[:6]}"


@pytest.fixture(scope="module")
def pg_module_schema(request: pytest.FixtureRequest) -> Iterator[tuple[str, StoreSettings]]:
    """A migrated schema for this module on the test server (the URL, the settings)."""
    url = request.getfixturevalue("postgres_url")
    schema = pg_schema_for(request.module)
    # A wake-up channel of its own too: NOTIFY is database-wide, so on the shared default
    # channel another worker's appends (in its own schema) would wake this module's followers.
    settings = StoreSettings(pg_schema=schema, pool_size=4, notify_channel=f"ev_{schema}")
    engines = create_engines(url, settings)
    upgrade_engines(engines)
    engines.dispose()
    yield url, settings
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{settings.pg_schema}" CASCADE'))
    engine.dispose()


StoreTarget = tuple[str, StoreSettings]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def target(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> StoreTarget:
    """(url, settings) of an empty store on `backend`; migrated already for PostgreSQL."""
    if backend == "sqlite-memory":
        return "sqlite://", StoreSettings()
    if backend == "sqlite-file":
        return f"sqlite:///{tmp_path / 'events.db'}", StoreSettings()
    url, settings = request.getfixturevalue("pg_module_schema")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                f'TRUNCATE "{settings.pg_schema}".events, "{settings.pg_schema}".streams, '
                f'"{settings.pg_schema}".projections, "{settings.pg_schema}".claims, '
                f'"{settings.pg_schema}".sealed, "{settings.pg_schema}".log_nodes'
            )
        )
        conn.execute(sa.text(f'UPDATE "{settings.pg_schema}".log_size SET size = 0'))
    engine.dispose()
    return url, settings


@pytest.fixture
def make_store(target: StoreTarget) -> Iterator[Callable[..., EventStore]]:
    """Open (more) stores on the test's database; all are closed at the end."""
    opened: list[EventStore] = []
    shared: list[EventStore] = []
    url, settings = target

    def make(**kwargs: object) -> EventStore:
        if url == "sqlite://":
            # a memory database lives in one connection: every "open" is the same store
            if not shared:
                shared.append(EventStore.open(url, settings=settings, create=True))
                opened.append(shared[0])
            if kwargs.get("upcasters") is not None:
                shared[0].upcasters = kwargs["upcasters"]  # type: ignore[assignment]
            return shared[0]
        store = EventStore.open(url, settings=settings, create=True, **kwargs)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store: Callable[..., EventStore]) -> EventStore:
    return make_store()
