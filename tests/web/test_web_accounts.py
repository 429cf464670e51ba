"""The account pages without a browser: sign-up, log-in, log-out and the account page over a
session cookie; CSRF refusals; forged cookies; the session as the API's Principal."""

from __future__ import annotations

import re
from typing import Any

from litestar.testing import TestClient

from tests.service.helpers import ADMIN_HEADERS, bearer

PASSWORD = "correct horse battery"


def csrf(client: Any, path: str = "/signup") -> str:
    r = client.get(path)
    assert r.status_code == 200, r.text
    match = re.search(r'name="_csrf_token" value="([^"]+)"', r.text)
    assert match is not None
    return match.group(1)


def sign_up(client: Any, name: str = "ada") -> Any:
    token = csrf(client)
    form = {"name": name, "password": PASSWORD, "password2": PASSWORD, "_csrf_token": token}
    return client.post("/signup", data=form, follow_redirects=False)


def test_sign_up_opens_a_session_the_api_takes_as_the_player(client: TestClient[Any]) -> None:
    r = sign_up(client)
    assert r.status_code == 303 and r.headers["location"] == "/account"
    cookie = next(c for c in r.headers.get_list("set-cookie") if c.startswith("king_session="))
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Secure" not in cookie
    assert PASSWORD not in cookie
    page = client.get("/account")
    assert page.status_code == 200 and 'id="whoami-top"' in page.text
    # The header on every page names who is logged in.
    assert 'data-user="ada"' in client.get("/").text
    # The API takes the session as the same Principal as a bearer token.
    assert client.get("/api/v1/me").json()["id"] == "ada"
    # Acting over the API with the session needs the CSRF header.
    game = {"seats": ["ada", "house:random", "house:random", "house:random"]}
    r = client.post("/api/v1/games", json=game)
    assert r.status_code == 403 and "CSRF" in r.json()["detail"]
    r = client.post(
        "/api/v1/games", json=game, headers={"x-csrftoken": client.cookies["king_csrf"]}
    )
    assert r.status_code == 201, r.text


def test_bearer_requests_need_no_csrf(client: TestClient[Any]) -> None:
    r = client.post("/api/v1/players", json={"id": "bo"}, headers=ADMIN_HEADERS)
    assert r.status_code == 201
    token = r.json()["token"]
    game = {"seats": ["bo", "house:random", "house:random", "house:random"]}
    assert client.post("/api/v1/games", json=game, headers=bearer(token)).status_code == 201
    # Sign-up and log-in over the API without a cookie need no CSRF token either.
    r = client.post("/api/v1/accounts", json={"name": "cem", "password": PASSWORD})
    assert r.status_code == 201


def test_forms_without_a_csrf_token_are_refused_and_store_nothing(
    client: TestClient[Any],
) -> None:
    client.get("/signup")  # the CSRF cookie is set, but the form does not send it back
    form = {"name": "dan", "password": PASSWORD, "password2": PASSWORD}
    r = client.post("/signup", data=form, follow_redirects=False)
    assert r.status_code == 403
    r = client.post("/signup", data={**form, "_csrf_token": "forged" * 20}, follow_redirects=False)
    assert r.status_code == 403
    assert (
        client.post("/api/v1/login", json={"name": "dan", "password": PASSWORD}).status_code == 401
    )
    sign_up(client, "eda")
    r = client.post("/logout", follow_redirects=False)  # no token: still logged in
    assert r.status_code == 403
    assert client.get("/api/v1/me").json()["id"] == "eda"


def test_log_out_and_log_in_again(client: TestClient[Any]) -> None:
    sign_up(client, "fen")
    token = csrf(client, "/account")
    r = client.post("/logout", data={"_csrf_token": token}, follow_redirects=False)
    assert r.status_code == 303
    assert client.get("/account", follow_redirects=False).headers["location"] == "/login"
    assert client.get("/api/v1/me").status_code == 401
    token = csrf(client, "/login")
    r = client.post(
        "/login",
        data={"name": "FEN", "password": "wrong password!", "_csrf_token": token},
        follow_redirects=False,
    )
    assert r.status_code == 401 and "wrong name or password" in r.text
    assert "wrong password!" not in r.text
    r = client.post(
        "/login",
        data={"name": "fen", "password": PASSWORD, "_csrf_token": token},
        follow_redirects=False,
    )
    assert r.status_code == 303
    assert client.get("/api/v1/me").json()["id"] == "fen"


