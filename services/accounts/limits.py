"""Log-in attempts, rate-limited per name and per client address with the service's token
buckets (services.ratelimit: this process's memory, or Redis shared by every process), apart
from the general per-request limit and on even when that one is off."""

from __future__ import annotations

import math

from services.accounts.errors import LoginThrottled
from services.ratelimit import Buckets, Limits, store_buckets
from services.settings import Settings


def make_login_buckets(settings: Settings) -> Buckets:
    limits = Limits(settings.login_per_minute / 60.0, settings.login_burst)
    return store_buckets(settings, limits, "login:")


async def draw_login(buckets: Buckets, name: str, address: str) -> None:
    """Take one attempt from the name's and the address's buckets; LoginThrottled if either is
    empty. The name is keyed as typed, case-folded (a refused name still counts)."""
    waits = [
        (await buckets.draw("name:" + name.casefold()[:200]))[0],
        (await buckets.draw("ip:" + address))[0],
    ]
    wait = max(waits)
    if wait > 0:
        raise LoginThrottled(max(1, math.ceil(wait)))
