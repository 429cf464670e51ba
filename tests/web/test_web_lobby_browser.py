"""The lobby in the browser: a table opened over the API appears on an open /lobby page (by
the lobby's stream), a browser joins it, another player's join (over the API) fills the last
seat, starts the game and sends the browser to its play page, and the browser and the two API
players play it to the end against a house bot. The quick game goes straight to its table."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest

from tests.service.helpers import ADMIN_HEADERS, LiveServer, bearer, wait_for
from tests.web.conftest import press, shot

pytestmark = pytest.mark.slow


def _player(http: httpx.Client, player_id: str) -> str:
    r = http.post("/api/v1/players", json={"id": player_id}, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    return str(r.json()["token"])


def _open_the_lobby(page: Any, server: LiveServer, token: str, name: str) -> None:
    """/lobby, signed in with the player's token, its list loaded."""
    page.goto(f"{server.url}/lobby?lang=en")
    page.fill("#token", token)
    page.click("#signin button[type=submit]")
    page.wait_for_selector(f"#whoami:has-text('{name}')")
    page.wait_for_function("document.body.dataset.lobby === 'ready'")


def _play_over_the_api(
    url: str, token: str, game_id: str, seat: int, stop: threading.Event
) -> None:
    """The creator's seat: the first legal action whenever it is the seat's turn."""
    with httpx.Client(base_url=url, timeout=30) as http:
        while not stop.is_set():
            r = http.get(f"/api/v1/games/{game_id}/seats/{seat}", headers=bearer(token))
            if r.status_code != 200:
                stop.wait(0.2)
                continue
            body = r.json()
            view = body["view"]
            if view["phase"] == "over":
                return
            if view.get("to_move") == seat and view["legal"]:
                http.post(
                    f"/api/v1/games/{game_id}/actions",
                    json={**view["legal"][0], "seat": seat, "version": body["version"]},
                    headers=bearer(token),
                )
            else:
                stop.wait(0.1)


def _play_one(page: Any) -> None:
    """The seat's turn on its play page: the first contract offered, or the first legal card;
    then wait until the page shows the next version, with no error."""
    version = page.evaluate("document.body.dataset.version")
    if page.evaluate("document.body.dataset.phase") == "declaring":
        choice = page.locator("#declare button[data-contract]").first
    else:
        choice = page.locator("#hand button.card.legal").first
    choice.wait_for(timeout=10_000)
    choice.click()
    try:
        page.wait_for_function(f"document.body.dataset.version !== '{version}'", timeout=60_000)
    except Exception as exc:  # say what the page showed: the timeout alone tells nothing
        shown = page.evaluate("JSON.stringify(document.body.dataset)")
        status, error = page.inner_text("#status"), page.inner_text("#error")
        raise AssertionError(
            f"no new version after a move at {version}: {shown}, status {status!r}, error {error!r}"
        ) from exc
    assert not page.inner_text("#error"), page.inner_text("#error")


def test_a_browser_joins_an_open_table_and_plays_it_to_the_end(
    server: LiveServer, page: Any
) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        ada, bo, cem = _player(http, "ada"), _player(http, "bo"), _player(http, "cem")
        _open_the_lobby(page, server, bo, "bo")
        page.wait_for_selector("#tables-empty:not([hidden])")
        body = {
            "seats": ["person", "person", "person", "house:heuristic"],
            "rules": {"mode": "short12"},
            "decision_seconds": 600,
        }
        r = http.post("/api/v1/lobby/tables", json=body, headers=bearer(ada))
        assert r.status_code == 201, r.text
        tid = r.json()["id"]
        row = page.locator(f"li.lobby-table[data-table={tid}]")
        row.wait_for(timeout=15_000)  # no reload: the lobby's stream brought it
        assert "ada" in row.inner_text() and "free" in row.inner_text()
        shot(page, "lobby-open-table")
        row.locator("button.join").click()
        row.locator("button.leave").wait_for(timeout=15_000)  # seated, the table still open
        assert "bo" in row.inner_text()
        r = http.post(f"/api/v1/lobby/tables/{tid}/join", headers=bearer(cem))
        assert r.status_code == 200 and r.json()["status"] == "started", r.text
        page.wait_for_url(f"**/play/{tid}**", timeout=15_000)  # the stream said it started
        game = http.get(f"/api/v1/games/{tid}").json()["game"]
        assert game["status"] == "live"
        assert game["seats"] == ["ada", "bo", "cem", "house:heuristic"]
        page.wait_for_selector("#hand .card", timeout=15_000)

    stop = threading.Event()
    others = [
        threading.Thread(
            target=_play_over_the_api, args=(server.url, token, tid, seat, stop), daemon=True
        )
        for token, seat in ((ada, 0), (cem, 2))
    ]
    for other in others:
        other.start()
    try:
        page.bring_to_front()
        for _ in range(400):
            page.wait_for_function(
                "document.body.dataset.myTurn === '1' || document.body.dataset.phase === 'over'",
                timeout=60_000,
            )
            if page.evaluate("document.body.dataset.phase") == "over":
                break
            _play_one(page)
        assert page.evaluate("document.body.dataset.phase") == "over"
        shot(page, "lobby-game-over")
    finally:
        stop.set()
        for other in others:
            other.join(timeout=10)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        wait_for(
            lambda: http.get(f"/api/v1/games/{tid}").json()["game"]["status"] == "over",
            "the game to be marked over",
        )
        assert http.get(f"/api/v1/games/{tid}/audit").json()["ok"] is True
        assert http.get(f"/api/v1/lobby/tables/{tid}").json()["status"] == "started"
    assert not page.js_errors, page.js_errors


