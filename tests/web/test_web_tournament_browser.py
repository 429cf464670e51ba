"""Browser tests of the tournament page following a running tournament without reloading:
Playwright drives Debian's Chromium headless against a real uvicorn server whose scheduler
plays a service tournament (SQLite in tmp_path)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.app import create_app
from tests.service.helpers import ADMIN_HEADERS, LiveServer, bearer, wait_for
from tests.web.conftest import shot, web_settings

pytestmark = pytest.mark.slow
MARK = "window.__notReloaded === 42"  # set once on the page: a reload would lose it


@pytest.fixture
def scheduled(tmp_path: Path) -> Iterator[LiveServer]:
    live = LiveServer(create_app(web_settings(tmp_path, scheduler_seconds=0.2))).start()
    try:
        yield live
    finally:
        live.stop()


def _tournament(http: httpx.Client, tid: str, players: list[dict[str, str]], **extra: Any) -> None:
    body = {
        "id": tid,
        "format": "swiss",
        "rules": {"mode": "short12"},
        "decision_seconds": 600,
        "players": players,
        **extra,
    }
    r = http.post("/api/v1/tournaments", json=body, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text


def _played(page: Any) -> list[int]:
    """The standings' games-played column, as the page shows it now."""
    cells: list[str] = page.eval_on_selector_all(
        "#standings tbody tr", "rows => rows.map(r => r.cells[6].textContent.trim())"
    )
    return [int(c) for c in cells]


def test_tournament_page_follows_rounds_to_the_end(scheduled: LiveServer, page: Any) -> None:
    """Opened before the start, the page shows round 1 paired, its results in the standings,
    round 2 above it and finally the finished state, all without a reload, keeping the
    reader's scroll position and updating unchanged parts in place."""
    with httpx.Client(base_url=scheduled.url, timeout=30) as http:
        # round_minutes spaces the rounds (round 2 no earlier than 3 s after the start) so
        # the page has time to show round 1 closed; nothing below depends on it.
        _tournament(http, "cup", [{"strategy": "random"}] * 4, rounds=2, round_minutes=0.05)
        page.set_viewport_size({"width": 1100, "height": 300})  # short: the page scrolls
        page.goto(f"{scheduled.url}/tournaments/cup?lang=en")
        page.evaluate("window.__notReloaded = 42")
        assert page.inner_text("#t-meta").endswith("running")
        assert _played(page) == [0, 0, 0, 0] and page.locator("details.round").count() == 0
        page.evaluate("document.querySelector('h1').__kept = 1")
        r = http.post("/api/v1/tournaments/cup/start", headers=ADMIN_HEADERS)
        assert r.status_code == 200, r.text
        page.wait_for_selector("#round-1", timeout=20_000)
        assert page.evaluate(MARK)
        page.evaluate("window.scrollTo(0, 60)")
        page.evaluate("document.getElementById('round-1').__kept = 1")
        page.wait_for_function(
            "() => [...document.querySelectorAll('#standings tbody tr')]"
            ".every(r => r.cells[6].textContent.trim() !== '0')",
            timeout=30_000,
        )
        assert _played(page) == [1, 1, 1, 1], _played(page)
        assert page.locator("#round-1 tr.status-over").count() == 1
        shot(page, "tournament-round-1-recorded")
        page.wait_for_selector("#round-2", state="attached", timeout=30_000)
        page.wait_for_function(
            "() => document.getElementById('t-live').dataset.finished === '1'", timeout=30_000
        )
        assert page.evaluate(MARK)
        assert page.inner_text("#t-meta").endswith("finished")
        assert "Rounds: 2 / 2" in page.inner_text("#t-meta")
        assert _played(page) == [2, 2, 2, 2], _played(page)
        order = page.eval_on_selector_all("#t-rounds > details", "ds => ds.map(d => d.id)")
        assert order == ["round-2", "round-1"], order
        assert page.locator("tr.status-over").count() == 2
        assert page.locator("tr.status-live, tr.status-created").count() == 0
        # Updated in place: the round 1 element and the heading are the ones first shown.
        assert page.evaluate("document.getElementById('round-1').__kept === 1")
        assert page.evaluate("document.querySelector('h1').__kept === 1")
        assert page.evaluate("window.scrollY") == 60
        # It has taken in every event up to the last one (tournament_finished): from the stream,
        # or from the parts fetched at the finish, after which it closes the stream.
        version = http.get("/api/v1/tournaments/cup").json()["tournament"]["version"]
        assert page.evaluate("document.getElementById('t-live').dataset.seen") == str(version)
        page.set_viewport_size({"width": 1100, "height": 900})
        shot(page, "tournament-finished")
    assert not page.js_errors, page.js_errors


