"""Accounts over the API: sign-up, log-in, scoped tokens, bots owned by accounts, the admin's
disable and revoke, and the bad input the issue lists (weak or over-long passwords, duplicate
and look-alike names): each a clear refusal with nothing stored."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from services import identity
from services.app import create_app
from tests.service.conftest import SettingsFactory
from tests.service.helpers import ADMIN_HEADERS, bearer, create_player, wait_for

PASSWORD = "correct horse battery"


def sign_up(client: Any, name: str, password: str = PASSWORD, **extra: Any) -> dict[str, Any]:
    r = client.post("/api/v1/accounts", json={"name": name, "password": password, **extra})
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


def make_token(
    client: Any, token: str, name: str, scopes: list[str], player: str | None = None
) -> str:
    body: dict[str, Any] = {"name": name, "scopes": scopes}
    if player is not None:
        body["player"] = player
    r = client.post("/api/v1/me/tokens", json=body, headers=bearer(token))
    assert r.status_code == 201, r.text
    return str(r.json()["token"])


def player_ids(client: Any) -> list[str]:
    r = client.get("/api/v1/players", headers=ADMIN_HEADERS)
    return [p["id"] for p in r.json()]


def without_request_id(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != "request_id"}


@pytest.fixture
def accounts_client(backend_settings: SettingsFactory) -> Iterator[TestClient[Any]]:
    with TestClient(create_app(backend_settings(login_burst=1000))) as c:
        yield c


def test_sign_up_gives_a_working_token_and_the_account_page(
    accounts_client: TestClient[Any],
) -> None:
    client = accounts_client
    body = sign_up(client, "Ada", display_name="Ada Lovelace")
    assert body["player"]["id"] == "ada" and body["player"]["name"] == "Ada Lovelace"
    assert PASSWORD not in str(body)
    assert body["info"]["scopes"] == ["play", "read"] and body["info"]["name"] == "sign-up"
    token = body["token"]
    me = client.get("/api/v1/me", headers=bearer(token))
    assert me.status_code == 200 and me.json()["id"] == "ada"
    account = client.get("/api/v1/me/account", headers=bearer(token)).json()
    assert account["player"]["id"] == "ada" and account["bots"] == []
    [listed] = account["tokens"]
    assert token not in str(account) and listed["id"] == body["info"]["id"]
    # The token was used just now: its last-used time is set.
    assert listed["last_used_at"] is not None


def test_log_in_and_log_out(accounts_client: TestClient[Any]) -> None:
    client = accounts_client
    sign_up(client, "bora")
    r = client.post("/api/v1/login", json={"name": "BORA", "password": PASSWORD})
    assert r.status_code == 201, r.text
    token = r.json()["token"]
    assert client.get("/api/v1/me", headers=bearer(token)).json()["id"] == "bora"
    r = client.post("/api/v1/logout", headers=bearer(token))
    assert r.status_code == 200 and r.json() == {"revoked_tokens": 1}
    assert client.get("/api/v1/me", headers=bearer(token)).status_code == 401


def test_a_wrong_password_and_an_unknown_name_get_one_answer(
    accounts_client: TestClient[Any],
) -> None:
    client = accounts_client
    sign_up(client, "cem")
    wrong = client.post("/api/v1/login", json={"name": "cem", "password": "not the password"})
    unknown = client.post("/api/v1/login", json={"name": "nobody", "password": PASSWORD})
    refused = client.post("/api/v1/login", json={"name": "аda", "password": PASSWORD})
    for r in (wrong, unknown, refused):
        assert r.status_code == 401, r.text
    assert without_request_id(wrong.json()) == without_request_id(unknown.json())
    assert without_request_id(wrong.json()) == without_request_id(refused.json())
    assert wrong.json()["code"] == "login_failed"


@pytest.mark.parametrize(
    ("name", "password", "status", "code"),
    [
        ("dan", "short", 422, "weak_password"),
        ("dan", "x" * 129, 422, "weak_password"),
        ("dan", "aaaaabbbbbaaaaa", 422, "weak_password"),  # two distinct characters
        ("dan", "dan-and-more-words", 422, "weak_password"),  # holds the name
        ("dan", "1234567890", 422, "weak_password"),  # a common one
        ("dan", "x" * 2000, 400, "invalid_request"),  # over the body's bound
        ("аdam", PASSWORD, 422, "bad_name"),  # a Cyrillic а
        ("ad am", PASSWORD, 422, "bad_name"),
        ("admin", PASSWORD, 422, "bad_name"),
        ("house-bot", PASSWORD, 422, "bad_name"),
        ("x" * 41, PASSWORD, 422, "bad_name"),
    ],
)
def test_bad_sign_ups_are_refused_and_store_nothing(
    client: TestClient[Any], name: str, password: str, status: int, code: str
) -> None:
    before = player_ids(client)
    r = client.post("/api/v1/accounts", json={"name": name, "password": password})
    assert r.status_code == status, r.text
    assert r.json()["code"] == code
    assert password not in r.text
    assert player_ids(client) == before


def test_duplicate_and_look_alike_names_are_refused(accounts_client: TestClient[Any]) -> None:
    client = accounts_client
    sign_up(client, "eda")
    for name in ("EDA", "Ｅｄａ", " eda "):  # case, full-width forms, spaces: one name
        r = client.post("/api/v1/accounts", json={"name": name, "password": PASSWORD})
        assert r.status_code == 409 and r.json()["code"] == "name_taken", (name, r.text)
    r = client.post("/api/v1/accounts", json={"name": "еda", "password": PASSWORD})  # Cyrillic е
    assert r.status_code == 422 and "looks like a Latin letter" in r.json()["detail"]
    r = client.post(
        "/api/v1/accounts",
        json={"name": "fal", "password": PASSWORD, "display_name": "Pаypal"},  # mixed scripts
    )
    assert r.status_code == 422 and r.json()["code"] == "bad_name"
    assert sorted(player_ids(client)) == ["eda"]


def test_log_in_attempts_are_rate_limited(make_settings: SettingsFactory) -> None:
    with TestClient(create_app(make_settings(login_burst=3, login_per_minute=1))) as client:
        sign_up(client, "gul")  # one attempt of the address's three
        for _ in range(2):
            r = client.post("/api/v1/login", json={"name": "gul", "password": "wrong password!"})
            assert r.status_code == 401
        r = client.post("/api/v1/login", json={"name": "gul", "password": PASSWORD})
        assert r.status_code == 429, r.text
        assert r.json()["code"] == "login_rate_limited"
        assert int(r.headers["retry-after"]) >= 1


def test_a_read_token_cannot_act(accounts_client: TestClient[Any]) -> None:
    client = accounts_client
    token = sign_up(client, "hale")["token"]
    read = make_token(client, token, "watcher", ["read"])
    assert client.get("/api/v1/me", headers=bearer(read)).status_code == 200
    game = {"seats": ["hale", "house:random", "house:random", "house:random"]}
    for method, path, body in (
        ("POST", "/api/v1/games", game),
        ("POST", "/api/v1/me/token", None),
        ("PUT", "/api/v1/me/bot", {"url": None}),
        ("POST", "/api/v1/me/tokens", {"name": "more", "scopes": ["play"]}),
        ("POST", "/api/v1/me/bots", {"name": "hale-bot"}),
        ("POST", "/api/v1/lobby/quick-game", {}),
        ("POST", "/api/v1/lobby/tables", {"seats": ["person"] * 4}),
    ):
        r = client.request(method, path, json=body, headers=bearer(read))
        assert r.status_code == 403, (path, r.text)
        assert "read scope" in r.json()["detail"] or "play scope" in r.json()["detail"]
    assert client.get("/api/v1/lobby", headers=bearer(read)).json()["tables"] == []
    # The play token acts.
    r = client.post("/api/v1/games", json=game, headers=bearer(token))
    assert r.status_code == 201, r.text
    # A read token may log itself out.
    assert client.post("/api/v1/logout", headers=bearer(read)).status_code == 200


def test_bots_belong_to_their_account_and_act_only_for_themselves(
    accounts_client: TestClient[Any],
) -> None:
    client = accounts_client
    ilk = sign_up(client, "ilk")["token"]
    jan = sign_up(client, "jan")["token"]
    for name in ("ilk-one", "ilk-two"):
        r = client.post("/api/v1/me/bots", json={"name": name}, headers=bearer(ilk))
        assert r.status_code == 201 and r.json()["owner"] == "ilk", r.text
    one = make_token(client, ilk, "one", ["bot"], player="ilk-one")
    two = make_token(client, ilk, "two", ["read", "bot"], player="ilk-two")
    assert client.get("/api/v1/me", headers=bearer(one)).json()["id"] == "ilk-one"
    # A bot token has no account scope: no tokens, no bots of its own.
    r = client.post("/api/v1/me/tokens", json={"name": "x", "scopes": ["bot"]}, headers=bearer(one))
    assert r.status_code == 403
    # Scopes must fit the player: no `bot` for the account, no `play` for a bot.
    for body in (
        {"name": "x", "scopes": ["bot"]},
        {"name": "x", "scopes": ["play"], "player": "ilk-one"},
    ):
        r = client.post("/api/v1/me/tokens", json=body, headers=bearer(ilk))
        assert r.status_code == 422 and r.json()["code"] == "bad_scopes", r.text
    # Nobody makes tokens for, or enters, another account's bot.
    r = client.post(
        "/api/v1/me/tokens",
        json={"name": "x", "scopes": ["bot"], "player": "ilk-one"},
        headers=bearer(jan),
    )
    assert r.status_code == 403
    # A table seating both bots: bot one's token cannot act in bot two's seat.
    r = client.post(
        "/api/v1/games",
        json={"seats": ["ilk-one", "ilk-two", "house:random", "house:random"]},
        headers=bearer(one),
    )
    assert r.status_code == 201, r.text
    game_id = r.json()["game"]["id"]
    [invitation] = client.get("/api/v1/me/invitations", headers=bearer(two)).json()["received"]
    r = client.post(f"/api/v1/invitations/{invitation['id']}/accept", headers=bearer(one))
    assert r.status_code in (403, 404), r.text  # bot one cannot answer for bot two
    r = client.post(f"/api/v1/invitations/{invitation['id']}/accept", headers=bearer(two))
    assert r.status_code == 200, r.text
    wait_for(
        lambda: client.get(f"/api/v1/games/{game_id}").json()["game"]["status"] == "live",
        "the game to start",
    )
    assert client.get(f"/api/v1/games/{game_id}/seats/1", headers=bearer(one)).status_code == 403
    assert client.get(f"/api/v1/games/{game_id}/seats/1", headers=bearer(two)).status_code == 200
    r = client.post(
        f"/api/v1/games/{game_id}/actions",
        json={"type": "redeal", "seat": 1, "version": 0},
        headers=bearer(one),
    )
    assert r.status_code == 403, r.text
    listed = client.get("/api/v1/me/tokens", headers=bearer(ilk)).json()
    assert {t["player"] for t in listed} == {"ilk", "ilk-one", "ilk-two"}
    # The bot's public page: its owner, no URL for strangers.
    r = client.get("/api/v1/bots/ilk-one", headers=bearer(jan))
    assert r.status_code == 200 and r.json()["owner"] == "ilk"


def test_a_bot_token_cannot_enter_another_bot(accounts_client: TestClient[Any]) -> None:
    client = accounts_client
    owner = sign_up(client, "kaan")["token"]
    for name in ("kaan-a", "kaan-b"):
        assert (
            client.post("/api/v1/me/bots", json={"name": name}, headers=bearer(owner)).status_code
            == 201
        )
    a = make_token(client, owner, "a", ["bot"], player="kaan-a")
    body = {"id": "open-1", "rules": {"mode": "short12"}, "players": [{"strategy": "random"}] * 3}
    assert client.post("/api/v1/tournaments", json=body, headers=ADMIN_HEADERS).status_code == 201
    r = client.post(
        "/api/v1/tournaments/open-1/players", json={"player": "kaan-b"}, headers=bearer(a)
    )
    assert r.status_code == 403, r.text
    # The bot's own token enters the bot; the owner's account token enters its other bot.
    r = client.post("/api/v1/tournaments/open-1/players", headers=bearer(a))
    assert r.status_code == 201, r.text
    r = client.post(
        "/api/v1/tournaments/open-1/players", json={"player": "kaan-b"}, headers=bearer(owner)
    )
    assert r.status_code == 201, r.text
    entered = {p["id"] for p in r.json()["tournament"]["players"]}
    assert {"kaan-a", "kaan-b"} <= entered


def test_a_token_made_and_revoked(accounts_client: TestClient[Any]) -> None:
    client = accounts_client
    token = sign_up(client, "lale")["token"]
    r = client.post(
        "/api/v1/me/tokens",
        json={"name": "laptop", "scopes": ["read", "play"]},
        headers=bearer(token),
    )
    made = r.json()
    assert client.get("/api/v1/me", headers=bearer(made["token"])).status_code == 200
    listed = client.get("/api/v1/me/tokens", headers=bearer(token)).json()
    assert made["token"] not in str(listed)
    assert {t["name"] for t in listed} == {"sign-up", "laptop"}
    r = client.delete(f"/api/v1/me/tokens/{made['info']['id']}", headers=bearer(token))
    assert r.status_code == 200, r.text
    assert client.get("/api/v1/me", headers=bearer(made["token"])).status_code == 401
    # Another account cannot revoke (or learn of) this account's tokens.
    other = sign_up(client, "mert")["token"]
    sign_up_id = listed[-1]["id"] if listed[-1]["name"] == "sign-up" else listed[0]["id"]
    r = client.delete(f"/api/v1/me/tokens/{sign_up_id}", headers=bearer(other))
    assert r.status_code == 404
    assert client.get("/api/v1/me", headers=bearer(token)).status_code == 200


def test_admin_disables_an_account_and_revokes_its_tokens(
    accounts_client: TestClient[Any],
) -> None:
    client = accounts_client
    token = sign_up(client, "nur")["token"]
    client.post("/api/v1/me/bots", json={"name": "nur-bot"}, headers=bearer(token))
    bot = make_token(client, token, "b", ["bot"], player="nur-bot")
    r = client.put("/api/v1/accounts/nur/disabled", json={"disabled": True}, headers=bearer(token))
    assert r.status_code == 403
    r = client.put("/api/v1/accounts/nur/disabled", json={"disabled": True}, headers=ADMIN_HEADERS)
    assert r.status_code == 200 and r.json() == {
        "player": "nur",
        "disabled": True,
        "revoked_tokens": 2,
    }
    for t in (token, bot):
        assert client.get("/api/v1/me", headers=bearer(t)).status_code == 401
    r = client.post("/api/v1/login", json={"name": "nur", "password": PASSWORD})
    assert r.status_code == 401 and r.json()["code"] == "login_failed"
    r = client.put("/api/v1/accounts/nur/disabled", json={"disabled": False}, headers=ADMIN_HEADERS)
    assert r.status_code == 200
    token = client.post("/api/v1/login", json={"name": "nur", "password": PASSWORD}).json()["token"]
    # Revoke without disabling; an admin-made player's tokens too.
    legacy = create_player(client, "oya")
    for pid, n in (("nur", 1), ("oya", 1)):
        r = client.post(f"/api/v1/players/{pid}/revoke-tokens", headers=ADMIN_HEADERS)
        assert r.status_code == 200 and r.json() == {"revoked_tokens": n}, r.text
    for t in (token, legacy):
        assert client.get("/api/v1/me", headers=bearer(t)).status_code == 401
    r = client.post("/api/v1/players/nobody/revoke-tokens", headers=ADMIN_HEADERS)
    assert r.status_code == 404


def test_admin_made_tokens_keep_every_scope(client: TestClient[Any]) -> None:
    token = create_player(client, "pel")
    r = client.post(
        "/api/v1/games",
        json={"seats": ["pel", "house:random", "house:random", "house:random"]},
        headers=bearer(token),
    )
    assert r.status_code == 201, r.text
    rotated = client.post("/api/v1/me/token", headers=bearer(token)).json()["token"]
    assert (
        client.put("/api/v1/me/bot", json={"url": None}, headers=bearer(rotated)).status_code == 200
    )
    # An admin-made player has no account: no account page, no tokens of its own making.
    assert client.get("/api/v1/me/account", headers=bearer(rotated)).status_code == 403
    r = client.post(
        "/api/v1/me/tokens", json={"name": "x", "scopes": ["read"]}, headers=bearer(rotated)
    )
    assert r.status_code == 403


def test_a_token_revoked_by_another_process_is_refused_once_its_grant_is_stale(
    backend_settings: SettingsFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two apps on one database (two processes): one caches a token, the other revokes it
    (the admin disables the account); the first refuses it once its cached grant is older than
    GRANT_SECONDS (0 here, so at once; 30 s in service)."""
    from services import identity

    settings = backend_settings(login_burst=1000)
    with TestClient(create_app(settings)) as a, TestClient(create_app(settings)) as b:
        token = sign_up(a, "rana")["token"]
        assert a.get("/api/v1/me", headers=bearer(token)).status_code == 200  # cached in a
        r = b.put("/api/v1/accounts/rana/disabled", json={"disabled": True}, headers=ADMIN_HEADERS)
        assert r.status_code == 200 and r.json()["revoked_tokens"] == 1
        assert a.get("/api/v1/me", headers=bearer(token)).status_code == 200  # a's grant is fresh
        monkeypatch.setattr(identity, "GRANT_SECONDS", 0.0)
        assert a.get("/api/v1/me", headers=bearer(token)).status_code == 401