def test_a_join_pressed_while_another_table_changes_still_joins(
    server: LiveServer, page: Any
) -> None:
    """A press on one table's Join held while another table changes (news of the lobby's
    stream) joins when released; a table opened later is listed first. The page used to build
    the whole list again on every change: the release fell on a new button, and the browser
    made no click of it."""
    rows = "rows => rows.map(r => r.dataset.table)"
    with httpx.Client(base_url=server.url, timeout=30) as http:
        ada, bo, cem = _player(http, "ada"), _player(http, "bo"), _player(http, "cem")
        _open_the_lobby(page, server, bo, "bo")
        body = {"seats": ["person", "person", "person", "house:heuristic"]}

        def open_table(token: str) -> str:
            r = http.post("/api/v1/lobby/tables", json=body, headers=bearer(token))
            assert r.status_code == 201, r.text
            tid = str(r.json()["id"])
            page.locator(f"li.lobby-table[data-table={tid}]").wait_for(timeout=15_000)
            return tid

        older, newer = open_table(cem), open_table(ada)
        assert page.eval_on_selector_all("#table-list > li", rows) == [newer, older]
        join = page.locator(f"li.lobby-table[data-table={newer}] button.join")
        box = press(page, join)
        r = http.post(f"/api/v1/lobby/tables/{older}/join", headers=bearer(ada))
        assert r.status_code == 200, r.text
        page.locator(f"li.lobby-table[data-table={older}]:has-text('ada')").wait_for(timeout=15_000)
        assert join.bounding_box() == box  # the row below changed; this one did not move
        page.mouse.up()
        page.locator(f"li.lobby-table[data-table={newer}] button.leave").wait_for(timeout=15_000)
        assert "bo" in http.get(f"/api/v1/lobby/tables/{newer}").json()["seats"]
        newest = open_table(cem)
        assert page.eval_on_selector_all("#table-list > li", rows) == [newest, newer, older]
    assert not page.js_errors, page.js_errors


def test_the_quick_game_goes_straight_to_its_table(server: LiveServer, page: Any) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        ada = _player(http, "ada")
    page.goto(f"{server.url}/lobby?lang=tr")
    page.fill("#token", ada)
    page.click("#signin button[type=submit]")
    page.wait_for_selector("#whoami:has-text('ada')")
    page.click("#quick-game")
    page.wait_for_url("**/play/t-*", timeout=15_000)
    game_id = page.url.rsplit("/play/", 1)[1].split("?")[0]
    page.wait_for_selector("#hand .card", timeout=15_000)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        game = http.get(f"/api/v1/games/{game_id}").json()["game"]
    assert game["status"] == "live"
    assert game["seats"] == ["ada", "house:heuristic", "house:heuristic", "house:heuristic"]
    assert not page.js_errors, page.js_errors


def test_three_people_sign_up_meet_at_an_open_table_and_play_it_to_the_end(
    server: LiveServer, browser: Any
) -> None:
    """The issue's table: three browsers, each signed up and logged in (no token pasted),
    one opens a table on /lobby with a house bot in the last seat, the other two see it arrive
    and join, the last join starts it and sends all three to its play page, and they play it to
    the end in their browsers."""
    from tests.web.test_web_accounts_browser import _sign_up

    names = ["ada", "bo", "cem"]
    contexts = [browser.new_context(viewport={"width": 1100, "height": 900}) for _ in names]
    pages = [c.new_page() for c in contexts]
    errors: list[str] = []
    for p in pages:
        p.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        for p, name in zip(pages, names, strict=True):
            _sign_up(p, server.url, name)
            p.goto(f"{server.url}/lobby?lang=en")
            p.wait_for_selector(f"#whoami:has-text('{name}')")  # the session, no token typed
            p.wait_for_function("document.body.dataset.lobby === 'ready'")
        host, *guests = pages
        host.select_option("#seat-1", "person")
        host.select_option("#seat-2", "person")
        host.select_option("#seat-3", "house:heuristic")
        host.select_option("#table-rules", "short12")
        host.fill("#table-seconds", "600")
        host.click("#new-table button[type=submit]")
        row = guests[0].locator("li.lobby-table")
        row.first.wait_for(timeout=15_000)  # arrived by the stream
        tid = row.first.get_attribute("data-table")
        for guest in guests:
            guest.locator(f"li.lobby-table[data-table={tid}] button.join").click()
            if guest is guests[0]:
                guest.locator(f"li.lobby-table[data-table={tid}] button.leave").wait_for()
        for p in pages:
            p.wait_for_url(f"**/play/{tid}**", timeout=20_000)
            p.wait_for_selector("#hand .card", timeout=15_000)
        with httpx.Client(base_url=server.url, timeout=30) as http:
            game = http.get(f"/api/v1/games/{tid}").json()["game"]
        assert game["seats"] == ["ada", "bo", "cem", "house:heuristic"]
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            if all(p.evaluate("document.body.dataset.phase") == "over" for p in pages):
                break
            moved = False
            for p in pages:
                if p.evaluate("document.body.dataset.myTurn") != "1":
                    continue
                _play_one(p)
                moved = True
            if not moved:
                pages[0].wait_for_timeout(100)
        phases = [p.evaluate("document.body.dataset.phase") for p in pages]
        assert phases == ["over"] * 3, phases
        shot(pages[1], "lobby-three-browsers-over")
        with httpx.Client(base_url=server.url, timeout=30) as http:
            wait_for(
                lambda: http.get(f"/api/v1/games/{tid}").json()["game"]["status"] == "over",
                "the game to be marked over",
            )
            assert http.get(f"/api/v1/games/{tid}/audit").json()["ok"] is True
        assert not errors, errors
    finally:
        for c in contexts:
            c.close()
