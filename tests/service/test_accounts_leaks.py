"""No answer and no log line holds a password or a whole token: a real `king serve` at debug
level runs the whole account story (sign-up, log-ins right and wrong, tokens made, used and
revoked, a bot, a web session, a forged cookie, a refused weak password), and every answer
and the whole log are searched for each secret. A token appears in exactly the one answer
that made it."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from tests.processes import Serve, serve_env

PASSWORD = "correct horse battery staple"
WRONG = "a wrong password 12345"
WEAK = "weakpass"


def test_no_answer_or_log_line_holds_a_password_or_a_whole_token(tmp_path: Path) -> None:
    env = serve_env(tmp_path, None, None)
    env["KING_LOG_LEVEL"] = "debug"
    server = Serve(tmp_path, "king", env)
    answers: list[tuple[str, str]] = []  # (what, body + headers)
    minted: dict[str, str] = {}  # token -> the answer that made it

    def keep(what: str, r: httpx.Response) -> httpx.Response:
        answers.append((what, r.text + "\n" + "\n".join(f"{k}: {v}" for k, v in r.headers.items())))
        return r

    try:
        server.ready()
        with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as c:
            r = keep("weak", c.post("/api/v1/accounts", json={"name": "ada", "password": WEAK}))
            assert r.status_code == 422
            r = keep(
                "signup", c.post("/api/v1/accounts", json={"name": "ada", "password": PASSWORD})
            )
            assert r.status_code == 201
            minted[r.json()["token"]] = "signup"
            r = keep("wrong", c.post("/api/v1/login", json={"name": "ada", "password": WRONG}))
            assert r.status_code == 401
            r = keep("login", c.post("/api/v1/login", json={"name": "ada", "password": PASSWORD}))
            login = r.json()["token"]
            minted[login] = "login"
            auth = {"authorization": f"Bearer {login}"}
            r = keep("bot", c.post("/api/v1/me/bots", json={"name": "ada-bot"}, headers=auth))
            assert r.status_code == 201
            body = {"name": "b", "scopes": ["bot"], "player": "ada-bot"}
            r = keep("token", c.post("/api/v1/me/tokens", json=body, headers=auth))
            bot_token = r.json()["token"]
            minted[bot_token] = "token"
            keep("me", c.get("/api/v1/me", headers={"authorization": f"Bearer {bot_token}"}))
            keep("list", c.get("/api/v1/me/tokens", headers=auth))
            keep("account", c.get("/api/v1/me/account", headers=auth))
            token_id = r.json()["info"]["id"]
            keep("revoke", c.delete(f"/api/v1/me/tokens/{token_id}", headers=auth))
            keep("revoked", c.get("/api/v1/me", headers={"authorization": f"Bearer {bot_token}"}))
            # The web: a session opened by the log-in form, a forged cookie.
            page = keep("login-page", c.get("/login"))
            csrf = re.search(r'name="_csrf_token" value="([^"]+)"', page.text)
            assert csrf is not None
            form = {"name": "ada", "password": PASSWORD, "_csrf_token": csrf.group(1)}
            r = keep("web-login", c.post("/login", data=form))
            session = c.cookies.get("king_session")
            assert session and r.status_code == 303
            keep("web-account", c.get("/account"))
            c.cookies.set("king_session", "king_" + "F" * 43)
            keep("forged", c.get("/api/v1/me"))
    finally:
        server.stop()
    log = server.log_path.read_text()
    assert "session_opened" in log  # the log was written at debug level
    secrets = {PASSWORD: None, WRONG: None, WEAK: None, session: None, **minted}
    for secret, maker in secrets.items():
        assert secret not in log, f"the log holds a secret ({maker or 'a password or session'})"
        # Its last 20 characters, too: no part of a token long enough to matter.
        assert secret[-20:] not in log
        for what, text in answers:
            if what == maker:
                continue
            if what == "web-login" and secret == session:
                continue  # the Set-Cookie that opens the session
            assert secret not in text, f"the {what} answer holds a secret ({maker})"
