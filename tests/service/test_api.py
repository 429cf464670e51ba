"""The HTTP API through Litestar's TestClient: identities, tables, errors, house games."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from domain.record import check_record
from eventstore import StoreBusy
from services.app import create_app
from services.identity import hash_token
from tests.service.conftest import SettingsFactory
from tests.service.helpers import (
    ADMIN_HEADERS,
    bearer,
    create_game,
    create_player,
    wait_over,
)
from tournament.games import GameBusy

HOUSE4 = ["house:random", "house:heuristic", "house:random", "house:heuristic"]


def problem(r: Any, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = r.json()
    assert body["status"] == status and body["title"] and "Traceback" not in r.text
    return body


def test_players_need_the_admin_token_and_tokens_are_shown_once(client: TestClient) -> None:  # type: ignore[type-arg]
    problem(client.post("/api/v1/players", json={"id": "ada"}), 401)
    token = create_player(client, "ada")
    problem(client.post("/api/v1/players", json={"id": "bora"}, headers=bearer(token)), 403)
    problem(client.post("/api/v1/players", json={"id": "ada"}, headers=ADMIN_HEADERS), 409)
    me = client.get("/api/v1/me", headers=bearer(token)).json()
    assert me["id"] == "ada" and "token" not in me
    assert client.get("/api/v1/players/ada", headers=bearer(token)).json()["id"] == "ada"
    problem(client.get("/api/v1/me", headers=bearer("king_nope")), 401)
    problem(client.get("/api/v1/me", headers={"authorization": "Basic abc"}), 401)
    rotated = client.post("/api/v1/me/token", headers=bearer(token))
    assert rotated.status_code == 201
    problem(client.get("/api/v1/me", headers=bearer(token)), 401)
    assert client.get("/api/v1/me", headers=bearer(rotated.json()["token"])).status_code == 200


def test_the_admin_s_own_name_cannot_be_a_player_id(client: TestClient) -> None:  # type: ignore[type-arg]
    # Tables the admin sets are `created_by` "admin": a player of that id would pass for the admin.
    body = problem(client.post("/api/v1/players", json={"id": "admin"}, headers=ADMIN_HEADERS), 422)
    assert "reserved" in body["detail"]
    assert client.get("/api/v1/players/admin", headers=ADMIN_HEADERS).status_code == 404


def test_a_bot_url_is_shown_only_to_its_player_and_the_admin(client: TestClient) -> None:  # type: ignore[type-arg]
    url = "http://127.0.0.1:9/king"
    r = client.post("/api/v1/players", json={"id": "robo", "bot_url": url}, headers=ADMIN_HEADERS)
    assert r.status_code == 201 and r.json()["player"]["bot_url"] == url
    robo = r.json()["token"]
    ada = create_player(client, "ada")

    def urls(headers: dict[str, str]) -> dict[str, Any]:
        listed = client.get("/api/v1/players", headers=headers).json()
        return {p["id"]: p["bot_url"] for p in listed}

    # another player sees that robo is a bot, not where it lives
    assert urls(bearer(ada)) == {"robo": None, "ada": None}
    other = client.get("/api/v1/players/robo", headers=bearer(ada)).json()
    assert other["kind"] == "bot" and other["bot_url"] is None
    for headers in (bearer(robo), ADMIN_HEADERS):
        assert urls(headers) == {"robo": url, "ada": None}
        assert client.get("/api/v1/players/robo", headers=headers).json()["bot_url"] == url
    assert client.get("/api/v1/me", headers=bearer(robo)).json()["bot_url"] == url
    moved = "http://127.0.0.1:10/king"
    r = client.put("/api/v1/me/bot", json={"url": moved}, headers=bearer(robo))
    assert r.json()["bot_url"] == moved
    assert client.get("/api/v1/players/robo", headers=bearer(ada)).json()["bot_url"] is None


def test_tokens_are_stored_hashed(client: TestClient) -> None:  # type: ignore[type-arg]
    token = create_player(client, "ada")
    services = client.app.state.king
    with services.store.engines.read.connect() as conn:
        import sqlalchemy as sa

        rows = conn.execute(sa.text("select token_hash from king_tokens")).all()
    assert rows and all(token not in r[0] for r in rows)


def test_bad_tables_are_refused_with_a_reason(client: TestClient) -> None:  # type: ignore[type-arg]
    token = create_player(client, "ada")
    h = bearer(token)
    cases: list[dict[str, Any]] = [
        {"seats": ["ada", "ghost", "house:random", "house:random"]},
        {"seats": ["ada", "ada", "house:random", "house:random"]},
        {"seats": ["ada", "house:nobody", "house:random", "house:random"]},
        {"seats": HOUSE4, "rules": {"mode": "blitz"}},
        {"seats": HOUSE4, "rules": {"no_such_rule": True}},
    ]
    for body in cases:  # they fit the document but are no table: refused for what they ask
        assert problem(client.post("/api/v1/games", json=body, headers=h), 422)["code"] == (
            "bad_table"
        )
    for body in [  # they do not fit the document
        {"seats": HOUSE4, "decision_seconds": 0},
        {"seats": HOUSE4, "id": "../etc"},
        {"seats": HOUSE4, "surprise": 1},
        {"seats": HOUSE4, "start": 0},
        {"seats": ["ada", "house:random", "house:random"]},
        {"seats": "ada"},
    ]:
        assert problem(client.post("/api/v1/games", json=body, headers=h), 400)["code"] == (
            "invalid_request"
        )
    as_json = {**h, "content-type": "application/json"}
    problem(client.post("/api/v1/games", content=b"{not json", headers=as_json), 400)
    problem(client.post("/api/v1/games", content=b"{not json", headers=h), 415)  # no type
    problem(client.post("/api/v1/games", json={"seats": HOUSE4}), 401)
    assert client.get("/api/v1/games").json() == []


def test_a_house_game_runs_to_the_end_and_its_record_checks(client: TestClient) -> None:  # type: ignore[type-arg]
    token = create_player(client, "ada")
    game_id = create_game(client, token, HOUSE4, id="house-1")
    assert game_id == "house-1"
    final = wait_over(client, game_id)
    view = final["view"]
    assert view["phase"] == "over" and view["seed"] is not None and view["hand"] is None
    record = client.get(f"/api/v1/games/{game_id}/record").json()
    status, checked = check_record(record)
    assert status == 0, checked
    assert checked["finished"] and checked["totals"] == view["totals"]
    assert checked["winners"] == view["winners"]
    audit = client.get(f"/api/v1/games/{game_id}/audit").json()
    assert audit["ok"] and audit["replay"]["seed_checked"], audit
    listed = client.get("/api/v1/games", params={"status": "over"}).json()
    assert [g["id"] for g in listed] == [game_id]
    problem(client.post(f"/api/v1/games/{game_id}/start", headers=bearer(token)), 409)


def test_tables_can_wait_and_only_their_creator_starts_them(client: TestClient) -> None:  # type: ignore[type-arg]
    ada = create_player(client, "ada")
    bora = create_player(client, "bora")
    r = client.post("/api/v1/games", json={"seats": HOUSE4, "start": False}, headers=bearer(ada))
    assert r.status_code == 201 and r.json()["view"] is None
    game_id = r.json()["game"]["id"]
    assert client.get(f"/api/v1/games/{game_id}").json()["game"]["status"] == "created"
    problem(client.post(f"/api/v1/games/{game_id}/start", headers=bearer(bora)), 403)
    r = client.post(f"/api/v1/games/{game_id}/start", headers=bearer(ada))
    assert r.status_code == 200 and r.json()["game"]["status"] == "live"
    wait_over(client, game_id)


def test_unknown_things_are_404_and_live_audits_are_for_the_admin(
    make_settings: SettingsFactory,
) -> None:
    with TestClient(create_app(make_settings(decision_seconds=60))) as client:
        ada = create_player(client, "ada")
        problem(client.get("/api/v1/games/nope"), 404)
        problem(client.get("/api/v1/games/nope/record"), 404)
        problem(client.get("/api/v1/games/nope/events"), 404)
        problem(client.get("/api/v1/players/nobody", headers=bearer(ada)), 404)
        problem(client.get("/api/v1/nothing-here"), 404)
        game_id = create_game(client, ada, ["ada", "house:random", "house:random", "house:random"])
        problem(client.get(f"/api/v1/games/{game_id}/audit"), 403)
        audit = client.get(f"/api/v1/games/{game_id}/audit", headers=ADMIN_HEADERS).json()
        assert audit["ok"] and not audit["finished"]


def test_bodies_beyond_the_limit_are_refused(make_settings: SettingsFactory) -> None:
    with TestClient(create_app(make_settings(max_body_bytes=2048))) as client:
        token = create_player(client, "ada")
        big = {"seats": HOUSE4, "client_seed": "x" * 5000}
        r = client.post("/api/v1/games", json=big, headers=bearer(token))
        assert r.status_code == 413, r.text
        assert client.get("/api/v1/games").json() == []


def test_rate_limits_answer_429_with_retry_after(make_settings: SettingsFactory) -> None:
    settings = make_settings(rate_limit_per_second=0.01, rate_limit_burst=3)
    with TestClient(create_app(settings)) as client:
        ada = create_player(client, "ada")  # the admin token has a bucket of its own
        assert client.get("/api/v1/me", headers=bearer(ada)).status_code == 200  # address's
        answers = [client.get("/api/v1/games") for _ in range(3)]
        assert [r.status_code for r in answers] == [200, 200, 429]
        # every answer says where the caller stands: a bucket of 3, refilled over 300 s
        assert {r.headers["ratelimit-policy"] for r in answers} == {'"burst";q=3;w=300'}
        left = [r.headers["ratelimit"].split(";")[1] for r in answers]
        assert left == ["r=1", "r=0", "r=0"]  # the address spent one on /me already
        assert all(int(r.headers["ratelimit"].rsplit("t=", 1)[1]) > 100 for r in answers)
        r = client.get("/api/v1/games")
        body = problem(r, 429)
        assert int(r.headers["retry-after"]) >= 1 and "rate limit" in body["detail"]
        # a token the service has recognised has its own bucket; health checks are never limited
        assert client.get("/api/v1/me", headers=bearer(ada)).status_code == 200
        assert client.get("/api/v1/games", headers=ADMIN_HEADERS).status_code == 200
        assert client.get("/health/live").status_code == 200


def test_tokens_are_checked_as_strictly_with_the_rate_limiter_on(
    make_settings: SettingsFactory,
) -> None:
    """The limiter's in-memory token lookup is handed to the request's authentication: a
    revoked, unknown or malformed token is refused all the same, and a token is never taken for
    another one."""
    settings = make_settings(rate_limit_per_second=1000, rate_limit_burst=1000)
    with TestClient(create_app(settings)) as client:
        ada, bora = create_player(client, "ada"), create_player(client, "bora")
        assert client.get("/api/v1/me", headers=bearer(ada)).json()["id"] == "ada"
        assert client.get("/api/v1/me", headers=bearer(bora)).json()["id"] == "bora"
        problem(client.get("/api/v1/me", headers=bearer("king_nope")), 401)
        problem(client.get("/api/v1/me", headers={"authorization": "Bearer"}), 401)
        problem(client.get("/api/v1/me", headers=bearer("x" * 500)), 401)
        problem(client.get("/api/v1/me"), 401)
        rotated = client.post("/api/v1/me/token", headers=bearer(ada))
        assert rotated.status_code == 201
        problem(client.get("/api/v1/me", headers=bearer(ada)), 401)
        assert (
            client.get("/api/v1/me", headers=bearer(rotated.json()["token"])).json()["id"] == "ada"
        )
        assert client.get("/api/v1/me", headers=bearer(bora)).json()["id"] == "bora"


def test_made_up_tokens_share_their_address_bucket(make_settings: SettingsFactory) -> None:
    """Each new junk token used to open a fresh bucket: now they all draw on the address's."""
    settings = make_settings(rate_limit_per_second=0.01, rate_limit_burst=2)
    with TestClient(create_app(settings)) as client:
        junk = [bearer(f"king_junk{i:02d}") for i in range(20)]
        junk += [{"authorization": "Basic abc"}, bearer("x" * 500)]
        responses = [client.get("/api/v1/me", headers=h) for h in junk]
        assert [r.status_code for r in responses[:2]] == [401, 401]
        for r in responses[2:]:
            problem(r, 429)
            assert int(r.headers["retry-after"]) >= 1
        problem(client.get("/api/v1/games"), 429)  # the same address without a token


