"""Browser tests: Playwright drives Debian's Chromium headless against a real uvicorn server
(SQLite in tmp_path). Screenshots go to test-artifacts/web/ (gitignored)."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from services.app import services_of
from tests.service.helpers import ADMIN, ADMIN_HEADERS, LiveServer, bearer, wait_for
from tests.web.conftest import press, shot

pytestmark = pytest.mark.slow
HOUSE = ["house:random"] * 4
MY_TURN = "document.body.dataset.myTurn === '1' && document.body.dataset.phase !== 'over'"
"""The page's condition for the seat's turn in a game still in play."""
PHONE = {"width": 390, "height": 844}


def _player(http: httpx.Client, player_id: str) -> str:
    r = http.post("/api/v1/players", json={"id": player_id}, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    return str(r.json()["token"])


def _game(http: httpx.Client, token: str, seats: list[str], game_id: str) -> None:
    body = {"seats": seats, "rules": {"mode": "short12"}, "id": game_id, "decision_seconds": 600}
    r = http.post("/api/v1/games", json=body, headers=bearer(token))
    assert r.status_code == 201, r.text


def _sign_in(page: Any, server: LiveServer, game_id: str, token: str, lang: str = "en") -> None:
    """Open the game's play page and sign in with the player's token."""
    page.goto(f"{server.url}/play/{game_id}?lang={lang}")
    page.fill("#token", token)
    page.click("#signin button[type=submit]")


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
        # A deal that ended (a rifki deal can end within these six turns) is public, hands
        # and all, and its cards are the same 52 names: what must not show is the live deal's.
        html = page.content()
        # The data the page holds now (refreshed from replay.json as the game moved): the
        # embedded element is the data of the page's first render, and a deal that ended since
        # (a rifki deal can end within these six turns) would put the old deal's cards, played
        # there, beside the new deal's hands.
        # The wait above saw the page at the public position, so this data is of the live deal.
        data = page.evaluate("window.KingReplay.data()")
        first = json.loads(page.evaluate("document.getElementById('replay-data').textContent"))
        assert data["version"] >= first["version"]
        state = services_of(server.app).repo.load("live")
        from domain.cards import card_name, cards_of

        played = {card_name(c) for t in state.tricks for c in t.cards}
        played |= {card_name(c) for c in state.trick_cards}
        hidden = {card_name(c) for h in state.hands for c in cards_of(h)} - played
        assert hidden
        (live,) = [d for d in data["deals"] if d["live"]]
        ended = len(data["deals"]) - 1
        now = json.dumps([live, data["record"]["deals"][ended:]])
        page_itself = re.sub(
            r'<script type="application/json" id="replay-data">.*?</script>', "", html, flags=re.S
        )
        assert page_itself != html  # the replay's data, checked above, is out of the rest
        assert not [c for c in hidden if f'"{c}"' in now]
        assert not [
            c for c in hidden if f'data-card="{c}"' in page_itself or f'"{c}"' in page_itself
        ]
    assert not page.js_errors, page.js_errors


def test_human_plays_a_whole_game_in_the_browser(server: LiveServer, page: Any) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        token = _player(http, "ada")
        _game(http, token, ["ada", "house:random", "house:heuristic", "house:random"], "human")
    _sign_in(page, server, "human", token)
    page.wait_for_selector("#whoami:has-text('ada')")
    shot(page, "play-start")
    # A second tab watches the replay live: at the end its script shows the audit.
    watcher = page.context.new_page()
    watcher_errors: list[str] = []
    watcher.on("pageerror", lambda exc: watcher_errors.append(str(exc)))
    watcher.goto(f"{server.url}/games/human?lang=en")
    watcher.wait_for_selector("#btn-follow[aria-pressed=true]")
    page.bring_to_front()  # a background tab's timers are throttled: keep the player's in front
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
        # The live tab's audit line reads as the server-rendered page's does.
        watcher.wait_for_selector("#audit-result .ok", timeout=15_000)
        shown = " ".join(watcher.inner_text("#audit-result").split())
        assert shown == _audit_text(http.get("/games/human?lang=en").text)
        assert f"({audit['events']} events)" in shown
    assert not page.js_errors, page.js_errors
    assert not watcher_errors, watcher_errors


def _move(page: Any) -> None:
    """Make the seat's move on the page: the first contract, or the first playable card."""
    if page.evaluate("document.body.dataset.phase") == "declaring":
        page.locator("#declare button[data-contract]").first.click()
    else:
        page.locator("#hand button.card.legal").first.click()


