"""Rate limits shared through Redis (KING_RATE_LIMIT_STORE): several apps or `king serve`
processes on one Redis limit a client as one bucket; the memory store keeps each process's
apart; Redis unreachable, at start or later, means this process's memory buckets and a
warning, never a failed request; and the Lua bucket computes what the memory one does."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from hypothesis import given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient
from structlog.testing import capture_logs

from services import ratelimit
from services.app import create_app
from services.errors import UserError
from services.ratelimit import redis as shared_store
from services.ratelimit.buckets import Limits
from services.ratelimit.memory import MemoryBuckets
from services.ratelimit.redis import RedisBuckets
from services.settings import load_settings
from tests import processes
from tests.service.conftest import SettingsFactory
from tests.service.helpers import ADMIN_HEADERS, HTTP, wait_for

LIMITED = "/api/v1/games"  # any limited path will do: the bucket is the caller's, not the path's
# Where a test needs Redis to answer, a slow answer on a busy machine must not count as an
# outage: a guard against a hang, never a performance bound.
PATIENT = 30.0


def _unique_prefix() -> str:
    return f"test:ratelimit:{uuid.uuid4().hex[:12]}:"


def _delete_prefix(url: str, prefix: str) -> None:
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=prefix + "*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this test's own on the shared Redis; its keys are deleted afterwards."""
    value = _unique_prefix()
    yield value
    _delete_prefix(redis_url, value)


