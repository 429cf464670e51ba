"""Shared fixtures: paths to the shared contracts, the PostgreSQL and the Redis server."""

from __future__ import annotations

import gc
import os
import sqlite3
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import tournament.native  # noqa: F401  (the rules core's build, chosen before domain loads)
from tests.pg_schemas import PgTemplate, drop_pg_schemas

# No timing thresholds in the tests: Hypothesis's defaults fail an example that takes over
# 200 ms (deadline) or inputs that are slow to generate (too_slow), which says more about the
# machine's load than about the code: on a loaded 2-core machine the racing property test
# failed its too_slow check on four plain lists of floats. Every other health check stays.
settings.register_profile("king", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("king")

# This kind of machine (and so CI) sets PYTHONDONTWRITEBYTECODE, which also stops pytest from
# caching the test modules it rewrites for its assertions: each xdist worker then rewrote all
# of them (about 150) at every run, 6 of a worker's 14 s of collection here. The tests' caches
# are written (into __pycache__, which git ignores) whatever the environment says.
sys.dont_write_bytecode = False


def pytest_collection_finish(session: pytest.Session) -> None:
    """Every test module and what it imports is loaded (in each xdist worker, once): from here
    the cycle collector leaves them be (`gc.freeze`), and collects the young generation every
    10,000 allocations instead of 700. With the defaults its passes took 2.4 s of 30 s of CPU
    in three of the service tests' files (measured with `gc.callbacks`), 0.9 s after."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(10_000, middle, old)


DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` for the fast suites (pyproject's default `-m 'not slow'`): one worker more
    than the cores. Their tests spend part of their time waiting (a database, a started
    process, a bot's move), and a third worker on two cores took the run from 4:54 to 4:32.
    Any other selection (the slow suites, with deadlines and browsers that want a core each)
    keeps xdist's one per core; PYTEST_XDIST_AUTO_NUM_WORKERS still overrides both."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or config.option.markexpr != "not slow":
        return None  # xdist's own count
    return len(os.sched_getaffinity(0)) + 1


# The slow suites' longest modules, longest first (their slowest tests took 40-120 s each on
# a 2-core machine: Schemathesis against a live service, three browsers playing a game,
# pairing properties, a rolling restart, the scheduler's kill -9 runs). xdist hands tests out
# in collection order, and these came late (tests/web last of all): one of them starting near
# the end kept a worker busy a minute or two while the other sat idle. Run first, and handed
# out one by one (.ci/run's --maxschedchunk 1), they are the longest jobs scheduled first.
LONGEST_FIRST = (
    "tests/service/test_openapi_contract.py",
    "tests/web/test_web_lobby_browser.py",
    "tests/tournament/test_pairing_round_robin.py",
    "tests/tournament/test_pairing_swiss.py",
    "tests/service/test_rolling_upgrade.py",
    "tests/tournament/test_scheduler.py",
    "tests/service/test_leak.py",
    "tests/service/test_live_bots.py",
    "tests/web/test_web_browser.py",
    "tests/strategies/test_strategy_knowledge.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests of the LONGEST_FIRST modules before all others (a stable sort: the rest
    keep their order, and the fast suites theirs)."""
    rank = {module: i for i, module in enumerate(LONGEST_FIRST)}
    last = len(rank)

    def key(item: pytest.Item) -> int:
        if item.get_closest_marker("slow") is None:
            return last
        return rank.get(item.nodeid.split("::", 1)[0], last)

    items.sort(key=key)


# Modules of slow tests only whose collection is itself costly: Schemathesis builds the cases
# of test_fuzz_many.py while collecting (a few seconds in every process, of a worker's 8 s).
SLOW_ONLY = ("tests/service/test_fuzz_many.py",)
# The marks every test of a SLOW_ONLY module carries, and no other that -m could name.
SLOW_ONLY_MARKS = frozenset({"slow", "compute"})


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave a SLOW_ONLY module uncollected when the run's `-m` cannot select its tests (the
    README's command, `not slow`; CI's `slow and not compute` steps)."""
    if not str(collection_path).endswith(SLOW_ONLY):
        return None
    markexpr = config.option.markexpr
    if not markexpr:
        return None
    try:
        from _pytest.mark.expression import Expression
    except ImportError:  # pytest moved it: collect, as without this hook
        return None
    selects = Expression.compile(markexpr).evaluate(lambda name, **_: name in SLOW_ONLY_MARKS)
    return True if not selects else None


def _postgres_reachable(url: str) -> str | None:
    """Return None when a connection works, else the reason it does not."""
    try:
        import sqlalchemy as sa

        engine = sa.create_engine(url, connect_args={"connect_timeout": 3})
        with engine.connect() as conn:
            conn.execute(sa.text("select 1"))
        engine.dispose()
    except Exception as exc:  # any failure to connect is a reason to skip (or fail in CI)
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return None


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The PostgreSQL URL for the suites that need a real server.

    On a developer's machine without a server those tests skip with the reason; under CI=true
    an unreachable server fails them, so a green CI always means PostgreSQL was tested.
    """
    url = os.environ.get("KING_TEST_POSTGRES_URL", DEFAULT_PG_URL)
    reason = _postgres_reachable(url)
    if reason is not None:
        message = f"PostgreSQL not reachable at {url}: {reason}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " (CI=true: the PostgreSQL suites must run)")
        pytest.skip(message)
    yield url