def test_a_click_on_the_next_turn_counts_while_the_last_reply_is_slow(
    server: LiveServer, page: Any
) -> None:
    """The stream can bring the seat's next turn before its last action's own reply (a slow
    answer, quick bots). The page used to drop every click until that reply came: the player
    clicked and nothing happened (CI's whole-game browser test met it once, on a busy machine).
    Here the first action's reply is held back until the next move has been made."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        token = _player(http, "ada")
        _game(http, token, ["ada", "house:random", "house:random", "house:random"], "slow")
    _sign_in(page, server, "slow", token)
    page.wait_for_selector("#whoami:has-text('ada')")
    held: list[tuple[Any, Any]] = []

    def hold_the_first_reply(route: Any) -> None:
        if held:
            route.continue_()
        else:
            held.append((route, route.fetch()))  # the server acts now; the page hears later

    page.route("**/api/v1/games/slow/actions", hold_the_first_reply)
    page.wait_for_function(MY_TURN, timeout=30_000)
    first = page.evaluate("document.body.dataset.version")
    _move(page)
    # The stream shows the move and the bots' answers: the seat's next turn, reply still held.
    page.wait_for_function(f"({MY_TURN}) && document.body.dataset.version !== '{first}'")
    assert len(held) == 1
    second = page.evaluate("document.body.dataset.version")
    _move(page)
    page.wait_for_function(f"document.body.dataset.version !== '{second}'", timeout=30_000)
    route, reply = held[0]
    route.fulfill(response=reply)  # the late reply, older than the page: it must not go back
    page.wait_for_timeout(500)
    assert int(page.evaluate("document.body.dataset.version")) > int(second)
    assert not page.js_errors, page.js_errors


def test_a_card_pressed_while_the_page_reads_its_view_again_is_played(
    server: LiveServer, page: Any
) -> None:
    """A press held while the page reads the seat's view again (its poll, every 5 seconds; a
    stream's wake-up does the same) is a move when released. The page used to build its hand
    and buttons anew on every read, even of the version it showed: the press and the release
    fell on two different buttons, the browser made no click of them, and the move was lost
    without a word (the three-browser lobby game stalled on it on busy machines)."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        token = _player(http, "ada")
        _game(http, token, ["ada", "house:random", "house:random", "house:random"], "held")
    _sign_in(page, server, "held", token)
    page.wait_for_selector("#whoami:has-text('ada')")
    page.wait_for_function(MY_TURN, timeout=30_000)
    before = page.evaluate("document.body.dataset.version")
    if page.evaluate("document.body.dataset.phase") == "declaring":
        target = page.locator("#declare button[data-contract]").first
    else:
        target = page.locator("#hand button.card.legal").first
    pressed_at = press(page, target)

    def a_read_of_the_seat_view(response: Any) -> bool:
        path = response.url.split("?", 1)[0]
        return response.request.method == "GET" and path.endswith("/games/held/seats/0")

    with page.expect_response(a_read_of_the_seat_view, timeout=15_000):
        pass  # the page's next read, at the version it shows (nobody else can move)
    page.wait_for_timeout(300)  # its answer handled
    assert page.evaluate("document.body.dataset.version") == before
    # Nor did the button move from under the press: the turn's clock, shown once the page had
    # read its deadline, used to push the contracts a line down while the declarer held one.
    assert target.bounding_box() == pressed_at
    page.mouse.up()
    page.wait_for_function(f"document.body.dataset.version !== '{before}'", timeout=15_000)
    assert not page.inner_text("#error"), page.inner_text("#error")
    assert not page.js_errors, page.js_errors


def _moves_of_seat_0(http: httpx.Client, game_id: str) -> int:
    """How many declarations and cards seat 0 has made, by the game's public log."""
    r = http.get(f"/api/v1/games/{game_id}/events?format=ndjson&follow=false")
    assert r.status_code == 200, r.text
    kinds = ("contract_declared", "card_played")
    messages = [json.loads(line) for line in r.text.splitlines() if line.strip()]
    return sum(1 for m in messages if m["type"] in kinds and m["data"].get("seat") == 0)


