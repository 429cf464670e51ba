"""Rate limits: token buckets per known token, else per client address (middleware.py), kept
in this process's memory (memory.py) or in Redis for every process at once (redis.py)."""

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
from services.ratelimit.redis import SharedBuckets
from services.settings import Settings

__all__ = [
    "EXEMPT_PREFIXES",
    "MAX_TOKEN_LENGTH",
    "PRINCIPAL_SCOPE_KEY",
    "Buckets",
    "Limits",
    "MemoryBuckets",
    "SeenToken",
    "SharedBuckets",
    "bearer_token",
    "make_buckets",
    "rate_limit_middleware",
    "request_key",
]


def make_buckets(settings: Settings) -> Buckets | None:
    """The settings' store of buckets; None when rate limits are off."""
    if settings.rate_limit_per_second <= 0:
        return None
    limits = Limits(settings.rate_limit_per_second, settings.rate_limit_burst)
    if settings.rate_limit_store == "memory":
        return MemoryBuckets(limits)
    return SharedBuckets(
        limits,
        settings.rate_limit_store,
        settings.rate_limit_prefix,
        settings.rate_limit_store_timeout,
    )
