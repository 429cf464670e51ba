"""Migration king0006 (accounts) on a database of the release before it: the players and the
tokens the admin made keep working, with every scope, and can act."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from litestar.testing import TestClient

from eventstore.backends import create_engines
from services.app import create_app
from services.database import store_settings, upgrade_all
from services.db.migrate import upgrade_engines
from services.identity import hash_token
from tests.service.conftest import SettingsFactory
from tests.service.helpers import bearer
from tests.service.test_game_seats import downgrade_app

OLD_TOKEN = "king_" + "o" * 43


def test_tokens_made_before_king0006_keep_every_scope(backend_settings: SettingsFactory) -> None:
    settings = backend_settings()
    upgrade_all(settings)
    engines = create_engines(settings.url, store_settings(settings))
    try:
        downgrade_app(engines, "king0005")  # back to king0005, with a player and its token
        with engines.write.begin() as conn:
            now = datetime.now(UTC)
            conn.execute(
                sa.text(
                    "INSERT INTO king_players (id, name, kind, bot_url, created_at) "
                    "VALUES ('old', 'Old', 'human', NULL, :now)"
                ),
                {"now": now},
            )
            conn.execute(
                sa.text(
                    "INSERT INTO king_tokens (token_hash, player_id, created_at, revoked) "
                    "VALUES (:h, 'old', :now, false)"
                ),
                {"h": hash_token(OLD_TOKEN), "now": now},
            )
        upgrade_engines(engines)
    finally:
        engines.dispose()
    with TestClient(create_app(settings)) as client:
        assert client.get("/api/v1/me", headers=bearer(OLD_TOKEN)).json()["id"] == "old"
        game = {"seats": ["old", "house:random", "house:random", "house:random"]}
        r = client.post("/api/v1/games", json=game, headers=bearer(OLD_TOKEN))
        assert r.status_code == 201, r.text
        # The same name cannot be signed up for: the player exists.
        r = client.post("/api/v1/accounts", json={"name": "OLD", "password": "a long password"})
        assert r.status_code == 409