def _wait_for_moves_of_seat_0(http: httpx.Client, game_id: str, moves: int) -> None:
    def logged() -> bool:
        return _moves_of_seat_0(http, game_id) >= moves

    wait_for(logged, f"seat 0's move {moves} to be in the log")


def test_a_move_lost_on_the_way_is_sent_again_and_decided_once(
    server: LiveServer, page: Any
) -> None:
    """A move whose request never reaches the service is sent again; one whose reply is lost
    after the service decided it is sent again with the same Idempotency-Key and answered
    with that decision, not taken twice. The page used to drop the move without a word."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        token = _player(http, "ada")
        _game(http, token, ["ada", "house:random", "house:random", "house:random"], "lost")
        _sign_in(page, server, "lost", token)
        page.wait_for_selector("#whoami:has-text('ada')")
        keys: list[str] = []
        replies: list[tuple[int, str | None]] = []  # the answers to the tries sent again

        def lose_each_first_try(route: Any) -> None:
            key = route.request.headers["idempotency-key"]
            keys.append(key)
            if keys.count(key) > 1:
                reply = route.fetch()
                replies.append((reply.status, reply.headers.get("idempotent-replayed")))
                route.fulfill(response=reply)
            elif len(set(keys)) == 1:
                route.abort("connectionreset")  # the first move: never reaches the service
            else:
                route.fetch()  # the second move: decided, then its reply is lost
                route.abort("connectionreset")

        page.route("**/api/v1/games/lost/actions", lose_each_first_try)
        for expected_moves in (1, 2):
            page.wait_for_function(MY_TURN, timeout=30_000)
            before = page.evaluate("document.body.dataset.version")
            _move(page)
            page.wait_for_function(f"document.body.dataset.version !== '{before}'", timeout=30_000)
            _wait_for_moves_of_seat_0(http, "lost", expected_moves)
            assert _moves_of_seat_0(http, "lost") == expected_moves
        # Route handlers run only while this thread is inside a Playwright call: wait in one.
        for _ in range(300):
            if len(replies) == 2:
                break
            page.wait_for_timeout(100)
        assert len(keys) == 4 and keys[0] == keys[1] and keys[2] == keys[3] != keys[0], keys
        # The first move's second try was its first to arrive; the second move's was answered
        # with the decision already taken, not decided again.
        assert replies == [(200, None), (200, "true")], replies
        page.wait_for_timeout(300)  # the replayed answer handled by the page
        assert _moves_of_seat_0(http, "lost") == 2
        assert not page.inner_text("#error"), page.inner_text("#error")
    assert not page.js_errors, page.js_errors


def test_a_move_that_cannot_be_sent_says_so(server: LiveServer, page: Any) -> None:
    """With the service out of reach through every try, the page says the move was not sent
    (instead of nothing at all), and the seat keeps its turn."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        token = _player(http, "ada")
        _game(http, token, ["ada", "house:random", "house:random", "house:random"], "cut")
    _sign_in(page, server, "cut", token, lang="en")
    page.wait_for_selector("#whoami:has-text('ada')")
    page.route("**/api/v1/games/cut/actions", lambda route: route.abort("internetdisconnected"))
    page.wait_for_function(MY_TURN, timeout=30_000)
    _move(page)
    page.wait_for_function("document.getElementById('error').textContent !== ''", timeout=30_000)
    assert "could not be sent" in page.inner_text("#error")
    assert page.evaluate("document.body.dataset.myTurn") == "1"
    assert not page.js_errors, page.js_errors


def _contract(page: Any) -> str:
    return str(page.inner_text("#contract"))


