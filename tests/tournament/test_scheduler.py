"""The tournament scheduler: leader election, idempotent starts, and real `king serve`
processes — killed with SIGKILL in the middle of a round and restarted (SQLite and
PostgreSQL), and two processes on one PostgreSQL database — after which the tournament has
finished, every game passes `king audit`, and no round or game was started twice."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from services.botkit import PushBotServer, strategy_decider
from services.scheduler import LeaderLock
from services.settings import load_settings
from tests.processes import (
    HEADERS,
    HTTP,
    Serve,
    check_once,
    finished,
    in_round,
    serve_env,
    wait_for,
)

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
        # The killed process's leases lapsed: the restarted one took its live games over.
        resumed = [e for e in second.events() if e.get("event") == "game_taken_over"]
        assert resumed, "the restarted process took the live games over"
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
    # One drives and one serves the API only; both run the scheduler: one leads.
    a = Serve(tmp_path, "a", env, driver=True)
    b = Serve(tmp_path, "b", env, driver=False)
    servers = [a, b]
    try:
        a.ready()
        b.ready()

        def leaders() -> list[bool] | None:
            flags = [
                HTTP.get(s.url + "/health/ready", timeout=5).json()["scheduler"]["leader"]
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
                HTTP.get(s.url + "/health/ready", timeout=5).json()["scheduler"]["leader"]
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


def test_a_stop_during_a_tick_lets_it_finish_and_logs_no_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A server stopped while the scheduler's tick is reading: the tick finishes, and nothing
    is logged as a job that raised (APScheduler's shutdown cancels the jobs it runs, so it
    comes after the firings under way)."""
    import asyncio
    import logging
    import threading

    from services.scheduler import TournamentScheduler

    reading, release = threading.Event(), threading.Event()
    done: list[bool] = []

    class SlowDesk:
        class factory:  # the desk's loop binding, as the scheduler calls it
            @staticmethod
            def bind(loop: object) -> None:
                pass

        def service_ids(self) -> list[str]:
            reading.set()
            release.wait(10)
            done.append(True)
            return []

    settings = load_settings(data_dir=str(tmp_path), scheduler_seconds=0.05)
    scheduler = TournamentScheduler(settings, SlowDesk(), None)  # type: ignore[arg-type]

    async def run() -> None:
        await scheduler.start()
        await asyncio.to_thread(reading.wait, 10)  # a tick is in its read now
        stopping = asyncio.ensure_future(scheduler.stop())
        await asyncio.sleep(0.2)
        assert not stopping.done(), "stop waits for the tick under way"
        release.set()
        await asyncio.wait_for(stopping, 10)

    with caplog.at_level(logging.INFO, logger="apscheduler"):
        asyncio.run(run())
    assert done == [True]
    raised = [r for r in caplog.records if "raised an exception" in r.getMessage()]
    assert not raised, [r.getMessage() for r in raised]
