"""The tournament scheduler: leader election, idempotent starts, and real `king serve`
processes — killed with SIGKILL in the middle of a round and restarted (SQLite and
PostgreSQL), and two processes on one PostgreSQL database — after which the tournament has
finished, every game passes `king audit`, and no round or game was started twice."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import sqlalchemy as sa

from services.botkit import PushBotServer, strategy_decider
from services.database import upgrade_all
from services.scheduler import LeaderLock
from services.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "test-admin-token-0123456789"
HEADERS = {"authorization": f"Bearer {ADMIN}"}
GUARD = 600.0  # seconds: only a guard against a hung test, never a performance bound


def wait_for(predicate: Any, what: str, guard: float = GUARD) -> Any:
    end = time.monotonic() + guard
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def pg_schema(postgres_url: str) -> Iterator[tuple[str, str]]:
    """A PostgreSQL schema of its own, upgraded, dropped afterwards."""
    schema = f"sched_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    upgrade_all(load_settings(database_url=postgres_url, pg_schema=schema))
    yield postgres_url, schema
    engine = sa.create_engine(postgres_url)
    with engine.begin() as conn:
        conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    engine.dispose()


# --- leader election -------------------------------------------------------------------


def test_exactly_one_leader_lock_per_schema(pg_schema: tuple[str, str]) -> None:
    url, schema = pg_schema
    settings = load_settings(database_url=url, pg_schema=schema)
    a, b = LeaderLock(settings), LeaderLock(settings)
    other = LeaderLock(load_settings(database_url=url, pg_schema=schema + "_other"))
    try:
        assert a.acquire() is True
        assert b.acquire() is False  # held by a
        assert a.acquire() is True  # a keeps it
        assert other.acquire() is True  # another schema, another lock
        a.release()
        assert b.acquire() is True  # free again: b takes it
        assert a.acquire() is False
    finally:
        for lock in (a, b, other):
            lock.release()


def test_sqlite_process_always_leads(tmp_path: Path) -> None:
    lock = LeaderLock(load_settings(data_dir=str(tmp_path)))
    assert lock.acquire() and lock.held
    lock.release()


# --- real processes --------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Serve:
    """A `king serve` subprocess with its log in a file."""

    def __init__(self, tmp: Path, name: str, env: dict[str, str], driver: bool = True) -> None:
        self.port = free_port()
        self.log_path = tmp / f"{name}.log"
        self.log = self.log_path.open("wb")
        args = [sys.executable, "-m", "services.cli", "serve", "--port", str(self.port)]
        if not driver:
            args.append("--no-driver")
        self.proc = subprocess.Popen(
            args, cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=self.log
        )
        self.url = f"http://127.0.0.1:{self.port}"

    def ready(self) -> dict[str, Any]:
        def up() -> dict[str, Any] | None:
            assert self.proc.poll() is None, self.log_path.read_text()[-3000:]
            try:
                r = httpx.get(self.url + "/health/ready", timeout=2)
            except httpx.HTTPError:
                return None
            return dict(r.json()) if r.status_code == 200 else None

        result: dict[str, Any] = wait_for(up, f"king serve on {self.port}", 120)
        return result

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.log.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.log.close()

    def events(self) -> list[dict[str, Any]]:
        out = []
        for line in self.log_path.read_bytes().splitlines():
            if line.startswith(b"{"):
                out.append(orjson.loads(line))
        return out


def serve_env(tmp: Path, db_url: str | None, schema: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KING_")}
    env.update(
        PYTHONPATH=str(ROOT),
        KING_ADMIN_TOKEN=ADMIN,
        KING_DATA_DIR=str(tmp / "var"),
        KING_BOT_URL_ALLOW="loopback",
        KING_RATE_LIMIT_PER_SECOND="0",
        KING_SCHEDULER_SECONDS="0.2",
        KING_POLL_SECONDS="0.2",
        KING_DECISION_SECONDS="10",
        KING_LOG_LEVEL="info",
    )
    if db_url:
        env["KING_DATABASE_URL"] = db_url
    if schema:
        env["KING_PG_SCHEMA"] = schema
    return env


def create_tournament(base: str, bot_url: str, tid: str, rounds: int) -> None:
    with httpx.Client(base_url=base, trust_env=False, timeout=30) as client:
        r = client.post(
            "/api/v1/players", json={"id": "pushy", "bot_url": bot_url}, headers=HEADERS
        )
        assert r.status_code == 201, r.text
        body = {
            "id": tid,
            "format": "swiss",
            "rounds": rounds,
            "rules": {"mode": "short12"},
            "start_at": datetime.now(UTC).isoformat(),
            "players": [{"player": "pushy"}]
            + [{"strategy": s} for s in ("heuristic", "random") * 3]
            + [{"strategy": "heuristic"}],
        }
        r = client.post("/api/v1/tournaments", json=body, headers=HEADERS)
        assert r.status_code == 201, r.text


def tournament(base: str, tid: str) -> dict[str, Any] | None:
    try:
        r = httpx.get(f"{base}/api/v1/tournaments/{tid}", timeout=5, trust_env=False)
    except httpx.HTTPError:
        return None
    return dict(r.json()) if r.status_code == 200 else None


def in_round(base: str, tid: str, number: int) -> bool:
    """A game of round `number` is being played (live, some moves made)."""
    t = tournament(base, tid)
    if t is None or len(t["schedule"]) < number:
        return False
    for table in t["schedule"][number - 1]["tables"]:
        r = httpx.get(f"{base}/api/v1/games/{table['game_id']}", timeout=5, trust_env=False)
        if (
            r.status_code == 200
            and r.json()["game"]["status"] == "live"
            and r.json()["version"] > 5
        ):
            return True
    return False


def finished(base: str, tid: str) -> dict[str, Any] | None:
    t = tournament(base, tid)
    return t if t and t["tournament"]["status"] == "finished" else None


def check_once(env: dict[str, str], tmp: Path, final: dict[str, Any], logs: list[Serve]) -> None:
    """Every game audits; each round was paired once; each game was created and started once."""
    t = final["tournament"]
    games = [tb["game_id"] for rnd in final["schedule"] for tb in rnd["tables"]]
    assert len(final["schedule"]) == t["rounds"] and games
    audit = subprocess.run(
        [sys.executable, "-m", "services.cli", "audit", "--all", "--json"],
        env=env,
        cwd=tmp,
        capture_output=True,
        timeout=300,
    )
    assert audit.returncode == 0, audit.stdout[-3000:] + audit.stderr[-3000:]
    report = orjson.loads(audit.stdout)
    audited = {g["game_id"]: g for g in report["games"]}
    for gid in games:
        assert audited[gid]["ok"] and audited[gid]["finished"], audited[gid]
    # The tournament's own stream: each round paired once, each game recorded once.
    with httpx.Client(base_url=logs[-1].url, trust_env=False, timeout=30) as client:
        text = client.get(f"/api/v1/tournaments/{t['id']}/events?follow=false").text
        events = [orjson.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
        kinds = Counter(e["type"] for e in events)
        assert kinds["round_paired"] == t["rounds"] and kinds["round_closed"] == t["rounds"]
        recorded = Counter(e["data"]["game_id"] for e in events if e["type"] == "game_recorded")
        assert sorted(recorded) == sorted(games) and set(recorded.values()) == {1}
        for gid in games:
            text = client.get(f"/api/v1/games/{gid}/events?follow=false").text
            created = [line for line in text.splitlines() if line == "event: game_created"]
            assert len(created) == 1, gid
    started = Counter(
        e["game_id"] for s in logs for e in s.events() if e.get("event") == "game_started"
    )
    assert all(n == 1 for n in started.values()), started
    assert set(started) <= set(games)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_kill_9_during_a_round_then_restart_finishes_once(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db_url = schema = None
    if backend == "postgres":
        db_url, schema = request.getfixturevalue("pg_schema")
    env = serve_env(tmp_path, db_url, schema)
    bot = PushBotServer(strategy_decider("heuristic", 5)).start()
    servers: list[Serve] = []
    try:
        first = Serve(tmp_path, "first", env)
        servers.append(first)
        first.ready()
        create_tournament(first.url, bot.url, "crash-1", 3)
        wait_for(lambda: in_round(first.url, "crash-1", 2), "round 2 to be in play")
        first.kill()
        second = Serve(tmp_path, "second", env)
        servers.append(second)
        assert second.ready()["scheduler"]["leader"] is True
        final = wait_for(lambda: finished(second.url, "crash-1"), "the tournament to finish")
        check_once(env, tmp_path, final, servers)
        resumed = [e for e in second.events() if e.get("event") == "driver_resumed"]
        assert resumed, "the restarted driver resumed the live games"
    finally:
        for s in servers:
            s.stop()
        bot.stop()


@pytest.mark.slow
def test_two_processes_on_postgres_one_scheduler_leads(
    tmp_path: Path, pg_schema: tuple[str, str]
) -> None:
    db_url, schema = pg_schema
    env = serve_env(tmp_path, db_url, schema)
    bot = PushBotServer(strategy_decider("random", 6)).start()
    # One driver per database (docs/API.md); both run the scheduler: one leads.
    a = Serve(tmp_path, "a", env, driver=True)
    b = Serve(tmp_path, "b", env, driver=False)
    servers = [a, b]
    try:
        a.ready()
        b.ready()

        def leaders() -> list[bool] | None:
            flags = [
                httpx.get(s.url + "/health/ready", timeout=5).json()["scheduler"]["leader"]
                for s in servers
            ]
            return flags if any(flags) else None

        flags = wait_for(leaders, "a scheduler leader", 60)
        assert flags.count(True) == 1
        leader = servers[flags.index(True)]
        create_tournament(b.url, bot.url, "duo-1", 3)
        wait_for(lambda: in_round(a.url, "duo-1", 2), "round 2 to be in play")
        # The leader goes away: the other process takes over and finishes the tournament.
        leader.kill()
        alive = [s for s in servers if s is not leader]
        if leader is a:  # the driver went with it: a new driver process takes the games on
            a2 = Serve(tmp_path, "a2", env, driver=True)
            servers.append(a2)
            alive.append(a2)
            a2.ready()

        def one_leader() -> Serve | None:
            flags = [
                httpx.get(s.url + "/health/ready", timeout=5).json()["scheduler"]["leader"]
                for s in alive
            ]
            assert flags.count(True) <= 1, flags
            return alive[flags.index(True)] if True in flags else None

        other = wait_for(one_leader, "another process to lead", 120)
        final = wait_for(lambda: finished(other.url, "duo-1"), "the tournament to finish")
        # check_once asks the last server of the list over HTTP: put a live one last.
        check_once(env, tmp_path, final, [s for s in servers if s is not other] + [other])
        # Only one process ever created this tournament's games at a time: each
        # `tournament_game_started` line is unique across the processes.
        made = Counter(
            e["game_id"]
            for s in servers
            for e in s.events()
            if e.get("event") == "tournament_game_started"
        )
        assert made and set(made.values()) == {1}
    finally:
        for s in servers:
            s.stop()
        bot.stop()
