"""A table set but not started has no events yet: its public stream answers 200 and sends
nothing (not following), or waits for its first event (following), never breaking off
mid-answer."""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from tests.service.conftest import SettingsFactory
from tests.service.helpers import ADMIN_HEADERS, bearer, wait_for

HOUSE = "house:random"


def test_streams_of_a_table_not_started_wait_for_its_first_event(
    make_settings: SettingsFactory, live_server: Any
) -> None:
    server = live_server(make_settings())
    with httpx.Client(base_url=server.url, timeout=30, trust_env=False) as http:
        ada = http.post("/api/v1/players", json={"id": "ada"}, headers=ADMIN_HEADERS)
        token = ada.json()["token"]
        body = {
            "seats": ["ada", HOUSE, HOUSE, HOUSE],
            "rules": {"mode": "short12"},
            "decision_seconds": 3600,
            "start": False,
            "id": "later",
        }
        assert http.post("/api/v1/games", json=body, headers=bearer(token)).status_code == 201
        for fmt in ("ndjson", "sse"):
            r = http.get("/api/v1/games/later/events", params={"format": fmt, "follow": "false"})
            assert r.status_code == 200, r.text
            assert "data" not in r.text and "game_created" not in r.text, fmt
        with http.stream(
            "GET", "/api/v1/games/later/events", params={"format": "ndjson"}
        ) as stream:
            lines = stream.iter_lines()
            started = http.post("/api/v1/games/later/start", headers=bearer(token))
            assert started.status_code == 200, started.text

            def first() -> dict[str, Any] | None:
                line = next(lines)
                return orjson.loads(line) if line.strip() else None

            message: dict[str, Any] = wait_for(first, "the table's first event")
            assert message["type"] == "game_created" and message["id"] == 1
