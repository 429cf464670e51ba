"""Whole games on a real uvicorn server with real HTTP bots on loopback (push and pull),
on SQLite and PostgreSQL; the exported record checks to the same results."""

from __future__ import annotations

import threading
from collections.abc import Callable

import httpx
import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

from domain.record import check_record
from services.botkit import PullBot, PushBotServer, strategy_decider
from services.settings import Settings
from tests.service.conftest import SettingsFactory
from tests.service.helpers import ADMIN, LiveServer, bearer, create_game, create_player, wait_over


def test_push_and_pull_bots_play_whole_games(
    backend_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    play_games(backend_settings, live_server, ("short12", "short12"))


@pytest.mark.slow
def test_push_and_pull_bots_play_whole_standard_games(
    backend_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    play_games(backend_settings, live_server, ("standard20", "standard20", "standard20"))


def play_games(
    backend_settings: SettingsFactory,
    live_server: Callable[[Settings], LiveServer],
    modes: tuple[str, ...],
) -> None:
    server = live_server(backend_settings(decision_seconds=10))
    push_heuristic = PushBotServer(strategy_decider("heuristic", 1)).start()
    push_random = PushBotServer(strategy_decider("random", 2)).start()
    try:
        with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
            create_player(client, "pushy", bot_url=push_heuristic.url)
            create_player(client, "pushr", bot_url=push_random.url)
            pull_token = create_player(client, "puller")
            bot = PullBot(server.url, pull_token, strategy_decider("random", 3))
            runner = threading.Thread(target=bot.run, kwargs={"max_games": len(modes)}, daemon=True)
            runner.start()
            seats = ["pushy", "puller", "pushr", "house:heuristic"]
            games = [
                create_game(client, ADMIN, seats[i:] + seats[:i], rules={"mode": mode})
                for i, mode in enumerate(modes)
            ]
            for game_id in games:
                final = wait_over(client, game_id)
                record = client.get(f"/api/v1/games/{game_id}/record").json()
                status, checked = check_record(record)
                assert status == 0, checked
                view = final["view"]
                assert checked["totals"] == view["totals"] and checked["winners"] == view["winners"]
                # One form: the view's ladder points are the record check's numbers.
                assert checked["ladder_points"] == view["ladder_points"]
                assert all(type(p) in (int, float) for p in view["ladder_points"])
                assert view["strikes"] == [0, 0, 0, 0], view["strikes"]
                audit = client.get(f"/api/v1/games/{game_id}/audit").json()
                assert audit["ok"] and audit["replay"]["seed_checked"], audit
            runner.join(timeout=60)
            assert not bot.errors, bot.errors
            # the pull seat's decisions are timed like the push bots' (king_decision_seconds)
            made = sum(pull_decisions(client, game_id, "puller") for game_id in games)
            timed = decision_count(client.get("/metrics").text, "pull", "puller")
            # each decision once; the first of a game may come before the driver looks
            assert made > len(games) and made - len(games) <= timed <= made, (timed, made)
            assert decision_count(client.get("/metrics").text, "push", "pushy") > 0
            mine = client.get("/api/v1/games", params={"player": "puller"}).json()
            assert sorted(g["id"] for g in mine) == sorted(games)
            assert client.get("/api/v1/me", headers=bearer(pull_token)).json()["kind"] == "human"
    finally:
        push_heuristic.stop()
        push_random.stop()


def pull_decisions(client: httpx.Client, game_id: str, player: str) -> int:
    """How many decisions (declare, redeal, play) `player`'s seat made in the game."""
    text = client.get(f"/api/v1/games/{game_id}/events", params={"follow": False}).text
    events = [orjson.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    seat = next(e for e in events if e["type"] == "game_created")["data"]["players"].index(player)
    kinds = ("contract_declared", "redeal_asked", "card_played")
    return sum(1 for e in events if e["type"] in kinds and e["data"].get("seat") == seat)


def decision_count(metrics: str, kind: str, player: str) -> float:
    for family in text_string_to_metric_families(metrics):
        for sample in family.samples:
            if sample.name == "king_decision_seconds_count" and sample.labels == {
                "kind": kind,
                "player": player,
            }:
                return float(sample.value)
    return 0.0


def test_the_driver_resumes_live_games_after_a_restart(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    settings = make_settings(decision_seconds=30)
    first = live_server(settings)
    with httpx.Client(base_url=first.url, trust_env=False, timeout=30) as client:
        ada = create_player(client, "ada")
        game_id = create_game(
            client,
            ada,
            ["ada", "house:random", "house:random", "house:random"],
            rules={"mode": "short12", "first_declarer": "seat0"},
        )
        assert client.get(f"/api/v1/games/{game_id}").json()["game"]["status"] == "live"
    first.stop()
    second = live_server(settings)
    with httpx.Client(base_url=second.url, trust_env=False, timeout=30) as client:
        bot = PullBot(second.url, ada, strategy_decider("random", 5))
        bot.play(game_id, 0)
        final = wait_over(client, game_id)
        assert final["view"]["strikes"] == [0, 0, 0, 0]
        assert client.get(f"/api/v1/games/{game_id}/audit").json()["ok"]
