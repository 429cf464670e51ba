"""Group commit keeps the answer's promise: on SQLite the appends of actions that wait together
share one transaction, and every action answered 200 is on disk, even when the server is
killed with SIGKILL while many games act at once."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.processes import HEADERS, HTTP, Serve, serve_env

GAMES = 8


def _play(
    url: str, tokens: list[str], game_id: str, acked: list[tuple[str, int]], stop: Any
) -> None:
    """Act for every seat of `game_id` with its player's token until stopped or cut off,
    noting the version of every answered action."""
    with httpx.Client(base_url=url, trust_env=False, timeout=30) as client:
        seat = 0
        try:
            while not stop.is_set():
                auth = {"authorization": f"Bearer {tokens[seat]}"}
                r = client.get(f"/api/v1/games/{game_id}/seats/{seat}", headers=auth)
                if r.status_code != 200:
                    return
                body = r.json()
                to_move = body["view"]["to_move"]
                if to_move is None:
                    return  # over
                if to_move != seat:
                    seat = to_move
                    continue
                action = {**body["view"]["legal"][0], "version": body["version"]}
                answer = client.post(f"/api/v1/games/{game_id}/actions", json=action, headers=auth)
                if answer.status_code == 200:
                    acked.append((game_id, answer.json()["version"]))
        except httpx.HTTPError:
            return  # the server is gone


def _group_sizes(url: str) -> dict[str, float]:
    text = HTTP.get(url + "/metrics", timeout=30).text
    found = re.findall(r'^king_commit_group_actions_bucket\{le="([^"]+)"\} (\S+)$', text, re.M)
    return {le: float(n) for le, n in found}


def _stored_version(url: str, game_id: str) -> int:
    r = HTTP.get(
        f"{url}/api/v1/games/{game_id}/events",
        params={"follow": "false", "format": "ndjson"},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    ids = [orjson.loads(line)["id"] for line in r.text.splitlines() if line.strip()]
    return max(ids)


@pytest.mark.slow
def test_every_answered_action_survives_a_kill_9_of_a_grouping_server(tmp_path: Path) -> None:
    env = serve_env(tmp_path, f"sqlite:///{tmp_path / 'king.db'}", None)
    env["KING_DECISION_SECONDS"] = "600"  # nobody times out: every move is an answered action
    server = Serve(tmp_path, "first", env)
    again: Serve | None = None
    try:
        server.ready()
        with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
            names = ["ada", "bo", "cem", "deniz"]
            tokens = []
            for name in names:
                r = client.post("/api/v1/players", json={"id": name}, headers=HEADERS)
                assert r.status_code == 201, r.text
                tokens.append(r.json()["token"])
            games = []
            for i in range(GAMES):
                body = {"id": f"crash-{i}", "seats": names, "rules": {"mode": "short12"}}
                r = client.post("/api/v1/games", json=body, headers=HEADERS)
                assert r.status_code == 201, r.text
                games.append(f"crash-{i}")
        acked: list[tuple[str, int]] = []
        stop = threading.Event()
        players = [
            threading.Thread(target=_play, args=(server.url, tokens, g, acked, stop)) for g in games
        ]
        for p in players:
            p.start()
        deadline = time.monotonic() + 60
        while len(acked) < 400 and time.monotonic() < deadline:
            time.sleep(0.05)
        sizes = _group_sizes(server.url)
        server.kill()  # while the players are still acting
        stop.set()
        for p in players:
            p.join(60)
        assert len(acked) >= 400, len(acked)
        # The actions did wait together: some commits held more than one.
        assert sizes["1.0"] < sizes["+Inf"], sizes

        again = Serve(tmp_path, "second", env)
        again.ready()
        answered: dict[str, int] = {}
        for game_id, version in acked:
            answered[game_id] = max(answered.get(game_id, 0), version)
        for game_id, version in answered.items():
            assert _stored_version(again.url, game_id) >= version, game_id
            audit = HTTP.get(  # (the admin's: the games are still live)
                f"{again.url}/api/v1/games/{game_id}/audit", headers=HEADERS, timeout=60
            ).json()
            assert audit["ok"] is True, audit
    finally:
        if server.proc.poll() is None:
            server.stop()
        if again is not None:
            again.stop()
