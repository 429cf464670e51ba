"""Helpers of the service suites: tokens, players, waiting, a live uvicorn server."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import uvicorn

from services.play.service import GameService

ADMIN = "test-admin-token-0123456789"
ADMIN_HEADERS = {"authorization": f"Bearer {ADMIN}"}
HANG_GUARD = 120.0  # seconds: only a guard against a hung test, never a performance bound

# The suites' one client for requests made outside a test's own client, polls most of all:
# `httpx.get` makes a client at each call, and each loaded the certificate store again (70 ms
# of CPU), so a wait polling every 50 ms kept a core busy beside the processes under test.
# (A client is safe to share between threads; a dead server's connections are dropped.)
HTTP = httpx.Client(trust_env=False)


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def create_player(client: Any, player_id: str, bot_url: str | None = None) -> str:
    body: dict[str, Any] = {"id": player_id}
    if bot_url is not None:
        body["bot_url"] = bot_url
    r = client.post("/api/v1/players", json=body, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    return str(r.json()["token"])


def create_game(client: Any, token: str, seats: list[str], **extra: Any) -> str:
    body: dict[str, Any] = {"seats": seats, "rules": {"mode": "short12"}, **extra}
    r = client.post("/api/v1/games", json=body, headers=bearer(token))
    assert r.status_code == 201, r.text
    return str(r.json()["game"]["id"])


FIRST_POLL, LAST_POLL = 0.005, 0.05  # seconds between looks: short at first, then backing off


def wait_for(
    predicate: Callable[[], Any], what: str, guard: float = HANG_GUARD, last_poll: float = LAST_POLL
) -> Any:
    """The predicate's first true value, looked for ever less often (up to every `last_poll`
    seconds): most waits (a bot's move, the next turn) end within milliseconds, and a fixed
    50 ms poll made each such wait 50 ms, hundreds of times a game."""
    end = time.monotonic() + guard
    pause = FIRST_POLL
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(pause)
        pause = min(pause * 2, last_poll)


def wait_over(client: Any, game_id: str) -> dict[str, Any]:
    def over() -> dict[str, Any] | None:
        body = client.get(f"/api/v1/games/{game_id}").json()
        return body if body["game"]["status"] == "over" else None

    result: dict[str, Any] = wait_for(over, f"game {game_id} to end")
    return result


class LiveServer:
    """The app under a real uvicorn server on 127.0.0.1 (a free port), in a thread."""

    def __init__(self, app: Any) -> None:
        config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", access_log=False
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.app = app

    def start(self) -> LiveServer:
        self.thread.start()
        wait_for(lambda: self.server.started, "uvicorn to start", 30)
        return self

    @property
    def url(self) -> str:
        sock = self.server.servers[0].sockets[0]
        return f"http://127.0.0.1:{sock.getsockname()[1]}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


def allow_one_player_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lift the API's rule that a player holds one seat of a table (GameService._check_seats):
    the games, their streams and notices allow more (`seats_of`), and a client must too."""
    check = GameService._check_seats

    def lenient(self: GameService, seats: Any) -> None:
        check(self, list(dict.fromkeys(seats)) + ["house:random"] * (4 - len(set(seats))))

    monkeypatch.setattr(GameService, "_check_seats", lenient)
