"""Browser tests of issue #16: every page at 1440x900 and 390x844 with no sideways scrolling,
no clipped table or cell, and no serious or critical accessibility violation (axe-core, from
npm, injected by Playwright); the home lists and filters, the play page's hand, turn cue and
result, the replay's trick list, autoplay, point of view and chart, and the TV page.

Screenshots go to test-artifacts/web/ (printed by each test; gitignored)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from domain.rules import Rules
from services.app import create_app, services_of
from tests.service.helpers import ADMIN_HEADERS, LiveServer, bearer, wait_for
from tests.web.conftest import ARTIFACTS, web_settings

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
AXE = Path(os.environ.get("KING_AXE", ROOT / "node_modules" / "axe-core" / "axe.min.js"))
VIEWPORTS = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
HOUSE = ["house:random"] * 4


@pytest.fixture(scope="module")
def axe() -> str:
    if not AXE.exists():
        reason = f"axe-core not found at {AXE} (npm ci in the repository's root)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + " (CI=true: the accessibility checks must run)")
        pytest.skip(reason)
    return str(AXE)


class Site:
    def __init__(self, live: LiveServer, token: str, deal: int) -> None:
        self.live, self.url, self.token = live, live.url, token
        self.deal = deal  # an entry of `fin` after the first with three tricks at least


def _player(http: httpx.Client, player_id: str) -> str:
    r = http.post("/api/v1/players", json={"id": player_id}, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    return str(r.json()["token"])


def _game(http: httpx.Client, token: str, seats: list[str], game_id: str, secs: float) -> None:
    body = {"seats": seats, "rules": {"mode": "short12"}, "id": game_id, "decision_seconds": secs}
    r = http.post("/api/v1/games", json=body, headers=bearer(token))
    assert r.status_code == 201, r.text


def _play_out(http: httpx.Client, token: str, game_id: str) -> None:
    """Play seat 0 to the game's end through the API (its first legal action each turn)."""
    for _ in range(5000):
        r = http.get(f"/api/v1/games/{game_id}/seats/0", headers=bearer(token))
        assert r.status_code == 200, r.text
        view = r.json()["view"]
        if view["phase"] == "over":
            return
        if view["to_move"] == 0 and view["legal"]:
            http.post(
                f"/api/v1/games/{game_id}/actions", json=view["legal"][0], headers=bearer(token)
            )
        else:
            time.sleep(0.01)
    raise AssertionError(f"{game_id} did not end")


def _status(http: httpx.Client, game_id: str) -> str:
    return str(http.get(f"/api/v1/games/{game_id}").json()["game"]["status"])


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A service with a finished tournament played by the runner outside the service
    (`cup`), a finished game of house bots (`fin`), a finished game where ada's seat timed
    played to its end (`ada-fin`) and a live game waiting for ada (`ada-live`)."""
    from tournament.runner import TournamentRunner, parse_players

    live = LiveServer(create_app(web_settings(tmp_path_factory.mktemp("site")))).start()
    try:
        services = services_of(live.app)
        runner = TournamentRunner(services.store, services.repo)
        runner.create(
            "cup",
            parse_players("random*4,heuristic*4"),
            name="Akşam kupası",
            format="swiss",
            rounds=1,
            rules=Rules.from_dict({"mode": "short12"}),
        )
        runner.run("cup")
        with httpx.Client(base_url=live.url, timeout=30) as http:
            token = _player(http, "ada")
            _game(http, token, HOUSE, "fin", 600)
            _game(http, token, ["ada", *HOUSE[:3]], "ada-fin", 600)
            _game(http, token, ["ada", *HOUSE[:3]], "ada-live", 600)
            wait_for(lambda: _status(http, "fin") == "over", "fin to end", 120)
            _play_out(http, token, "ada-fin")
            seat = "/api/v1/games/ada-live/seats/0"
            wait_for(
                lambda: http.get(seat, headers=bearer(token)).json()["view"]["to_move"] == 0,
                "ada's turn",
            )
            deals = http.get("/games/fin/replay.json").json()["deals"]
        deal = next(i + 1 for i, d in enumerate(deals) if i > 0 and len(d["tricks"]) >= 3)
        services.games.catch_up()
        yield Site(live, token, deal)
    finally:
        live.stop()


@pytest.fixture(params=list(VIEWPORTS))
def view(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:
    size = VIEWPORTS[request.param]
    phone = request.param == "phone"
    context = browser.new_context(viewport=size, is_mobile=phone, has_touch=phone)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors
    page.kind = request.param
    try:
        yield page
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{request.node.name}-final.png"), full_page=True)
        context.close()


def _past_the_edge(page: Any) -> list[str]:
    """The elements reaching past the window's right edge (what makes a page scroll sideways)."""
    found: list[str] = page.evaluate(
        """() => [...document.querySelectorAll('body *')]
             .filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5)
             .map(e => e.tagName + '#' + e.id + '.' + e.className + ': '
                  + e.textContent.trim().slice(0, 40)).slice(0, 8)"""
    )
    return found