def problem(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = r.json()
    assert body["status"] == status and body["title"] and "Traceback" not in r.text
    return body


def _left(response: httpx.Response) -> str:
    return response.headers["ratelimit"].split(";")[1]


def _two_apps(make_settings: SettingsFactory, tmp_path: Path, **limits: object) -> list[Any]:
    """Two apps on databases of their own (as two processes would be), the same limits."""
    return [
        create_app(make_settings(data_dir=str(tmp_path / name), **limits)) for name in ("a", "b")
    ]


@pytest.mark.redis
def test_two_apps_on_one_redis_limit_a_client_as_one_bucket(
    make_settings: SettingsFactory, tmp_path: Path, redis_url: str, prefix: str
) -> None:
    limits = {
        "rate_limit_per_second": 0.01,
        "rate_limit_burst": 5,
        "rate_limit_store": redis_url,
        "rate_limit_prefix": prefix,
        "rate_limit_store_timeout": PATIENT,
    }
    app_a, app_b = _two_apps(make_settings, tmp_path, **limits)
    with TestClient(app_a) as a, TestClient(app_b) as b:
        answers = [(a, b)[i % 2].get(LIMITED) for i in range(5)]
        assert [r.status_code for r in answers] == [200] * 5
        assert [_left(r) for r in answers] == ["r=4", "r=3", "r=2", "r=1", "r=0"]
        r = b.get(LIMITED)  # the 6th, to the other app: the same bucket, spent
        body = problem(r, 429)
        assert int(r.headers["retry-after"]) >= 1 and "rate limit" in body["detail"]
        assert r.headers["ratelimit-policy"] == '"burst";q=5;w=500'
        problem(a.get(LIMITED), 429)
        # The admin token is known to both: its bucket is one, shared too, and not the address's.
        admin = [(a, b)[i % 2].get(LIMITED, headers=ADMIN_HEADERS) for i in range(6)]
        assert [r.status_code for r in admin] == [200] * 5 + [429]
        for client in (a, b):
            ready = client.get("/health/ready").json()
            assert ready["warnings"] == [], ready
    with redis.Redis.from_url(redis_url) as check:
        keys = check.keys(prefix + "*")
    assert sorted(k.decode().removeprefix(prefix).split(":")[0] for k in keys) == ["ip", "t"]


def test_the_memory_store_keeps_each_process_apart(
    make_settings: SettingsFactory, tmp_path: Path
) -> None:
    limits = {"rate_limit_per_second": 0.01, "rate_limit_burst": 5}
    app_a, app_b = _two_apps(make_settings, tmp_path, **limits)
    with TestClient(app_a) as a, TestClient(app_b) as b:
        assert [a.get(LIMITED).status_code for _ in range(5)] == [200] * 5
        problem(a.get(LIMITED), 429)
        r = b.get(LIMITED)
        assert r.status_code == 200 and _left(r) == "r=4"  # a bucket of its own


@pytest.mark.redis
def test_king_serve_processes_on_one_redis_share_a_bucket(
    tmp_path: Path, redis_url: str, prefix: str
) -> None:
    servers = []
    try:
        for name in ("one", "two"):
            work = tmp_path / name
            work.mkdir()
            env = processes.serve_env(work, None, None)
            env.update(
                KING_RATE_LIMIT_PER_SECOND="0.01",
                KING_RATE_LIMIT_BURST="5",
                KING_RATE_LIMIT_STORE=redis_url,
                KING_RATE_LIMIT_PREFIX=prefix,
                KING_RATE_LIMIT_STORE_TIMEOUT=str(PATIENT),
            )
            servers.append(processes.Serve(work, name, env, driver=False, scheduler=False))
        for server in servers:
            server.ready()
        answers = [HTTP.get(servers[i % 2].url + LIMITED, timeout=10) for i in range(6)]
        assert [r.status_code for r in answers] == [200] * 5 + [429]
        assert int(answers[-1].headers["retry-after"]) >= 1
        assert answers[-1].headers["content-type"].startswith("application/problem+json")
    finally:
        for server in servers:
            server.stop()
    assert all(
        any(e.get("event") == "rate_limit_store_shared" for e in s.events()) for s in servers
    )


def _closed_port_url(secret: str = "") -> str:
    auth = f":{secret}@" if secret else ""
    return f"redis://{auth}127.0.0.1:{processes.free_port()}/0"


def test_an_unreachable_redis_at_start_falls_back_to_memory_buckets(
    make_settings: SettingsFactory,
) -> None:
    """The service starts, limits per process, says so once in the log and in every readiness
    answer, and never answers 500; the URL's password appears nowhere."""
    url = _closed_port_url(secret="hunter2-password")
    settings = make_settings(rate_limit_per_second=0.01, rate_limit_burst=3, rate_limit_store=url)
    with capture_logs() as logged, TestClient(create_app(settings)) as client:
        answers = [client.get(LIMITED) for _ in range(4)]
        assert [r.status_code for r in answers] == [200, 200, 200, 429]
        assert [_left(r) for r in answers] == ["r=2", "r=1", "r=0", "r=0"]
        ready = client.get("/health/ready")
        assert ready.status_code == 200, ready.text  # a warning, not a reason to be unready
        (warning,) = ready.json()["warnings"]
        assert "rate limits" in warning and "limits on its own" in warning
        assert "127.0.0.1" in warning and "hunter2" not in ready.text
    down = [e for e in logged if e["event"] == "rate_limit_store_unreachable"]
    assert len(down) == 1, logged
    assert "hunter2" not in repr(logged)


def test_a_redis_that_never_answers_times_out_into_memory_buckets(
    make_settings: SettingsFactory,
) -> None:
    """A server that takes the connection but never replies (a hung Redis, a black-holed
    route) costs a request the client's timeout, not a hang or a 500."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)  # connections wait in the backlog: accepted, never answered
        url = f"redis://127.0.0.1:{silent.getsockname()[1]}/0"
        settings = make_settings(
            rate_limit_per_second=0.01,
            rate_limit_burst=2,
            rate_limit_store=url,
            rate_limit_store_timeout=0.2,
        )
        with TestClient(create_app(settings)) as client:
            assert [client.get(LIMITED).status_code for _ in range(3)] == [200, 200, 429]
            (warning,) = client.get("/health/ready").json()["warnings"]
            assert "TimeoutError" in warning


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[tuple[str, Callable[[], None], Callable[[], None]]]:
    """A Redis server of this test's own, to stop and start again: (url, start, stop)."""
    binary = shutil.which("redis-server")
    if binary is None:
        message = "redis-server is not installed: cannot stage a Redis outage"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " (CI=true: the Redis tests must run)")
        pytest.skip(message)
    port = processes.free_port()
    url = f"redis://127.0.0.1:{port}/0"
    running: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--appendonly", "no", "--dir", str(tmp_path)]
        running.append(subprocess.Popen(args, stdout=subprocess.DEVNULL, cwd=tmp_path))

        def answers() -> bool:
            try:
                return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
            except redis.RedisError:
                return False

        wait_for(answers, f"redis-server on {port}")

    def stop() -> None:
        server = running.pop()
        server.terminate()
        server.wait(timeout=30)

    start()
    yield url, start, stop
    while running:
        stop()


