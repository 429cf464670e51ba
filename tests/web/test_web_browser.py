"""Browser tests: Playwright drives Debian's Chromium headless against a real uvicorn server
(SQLite in tmp_path). Screenshots go to test-artifacts/web/ (gitignored)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from services.app import services_of
from tests.service.helpers import ADMIN_HEADERS, LiveServer, bearer, wait_for
from tests.web.conftest import shot

pytestmark = pytest.mark.slow
HOUSE = ["house:random"] * 4


def _player(http: httpx.Client, player_id: str) -> str:
    r = http.post("/api/v1/players", json={"id": player_id}, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    return str(r.json()["token"])


def _game(http: httpx.Client, token: str, seats: list[str], game_id: str) -> None:
    body = {"seats": seats, "rules": {"mode": "short12"}, "id": game_id, "decision_seconds": 600}
    r = http.post("/api/v1/games", json=body, headers=bearer(token))
    assert r.status_code == 201, r.text


def _over(http: httpx.Client, game_id: str) -> bool:
    return bool(http.get(f"/api/v1/games/{game_id}").json()["game"]["status"] == "over")


def _position(page: Any) -> tuple[int, int]:
    deal = page.evaluate("document.body.dataset.deal")
    card = page.evaluate("document.body.dataset.card")
    return int(deal), int(card)


def _slots(page: Any) -> dict[int, str]:
    shown: dict[int, str] = page.evaluate(
        """() => { const out = {};
             for (let s = 0; s < 4; s++) {
               const c = document.querySelector('#slot-' + s + ' .card');
               if (c) out[s] = c.dataset.card + (c.classList.contains('winner') ? '*' : '');
             } return out; }"""
    )
    return {int(k): v for k, v in shown.items()}


def test_replay_steps_through_a_finished_deal(server: LiveServer, page: Any) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        token = _player(http, "ada")
        _game(http, token, HOUSE, "fin")
        wait_for(lambda: _over(http, "fin"), "the game to end")
        record = http.get("/api/v1/games/fin/record").json()
    state = services_of(server.app).repo.load("fin")
    first = next(i for i, d in enumerate(state.completed) if hasattr(d, "tricks"))
    deal = state.completed[first]
    plays = record["deals"][first]["plays"]
    page.goto(f"{server.url}/games/fin?deal={first + 1}&card=0&lang=en")
    page.wait_for_selector("#seat-0 .hand .card")
    assert _position(page) == (first + 1, 0)
    assert page.locator("#seat-0 .hand .card").count() == 13
    assert "Audit passed" in page.inner_text("#audit-result")
    page.locator("body").click(position={"x": 5, "y": 5})
    for k in range(1, len(plays) + 1):
        page.keyboard.press("ArrowRight")
        assert _position(page) == (first + 1, k)
        t = (k - 1) // 4
        trick = deal.tricks[t]
        shown = _slots(page)
        want = {}
        for j in range(k - 4 * t):
            seat = (trick.leader + j) % 4
            want[seat] = plays[4 * t + j] + ("*" if k - 4 * t == 4 and seat == trick.winner else "")
        assert shown == want, f"card {k}: {shown} != {want}"
        if k == 9:
            shot(page, "replay-card-9")
    # Back by trick, to the start, to the end; a shared link opens the same moment.
    page.keyboard.press("Shift+ArrowLeft")
    assert _position(page)[1] == (len(plays) - 1) // 4 * 4
    page.keyboard.press("Home")
    assert _position(page) == (first + 1, 0)
    page.keyboard.press("Shift+ArrowRight")
    assert _position(page) == (first + 1, 4)
    page.keyboard.press("End")
    assert _position(page) == (first + 1, len(plays))
    page.goto(f"{server.url}/games/fin?deal={first + 1}&card=6")
    page.wait_for_selector("#trick .card")
    assert _position(page) == (first + 1, 6)
    assert len(_slots(page)) == 2
    assert page.locator("#chart polyline").count() == 4
    card = page.locator("#seat-0 .hand .card").first
    assert card.get_attribute("aria-label")  # e.g. "kupa papazı" / "king of hearts"
    assert not page.js_errors, page.js_errors


def _seat_view(http: httpx.Client, token: str, game_id: str) -> dict[str, Any]:
    body: dict[str, Any] = http.get(
        f"/api/v1/games/{game_id}/seats/0", headers=bearer(token)
    ).json()
    return body


def _public_position(http: httpx.Client, game_id: str) -> tuple[int, int]:
    view = http.get(f"/api/v1/games/{game_id}").json()["view"]
    return len(view["history"]) + 1, sum(len(t["cards"]) for t in view["tricks"])


def test_live_game_page_follows_the_stream(server: LiveServer, page: Any) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        token = _player(http, "ada")
        _game(http, token, ["ada", *HOUSE[:3]], "live")
        wait_for(lambda: _seat_view(http, token, "live")["view"]["to_move"] == 0, "ada's turn")
        page.goto(f"{server.url}/games/live?lang=tr")
        page.wait_for_selector("#btn-follow[aria-pressed=true]")
        assert "El gizli" in page.inner_text("#seat-1")
        for i in range(6):
            wait_for(lambda: _seat_view(http, token, "live")["view"]["to_move"] == 0, "ada's turn")
            view = _seat_view(http, token, "live")
            r = http.post(
                "/api/v1/games/live/actions", json=view["view"]["legal"][0], headers=bearer(token)
            )
            assert r.status_code == 200, r.text
            wait_for(lambda: _seat_view(http, token, "live")["view"]["to_move"] == 0, "ada's turn")
            want = _public_position(http, "live")
            page.wait_for_function(
                "([d, c]) => document.body.dataset.deal === String(d)"
                " && document.body.dataset.card === String(c)",
                arg=list(want),
                timeout=15_000,
            )
            if i == 3:
                shot(page, "live-following")
        # No hand of the live deal in the page, ever (the seats show how many cards are left).
        html = page.content()
        state = services_of(server.app).repo.load("live")
        from domain.cards import card_name, cards_of

        played = {card_name(c) for t in state.tricks for c in t.cards}
        played |= {card_name(c) for c in state.trick_cards}
        hidden = {card_name(c) for h in state.hands for c in cards_of(h)} - played
        assert not [c for c in hidden if f'data-card="{c}"' in html or f'"{c}"' in html]
    assert not page.js_errors, page.js_errors


def test_human_plays_a_whole_game_in_the_browser(server: LiveServer, page: Any) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        token = _player(http, "ada")
        _game(http, token, ["ada", "house:random", "house:heuristic", "house:random"], "human")
    page.goto(f"{server.url}/play/human?lang=en")
    page.fill("#token", token)
    page.click("#signin button[type=submit]")
    page.wait_for_selector("#whoami:has-text('ada')")
    shot(page, "play-start")
    actions = declared = 0
    for _ in range(400):
        page.wait_for_function(
            "document.body.dataset.myTurn === '1' || document.body.dataset.phase === 'over'",
            timeout=30_000,
        )
        if page.evaluate("document.body.dataset.phase") == "over":
            break
        version = page.evaluate("document.body.dataset.version")
        contract = page.locator("#declare button[data-contract]")
        if page.evaluate("document.body.dataset.phase") == "declaring":
            contract.first.wait_for(timeout=10_000)
            contract.first.click()
            declared += 1
        else:
            legal = page.locator("#hand button.card.legal")
            legal.first.wait_for(timeout=10_000)
            assert page.locator("#hand button.card:disabled").count() + legal.count() == (
                page.locator("#hand button.card").count()
            )
            legal.first.click()
        actions += 1
        page.wait_for_function(f"document.body.dataset.version !== '{version}'", timeout=30_000)
        if actions == 20:
            shot(page, "play-mid")
        assert not page.inner_text("#error"), page.inner_text("#error")
    assert page.evaluate("document.body.dataset.phase") == "over"
    assert "The game is over" in page.inner_text("#status")
    shot(page, "play-over")
    assert actions >= 30 and declared >= 1
    with httpx.Client(base_url=server.url, timeout=30) as http:
        wait_for(lambda: _over(http, "human"), "the game to be marked over")
        audit = http.get("/api/v1/games/human/audit").json()
        assert audit["ok"] is True
        assert http.get("/api/v1/games/human").json()["view"]["strikes"][0] == 0
    assert not page.js_errors, page.js_errors
