"""`Allow` on OPTIONS answers that lists every method of the path.

Litestar answers OPTIONS itself, but on a path whose methods come from handlers registered one
after another (a controller's `@get("/")` and `@post("/")`) its answer lists only the methods of
the first handler registered. This ASGI middleware sets `Allow` from the app's routes instead.
"""

from __future__ import annotations

from typing import Any

ALLOW = b"allow"


def allow_middleware(app: Any) -> Any:
    """An ASGI middleware factory (Litestar `middleware=[...]`)."""
    methods: dict[str, bytes] = {}

    def allow_of(scope: dict[str, Any]) -> bytes | None:
        if not methods:
            for route in scope["app"].routes:
                names = sorted(getattr(route, "methods", ()))
                methods[route.path] = ", ".join(names).encode()
        return methods.get(scope.get("path_template", ""))

    async def middleware(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "OPTIONS":
            await app(scope, receive, send)
            return
        allow = allow_of(scope)

        async def send_allow(message: Any) -> None:
            if allow is not None and message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", ()) if k.lower() != ALLOW]
                message["headers"] = [*headers, (ALLOW, allow)]
            await send(message)

        await app(scope, receive, send_allow)

    return middleware
