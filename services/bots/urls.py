"""Which bot URLs the service may call (SSRF guard).

A bot URL is http or https with a host name and no user info. By default every address it
resolves to must be a global one: loopback, private, link-local, carrier-grade NAT, multicast,
reserved and cloud metadata addresses are refused. An IPv6 address that carries an IPv4 one
(mapped, NAT64 64:ff9b::/96, 6to4) is judged by that IPv4 address; local-use NAT64 and Teredo
are refused. `KING_BOT_URL_ALLOW` opens some of them for local tournaments and tests: a comma
list of `loopback`, `private` (10/8, 172.16/12, 192.168/16, fc00::/7), `link-local` and CIDRs
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
# `private` opens these only (not the documentation, benchmark or other special ranges).
PRIVATE = tuple(
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
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


# IPv6 ranges that carry an IPv4 address: judged by that address, as if it were given.
_IPV4_IN_LOW_BITS = tuple(
    ipaddress.IPv6Network(n)
    for n in (
        "::ffff:0:0/96",  # IPv4-mapped
        "::ffff:0:0:0/96",  # IPv4-translated (SIIT)
        "64:ff9b::/96",  # NAT64 well-known prefix: the gateway connects to the IPv4 address
        "::/96",  # IPv4-compatible (deprecated); :: and ::1 stay IPv6
    )
)
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
# Refused whole unless a CIDR names them: where a local-use NAT64 prefix puts the IPv4 address
# depends on the operator's prefix length, and Teredo tunnels are no way to reach a bot.
_REFUSED_V6 = tuple(ipaddress.IPv6Network(n) for n in ("64:ff9b:1::/48", "2001::/32"))


def _normal(ip: IPAddress) -> IPAddress | None:
    """The address to judge: an embedded IPv4 address if it has one, None to refuse."""
    if isinstance(ip, ipaddress.IPv4Address):
        return ip
    if any(ip in net for net in _REFUSED_V6):
        return None
    if ip in _SIX_TO_FOUR:
        return ip.sixtofour
    if int(ip) > 1 and any(ip in net for net in _IPV4_IN_LOW_BITS):
        return ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
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

    def _listed(self, ip: IPAddress) -> bool:
        return any(ip in net for net in self.networks if net.version == ip.version)

    def allowed(self, address: IPAddress) -> bool:
        if self._listed(address):
            return True
        ip = _normal(address)
        if ip is None:
            return False
        if ip is not address and self._listed(ip):
            return True
        if any(ip in net for net in METADATA if net.version == ip.version):
            return False
        if ip.is_loopback:
            return "loopback" in self.keywords
        if ip.is_link_local:
            return "link-local" in self.keywords
        if any(ip in net for net in PRIVATE if net.version == ip.version):
            return "private" in self.keywords
        return ip.is_global and not ip.is_multicast

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
