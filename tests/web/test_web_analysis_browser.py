"""The replay page's analysis marks (static/analysis.js): off until turned on; for an ended deal
a badge on each card of the trick shown and the panel's best cards and declaration; for the
deal in play nothing but a note, and no request for its analysis."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

import services.analysis
from tests.service.helpers import ADMIN_HEADERS, LiveServer, bearer, wait_for
from tests.web.conftest import shot

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def small_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(services.analysis, "NODE_BUDGET", 50)
    monkeypatch.setattr(services.analysis, "CONTRACT_SAMPLES", 4)


def into_deal_two(http: httpx.Client) -> str:
    """Ada (seat 0, a human) with three house bots, played into deal 2: her first turn there."""
    r = http.post("/api/v1/players", json={"id": "ada"}, headers=ADMIN_HEADERS)
    token = str(r.json()["token"])
    body = {
        "seats": ["ada", "house:heuristic", "house:random", "house:random"],
        # (No King, king_tricks 0: a King in deal 1 would end the game before deal 2.)
        "rules": {"mode": "short12", "first_declarer": "seat0", "king_tricks": 0},
        "id": "ana",
        "decision_seconds": 600,
    }
    assert http.post("/api/v1/games", json=body, headers=bearer(token)).status_code == 201

    def my_turn() -> dict[str, Any] | None:
        seat: dict[str, Any] = http.get("/api/v1/games/ana/seats/0", headers=bearer(token)).json()
        return seat if seat["view"]["to_move"] == 0 else None

    while True:
        turn = wait_for(my_turn, "ada's turn")
        view = turn["view"]
        if view["deal"] == 2 and view["phase"] == "playing":
            return "ana"
        action = {**view["legal"][0], "version": turn["version"]}
        assert http.post("/api/v1/games/ana/actions", json=action, headers=bearer(token)).is_success


def test_marks_for_ended_deals_only(server: LiveServer, page: Any) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as http:
        game = into_deal_two(http)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/analysis" in r.url else None)
    page.goto(f"{server.url}/games/{game}?deal=1&card=6&lang=en")
    page.wait_for_selector("#trick .card")
    assert page.locator(".ana-badge").count() == 0  # off until turned on
    assert "Show the analysis" in page.inner_text("#analysis")
    page.check("#analysis-toggle")
    page.wait_for_function("document.querySelectorAll('.ana-badge').length === 2")
    assert page.locator("#analysis-body .ana-table tbody tr").count() == 2
    assert "The expert's choice" in page.inner_text("#analysis-body")
    shot(page, "analysis-deal-1")
    page.locator("body").click(position={"x": 5, "y": 5})  # the keys go to the page, not the box
    page.keyboard.press("ArrowRight")  # the next card: three on the table, three badges
    page.wait_for_function("document.querySelectorAll('.ana-badge').length === 3")
    assert any(u.endswith("/deals/1/analysis") for u in asked)
    # The deal in play: a note, no badge, and its analysis never asked for.
    page.goto(f"{server.url}/games/{game}?deal=2&card=2&lang=en")
    page.wait_for_selector("#analysis-body p")
    assert "once the deal has ended" in page.inner_text("#analysis-body")
    assert page.locator(".ana-badge").count() == 0
    assert not any("/deals/2/" in u for u in asked)
    # The choice is remembered, and the words are Turkish on a Turkish page.
    page.goto(f"{server.url}/games/{game}?deal=1&card=4&lang=tr")
    page.wait_for_function("document.querySelectorAll('.ana-badge').length === 4")
    assert "Analizi göster" in page.inner_text("#analysis")
    assert "Uzmanın seçimi" in page.inner_text("#analysis-body")
    assert not page.js_errors, page.js_errors
