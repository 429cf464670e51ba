"""Scale-out on PostgreSQL with real processes: two stateless API processes and one process
with the game driver and the tournament scheduler, a 32-bot Swiss of push bots on loopback.

One API process is killed with SIGKILL in the middle of a round; a spectator following the
tournament's events through it resumes on the other; a new API process joins. The tournament
finishes, every game passes `king audit`, no round or game is paired or started twice, and
the standings equal those of the same tournament (same pairing seed, same deal secret, same
bots) run by one process alone."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from services.botkit import PushBotServer, strategy_decider
from tests.processes import (
    GUARD,
    HEADERS,
    HTTP,
    Serve,
    check_once,
    finished,
    in_round,
    serve_env,
    wait_for,
)

TID = "scale-1"
PLAYERS = [f"bot{i:02d}" for i in range(32)]
SECRET = "5ca1e0" * 10 + "0123"  # 64 hex digits: the same deals in both runs


def tournament_body() -> dict[str, Any]:
    return {
        "id": TID,
        "format": "swiss",
        "rounds": 3,
        "rules": {"mode": "short12"},
        "seed": "scale-out",
        "secret": SECRET,
        # Generous, so that no decision times out on a loaded machine: a strike would change
        # the game, and the two runs must play the same games.
        "decision_seconds": 60,
        "start_at": datetime.now(UTC).isoformat(),
        "players": [{"player": p} for p in PLAYERS],
    }


def register_bots(base: str, bots: list[PushBotServer]) -> None:
    with httpx.Client(base_url=base, trust_env=False, timeout=30) as client:
        for i, player in enumerate(PLAYERS):
            body = {"id": player, "bot_url": bots[i % len(bots)].url}
            r = client.post("/api/v1/players", json=body, headers=HEADERS)
            assert r.status_code == 201, r.text


def create(base: str) -> None:
    r = HTTP.post(f"{base}/api/v1/tournaments", json=tournament_body(), headers=HEADERS)
    assert r.status_code == 201, r.text


def outcome(base: str) -> dict[str, Any]:
    """What must not depend on how many processes ran it: tables, results, standings."""
    with httpx.Client(base_url=base, trust_env=False, timeout=30) as client:
        t = client.get(f"/api/v1/tournaments/{TID}").json()
        tables = [[(tb["game_id"], tb["seats"]) for tb in rnd["tables"]] for rnd in t["schedule"]]
        totals = {
            game_id: client.get(f"/api/v1/games/{game_id}").json()["view"]["totals"]
            for rnd in tables
            for game_id, _ in rnd
        }
        standings = client.get(f"/api/v1/tournaments/{TID}/standings").json()
    return {"tables": tables, "totals": totals, "standings": standings}


class Spectator:
    """Follows the tournament's events, resuming on the next API process when one dies."""

    def __init__(self, bases: list[str]) -> None:
        self.bases = bases
        self.events: list[dict[str, Any]] = []
        self.switches = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        turn = 0
        while not self.events or self.events[-1]["type"] != "tournament_finished":
            base = self.bases[turn % len(self.bases)]
            headers = {"accept": "text/event-stream"}
            if self.events:
                headers["last-event-id"] = str(self.events[-1]["id"])
            try:
                with HTTP.stream(
                    "GET",
                    f"{base}/api/v1/tournaments/{TID}/events",
                    headers=headers,
                    timeout=httpx.Timeout(10, read=None),
                ) as r:
                    for line in r.iter_lines():
                        if line.startswith("data: "):
                            self.events.append(orjson.loads(line[6:]))
            except httpx.HTTPError:
                turn += 1
                self.switches += 1


def run_alone(tmp: Path, db: tuple[str, str], bots: list[PushBotServer]) -> dict[str, Any]:
    env = serve_env(tmp, *db)
    solo = Serve(tmp, "solo", env)
    try:
        solo.ready()
        register_bots(solo.url, bots)
        create(solo.url)
        wait_for(lambda: finished(solo.url, TID), "the one-process tournament to finish")
        return outcome(solo.url)
    finally:
        solo.stop()


def push_bots() -> list[PushBotServer]:
    """Four bot servers, eight players each. A run needs its own: a strategy keeps state per
    (game, seat), and both runs have the same game ids."""
    return [
        PushBotServer(strategy_decider(name, seed)).start()
        for name, seed in (("heuristic", 1), ("random", 2), ("heuristic", 3), ("random", 4))
    ]


# alone: four king serve processes and 32 push bots fill both cores on their own.
@pytest.mark.slow
@pytest.mark.alone
@pytest.mark.timeout(1500)  # two whole tournaments side by side on a shared 2-core machine
def test_two_api_processes_one_killed_mid_round_and_the_same_standings_as_one_process(
    tmp_path: Path, pg_schemas: Callable[[], tuple[str, str]]
) -> None:
    bots = push_bots()
    alone_bots = push_bots()
    servers: list[Serve] = []
    # The one-process run goes on beside the scale-out run, on a schema of its own.
    (tmp_path / "alone").mkdir()
    alone_db = pg_schemas()
    alone: dict[str, Any] = {}
    reference = threading.Thread(
        target=lambda: alone.update(run_alone(tmp_path / "alone", alone_db, alone_bots)),
        daemon=True,
    )
    reference.start()
    try:
        env = serve_env(tmp_path, *pg_schemas())
        driving = Serve(tmp_path, "driver-and-scheduler", env)
        api1 = Serve(tmp_path, "api1", env, driver=False, scheduler=False)
        api2 = Serve(tmp_path, "api2", env, driver=False, scheduler=False)
        servers += [driving, api1, api2]
        assert driving.ready()["scheduler"]["leader"] is True
        for api in (api1, api2):
            ready = api.ready()
            assert "driver" not in ready["checks"] and "scheduler" not in ready, ready
        register_bots(api1.url, bots)
        create(api2.url)
        spectator = Spectator([api1.url, api2.url])
        spectator.thread.start()

        wait_for(lambda: in_round(api1.url, TID, 2), "round 2 to be in play")
        api1.kill()
        api3 = Serve(tmp_path, "api3", env, driver=False, scheduler=False)
        servers.append(api3)
        api3.ready()
        final = wait_for(lambda: finished(api3.url, TID), "the tournament to finish")

        spectator.thread.join(120)
        assert spectator.switches >= 1, "the spectator's process was killed under it"
        ids = [e["id"] for e in spectator.events]
        assert ids == list(range(1, len(ids) + 1)), ids  # resumed: no gap, nothing twice
        assert spectator.events[-1]["type"] == "tournament_finished"

        # check_once reads over HTTP from the last server of the list: a live one.
        check_once(env, tmp_path, final, [api1, driving, api2, api3])
        reference.join(GUARD)
        assert alone, "the one-process run finished"
        assert outcome(api3.url) == alone
        assert outcome(api2.url) == alone  # every API process serves the same answer
    finally:
        for s in servers:
            s.stop()
        reference.join(GUARD)
        for bot in bots + alone_bots:
            bot.stop()