def test_a_forged_session_cookie_is_refused(client: TestClient[Any]) -> None:
    client.cookies.set("king_session", "king_" + "A" * 43)
    r = client.get("/api/v1/me")
    assert r.status_code == 401 and "session" in r.json()["detail"]
    page = client.get("/")
    assert page.status_code == 200 and "data-user" not in page.text
    cleared = [c for c in page.headers.get_list("set-cookie") if c.startswith("king_session=")]
    assert cleared and "Max-Age=0" in cleared[0]
    # Public reads that only may take a principal still answer.
    assert client.get("/api/v1/games").status_code == 200


def test_account_page_makes_and_revokes_a_token_and_makes_a_bot(client: TestClient[Any]) -> None:
    sign_up(client, "gul")
    token = csrf(client, "/account")
    r = client.post(
        "/account/bots",
        data={"name": "gul-bot", "_csrf_token": token},
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"] == "/bots/gul-bot"
    bot_page = client.get("/bots/gul-bot")
    assert bot_page.status_code == 200 and 'id="bot-owner">gul<' in bot_page.text
    r = client.post(
        "/account/tokens",
        data={
            "name": "for the bot",
            "player": "gul-bot",
            "scopes": ["bot", "read"],
            "_csrf_token": token,
        },
    )
    assert r.status_code == 201, r.text
    text = re.search(r'<code id="new-token">([^<]+)</code>', r.text)
    assert text is not None
    secret = text.group(1)
    assert client.get("/api/v1/me", headers=bearer(secret)).json()["id"] == "gul-bot"
    again = client.get("/account").text
    assert secret not in again and "for the bot" in again
    token_id = re.search(r'data-token="([^"]+)"><td>for the bot', again)
    assert token_id is not None
    r = client.post(
        f"/account/tokens/{token_id.group(1)}/revoke",
        data={"_csrf_token": token},
        follow_redirects=False,
    )
    assert r.status_code == 303
    assert client.get("/api/v1/me", headers=bearer(secret)).status_code == 401
    # A bad scope for a bot is refused on the page, nothing made.
    r = client.post(
        "/account/tokens",
        data={"name": "x", "player": "gul-bot", "scopes": "play", "_csrf_token": token},
    )
    assert r.status_code == 422 and "scopes among" in r.text


def test_bad_sign_ups_on_the_page(client: TestClient[Any]) -> None:
    token = csrf(client)
    for form, status in (
        ({"name": "hale", "password": "short", "password2": "short"}, 422),
        ({"name": "hаle", "password": PASSWORD, "password2": PASSWORD}, 422),  # Cyrillic а
        ({"name": "hale", "password": PASSWORD, "password2": PASSWORD + "x"}, 422),
    ):
        r = client.post("/signup", data={**form, "_csrf_token": token}, follow_redirects=False)
        assert r.status_code == status, (form, r.text)
        assert 'role="alert"' in r.text and PASSWORD not in r.text
    assert (
        client.post("/api/v1/login", json={"name": "hale", "password": PASSWORD}).status_code == 401
    )


def test_each_refusal_of_the_forms_renders_the_page_again(tmp_path: Any) -> None:
    """Sign-up and log-in refused: the same page again with the error and its status (409 for
    a taken name, 401 for a failed log-in, 422 for the rest, 429 with Retry-After once the
    attempts run out), the name and display name kept, no password in the page, no session."""
    from services.app import create_app
    from services.web.i18n import DEFAULT, words
    from tests.web.conftest import web_settings

    differ = words(DEFAULT)["passwords_differ"]
    settings = web_settings(tmp_path, login_burst=5, login_per_minute=1)
    with TestClient(create_app(settings)) as client:
        assert sign_up(client, "ilk").status_code == 303  # attempt 1 of the address's 5
        client.post("/logout", data={"_csrf_token": csrf(client, "/account")})
        token = csrf(client)

        def post(path: str, **form: str) -> Any:
            r = client.post(path, data={**form, "_csrf_token": token}, follow_redirects=False)
            assert 'role="alert" id="form-error"' in r.text, r.text
            assert PASSWORD not in r.text and "king_session" not in r.headers.get("set-cookie", "")
            return r

        secret = PASSWORD + "x"
        r = post("/signup", name="jale", display_name="Jale J", password=PASSWORD, password2=secret)
        assert r.status_code == 422 and differ in r.text  # no attempt drawn
        assert (
            'value="jale"' in r.text and 'value="Jale J"' in r.text and 'id="signup-form"' in r.text
        )
        r = post("/signup", name="ILK", display_name="Ilk", password=PASSWORD, password2=PASSWORD)
        assert r.status_code == 409 and 'value="ILK"' in r.text  # attempt 2
        r = post("/signup", name="jale", password="short", password2="short")
        assert r.status_code == 422 and "retry-after" not in r.headers  # attempt 3
        r = post("/login", name="Ilk", password=secret)
        assert r.status_code == 401 and "wrong name or password" in r.text  # attempt 4
        assert 'value="Ilk"' in r.text and 'id="login-form"' in r.text and secret not in r.text
        assert post("/login", name="ilk", password=secret).status_code == 401  # attempt 5
        for path, form in (
            ("/login", {"name": "ilk", "password": PASSWORD}),
            ("/signup", {"name": "kaya", "password": PASSWORD, "password2": PASSWORD}),
        ):
            r = post(path, **form)
            assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
            assert f'id="{path[1:]}-form"' in r.text
        assert client.get("/api/v1/me").status_code == 401
    with TestClient(create_app(settings)) as other:  # the refused sign-ups stored nothing
        for name in ("jale", "kaya"):
            r = other.post("/api/v1/login", json={"name": name, "password": PASSWORD})
            assert r.status_code == 401


def test_the_session_cookie_is_secure_over_tls(tmp_path: Any) -> None:
    from services.app import create_app
    from tests.web.conftest import web_settings

    app = create_app(web_settings(tmp_path))
    with TestClient(app, base_url="https://king.test") as client:
        r = sign_up(client, "ilk")
        assert r.status_code == 303
        cookie = next(c for c in r.headers.get_list("set-cookie") if c.startswith("king_session="))
        assert "Secure" in cookie and "HttpOnly" in cookie


def test_an_expired_session_is_no_principal() -> None:
    from datetime import UTC, datetime, timedelta

    from services.identity import Grant

    scopes = frozenset({"session", "play", "read"})
    live = Grant("ada", scopes, datetime.now(UTC) + timedelta(minutes=5)).principal("0" * 64)
    assert live is not None and live.session and live.scopes == {"play", "read"}
    assert (
        Grant("ada", scopes, datetime.now(UTC) - timedelta(seconds=1)).principal("0" * 64) is None
    )
    legacy = Grant("bo", None, None).principal("0" * 64)
    assert legacy is not None and legacy.scopes is None and legacy.may_act and not legacy.session


def test_a_push_bot_url_the_guard_refuses_makes_no_bot(client: TestClient[Any]) -> None:
    sign_up(client, "jale")
    token = csrf(client, "/account")
    form = {"name": "jale-bot", "bot_url": "http://127.0.0.1:9/", "_csrf_token": token}
    r = client.post("/account/bots", data=form, follow_redirects=False)
    assert r.status_code == 422 and 'role="alert"' in r.text
    assert client.get("/api/v1/me/bots").json() == []
    r = client.post(
        "/api/v1/me/bots",
        json={"name": "jale-bot", "bot_url": "http://169.254.169.254/"},
        headers={"x-csrftoken": client.cookies["king_csrf"]},
    )
    assert r.status_code == 422 and r.json()["code"] == "bad_bot_url"
    assert client.get("/api/v1/me/bots").json() == []


def test_the_owner_declares_versions_on_the_bot_page_others_see_them(
    client: TestClient[Any],
) -> None:
    sign_up(client, "oya")
    token = csrf(client, "/account")
    r = client.post(
        "/account/bots",
        data={"name": "oya-bot", "version": "0.1", "_csrf_token": token},
        follow_redirects=False,
    )
    assert r.status_code == 303
    page = client.get("/bots/oya-bot?lang=en").text
    assert 'id="version-form"' in page and 'data-version="1"><td>1 · 0.1<' in page
    r = client.post(
        "/bots/oya-bot/versions",
        data={"label": "0.2 faster", "_csrf_token": token},
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"] == "/bots/oya-bot"
    page = client.get("/bots/oya-bot?lang=en").text
    assert page.index('data-version="2"') < page.index('data-version="1"')  # newest first
    r = client.post("/bots/oya-bot/versions", data={"label": " ", "_csrf_token": token})
    assert r.status_code == 422 and 'id="form-error"' in r.text
    assert 'data-version="3"' not in client.get("/bots/oya-bot").text
    assert client.post("/bots/oya-bot/versions", data={"label": "x"}).status_code == 403  # CSRF
    client.post("/logout", data={"_csrf_token": token})
    client.cookies.clear()
    stranger = client.get("/bots/oya-bot?lang=tr").text
    assert 'id="version-form"' not in stranger and "Sürümler" in stranger