def test_tournament_page_polls_when_the_stream_is_down(scheduled: LiveServer, page: Any) -> None:
    """With the event stream refused, the page still follows by its slow poll (15 s)."""
    refused: list[str] = []

    def refuse(route: Any) -> None:
        refused.append(route.request.url)
        route.abort()

    page.route("**/api/v1/tournaments/*/events*", refuse)
    with httpx.Client(base_url=scheduled.url, timeout=30) as http:
        _tournament(http, "cup3", [{"strategy": "random"}] * 4, rounds=1)
        page.goto(f"{scheduled.url}/tournaments/cup3?lang=en")
        page.evaluate("window.__notReloaded = 42")
        r = http.post("/api/v1/tournaments/cup3/start", headers=ADMIN_HEADERS)
        assert r.status_code == 200, r.text
        page.wait_for_function(
            "() => document.getElementById('t-live').dataset.finished === '1'", timeout=45_000
        )
        assert page.evaluate(MARK) and refused
        assert page.locator("#round-1 tr.status-over").count() == 1
        assert _played(page) == [1, 1, 1, 1], _played(page)
    assert not page.js_errors, page.js_errors


def _to_move(http: httpx.Client, token: str, game_id: str, seat: int) -> dict[str, Any] | None:
    r = http.get(f"/api/v1/games/{game_id}/seats/{seat}", headers=bearer(token))
    if r.status_code != 200:
        return None
    view: dict[str, Any] = r.json()["view"]
    return view if view["to_move"] == seat else None


def test_tournament_page_refreshes_a_live_tables_line(scheduled: LiveServer, page: Any) -> None:
    """A table with a person at it stays live: as they play (no tournament event comes),
    the page's live line follows the trick count, without a reload."""
    with httpx.Client(base_url=scheduled.url, timeout=30) as http:
        r = http.post("/api/v1/players", json={"id": "ada"}, headers=ADMIN_HEADERS)
        assert r.status_code == 201, r.text
        token = str(r.json()["token"])
        players = [{"player": "ada"}] + [{"strategy": "random"}] * 3
        _tournament(http, "cup2", players, rounds=1)
        page.goto(f"{scheduled.url}/tournaments/cup2?lang=en")
        page.evaluate("window.__notReloaded = 42")
        r = http.post("/api/v1/tournaments/cup2/start", headers=ADMIN_HEADERS)
        assert r.status_code == 200, r.text

        def table() -> str | None:
            sched = http.get("/api/v1/tournaments/cup2").json()["schedule"]
            return str(sched[0]["tables"][0]["game_id"]) if sched else None

        game_id = wait_for(table, "round 1 to be paired")
        row = f"tr[data-game='{game_id}']"
        page.wait_for_selector(f"{row}.status-live .now", timeout=20_000)
        assert "● Follow live" in page.inner_text(row)
        seat = http.get(f"/api/v1/games/{game_id}").json()["view"]["players"].index("ada")
        seen = set()
        for _ in range(30):  # ada's actions; the bots answer between them
            view = wait_for(lambda: _to_move(http, token, game_id, seat), "ada's turn")
            r = http.post(
                f"/api/v1/games/{game_id}/actions", json=view["legal"][0], headers=bearer(token)
            )
            assert r.status_code == 200, r.text
            wait_for(lambda: _to_move(http, token, game_id, seat), "ada's turn again")
            public = http.get(f"/api/v1/games/{game_id}").json()["view"]
            if public["phase"] != "playing":
                continue
            line = f"Deal {public['deal']}/12"
            trick = f"Trick {sum(public['tricks_won'])}/13"
            page.wait_for_function(
                "([sel, a, b]) => { const t = document.querySelector(sel).textContent"
                ".replace(/\\s+/g, ' '); return t.includes(a) && t.includes(b); }",
                arg=[f"{row} .now", line, trick],
                timeout=20_000,
            )
            seen.add((line, trick))
            if len(seen) >= 3:
                break
        assert len(seen) >= 3, seen
        assert page.evaluate(MARK)
        shot(page, "tournament-live-line")
    assert not page.js_errors, page.js_errors
