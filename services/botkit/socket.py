"""A pull bot on the seat's WebSocket: its turns and its actions on one connection.

    SocketBot("http://127.0.0.1:8000", token, decide).run()        # every game, forever
    SocketBot(base, token, decide).play(game_id, seat)             # one game, to its end

The same bot as `PullBot` (the same `decide`, the same `run` on the player's notices), but
each seat plays over `GET /api/v1/games/{id}/seats/{seat}/ws`: no HTTP request per action, so
less work for the service and for the bot. A dropped connection is opened again after the last
event id it delivered; an action refused as too many (429) or busy (503) is sent again after a
growing wait, while its turn's time lasts. Each action names the version it was decided at, so
a resend after the game has moved on is refused (409) rather than decided twice.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlencode

import orjson
from websockets.exceptions import InvalidStatus, WebSocketException
from websockets.sync.client import ClientConnection, connect

from services.botkit.pull import ATTEMPTS, RETRY_STATUSES, PullBot, backoff

GIVE_UP = frozenset({401, 403, 404})  # a socket that will never open: stop trying


def socket_url(base_url: str, game_id: str, seat: int, params: dict[str, Any]) -> str:
    """The seat socket's ws:// (or wss://) URL under the service's http(s):// base URL."""
    base = "ws" + base_url[len("http") :] if base_url.startswith("http") else base_url
    return f"{base}/api/v1/games/{game_id}/seats/{seat}/ws?{urlencode(params)}"


def send_action(ws: ClientConnection, action: dict[str, Any], ref: str) -> None:
    """An action frame: the action (as POST /actions takes it) and the reference its answer
    will carry."""
    ws.send(orjson.dumps({"action": action, "ref": ref}).decode())


class SocketBot(PullBot):
    def play(self, game_id: str, seat: int, retries: int = 20) -> None:
        """Play one seat of one game until its stream ends (the game's last event, or the
        seat handed to a substitute)."""
        after = 0
        for attempt in range(retries):
            try:
                after, finished = self._session(game_id, seat, after)
            except InvalidStatus as exc:
                status = exc.response.status_code
                self.errors.append(f"{game_id}: socket refused ({status})")
                if status in GIVE_UP:
                    return
                self.sleep(backoff(None, attempt, self.rng))
                continue
            except (OSError, WebSocketException) as exc:
                self.errors.append(f"{game_id}: {type(exc).__name__}")
                finished = False
            if finished or self.stopped.is_set():
                return
            self.sleep(0.2)

    def _session(self, game_id: str, seat: int, after: int) -> tuple[int, bool]:
        params: dict[str, Any] = {"after": after}
        if self.on_message is None:  # it acts on its turns only: ask for nothing else
            params["only"] = "turns"
        url = socket_url(self.base_url, game_id, seat, params)
        pending: dict[str, tuple[dict[str, Any], float, int]] = {}  # ref: body, ends, tries
        with connect(
            url,
            additional_headers={"authorization": self.headers["authorization"]},
            compression=None,  # the service sends frames uncompressed; small, on a fast link
            proxy=None,
            max_size=None,
            open_timeout=self.timeout,
        ) as ws:
            for text in ws:  # ends when the service closes: the stream is over
                if self.stopped.is_set():
                    return after, True
                message = orjson.loads(text)
                if self.on_message is not None:
                    self.on_message(message)
                kind = message["type"]
                if kind in ("accepted", "problem"):
                    self._answered(ws, game_id, message, pending)
                    continue
                if message.get("id") is not None:
                    after = max(after, int(message["id"]))
                if kind == "your_turn":
                    self._send(ws, game_id, message["data"], pending)
                elif kind == "seed_revealed":
                    return after, True
        # A clean close without the game's last event: the seat was handed to a substitute.
        return after, True

    def _send(
        self,
        ws: ClientConnection,
        game_id: str,
        turn: dict[str, Any],
        pending: dict[str, tuple[dict[str, Any], float, int]],
    ) -> None:
        action = self._decision(game_id, turn)
        if action is None:
            return
        body = {**action, "version": turn["version"]}
        ref = str(turn["version"])
        ends = time.monotonic() + (turn.get("deadline_ms") or self.timeout * 1000) / 1000
        pending[ref] = (body, ends, 1)
        send_action(ws, body, ref)

    def _answered(
        self,
        ws: ClientConnection,
        game_id: str,
        message: dict[str, Any],
        pending: dict[str, tuple[dict[str, Any], float, int]],
    ) -> None:
        sent = pending.pop(str(message.get("ref")), None)
        if message["type"] == "accepted" or sent is None:
            return
        problem = message.get("data") or {}
        status = problem.get("status")
        body, ends, tries = sent
        if status in RETRY_STATUSES and tries < ATTEMPTS:
            wait = backoff(None, tries, self.rng)
            if time.monotonic() + wait < ends:
                self.sleep(wait)
                pending[str(message["ref"])] = (body, ends, tries + 1)
                send_action(ws, body, str(message["ref"]))
                return
        if status != 409:  # 409: the game moved on (a default move came first)
            self.errors.append(f"{game_id}: action refused ({status})")
