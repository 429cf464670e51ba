"""Push bots that misbehave in one chosen way, for the bad-bot suite (stdlib server)."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = ("slow", "silent", "garbage", "huge", "illegal", "drop", "other_seat", "error500")


def _illegal(request: dict[str, Any]) -> dict[str, Any]:
    legal = request["legal"]
    if legal[0]["type"] == "declare":
        return {"type": "play", "card": request["view"]["hand"][0]}
    allowed = {a["card"] for a in legal}
    for card in request["view"]["hand"]:
        if card not in allowed:
            return {"type": "play", "card": card}
    held = set(request["view"]["hand"])
    return {
        "type": "play",
        "card": next(c for c in ("AS", "AH", "AD", "AC", "KS", "KH") if c not in held),
    }


class BadBot:
    def __init__(self, mode: str, delay: float = 1.0) -> None:
        self.mode = mode
        self.delay = delay
        self.requests = 0
        bot = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                bot.requests += 1
                length = int(self.headers.get("content-length") or 0)
                request = json.loads(self.rfile.read(length))
                reply: dict[str, Any] = {"action": request["legal"][0]}
                if bot.mode == "slow":
                    time.sleep(bot.delay)
                elif bot.mode == "silent":
                    time.sleep(30)
                    return
                elif bot.mode == "garbage":
                    self._raw(200, b"{this is not json")
                    return
                elif bot.mode == "huge":
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("connection", "close")
                    self.end_headers()
                    chunk = b"[" * 65536
                    try:
                        for _ in range(160):  # 10 MiB, no content-length: read as a stream
                            self.wfile.write(chunk)
                    except OSError:
                        pass
                    self.close_connection = True
                    return
                elif bot.mode == "illegal":
                    reply = {"action": _illegal(request)}
                elif bot.mode == "drop":
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                elif bot.mode == "other_seat":
                    reply = {"seat": (request["seat"] + 1) % 4, "action": request["legal"][0]}
                elif bot.mode == "error500":
                    self._raw(500, b'{"error": "boom"}')
                    return
                self._raw(200, json.dumps(reply).encode())

            def _raw(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/decide"

    def start(self) -> BadBot:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
