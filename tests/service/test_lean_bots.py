"""A bot that asks for no more than it acts on: a seat's turns-only stream (`?only=turns`) and
actions answered without the view (`Prefer: return=minimal`). The stream is the full seat
stream with the other events left out, resumable with the same ids; the minimal answer is
the full one without its view, and says the preference was applied."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest
from litestar.testing import TestClient

from services.app import create_app
from services.controllers.games import prefers_minimal
from services.settings import Settings
from tests.service.conftest import SettingsFactory
from tests.service.helpers import LiveServer, bearer, create_game, create_player, wait_over

HOUSE = ["house:random", "house:heuristic", "house:random"]
SEAT0_FIRST = {"mode": "short12", "first_declarer": "seat0"}
ENDS = ("game_ended", "seed_revealed")
OWN = ("strike_recorded", "seat_abandoned", "seat_substituted")


def lines(text: str) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in text.splitlines() if line.strip()]


def kept(message: dict[str, Any], seat: int) -> bool:
    """What the turns-only stream keeps of the seat's full stream."""
    kind = message["type"]
    return (
        kind == "your_turn" or kind in ENDS or (kind in OWN and message["data"].get("seat") == seat)
    )


@pytest.mark.parametrize(
    ("header", "minimal"),
    [
        ("return=minimal", True),
        ("RETURN = Minimal", True),
        ("respond-async, return=minimal; foo=bar", True),
        ('return="minimal"', True),
        ("wait=5,return=minimal", True),
        (None, False),
        ("", False),
        ("return=representation", False),
        ("return=minimalist", False),
        ("minimal", False),
        ("returns=minimal", False),
    ],
)
def test_the_prefer_header_is_read_as_rfc_7240_writes_it(header: str | None, minimal: bool) -> None:
    assert prefers_minimal(header) is minimal


def test_a_lean_bot_plays_a_whole_game_on_its_turns_alone(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    server = live_server(make_settings(decision_seconds=10))
    with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
        ada = create_player(client, "ada")
        game_id = create_game(client, ada, ["ada", *HOUSE], rules=SEAT0_FIRST)
        seen: list[dict[str, Any]] = []
        answers: list[httpx.Response] = []
        path = f"/api/v1/games/{game_id}/seats/0/events"
        params = {"format": "ndjson", "only": "turns"}
        with client.stream("GET", path, params=params, headers=bearer(ada)) as stream:
            for line in stream.iter_lines():
                if not line.strip():
                    continue
                message = orjson.loads(line)
                seen.append(message)
                if message["type"] == "seed_revealed":
                    break
                if message["type"] != "your_turn":
                    continue
                turn = message["data"]
                body = {**turn["legal"][0], "seat": 0, "version": turn["version"]}
                headers = {**bearer(ada), "prefer": "return=minimal"}
                answers.append(
                    client.post(f"/api/v1/games/{game_id}/actions", json=body, headers=headers)
                )
        wait_over(client, game_id)
        public = lines(
            client.get(f"/api/v1/games/{game_id}/events", params={"format": "ndjson"}).text
        )

        # read again once over: the full seat stream with the other events left out, and
        # resumed after any id the same way
        def read(**extra: Any) -> list[dict[str, Any]]:
            r = client.get(
                path, params={"format": "ndjson", "follow": False, **extra}, headers=bearer(ada)
            )
            assert r.status_code == 200, r.text
            return lines(r.text)

        full = read()
        assert read(only="turns") == [m for m in full if kept(m, 0)]
        assert len(read(only="turns")) < len(full) / 4
        for k in (0, 3, seen[2]["id"], full[-2]["id"]):
            assert read(only="turns", after=k) == [m for m in full if kept(m, 0) and m["id"] > k], k

    kinds = [m["type"] for m in seen]
    assert set(kinds) == {"your_turn", "game_ended", "seed_revealed"}, kinds
    assert kinds[-2:] == ["game_ended", "seed_revealed"]
    ids = [m["id"] for m in seen]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    # every decision of seat 0 came as a turn, and every turn was answered and applied
    mine = [
        m
        for m in public
        if m["type"] in ("card_played", "contract_declared") and m["data"]["seat"] == 0
    ]
    assert len(mine) == kinds.count("your_turn") == len(answers)
    for answer in answers:
        assert answer.status_code == 200, answer.text
        assert answer.headers["preference-applied"] == "return=minimal"
        body = answer.json()
        assert body["ok"] is True and body["seat"] == 0 and body["view"] is None
    # the minimal answer is the full one without its view: the version is the game's after it
    versions = [a.json()["version"] for a in answers]
    played = [m["id"] for m in mine]
    assert all(v >= p for v, p in zip(versions, played, strict=True))


def test_a_turns_only_stream_shows_its_own_strikes_and_ends_with_its_hand_over(
    make_settings: SettingsFactory,
) -> None:
    # ada never acts: three time-outs strike her, the third forfeits the seat, and her
    # stream ends with the hand-over; the strikes and the hand-over are hers to see
    with TestClient(create_app(make_settings(decision_seconds=0.1))) as client:
        ada = create_player(client, "ada")
        game_id = create_game(client, ada, ["ada", *HOUSE], rules=SEAT0_FIRST)
        path = f"/api/v1/games/{game_id}/seats/0/events"
        with client.stream(
            "GET", path, params={"format": "ndjson", "only": "turns"}, headers=bearer(ada)
        ) as s:
            lean = [orjson.loads(line) for line in s.iter_lines() if line.strip()]
        assert lean[-1]["type"] == "seat_substituted"
        assert [m["type"] for m in lean if m["type"] in OWN] == [
            "strike_recorded",
            "strike_recorded",
            "strike_recorded",
            "seat_abandoned",
            "seat_substituted",
        ]
        assert all(kept(m, 0) for m in lean)
        wait_over(client, game_id)
        public = lines(
            client.get(f"/api/v1/games/{game_id}/events", params={"format": "ndjson"}).text
        )
    # the stored events it sent are the public stream's that it keeps, up to its hand-over
    handed = next(m["id"] for m in public if m["type"] == "seat_substituted")
    stored = [m for m in lean if m["type"] != "your_turn"]
    assert stored == [m for m in public if m["id"] <= handed and kept(m, 0)]


def test_a_bad_only_value_is_a_400_with_its_reason(
    client: TestClient,  # type: ignore[type-arg]
) -> None:
    ada = create_player(client, "ada")
    game_id = create_game(client, ada, ["ada", *HOUSE], decision_seconds=600)
    r = client.get(
        f"/api/v1/games/{game_id}/seats/0/events",
        params={"format": "ndjson", "follow": False, "only": "cards"},
        headers=bearer(ada),
    )
    assert r.status_code == 400
    assert "only" in r.text
    assert "Traceback" not in r.text
