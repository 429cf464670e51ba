"""CSRF protection where a browser's ambient credentials could be abused: Litestar's CSRF
middleware (a signed double-submit token: the `king_csrf` cookie, sent back as the
`_csrf_token` form field or the `x-csrftoken` header), applied to

- every page request (not under /api/): the sign-up and log-in forms included, so no other
  site can log a browser in to an account of its choosing;
- an API request that carries the session cookie and no Authorization header.

A request with a bearer token skips it: no other site can make a browser send that header,
and the bot and script clients of the API keep working as before."""

from __future__ import annotations

import hashlib
from typing import Any

from litestar.config.csrf import CSRFConfig
from litestar.datastructures import Headers
from litestar.middleware.csrf import CSRFMiddleware

CSRF_COOKIE = "king_csrf"
CSRF_HEADER = "x-csrftoken"
UNGUARDED = ("/static/", "/health", "/metrics", "/schema")  # no forms, no session use


def csrf_secret(admin_token: str) -> str:
    """The key that signs CSRF tokens: derived from the admin token, which every process of a
    deployment shares (so a form made by one is accepted by another)."""
    return hashlib.sha256(b"king-csrf/1\0" + admin_token.encode()).hexdigest()


def csrf_config(secret: str, secure: bool) -> CSRFConfig:
    return CSRFConfig(
        secret=secret,
        cookie_name=CSRF_COOKIE,
        header_name=CSRF_HEADER,
        cookie_secure=secure,
        cookie_samesite="lax",
        cookie_httponly=False,  # the page scripts send it back as the header
    )


def csrf_middleware(config: CSRFConfig, session_cookie: str) -> Any:
    """An ASGI middleware factory (Litestar `middleware=[...]`): the CSRF check as above."""

    def factory(app: Any) -> Any:
        guarded = CSRFMiddleware(app, config)

        async def middleware(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            headers = Headers.from_scope(scope)
            if "authorization" in headers or scope["path"].startswith(UNGUARDED):
                await app(scope, receive, send)
                return
            if scope["path"].startswith("/api/"):
                cookies = headers.get("cookie", "")
                if f"{session_cookie}=" not in cookies:
                    await app(scope, receive, send)
                    return
            await guarded(scope, receive, send)

        return middleware

    return factory
