"""Actions over HTTP for a seat's own token: legality, strikes, forfeits, time-outs."""

from __future__ import annotations

from typing import Any

import orjson
from litestar.testing import TestClient

from services.app import create_app
from tests.service.conftest import SettingsFactory
from tests.service.helpers import ADMIN, bearer, create_game, create_player, wait_for, wait_over

SEAT0_FIRST = {"mode": "short12", "first_declarer": "seat0"}


def seat_view(client: Any, game_id: str, seat: int, token: str) -> dict[str, Any]:
    r = client.get(f"/api/v1/games/{game_id}/seats/{seat}", headers=bearer(token))
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def public_events(client: Any, game_id: str) -> list[dict[str, Any]]:
    r = client.get(f"/api/v1/games/{game_id}/events", params={"format": "ndjson", "follow": False})
    assert r.status_code == 200
    return [orjson.loads(line) for line in r.text.splitlines() if line.strip()]


def test_illegal_actions_strike_and_the_third_forfeits(make_settings: SettingsFactory) -> None:
    with TestClient(create_app(make_settings(decision_seconds=120))) as client:
        ada, bora = create_player(client, "ada"), create_player(client, "bora")
        game_id = create_game(
            client, ADMIN, ["ada", "bora", "house:random", "house:random"], rules=SEAT0_FIRST
        )
        url = f"/api/v1/games/{game_id}/actions"
        view = seat_view(client, game_id, 0, ada)
        assert view["view"]["to_move"] == 0 and view["deadline"] is not None
        assert len(view["view"]["hand"]) == 13
        assert (
            client.get(f"/api/v1/games/{game_id}/seats/1", headers=bearer(ada)).status_code == 403
        )

        # not this seat's decision: refused, no strike, nothing written
        version = view["version"]
        r = client.post(url, json={"type": "declare", "contract": "rifki"}, headers=bearer(bora))
        assert r.status_code == 422 and r.json()["code"] == "not_your_turn"
        assert r.json()["rule"] == "R-SEATS" and "strike" not in r.json()
        r = client.post(
            url, json={"type": "declare", "contract": "no_tricks", "seat": 0}, headers=bearer(bora)
        )
        assert r.status_code == 403
        r = client.post(
            url,
            json={"type": "declare", "contract": "no_tricks", "version": 0},
            headers=bearer(ada),
        )
        assert r.status_code == 409
        r = client.post(url, json={"type": "declare", "contract": "no_such"}, headers=bearer(ada))
        assert r.status_code == 400
        r = client.post(url, json={"type": "dance"}, headers=bearer(ada))
        assert r.status_code == 400
        for card in ("10S", "as", " AS", "QX", "1S"):  # not a card's exact name: no strike
            r = client.post(url, json={"type": "play", "card": card}, headers=bearer(ada))
            assert r.status_code == 400 and "card" in r.text, (card, r.text)
        assert seat_view(client, game_id, 0, ada)["version"] == version

        # strike 1: a card while declaring (wrong_phase) -> default declaration played
        r = client.post(url, json={"type": "play", "card": "2C"}, headers=bearer(ada))
        body = r.json()
        assert r.status_code == 422 and body["code"] == "wrong_phase" and body["rule"]
        assert (
            body["strike"]["count"] == 1 and body["strike"]["default_action"]["type"] == "declare"
        )
        assert not body["strike"]["forfeited"]

        strikes = 1
        while strikes < 3:

            def my_turn(seat: int, token: str) -> dict[str, Any] | None:
                v = seat_view(client, game_id, seat, token)
                return v if v["view"]["to_move"] == seat else None

            # bora plays legally whenever it is her turn; ada plays a card she does not hold
            turn = wait_for(lambda: my_turn(0, ada) or my_turn(1, bora), "a human's turn")
            if turn["seat"] == 1:
                action = turn["view"]["legal"][0]
                r = client.post(
                    url, json={**action, "version": turn["version"]}, headers=bearer(bora)
                )
                assert r.status_code == 200, r.text
                continue
            hand = set(turn["view"]["hand"])
            legal = turn["view"]["legal"]
            if legal[0]["type"] == "declare":
                bad = {"type": "play", "card": sorted(hand)[0]}
            else:
                bad = {
                    "type": "play",
                    "card": next(c for c in ("2S", "3S", "4S", "5S", "6S") if c not in hand),
                }
            r = client.post(url, json=bad, headers=bearer(ada))
            assert r.status_code == 422, r.text
            strikes += 1
            assert r.json()["strike"]["count"] == strikes
        assert r.json()["strike"]["forfeited"] is True

        # ada holds no seat now; a house bot plays seat 0; bora finishes the game
        assert (
            client.get(f"/api/v1/games/{game_id}/seats/0", headers=bearer(ada)).status_code == 403
        )

        def boras_turn_or_end() -> dict[str, Any] | None:
            v = seat_view(client, game_id, 1, bora)
            return v if v["view"]["phase"] == "over" or v["view"]["to_move"] == 1 else None

        while (v := wait_for(boras_turn_or_end, "bora's turn"))["view"]["phase"] != "over":
            client.post(
                url, json={**v["view"]["legal"][0], "version": v["version"]}, headers=bearer(bora)
            )
        assert wait_over(client, game_id)["game"]["status"] == "over"
        events = public_events(client, game_id)
        kinds = [e["type"] for e in events]
        assert kinds.count("strike_recorded") == 3
        assert all(e["data"]["seat"] == 0 for e in events if e["type"] == "strike_recorded")
        assert "seat_abandoned" in kinds and "seat_substituted" in kinds
        ended = next(e for e in events if e["type"] == "game_ended")
        points = {r["player"]: r["points"] for r in ended["data"]["results"]}
        assert points["ada"] == -30  # a JSON number, as everywhere (API.md, "Values")
        assert client.get(f"/api/v1/games/{game_id}/audit").json()["ok"]


