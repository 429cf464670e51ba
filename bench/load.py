"""`python -m bench load [--quick] [--json] [--profile] [options]`: many pull bots at once.

Configurations, measured in the same run and interleaved (one round = each once):
  sqlite  SQLite file, one `king serve` process (driver, scheduler, API);
  pg1     PostgreSQL, one `king serve` process;
  pg2     PostgreSQL, two full `king serve` processes (each drives its share of the games and
          may lead the scheduler);
  pg3     PostgreSQL, three full processes;
  pg2api  PostgreSQL, the older shape: one full process and one API-only `king serve
          --no-driver` with KING_RUN_SCHEDULER=false.
In the multi-process ones each bot picks a process (bot i -> process i % n, as behind a load
balancer), so the four seats of a table are spread over them and most actions are written by
a process other than the game's owner.
Every configuration gets a fresh database: a SQLite file in a temporary directory, or a
PostgreSQL schema of its own (KING_PG_SCHEMA, migrated with upgrade_all, dropped at the end).
The servers keep the product's settings (KING_POLL_SECONDS 1.0 included) except: no rate limit,
decision time 60 s (so no strike can happen), warning-level logs.

The bots run in client child processes (asyncio + httpx.AsyncClient), apart from the servers.
Each bot holds its seat's NDJSON stream and POSTs a random legal action on every `your_turn`
(the pull-bot protocol of docs/BOTS.md). The admin creates the players and the tables over the
API; a table plays its games one after another (the admin starts each).

Reported per configuration (medians over the rounds): actions/s (actions accepted / wall time of
the play phase), client-side p50/p99 of POST /actions, service-side p50/p99 from the
`Server-Timing` header, CPU of the server processes, of PostgreSQL and of the clients (from
/proc), and afterwards a check that every game finished, with no strike, and that the games hold
exactly the actions the bots had accepted. Scale-out ratios: pg2, pg3 and pg2api over pg1,
and pg1 over sqlite.

`--profile` adds one more run (not in the figures; pg1, or `--profile-config sqlite`) with
the server under cProfile, every thread profiled on its own CPU clock, and prints where the
server's CPU time goes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.live import (
    ADMIN,
    ROOT,
    ServerProcess,
    cpu_seconds,
    free_port,
    latency_summary,
    machine_cpu,
    server_timing_ms,
)

PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
CONFIGS = {
    "sqlite": "SQLite, 1 process",
    "pg1": "PostgreSQL, 1 process",
    "pg2": "PostgreSQL, 2 full processes",
    "pg3": "PostgreSQL, 3 full processes",
    "pg2api": "PostgreSQL, 1 full + 1 API",
}
PROCESSES = {"sqlite": 1, "pg1": 1, "pg2": 2, "pg3": 3, "pg2api": 2}
FULL_PROCESSES = {"sqlite": 1, "pg1": 1, "pg2": 2, "pg3": 3, "pg2api": 1}  # that drive games
ACTION_EVENTS = ("contract_declared", "card_played", "redeal_asked")
DECISION_SECONDS = 60
STALE_RETRIES = 50  # a 409 while the seat's view says it is our turn: send again, this often
CAVEAT = (
    "caveat: the clients, the servers and PostgreSQL share one 2-core machine, so the "
    "scale-out ratio measures contention for those cores, not the capacity a second machine "
    "would add."
)


# ------------------------------------------------------------------ servers


def server_env(tmp: Path, db_url: str | None, schema: str | None) -> dict[str, str]:
    """The product's settings (none of the caller's KING_*), but for what a load test needs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KING_")}
    env.update(
        PYTHONPATH=str(ROOT),
        KING_ADMIN_TOKEN=ADMIN,
        KING_DATA_DIR=str(tmp / "var"),
        KING_RATE_LIMIT_PER_SECOND="0",
        KING_DECISION_SECONDS=str(DECISION_SECONDS),
        KING_LOG_LEVEL="warning",
    )
    if db_url:
        env["KING_DATABASE_URL"] = db_url
    if schema:
        env["KING_PG_SCHEMA"] = schema
    return env


def pg_reachable(url: str) -> str | None:
    """None when PostgreSQL answers at `url`, else why not (one line)."""
    import sqlalchemy as sa

    try:
        engine = sa.create_engine(url, connect_args={"connect_timeout": 3})
        try:
            with engine.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
        finally:
            engine.dispose()
    except Exception as exc:
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return None


def create_schema(url: str) -> str:
    from services.database import upgrade_all
    from services.settings import load_settings

    schema = f"bench_load_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    upgrade_all(load_settings(database_url=url, pg_schema=schema))
    return schema


def drop_schema(url: str, schema: str) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    finally:
        engine.dispose()