def test_a_bots_versions_are_declared_by_its_owner(accounts_client: TestClient[Any]) -> None:
    """Version 1 comes with the bot (its label given or "1"); the owner declares the next ones,
    with or without a new URL; nobody else can, and bad labels are refused with nothing kept."""
    client = accounts_client
    kai = sign_up(client, "kai")["token"]
    lea = sign_up(client, "lea")["token"]
    r = client.post(
        "/api/v1/me/bots", json={"name": "kai-bot", "version": "0.9 beta"}, headers=bearer(kai)
    )
    assert r.status_code == 201, r.text
    assert [(v["number"], v["label"]) for v in r.json()["versions"]] == [(1, "0.9 beta")]
    r = client.post("/api/v1/me/bots", json={"name": "kai-two"}, headers=bearer(kai))
    assert [v["label"] for v in r.json()["versions"]] == ["1"]

    path = "/api/v1/me/bots/kai-bot/versions"
    r = client.post(path, json={"label": "  1.0  "}, headers=bearer(kai))
    assert r.status_code == 201, r.text
    assert (r.json()["number"], r.json()["label"], r.json()["bot_url"]) == (2, "1.0", None)
    for body, code in (
        ({"label": "   "}, 422),
        ({"label": "x" * 61}, 400),
        ({"label": "tab\there"}, 422),
        ({}, 400),
        ({"label": "2", "colour": "red"}, 400),
    ):
        r = client.post(path, json=body, headers=bearer(kai))
        assert r.status_code == code, (body, r.text)
        assert "Traceback" not in r.text
    r = client.post(path, json={"label": "stolen"}, headers=bearer(lea))  # not lea's bot
    assert r.status_code == 403 and r.json()["code"] == "not_yours", r.text
    read = make_token(client, kai, "reader", ["read"])
    assert client.post(path, json={"label": "3"}, headers=bearer(read)).status_code == 403
    bot_token = make_token(client, kai, "bot", ["bot"], player="kai-bot")
    assert client.post(path, json={"label": "3"}, headers=bearer(bot_token)).status_code == 403
    r = client.post("/api/v1/me/bots/nobody/versions", json={"label": "1"}, headers=bearer(kai))
    assert r.status_code == 403

    r = client.post(  # a URL the guard refuses: no version, the bot unchanged
        path, json={"label": "3", "bot_url": "http://169.254.169.254/"}, headers=bearer(kai)
    )
    assert r.status_code == 422, r.text
    seen = client.get("/api/v1/bots/kai-bot", headers=bearer(lea)).json()
    assert [(v["number"], v["label"]) for v in seen["versions"]] == [(1, "0.9 beta"), (2, "1.0")]
    r = client.post(path, json={"label": "3", "bot_url": None}, headers=bearer(kai))
    assert r.status_code == 201 and r.json()["number"] == 3, r.text
    assert client.get("/api/v1/bots/kai", headers=bearer(lea)).json()["versions"] == []


