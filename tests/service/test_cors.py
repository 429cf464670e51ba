"""CORS is a setting: off by default (no browser page elsewhere may call the API); with
KING_CORS_ORIGINS, exactly those origins may, with the headers a bot page needs."""

from __future__ import annotations

import pytest
from litestar.testing import TestClient

from services.app import create_app
from services.errors import UserError
from services.settings import load_settings
from tests.service.conftest import SettingsFactory

PAGE = "https://bots.example.org"


def test_no_origin_is_allowed_by_default(make_settings: SettingsFactory) -> None:
    with TestClient(create_app(make_settings())) as client:
        r = client.get("/api/v1/games", headers={"origin": PAGE})
        assert r.status_code == 200
        assert "access-control-allow-origin" not in r.headers
        pre = client.options(
            "/api/v1/games",
            headers={"origin": PAGE, "access-control-request-method": "POST"},
        )
        assert "access-control-allow-origin" not in pre.headers


def test_the_configured_origins_and_only_they_may_call(make_settings: SettingsFactory) -> None:
    settings = make_settings(cors_origins=f"{PAGE}, http://localhost:5173")
    with TestClient(create_app(settings)) as client:
        r = client.get("/api/v1/games", headers={"origin": PAGE})
        assert r.headers["access-control-allow-origin"] == PAGE
        assert "access-control-allow-credentials" not in r.headers
        other = client.get("/api/v1/games", headers={"origin": "https://evil.example"})
        assert other.headers.get("access-control-allow-origin") != "https://evil.example"
        pre = client.options(
            "/api/v1/games/g-1/actions",
            headers={
                "origin": PAGE,
                "access-control-request-method": "POST",
                "access-control-request-headers": "authorization, content-type",
            },
        )
        assert pre.status_code in (200, 204), pre.text
        assert pre.headers["access-control-allow-origin"] == PAGE
        allowed = pre.headers["access-control-allow-headers"].lower()
        assert "authorization" in allowed and "content-type" in allowed


@pytest.mark.parametrize("bad", ["bots.example.org", "ftp://x.example", "https://a.example/path"])
def test_a_value_that_is_not_an_origin_is_refused_at_start(bad: str) -> None:
    with pytest.raises(UserError, match=r"KING_CORS_ORIGINS.*not an origin"):
        load_settings(cors_origins=bad)
