"""A player's games come from the seats index (king_game_seats): migration king0002 fills it
for the games already there, new tables add their four rows, and the listing by player equals
what reading every game's seats would give."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import orjson
import sqlalchemy as sa
from litestar.testing import TestClient

from eventstore import migrate as store_migrate
from eventstore.backends import create_engines
from services.app import create_app
from services.database import store_settings, upgrade_all
from services.db.migrate import upgrade_engines
from services.db.seats import fill_missing_seats
from tests.service.conftest import SettingsFactory
from tests.service.helpers import ADMIN_HEADERS, create_player


def test_the_migration_fills_the_seats_of_existing_games(
    backend_settings: SettingsFactory,
) -> None:
    settings = backend_settings()
    upgrade_all(settings)  # then back to king0001, with games from before the index
    engines = create_engines(settings.url, store_settings(settings))
    try:
        seats = {"a": ["ada", "bo", "house:random", "cem"], "b": ["bo", "ada", "dee", "eve"]}
        with engines.write.begin() as conn:
            conn.execute(sa.text("DROP TABLE king_game_seats"))
            conn.execute(sa.text("DROP TABLE king_game_streams"))  # added by king0003
            conn.execute(sa.text("DROP TABLE king_ratings"))
            conn.execute(sa.text("DROP TABLE king_action_keys"))  # added by king0004
            conn.execute(sa.text("DROP TABLE king_invitations"))  # added by king0005
            conn.execute(sa.text("DROP TABLE king_lobby_tables"))  # added by king0007
            conn.execute(sa.text("UPDATE king_alembic_version SET version_num = 'king0001'"))
            now = datetime.now(UTC)
            for game_id, owners in seats.items():
                conn.execute(
                    sa.text(
                        "INSERT INTO king_games (id, status, seats, rules, decision_ms, "
                        "client_seed, created_by, created_at, updated_at) VALUES "
                        "(:id, 'over', :seats, '{}', 1000, '', 'admin', :now, :now)"
                    ),
                    {"id": game_id, "seats": orjson.dumps(owners).decode(), "now": now},
                )
        store_migrate.upgrade_engines(engines)
        upgrade_engines(engines)
        with engines.read.connect() as conn:
            rows = conn.execute(
                sa.text("SELECT game_id, seat, player_id FROM king_game_seats")
            ).all()
        assert sorted(rows) == sorted(
            (g, s, p) for g, owners in seats.items() for s, p in enumerate(owners)
        )
    finally:
        engines.dispose()


def test_listing_by_player_equals_a_scan_of_every_game(
    backend_settings: SettingsFactory,
) -> None:
    rng = random.Random(7)
    people = ["ada", "bo", "cem", "dee", "eve", "fay"]
    with TestClient(create_app(backend_settings(run_driver=False))) as client:
        token = create_player(client, "owner")
        for p in people:
            create_player(client, p)
        made: dict[str, list[str]] = {}
        for _ in range(12):
            owners = [*rng.sample(people, 2), "house:random", "house:random"]
            rng.shuffle(owners)
            r = client.post(
                "/api/v1/games",
                json={"seats": owners, "start": False},
                headers={"authorization": f"Bearer {token}"},
            )
            assert r.status_code == 201, r.text
            made[r.json()["game"]["id"]] = owners
        for player in [*people, "house:random", "nobody"]:
            listed = client.get("/api/v1/games", params={"player": player, "limit": 500}).json()
            expected = {g for g, owners in made.items() if player in owners}
            assert {g["id"] for g in listed} == expected, player
            assert len(listed) == len(expected)  # each game once, even with two house seats
        page = client.get("/api/v1/games", params={"player": "house:random", "limit": 5}).json()
        rest = client.get(
            "/api/v1/games", params={"player": "house:random", "limit": 500, "offset": 5}
        ).json()
        assert len(page) == 5 and {g["id"] for g in page}.isdisjoint(g["id"] for g in rest)
        assert len(page) + len(rest) == 12
        assert client.get("/api/v1/games", headers=ADMIN_HEADERS).status_code == 200


def test_a_game_made_by_an_older_release_gets_its_seats_when_a_process_starts(
    backend_settings: SettingsFactory,
) -> None:
    settings = backend_settings()
    upgrade_all(settings)
    engines = create_engines(settings.url, store_settings(settings))
    try:
        with engines.write.begin() as conn:  # what a process without the index wrote
            conn.execute(
                sa.text(
                    "INSERT INTO king_games (id, status, seats, rules, decision_ms, "
                    "client_seed, created_by, created_at, updated_at) VALUES "
                    "('old', 'over', :seats, '{}', 1000, '', 'admin', :now, :now)"
                ),
                {
                    "seats": orjson.dumps(["ada", "bo", "cem", "dee"]).decode(),
                    "now": datetime.now(UTC),
                },
            )
        with TestClient(create_app(settings)) as client:
            listed = client.get("/api/v1/games", params={"player": "cem"}).json()
            assert [g["id"] for g in listed] == ["old"]
        assert fill_missing_seats(engines.write) == 0  # nothing left to fill
    finally:
        engines.dispose()