def start_servers(
    config: str, tmp: Path, pg_url: str, schema: str | None, profile: Path | None
) -> list[ServerProcess]:
    """The configuration's `king serve` processes, ready; the first runs the driver."""
    db_url = None if config == "sqlite" else pg_url
    env = server_env(tmp, db_url, schema)
    servers: list[ServerProcess] = []
    try:
        for n in range(PROCESSES[config]):
            port = free_port()
            serve = ["serve", "--port", str(port)]
            child_env = dict(env)
            if n > 0 and config == "pg2api":
                serve.append("--no-driver")
                child_env["KING_RUN_SCHEDULER"] = "false"
            if profile is not None and n == 0:
                args = [sys.executable, "-m", "bench.load", "--profile-serve", str(profile)]
            else:
                args = [sys.executable, "-m", "services.cli"]
            servers.append(
                ServerProcess(
                    f"{config}[{n}]",
                    [*args, *serve],
                    port=port,
                    env=child_env,
                    cwd=tmp,
                    log=tmp / f"server-{n}.log",
                    health="/health/ready",
                )
            )
        for server in servers:
            server.ready()
    except BaseException:
        for server in servers:
            server.stop()
        raise
    return servers


# ------------------------------------------------------------------ tables


def create_tables(
    servers: list[ServerProcess], tables: int, games_per_table: int, mode: str, spread: str
) -> list[dict[str, Any]]:
    """Players (four per table) and every table's games, created by the admin over the API.
    Bot i (seat i % 4 of table i // 4) talks to process i % len(servers) (spread "bot"), or
    to process (i // 4) % len(servers) (spread "table": a table's four bots on one process)."""
    import httpx

    admin = {"authorization": f"Bearer {ADMIN}"}
    plan: list[dict[str, Any]] = []
    with httpx.Client(base_url=servers[0].url, headers=admin, timeout=60, trust_env=False) as c:
        for t in range(tables):
            seats = []
            for s in range(4):
                bot = t * 4 + s
                r = c.post("/api/v1/players", json={"id": f"load-{bot}", "kind": "bot"})
                r.raise_for_status()
                seats.append(
                    {
                        "player": f"load-{bot}",
                        "token": r.json()["token"],
                        "seat": s,
                        "server": (bot if spread == "bot" else t) % len(servers),
                        "bot": bot,
                    }
                )
            games = []
            for g in range(games_per_table):
                body = {
                    "id": f"load-{t}-{g}",
                    "seats": [s["player"] for s in seats],
                    "rules": {"mode": mode},
                    "decision_seconds": DECISION_SECONDS,
                    "start": False,
                }
                r = c.post("/api/v1/games", json=body)
                r.raise_for_status()
                games.append(r.json()["game"]["id"])
            plan.append({"table": t, "games": games, "seats": seats})
    return plan


def check_games(server: ServerProcess, plan: list[dict[str, Any]]) -> dict[str, Any]:
    """Every game's status and events, read back over the public API after the play phase."""
    import httpx
    import orjson

    kinds: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    with httpx.Client(base_url=server.url, timeout=60, trust_env=False) as c:
        for table in plan:
            for game_id in table["games"]:
                try:
                    status = c.get(f"/api/v1/games/{game_id}").json()["game"]["status"]
                    r = c.get(
                        f"/api/v1/games/{game_id}/events",
                        params={"format": "ndjson", "follow": False},
                    )
                except httpx.HTTPError as exc:  # reported, not fatal: the run says what it saw
                    statuses[f"unreadable ({type(exc).__name__})"] += 1
                    continue
                statuses[status] += 1
                for line in r.text.splitlines():
                    if line.strip():
                        kinds[orjson.loads(line)["type"]] += 1
    return {
        "games": sum(statuses.values()),
        "finished": statuses.get("over", 0),
        "game_statuses": dict(statuses),
        "actions_stored": sum(kinds[k] for k in ACTION_EVENTS),
        "strikes": kinds.get("strike_recorded", 0),
        "forfeits": kinds.get("seat_abandoned", 0),
    }


# ------------------------------------------------------------------ the clients


@dataclass
class ClientStats:
    actions: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    client_ms: list[float] = field(default_factory=list)
    server_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    games_done: int = 0
    reconnects: int = 0
    last_action: float = 0.0
    stale_retries: int = 0


