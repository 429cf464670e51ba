"""Game ownership across real `king serve` processes on PostgreSQL: failover under SIGKILL, a
paused owner, and what must never happen twice.

Three full processes (driver and scheduler candidates) and one API-only process share one
schema. 48 tables mix push bots, pull bots (through the API-only process: half on streams and
POSTs, half on their seats' WebSockets) and house bots. A
full process is killed with SIGKILL every ~15 s, four times, and restarted each time. Every
game must finish and pass `king audit`; no strike is doubled (each strike is followed by the
seat's own move or its forfeit), no deal is dealt twice; no process logs a driver error, an
error line or a traceback; and each takeover of a killed process's games is measured against
the configured bound.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import sqlalchemy as sa

from services.botkit import PullBot, PushBotServer, SocketBot, strategy_decider
from tests.processes import HEADERS, HTTP, Serve, audit_all, serve_env, wait_for

# alone: the takeover bound is measured, so no other suite may share the cores meanwhile.
pytestmark = [pytest.mark.slow, pytest.mark.alone, pytest.mark.postgres]

LEASE_SECONDS = 3.0
TICK_SECONDS = LEASE_SECONDS / 6
BOUND = LEASE_SECONDS + TICK_SECONDS
# What the measurement itself adds on top of the bound: this test polls the leases every 0.1 s,
# and a claim is a read of the game and a database round trip on a loaded 2-core machine.
MEASURE_SLACK = 1.5
TABLES = 48
PUSH_PLAYERS = [f"push{i}" for i in range(8)]
PULL_PLAYERS = [f"pull{i}" for i in range(8)]
ACTIONS = {"contract_declared", "redeal_asked", "card_played"}


def env_for(tmp: Path, db: tuple[str, str]) -> dict[str, str]:
    env = serve_env(tmp, *db)
    env["KING_LEASE_SECONDS"] = str(LEASE_SECONDS)
    # Generous: a time-out is allowed (and checked for doubles) but should stay rare.
    env["KING_DECISION_SECONDS"] = "20"
    return env


class Leases:
    """Reads the leases table directly: who holds which game, on the database's clock."""

    def __init__(self, db: tuple[str, str]) -> None:
        url, schema = db
        self.engine = sa.create_engine(url, connect_args={"options": f"-csearch_path={schema}"})

    def held(self) -> dict[str, str]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.text(
                    "select name, owner from leases where name like 'game:%' and expires_ms > "
                    "cast(extract(epoch from clock_timestamp()) * 1000 as bigint)"
                )
            ).all()
        return {name[len("game:") :]: owner for name, owner in rows}

    def live(self) -> set[str]:
        with self.engine.connect() as conn:
            rows = conn.execute(sa.text("select id from king_games where status = 'live'")).all()
        return {r[0] for r in rows}

    def close(self) -> None:
        self.engine.dispose()


def owner_of(server: Serve) -> str:
    owner = server.ready()["ownership"]["owner"]
    assert owner, "a full process has an owner id"
    return str(owner)


def takeover_seconds(leases: Leases, dead_owner: str, games: set[str], killed_at: float) -> float:
    """Seconds from the kill until every still-live game the dead owner held is held by
    another process."""

    def done() -> float | None:
        held, live = leases.held(), leases.live()
        waiting = [g for g in games if g in live and held.get(g) in (None, dead_owner)]
        return None if waiting else time.monotonic() - killed_at

    while True:
        found = done()
        if found is not None:
            return found
        assert time.monotonic() - killed_at < 120, "the killed process's games were never taken"
        time.sleep(0.1)


def stream_events(server: Serve, game_id: str) -> list[dict[str, Any]]:
    try:
        r = HTTP.get(
            f"{server.url}/api/v1/games/{game_id}/events",
            params={"follow": "false", "format": "ndjson"},
            timeout=30,
        )
    except httpx.ConnectError as exc:
        # Seen once ("connection refused" from a process whose log showed it running): say
        # what the process and its port looked like, for whoever meets it next.
        alive = server.proc.poll() is None
        listening = subprocess.run(
            ["ss", "-ltn", f"sport = :{server.port}"], capture_output=True, text=True
        ).stdout
        tail = server.log_path.read_text(errors="replace")[-2000:]
        raise AssertionError(
            f"{exc!r} from {server.name} on {server.port} (alive: {alive}); listening:\n"
            f"{listening}\nits log ends:\n{tail}"
        ) from exc
    assert r.status_code == 200, r.text
    return [orjson.loads(line) for line in r.text.splitlines() if line.strip()]


