"""Which bot URLs the service may call (SSRF guard).

A bot URL is http or https with a host name and no user info. By default every address it
resolves to must be a global one: loopback, private, link-local, carrier-grade NAT, multicast,
reserved and cloud metadata addresses are refused. `KING_BOT_URL_ALLOW` opens some of them for
local tournaments and tests: a comma list of `loopback`, `private`, `link-local` and CIDRs
(`10.1.0.0/16`). Metadata addresses stay refused unless a CIDR names them. The check runs when
a URL is registered and again, on the resolved address actually connected to, before every
request (DNS rebinding).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

MAX_URL_LENGTH = 2000
METADATA = tuple(
    ipaddress.ip_network(n)
    for n in ("169.254.169.254/32", "169.254.170.2/32", "100.100.100.200/32", "fd00:ec2::254/128")
)
_KEYWORDS = frozenset({"loopback", "private", "link-local"})


class BadBotUrl(ValueError):
    """A bot URL that is malformed, does not resolve, or points somewhere not allowed."""


@dataclass(frozen=True, slots=True)
class BotTarget:
    scheme: str
    host: str
    port: int
    path: str  # path and query, at least "/"


def _normal(ip: IPAddress) -> IPAddress:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


class UrlPolicy:
    def __init__(self, allow: str = "") -> None:
        self.keywords: set[str] = set()
        self.networks: list[IPNetwork] = []
        for item in filter(None, (p.strip().lower() for p in allow.split(","))):
            if item in _KEYWORDS:
                self.keywords.add(item)
                continue
            try:
                self.networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise ValueError(
                    f"bot URL allowance {item!r} is not loopback, private, link-local or a CIDR"
                ) from None

    def parse(self, url: str) -> BotTarget:
        if len(url) > MAX_URL_LENGTH:
            raise BadBotUrl("the URL is too long")
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise BadBotUrl(f"not a URL: {exc}") from None
        if parts.scheme not in ("http", "https"):
            raise BadBotUrl("a bot URL must be http:// or https://")
        if not parts.hostname:
            raise BadBotUrl("a bot URL needs a host")
        if parts.username is not None or parts.password is not None:
            raise BadBotUrl("a bot URL may not carry user info")
        if parts.fragment:
            raise BadBotUrl("a bot URL may not carry a fragment")
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        default = 443 if parts.scheme == "https" else 80
        return BotTarget(parts.scheme, parts.hostname, port or default, path)

    def allowed(self, address: IPAddress) -> bool:
        ip = _normal(address)
        if any(ip in net for net in self.networks if net.version == ip.version):
            return True
        if any(ip in net for net in METADATA if net.version == ip.version):
            return False
        if ip.is_global and not ip.is_multicast:
            return True
        if ip.is_loopback:
            return "loopback" in self.keywords
        if ip.is_link_local:
            return "link-local" in self.keywords
        if ip.is_private and not (ip.is_unspecified or ip.is_reserved or ip.is_multicast):
            return "private" in self.keywords
        return False

    def check_addresses(self, host: str, addresses: list[IPAddress]) -> list[IPAddress]:
        if not addresses:
            raise BadBotUrl(f"{host} does not resolve")
        refused = [a for a in addresses if not self.allowed(a)]
        if refused:
            raise BadBotUrl(
                f"{host} resolves to {refused[0]}, an address bots may not use "
                "(see KING_BOT_URL_ALLOW)"
            )
        return addresses

    def resolve_sync(self, target: BotTarget) -> list[IPAddress]:
        try:
            infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise BadBotUrl(f"{target.host} does not resolve: {exc}") from None
        return self.check_addresses(target.host, _addresses(infos))

    async def resolve(self, target: BotTarget) -> list[IPAddress]:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise BadBotUrl(f"{target.host} does not resolve: {exc}") from None
        return self.check_addresses(target.host, _addresses(infos))

    def validate(self, url: str) -> str:
        """Registration: parse, resolve and check now; the URL as given when all is well."""
        self.resolve_sync(self.parse(url))
        return url


def _addresses(infos: Sequence[tuple[Any, ...]]) -> list[IPAddress]:
    out: list[IPAddress] = []
    for info in infos:
        sockaddr = info[4]
        assert isinstance(sockaddr, tuple)
        host = str(sockaddr[0]).split("%", 1)[0]
        ip = ipaddress.ip_address(host)
        if ip not in out:
            out.append(ip)
    return out
