"""The replay page's transparency-log panel fails soft and loud: when the log cannot answer, the
page still shows the game, and the operator gets a warning that says why the panel is missing."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient
from structlog.testing import capture_logs

from services.app import services_of
from tests.service.helpers import wait_over
from tests.web.conftest import new_game

HOUSE = ["house:random"] * 4


def test_a_failing_log_drops_the_panel_and_logs_a_warning(
    client: TestClient[Any], ada: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    new_game(client, ada, HOUSE, "unlogged")
    wait_over(client, "unlogged")
    tlog = services_of(client.app).tlog

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the tree is unreadable")

    monkeypatch.setattr(tlog, "recent", broken)
    with capture_logs() as logged:
        r = client.get("/games/unlogged?lang=en")
    assert r.status_code == 200
    assert "log-note" not in r.text and 'id="replay-data"' in r.text
    warnings = [e for e in logged if e["event"] == "log_entry_unavailable"]
    assert warnings == [
        {
            "event": "log_entry_unavailable",
            "log_level": "warning",
            "game_id": "unlogged",
            "error": "RuntimeError",
        }
    ]
