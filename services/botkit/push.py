"""A push bot's HTTP server: the service POSTs a decision request, the reply is the action.

Standard library only (a threading HTTP server), so a bot is `PushBotServer(decide).serve()`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Decide = Callable[[dict[str, Any]], dict[str, Any]]
MAX_REQUEST_BYTES = 4 * 1024 * 1024


class PushBotServer:
    """Serve `decide` at http://host:port/ (any path). `port=0` picks a free port."""

    def __init__(self, decide: Decide, host: str = "127.0.0.1", port: int = 0) -> None:
        self.decide = decide
        handler = _handler(decide)
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/"

    def serve(self) -> None:
        """Serve until interrupted (blocking)."""
        try:
            self.httpd.serve_forever()
        finally:
            self.httpd.server_close()

    def start(self) -> PushBotServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def _handler(decide: Decide) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # one small reply per request: send it at once

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: a bot sees hundreds of requests a game

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            if length <= 0 or length > MAX_REQUEST_BYTES:
                self._send(400, {"error": "expected a JSON decision request"})
                return
            try:
                request = json.loads(self.rfile.read(length))
                action = decide(request)
            except Exception as exc:
                self._send(500, {"error": type(exc).__name__})
                return
            reply = {
                "game_id": request.get("game_id"),
                "seat": request.get("seat"),
                "action": action,
            }
            self._send(200, reply)

        def do_GET(self) -> None:
            self._send(200, {"status": "ok", "protocol": "king-push/1"})

    return Handler
