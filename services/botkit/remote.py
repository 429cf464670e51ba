"""A push bot at a URL as a Strategy, so `king match` can set any HTTP bot against the built-ins.

It sends the same decision request the service sends (docs/BOTS.md) and reads the same reply,
so a bot that passes a match plays the service unchanged. This is a developer's tool on their
own machine: the URL is not checked against the service's address policy.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson

from domain.view import Action, BadAction, SeatView
from services.tls import tls_context
from tournament.strategies.base import register_scheme

MAX_REPLY_BYTES = 65_536


class RemoteBotError(RuntimeError):
    """The bot did not answer with a legal action (the message says what it did)."""


class RemoteBot:
    """`strategy(view) -> Action` by asking the push bot at `url`."""

    def __init__(self, url: str, seed: int = 0, seconds: float = 10.0) -> None:
        self.name = url
        self.url = url
        self.seconds = seconds
        self._client = httpx.Client(
            timeout=seconds, follow_redirects=False, trust_env=False, verify=tls_context()
        )

    def request(self, view: SeatView) -> dict[str, Any]:
        deadline = datetime.fromtimestamp(time.time() + self.seconds, UTC)
        return {
            "type": "decision",
            "game_id": view.game_id,
            "seat": view.seat,
            "version": 0,
            "deadline": deadline.isoformat(timespec="milliseconds"),
            "deadline_ms": int(self.seconds * 1000),
            "legal": [a.to_dict() for a in view.legal],
            "view": view.to_dict(),
        }

    def __call__(self, view: SeatView) -> Action:
        try:
            response = self._client.post(
                self.url,
                content=orjson.dumps(self.request(view)),
                headers={"content-type": "application/json"},
            )
        except httpx.HTTPError as exc:
            raise RemoteBotError(f"{self.url}: {type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            raise RemoteBotError(f"{self.url} answered HTTP {response.status_code}")
        if len(response.content) > MAX_REPLY_BYTES:
            raise RemoteBotError(f"{self.url} answered more than {MAX_REPLY_BYTES} bytes")
        try:
            reply = orjson.loads(response.content)
            action = Action.from_dict(reply.get("action") if isinstance(reply, dict) else None)
        except (orjson.JSONDecodeError, BadAction) as exc:
            raise RemoteBotError(f"{self.url} answered no valid action: {exc}") from None
        if action not in view.legal:
            raise RemoteBotError(
                f"{self.url} answered {action.to_dict()}, not a legal action "
                f"(legal: {[a.to_dict() for a in view.legal]})"
            )
        return action


def register() -> None:
    """Make `http://…` and `https://…` strategy specs mean a RemoteBot."""
    for prefix in ("http://", "https://"):
        register_scheme(prefix, lambda spec, seed: RemoteBot(spec, seed))
