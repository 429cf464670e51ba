"""Rate limits: token buckets per known token, else per client address (middleware.py), kept
in this process's memory (memory.py) or in Redis for every process at once (redis.py).

redis.py (and the Redis client, a tenth of a second of CPU to import) is loaded only when a
Redis store is named: every `king serve` and CLI process imports this package. So its
`SharedBuckets` is imported from `services.ratelimit.redis`, never from here.
"""

from __future__ import annotations

from services.ratelimit.buckets import Buckets, Limits
from services.ratelimit.memory import MemoryBuckets
from services.ratelimit.middleware import (
    EXEMPT_PREFIXES,
    MAX_TOKEN_LENGTH,
    PRINCIPAL_SCOPE_KEY,
    SeenToken,
    bearer_token,
    rate_limit_middleware,
    request_key,
)
from services.settings import Settings

__all__ = [
    "EXEMPT_PREFIXES",
    "MAX_TOKEN_LENGTH",
    "PRINCIPAL_SCOPE_KEY",
    "Buckets",
    "Limits",
    "MemoryBuckets",
    "SeenToken",
    "bearer_token",
    "make_buckets",
    "rate_limit_middleware",
    "request_key",
    "store_buckets",
]


def make_buckets(settings: Settings) -> Buckets | None:
    """The settings' store of buckets; None when rate limits are off."""
    if settings.rate_limit_per_second <= 0:
        return None
    limits = Limits(settings.rate_limit_per_second, settings.rate_limit_burst)
    return store_buckets(settings, limits)


def store_buckets(settings: Settings, limits: Limits, prefix: str = "") -> Buckets:
    """Buckets of `limits` where the settings keep them: this process's memory, or the Redis
    server of `rate_limit_store` under `rate_limit_prefix` + `prefix`."""
    if settings.rate_limit_store == "memory":
        return MemoryBuckets(limits)
    from services.ratelimit.redis import SharedBuckets

    return SharedBuckets(
        limits,
        settings.rate_limit_store,
        settings.rate_limit_prefix + prefix,
        settings.rate_limit_store_timeout,
    )