def test_replay_buttons_and_deal_jumps(server: LiveServer, page: Any) -> None:
    """The step buttons do what the keys do; the deal list and the deal table jump to a deal."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        token = _player(http, "ada")
        _game(http, token, HOUSE, "btn")
        wait_for(lambda: _over(http, "btn"), "the game to end")
        record = http.get("/api/v1/games/btn/record").json()
    deals = record["deals"]  # the record names each deal's contract and plays
    played = [i for i, d in enumerate(deals) if d.get("plays")]
    first, last = played[0], len(deals) - 1
    page.goto(f"{server.url}/games/btn?lang=en")
    page.wait_for_selector("#seat-0 .hand .card")
    assert _position(page) == (1, 0)
    assert page.is_disabled("#btn-prev") and page.is_disabled("#btn-first")
    # The deal list: choose a deal, land on its first card with its contract shown.
    page.select_option("#deal-select", str(first))
    assert _position(page) == (first + 1, 0)
    assert _contract(page).startswith(_turkish(deals[first]["contract"]))
    plays = deals[first]["plays"]
    for k in range(1, 6):
        page.click("#btn-next")
        assert _position(page) == (first + 1, k)
    lead = next(iter(_slots(page).values()))
    assert lead.rstrip("*") == plays[4]  # the 2nd trick's lead
    page.click("#btn-prev")
    assert _position(page) == (first + 1, 4)
    assert len(_slots(page)) == 4
    page.click("#btn-next-trick")
    assert _position(page) == (first + 1, 8)
    page.click("#btn-prev-trick")
    assert _position(page) == (first + 1, 4)
    page.click("#btn-last")
    assert _position(page) == (first + 1, len(plays))
    assert page.is_disabled("#btn-last")
    page.click("#btn-first")
    assert _position(page) == (first + 1, 0)
    page.click("#btn-last")
    page.click("#btn-next")  # past the last card: the next deal's start
    assert _position(page) == (first + 2, 0)
    page.click("#btn-prev")  # and back to the previous deal's last card
    assert _position(page) == (first + 1, len(plays))
    # The deal table's links jump too (and scroll back up to the table).
    page.click(f'#deal-table a[data-deal="{last + 1}"]')
    assert _position(page) == (last + 1, 0)
    assert page.eval_on_selector("#deal-select", "s => s.value") == str(last)
    if deals[last].get("contract"):
        assert _contract(page).startswith(_turkish(deals[last]["contract"]))
    page.click("#btn-last")
    assert page.is_disabled("#btn-next") and page.is_disabled("#btn-next-trick")
    assert f"?deal={last + 1}&card=" in page.url
    shot(page, "replay-buttons")
    assert not page.js_errors, page.js_errors


def _turkish(contract: str) -> str:
    from domain.contracts import CONTRACT_INFO, Contract

    return CONTRACT_INFO[Contract(contract)].turkish


def _audit_text(html: str) -> str:
    m = re.search(r'<div id="audit-result">\s*<p class="(?:ok|bad)">(.*?)</p>', html, re.S)
    assert m, "no audit result in the page"
    return " ".join(m.group(1).split())


def test_unstarted_game_page_goes_live_and_shows_the_audit_like_the_server(
    server: LiveServer, page: Any
) -> None:
    """A table's page opened before the start follows the game once it starts; when the game
    ends its script shows the audit as the server-rendered page does: for a failing audit
    (answered by the test through a route), the reason and the first bad version."""
    from services.web.pages import _keep_audit

    bad = {
        "game_id": "later",
        "ok": False,
        "events": 99,
        "finished": True,
        "chain": {"ok": True, "events_checked": 99, "first_bad_version": None, "reason": None},
        "replay": {
            "ok": False,
            "seed_checked": True,
            "deals_checked": 3,
            "first_bad_version": 17,
            "event_type": "card_played",
            "reason": "the card was not in the hand",
            "notes": [],
        },
    }
    page.route(
        "**/api/v1/games/later/audit",
        lambda route: route.fulfill(
            status=200, content_type="application/json", body=json.dumps(bad)
        ),
    )
    with httpx.Client(base_url=server.url, timeout=30) as http:
        token = _player(http, "ada")
        body = {"seats": ["ada", *HOUSE[:3]], "rules": {"mode": "short12"}, "id": "later"}
        r = http.post("/api/v1/games", json={**body, "start": False}, headers=bearer(token))
        assert r.status_code == 201, r.text
        page.goto(f"{server.url}/games/later?lang=en")
        page.wait_for_selector("#waiting")
        assert "has not started" in page.inner_text("#waiting")
        r = http.post("/api/v1/games/later/start", headers=bearer(token))
        assert r.status_code == 200, r.text
        page.wait_for_selector("#btn-follow[aria-pressed=true]", timeout=15_000)
        shot(page, "unstarted-now-live")
        # ada plays her first legal action each turn until the game ends.
        while not _over(http, "later"):
            view = _seat_view(http, token, "later")
            if view["view"]["to_move"] == 0:
                act = {**view["view"]["legal"][0], "version": view["version"]}
                r = http.post("/api/v1/games/later/actions", json=act, headers=bearer(token))
                assert r.status_code in (200, 409), r.text
        page.wait_for_selector("#audit-result .bad", timeout=15_000)
        shown = " ".join(page.inner_text("#audit-result").split())
        assert "the card was not in the hand" in shown and "(v17)" in shown
        store = services_of(server.app).store
        info = store.stream_info("game-later")
        assert info is not None
        # The page's cache key: the game, its events, its head hash (services.web.pages).
        _keep_audit(("later", info.version, info.head_hash), bad)
        assert shown == _audit_text(http.get("/games/later?lang=en").text)
    assert not page.js_errors, page.js_errors


def _refused_card(page: Any) -> str:
    """Send a card the page disabled (what its buttons never allow) and return the refusal
    the page then shows (the box may still hold an earlier one: wait for the new text)."""
    before = page.inner_text("#error")
    page.evaluate(
        """() => { const b = document.querySelector('#hand button.card:disabled');
                   b.disabled = false; b.click(); }"""
    )
    page.wait_for_function(
        "t => { const x = document.getElementById('error').textContent; return x && x !== t; }",
        arg=before,
    )
    error: str = page.inner_text("#error")
    return error


def _page_caught_up(page: Any, http: httpx.Client, token: str) -> dict[str, Any]:
    """ada's seat view once the page shows the same version (the game waits for a person)."""
    for _ in range(50):
        body = _seat_view(http, token, "refuse")
        page.wait_for_function(
            "v => Number(document.body.dataset.version || 0) >= v",
            arg=body["version"],
            timeout=15_000,
        )
        again = _seat_view(http, token, "refuse")
        if (
            again["version"]
            == body["version"]
            == int(page.evaluate("document.body.dataset.version"))
        ):
            return again
    raise AssertionError("the play page never caught up with the game")