def count_hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts `hash_token` is called with from now on, wherever the service calls it."""
    calls: list[str] = []
    original = identity.hash_token

    def counting(token: str) -> str:
        calls.append(token)
        return original(token)

    for name, module in list(sys.modules.items()):
        if name.startswith("services") and getattr(module, "hash_token", None) is original:
            monkeypatch.setattr(module, "hash_token", counting)
    return calls


@pytest.mark.parametrize("limited", [False, True], ids=["no-rate-limit", "rate-limit"])
def test_an_authenticated_request_hashes_its_token_once(
    make_settings: SettingsFactory, monkeypatch: pytest.MonkeyPatch, limited: bool
) -> None:
    """Looking the token up and noting its last-used time share one hash (the last-used
    bookkeeping hashed the token a second time), and with the rate limiter on, its in-memory
    lookup's hash is reused too: a bearer token or a session cookie, read from the database
    or known to the process, and an unknown token, each hashed once per request."""
    limits = {"rate_limit_per_second": 1000, "rate_limit_burst": 1000} if limited else {}
    with TestClient(create_app(make_settings(login_burst=1000, **limits))) as client:
        token = sign_up(client, "hana")["token"]
        services = client.app.state.king
        secret = services.accounts.open_session("hana", timedelta(days=1))
        services.players.forget_tokens(player_ids={"hana"})  # the first requests read the rows
        calls = count_hashes(monkeypatch)
        for _ in range(3):  # read from the database, then known, then known and not due
            assert client.get("/api/v1/me", headers=bearer(token)).json()["id"] == "hana"
            assert calls == [token], calls
            calls.clear()
            r = client.get("/api/v1/me", headers={"cookie": f"king_session={secret}"})
            assert r.status_code == 200 and r.json()["id"] == "hana"
            assert calls == [secret], calls
            calls.clear()
            assert client.get("/api/v1/me", headers=bearer("king_nope")).status_code == 401
            assert calls == ["king_nope"], calls
            calls.clear()
        account = client.get("/api/v1/me/account", headers=bearer(token)).json()
        assert all(t["last_used_at"] is not None for t in account["tokens"])


def test_the_service_hashes_passwords_with_argon2id_at_its_default_cost() -> None:
    """The tests' own processes hash at the lowest cost (tests/conftest.py); the service, in a
    process of its own as it runs, hashes with argon2-cffi's defaults."""
    code = (
        "from services.accounts.passwords import hash_password, verify_password\n"
        "stored = hash_password('a tested password')\n"
        "assert verify_password(stored, 'a tested password')\n"
        "assert not verify_password(stored, 'another password')\n"
        "print(stored)\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("$argon2id$v=19$m=65536,t=3,p=4$"), done.stdout
