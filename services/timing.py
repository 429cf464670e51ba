"""`Server-Timing: app;dur=<ms>` on every response: the service-side time to the response head.

For streams that is the time to open the stream. Clients and the benchmark read it to tell
the service's own latency from the network's and their own.
"""

from __future__ import annotations

import time
from typing import Any


def server_timing_middleware(app: Any) -> Any:
    async def middleware(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        start = time.perf_counter()

        async def timed_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                ms = (time.perf_counter() - start) * 1000
                headers = list(message.get("headers", ()))
                headers.append((b"server-timing", f"app;dur={ms:.3f}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        await app(scope, receive, timed_send)

    return middleware