def check_nothing_twice(events: list[dict[str, Any]]) -> int:
    """No deal dealt twice; every strike followed by that seat's own move, its forfeit, or
    the game's end. Returns the number of strikes."""
    deals = Counter(
        (e["data"]["deal"], e["data"].get("attempt", 0))
        for e in events
        if e["type"] == "deal_started"
    )
    assert all(n == 1 for n in deals.values()), deals
    strikes = 0
    for i, e in enumerate(events):
        if e["type"] != "strike_recorded":
            continue
        strikes += 1
        seat = e["data"]["seat"]
        following = next(
            (x for x in events[i + 1 :] if x["type"] in ACTIONS | {"seat_abandoned"}), None
        )
        assert following is not None and following["data"]["seat"] == seat, (e, following)
        assert following["type"] != "strike_recorded"
    return strikes


def log_problems(server: Serve) -> list[str]:
    text = server.log_path.read_text(errors="replace")
    found = [line for line in text.splitlines() if "Traceback" in line]
    for e in server.events():
        if e.get("event") == "driver_error" or e.get("level") in ("error", "critical"):
            found.append(orjson.dumps(e).decode())
    return found


@pytest.mark.timeout(1800)  # 48 whole games with four kills on a shared 2-core machine
def test_three_full_processes_survive_four_kills_and_every_game_finishes_once(
    tmp_path: Path, pg_schemas: Callable[[], tuple[str, str]]
) -> None:
    db = pg_schemas()
    env = env_for(tmp_path, db)
    leases = Leases(db)
    push = [PushBotServer(strategy_decider("random", i)).start() for i in range(4)]
    servers: list[Serve] = []
    pullers: list[PullBot] = []
    threads: list[threading.Thread] = []
    try:
        full = [Serve(tmp_path, f"full-{i}", env) for i in range(3)]
        api = Serve(tmp_path, "api", env, driver=False, scheduler=False)
        servers += [*full, api]
        for s in servers:
            s.ready()
        with httpx.Client(base_url=api.url, trust_env=False, timeout=30) as client:
            for i, player in enumerate(PUSH_PLAYERS):
                body = {"id": player, "bot_url": push[i % len(push)].url}
                assert client.post("/api/v1/players", json=body, headers=HEADERS).status_code == 201
            tokens = {}
            for player in PULL_PLAYERS:
                r = client.post("/api/v1/players", json={"id": player}, headers=HEADERS)
                assert r.status_code == 201, r.text
                tokens[player] = r.json()["token"]
            per_puller = TABLES // len(PULL_PLAYERS)
            for i, player in enumerate(PULL_PLAYERS):
                # half the pull players on streams and POSTs, half on their seats' sockets
                kind = SocketBot if i % 2 else PullBot
                bot = kind(api.url, tokens[player], strategy_decider("random", 100 + i))
                pullers.append(bot)
                t = threading.Thread(target=bot.run, args=(per_puller,), daemon=True)
                threads.append(t)
                t.start()
            games = []
            for i in range(TABLES):
                seats = [
                    PUSH_PLAYERS[i % len(PUSH_PLAYERS)],
                    PULL_PLAYERS[i % len(PULL_PLAYERS)],
                    "house:random",
                    "house:random",
                ]
                body = {"id": f"fo-{i:02d}", "seats": seats, "rules": {"mode": "short12"}}
                r = client.post("/api/v1/games", json=body, headers=HEADERS)
                assert r.status_code == 201, r.text
                games.append(r.json()["game"]["id"])

        # New games spread over the owners (rendezvous hashing over three members).
        spread = wait_for(
            lambda: (h := leases.held()) and len(h) >= TABLES - 2 and Counter(h.values()),
            "the games to be claimed",
        )
        assert len(spread) == 3, spread

        measured: list[float] = []
        for kill in range(4):
            time.sleep(15 if kill else 8)
            victim_index = kill % 3
            victim = full[victim_index]
            dead = owner_of(victim)
            held = {g for g, o in leases.held().items() if o == dead}
            killed_at = time.monotonic()
            victim.kill()
            if held:
                measured.append(takeover_seconds(leases, dead, held, killed_at))
            replacement = Serve(tmp_path, f"full-{victim_index}-r{kill + 1}", env)
            servers.append(replacement)
            full[victim_index] = replacement
            replacement.ready()
        assert measured, "a killed process held games"
        # The bound as configured, plus what this measurement adds (see MEASURE_SLACK).
        assert max(measured) <= BOUND + MEASURE_SLACK, (measured, BOUND)
        print(f"takeover seconds after SIGKILL: {[round(m, 2) for m in measured]}, bound {BOUND}")

        def all_over() -> bool:
            return not (leases.live() & set(games))

        wait_for(all_over, "every game to finish")

        audit_all(env, tmp_path, games)
        strikes = sum(check_nothing_twice(stream_events(api, g)) for g in games)
        print(f"strikes in {TABLES} games: {strikes}")
        problems = [p for s in servers for p in log_problems(s)]
        assert not problems, problems[:20]
    finally:
        for bot in pullers:
            bot.stopped.set()
        for s in servers:
            s.stop()
        for bot in push:
            bot.stop()
        leases.close()