@pytest.mark.redis
def test_a_redis_outage_falls_back_to_memory_buckets_and_recovers(
    make_settings: SettingsFactory,
    private_redis: tuple[str, Callable[[], None], Callable[[], None]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, start, stop = private_redis
    monkeypatch.setattr(shared_store, "RETRY_SECONDS", 0.1)
    settings = make_settings(
        rate_limit_per_second=0.01,
        rate_limit_burst=3,
        rate_limit_store=url,
        rate_limit_store_timeout=PATIENT,  # a stopped server refuses at once all the same
    )
    with capture_logs() as logged, TestClient(create_app(settings)) as client:
        r = client.get(LIMITED)
        assert r.status_code == 200 and _left(r) == "r=2"  # drawn in Redis
        assert redis.Redis.from_url(url).hget("king:ratelimit:ip:testclient", "tokens") == b"2"
        stop()
        # Redis gone: the memory bucket (full: it had not been used) limits this process.
        answers = [client.get(LIMITED) for _ in range(4)]
        assert [r.status_code for r in answers] == [200, 200, 200, 429]
        (warning,) = client.get("/health/ready").json()["warnings"]
        assert url in warning
        # Retried every RETRY_SECONDS: a 429 (memory) or a 200 (Redis back), never a 500.
        for _ in range(3):
            assert client.get(LIMITED).status_code == 429
        start()  # empty: no persistence, so the bucket starts full again

        def shared_again() -> bool:
            r = client.get(LIMITED)
            assert r.status_code in (200, 429), r.text
            return r.status_code == 200

        wait_for(shared_again, "the rate limits to use Redis again")
        assert client.get("/health/ready").json()["warnings"] == []
        assert redis.Redis.from_url(url).hget("king:ratelimit:ip:testclient", "tokens") == b"2"
    events = [e["event"] for e in logged if e["event"].startswith("rate_limit_store_")]
    assert events == [
        "rate_limit_store_shared",
        "rate_limit_store_unreachable",
        "rate_limit_store_recovered",
    ]


@pytest.mark.redis
def test_the_redis_bucket_is_atomic_across_clients(redis_url: str, prefix: str) -> None:
    """Two clients (processes) drawing at once on one bucket never both take its last token."""
    limits = Limits(rate=1e-6, burst=10)

    async def race() -> list[float]:
        stores = [RedisBuckets(limits, redis_url, prefix, PATIENT) for _ in range(2)]
        try:
            drawn = await asyncio.gather(*(stores[i % 2].draw("one") for i in range(60)))
        finally:
            for store in stores:
                await store.close()
        return [wait for wait, _left in drawn]

    waits = asyncio.run(race())
    assert sum(1 for wait in waits if wait == 0) == 10


@pytest.mark.redis
@settings(max_examples=60, deadline=None)
@given(
    rate=st.floats(min_value=0.01, max_value=100, allow_nan=False),
    burst=st.integers(min_value=1, max_value=8),
    steps=st.lists(
        st.tuples(st.sampled_from(["t:a", "t:b", "ip:c"]), st.floats(min_value=0, max_value=5)),
        min_size=1,
        max_size=40,
    ),
)
def test_redis_and_memory_buckets_answer_alike(
    redis_url: str, rate: float, burst: int, steps: list[tuple[str, float]]
) -> None:
    """For the same request times the Lua bucket and the memory bucket give the same waits and
    the same tokens left (so the same allow/deny sequence), to the last bit."""
    limits = Limits(rate=rate, burst=burst)
    prefix = _unique_prefix()

    async def both() -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
        shared, memory = RedisBuckets(limits, redis_url, prefix, PATIENT), MemoryBuckets(limits)
        now = 1_000.0
        from_redis, from_memory = [], []
        try:
            for key, gap in steps:
                now += gap
                from_redis.append(await shared.draw(key, now))
                from_memory.append(memory.draw_at(key, now))
        finally:
            await shared.close()
        return from_redis, from_memory

    try:
        from_redis, from_memory = asyncio.run(both())
    finally:
        _delete_prefix(redis_url, prefix)
    assert from_redis == from_memory
    assert [w == 0 for w, _ in from_redis] == [w == 0 for w, _ in from_memory]


def test_a_bad_store_setting_stops_the_start_without_echoing_it(tmp_path: Path) -> None:
    with pytest.raises(UserError) as refused:
        load_settings(data_dir=str(tmp_path), rate_limit_store="http://user:pw@cache:6379")
    assert "KING_RATE_LIMIT_STORE" in str(refused.value) and "pw" not in str(refused.value)
    assert isinstance(ratelimit.make_buckets(load_settings(data_dir=str(tmp_path))), MemoryBuckets)


def test_the_store_is_named_without_its_credentials() -> None:
    describe = shared_store.describe_url
    assert describe("redis://king:s3cret@cache.internal:6380/2") == "redis://cache.internal:6380/2"
    assert describe("rediss://:s3cret@cache/0") == "rediss://cache/0"
    assert describe("unix://:s3cret@/run/redis.sock?db=1") == "unix:///run/redis.sock"


@pytest.mark.redis
def test_log_in_attempts_are_limited_across_processes_in_redis(
    make_settings: SettingsFactory, tmp_path: Path, redis_url: str, prefix: str
) -> None:
    """Two apps sharing Redis share a name's log-in bucket (under `<prefix>login:`), even with
    the general per-request limit switched off."""
    limits = {
        "rate_limit_per_second": 0,
        "rate_limit_store": redis_url,
        "rate_limit_prefix": prefix,
        "rate_limit_store_timeout": PATIENT,
        "login_per_minute": 1,
        "login_burst": 3,
    }
    app_a, app_b = _two_apps(make_settings, tmp_path, **limits)
    wrong = {"name": "ada", "password": "not the password"}
    with TestClient(app_a) as a, TestClient(app_b) as b:
        codes = [(a, b)[i % 2].post("/api/v1/login", json=wrong).status_code for i in range(4)]
        assert codes == [401, 401, 401, 429]
    keys = redis.Redis.from_url(redis_url).keys(prefix + "login:*")
    assert {k.decode().removeprefix(prefix) for k in keys} >= {
        "login:name:ada",
        "login:ip:testclient",
    }