def _redis_reachable(url: str) -> str | None:
    """Return None when the server answers a PING, else the reason it does not."""
    try:
        import redis

        client = redis.Redis.from_url(url, socket_timeout=3, socket_connect_timeout=3)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:  # any failure to connect is a reason to skip (or fail in CI)
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return None


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The Redis URL for the tests of the shared rate limits (mark them `redis`).

    As with PostgreSQL: without a server they skip with the reason on a developer's machine and
    fail under CI=true. Tests share the server, so each uses a key prefix of its own.
    """
    url = os.environ.get("KING_TEST_REDIS_URL", DEFAULT_REDIS_URL)
    reason = _redis_reachable(url)
    if reason is not None:
        message = f"Redis not reachable at {url}: {reason}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " (CI=true: the Redis tests must run)")
        pytest.skip(message)
    yield url


@pytest.fixture(scope="session")
def pg_template(postgres_url: str) -> Iterator[PgTemplate]:
    """Makes migrated PostgreSQL schemas fast (one template per test process)."""
    template = PgTemplate(postgres_url)
    yield template
    template.close()


@pytest.fixture
def pg_schemas(
    postgres_url: str, pg_template: PgTemplate
) -> Iterator[Callable[[], tuple[str, str]]]:
    """Make PostgreSQL schemas of their own (at the heads); all are dropped afterwards."""
    made: list[str] = []

    def make() -> tuple[str, str]:
        schema = f"proc_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        made.append(schema)
        pg_template.make(schema)
        return postgres_url, schema

    yield make
    drop_pg_schemas(postgres_url, made)


@pytest.fixture
def pg_schema(pg_schemas: Callable[[], tuple[str, str]]) -> tuple[str, str]:
    """A PostgreSQL schema of its own, upgraded, dropped afterwards: (url, schema)."""
    return pg_schemas()


@pytest.fixture(scope="session", autouse=True)
def cheap_password_hashes() -> Iterator[None]:
    """argon2id at its lowest cost in the tests' own processes: about 1 ms a hash, where the
    service's default cost (64 MiB, 3 passes, 4 lanes) takes 100-200 ms here, and the fast
    suites sign up and log in hundreds of times. Only the cost changes: the hashes are still
    argon2id, checked by the same code. The service processes the tests start keep the
    default, and test_accounts.py checks that default in a process of its own."""
    from argon2 import PasswordHasher

    from services.accounts import passwords

    default = passwords._hasher
    passwords._hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    passwords._dummy.cache_clear()
    yield
    passwords._hasher = default
    passwords._dummy.cache_clear()


@pytest.fixture(scope="session")
def seed_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path], None]:
    """Put an empty database at both migration sets' heads into a data folder (as
    `<folder>/king.db`, where the settings look by default) unless one is there. The template is
    migrated once per test process: migrating each test's new file cost about 50 ms of Alembic,
    a copy costs about one. Tests of migrating a new database do not use it."""
    from services.database import upgrade_all
    from services.settings import load_settings

    template = tmp_path_factory.mktemp("migrated")
    upgrade_all(load_settings(data_dir=str(template), log_level="warning"))

    def seed(folder: Path) -> None:
        target = folder / "king.db"
        if target.exists():
            return
        # SQLite's backup API rather than a file copy: it also takes what a log still holds.
        src, dst = sqlite3.connect(template / "king.db"), sqlite3.connect(target)
        try:
            src.backup(dst)
        finally:
            src.close()
            dst.close()

    return seed