def test_a_silent_seat_times_out_three_times_and_is_replaced(
    make_settings: SettingsFactory,
) -> None:
    with TestClient(create_app(make_settings(decision_seconds=0.1))) as client:
        ada = create_player(client, "ada")
        game_id = create_game(
            client, ada, ["ada", "house:random", "house:random", "house:random"], rules=SEAT0_FIRST
        )
        url = f"/api/v1/games/{game_id}/seats/0/events"
        with client.stream("GET", url, params={"format": "ndjson"}, headers=bearer(ada)) as s:
            mine = [orjson.loads(line) for line in s.iter_lines() if line.strip()]
        # the forfeited seat's stream ends with its substitution: later hands are not hers
        assert mine[-1]["type"] == "seat_substituted"
        assert [m["type"] for m in mine].count("deal_started") == 1
        wait_over(client, game_id)
        events = public_events(client, game_id)
        strikes = [e["data"] for e in events if e["type"] == "strike_recorded"]
        assert [(s["seat"], s["reason"], s["count"]) for s in strikes] == [
            (0, "timeout", 1),
            (0, "timeout", 2),
            (0, "timeout", 3),
        ]
        sub = next(e["data"] for e in events if e["type"] == "seat_substituted")
        assert sub == {"seat": 0, "player": "house:heuristic"}
        # the substitute sat in the game: the player filter finds it by its name too
        listed = client.get("/api/v1/games", params={"player": "house:heuristic"}).json()
        assert [g["id"] for g in listed] == [game_id]
        assert [g["id"] for g in client.get("/api/v1/games", params={"player": "ada"}).json()] == [
            game_id
        ]
        ended = next(e["data"] for e in events if e["type"] == "game_ended")
        assert {"seat": 0, "player": "ada", "points": -30} in ended["results"]
        assert events[-1]["type"] == "seed_revealed"