def test_play_page_never_goes_back_to_an_older_view(server: LiveServer, page: Any) -> None:
    """The page's reads can answer out of order (the stream's wake-ups, the poll and an
    action's reply are all in flight at once). An answer older than the view shown is
    dropped: the page must not offer again a move already made. The older answer is
    replayed here by routing the page's next seat reads to a view saved before a move."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        token = _player(http, "ada")
        _game(http, token, ["ada", *HOUSE[:3]], "stale")
        _sign_in(page, server, "stale", token)
        page.wait_for_function("document.body.dataset.myTurn === '1'", timeout=30_000)
        older = _seat_view(http, token, "stale")
        assert older["view"]["to_move"] == 0
        version = str(older["version"])
        page.wait_for_function(f"document.body.dataset.version === '{version}'")
        if page.evaluate("document.body.dataset.phase") == "declaring":
            page.locator("#declare button[data-contract]").first.click()
        else:
            page.locator("#hand button.card.legal").first.click()
        page.wait_for_function(f"Number(document.body.dataset.version) > {version}")
        assert not page.inner_text("#error"), page.inner_text("#error")
        served: list[int] = []

        def stale(route: Any) -> None:
            served.append(1)
            route.fulfill(status=200, content_type="application/json", body=json.dumps(older))

        page.route("**/api/v1/games/stale/seats/0", stale)
        for _ in range(60):  # the page polls its seat every 5 s
            if served:
                break
            page.wait_for_timeout(250)
        assert served, "the page never read its seat again"
        page.wait_for_timeout(500)  # time to render what it was given
        shown = int(page.evaluate("document.body.dataset.version"))
        assert shown > older["version"], "the page went back to the view before its move"
        page.unroute("**/api/v1/games/stale/seats/0")
        assert not page.inner_text("#error"), page.inner_text("#error")
    assert not page.js_errors, page.js_errors


def test_play_page_shows_refusals_and_the_clock(server: LiveServer, page: Any) -> None:
    """A card sent out of turn and an illegal card on one's turn: the page shows the API's
    reason with its code and rule (and the strike the illegal card earned); on one's turn the
    time left is shown and counts down."""
    from domain.violations import RULE_OF_CODE

    with httpx.Client(base_url=server.url, timeout=30) as http:
        token = _player(http, "ada")
        bo = _player(http, "bo")
        # the admin seats both (a player seating another would invite them)
        _game(http, ADMIN, ["ada", "bo", "house:random", "house:random"], "refuse")
        _sign_in(page, server, "refuse", token)
        page.wait_for_selector("#whoami:has-text('ada')")
        out_of_turn = illegal = clock = False
        for _ in range(300):
            body = _page_caught_up(page, http, token)
            view = body["view"]
            if view["to_move"] == 1:
                if not out_of_turn and view["phase"] == "playing":
                    error = _refused_card(page)
                    assert error.startswith("Refused: ") and "[not_your_turn, R-SEATS]" in error
                    assert "Strike" not in error, error
                    shot(page, "play-refused-out-of-turn")
                    out_of_turn = True
                seat1 = http.get("/api/v1/games/refuse/seats/1", headers=bearer(bo)).json()
                act = {**seat1["view"]["legal"][0], "version": seat1["version"]}
                r = http.post("/api/v1/games/refuse/actions", json=act, headers=bearer(bo))
                assert r.status_code == 200, r.text
                continue
            assert view["to_move"] == 0, view["to_move"]
            if not clock:
                page.wait_for_selector("#clock:has-text('Time left')")
                first = float(page.inner_text("#clock").split(": ")[1].split()[0])
                assert 0 < first <= 600
                page.wait_for_function(
                    "t => parseFloat(document.getElementById('clock').textContent"
                    ".split(': ')[1]) < t",
                    arg=first,
                    timeout=5_000,
                )
                clock = True
            disabled = page.locator("#hand button.card:disabled").count()
            if view["phase"] == "playing" and disabled and out_of_turn:
                error = _refused_card(page)
                m = re.search(r"\[([a-z_]+), (R-[A-Z0-9]+)\]", error)
                assert m and RULE_OF_CODE[m.group(1)] == m.group(2), error
                assert m.group(1) != "not_your_turn" and "Strike 1" in error, error
                shot(page, "play-refused-illegal")
                illegal = True
                break
            version = body["version"]
            if view["phase"] == "declaring":
                page.locator("#declare button[data-contract]").first.click()
            else:
                page.locator("#hand button.card.legal").first.click()
            page.wait_for_function(f"document.body.dataset.version !== '{version}'")
        assert out_of_turn and illegal and clock
        strikes = http.get("/api/v1/games/refuse").json()["view"]["strikes"]
        assert strikes[0] == 1  # the illegal card only: a card out of turn earns no strike
    assert not page.js_errors, page.js_errors


def _overflow(page: Any) -> list[str]:
    """Elements reaching past the phone's right edge (empty when nothing overflows)."""
    found: list[str] = page.evaluate(
        """w => { const out = [];
             for (const e of document.querySelectorAll('body *')) {
               const r = e.getBoundingClientRect();
               if (r.width && r.right > w + 0.5) out.push(e.tagName + '#' + e.id);
             } return out.slice(0, 10); }""",
        PHONE["width"],
    )
    return found