def test_an_unknown_token_is_looked_up_once(client: TestClient) -> None:  # type: ignore[type-arg]
    players = client.app.state.king.players
    calls: list[str] = []
    authenticate = players.authenticate

    def counting(digest: str) -> Any:
        calls.append(digest)
        return authenticate(digest)

    players.authenticate = counting
    try:
        for _ in range(3):
            problem(client.get("/api/v1/me", headers=bearer("king_nope")), 401)
        ada = create_player(client, "ada")
        for _ in range(3):
            assert client.get("/api/v1/me", headers=bearer(ada)).status_code == 200
    finally:
        del players.authenticate
    assert calls == [hash_token("king_nope"), hash_token(ada)]


def test_busy_games_and_databases_answer_503_with_retry_after(
    client: TestClient,  # type: ignore[type-arg]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GameBusy and StoreBusy used to fall through to a 500."""
    ada = create_player(client, "ada")
    services = client.app.state.king

    def raising(exc: Exception) -> Any:
        async def fail(*_: Any, **__: Any) -> Any:
            raise exc

        return fail

    monkeypatch.setattr(services.games.commands, "act", raising(GameBusy("game 'g' kept changing")))
    r = client.post("/api/v1/games/g/actions", json={"type": "redeal"}, headers=bearer(ada))
    body = problem(r, 503)
    assert body["code"] == "game_busy" and "again" in body["detail"]
    assert int(r.headers["retry-after"]) >= 1
    monkeypatch.setattr(
        services.games, "info", raising(StoreBusy("database busy: SELECT secret FROM x"))
    )
    r = client.get("/api/v1/games/g")
    body = problem(r, 503)
    assert body["code"] == "store_busy" and "SELECT" not in r.text
    assert int(r.headers["retry-after"]) >= 1

    def busy_list(*_: Any) -> Any:
        raise StoreBusy("database busy")

    monkeypatch.setattr(services.players, "list", busy_list)  # a synchronous service, in a thread
    r = client.get("/api/v1/players", headers=bearer(ada))
    assert problem(r, 503)["code"] == "store_busy" and r.headers["retry-after"] == "1"


def test_operations_endpoints(client: TestClient) -> None:  # type: ignore[type-arg]
    assert client.get("/health/live").json() == {"status": "ok"}
    ready = client.get("/health/ready")
    assert ready.status_code == 200 and ready.json()["checks"] == {
        "database": "ok",
        "driver": "ok",
        "leases": "ok",
        "feed": "ok",
    }
    token = create_player(client, "ada")
    game = create_game(client, token, HOUSE4)
    owned = ready.json()["ownership"]
    assert owned["unowned_games"] == 0 and owned["owner"] is not None
    wait_over(client, game)
    metrics = client.get("/metrics").text
    assert "king_appends_total" in metrics and "king_decision_seconds_bucket" in metrics
    sent = [line for line in metrics.splitlines() if line.startswith("king_sql_statements_total")]
    assert len(sent) == 1 and float(sent[0].split()[1]) > 0, sent
    schema = client.get("/schema/openapi.json").json()
    assert "/api/v1/games/{game_id}/actions" in schema["paths"]
    assert client.get("/schema/swagger").status_code == 200