def check(page: Any, axe: str, name: str) -> None:
    """No sideways scrolling, nothing clipped, no serious or critical axe violation; a
    screenshot kept."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}-{page.kind}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], (name, page.kind, width, _past_the_edge(page))
    clipped = page.evaluate(
        """() => [...document.querySelectorAll('table, th, td, .scroll-x, .gid')]
             .filter(e => e.getClientRects().length && e.scrollWidth > e.clientWidth + 1)
             .map(e => e.tagName + ' ' + (e.id || '') + ': ' + e.textContent.trim().slice(0, 40))"""
    )
    assert clipped == [], (name, page.kind, clipped)
    page.add_script_tag(path=axe)
    found = page.evaluate(
        """async () => (await axe.run(document, { resultTypes: ['violations'] })).violations
             .filter(v => v.impact === 'serious' || v.impact === 'critical')
             .map(v => v.id + ' (' + v.impact + '): '
                  + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '))"""
    )
    assert found == [], (name, page.kind, found)
    assert not page.js_errors, (name, page.js_errors)


def _sign_in(page: Any, token: str) -> None:
    page.fill("#token", token)
    page.click("#signin button[type=submit]")
    page.wait_for_selector("#whoami:has-text('ada')")


def test_every_page_fits_and_passes_axe(site: Site, view: Any, axe: str) -> None:
    pages = [
        ("home-en", "/?lang=en", "#games"),
        ("home-tr-over", "/?lang=tr&status=over", "#games"),
        ("tournament-tr", "/tournaments/cup?lang=tr", "#standings"),
        ("tournament-en", "/tournaments/cup?lang=en", "#standings"),
        ("replay-tr", f"/games/fin?deal={site.deal}&card=9&lang=tr", "#trick .card"),
        ("replay-pov-en", f"/games/fin?deal={site.deal}&card=9&seat=1&lang=en", "#trick .card"),
        ("replay-live-en", "/games/ada-live?lang=en", "#btn-follow"),
        ("play-result-en", "/play/fin?lang=en", "#result"),
        ("invitations-tr", "/invitations?lang=tr", "#signin"),
        ("lobby-en", "/lobby?lang=en", "body[data-lobby=ready]"),
        ("lobby-tr", "/lobby?lang=tr", "body[data-lobby=ready]"),
        ("not-found-en", "/games/nope?lang=en", "h1"),
        ("tv-en", "/tv?lang=en", "#tv"),
    ]
    for name, path, ready in pages:
        view.goto(site.url + path)
        view.wait_for_selector(ready)
        check(view, axe, name)


def test_the_signed_in_lobby_fits_and_passes_axe(site: Site, view: Any, axe: str) -> None:
    """The lobby with its forms shown (signed in) and an open table listed, Join-less (the
    player sits at it) but with its Cancel button."""
    with httpx.Client(base_url=site.url, timeout=30) as http:
        body = {"seats": ["person", "person", "house:strong", "person"]}
        r = http.post("/api/v1/lobby/tables", json=body, headers=bearer(site.token))
        assert r.status_code == 201, r.text
        tid = r.json()["id"]
    view.goto(site.url + "/lobby?lang=tr")
    _sign_in(view, site.token)
    view.wait_for_selector(f"li.lobby-table[data-table={tid}] button.cancel")
    check(view, axe, "lobby-signed-in-tr")
    view.click(f"li.lobby-table[data-table={tid}] button.cancel")
    view.wait_for_selector(f"li.lobby-table[data-table={tid}]", state="detached")


def test_home_filters_in_the_browser(site: Site, view: Any, axe: str) -> None:
    view.goto(site.url + "/?lang=en")
    rows = view.locator("#games tbody tr")
    assert rows.count() == 5  # the tournament's two tables and the three service games
    assert view.locator("#games a[href='/tournaments/cup']").count() == 2
    view.select_option("select[name=tournament]", "cup")
    view.click(".filters button[type=submit]")
    view.wait_for_url("**tournament=cup**")
    assert rows.count() == 2
    view.goto(site.url + "/?lang=en")
    view.select_option("select[name=player]", "ada")
    view.click(".filters button[type=submit]")
    view.wait_for_url("**player=ada**")
    assert sorted(rows.evaluate_all("rs => rs.map(r => r.dataset.game)")) == ["ada-fin", "ada-live"]
    view.click("a[href='/?status=live']")
    view.wait_for_url("**status=live**")
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.game)") == ["ada-live"]
    check(view, axe, "home-filtered")


