"""The certificate store as one TLS context a process shares between its HTTP clients.

httpx loads the store again for every client it makes without one (about 70 ms of CPU here),
which a bot that opens a client per game, or a loop that polls with `httpx.get`, pays each
time. A context is safe to share between clients and threads.
"""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The process's one client TLS context (httpx's defaults, the environment ignored)."""
    return httpx.create_ssl_context(trust_env=False)
