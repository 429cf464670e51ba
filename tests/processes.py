"""Real `king serve` processes for the multi-process suites: start one with its log in a file,
kill it with SIGKILL, read its JSON log lines; and the checks
after a tournament (every game audits, nothing paired or started twice)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import orjson

from tests.service import helpers

ROOT = Path(__file__).resolve().parents[1]
ADMIN = helpers.ADMIN
HEADERS = helpers.ADMIN_HEADERS
HTTP = helpers.HTTP
GUARD = 600.0  # seconds: only a guard against a hung test, never a performance bound


# What the multi-process suites wait for takes seconds (a server's start, a round, a whole
# tournament), and a look is often a whole tournament's document, built by a server under test
# and parsed here: 20 looks a second took a tenth of the scale-out test's own CPU.
LONG_POLL = 0.25


def wait_for(predicate: Any, what: str, guard: float = GUARD) -> Any:
    """The suites' wait, with the longer guard that whole tournaments need, looking at most
    every LONG_POLL seconds once the first quick looks have failed."""
    return helpers.wait_for(predicate, what, guard, LONG_POLL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Serve:
    """A `king serve` subprocess with its log in a file."""

    def __init__(
        self,
        tmp: Path,
        name: str,
        env: dict[str, str],
        driver: bool = True,
        scheduler: bool = True,
    ) -> None:
        self.name = name
        self.port = free_port()
        self.log_path = tmp / f"{name}.log"
        self.log = self.log_path.open("wb")
        args = [sys.executable, "-m", "services.cli", "serve", "--port", str(self.port)]
        if not driver:
            args.append("--no-driver")
        if not scheduler:
            args.append("--no-scheduler")
        self.proc = subprocess.Popen(
            args, cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=self.log
        )
        self.url = f"http://127.0.0.1:{self.port}"

    def ready(self) -> dict[str, Any]:
        def up() -> dict[str, Any] | None:
            assert self.proc.poll() is None, self.log_path.read_text()[-3000:]
            try:
                r = HTTP.get(self.url + "/health/ready", timeout=2)
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
        """The JSON log lines. A line may carry more after its JSON object: uvicorn's and
        Litestar's plain-text lines are written by another thread than structlog's and can
        land on the same line (docs/OPERATIONS.md, Logs); the object at its start counts."""
        out = []
        decoder = json.JSONDecoder()
        for line in self.log_path.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                try:
                    found, _end = decoder.raw_decode(line)
                except ValueError:  # a line cut short by SIGKILL
                    continue
                out.append(found)
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


def tournament(base: str, tid: str) -> dict[str, Any] | None:
    try:
        r = HTTP.get(f"{base}/api/v1/tournaments/{tid}", timeout=5)
    except httpx.HTTPError:
        return None
    return dict(r.json()) if r.status_code == 200 else None


def in_round(base: str, tid: str, number: int) -> bool:
    """A game of round `number` is being played (live, some moves made)."""
    t = tournament(base, tid)
    if t is None or len(t["schedule"]) < number:
        return False
    for table in t["schedule"][number - 1]["tables"]:
        r = HTTP.get(f"{base}/api/v1/games/{table['game_id']}", timeout=5)
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


def audit_all(env: dict[str, str], tmp: Path, games: list[str]) -> None:
    """`king audit --all` passes, and each of `games` audits clean and finished."""
    audit = subprocess.run(
        [sys.executable, "-m", "services.cli", "audit", "--all", "--json"],
        env=env,
        cwd=tmp,
        capture_output=True,
        timeout=600,
    )
    assert audit.returncode == 0, audit.stdout[-3000:] + audit.stderr[-3000:]
    audited = {g["game_id"]: g for g in orjson.loads(audit.stdout)["games"]}
    for gid in games:
        assert audited[gid]["ok"] and audited[gid]["finished"], audited[gid]


def check_once(env: dict[str, str], tmp: Path, final: dict[str, Any], logs: list[Serve]) -> None:
    """Every game audits; each round was paired once; each game was created and started once."""
    t = final["tournament"]
    games = [tb["game_id"] for rnd in final["schedule"] for tb in rnd["tables"]]
    assert len(final["schedule"]) == t["rounds"] and games
    audit_all(env, tmp, games)
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
