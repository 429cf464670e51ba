"""HTTP caching of what games publish: a strong ETag over the bytes, 304 for a client that
holds them, `public, immutable` once a game has nothing more to publish, `no-cache` before;
an audit is made on every request, so a changed stream gets a new ETag at once."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from services.app import create_app
from services.caching import IMMUTABLE, matches
from tests.service.conftest import SettingsFactory
from tests.service.helpers import create_game, create_player, wait_over
from tests.service.test_audit_cli import Rows

HOUSE = ["house:random", "house:heuristic", "house:random", "house:random"]


def test_if_none_match_compares_as_the_rfc_says() -> None:
    tag = '"abc"'
    assert matches('"abc"', tag) and matches('W/"abc"', tag) and matches("*", tag)
    assert matches('"x", "abc"', tag)
    assert not matches('"abcd"', tag) and not matches(None, tag) and not matches("", tag)


def _revalidated(client: Any, path: str) -> tuple[Any, Any]:
    first = client.get(path)
    assert first.status_code == 200, first.text
    again = client.get(path, headers={"if-none-match": first.headers["etag"]})
    return first, again


def test_a_finished_games_record_audit_and_replay_are_immutable_and_revalidate_to_304(
    make_settings: SettingsFactory,
) -> None:
    with TestClient(create_app(make_settings())) as client:
        token = create_player(client, "owner")
        game_id = create_game(client, token, HOUSE)
        wait_over(client, game_id)
        for path in (
            f"/api/v1/games/{game_id}/record",
            f"/api/v1/games/{game_id}/audit",
            f"/games/{game_id}/replay.json",
        ):
            first, again = _revalidated(client, path)
            tag = first.headers["etag"]
            assert tag.startswith('"') and tag.endswith('"') and not tag.startswith("W/")
            assert first.headers["cache-control"] == IMMUTABLE, path
            assert first.headers["content-type"].startswith("application/json")
            assert again.status_code == 304 and again.content == b"", path
            assert again.headers["etag"] == tag
            other = client.get(path, headers={"if-none-match": '"something-else"'})
            assert other.status_code == 200 and other.content == first.content


def test_a_live_games_record_must_be_asked_again_and_changes_its_tag_at_the_end(
    make_settings: SettingsFactory,
) -> None:
    with TestClient(create_app(make_settings(decision_seconds=0.3))) as client:
        ada = create_player(client, "ada")
        seats = ["ada", "house:random", "house:random", "house:random"]
        game_id = create_game(
            client, ada, seats, rules={"first_declarer": "seat0", "mode": "short12"}
        )
        path = f"/api/v1/games/{game_id}/record"
        first, again = _revalidated(client, path)  # the first deal has not ended
        assert first.headers["cache-control"] == "no-cache"
        assert again.status_code == 304  # nothing new is public yet
        # ada never acts: she times out three times, and a house bot plays her seat out
        wait_over(client, game_id)
        final = client.get(path, headers={"if-none-match": first.headers["etag"]})
        assert final.status_code == 200 and final.headers["etag"] != first.headers["etag"]
        assert final.headers["cache-control"] == IMMUTABLE


def test_a_changed_stream_is_audited_again_under_a_new_tag(make_settings: SettingsFactory) -> None:
    settings = make_settings()
    with TestClient(create_app(settings)) as client:
        token = create_player(client, "owner")
        game_id = create_game(client, token, HOUSE)
        wait_over(client, game_id)
        path = f"/api/v1/games/{game_id}/audit"
        first = client.get(path)
        assert first.json()["ok"]
        rows = Rows(settings)
        try:
            target = next(r for r in rows.all(game_id) if r.type == "card_played")
            rows.run(
                "UPDATE events SET hash = :h WHERE position = :p", h="0" * 64, p=target.position
            )
        finally:
            rows.close()
        after = client.get(path, headers={"if-none-match": first.headers["etag"]})
        assert after.status_code == 200 and not after.json()["ok"]
        assert after.headers["etag"] != first.headers["etag"]
