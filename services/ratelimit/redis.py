"""Token buckets in Redis, shared by every `king serve` process that names the same server and
key prefix (`KING_RATE_LIMIT_STORE=redis://...`, `KING_RATE_LIMIT_PREFIX`).

Taking a token reads a bucket, refills it for the time since and writes it back: two processes
doing that at once must not both take the last token. So the whole step is one Lua script run
by the server (redis-py's `register_script`: EVALSHA, with EVAL when the server lost the
script), which Redis runs atomically. Litestar's `RedisStore` only gets and sets whole values,
with no atomic read-modify-write, so the buckets use redis-py's asyncio client directly.

The script uses the server's clock (`TIME`), so every process agrees on the time whatever its
own clock says; tests may pass the time instead. Each bucket is a hash (`tokens`, `at`) that
expires when it would be full again, so idle buckets vanish and a missing bucket is exactly a
full one (a bucket that takes longer than a day to refill is forgotten after a day).

Redis unreachable or slower than `KING_RATE_LIMIT_STORE_TIMEOUT` (at start or later):
`SharedBuckets` answers from this process's memory buckets instead, so requests are still
limited (per process) and never fail for it. It logs
`rate_limit_store_unreachable` once per outage, says so in `/health/ready` warnings, tries
Redis again at most every `RETRY_SECONDS`, and logs `rate_limit_store_recovered` when it
answers again.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from urllib.parse import urlsplit

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from services.observability import get_logger
from services.ratelimit.buckets import Limits
from services.ratelimit.memory import MemoryBuckets

log = get_logger("king.ratelimit")

MAX_CONNECTIONS = 50  # per process; a request waits (within the timeout) for a free one
RETRY_SECONDS = 2.0  # while Redis is unreachable, try it again at most this often
MAX_TTL_MS = 86_400_000
# Redis not answering, or answering with an error (redis-py's errors; OSError covers timeouts).
UNREACHABLE = (RedisError, OSError)

# KEYS[1]: the bucket. ARGV: rate, burst, now (seconds; empty: the server's clock), the longest
# expiry (ms). The steps are memory.py's, in the same order. Returns {wait, tokens left} as
# strings: Redis would truncate Lua numbers to integers. Numbers are stored with 17 significant
# digits, so that they come back as the very same doubles.
DRAW_SCRIPT = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(held[1])
local last = tonumber(held[2])
if tokens == nil or last == nil then
  tokens = burst
  last = now
end
tokens = math.min(burst, tokens + math.max(0, now - last) * rate)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = (1 - tokens) / rate
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens),
  'at', string.format('%.17g', now))
local ttl = math.ceil((burst - tokens) / rate * 1000) + 1000
if ttl > tonumber(ARGV[4]) then ttl = tonumber(ARGV[4]) end
redis.call('PEXPIRE', KEYS[1], ttl)
return {string.format('%.17g', wait), string.format('%.17g', tokens)}
"""


def describe_url(url: str) -> str:
    """The store's URL without its user name or password (for logs and health answers)."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return f"unix://{parts.path}"
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


class RedisBuckets:
    """The buckets in Redis; any failure to reach it is raised (RedisError, OSError)."""

    def __init__(self, limits: Limits, url: str, prefix: str, timeout: float) -> None:
        self.limits = limits
        self.prefix = prefix
        # `timeout` bounds the wait for a connection, connecting and each reply: a slow Redis
        # must not hold every request up. No retries of redis-py's own: a failure is answered
        # from memory at once (SharedBuckets).
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=MAX_CONNECTIONS,
            timeout=timeout,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
        )
        self.client = aioredis.Redis.from_pool(pool)
        self._script = self.client.register_script(DRAW_SCRIPT)

    async def draw(self, key: str, now: float | None = None) -> tuple[float, float]:
        args = [repr(self.limits.rate), str(self.limits.burst), "" if now is None else repr(now)]
        wait, tokens = await self._script(keys=[self.prefix + key], args=[*args, MAX_TTL_MS])
        return float(wait), float(tokens)

    async def ping(self) -> None:
        await self.client.ping()

    async def close(self) -> None:
        await self.client.aclose()


class SharedBuckets:
    """Redis buckets, with this process's memory buckets while Redis is unreachable."""

    def __init__(self, limits: Limits, url: str, prefix: str, timeout: float) -> None:
        self._limits = limits
        self.url = describe_url(url)
        self.shared = RedisBuckets(limits, url, prefix, timeout)
        self.fallback = MemoryBuckets(limits)
        self._down_since: datetime | None = None
        self._error = ""
        self._retry_at = 0.0

    @property
    def limits(self) -> Limits:
        return self._limits

    @property
    def warning(self) -> str | None:
        if self._down_since is None:
            return None
        return (
            f"rate limits: the shared store {self.url} has been unreachable since "
            f"{self._down_since.isoformat(timespec='seconds')} ({self._error}); this process "
            "limits on its own meanwhile"
        )

    async def start(self) -> None:
        """Check Redis once; unreachable, the service starts all the same (memory buckets)."""
        try:
            await self.shared.ping()
        except UNREACHABLE as exc:
            self._went_down(exc)
        else:
            log.info("rate_limit_store_shared", store=self.url)

    async def close(self) -> None:
        await self.shared.close()

    async def draw(self, key: str) -> tuple[float, float]:
        if self._down_since is not None:
            now = time.monotonic()
            if now < self._retry_at:
                return await self.fallback.draw(key)
            # This request tries Redis again; the others meanwhile do not wait for it.
            self._retry_at = now + RETRY_SECONDS
        try:
            drawn = await self.shared.draw(key)
        except UNREACHABLE as exc:
            self._went_down(exc)
            return await self.fallback.draw(key)
        if self._down_since is not None:
            log.info("rate_limit_store_recovered", store=self.url)
            self._down_since = None
        return drawn

    def _went_down(self, exc: BaseException) -> None:
        self._retry_at = time.monotonic() + RETRY_SECONDS
        if self._down_since is None:  # once per outage
            self._down_since = datetime.now(UTC)
            self._error = type(exc).__name__
            log.warning(
                "rate_limit_store_unreachable",
                store=self.url,
                error=self._error,
                fallback="memory (per process)",
            )
