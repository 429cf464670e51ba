"""The bot URL policy (SSRF guard) on its own: addresses, allow-list settings, resolution.

Addresses are judged without the network; host names go through a faked resolver.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from litestar.testing import TestClient

from services.app import create_app
from services.bots import urls
from services.bots.urls import BadBotUrl, UrlPolicy
from tests.service.conftest import SettingsFactory
from tests.service.helpers import bearer, create_player

STRICT = UrlPolicy("")

# IPv6 transition forms of loopback, private and metadata IPv4 addresses.
TRANSITION_TO_INNER = [
    "64:ff9b::7f00:1",  # NAT64 well-known prefix, 127.0.0.1
    "64:ff9b::a00:1",  # NAT64, 10.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64, 169.254.169.254
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a00:1::",  # 6to4 of 10.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:0:127.0.0.1",  # IPv4-translated (SIIT)
    "::127.0.0.1",  # IPv4-compatible (deprecated)
    "::10.0.0.1",
]
# Refused whole, whatever they carry.
REFUSED_RANGES = [
    "64:ff9b:1::a00:1",  # local-use NAT64 (RFC 8215)
    "64:ff9b:1:ffff::808:808",
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7",  # Teredo, client 8.8.8.8
]
PUBLIC = [
    "8.8.8.8",
    "2606:4700:4700::1111",
    "64:ff9b::808:808",
    "2002:808:808::1",
    "::ffff:1.1.1.1",
]


def ip(text: str) -> Any:
    return ipaddress.ip_address(text)


@pytest.mark.parametrize("address", TRANSITION_TO_INNER + REFUSED_RANGES)
def test_ipv6_transition_addresses_are_refused_by_default(address: str) -> None:
    assert not STRICT.allowed(ip(address))


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass_in_any_form(address: str) -> None:
    assert STRICT.allowed(ip(address))


def test_embedded_ipv4_is_judged_as_that_address() -> None:
    loopback, private = UrlPolicy("loopback"), UrlPolicy("private")
    for address in ("64:ff9b::7f00:1", "2002:7f00:1::1", "::ffff:127.0.0.1"):
        assert loopback.allowed(ip(address)) and not private.allowed(ip(address))
    for address in ("64:ff9b::a00:1", "2002:a00:1::", "::ffff:10.0.0.1"):
        assert private.allowed(ip(address)) and not loopback.allowed(ip(address))
    assert UrlPolicy("127.0.0.0/8").allowed(ip("64:ff9b::7f00:1"))
    for address in REFUSED_RANGES:  # no keyword opens them ...
        assert not UrlPolicy("loopback,private,link-local").allowed(ip(address))
    assert UrlPolicy("64:ff9b:1::/48").allowed(ip(REFUSED_RANGES[0]))  # ... a CIDR does


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_nat64_and_6to4_agree_with_the_ipv4_address(n: int) -> None:
    v4 = ipaddress.IPv4Address(n)
    nat64 = ipaddress.IPv6Address((0x64FF9B << 96) | n)
    six_to_four = ipaddress.IPv6Address((0x2002 << 112) | (n << 80) | 1)
    for policy in (STRICT, UrlPolicy("loopback,private,link-local")):
        assert policy.allowed(nat64) == policy.allowed(v4) == policy.allowed(six_to_four)


def test_private_keyword_opens_private_networks_only() -> None:
    policy = UrlPolicy("private")
    for address in ("10.1.2.3", "172.16.0.1", "172.31.255.254", "192.168.1.1", "fd12:3456::1"):
        assert policy.allowed(ip(address)) and not STRICT.allowed(ip(address))
    for address in ("127.0.0.1", "::1", "169.254.1.1", "fe80::1", "100.64.0.1", "0.0.0.0", "::"):
        assert not policy.allowed(ip(address)), address
    for address in ("192.0.2.1", "198.18.0.1", "2001:db8::1", "224.0.0.1", "ff02::1"):
        assert not policy.allowed(ip(address)), address


def test_cidr_allowances_open_exactly_their_network() -> None:
    policy = UrlPolicy(" 10.1.0.0/16 , fd00:1::/64 ")
    assert policy.allowed(ip("10.1.200.3")) and policy.allowed(ip("fd00:1::5"))
    assert not policy.allowed(ip("10.2.0.1")) and not policy.allowed(ip("fd00:2::5"))
    assert not policy.allowed(ip("127.0.0.1"))
    assert UrlPolicy("10.1.0.7").allowed(ip("10.1.0.7"))  # a host is a /32
    with pytest.raises(ValueError, match="not loopback, private, link-local or a CIDR"):
        UrlPolicy("intranet")


@pytest.mark.parametrize(
    "address", ["169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"]
)
def test_metadata_addresses_stay_refused_when_link_local_and_private_are_open(
    address: str,
) -> None:
    assert not UrlPolicy("loopback,private,link-local").allowed(ip(address))
    assert UrlPolicy("link-local").allowed(ip("169.254.1.1"))  # its neighbours are open


def fake_resolver(monkeypatch: pytest.MonkeyPatch, table: dict[str, list[str]]) -> list[str]:
    """Make `socket.getaddrinfo` (used by both resolve paths) answer from `table`."""
    asked: list[str] = []

    def getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        asked.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        out: list[tuple[Any, ...]] = []
        for address in table[host]:
            if ":" in address:
                out.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0)))
            else:
                out.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)))
        return out

    monkeypatch.setattr(urls.socket, "getaddrinfo", getaddrinfo)
    return asked


def test_a_name_resolving_to_a_private_address_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = fake_resolver(
        monkeypatch,
        {
            "bot.example.com": ["93.184.216.34"],
            "intranet.example.com": ["10.20.30.40"],
            "mixed.example.com": ["93.184.216.34", "fd00::7"],
            "nat64.example.com": ["64:ff9b::a00:1"],
        },
    )
    assert STRICT.validate("https://bot.example.com/king") == "https://bot.example.com/king"
    for host in ("intranet", "mixed", "nat64"):
        with pytest.raises(BadBotUrl, match="an address bots may not use"):
            STRICT.validate(f"http://{host}.example.com:9000/bot")
    with pytest.raises(BadBotUrl, match="does not resolve"):
        STRICT.validate("http://nowhere.example.com/")
    assert UrlPolicy("private").validate("http://intranet.example.com/") == (
        "http://intranet.example.com/"
    )
    # the check before each request resolves again (DNS rebinding) and judges the same way
    target = STRICT.parse("http://intranet.example.com/bot")
    with pytest.raises(BadBotUrl, match=r"10\.20\.30\.40"):
        asyncio.run(STRICT.resolve(target))
    assert asyncio.run(UrlPolicy("10.20.0.0/16").resolve(target)) == [ip("10.20.30.40")]
    assert asked.count("intranet.example.com") == 4


def test_the_api_refuses_transition_addresses(make_settings: SettingsFactory) -> None:
    with TestClient(create_app(make_settings(bot_url_allow=""))) as client:
        token = create_player(client, "ada")
        for address in ("64:ff9b::7f00:1", "2002:7f00:1::1", "::ffff:7f00:1", "64:ff9b:1::1"):
            r = client.put(
                "/api/v1/me/bot", json={"url": f"http://[{address}]:9/"}, headers=bearer(token)
            )
            assert r.status_code == 422 and r.json()["title"] == "bad bot URL", r.text
