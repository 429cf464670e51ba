"""A pull bot: hold the player's event streams and POST an action on every `your_turn`.

    PullBot("http://127.0.0.1:8000", token, decide).run()          # every game, forever
    PullBot(base, token, decide).play(game_id, seat)               # one game, to its end

Streams are NDJSON, and without an `on_message` hook only the seat's turns and the game's end
(`?only=turns`); actions ask for no view back (`Prefer: return=minimal`). A dropped stream is
reopened after the last event id it delivered. A 429 or 503 answer is waited out as its
`Retry-After` says (with jitter, so that many bots do not come back at the same instant), an
action only while its turn's time lasts, and so is a failed connection. Resending an action is
safe: it names the version it was decided at, and every resend of a decision carries that
decision's own `Idempotency-Key`, so the service decides it once and answers a resend with
the first answer.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import orjson

from services.tls import tls_context

Decide = Callable[[dict[str, Any]], dict[str, Any]]
RETRY_STATUSES = frozenset({429, 503})
KEY_IN_PROGRESS = "idempotency_key_in_progress"
ATTEMPTS = 8
MAX_BACKOFF = 30.0


def backoff(response: httpx.Response | None, attempt: int, rng: random.Random) -> float:
    """How long to wait before asking again: the answer's `Retry-After` (seconds), else (or
    after a failed connection) an exponential step, either stretched by up to half again at
    random."""
    try:
        wait = float(response.headers.get("retry-after", "") if response is not None else "")
    except ValueError:
        wait = 0.25 * 2**attempt
    return min(max(wait, 0.0) * (1 + rng.random() / 2), MAX_BACKOFF)


def should_retry(response: httpx.Response) -> bool:
    """A 429 or 503, or the 409 of a key whose first request is still being decided."""
    if response.status_code in RETRY_STATUSES:
        return True
    if response.status_code != 409:
        return False
    try:
        problem = response.json()
    except ValueError:
        return False
    return isinstance(problem, dict) and problem.get("code") == KEY_IN_PROGRESS


class PullBot:
    def __init__(
        self,
        base_url: str,
        token: str,
        decide: Decide,
        *,
        timeout: float = 30.0,
        on_message: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.decide = decide
        self.on_message = on_message
        self.headers = {"authorization": f"Bearer {token}", "accept": "application/x-ndjson"}
        self.timeout = timeout
        self.stopped = threading.Event()
        self.errors: list[str] = []
        self.rng = random.Random()
        self.sleep = time.sleep  # tests replace it

    def _client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.base_url,
            headers=self.headers,
            timeout=httpx.Timeout(self.timeout, read=None),
            trust_env=False,
            verify=tls_context(),  # one a game: without it, each loads the store again
        )

    def play(self, game_id: str, seat: int, retries: int = 20) -> None:
        """Play one seat of one game until the game's last event."""
        after = 0
        with self._client() as client:
            for _ in range(retries):
                try:
                    after, finished = self._follow(client, game_id, seat, after)
                except httpx.HTTPError as exc:
                    self.errors.append(f"{game_id}: {type(exc).__name__}")
                    finished = False
                if finished or self.stopped.is_set():
                    return
                time.sleep(0.2)

    def _follow(
        self, client: httpx.Client, game_id: str, seat: int, after: int
    ) -> tuple[int, bool]:
        url = f"/api/v1/games/{game_id}/seats/{seat}/events"
        params: dict[str, Any] = {"after": after, "format": "ndjson"}
        if self.on_message is None:  # it acts on its turns only: ask for nothing else
            params["only"] = "turns"
        with client.stream("GET", url, params=params) as response:
            if response.status_code != 200:
                response.read()
                self.errors.append(f"{game_id}: stream status {response.status_code}")
                if response.status_code in RETRY_STATUSES:
                    self.sleep(backoff(response, 0, self.rng))
                return after, response.status_code in (401, 403, 404)
            for line in response.iter_lines():
                if self.stopped.is_set():
                    return after, True
                if not line.strip():
                    continue
                message = orjson.loads(line)
                if self.on_message is not None:
                    self.on_message(message)
                if message.get("id") is not None:
                    after = max(after, int(message["id"]))
                if message["type"] == "your_turn":
                    self._act(client, game_id, message["data"])
                elif message["type"] == "seed_revealed":
                    return after, True
        return after, False

    def _decision(self, game_id: str, turn: dict[str, Any]) -> dict[str, Any] | None:
        """The bot's action for a `your_turn`'s data (None, noted in `errors`, if it failed)."""
        request = {"type": "decision", "game_id": game_id, **turn}
        try:
            return self.decide(request)
        except Exception as exc:
            self.errors.append(f"{game_id}: decide failed: {type(exc).__name__}")
            return None

    def _act(self, client: httpx.Client, game_id: str, turn: dict[str, Any]) -> None:
        action = self._decision(game_id, turn)
        if action is None:
            return
        body = {**action, "seat": turn["seat"], "version": turn["version"]}
        # One key a decision, the same on every resend: a resend whose first try was decided
        # (the answer lost on the way) gets that first answer, never a second decision.
        # The answer's status is all it reads: no view back (the next turn brings one).
        headers = {"idempotency-key": str(uuid.uuid4()), "prefer": "return=minimal"}
        ends = time.monotonic() + (turn.get("deadline_ms") or self.timeout * 1000) / 1000
        for attempt in range(ATTEMPTS):
            try:
                response = client.post(
                    f"/api/v1/games/{game_id}/actions", json=body, headers=headers
                )
            except httpx.TransportError:
                wait = backoff(None, attempt, self.rng)
                if attempt == ATTEMPTS - 1 or time.monotonic() + wait >= ends:
                    raise
                self.sleep(wait)
                continue
            if not should_retry(response):
                break
            wait = backoff(response, attempt, self.rng)
            if time.monotonic() + wait >= ends:
                break  # too late for this turn: the game's default move comes instead
            self.sleep(wait)
        if response.status_code not in (200, 409):
            self.errors.append(f"{game_id}: action refused ({response.status_code})")

    def run(self, max_games: int | None = None) -> None:
        """Play every game the player is seated in (a thread per game) until stopped, or
        until `max_games` games have started (then wait for them to end)."""
        threads: list[threading.Thread] = []  # one per seat: a player may hold two
        games: set[str] = set()
        enough = False
        with self._client() as client:
            while not self.stopped.is_set() and not enough:
                try:
                    with client.stream(
                        "GET", "/api/v1/me/events", params={"format": "ndjson"}
                    ) as r:
                        for line in r.iter_lines():
                            if self.stopped.is_set() or enough:
                                break
                            if not line.strip():
                                continue
                            message = orjson.loads(line)
                            if message["type"] != "game_started":
                                continue
                            data = message["data"]
                            game_id = data["game_id"]
                            if game_id in games:
                                continue  # announced again after a reconnect
                            games.add(game_id)
                            for seat in data["seats"]:  # every seat the player holds
                                t = threading.Thread(
                                    target=self.play, args=(game_id, seat), daemon=True
                                )
                                threads.append(t)
                                t.start()
                            enough = max_games is not None and len(games) >= max_games
                except httpx.HTTPError:
                    time.sleep(0.5)
        for t in threads:
            t.join()
