"""`/api/v1/me/events`: one notice per game with stable ids, the seats the player holds as seat
numbers and the players by seat; a game_over carries the result as JSON numbers. A player
holding two seats gets one notice naming both, and the kit's pull bot plays both."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import orjson
import pytest

from domain.record import check_record
from services.botkit import PullBot, strategy_decider
from services.settings import Settings
from tests.service.conftest import SettingsFactory
from tests.service.helpers import (
    ADMIN,
    LiveServer,
    allow_one_player_twice,
    bearer,
    create_game,
    create_player,
    wait_over,
)


def sse_records(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    """The stream's SSE records (comments and the `retry:` record left out)."""
    record: dict[str, str] = {}
    for line in lines:
        if line == "":
            if "data" in record:
                yield record
            record = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            record[name] = value.removeprefix(" ")


def test_a_player_with_two_seats_gets_one_notice_per_game_and_plays_both(
    make_settings: SettingsFactory,
    live_server: Callable[[Settings], LiveServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    allow_one_player_twice(monkeypatch)
    server = live_server(make_settings(decision_seconds=30))
    seats = ["twin", "house:random", "twin", "house:heuristic"]
    notices: list[dict[str, str]] = []
    with httpx.Client(base_url=server.url, trust_env=False, timeout=60) as client:
        token = create_player(client, "twin")
        owner = ADMIN  # seats the twin with no invitation to accept
        game_id = create_game(client, owner, seats, start=False)
        bot = PullBot(server.url, token, strategy_decider("random", 7))
        runner = threading.Thread(target=bot.run, kwargs={"max_games": 1}, daemon=True)
        url = "/api/v1/me/events"
        with client.stream("GET", url, params={"format": "sse"}, headers=bearer(token)) as r:
            assert r.status_code == 200
            lines = r.iter_lines()
            assert next(lines).startswith("retry:")  # the stream is open: start the game now
            started = client.post(f"/api/v1/games/{game_id}/start", headers=bearer(owner))
            assert started.status_code in (200, 201), started.text
            for record in sse_records(lines):
                notices.append(record)
                if record["event"] == "game_started":
                    runner.start()  # the bot joins only now: the game cannot end unseen
                if record["event"] == "game_over":
                    break
        final = wait_over(client, game_id)
        runner.join(timeout=120)
        assert not runner.is_alive() and not bot.errors, bot.errors
        record = client.get(f"/api/v1/games/{game_id}/record").json()
    assert [n["event"] for n in notices] == ["game_started", "game_over"]
    assert [n["id"] for n in notices] == [f"{game_id}:started", f"{game_id}:over"]
    start, over = (orjson.loads(n["data"]) for n in notices)
    assert start == {
        "id": f"{game_id}:started",
        "game_id": game_id,
        "type": "game_started",
        "data": {"game_id": game_id, "player": "twin", "seats": [0, 2], "players": seats},
    }
    assert over["id"] == f"{game_id}:over" and over["type"] == "game_over"
    result: dict[str, Any] = over["data"]
    view = final["view"]
    # Both seats were played by the bot, to the end, without a strike.
    assert view["strikes"] == [0, 0, 0, 0]
    assert result["seats"] == [0, 2] and result["players"] == seats
    assert result["totals"] == view["totals"] and result["winners"] == view["winners"]
    # The one form of a game's ladder points: JSON numbers, as the record check gives them.
    status, checked = check_record(record)
    assert status == 0 and result["ladder_points"] == checked["ladder_points"]
    assert result["points"] == [view["ladder_points"][0], view["ladder_points"][2]]
    assert all(type(p) in (int, float) for p in result["ladder_points"] + result["points"])


def test_a_reconnected_stream_announces_a_live_game_again_with_the_same_id(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    server = live_server(make_settings(decision_seconds=30))
    with httpx.Client(base_url=server.url, trust_env=False, timeout=60) as client:
        token = create_player(client, "ada")
        create_player(client, "bora")
        # the admin seats bora (a player's table would wait for her to accept)
        game_id = create_game(client, ADMIN, ["ada", "house:random", "house:random", "bora"])
        seen = []
        for _ in range(2):  # ada never moves: the game stays live between the two streams
            with client.stream(
                "GET", "/api/v1/me/events", params={"format": "ndjson"}, headers=bearer(token)
            ) as r:
                line = next(x for x in r.iter_lines() if x.strip())
                seen.append(orjson.loads(line))
    assert seen[0] == seen[1]
    assert seen[0]["id"] == f"{game_id}:started"
    assert seen[0]["data"] == {
        "game_id": game_id,
        "player": "ada",
        "seats": [0],
        "players": ["ada", "house:random", "house:random", "bora"],
    }


def test_a_forfeited_seat_is_listed_in_game_over_with_its_minus_thirty(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    server = live_server(make_settings(decision_seconds=0.1))
    seats = ["ada", "house:random", "house:random", "house:random"]
    with httpx.Client(base_url=server.url, trust_env=False, timeout=60) as client:
        token = create_player(client, "ada")
        rules = {"mode": "short12", "first_declarer": "seat0"}
        game_id = create_game(client, token, seats, rules=rules, start=False)
        url = "/api/v1/me/events"
        with client.stream("GET", url, params={"format": "sse"}, headers=bearer(token)) as r:
            lines = r.iter_lines()
            assert next(lines).startswith("retry:")
            assert client.post(f"/api/v1/games/{game_id}/start", headers=bearer(token)).is_success
            over = next(n for n in sse_records(lines) if n["event"] == "game_over")
        final = wait_over(client, game_id)
    data = orjson.loads(over["data"])["data"]
    assert final["view"]["strikes"][0] == 3  # ada never moved: three time-outs, forfeited
    assert data["seats"] == [0] and data["players"] == seats
    assert data["points"] == [-30]  # R-ABANDON, whatever the seat's result
    assert data["ladder_points"] == final["view"]["ladder_points"]
