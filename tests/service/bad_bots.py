"""Push bots that misbehave in one chosen way, for the bad-bot suite (stdlib server)."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = (
    "slow",
    "silent",
    "garbage",
    "huge",
    "huge_chunked",
    "illegal",
    "drop",
    "other_seat",
    "error500",
)
HUGE = 10 * 1024 * 1024  # bytes of padding: a legal reply, only too large


def padded(reply: dict[str, Any], size: int = HUGE) -> bytes:
    """`reply` as valid JSON with a `pad` string that makes it more than `size` bytes."""
    return json.dumps({**reply, "pad": "x" * size}).encode()


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
    def __init__(self, mode: str, delay: float = 1.0, huge: int = HUGE) -> None:
        self.mode = mode
        self.delay = delay
        self.huge = huge
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
                elif bot.mode in ("huge", "huge_chunked"):
                    self._huge(padded(reply, bot.huge), chunked=bot.mode == "huge_chunked")
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

            def _huge(self, body: bytes, chunked: bool) -> None:
                """A valid reply past the cap: with its Content-Length, or chunked without."""
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("connection", "close")
                if chunked:
                    self.send_header("transfer-encoding", "chunked")
                else:
                    self.send_header("content-length", str(len(body)))
                self.end_headers()
                step = 65536
                try:
                    for i in range(0, len(body), step):
                        part = body[i : i + step]
                        if chunked:
                            part = b"%x\r\n%s\r\n" % (len(part), part)
                        self.wfile.write(part)
                    if chunked:
                        self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the service stopped reading at its cap
                    pass
                self.close_connection = True

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
