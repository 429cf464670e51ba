"""A rolling upgrade with no downtime, as docs/OPERATIONS.md ("Upgrades and migrations") tells
it: `king db upgrade` first, then each `king serve` restarted in turn, the next only once the
new one is ready, while push bots and house bots keep playing and clients keep calling.

Two full processes share one PostgreSQL schema. A client thread plays the load balancer: it
sends its requests (reads, and a new game every few calls) to the processes in service only,
and a process leaves the rotation before it gets SIGTERM (as a pod leaves the endpoints in
its preStop delay). Every request must be answered; every game, those made before and during
the restarts, must finish and pass `king audit`; each stopping process hands its games over
(`ownership_released`) and stops cleanly; no process logs an error or a traceback.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from services.botkit import PushBotServer, strategy_decider
from tests.processes import HEADERS, Serve, audit_all, serve_env, wait_for
from tests.service.test_failover import log_problems

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

BOTS = ["roll-bot-0", "roll-bot-1"]
FIRST_GAMES = 6
# Each request on a connection of its own, as a balancer's would be, without the cost of a
# client per request (`httpx.request` made one, loading the certificate store each time).
FRESH = httpx.Client(trust_env=False, limits=httpx.Limits(max_keepalive_connections=0))


class Balancer:
    """Round-robin over the processes in service; records every request that got no answer
    (a connection error or a 5xx) and the games it made."""

    def __init__(self) -> None:
        self.in_service: list[Serve] = []
        self.lock = threading.Lock()
        self.failures: list[str] = []
        self.answered = 0
        self.games: list[str] = []
        self.stopped = threading.Event()
        self.turn = 0

    def add(self, server: Serve) -> None:
        with self.lock:
            self.in_service.append(server)

    def remove(self, server: Serve) -> None:
        with self.lock:
            self.in_service.remove(server)

    def pick(self) -> Serve:
        with self.lock:
            self.turn += 1
            return self.in_service[self.turn % len(self.in_service)]

    def call(self, method: str, path: str, **kwargs: object) -> httpx.Response | None:
        server = self.pick()
        try:
            r = FRESH.request(method, server.url + path, timeout=30, **kwargs)  # type: ignore[arg-type]
        except httpx.HTTPError as exc:
            self.failures.append(f"{server.name} {method} {path}: {type(exc).__name__}")
            return None
        if r.status_code >= 500:
            self.failures.append(f"{server.name} {method} {path}: {r.status_code} {r.text}")
            return None
        self.answered += 1
        return r

    def new_game(self, n: int) -> None:
        seats = [BOTS[0], BOTS[1], "house:random", "house:heuristic"]
        body = {"id": f"roll-{n:03d}", "seats": seats, "rules": {"mode": "short12"}}
        r = self.call("POST", "/api/v1/games", json=body, headers=HEADERS)
        if r is not None:
            assert r.status_code == 201, r.text
            self.games.append(r.json()["game"]["id"])

    def run(self) -> None:
        """Clients at work until stopped: reads every 50 ms, a new game every 20 calls."""
        n = FIRST_GAMES
        calls = 0
        while not self.stopped.is_set():
            calls += 1
            if calls % 20 == 0:
                self.new_game(n)
                n += 1
            else:
                path = ("/api/v1/games?limit=20", "/health/live", "/api/v1/leaderboard")[calls % 3]
                r = self.call("GET", path)
                if r is not None:
                    assert r.status_code == 200, (path, r.status_code, r.text)
            time.sleep(0.05)


def live_games(url: str, schema: str) -> set[str]:
    engine = sa.create_engine(url, connect_args={"options": f"-csearch_path={schema}"})
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text("select id from king_games where status = 'live'")).all()
    finally:
        engine.dispose()
    return {r[0] for r in rows}


def stop_gracefully(server: Serve) -> int:
    """SIGTERM, as Kubernetes and Docker stop a container; the exit status."""
    server.proc.send_signal(signal.SIGTERM)
    status = server.proc.wait(timeout=60)
    server.log.close()
    return status


@pytest.mark.timeout(1200)
def test_a_rolling_restart_of_two_servers_drops_no_request_and_every_game_finishes(
    tmp_path: Path, pg_schemas: Callable[[], tuple[str, str]]
) -> None:
    url, schema = pg_schemas()
    env = serve_env(tmp_path, url, schema)
    env["KING_LEASE_SECONDS"] = "3"
    env["KING_MIGRATE_AT_START"] = "false"  # as the deployment files: the one-shot upgrades
    bots = [PushBotServer(strategy_decider("random", i)).start() for i in range(len(BOTS))]
    balancer = Balancer()
    servers: list[Serve] = []
    client = threading.Thread(target=balancer.run, daemon=True)
    try:
        servers += [Serve(tmp_path, "a", env), Serve(tmp_path, "b", env)]
        for server in servers:
            server.ready()
            balancer.add(server)
        with httpx.Client(base_url=servers[0].url, trust_env=False, timeout=30) as c:
            for name, bot in zip(BOTS, bots, strict=True):
                body = {"id": name, "bot_url": bot.url}
                assert c.post("/api/v1/players", json=body, headers=HEADERS).status_code == 201
        for n in range(FIRST_GAMES):
            balancer.new_game(n)
        assert len(balancer.games) == FIRST_GAMES
        client.start()
        time.sleep(3)  # the games under way on both processes

        # 1. The migration step: a no-op on a schema at head, which it says.
        upgrade = subprocess.run(
            [sys.executable, "-m", "services.cli", "db", "upgrade"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert upgrade.returncode == 0, upgrade.stderr
        assert "event store: already at head" in upgrade.stdout, upgrade.stdout
        assert "service tables: already at head" in upgrade.stdout, upgrade.stdout

        # 2. Each server in turn: out of the rotation, SIGTERM, a new one, ready, in the rotation.
        for old_name in ("a", "b"):
            old = next(s for s in servers if s.name == old_name and s.proc.poll() is None)
            balancer.remove(old)
            time.sleep(0.5)  # requests already sent to it finish (the preStop delay)
            playing = len(live_games(url, schema))
            assert playing, "games were under way when the server stopped"
            # uvicorn shuts down, then raises the signal it caught again: killed by SIGTERM,
            # after a clean stop (its last lines say so).
            status = stop_gracefully(old)
            assert status in (0, -signal.SIGTERM), old.log_path.read_text()[-3000:]
            said = [e.get("event") for e in old.events()]
            assert "ownership_released" in said, f"{old.name} did not hand its games over"
            assert said.index("ownership_released") < said.index("service_stopped")
            new = Serve(tmp_path, f"{old_name}-2", env)
            servers.append(new)
            new.ready()
            balancer.add(new)
            time.sleep(3)  # play on with both before the next one stops

        made_during = len(balancer.games) - FIRST_GAMES
        assert made_during > 0, "games were created while the servers restarted"
        balancer.stopped.set()
        client.join(timeout=60)
        wait_for(lambda: not (live_games(url, schema) & set(balancer.games)), "every game over")
        assert balancer.failures == [], balancer.failures[:10]
        assert balancer.answered > 50
        audit_all(env, tmp_path, balancer.games)
        problems = [p for s in servers for p in log_problems(s)]
        assert not problems, problems[:20]
        print(
            f"rolling restart: {balancer.answered} requests answered, none failed; "
            f"{len(balancer.games)} games ({made_during} made during the restarts) audited"
        )
    finally:
        balancer.stopped.set()
        for server in servers:
            server.stop()
        for bot in bots:
            bot.stop()
