"""Browser tests of the account pages (Playwright, Debian's Chromium, a real uvicorn server):
sign-up, log-out, a wrong password, log-in, a token made (shown once) and revoked, a bot made
and entered in a tournament open for registration, and the tournament's sign-up panel using
the session instead of a pasted token. Each page also passes the layout and accessibility
check of test_web_layout_browser."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.service.helpers import ADMIN_HEADERS, LiveServer, bearer
from tests.web.conftest import shot
from tests.web.test_web_layout_browser import axe, check  # noqa: F401  (a fixture)

pytestmark = pytest.mark.slow
PASSWORD = "correct horse battery"


def _sign_up(page: Any, url: str, name: str) -> None:
    page.goto(url + "/signup")
    page.fill("#name", name)
    page.fill("#password", PASSWORD)
    page.fill("#password2", PASSWORD)
    page.click("#signup-form button[type=submit]")
    page.wait_for_url(url + "/account")


def test_sign_up_log_out_wrong_password_log_in(server: LiveServer, page: Any, axe: str) -> None:  # noqa: F811
    page.kind = "desktop"
    url = server.url
    page.goto(url + "/signup")
    check(page, axe, "account-signup")
    # A weak password: refused with its reason, nothing made.
    page.fill("#name", "Ada")
    page.fill("#password", "short")
    page.fill("#password2", "short")
    page.click("#signup-form button[type=submit]")
    assert "at least 10 characters" in page.inner_text("#form-error")
    assert page.input_value("#name") == "Ada" and page.input_value("#password") == ""
    _sign_up(page, url, "Ada")
    assert page.inner_text("#whoami-top").strip().endswith("ada")
    check(page, axe, "account-page")
    cookies = {c["name"]: c for c in page.context.cookies()}
    assert cookies["king_session"]["httpOnly"] and cookies["king_session"]["sameSite"] == "Lax"
    assert page.evaluate("document.cookie").find("king_session") < 0  # no script reads it
    page.click("header form.logout button")
    page.wait_for_url(url + "/")
    assert page.locator("#whoami-top").count() == 0
    assert page.locator("a.nav-login").is_visible()
    page.goto(url + "/login")
    check(page, axe, "account-login")
    page.fill("#name", "ada")
    page.fill("#password", "not the password")
    page.click("#login-form button[type=submit]")
    assert page.inner_text("#form-error") == "wrong name or password"
    shot(page, "account-wrong-password")
    page.fill("#password", PASSWORD)
    page.click("#login-form button[type=submit]")
    page.wait_for_url(url + "/account")
    assert page.inner_text("#whoami-top").strip().endswith("ada")
    assert not page.js_errors


def test_token_made_and_revoked_and_a_bot_entered_in_a_tournament(
    server: LiveServer,
    page: Any,
    axe: str,  # noqa: F811
) -> None:
    page.kind = "desktop"
    url = server.url
    with httpx.Client(base_url=url, timeout=30) as http:
        body = {
            "id": "open-cup",
            "rules": {"mode": "short12"},
            "players": [{"strategy": "random"}] * 2,
        }
        assert http.post("/api/v1/tournaments", json=body, headers=ADMIN_HEADERS).status_code == 201
        _sign_up(page, url, "bora")
        # A token for the account, shown once, then revoked.
        page.fill("#token-name", "laptop")
        page.check("input[name=scopes][value=play]")
        page.click("#token-form button[type=submit]")
        secret = page.inner_text("#new-token").strip()
        assert secret.startswith("king_")
        assert http.get("/api/v1/me", headers=bearer(secret)).json()["id"] == "bora"
        page.goto(url + "/account")
        assert secret not in page.content()
        row = page.locator("#tokens tr", has_text="laptop")
        row.locator("button").click()
        page.wait_for_url(url + "/account")
        assert page.locator("#tokens tr", has_text="laptop").count() == 0
        assert http.get("/api/v1/me", headers=bearer(secret)).status_code == 401
        # A pull bot, its page, a token for it, entered in the tournament with that token.
        page.fill("#bot-name", "bora-bot")
        page.click("#bot-form button[type=submit]")
        page.wait_for_url(url + "/bots/bora-bot")
        assert page.inner_text("#bot-owner") == "bora"
        check(page, axe, "account-bot")
        page.goto(url + "/account")
        page.fill("#token-name", "bot live")
        page.select_option("#token-player", "bora-bot")
        page.uncheck("input[name=scopes][value=read]")
        page.check("input[name=scopes][value=bot]")
        page.click("#token-form button[type=submit]")
        bot_token = page.inner_text("#new-token").strip()
        r = http.post("/api/v1/tournaments/open-cup/players", headers=bearer(bot_token))
        assert r.status_code == 201, r.text
        # The logged-in person signs up on the tournament's page with the session: no token.
        page.goto(url + "/tournaments/open-cup")
        page.wait_for_selector("#signup-join:not([hidden])")
        assert page.locator("#signup-token").is_hidden()
        page.click("#signup-join")
        page.wait_for_selector("#signup[data-registered='1']")
        players = http.get("/api/v1/tournaments/open-cup").json()["tournament"]["players"]
        assert {"bora", "bora-bot"} <= {p["id"] for p in players if p["active"]}
        shot(page, "account-tournament-signed-up")
    assert not page.js_errors