def _fits(page: Any, name: str) -> None:
    # A mobile browser widens the layout viewport to fit content that overflows (innerWidth
    # grows with it), so both are held to the phone's width.
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1] == PHONE["width"], (name, width, _overflow(page))


def test_pages_fit_a_phone_screen(server: LiveServer, browser: Any) -> None:
    """At 390x844 (a phone) the replay and play pages render without sideways scrolling."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            token = _player(http, "ada")
            _game(http, token, HOUSE, "phone-fin")
            _game(http, token, ["ada", *HOUSE[:3]], "phone-live")
            wait_for(lambda: _over(http, "phone-fin"), "the game to end")
            wait_for(lambda: _seat_view(http, token, "phone-live")["view"]["to_move"] == 0, "ada")
            record = http.get("/api/v1/games/phone-fin/record").json()
        deal = next(i for i, d in enumerate(record["deals"]) if d.get("plays")) + 1
        pages = (
            ("phone-replay", f"/games/phone-fin?deal={deal}&card=6&lang=tr", "#trick .card"),
            ("phone-replay-live", "/games/phone-live?lang=en", "#btn-follow"),
        )
        for name, path, ready in pages:
            page.goto(server.url + path)
            page.wait_for_selector(ready)
            shot(page, name)
            _fits(page, name)
        _sign_in(page, server, "phone-live", token, lang="tr")
        page.wait_for_function("document.body.dataset.myTurn === '1'")
        page.wait_for_selector("#hand button.card")
        shot(page, "phone-play")
        _fits(page, "phone-play")
        assert not errors, errors
    finally:
        context.close()


def test_an_invitee_accepts_in_the_browser_and_the_game_starts(
    server: LiveServer, page: Any
) -> None:
    """Bo is invited to Ada's table: the invitation appears on /invitations (live, by the
    player's stream, after the page was opened) and on the table's play page; accepting it
    there starts the game, and the play page shows bo's hand."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        ada = _player(http, "ada")
        bo = _player(http, "bo")
        page.goto(f"{server.url}/invitations?lang=en")
        page.fill("#token", bo)
        page.click("#signin button[type=submit]")
        page.wait_for_selector("#whoami:has-text('bo')")
        page.wait_for_selector("#invitations-empty:not([hidden])")
        _game(http, ada, ["ada", "bo", "house:random", "house:heuristic"], "asked")
        row = page.locator("li.invitation[data-game=asked]")
        row.wait_for(timeout=15_000)  # no reload: the stream's notice brought it
        text = row.inner_text()
        assert "ada" in text and "Seats: 1" in text and "Expires" in text
        shot(page, "invitations")
        page.goto(f"{server.url}/play/asked?lang=en")  # the token is kept in the tab
        page.wait_for_selector("#invitations:not([hidden]) li.invitation[data-game=asked]")
        assert http.get("/api/v1/games/asked").json()["game"]["status"] == "created"
        page.click("li.invitation[data-game=asked] button[data-answer=accept]")
        page.wait_for_selector("#invitations-status:has-text('You accepted')")
        assert http.get("/api/v1/games/asked").json()["game"]["status"] == "live"
        page.wait_for_selector("#hand .card", timeout=15_000)
        assert page.locator("#hand .card").count() == 13
        assert "bo (you)" in page.inner_text("#seat-0")
        # The panel reloads its list after the answer, on its own request: the hand can show
        # first (a busy machine's run did), so wait for the accepted invitation to go.
        page.locator("li.invitation").first.wait_for(state="detached", timeout=15_000)
        assert page.locator("li.invitation").count() == 0
    assert not page.js_errors, page.js_errors


