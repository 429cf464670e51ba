"""The API takes JSON bodies only: anything else is a 415 problem, decided before any handler,
so a body never reaches the rules as an accidental JSON parse and never costs a strike."""

from __future__ import annotations

import gc

import orjson
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from services.app import create_app
from services.content_type import is_json
from tests.service.conftest import SettingsFactory
from tests.service.helpers import ADMIN_HEADERS, bearer, create_game, create_player

SEAT0_FIRST = {"mode": "short12", "first_declarer": "seat0"}


@pytest.mark.parametrize(
    ("content_type", "json"),
    [
        ("application/json", True),
        ("application/json; charset=utf-8", True),
        ("Application/JSON", True),
        ("application/problem+json", True),
        ("text/plain", False),
        ("text/json", False),
        ("application/x-www-form-urlencoded", False),
        ("multipart/form-data; boundary=x", False),
        ("", False),
    ],
)
def test_what_counts_as_json(content_type: str, json: bool) -> None:
    assert is_json(content_type) is json


def test_an_action_sent_as_text_is_refused_with_415_and_costs_no_strike(
    make_settings: SettingsFactory,
) -> None:
    with TestClient(create_app(make_settings(decision_seconds=120))) as client:
        ada = create_player(client, "ada")
        game_id = create_game(
            client, ada, ["ada", "house:random", "house:random", "house:random"], rules=SEAT0_FIRST
        )
        seat = client.get(f"/api/v1/games/{game_id}/seats/0", headers=bearer(ada)).json()
        legal = seat["view"]["legal"][0]
        # an illegal action, which as JSON would be refused on the seat's turn with a strike
        body = orjson.dumps({"type": "play", "card": "AS", "version": seat["version"]})
        for content_type in ("text/plain", "application/x-www-form-urlencoded", None):
            headers = {**bearer(ada)}
            if content_type is not None:
                headers["content-type"] = content_type
            r = client.post(f"/api/v1/games/{game_id}/actions", content=body, headers=headers)
            assert r.status_code == 415, (content_type, r.text)
            problem = r.json()
            assert r.headers["content-type"].startswith("application/problem+json")
            assert problem["code"] == "unsupported_media_type"
            assert problem["type"].endswith("/unsupported-media-type")
            assert "application/json" in problem["detail"]
        after = client.get(f"/api/v1/games/{game_id}/seats/0", headers=bearer(ada)).json()
        assert after["version"] == seat["version"], "nothing was written"
        assert after["view"]["strikes"] == [0, 0, 0, 0]
        # the same seat's legal action as JSON goes through
        r = client.post(
            f"/api/v1/games/{game_id}/actions",
            content=orjson.dumps({**legal, "version": seat["version"]}),
            headers={**bearer(ada), "content-type": "application/json; charset=utf-8"},
        )
        assert r.status_code == 200, r.text


def test_every_api_post_refuses_a_body_that_is_not_json_and_takes_none_when_none_is_sent(
    make_settings: SettingsFactory,
) -> None:
    with TestClient(create_app(make_settings())) as client:
        text = {**ADMIN_HEADERS, "content-type": "text/plain"}
        r = client.post("/api/v1/players", content=b'{"id": "zed"}', headers=text)
        assert r.status_code == 415
        gone = client.get("/api/v1/players/zed", headers=ADMIN_HEADERS)
        assert gone.status_code == 404, "no player was made"
        ada = create_player(client, "ada")
        table = {"seats": ["ada", "house:random", "house:random", "house:random"], "start": False}
        r = client.post(
            "/api/v1/games",
            content=orjson.dumps(table),
            headers={**bearer(ada), "content-type": "text/plain"},
        )
        assert r.status_code == 415
        r = client.post("/api/v1/games", json=table, headers=bearer(ada))
        assert r.status_code == 201
        game_id = r.json()["game"]["id"]
        # a POST without a body needs no JSON, whatever its Content-Type says
        r = client.post(
            f"/api/v1/games/{game_id}/start",
            headers={**bearer(ada), "content-type": "text/plain", "content-length": "0"},
        )
        assert r.status_code == 200, r.text


def test_a_json_body_is_decoded_once_and_the_handler_gets_that_value(
    make_settings: SettingsFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The strict check's decoded body is the handler's `data`: Litestar decodes no second
    time (its own decoder is never called for the body)."""
    import litestar.connection.request as litestar_request

    calls: list[bytes] = []
    real = litestar_request.decode_json

    def counting(value: bytes, *args: object, **kwargs: object) -> object:
        calls.append(value)
        return real(value, *args, **kwargs)  # type: ignore[arg-type]

    with TestClient(create_app(make_settings(decision_seconds=120))) as client:
        monkeypatch.setattr(litestar_request, "decode_json", counting)
        r = client.post(
            "/api/v1/players",
            content=b'{"id": "bea", "name": "Bea"}',
            headers={**ADMIN_HEADERS, "content-type": "application/json"},
        )
        assert r.status_code == 201, r.text
        assert r.json()["player"]["name"] == "Bea"
        assert calls == []


def test_an_app_that_checked_a_body_is_freed_once_closed(make_settings: SettingsFactory) -> None:
    """The strict body check keeps nothing of the app that answered: the check once cached
    each route handler's body type, and with it every app the process ever made (a test run's
    hundreds of apps stayed in memory, and every full collection of the cycle collector went
    over them again). The process's newest app stays referenced by the module-level socket
    handler it registered, so the first of two apps is the one looked for."""
    apps = [create_app(make_settings()), create_app(make_settings())]
    for app, player in zip(apps, ("ada", "bo"), strict=True):
        with TestClient(app) as client:
            assert create_player(client, player)  # a POST with a JSON body, checked strictly
    first = id(apps[0])  # (a Litestar app takes no weak reference)
    del apps, app, client
    gc.collect()
    assert not any(isinstance(o, Litestar) and id(o) == first for o in gc.get_objects())
