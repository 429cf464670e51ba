"""Send one decision request to a push bot and read its reply, within the deadline.

One attempt per decision. The connection goes to an address checked by the URL policy at
request time (the Host header and TLS server name stay the URL's host). The reply is read as
a stream and dropped beyond the size cap. Every failure is named, never raised: `failure` is
the strike reason (stored, public), `code` the finer kind for metrics and logs.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from services.bots.urls import BadBotUrl, UrlPolicy
from services.tls import tls_context


@dataclass(frozen=True, slots=True)
class PushReply:
    """The bot's reply object, or why there is none (`failure`: a strike reason; `code`: which
    kind of failure, e.g. `too_large`, so a size-cap refusal is told apart from bad JSON)."""

    reply: dict[str, Any] | None
    failure: str | None
    detail: str
    seconds: float
    code: str = ""
    # The exception behind a failure to reach the bot, for the driver's log line (its
    # message only where `safe_message` allows it; its stack trace at debug level).
    error: BaseException | None = None


class PushClient:
    def __init__(
        self, policy: UrlPolicy, connect_timeout: float, max_bytes: int, user_agent: str
    ) -> None:
        self.policy = policy
        self.connect_timeout = connect_timeout
        self.max_bytes = max_bytes
        self._client = httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,
            verify=tls_context(),  # (the store loaded once a process)
            headers={"user-agent": user_agent},
            limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def ask(self, url: str, body: bytes, seconds: float) -> PushReply:
        start = time.perf_counter()
        try:
            async with asyncio.timeout(max(seconds, 0.001)):
                reply = await self._ask(url, body, start + seconds)
        except TimeoutError:
            return PushReply(
                None, "timeout", "no reply before the deadline", _since(start), "timeout"
            )
        except BadBotUrl as exc:
            return PushReply(None, "unreachable", str(exc), _since(start), "refused_url")
        except httpx.TimeoutException:
            return PushReply(
                None, "timeout", "no reply before the deadline", _since(start), "timeout"
            )
        except (httpx.HTTPError, OSError) as exc:
            name = type(exc).__name__
            return PushReply(None, "unreachable", name, _since(start), "unreachable", exc)
        return reply

    async def _ask(self, url: str, body: bytes, deadline: float) -> PushReply:
        start = time.perf_counter()
        target = self.policy.parse(url)
        addresses = await self.policy.resolve(target)
        ip = addresses[0]
        host = f"[{ip}]" if ip.version == 6 else str(ip)
        default = 443 if target.scheme == "https" else 80
        port = "" if target.port == default else f":{target.port}"
        direct = f"{target.scheme}://{host}{port}{target.path}"
        host_header = target.host if not port else f"{target.host}{port}"
        if ":" in target.host:  # an IPv6 literal host
            host_header = f"[{target.host}]{port}"
        remaining = max(deadline - time.perf_counter(), 0.001)
        timeout = httpx.Timeout(
            remaining, connect=min(self.connect_timeout, remaining), pool=remaining
        )
        request = self._client.build_request(
            "POST",
            direct,
            content=body,
            headers={
                "host": host_header,
                "content-type": "application/json",
                "accept-encoding": "identity",
            },
            timeout=timeout,
            extensions={"sni_hostname": target.host} if target.scheme == "https" else {},
        )
        response = await self._client.send(request, stream=True)
        try:
            if response.status_code != 200:
                detail = f"HTTP status {response.status_code}"
                return PushReply(None, "bad_reply", detail, _since(start), "http_status")
            declared = response.headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
                detail = "reply too large: its Content-Length is over the cap"
                return PushReply(None, "bad_reply", detail, _since(start), "too_large")
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_raw():
                size += len(chunk)
                if size > self.max_bytes:
                    detail = "reply too large: over the cap while reading"
                    return PushReply(None, "bad_reply", detail, _since(start), "too_large")
                chunks.append(chunk)
        finally:
            await response.aclose()
        try:
            reply = orjson.loads(b"".join(chunks))
        except orjson.JSONDecodeError:
            return PushReply(None, "bad_reply", "reply is not JSON", _since(start), "not_json")
        if not isinstance(reply, dict):
            return PushReply(
                None, "bad_reply", "reply is not a JSON object", _since(start), "not_object"
            )
        return PushReply(reply, None, "", _since(start))


def _since(start: float) -> float:
    return time.perf_counter() - start
