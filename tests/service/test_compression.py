"""Responses worth compressing are gzipped for a client that accepts it; event streams and
the answer to an action are not (each stream message must leave at once, and an action's
answer is small and on the bot's clock)."""

from __future__ import annotations

from litestar.testing import TestClient

from services.app import create_app
from tests.service.conftest import SettingsFactory
from tests.service.helpers import bearer, create_game, create_player, wait_over

HOUSE = ["house:random", "house:heuristic", "house:random", "house:random"]
GZIP = {"accept-encoding": "gzip"}


def test_records_and_pages_are_gzipped_streams_and_actions_are_not(
    make_settings: SettingsFactory,
) -> None:
    with TestClient(create_app(make_settings(decision_seconds=60))) as client:
        token = create_player(client, "owner")
        game_id = create_game(client, token, HOUSE)
        wait_over(client, game_id)
        for path in (
            f"/api/v1/games/{game_id}/record",
            f"/games/{game_id}",
            "/schema/openapi.json",
        ):
            r = client.get(path, headers=GZIP)
            assert r.status_code == 200, path
            assert r.headers.get("content-encoding") == "gzip", path
            assert "accept-encoding" in r.headers.get("vary", "").lower(), path
        plain = client.get(
            f"/api/v1/games/{game_id}/record", headers={"accept-encoding": "identity"}
        )
        assert "content-encoding" not in plain.headers
        raw = client.get(f"/api/v1/games/{game_id}/record", headers=GZIP)
        assert raw.content == plain.content  # the test client decodes: the same document
        stream = client.get(
            f"/api/v1/games/{game_id}/events",
            params={"format": "ndjson", "follow": False},
            headers=GZIP,
        )
        assert stream.status_code == 200 and "content-encoding" not in stream.headers
        assert stream.text.count("\n") > 100
        # an action's answer: a live game with a seat for ada
        ada = create_player(client, "ada")
        live = create_game(client, ada, ["ada", *HOUSE[1:]], rules={"first_declarer": "seat0"})
        view = client.get(f"/api/v1/games/{live}/seats/0", headers=bearer(ada)).json()
        action = {**view["view"]["legal"][0], "version": view["version"]}
        r = client.post(
            f"/api/v1/games/{live}/actions", json=action, headers={**bearer(ada), **GZIP}
        )
        assert r.status_code == 200 and "content-encoding" not in r.headers
        assert len(r.content) > 1024  # big enough to be compressed, were it not left out