def test_play_page_hand_in_view_turn_cue_and_result(site: Site, view: Any, axe: str) -> None:
    view.goto(site.url + "/play/ada-live?lang=en")
    _sign_in(view, site.token)
    view.wait_for_function("document.body.dataset.myTurn === '1'")
    view.wait_for_selector("#hand .card")
    assert view.is_visible("#turn-cue") and "Your turn" in view.inner_text("#turn-cue")
    assert view.title().startswith("▶")
    assert view.is_checked("#sound") is False  # the tone is off until asked for
    assert view.locator("#seat-0 #hand").count() == 1  # the hand sits at the player's seat
    height = VIEWPORTS[view.kind]["height"]
    for where in ("top", "bottom"):
        view.evaluate(
            "w => window.scrollTo(0, w === 'top' ? 0 : document.body.scrollHeight)", where
        )
        box = view.locator("#hand").bounding_box()
        if view.kind == "phone":  # always in view, wherever the page is scrolled
            assert box and box["y"] >= 0 and box["y"] + box["height"] <= height, (where, box)
    view.evaluate("window.scrollTo(0, 0)")
    check(view, axe, "play-my-turn")
    # A game that ended with ada seated: the result, no deal past the last.
    view.goto(site.url + "/play/ada-fin?lang=en")
    view.wait_for_selector("#result")
    view.wait_for_function("document.body.dataset.phase === 'over'")
    assert view.inner_text("#deal-no").strip() == "—"
    assert "Deal 13" not in view.inner_text("body")
    result = view.inner_text("#result")
    assert "Winners" in result and "ada" in result
    assert view.locator("#result a[href='/games/ada-fin']").count() == 1
    assert view.locator("#result a[href='/games/ada-fin#h-audit']").count() == 1
    assert view.is_hidden("#turn-cue")
    check(view, axe, "play-over")


def test_play_page_reconnects_after_a_dropped_stream(site: Site, view: Any) -> None:
    view.goto(site.url + "/play/ada-live?lang=en")
    _sign_in(view, site.token)
    view.wait_for_function("document.body.dataset.stream === 'up'")
    view.context.set_offline(True)
    view.evaluate("window.dispatchEvent(new Event('offline'))")
    # The open stream ends when the network goes: the page says it and tries again.
    view.route("**/events?format=ndjson*", lambda route: route.abort())
    view.context.set_offline(False)
    view.wait_for_function("document.body.dataset.stream === 'down'", timeout=20_000)
    assert "reconnecting" in view.inner_text("#link-state")
    view.unroute("**/events?format=ndjson*")
    view.wait_for_function("document.body.dataset.stream === 'up'", timeout=40_000)
    assert view.inner_text("#link-state").strip() == ""


