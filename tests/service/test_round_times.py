"""A tournament with a round rhythm: round n is paired no earlier than start + (n-1) x
round_minutes, even when the round before finished long before."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx

from eventstore import EventStore
from services.database import store_settings
from services.scheduler import control_stream
from services.settings import Settings
from tests.service.conftest import SettingsFactory
from tests.service.helpers import ADMIN_HEADERS, LiveServer, wait_for
from tournament.runner import stream_id

ROUND_MINUTES = 0.1  # six seconds: far longer than a short12 game of random bots takes


def test_rounds_are_paired_on_their_time(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    settings = make_settings(decision_seconds=10, scheduler_seconds=0.2)
    server = live_server(settings)
    body = {
        "id": "timed",
        "format": "swiss",
        "rounds": 2,
        "rules": {"mode": "short12"},
        "start_at": datetime.now(UTC).isoformat(),
        "round_minutes": ROUND_MINUTES,
        "players": [{"strategy": "random"}] * 4,
    }
    with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
        r = client.post("/api/v1/tournaments", json=body, headers=ADMIN_HEADERS)
        assert r.status_code == 201, r.text
        assert r.json()["tournament"]["round_minutes"] == ROUND_MINUTES

        def waiting_for_round_2() -> dict[str, object] | None:
            t = client.get("/api/v1/tournaments/timed").json()["tournament"]
            return t if t["rounds_closed"] == 1 and t["current_round"] == 0 else None

        waiting = wait_for(waiting_for_round_2, "round 1 to close", 120)
        assert waiting["next_round_at"] is not None, waiting

        def finished() -> bool:
            t = client.get("/api/v1/tournaments/timed").json()["tournament"]
            return t["status"] == "finished"

        wait_for(finished, "the tournament to finish", 120)

    store = EventStore.open(settings.url, settings=store_settings(settings))
    try:
        (started,) = [
            r for r in store.read_stream(control_stream("timed")) if r.type == "tournament_started"
        ]
        paired = [r for r in store.read_stream(stream_id("timed")) if r.type == "round_paired"]
        closed = [r for r in store.read_stream(stream_id("timed")) if r.type == "round_closed"]
    finally:
        store.close()
    due = started.recorded_at + timedelta(minutes=ROUND_MINUTES)
    assert datetime.fromisoformat(waiting["next_round_at"]) == due  # type: ignore[arg-type]
    assert closed[0].recorded_at < due, "round 1 ended early: the test shows nothing otherwise"
    assert paired[1].recorded_at >= due
    assert paired[1].recorded_at < due + timedelta(seconds=30)


def test_round_minutes_must_be_positive(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    server = live_server(make_settings())
    with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
        for bad in (0, -1, "soon", 10_081):
            body = {"id": "bad", "round_minutes": bad, "players": [{"strategy": "random"}] * 4}
            r = client.post("/api/v1/tournaments", json=body, headers=ADMIN_HEADERS)
            assert r.status_code == 400 and "round_minutes" in r.text, (bad, r.text)
        assert client.get("/api/v1/tournaments/bad").status_code == 404
