"""Ids no stream can have are answered 404 with a reason, never a 500 (found by schemathesis)."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.service.helpers import ADMIN_HEADERS

LONG = "0" * 400


def test_overlong_ids_are_not_found(client: TestClient[Any]) -> None:
    for method, path in (
        ("POST", f"/api/v1/tournaments/{LONG}/players"),
        ("DELETE", f"/api/v1/tournaments/{LONG}/players/x"),
        ("GET", f"/api/v1/tournaments/{LONG}"),
        ("GET", f"/api/v1/games/{LONG}/record"),
    ):
        body = {"strategy": "random"} if method == "POST" else None
        r = client.request(method, path, json=body, headers=ADMIN_HEADERS)
        assert r.status_code in (400, 404), (method, path, r.status_code, r.text)
        assert r.headers["content-type"].startswith("application/problem+json")