async def play_seat(
    clients: list[Any], seat_plan: dict[str, Any], game_id: str, stats: ClientStats
) -> None:
    """One pull bot on one game: follow the seat's NDJSON stream, act on each `your_turn`.
    A process that stops answering is left for the next one, as a load balancer would."""
    import httpx
    import orjson

    which = seat_plan["server"]
    client = clients[which % len(clients)]

    rng = random.Random(seat_plan["bot"])
    seat = seat_plan["seat"]
    headers = {"authorization": f"Bearer {seat_plan['token']}"}
    post_headers = {**headers, "content-type": "application/json"}
    path = f"/api/v1/games/{game_id}/seats/{seat}/events"
    after = 0
    for _attempt in range(100):
        try:
            params = {"format": "ndjson", "after": after}
            async with client.stream("GET", path, params=params, headers=headers) as stream:
                if stream.status_code != 200:
                    await stream.aread()
                    stats.errors[f"stream {stream.status_code}"] += 1
                    await asyncio.sleep(0.2)
                    continue
                async for line in stream.aiter_lines():
                    if not line:
                        continue
                    message = orjson.loads(line)
                    if message.get("id") is not None:
                        after = max(after, int(message["id"]))
                    kind = message["type"]
                    if kind == "seed_revealed":
                        return
                    if kind != "your_turn":
                        continue
                    turn = message["data"]
                    body = {**rng.choice(turn["legal"]), "seat": seat, "version": turn["version"]}
                    for _retry in range(STALE_RETRIES):
                        sent = time.perf_counter()
                        r = await client.post(
                            f"/api/v1/games/{game_id}/actions",
                            content=orjson.dumps(body),
                            headers=post_headers,
                        )
                        took = (time.perf_counter() - sent) * 1000
                        stats.statuses[r.status_code] += 1
                        if r.status_code == 200:
                            stats.actions += 1
                            stats.last_action = time.monotonic()
                            stats.client_ms.append(took)
                            ms = server_timing_ms(r.headers)
                            if ms is not None:
                                stats.server_ms.append(ms)
                        if r.status_code != 409 or not await still_my_turn(
                            client, game_id, seat, turn["version"], headers
                        ):
                            break
                        # 409, yet the seat's view is at the version we sent and it is our
                        # turn: the process answered from an older state; send it again
                        stats.stale_retries += 1
                        await asyncio.sleep(0.02)
        except httpx.HTTPError as exc:
            stats.errors[type(exc).__name__] += 1
            if isinstance(exc, httpx.TransportError):
                which += 1
                client = clients[which % len(clients)]
            await asyncio.sleep(0.2)
        stats.reconnects += 1
    stats.errors["gave up"] += 1


async def still_my_turn(
    client: Any, game_id: str, seat: int, version: int, headers: dict[str, str]
) -> bool:
    """After a 409: is the game still at `version`, waiting for this seat (GET the seat)?"""
    r = await client.get(f"/api/v1/games/{game_id}/seats/{seat}", headers=headers)
    if r.status_code != 200:
        return False
    data = r.json()
    return bool(data["version"] == version and data["view"].get("to_move") == seat)


async def play_table(
    clients: list[Any], table: dict[str, Any], stats: ClientStats, admin_client: Any
) -> None:
    for game_id in table["games"]:
        r = await admin_client.post(
            f"/api/v1/games/{game_id}/start", headers={"authorization": f"Bearer {ADMIN}"}
        )
        if r.status_code not in (200, 201):
            stats.errors[f"start {r.status_code}"] += 1
            return
        await asyncio.gather(*(play_seat(clients, s, game_id, stats) for s in table["seats"]))
        stats.games_done += 1


async def run_client(spec: dict[str, Any]) -> dict[str, Any]:
    import httpx

    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    timeout = httpx.Timeout(120.0, read=None)
    clients = [
        httpx.AsyncClient(base_url=u, limits=limits, timeout=timeout, trust_env=False)
        for u in spec["urls"]
    ]
    stats = ClientStats()
    try:
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)  # "go"
        cpu0 = os.times()
        started = time.monotonic()
        stats.last_action = started
        tasks = [
            asyncio.create_task(play_table(clients, table, stats, clients[0]))
            for table in spec["tables"]
        ]
        pending: set[asyncio.Task[None]] = set(tasks)
        stalled = False
        while pending:
            _, pending = await asyncio.wait(pending, timeout=0.5)
            now = time.monotonic()
            if pending and now - stats.last_action > spec["stall_seconds"]:
                stalled = True  # no action accepted for that long: the games are stuck
                break
            if now - started >= spec["seconds"]:
                break
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        ended = time.monotonic()
        cpu1 = os.times()
        for task in tasks:
            if not task.cancelled() and task.exception() is not None:
                stats.errors[type(task.exception()).__name__] += 1
    finally:
        for c in clients:
            await c.aclose()
    return {
        "started": started,
        "ended": ended,
        "stopped_tables": len(pending),
        "stalled": stalled,
        "last_action": stats.last_action,
        "actions": stats.actions,
        "statuses": {str(k): v for k, v in stats.statuses.items()},
        "errors": dict(stats.errors),
        "games_done": stats.games_done,
        "reconnects": stats.reconnects,
        "stale_retries": stats.stale_retries,
        "client_ms": stats.client_ms,
        "server_ms": stats.server_ms,
        "cpu_seconds": (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system),
    }


