"""The process's one TLS context: certificates still checked, and shared by every client the
bot kit and the push sender make (each would otherwise load the certificate store again)."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

from services.botkit.pull import PullBot
from services.botkit.remote import RemoteBot
from services.bots.push import PushClient
from services.bots.urls import UrlPolicy
from services.tls import tls_context


def _context_of(client: Any) -> ssl.SSLContext:
    # (httpx's transport keeps the context in its connection pool)
    return client._transport._pool._ssl_context  # type: ignore[no-any-return]


def test_the_shared_context_checks_certificates_and_host_names() -> None:
    context = tls_context()
    assert context is tls_context()
    assert context.verify_mode is ssl.CERT_REQUIRED
    assert context.check_hostname is True
    assert context.cert_store_stats()["x509_ca"] > 0  # the store is loaded


def test_the_kits_clients_and_the_push_sender_share_it() -> None:
    bot = PullBot("http://127.0.0.1:9", "token", lambda request: request)
    with bot._client() as first, bot._client() as second:
        assert _context_of(first) is tls_context()
        assert _context_of(second) is tls_context()
    assert _context_of(RemoteBot("http://127.0.0.1:9")._client) is tls_context()
    sender = PushClient(UrlPolicy("loopback"), 1.0, 1024, "king-test")
    try:
        assert _context_of(sender._client) is tls_context()
    finally:
        asyncio.run(sender.aclose())