def test_a_paused_owner_loses_its_games_and_writes_nothing_after_it_resumes(
    tmp_path: Path, pg_schemas: Callable[[], tuple[str, str]]
) -> None:
    """SIGSTOP past the lease: the other process takes the game over and keeps its clock;
    after SIGCONT the paused one finds its lease gone and never writes to the game again."""
    db = pg_schemas()
    env = env_for(tmp_path, db)
    env["KING_DECISION_SECONDS"] = "0.6"  # a silent pull seat: time-outs, driven by the owner
    env["KING_MAX_STRIKES"] = "100"
    leases = Leases(db)
    servers: list[Serve] = []
    try:
        a, b = Serve(tmp_path, "a", env), Serve(tmp_path, "b", env)
        servers += [a, b]
        owners = {owner_of(a): a, owner_of(b): b}
        with httpx.Client(base_url=a.url, trust_env=False, timeout=30) as client:
            r = client.post("/api/v1/players", json={"id": "silent"}, headers=HEADERS)
            assert r.status_code == 201, r.text
            seats = ["silent", "house:random", "house:random", "house:random"]
            body = {"id": "paused-1", "seats": seats, "rules": {"mode": "short12"}}
            assert client.post("/api/v1/games", json=body, headers=HEADERS).status_code == 201
        first = wait_for(lambda: leases.held().get("paused-1"), "the game to be claimed")
        paused, other = owners[first], next(s for o, s in owners.items() if o != first)
        wait_for(lambda: _strikes(other) >= 2, "the owner's time-outs")
        paused.proc.send_signal(signal.SIGSTOP)
        stopped_at = time.monotonic()
        try:
            taken = wait_for(
                lambda: leases.held().get("paused-1") not in (None, first),
                "the game to be taken over",
            )
            assert taken
            print(f"takeover of a paused owner: {time.monotonic() - stopped_at:.2f} s")
            before = _strikes(other)
            wait_for(lambda: _strikes(other) >= before + 2, "the new owner's time-outs")
        finally:
            paused.proc.send_signal(signal.SIGCONT)
        resumed_wall = time.time()
        # Give the resumed process time to wake up, find its lease lost, and (wrongly) act.
        wait_for(lambda: _said(paused, "lease_lost", resumed_wall), "the lost lease noticed")
        time.sleep(2 * LEASE_SECONDS)
        events = stream_events(other, "paused-1")
        check_nothing_twice(events)
        late = [
            e
            for e in paused.events()
            if e.get("event") in ("strike", "forfeit") and _when(e) >= resumed_wall
        ]
        assert not late, late
        assert leases.held().get("paused-1") != first
        for s in servers:
            assert not log_problems(s), log_problems(s)[:10]
    finally:
        for s in servers:
            s.stop()
        leases.close()


def _strikes(server: Serve) -> int:
    return sum(1 for e in stream_events(server, "paused-1") if e["type"] == "strike_recorded")


def _when(line: dict[str, Any]) -> float:
    from datetime import datetime

    return datetime.fromisoformat(str(line["timestamp"])).timestamp()


def _said(server: Serve, event: str, since: float) -> bool:
    return any(e.get("event") == event and _when(e) >= since for e in server.events())
