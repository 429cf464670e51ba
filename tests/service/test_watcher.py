"""Two service processes on one database (two apps here, each with its own store, live cache
and driver): a game started through the API-only one is played by the other's driver, and a
pull bot on the API-only one plays against house bots driven by the other."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from eventstore import RecordedEvent
from services.app import create_app, services_of
from services.botkit import PullBot, SocketBot, strategy_decider
from services.play.watcher import game_changes
from tests.service.conftest import SettingsFactory
from tests.service.helpers import (
    ADMIN,
    LiveServer,
    bearer,
    create_game,
    create_player,
    wait_for,
    wait_over,
)

HOUSE4 = ["house:random", "house:heuristic", "house:random", "house:heuristic"]


def recorded(stream_id: str, version: int, kind: str) -> RecordedEvent:
    return RecordedEvent(
        position=version,
        stream_id=stream_id,
        version=version,
        event_id=f"{stream_id}-{version}",
        type=kind,
        schema_version=1,
        payload={},
        meta={},
        recorded_at=datetime.now(UTC),
        prev_hash="",
        hash="",
    )


def test_game_changes_reads_versions_starts_and_ends_of_game_streams_only() -> None:
    batch = [
        recorded("game-a", 1, "game_created"),
        recorded("game-a", 2, "deal_started"),
        recorded("tournament-t", 7, "round_paired"),
        recorded("game-b", 40, "game_ended"),
        recorded("game-b", 41, "seed_revealed"),
        recorded("game-a", 3, "card_played"),
    ]
    changes = game_changes(batch)
    assert changes.versions == {"a": 3, "b": 41}
    assert changes.created == ["a"] and changes.over == ["b"]
    assert game_changes([recorded("tournament-t", 1, "game_created")]).versions == {}


def test_a_game_started_on_an_api_only_process_is_played_by_the_driver_of_another(
    backend_settings: SettingsFactory,
) -> None:
    api = create_app(backend_settings(run_driver=False, run_scheduler=False))
    driving = create_app(backend_settings())
    with TestClient(api) as a, TestClient(driving) as b:
        token = create_player(a, "ada")
        game_id = create_game(a, token, HOUSE4)
        # Only the other process's driver can move it on: it learns of the game from the feed.
        final = wait_over(a, game_id)
        assert final["view"]["winners"], final
        assert b.get(f"/api/v1/games/{game_id}/audit").json()["ok"]
        ready = a.get("/health/ready").json()
        assert ready["checks"] == {"database": "ok", "feed": "ok"}, ready
        assert ready["ownership"]["owner"] is None  # an API-only process owns no game
        # The API process followed the feed up to the game's last event.
        events = b.get(f"/api/v1/games/{game_id}/events?follow=false").text.count("event: ")
        assert events > 100

        def followed() -> float:
            metrics = a.get("/metrics").text
            line = next(x for x in metrics.splitlines() if x.startswith("king_feed_position "))
            return float(line.split()[1])

        wait_for(lambda: followed() >= events, "the watcher to follow the feed")


@pytest.mark.slow  # on SQLite every hop between the processes waits for a poll
@pytest.mark.parametrize("kind", [PullBot, SocketBot], ids=["streams", "sockets"])
def test_a_pull_bot_on_one_process_plays_house_bots_driven_by_another(
    backend_settings: SettingsFactory, kind: type[PullBot]
) -> None:
    # Looking every 50 ms, not every 200: the hops are what is tested, not how long each waits.
    fast = {"poll_seconds": 0.05}
    api = LiveServer(
        create_app(backend_settings(run_driver=False, run_scheduler=False, **fast))
    ).start()
    driving = LiveServer(create_app(backend_settings(**fast))).start()
    try:
        with httpx.Client(base_url=api.url, trust_env=False, timeout=30) as a:
            token = create_player(a, "puller")
            bot = kind(api.url, token, strategy_decider("heuristic", 4))
            player = threading.Thread(target=bot.run, kwargs={"max_games": 1}, daemon=True)
            player.start()
            game_id = create_game(a, token, ["puller", *HOUSE4[1:]])
            final = wait_over(a, game_id)
            player.join(60)
            assert not bot.errors, bot.errors
            assert final["view"]["strikes"] == [0, 0, 0, 0], final["view"]
    finally:
        api.stop()
        driving.stop()


def test_an_action_is_judged_on_the_stored_state_not_a_lagging_cache(
    backend_settings: SettingsFactory,
) -> None:
    """Four people move in turn, alternately through two processes whose feed watchers wait
    a minute between looks: each process's cache is behind the other's last write, and every
    action with the right version is still taken (not refused as out of date)."""
    slow = {"run_driver": False, "run_scheduler": False, "poll_seconds": 60.0}
    with (
        TestClient(create_app(backend_settings(**slow))) as a,
        TestClient(create_app(backend_settings(**slow))) as b,
        TestClient(create_app(backend_settings(**slow))) as reader,  # looks, never writes
    ):
        names = ["ada", "bo", "cem", "dee"]
        tokens = {n: create_player(reader, n) for n in names}
        game_id = create_game(reader, ADMIN, names, rules={"mode": "short12"})

        def seat_view(seat: int) -> dict[str, Any]:
            token = tokens[names[seat]]
            r = reader.get(f"/api/v1/games/{game_id}/seats/{seat}", headers=bearer(token))
            return dict(r.json())

        for step in range(12):
            writer = (a, b)[step % 2]
            seat = seat_view(0)["view"]["to_move"]
            view = seat_view(seat)
            action = {**view["view"]["legal"][0], "version": view["version"]}
            r = writer.post(
                f"/api/v1/games/{game_id}/actions",
                json=action,
                headers=bearer(tokens[names[seat]]),
            )
            assert r.status_code == 200, (step, r.status_code, r.text)


def test_the_feed_carries_a_processes_cached_state_forward(
    backend_settings: SettingsFactory,
) -> None:
    """Moves written by one process reach the other's cache through the feed: its recent
    events and state then equal the store's, so its streams serve them without a read."""
    api = create_app(backend_settings(run_driver=False, run_scheduler=False))
    other = create_app(backend_settings(run_driver=False, run_scheduler=False))
    with TestClient(api) as a, TestClient(other) as b:
        names = ["ada", "bo", "cem", "dee"]
        tokens = {n: create_player(a, n) for n in names}
        game_id = create_game(a, ADMIN, names, rules={"mode": "short12"})

        def act(client: TestClient[Any]) -> int:
            seat = a.get(f"/api/v1/games/{game_id}/seats/0", headers=bearer(tokens["ada"]))
            to_move = seat.json()["view"]["to_move"]
            token = tokens[names[to_move]]
            view = a.get(f"/api/v1/games/{game_id}/seats/{to_move}", headers=bearer(token)).json()
            r = client.post(
                f"/api/v1/games/{game_id}/actions",
                json={**view["view"]["legal"][0], "version": view["version"]},
                headers=bearer(token),
            )
            assert r.status_code == 200, r.text
            return int(r.json()["version"])

        mine = act(a)  # `api` writes: it caches the game's tail and state
        theirs = [act(b) for _ in range(3)][-1]  # then the other process writes
        games = services_of(api).games
        wait_for(lambda: games.live.version(game_id) == theirs, "the feed to bring them")
        recent = games.live.since(game_id, mine)
        assert recent is not None, "served from the cache, not the store"
        held, state = recent
        stored = services_of(api).repo.events(game_id, mine + 1)
        assert [m.version for m in held] == [r.version for r in stored]
        assert [m.type for m in held] == [r.type for r in stored]
        assert state == services_of(other).repo.load(game_id) and state.version == theirs