def client_main() -> int:
    """`python -m bench.load --client`: a spec on the first stdin line, "go" on the second;
    prints "ready", then one JSON line of results."""
    spec = json.loads(sys.stdin.readline())
    result = asyncio.run(run_client(spec))
    print(json.dumps(result), flush=True)
    return 0


class ClientProcess:
    def __init__(self, spec: dict[str, Any], log: Path) -> None:
        self._log = log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.load", "--client"],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(spec) + "\n")
        self.proc.stdin.flush()
        self.log = log

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            tail = self.log.read_text(errors="replace")[-1500:]
            raise SystemExit(f"bench: a client process failed: {tail}")
        return line

    def wait_ready(self) -> None:
        if self._line().strip() != "ready":
            raise SystemExit("bench: a client process said something unexpected")

    def go(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def result(self) -> dict[str, Any]:
        return dict(json.loads(self._line()))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        self._log.close()


# ------------------------------------------------------------------ one run


def sql_statements(url: str) -> int:
    """The server's `king_sql_statements_total` from its /metrics."""
    import httpx

    text = httpx.get(url + "/metrics", timeout=30, trust_env=False).text
    for line in text.splitlines():
        if line.startswith("king_sql_statements_total "):
            return int(float(line.split()[1]))
    raise SystemExit("bench: the server's /metrics has no king_sql_statements_total")


def postgres_cpu() -> float:
    """CPU seconds of every `postgres` process on the machine, reaped children included."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        head, _, rest = text.rpartition(")")
        if not head.endswith("(postgres"):
            continue
        f = rest.split()
        total += (int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])) / os.sysconf("SC_CLK_TCK")
    return total


class Takeover(threading.Thread):
    """After `after` s of play, SIGKILL the last server and time how long until every live
    game it owned is held by another process: the moment each game's lease (in the
    configuration's PostgreSQL schema) shows a new owner, the slowest of them."""

    def __init__(self, victim: ServerProcess, url: str, schema: str, after: float) -> None:
        super().__init__(name="takeover", daemon=True)
        self.victim, self.url, self.schema, self.after = victim, url, schema, after
        self.result: dict[str, Any] = {}
        self.statements = 0
        self.stopping = threading.Event()

    def _leases(self, conn: Any) -> dict[str, str]:
        import sqlalchemy as sa

        rows = conn.execute(
            sa.text(
                f'SELECT name, owner FROM "{self.schema}".leases '
                "WHERE name LIKE 'game:%' "
                "AND expires_ms > CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"
            )
        )
        return {name: owner for name, owner in rows}

    def run(self) -> None:
        import sqlalchemy as sa

        if self.stopping.wait(self.after):
            return
        engine = sa.create_engine(self.url)
        try:
            with engine.connect() as conn:
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
                pid = f":{self.victim.pid}:"
                owned = [n for n, o in self._leases(conn).items() if pid in o]
                self.statements = sql_statements(self.victim.url)  # its count until the kill
                killed = time.monotonic()
                self.victim.proc.kill()
                taken: dict[str, float] = {}
                while len(taken) < len(owned) and time.monotonic() - killed < 120:
                    now = self._leases(conn)
                    seen = time.monotonic()
                    for name in owned:
                        holder = now.get(name)
                        if name not in taken and holder is not None and pid not in holder:
                            taken[name] = seen - killed
                    time.sleep(0.05)
                over = [n for n in owned if n not in taken]
                # A game that ended before it was taken over needs no owner: those are told
                # apart at the end (their lease is gone, and the game is over).
                self.result = {
                    "games_owned": len(owned),
                    "games_taken_over": len(taken),
                    "not_taken": len(over),
                    "takeover_seconds_max": round(max(taken.values()), 2) if taken else None,
                    "takeover_seconds_p50": round(statistics.median(taken.values()), 2)
                    if taken
                    else None,
                }
        finally:
            engine.dispose()


def run_once(
    config: str, options: argparse.Namespace, profile: Path | None = None
) -> dict[str, Any]:
    schema = None
    servers: list[ServerProcess] = []
    clients: list[ClientProcess] = []
    with tempfile.TemporaryDirectory(prefix="king-load-") as tmpdir:
        tmp = Path(tmpdir)
        try:
            if config != "sqlite":
                schema = create_schema(options.pg_url)
            servers = start_servers(config, tmp, options.pg_url, schema, profile)
            plan = create_tables(
                servers, options.tables, options.games_per_table, options.mode, options.spread
            )
            n_clients = max(1, min(options.clients, len(plan)))
            for k in range(n_clients):
                spec = {
                    "urls": [s.url for s in servers],
                    "tables": plan[k::n_clients],
                    "seconds": options.duration or options.max_seconds,
                    "stall_seconds": options.stall_seconds,
                }
                clients.append(ClientProcess(spec, tmp / f"client-{k}.log"))
            for client in clients:
                client.wait_ready()
            cpu0 = [cpu_seconds(s.pid) for s in servers]
            sql0 = sum(sql_statements(s.url) for s in servers)
            pg0 = postgres_cpu()
            machine0 = machine_cpu()
            killer = None
            if options.kill_after and schema is not None and FULL_PROCESSES[config] > 1:
                killer = Takeover(servers[-1], options.pg_url, schema, options.kill_after)
                killer.start()
            for client in clients:
                client.go()
            results = [client.result() for client in clients]
            if killer is not None:
                killer.stopping.set()
                killer.join(130)
            cpu1 = [cpu_seconds(s.pid) for s in servers]
            dead = servers[-1] if killer is not None and killer.result else None
            sql1 = sum(sql_statements(s.url) for s in servers if s is not dead)
            sql1 += killer.statements if dead is not None and killer is not None else 0
            pg1 = postgres_cpu()
            machine1 = machine_cpu()
            check = check_games(servers[0], plan)
            failed = [s for s in servers if s is not dead and s.proc.poll() is not None]
            if failed:
                raise SystemExit(f"bench: {failed[0].name} died: {failed[0].log_tail()}")
        finally:
            for client in clients:
                client.stop()
            for server in servers:
                server.stop()
            if schema is not None:
                drop_schema(options.pg_url, schema)
    wall = max(r["ended"] for r in results) - min(r["started"] for r in results)
    actions = sum(r["actions"] for r in results)
    statuses: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    for r in results:
        statuses.update(r["statuses"])
        errors.update(r["errors"])
    busy = (machine1[0] - machine0[0]) / max(machine1[1] - machine0[1], 1e-9)
    return {
        "config": config,
        "processes": len(servers),
        "actions": actions,
        "seconds": round(wall, 3),
        "actions_per_second": round(actions / wall, 1) if wall else 0.0,
        **latency_summary([ms for r in results for ms in r["client_ms"]], "client_ms"),
        **latency_summary([ms for r in results for ms in r["server_ms"]], "server_ms"),
        "server_cpu_percent": [
            round(100 * (b - a) / wall, 1) for a, b in zip(cpu0, cpu1, strict=True)
        ],
        "postgres_cpu_percent": None if config == "sqlite" else round(100 * (pg1 - pg0) / wall, 1),
        "client_cpu_percent": round(100 * sum(r["cpu_seconds"] for r in results) / wall, 1),
        "machine_busy_percent": round(100 * busy, 1),
        # Counted by every server's event store (king_sql_statements_total), all processes.
        "sql_per_action": round((sql1 - sql0) / actions, 2) if actions else None,
        "statuses": dict(statuses),
        "errors": dict(errors),
        "stopped_tables": sum(r["stopped_tables"] for r in results),
        "stalled": any(r["stalled"] for r in results),
        "reconnects": sum(r["reconnects"] for r in results),
        "stale_retries": sum(r["stale_retries"] for r in results),
        **check,
        # After a kill, an action the dead process stored may have lost its answer with it:
        # then the games hold more than the bots saw accepted, never fewer.
        "actions_match": check["actions_stored"] == actions
        or (dead is not None and check["actions_stored"] >= actions),
        "actions_unanswered": check["actions_stored"] - actions,
        "takeover": killer.result if killer is not None else None,
    }


# ------------------------------------------------------------------ the profile


def profile_serve(out: str, serve_args: list[str]) -> int:
    """`king serve` with every thread under its own cProfile (CPU time per thread); the
    merged statistics go to `out` when the server stops."""
    import cProfile
    import pstats
    import threading

    profiles: list[cProfile.Profile] = []
    guard = threading.Lock()

    def on_new_thread(_frame: Any, _event: str, _arg: Any) -> None:
        profile = cProfile.Profile(time.thread_time)
        with guard:
            profiles.append(profile)
        profile.enable()  # replaces this hook for the thread

    threading.setprofile(on_new_thread)
    from services.cli import main as king

    main_profile = cProfile.Profile(time.thread_time)
    main_profile.enable()
    try:
        return king(serve_args)
    finally:
        main_profile.disable()
        threading.setprofile(None)
        stats = pstats.Stats(main_profile)
        with guard:
            for profile in profiles:
                # Not disable(): from this thread it would close the other thread's open calls
                # (an idle worker's wait) on this thread's CPU clock. What they did is in.
                profile.snapshot_stats()
                stats.add(_Snapshot(profile.stats))  # type: ignore[arg-type]
        stats.dump_stats(out)


class _Snapshot:
    """Statistics already taken, in the shape pstats.Stats loads from a profiler."""

    def __init__(self, stats: dict[Any, Any]) -> None:
        self.stats = stats

    def create_stats(self) -> None:
        pass


def _area(filename: str) -> str:
    if filename == "~":
        return "builtins"
    path = filename.replace("\\", "/")
    if "/site-packages/" in path:
        return path.split("/site-packages/", 1)[1].split("/", 1)[0].removesuffix(".py")
    root = str(ROOT) + "/"
    if path.startswith(root):
        return path[len(root) :].split("/", 1)[0]
    if "/lib/python" in path:
        rest = path.split("/lib/python", 1)[1].split("/", 1)[1]
        return "stdlib:" + rest.split("/", 1)[0].removesuffix(".py")
    return path


def summarise_profile(path: Path, top: int = 20) -> dict[str, Any]:
    """Own time by area (C functions counted where they are called from), the functions with
    the most own and cumulative time, each as a % of all CPU time profiled."""
    import pstats

    stats = pstats.Stats(str(path))
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in table.values()) or 1e-9

    def area_of(func: Any, depth: int = 0) -> str:
        area = _area(func[0])
        if area != "builtins" or depth > 3:
            return area
        callers = table.get(func, (0, 0, 0, 0, {}))[4]
        if not callers:
            return area
        caller = max(callers.items(), key=lambda kv: kv[1][2] if isinstance(kv[1], tuple) else 0)
        return area_of(caller[0], depth + 1)

    areas: Counter[str] = Counter()
    for func, (_cc, _nc, tt, _ct, callers) in table.items():
        if func[0] == "~" and callers:
            shares = {c: v[2] if isinstance(v, tuple) else 0.0 for c, v in callers.items()}
            whole = sum(shares.values())
            for caller, share in shares.items():
                part = tt * (share / whole if whole else 1 / len(shares))
                areas[area_of(caller)] += part
        else:
            areas[area_of(func)] += tt

    def name(func: Any) -> str:
        filename, line, fn = func
        if filename == "~":
            return str(fn)
        short = filename.replace(str(ROOT) + "/", "")
        if "/site-packages/" in short:
            short = short.split("/site-packages/", 1)[1]
        elif "/lib/python" in short:
            short = short.split("/lib/python", 1)[1].split("/", 1)[1]
        return f"{short}:{line}({fn})"

    def pct(x: float) -> float:
        return round(100 * x / total, 1)

    own = sorted(table.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    project = ("domain", "eventstore", "tournament", "services")
    cumulative = sorted(
        ((f, v) for f, v in table.items() if _area(f[0]) in project),
        key=lambda kv: kv[1][3],
        reverse=True,
    )[:top]
    return {
        "cpu_seconds": round(total, 2),
        "areas": [(a, pct(t)) for a, t in areas.most_common() if pct(t) >= 0.5],
        "own": [(name(f), v[1], pct(v[2])) for f, v in own],
        "cumulative_project": [(name(f), v[1], pct(v[3])) for f, v in cumulative],
    }


def print_profile(summary: dict[str, Any], actions: int) -> None:
    per_action = summary["cpu_seconds"] * 1000 / actions if actions else 0.0
    print(
        f"\nprofile of the {summary.get('config', 'pg1')} server "
        "(cProfile, CPU time per thread, all threads): "
        f"{summary['cpu_seconds']} s for {actions} actions ({per_action:.2f} ms/action)"
    )
    print("  own time by area (C functions counted where they are called from):")
    for area, p in summary["areas"]:
        print(f"    {p:>5.1f} %  {area}")
    print("  top functions by own time:")
    for fn, calls, p in summary["own"]:
        print(f"    {p:>5.1f} %  {calls:>9}  {fn}")
    print("  top project functions by cumulative time:")
    for fn, calls, p in summary["cumulative_project"]:
        print(f"    {p:>5.1f} %  {calls:>9}  {fn}")


# ------------------------------------------------------------------ main


def _median(runs: list[dict[str, Any]], key: str) -> Any:
    values = [r[key] for r in runs if r.get(key) is not None]
    if not values:
        return None
    if isinstance(values[0], list):
        return [round(statistics.median(v), 1) for v in zip(*values, strict=True)]
    return round(statistics.median(values), 3)


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = (
        "actions_per_second",
        "client_ms_p50",
        "client_ms_p99",
        "server_ms_p50",
        "server_ms_p99",
        "server_cpu_percent",
        "postgres_cpu_percent",
        "client_cpu_percent",
        "machine_busy_percent",
        "sql_per_action",
        "seconds",
    )
    out = {k: _median(runs, k) for k in keys}
    out["runs"] = len(runs)
    out["actions_per_second_each"] = [r["actions_per_second"] for r in runs]
    out["games"] = sum(r["games"] for r in runs)
    out["finished"] = sum(r["finished"] for r in runs)
    out["strikes"] = sum(r["strikes"] for r in runs)
    out["actions_match"] = all(r["actions_match"] for r in runs)
    out["stale_retries"] = sum(r["stale_retries"] for r in runs)
    out["stalled"] = sum(1 for r in runs if r["stalled"])
    out["refused"] = sum(v for r in runs for k, v in r["statuses"].items() if k != "200")
    return out


def _interrupted(signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["--client"]:
        return client_main()
    if args_in[:1] == ["--profile-serve"]:
        return profile_serve(args_in[1], args_in[2:])
    parser = argparse.ArgumentParser(
        prog="python -m bench load",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="a small smoke run, one round")
    parser.add_argument("--tables", type=int, default=None, help="tables at once (default 64)")
    parser.add_argument("--games-per-table", type=int, default=1, help="games each table plays")
    parser.add_argument(
        "--duration", type=float, default=None, help="stop the play phase after this many s"
    )
    parser.add_argument(
        "--mode", choices=("standard20", "short12"), default=None, help="rules (default short12)"
    )
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 3, quick 1)")
    parser.add_argument(
        "--configs",
        default="sqlite,pg1,pg2,pg3",
        help="comma list of " + ", ".join(CONFIGS),
    )
    parser.add_argument(
        "--spread",
        choices=("bot", "table"),
        default="bot",
        help="several processes: each bot picks one (default), or a table's four bots share one",
    )
    parser.add_argument("--clients", type=int, default=1, help="client processes (default 1)")
    parser.add_argument("--pg-url", default=os.environ.get("KING_TEST_POSTGRES_URL", PG_URL))
    parser.add_argument(
        "--max-seconds", type=float, default=1800, help="guard: give up a play phase after this"
    )
    parser.add_argument(
        "--stall-seconds",
        type=float,
        default=30,
        help="end a play phase in which no action was accepted for this long (default 30)",
    )
    parser.add_argument(
        "--kill-after",
        type=float,
        default=None,
        help="in pg2/pg3, SIGKILL the last process after this many s of play and time the "
        "takeover of its games",
    )
    parser.add_argument("--runs-out", default=None, help="append each run's result (JSON lines)")
    parser.add_argument("--profile", action="store_true", help="and profile a server")
    parser.add_argument(
        "--profile-out", default="", help="also keep the raw profile (pstats) at this path"
    )
    parser.add_argument(
        "--profile-config",
        choices=("sqlite", "pg1"),
        default="pg1",
        help="the configuration --profile runs (default pg1; sqlite without a server)",
    )
    options = parser.parse_args(args_in)
    # a terminated run still stops its children and drops its schemas (the finally blocks)
    signal.signal(signal.SIGTERM, _interrupted)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started in the background
        signal.signal(signal.SIGINT, _interrupted)
    options.tables = options.tables or (4 if options.quick else 64)
    options.mode = options.mode or "short12"  # a whole game; standard20 takes 1.7 times longer
    rounds = options.rounds or (1 if options.quick else 3)
    configs = [c.strip() for c in options.configs.split(",") if c.strip()]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        parser.error(f"unknown configuration {unknown[0]!r}")
    say = (lambda *a: print(*a, file=sys.stderr, flush=True)) if options.json else print
    pg_problem = pg_reachable(options.pg_url) if any(c != "sqlite" for c in configs) else None
    if pg_problem is not None:
        say(f"PostgreSQL is not reachable ({pg_problem}): measuring SQLite only")
        configs = [c for c in configs if c == "sqlite"]
    say(
        f"{options.tables} tables, {options.tables * 4} pull bots, {options.games_per_table} "
        f"{options.mode} game(s) per table, {rounds} round(s) of {', '.join(configs)}"
    )
    runs: dict[str, list[dict[str, Any]]] = {c: [] for c in configs}
    for n in range(rounds):
        for config in configs:
            result = run_once(config, options)
            runs[config].append(result)
            if options.runs_out:  # each run as it ends: a long run stopped midway is not lost
                with open(options.runs_out, "a") as f:
                    f.write(json.dumps(result) + "\n")
            say(
                f"  round {n + 1} {config:<6} {result['actions_per_second']:>7.1f} actions/s  "
                f"{result['actions']} actions in {result['seconds']} s, "
                f"{result['finished']}/{result['games']} games over, "
                f"{result['strikes']} strikes" + (", STALLED" if result["stalled"] else "")
            )
    summary = {c: summarise(r) for c, r in runs.items()}
    ratios = {}
    rate = {c: s["actions_per_second"] for c, s in summary.items()}
    for many in ("pg2", "pg3", "pg2api"):
        if rate.get("pg1") and rate.get(many):
            ratios[f"{many}/pg1"] = round(rate[many] / rate["pg1"], 2)
    if rate.get("sqlite") and rate.get("pg1"):
        ratios["pg1/sqlite"] = round(rate["pg1"] / rate["sqlite"], 2)
    profile = None
    if options.profile:
        target = options.profile_config if pg_problem is None else "sqlite"
        with tempfile.TemporaryDirectory(prefix="king-profile-") as tmp:
            out = Path(tmp) / "server.prof"
            say(f"  profiling a {target} server (one more run, not in the figures)")
            profiled = run_once(target, options, profile=out)
            profile = {"config": target, "run": profiled, **summarise_profile(out)}
            if options.profile_out:
                shutil.copyfile(out, options.profile_out)
            if options.runs_out:
                with open(options.runs_out, "a") as f:
                    f.write(json.dumps({"profile": profile}) + "\n")
    result = {
        "benchmark": "load",
        "tables": options.tables,
        "bots": options.tables * 4,
        "games_per_table": options.games_per_table,
        "mode": options.mode,
        "rounds": rounds,
        "summary": summary,
        "scale_out": ratios,
        "runs": runs,
        "profile": profile,
        "postgres": pg_problem or "reachable",
        "caveat": CAVEAT,
    }
    if options.json:
        print(json.dumps(result, indent=2))
        return 0
    print_table(summary)
    for name, ratio in ratios.items():
        print(f"scale-out {name}: {ratio}")
    for config, config_runs in runs.items():
        for k, run in enumerate(config_runs):
            t = run.get("takeover")
            if t:
                print(
                    f"takeover {config} round {k + 1}: one of {run['processes']} processes "
                    f"killed after {options.kill_after} s, {t['games_taken_over']}/"
                    f"{t['games_owned']} of its games taken over, slowest "
                    f"{t['takeover_seconds_max']} s, median {t['takeover_seconds_p50']} s "
                    f"(lease {os.environ.get('KING_LEASE_SECONDS', '6')} s)"
                )
    print(CAVEAT)
    if profile is not None:
        print_profile(profile, profile["run"]["actions"])
    return 0


def _f(value: float | None, width: int, digits: int = 1) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def print_table(summary: dict[str, dict[str, Any]]) -> None:
    print(
        f"\n{'configuration':<24} {'actions/s':>9} {'client p50/p99 ms':>18} "
        f"{'server p50/p99 ms':>18} {'server CPU %':>13} {'PG CPU %':>8} {'client CPU %':>12} "
        f"{'SQL/action':>10} {'games':>7} {'strikes':>7}"
    )
    for config, s in summary.items():
        cpu = "+".join(f"{c:.0f}" for c in s["server_cpu_percent"] or [])
        print(
            f"{CONFIGS[config]:<24} {_f(s['actions_per_second'], 9)} "
            f"{_f(s['client_ms_p50'], 8)} / {_f(s['client_ms_p99'], 7)} "
            f"{_f(s['server_ms_p50'], 8)} / {_f(s['server_ms_p99'], 7)} {cpu:>13} "
            f"{_f(s['postgres_cpu_percent'], 8, 0)} {_f(s['client_cpu_percent'], 12, 0)} "
            f"{_f(s['sql_per_action'], 10, 2)} {s['finished']:>3}/{s['games']:<3} {s['strikes']:>7}"
        )
    for config, s in summary.items():
        extra = []
        if not s["actions_match"]:
            extra.append("the games hold another number of actions than the bots had accepted")
        if s["refused"]:
            extra.append(f"{s['refused']} actions refused (409/422)")
        if s["stale_retries"]:
            extra.append(f"{s['stale_retries']} actions sent again after a 409 from an older state")
        if s["stalled"]:
            extra.append(f"{s['stalled']} of {s['runs']} runs stalled (no action for a while)")
        if s["finished"] < s["games"]:
            extra.append(f"{s['games'] - s['finished']} games not over when the play phase ended")
        if extra:
            print(f"  {config}: " + "; ".join(extra))


if __name__ == "__main__":
    raise SystemExit(main())