def test_replay_trick_list_autoplay_pov_and_chart(site: Site, view: Any, axe: str) -> None:
    view.goto(site.url + "/games/fin?lang=en")
    view.wait_for_selector("#trick-list")
    # A deal after the first with five tricks at least (a deal can end early).
    n = next(
        i + 1
        for i, d in enumerate(view.evaluate("window.KingReplay.data()")["deals"])
        if i > 0 and len(d["tricks"]) >= 5
    )
    view.goto(site.url + f"/games/fin?deal={n}&card=0&lang=en")
    view.wait_for_selector("#trick-list .trick-btn")
    tricks = view.locator("#trick-list .trick-btn")
    deal_tricks = view.evaluate(f"window.KingReplay.data().deals[{n - 1}].tricks.length")
    assert tricks.count() == deal_tricks
    # The deal table hides what is ahead: the earlier deals' scores show, this deal's on do
    # not, nor the result, until the reader asks for them.
    ahead = view.evaluate(
        "[...document.querySelectorAll('#deal-table tbody tr')]"
        ".map(r => r.classList.contains('ahead'))"
    )
    assert not any(ahead[: n - 1]) and all(ahead[n - 1 :])
    assert view.is_hidden("#final-result")
    view.click("#btn-spoilers")
    assert view.locator("#deal-table tr.ahead").count() == 0
    assert view.is_visible("#final-result")
    view.click("#btn-spoilers")
    assert view.is_hidden("#final-result")
    assert view.locator("#trick-list .card").count() == 0  # nothing ahead is shown
    tricks.nth(4).click()
    assert view.evaluate("document.body.dataset.card") == "20"
    assert (
        view.locator("#trick-list .trick-btn[aria-current=step]").get_attribute("data-trick") == "5"
    )
    assert view.locator("#trick-list .card").count() == 20
    # The chart stops at the card shown, and the legend gives the totals there, not the end.
    up_to = float(view.get_attribute("#chart", "data-up-to") or "0")
    assert n - 1 < up_to <= n  # trick 5 may end the deal
    data = view.evaluate("window.KingReplay.data()")
    final = data["totals"]
    legend = view.inner_text("#legend")
    shown = view.evaluate(
        "[...document.querySelectorAll('#scores tbody tr')].map(r => +r.cells[3].textContent)"
    )
    for seat, name in enumerate(data["players"]):
        assert f"{name}: {shown[seat]}" in legend
    assert shown != final
    # A click on the chart jumps: near its right edge is the last deal.
    view.locator("#chart").scroll_into_view_if_needed()
    box = view.locator("#chart").bounding_box()
    assert box
    view.mouse.click(box["x"] + box["width"] - 3, box["y"] + box["height"] / 2)
    assert view.evaluate("document.body.dataset.deal") == str(len(data["deals"]))
    # The hook for other scripts: an event on each move.
    view.evaluate(
        """() => { window.__moves = [];
             document.addEventListener('king:replay-position',
               e => window.__moves.push([e.detail.deal, e.detail.card])); }"""
    )
    view.goto(site.url + f"/games/fin?deal={n}&card=0&lang=en")
    view.evaluate(
        """() => { window.__moves = [];
             document.addEventListener('king:replay-position',
               e => window.__moves.push([e.detail.deal, e.detail.card])); }"""
    )
    # Autoplay at 4x moves on by itself and stops when asked.
    view.select_option("#speed", "4")
    view.click("#btn-play")
    view.wait_for_function("+document.body.dataset.card >= 3", timeout=10_000)
    view.click("#btn-play")
    stopped = view.evaluate("document.body.dataset.card")
    view.wait_for_timeout(800)
    assert view.evaluate("document.body.dataset.card") == stopped
    assert [n, 1] in view.evaluate("window.__moves")
    # A seat's point of view: its own hand open, the others face down.
    view.select_option("#pov-select", "2")
    assert view.evaluate("document.body.dataset.pov") == "2"
    assert view.locator("#seat-2 .hand .card").count() > 0
    for other in (0, 1, 3):
        assert view.locator(f"#seat-{other} .hand .card").count() == 0
        assert "Face down" in view.inner_text(f"#seat-{other}")
    assert "seat=2" in view.input_value("#share-link")
    # The table turns: the chosen seat sits at the bottom.
    tops = view.evaluate(
        "[0, 1, 2, 3].map(s => document.getElementById('seat-' + s).getBoundingClientRect().top)"
    )
    assert tops[2] == max(tops) and tops[2] > tops[0], tops
    check(view, axe, "replay-features")
    assert not view.js_errors, view.js_errors


@pytest.fixture
def scheduled(tmp_path: Path) -> Iterator[LiveServer]:
    live = LiveServer(create_app(web_settings(tmp_path, scheduler_seconds=0.2))).start()
    try:
        yield live
    finally:
        live.stop()


def test_a_human_signs_up_and_is_told_the_table_is_ready(
    scheduled: LiveServer, view: Any, axe: str
) -> None:
    """On a tournament's page ada signs up with her token; once the organiser starts it and
    round 1 seats her, every page she opens in that tab says her table is ready, with a link
    to its play page. Back on the tournament's page she withdraws (and is not offered to sign
    up again: the API would refuse)."""
    url = scheduled.url
    with httpx.Client(base_url=url, timeout=30) as http:
        token = _player(http, "ada")
        body = {
            "id": "open",
            "format": "swiss",
            "rounds": 1,
            "rules": {"mode": "short12"},
            "decision_seconds": 600,
            "players": [{"strategy": "random"}] * 3,
        }
        r = http.post("/api/v1/tournaments", json=body, headers=ADMIN_HEADERS)
        assert r.status_code == 201, r.text
        view.goto(f"{url}/tournaments/open?lang=en")
        view.fill("#signup-token-input", token)
        view.click("#signup-token button[type=submit]")
        view.wait_for_selector("#signup-join:visible")
        view.click("#signup-join")
        view.wait_for_selector("#signup[data-registered='1']")
        assert "You are registered" in view.inner_text("#signup-status")
        check(view, axe, "tournament-signed-up")
        players = http.get("/api/v1/tournaments/open").json()["tournament"]["players"]
        assert any(p["id"] == "ada" and p["active"] for p in players)
        r = http.post("/api/v1/tournaments/open/start", headers=ADMIN_HEADERS)
        assert r.status_code == 200, r.text

        def paired() -> str | None:
            schedule = http.get("/api/v1/tournaments/open").json()["schedule"]
            return str(schedule[0]["tables"][0]["game_id"]) if schedule else None

        wait_for(lambda: paired() is not None, "round 1 to be paired")
        game_id = paired()
    view.goto(f"{url}/?lang=en")
    link = view.locator(f"#table-ready a[href='/play/{game_id}']")
    link.wait_for(timeout=20_000)
    assert "Your table is ready" in view.inner_text("#table-ready")
    check(view, axe, "table-ready-home")
    link.click()
    view.wait_for_url(f"**/play/{game_id}")
    view.wait_for_selector("#hand .card", timeout=20_000)
    assert view.is_hidden("#table-ready")  # not on the table's own page
    view.goto(f"{url}/tournaments/open?lang=en")
    view.click("#signup-leave")
    view.wait_for_selector("#signup[data-registered='withdrawn']")
    assert "You withdrew" in view.inner_text("#signup-status")
    assert view.is_hidden("#signup-join") and view.is_hidden("#signup-leave")


