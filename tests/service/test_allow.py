"""OPTIONS on any path of the API answers 204 with `Allow` listing every method of the path,
also where the methods come from handlers registered one after another."""

from __future__ import annotations

import re

from litestar.routes import HTTPRoute
from litestar.testing import TestClient

from services.app import create_app
from tests.service.conftest import SettingsFactory


def test_options_lists_every_method_of_each_path(make_settings: SettingsFactory) -> None:
    app = create_app(make_settings())
    checked = 0
    with TestClient(app) as client:
        for route in app.routes:
            if not isinstance(route, HTTPRoute):
                continue
            path = re.sub(r"\{[^}]+\}", "1", route.path_format or "/")
            r = client.options(path)
            assert r.status_code == 204, (path, r.status_code)
            allowed = {m.strip() for m in r.headers["allow"].split(",")}
            assert allowed == set(route.methods), (path, allowed)
            checked += 1
        both = client.options("/api/v1/players")
        assert {"GET", "POST", "OPTIONS"} <= set(both.headers["allow"].replace(" ", "").split(","))
    assert checked >= 30
