"""Fixtures of the service suites: settings on SQLite or PostgreSQL, apps, live servers, bots.

PostgreSQL runs get a schema of their own (dropped afterwards), so they never collide with
other suites on the shared server.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import pytest  # noqa: E402
from litestar.testing import TestClient  # noqa: E402

from services.app import create_app  # noqa: E402
from services.settings import Settings, load_settings  # noqa: E402
from tests.pg_schemas import drop_pg_schemas  # noqa: E402
from tests.service.helpers import ADMIN, LiveServer  # noqa: E402

# fuzz_target.py holds the Schemathesis suites' checks: their asserts explain themselves too.
pytest.register_assert_rewrite("tests.service.fuzz_target")

SettingsFactory = Callable[..., Settings]


def _base(tmp_path: Path, **overrides: object) -> dict[str, object]:
    values: dict[str, object] = {
        "data_dir": str(tmp_path),
        "admin_token": ADMIN,
        "decision_seconds": 5.0,
        "bot_url_allow": "loopback",
        "rate_limit_per_second": 0,
        "poll_seconds": 0.2,
        "stream_keepalive_seconds": 1.0,
        "sqlite_synchronous": "NORMAL",
        "log_level": "warning",
    }
    values.update(overrides)
    return values


@pytest.fixture
def make_settings(tmp_path: Path, seed_sqlite: Callable[[Path], None]) -> SettingsFactory:
    """SQLite-file settings for one test (overrides as keywords), on a database already at the
    migrations' heads unless the overrides name a database or folder of their own."""

    def make(**overrides: object) -> Settings:
        if not {"database_url", "data_dir"} & overrides.keys():
            seed_sqlite(tmp_path)
        return load_settings(**_base(tmp_path, **overrides))

    return make


@pytest.fixture(params=["sqlite", "postgres"])
def backend_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SettingsFactory]:
    """Settings on each backend: SQLite file, PostgreSQL (own schema, upgraded first)."""
    if request.param == "sqlite":
        yield lambda **kw: load_settings(**_base(tmp_path, **kw))
        return
    url = request.getfixturevalue("postgres_url")
    schema = f"svc_{os.getpid()}_{uuid.uuid4().hex[:8]}"

    def make(**kw: object) -> Settings:
        return load_settings(**_base(tmp_path, database_url=url, pg_schema=schema, **kw))

    request.getfixturevalue("pg_template").make(schema)  # at the heads, as upgrade_all leaves it
    yield make
    drop_pg_schemas(url, [schema])


@pytest.fixture
def client(make_settings: SettingsFactory) -> Iterator[TestClient]:  # type: ignore[type-arg]
    with TestClient(create_app(make_settings())) as c:
        yield c


@pytest.fixture
def live_server() -> Iterator[Callable[[Settings], LiveServer]]:
    """Start the real app under uvicorn on loopback: `live_server(settings)`."""
    started: list[LiveServer] = []

    def start(settings: Settings) -> LiveServer:
        server = LiveServer(create_app(settings)).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