def test_tv_follows_a_live_table_and_switches_when_it_ends(
    server: LiveServer, browser: Any, axe: str
) -> None:
    """Two live tables: the TV shows one (its replay following live, in a frame) and keeps it
    while it is live; when it ends the TV moves to the other one by itself."""
    context = browser.new_context(viewport=VIEWPORTS["desktop"])
    page = context.new_page()
    page.kind = "desktop"
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            token = _player(http, "ada")
            for gid in ("tv-a", "tv-b"):
                _game(http, token, ["ada", *HOUSE[:3]], gid, 600)
                wait_for(lambda g=gid: _status(http, g) == "live", f"{gid} to start")
            page.goto(f"{server.url}/tv?lang=tr")
            page.wait_for_function("!!document.getElementById('tv').dataset.game")
            shown = page.evaluate("document.getElementById('tv').dataset.game")
            assert shown in ("tv-a", "tv-b")
            frame = page.frame_locator("#tv-frame")
            frame.locator("#btn-follow[aria-pressed=true]").wait_for(timeout=15_000)
            assert page.get_attribute("#tv-open", "href") == f"/games/{shown}"
            check(page, axe, "tv-live")
            _play_out(http, token, shown)
            other = "tv-b" if shown == "tv-a" else "tv-a"
            page.wait_for_function(
                "g => document.getElementById('tv').dataset.game === g", arg=other, timeout=30_000
            )
            assert page.get_attribute("#tv-open", "href") == f"/games/{other}"
        assert not errors, errors
    finally:
        context.close()


@pytest.mark.parametrize("width", [1024, 1920])
def test_wide_screens_neither_clip_nor_wrap_ids(site: Site, browser: Any, width: int) -> None:
    """From 1024 to 1920 px the home page, a tournament and a replay fit: no sideways
    scrolling, no clipped table or cell, and every game id and list heading on one line (the
    replay's narrow side panel may put a heading on two)."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        for name, path, ready in (
            ("home", "/?lang=tr", "#games"),
            ("tournament", "/tournaments/cup?lang=tr", "#standings"),
            ("replay", f"/games/fin?deal={site.deal}&card=9&lang=tr", "#trick .card"),
        ):
            page.goto(site.url + path)
            page.wait_for_selector(ready)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            shot = ARTIFACTS / f"{name}-{width}.png"
            page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot: {shot}")
            width_now = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert width_now[0] <= width_now[1], (name, width_now, _past_the_edge(page))
            clipped = page.evaluate(
                """() => [...document.querySelectorAll('table, th, td, .scroll-x')]
                     .filter(e => e.getClientRects().length && e.scrollWidth > e.clientWidth + 1)
                     .map(e => e.tagName + ': ' + e.textContent.trim().slice(0, 40))"""
            )
            assert clipped == [], (name, width, clipped)
            # A text on more than one line has line boxes at more than one height.
            wrapped = page.evaluate(
                """() => [...document.querySelectorAll(
                       '.gid, #games th, #tournaments th, #leaderboard th, #standings th')]
                     .filter(e => e.getClientRects().length)
                     .filter(e => { const r = document.createRange(); r.selectNodeContents(e);
                                    const tops = new Set([...r.getClientRects()]
                                      .map(b => Math.round(b.top)));
                                    return tops.size > 1; })
                     .map(e => e.textContent.trim())"""
            )
            assert wrapped == [], (name, width, wrapped)
    finally:
        context.close()