def test_an_accept_pressed_while_another_invitation_goes_still_accepts(
    server: LiveServer, page: Any
) -> None:
    """A press on Accept held while the list reloads (here: an older invitation cancelled, the
    player's stream's notice) accepts when released. The panel used to build every row again on
    each reload: the release fell on a new button, and the browser made no click of it."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        ada, bo = _player(http, "ada"), _player(http, "bo")
        page.goto(f"{server.url}/invitations?lang=en")
        page.fill("#token", bo)
        page.click("#signin button[type=submit]")
        page.wait_for_selector("#whoami:has-text('bo')")
        page.wait_for_selector("#invitations-empty:not([hidden])")
        for game_id in ("older", "newer"):
            _game(http, ada, ["ada", "bo", "house:random", "house:heuristic"], game_id)
            page.locator(f"li.invitation[data-game={game_id}]").wait_for(timeout=15_000)
        shown = "rows => rows.map(r => r.dataset.game)"
        assert page.eval_on_selector_all("#invitation-list > li", shown) == ["newer", "older"]
        received = http.get("/api/v1/me/invitations", headers=bearer(bo)).json()["received"]
        older = next(i["id"] for i in received if i["game_id"] == "older")
        accept = page.locator("li.invitation[data-game=newer] button[data-answer=accept]")
        box = press(page, accept)
        r = http.post(f"/api/v1/invitations/{older}/cancel", headers=bearer(ada))
        assert r.status_code == 200, r.text
        page.locator("li.invitation[data-game=older]").wait_for(state="detached", timeout=15_000)
        assert accept.bounding_box() == box  # the row below went; this one did not move
        page.mouse.up()
        page.wait_for_selector("#invitations-status:has-text('You accepted')", timeout=15_000)
        assert http.get("/api/v1/games/newer").json()["game"]["status"] == "live"
    assert not page.js_errors, page.js_errors
