"""The pages through Litestar's TestClient: both languages, 404s, the embedded record, and no
hidden card in a live game's page."""

from __future__ import annotations

import json
import re
from typing import Any

from litestar.testing import TestClient

from domain.cards import card_name, cards_of
from domain.contracts import Contract, display_name
from services.app import create_app, services_of
from tests.service.helpers import ADMIN_HEADERS, bearer, create_player, wait_for, wait_over
from tests.web.conftest import new_game

HOUSE = ["house:random"] * 4


def embedded(html: str, element_id: str) -> Any:
    m = re.search(rf'<script type="application/json" id="{element_id}">(.*?)</script>', html, re.S)
    assert m, f"no #{element_id} in the page"
    return json.loads(m.group(1))


def test_home_renders_in_both_languages(client: TestClient[Any], ada: str) -> None:
    new_game(client, ada, HOUSE, "done-1")
    wait_over(client, "done-1")
    tr = client.get("/?lang=tr")
    assert tr.status_code == 200
    assert '<html lang="tr">' in tr.text and "Biten oyunlar" in tr.text
    assert "king_lang=tr" in tr.headers.get("set-cookie", "")
    en = client.get("/?lang=en")
    assert '<html lang="en">' in en.text and "Finished games" in en.text
    assert "/games/done-1" in en.text
    assert "Leaderboard" in en.text


def test_language_from_cookie_then_accept_language(client: TestClient[Any]) -> None:
    assert '<html lang="en">' in client.get("/", headers={"accept-language": "en-GB,en;q=0.9"}).text
    assert '<html lang="tr">' in client.get("/", headers={"accept-language": "tr,en;q=0.5"}).text
    client.get("/?lang=en")  # remembered in the cookie
    page = client.get("/", headers={"accept-language": "tr"})
    assert '<html lang="en">' in page.text
    assert page.headers["content-language"] == "en"


def test_finished_game_page_embeds_the_public_record(client: TestClient[Any], ada: str) -> None:
    new_game(client, ada, HOUSE, "done-2")
    wait_over(client, "done-2")
    for lang, word in (("tr", "Denetim geçti"), ("en", "Audit passed")):
        r = client.get(f"/games/done-2?lang={lang}")
        assert r.status_code == 200, r.text
        assert word in r.text
        assert 'download="done-2.king-record.json"' in r.text
        assert "built-in method" not in r.text  # t.copy once named dict.copy, not the word
    html = client.get("/games/done-2").text
    payload = embedded(html, "replay-data")
    record = client.get("/api/v1/games/done-2/record").json()
    assert payload["record"] == record
    # The server-computed tricks are the record's plays, in order, with the core's winners.
    state = services_of(client.app).repo.load("done-2")
    played = [d for d in payload["deals"] if not d["redeal"]]
    assert len(payload["deals"]) == len(record["deals"])
    for deal, entry, done in zip(payload["deals"], record["deals"], state.completed, strict=True):
        assert [c for t in deal["tricks"] for c in t["cards"]] == entry.get("plays", [])
        assert deal["hands"] == entry["hands"]
        if not deal["redeal"]:
            assert [t["winner"] for t in deal["tricks"]] == [t.winner for t in done.tricks]
            assert deal["scores_after"][-1] == list(done.scores)
    assert played and payload["totals"] == list(state.totals)
    # Contract names: Turkish with the English beside (whichever the game played first).
    first = Contract(payload["record"]["deals"][0]["contract"])
    assert display_name(first) in html


def test_unknown_game_and_tournament_are_404_pages(client: TestClient[Any]) -> None:
    for path in ("/games/nope", "/play/nope", "/tournaments/nope"):
        r = client.get(path + "?lang=en")
        assert r.status_code == 404
        assert r.headers["content-type"].startswith("text/html")
        assert "Not found" in r.text
    assert client.get("/games/nope?lang=tr").text.count("Bulunamadı") >= 1
    assert client.get("/games/nope/replay.json").status_code == 404


def test_live_game_page_shows_no_hidden_card(client: TestClient[Any], ada: str) -> None:
    # ada holds seat 0 with ten minutes per decision: the game waits for her mid-deal.
    new_game(client, ada, ["ada", *HOUSE[:3]], "live-1", decision_seconds=600)
    services = services_of(client.app)

    def waiting_for_ada() -> bool:
        view = client.get("/api/v1/games/live-1/seats/0", headers=bearer(ada)).json()["view"]
        return bool(view["to_move"] == 0)

    wait_for(waiting_for_ada, "ada's turn")
    # Play until ada has played a card, so the page has something to show.
    for _ in range(3):
        wait_for(waiting_for_ada, "ada's turn")
        view = client.get("/api/v1/games/live-1/seats/0", headers=bearer(ada)).json()
        action = view["view"]["legal"][0]
        r = client.post("/api/v1/games/live-1/actions", json=action, headers=bearer(ada))
        assert r.status_code == 200, r.text
        if action["type"] == "play":
            break
    wait_for(waiting_for_ada, "ada's turn")
    state = services.repo.load("live-1")
    assert state.phase.value in ("declaring", "playing")
    played = {card_name(c) for t in state.tricks for c in t.cards}
    played |= {card_name(c) for c in state.trick_cards}
    hidden = {card_name(c) for h in state.hands for c in cards_of(h)} - played
    assert len(hidden) >= 12
    # An ended deal's hands are public and name every card, so the whole-page scan is only
    # meaningful while the first deal is live (nearly always here); the embedded live deal is
    # checked below in every case.
    pages = (
        ()
        if state.completed
        else (
            "/games/live-1?lang=en",
            "/games/live-1?lang=tr",
            "/games/live-1/replay.json",
            "/play/live-1",
            "/",
        )
    )
    for path in pages:
        text = client.get(path).text
        leaked = sorted(c for c in hidden if f'"{c}"' in text)
        assert not leaked, f"{path} shows hidden cards {leaked}"
    payload = embedded(client.get("/games/live-1").text, "replay-data")
    live = payload["deals"][-1]
    assert live["live"] is True and live["hands"] is None
    assert {c for t in live["tricks"] for c in t["cards"]} == {
        c for c in played if any(c in t["cards"] for t in live["tricks"])
    }
    assert payload["record"] == client.get("/api/v1/games/live-1/record").json()
    assert payload["seed"] is None


def test_play_page_and_static_files(client: TestClient[Any]) -> None:
    token = create_player(client, "bo")
    new_game(client, token, ["bo", *HOUSE[:3]], "p-1")
    for lang, word in (("tr", "API anahtarı"), ("en", "API token")):
        r = client.get(f"/play/p-1?lang={lang}")
        assert r.status_code == 200 and word in r.text
    files = (("king.css", "text/css"), ("replay.js", "javascript"), ("play.js", "javascript"))
    for name, kind in files:
        r = client.get(f"/static/{name}")
        assert r.status_code == 200 and kind in r.headers["content-type"]


def test_unstarted_table_page(client: TestClient[Any], ada: str) -> None:
    new_game(client, ada, ["ada", *HOUSE[:3]], "later", start=False)
    r = client.get("/games/later?lang=en")
    assert r.status_code == 200 and "has not started" in r.text


def test_tournament_page_shows_standings_and_rounds(client: TestClient[Any]) -> None:
    from domain.rules import Rules
    from tournament.runner import TournamentRunner, parse_players

    services = services_of(client.app)
    runner = TournamentRunner(services.store, services.repo)
    runner.create(
        "cup",
        parse_players("random*4"),
        name="Kupa",
        format="swiss",
        rounds=1,
        rules=Rules.from_dict({"mode": "short12"}),
    )
    runner.run("cup")
    for lang, word, fmt in (
        ("tr", "Puan durumu", "Biçim: <strong>İsviçre sistemi</strong>"),
        ("en", "Standings", "Format: <strong>Swiss</strong>"),
    ):
        r = client.get(f"/tournaments/cup?lang={lang}")
        assert r.status_code == 200, r.text
        assert word in r.text and "random-1" in r.text and fmt in r.text
    state = runner.load("cup")
    game_id = state.round_games[0][0]["game_id"]
    assert f"/games/{game_id}" in client.get("/tournaments/cup").text
    assert client.get(f"/games/{game_id}").status_code == 200  # a runner game, not indexed
    assert "/tournaments/cup" in client.get("/").text


def test_tournament_live_part_follows_the_stream_state(client: TestClient[Any]) -> None:
    """`?part=live` is the page's changing parts alone, with what its script needs: the stream
    version to resume from, whether it is finished, how many tables are unfinished."""
    runner, game_id = _paired_cup(client, "cup4")
    page = client.get("/tournaments/cup4?lang=en").text
    assert "/static/tournament.js" in page and "setTimeout" not in page
    part = client.get("/tournaments/cup4?part=live&lang=en")
    assert part.status_code == 200 and "<html" not in part.text and "<h1" not in part.text
    version = runner.load("cup4").version
    assert f'data-version="{version}"' in part.text and 'data-tournament="cup4"' in part.text
    assert 'data-finished="0"' in part.text and 'data-playing="1"' in part.text
    assert _cells(part.text, game_id) == _cells(page, game_id)
    runner.run("cup4")
    part = client.get("/tournaments/cup4?part=live&lang=en").text
    assert 'data-finished="1"' in part and 'data-playing="0"' in part and "finished" in part
    assert "/static/tournament.js" not in client.get("/tournaments/cup4").text
    assert client.get("/static/tournament.js").status_code == 200
    r = client.get("/tournaments/cup4?part=everything")
    assert r.status_code == 400, r.text


def _game_rows(html: str) -> list[str]:
    """The game ids of the home page's games table, in order."""
    table = html.split('id="games"', 1)[1].split("</table>", 1)[0] if 'id="games"' in html else ""
    return re.findall(r'<tr class="status-\w+" data-game="([^"]+)"', table)


def test_home_lists_runner_games_with_filters(client: TestClient[Any], ada: str) -> None:
    """The games `king tournament run` plays outside the service are on the home page beside
    the service's own tables, and the status, player and tournament filters narrow the list."""
    from domain.rules import Rules
    from tournament.runner import TournamentRunner, parse_players

    services = services_of(client.app)
    runner = TournamentRunner(services.store, services.repo)
    runner.create(
        "cup9",
        parse_players("random*4"),
        name="Dokuz",
        format="swiss",
        rounds=1,
        rules=Rules.from_dict({"mode": "short12"}),
    )
    runner.run("cup9")
    cup_game = str(runner.load("cup9").round_games[0][0]["game_id"])
    new_game(client, ada, HOUSE, "own-1")
    wait_over(client, "own-1")
    services.games.catch_up()
    home = client.get("/?lang=en").text
    assert set(_game_rows(home)) == {cup_game, "own-1"}
    assert 'href="/tournaments/cup9">Dokuz</a>' in home
    assert "Swiss" in home and "İsviçre sistemi" in client.get("/?lang=tr").text
    assert _game_rows(client.get("/?tournament=cup9").text) == [cup_game]
    assert _game_rows(client.get("/?player=random-1").text) == [cup_game]
    assert _game_rows(client.get("/?status=over").text) != []
    live = client.get("/?status=live&lang=en").text
    assert _game_rows(live) == [] and "No game matches these filters." in live
    assert client.get("/?status=bogus&player=" + "x" * 500).status_code == 200


def _paired_cup(client: TestClient[Any], tid: str) -> tuple[Any, str]:
    """A one-round Swiss of four random house bots, created by a runner outside the service
    and paired: the runner and the game id of its one table."""
    from domain.rules import Rules
    from tournament.runner import TournamentRunner, parse_players

    services = services_of(client.app)
    runner = TournamentRunner(services.store, services.repo)
    runner.create(
        tid,
        parse_players("random*4"),
        format="swiss",
        rounds=1,
        rules=Rules.from_dict({"mode": "short12"}),
    )
    assert runner.step(tid).kind == "paired"
    return runner, str(runner.load(tid).round_games[0][0]["game_id"])


def _cells(html: str, game_id: str) -> str:
    """The text of the tournament page's row for `game_id` (tags dropped, spaces squeezed)."""
    rows = [r.split("</tr>")[0] for r in html.split("<tr") if f'href="/games/{game_id}"' in r]
    assert rows, f"no row for {game_id}"
    return " ".join(re.sub(r"<[^>]+>", " ", rows[0]).split())


def test_tournament_page_describes_a_live_runner_table(client: TestClient[Any]) -> None:
    """A table the runner plays outside the service (not in the games index) is live as soon
    as its game exists, with the deal, contract and trick count from the public view."""
    from domain.deal import scores as deal_scores
    from domain.view import seat_view

    runner, game_id = _paired_cup(client, "cup2")
    services = services_of(client.app)
    assert "waiting" in _cells(client.get("/tournaments/cup2?lang=en").text, game_id)
    assert runner.step("cup2").kind == "created"
    # Declare and play five cards with the first legal action: one trick taken, one begun.
    plays = 0
    while plays < 5:
        state = services.repo.load(game_id)
        seat = state.to_move
        assert seat is not None
        action = seat_view(state, seat).legal[0]
        assert services.repo.execute(game_id, action.command(seat)).violation is None
        plays += action.kind == "play"
    state = services.repo.load(game_id)
    html = client.get("/tournaments/cup2?lang=en").text
    row = _cells(html, game_id)
    contract = display_name(state.deal.contract) if state.deal else ""
    declarer = state.players[state.declarer]
    assert f"live · Deal 1/12 · {contract} ({declarer}) · Trick 1/13" in row, row
    assert "● Follow live" in row
    # The running totals: ended deals (none) plus this deal's trick so far.
    assert state.deal is not None
    running = [t + d for t, d in zip(state.totals, deal_scores(state.deal), strict=True)]
    assert " / ".join(map(str, running)) in row
    # The trick in play: its one card on the table (public), and nothing of a hand.
    from domain.cards import card_name
    from domain.view import public_view
    from services.web.i18n import card_text

    begun = public_view(state).tricks[-1]
    assert begun.winner is None and len(begun.cards) == 1
    shown = card_text(card_name(begun.cards[0]))
    assert html.count('class="card mini-card') == 1 and shown in row
    assert "data-card" not in html and not re.search(r'"[2-9TJQKA][SHDC]"', html)


def test_tournament_page_reads_live_status_from_the_index(tmp_path: Any) -> None:
    """A service tournament's table waiting for a person: live (from the games index), with
    its deal line, though the tournament has no result for it."""
    from tests.web.conftest import web_settings

    with TestClient(create_app(web_settings(tmp_path, scheduler_seconds=0.2))) as c:
        ada = create_player(c, "ada")
        body = {
            "id": "cup3",
            "format": "swiss",
            "rounds": 1,
            "rules": {"mode": "short12"},
            "decision_seconds": 600,
            "players": [{"player": "ada"}] + [{"strategy": "random"}] * 3,
        }
        r = c.post("/api/v1/tournaments", json=body, headers=ADMIN_HEADERS)
        assert r.status_code == 201, r.text
        r = c.post("/api/v1/tournaments/cup3/start", headers=ADMIN_HEADERS)
        assert r.status_code == 200, r.text

        def table() -> str | None:
            sched = c.get("/api/v1/tournaments/cup3").json()["schedule"]
            gid = sched[0]["tables"][0]["game_id"] if sched and sched[0]["tables"] else None
            if gid is None:
                return None
            r = c.get(f"/api/v1/games/{gid}")  # 404 until the scheduler has made the table
            return (
                str(gid) if r.status_code == 200 and r.json()["game"]["status"] == "live" else None
            )

        game_id = wait_for(table, "the tournament's table to start")
        seat = c.get(f"/api/v1/games/{game_id}").json()["view"]["players"].index("ada")
        wait_for(
            lambda: (
                c.get(f"/api/v1/games/{game_id}/seats/{seat}", headers=bearer(ada)).json()["view"][
                    "to_move"
                ]
                == seat
            ),
            "ada's turn",
        )
        row = _cells(c.get("/tournaments/cup3?lang=en").text, game_id)
        assert " live · Deal 1/12 · " in row and "● Follow live" in row, row


def test_unstarted_table_page_waits_then_shows_the_game(client: TestClient[Any], ada: str) -> None:
    new_game(client, ada, ["ada", *HOUSE[:3]], "soon", start=False)
    html = client.get("/games/soon?lang=en").text
    assert 'data-game="soon"' in html and "/static/waiting.js" in html
    assert client.get("/games/soon/replay.json").json()["status"] == "created"
    assert client.get("/static/waiting.js").status_code == 200
    r = client.post("/api/v1/games/soon/start", headers=bearer(ada))
    assert r.status_code == 200, r.text
    assert client.get("/games/soon/replay.json").json()["status"] == "live"
    html = client.get("/games/soon?lang=en").text
    assert 'id="replay-data"' in html and "waiting.js" not in html


def test_audit_cache_is_bounded_and_keeps_the_recent() -> None:
    from services.web import pages

    saved = pages._AUDITS.copy()
    pages._AUDITS.clear()
    try:
        for i in range(pages.AUDITS_KEPT):
            pages._keep_audit((f"g{i}", 1), {"ok": True})
        assert pages._cached_audit(("g0", 1)) is not None  # used: now the newest
        pages._keep_audit(("extra", 1), {"ok": True})
        assert len(pages._AUDITS) == pages.AUDITS_KEPT
        assert pages._cached_audit(("g0", 1)) is not None
        assert pages._cached_audit(("g1", 1)) is None  # the least recently used went
    finally:
        pages._AUDITS.clear()
        pages._AUDITS.update(saved)


def test_finished_game_page_names_the_signed_checkpoint_that_includes_it(
    client: TestClient[Any], ada: str
) -> None:
    import base64
    import html as html_lib

    from eventstore.merkle import verify_inclusion
    from services.tlog.notes import Verifier, open_checkpoint

    new_game(client, ada, HOUSE, "logged-1")
    wait_over(client, "logged-1")
    page = client.get("/games/logged-1?lang=en").text
    assert "The signed transparency-log checkpoint that includes this game" in page
    note = html_lib.unescape(re.search(r'<pre id="log-note"[^>]*>(.*?)</pre>', page, re.S)[1])
    checkpoint = open_checkpoint(note, Verifier.parse(client.get("/api/v1/log/key").text))
    assert f"size {checkpoint.size}" in page
    last = services_of(client.app).store.stream_info("game-logged-1").version
    events = services_of(client.app).store.read_stream("game-logged-1", from_version=last)
    link = html_lib.unescape(re.search(r'href="(/api/v1/log/proof/inclusion[^"]*)"', page)[1])
    proof = client.get(link).json()
    assert proof["index"] == events[0].position - 1 and proof["size"] == checkpoint.size
    path = [base64.b64decode(p) for p in proof["proof"]]
    leaf = base64.b64decode(proof["leaf_hash"])
    assert verify_inclusion(proof["index"], proof["size"], leaf, path, checkpoint.root)
    # a live game's page says nothing of the log
    new_game(client, ada, ["ada", "house:random", "house:random", "house:random"], "live-1")
    assert "log-note" not in client.get("/games/live-1?lang=en").text


def test_invitations_page_and_the_play_pages_panel(client: TestClient[Any], ada: str) -> None:
    """/invitations asks for the token (in both languages) and holds nobody's data; the play
    page of an invited table carries the same panel, hidden until the script finds an
    invitation; every page links to /invitations."""
    bo = create_player(client, "bo")
    new_game(client, ada, ["ada", "bo", *HOUSE[:2]], "invited")
    for lang, words in (
        ("tr", ("Davetler", "API anahtarı", "Bekleyen davetiniz yok.")),
        ("en", ("Invitations", "API token", "You have no pending invitations.")),
    ):
        r = client.get(f"/invitations?lang={lang}")
        assert r.status_code == 200, r.text
        for word in words:
            assert word in r.text, (lang, word)
        assert 'id="signin"' in r.text and 'id="invitation-list"' in r.text
        assert "/static/invitations.js" in r.text and "/static/invitations_page.js" in r.text
        assert bo not in r.text and ada not in r.text  # no token in any page
        assert "inv-" not in r.text  # the invitations are fetched with the token, not served
        play = client.get(f"/play/invited?lang={lang}")
        assert play.status_code == 200
        assert 'id="invitations"' in play.text and 'data-hide-empty="1" hidden' in play.text
        assert play.text.index("/static/invitations.js") < play.text.index("/static/play.js")
        assert 'href="/invitations"' in client.get(f"/?lang={lang}").text
        found = re.search(r'<script type="application/json" id="i18n">(.*?)</script>', r.text, re.S)
        assert found is not None
        t = json.loads(found[1])["t"]
        want = {"tr": ("Kabul et", "Reddet"), "en": ("Accept", "Decline")}[lang]
        assert (t["accept"], t["decline"]) == want  # the buttons' words, for the script
    for name in ("invitations.js", "invitations_page.js"):
        got = client.get(f"/static/{name}")
        assert got.status_code == 200 and "javascript" in got.headers["content-type"]


def test_lobby_page_in_both_languages_linked_from_every_page(
    client: TestClient[Any], ada: str
) -> None:
    """/lobby asks for the token (signin.js, shared with /invitations), offers the quick game
    and a new table, and holds no table, token or invitation itself: the script reads them
    from the API and follows the lobby's stream."""
    for lang, words in (
        ("tr", ("Lobi", "Hızlı oyun", "Yeni masa", "Açık masalar", "API anahtarı")),
        ("en", ("Lobby", "Quick game", "New table", "Open tables", "API token")),
    ):
        r = client.get(f"/lobby?lang={lang}")
        assert r.status_code == 200, r.text
        for word in words:
            assert word in r.text, (lang, word)
        for element in ('id="signin"', 'id="quick-game"', 'id="new-table"', 'id="table-list"'):
            assert element in r.text
        assert 'value="house:heuristic"' in r.text and 'value="short12"' in r.text
        scripts = ("/static/invitations.js", "/static/signin.js", "/static/lobby.js")
        assert [r.text.index(s) for s in scripts] == sorted(r.text.index(s) for s in scripts)
        assert ada not in r.text
        for path in ("/", "/invitations", "/tv", "/lobby"):
            assert 'href="/lobby"' in client.get(f"{path}?lang={lang}").text, path
    for name in ("signin.js", "lobby.js"):
        got = client.get(f"/static/{name}")
        assert got.status_code == 200 and "javascript" in got.headers["content-type"]


def test_a_finished_games_play_page_shows_the_result(client: TestClient[Any], ada: str) -> None:
    new_game(client, ada, HOUSE, "done-r")
    wait_over(client, "done-r")
    state = services_of(client.app).repo.load("done-r")
    assert state.result is not None
    for lang, word in (("en", "Winners"), ("tr", "Kazanan")):
        html = client.get(f"/play/done-r?lang={lang}").text
        assert 'id="result"' in html and word in html
        assert 'href="/games/done-r#h-audit"' in html and 'href="/games/done-r"' in html
    # The panel alone, for the script of a page that watched the game end.
    part = client.get("/play/done-r?part=result&lang=en")
    assert part.status_code == 200 and part.text.lstrip().startswith('<section id="result"')
    for seat, player in enumerate(state.players):
        assert player in part.text and str(state.totals[seat]) in part.text
    assert embedded(client.get("/play/done-r").text, "play-data")["deal_count"] == 12
    new_game(client, ada, ["ada", *HOUSE[:3]], "going")
    wait_for(lambda: client.get("/api/v1/games/going").json()["game"]["status"] == "live", "go")
    assert client.get("/play/going?part=result").status_code == 404
    assert 'id="result"' not in client.get("/play/going").text


def test_tv_pages_and_their_data(client: TestClient[Any], ada: str) -> None:
    new_game(client, ada, ["ada", *HOUSE[:3]], "tv-1")
    wait_for(lambda: client.get("/api/v1/games/tv-1").json()["game"]["status"] == "live", "go")
    for lang in ("tr", "en"):
        assert client.get(f"/tv?lang={lang}").status_code == 200
    data = client.get("/tv.json").json()
    tables = data["tables"]
    assert [t["game_id"] for t in tables] == ["tv-1"]
    first = tables[0]
    assert first["players"][0] == "ada" and len(first["totals"]) == 4
    assert first["gap"] == max(first["totals"]) - sorted(first["totals"])[-2]
    assert client.get("/tv.json?tournament=nope").json()["tables"] == []
    assert client.get("/tournaments/nope/tv").status_code == 404
    # No hand in the TV's data: only public fields.
    assert "hand" not in json.dumps(data)


def test_the_tournament_page_offers_sign_up_until_it_is_over(client: TestClient[Any]) -> None:
    r = client.post(
        "/api/v1/tournaments",
        json={"id": "open", "format": "swiss", "rules": {"mode": "short12"},
              "players": [{"strategy": "random"}] * 4},
        headers=ADMIN_HEADERS,
    )  # fmt: skip
    assert r.status_code == 201, r.text
    html = client.get("/tournaments/open?lang=en").text
    assert 'id="signup"' in html and "/static/signup.js" in html
    assert 'href="/tournaments/open/tv"' in html
    assert client.get("/tournaments/open/tv?lang=tr").status_code == 200


def _statements_of(client: TestClient[Any], path: str) -> int:
    """SQL statements that one request of `path` sends: the store's cost meter counts its raw
    paths and every SQLAlchemy statement on its engines (the projections' reads among them).
    The fewest of three requests: the meter is the process's, and background work (ownership
    renewals, the feed watcher) may add to one of them."""
    services = services_of(client.app)
    services.games.catch_up()  # the feed is folded before, so only the listing is counted
    engines = services.store.engines
    assert services.games.read_engine in (engines.read, engines.write)
    counts = []
    for _ in range(3):
        before = services.store.statements
        assert client.get(path).status_code == 200
        counts.append(services.store.statements - before)
    return min(counts)


def test_home_and_tv_cost_the_same_few_queries_however_many_games_and_tournaments(
    client: TestClient[Any],
) -> None:
    """The lists read the projections (a few indexed queries), never every game stream or
    tournament: ten more tournaments and their games do not add one statement."""

    def more(prefix: str, n: int) -> None:
        for i in range(n):
            _paired_cup(client, f"{prefix}{i}")

    more("a", 2)
    before = {p: _statements_of(client, p) for p in ("/", "/?player=random-1", "/tv.json")}
    more("b", 10)
    after = {p: _statements_of(client, p) for p in ("/", "/?player=random-1", "/tv.json")}
    assert after == before, (before, after)
    assert 0 < max(before.values()) <= 20, before  # /tv.json lists twice
    home = client.get("/?lang=en").text
    assert home.count('href="/tournaments/b') == 10  # the new ones are listed, all the same


def test_home_pages_through_the_games_keeping_the_filters(
    client: TestClient[Any], monkeypatch: Any
) -> None:
    """Every game can be reached: newer and older pages of the list, the filters kept in the
    links, a page past the end says so, and a bad page number is page 1."""
    import services.web.pages as pages
    from domain.rules import Rules

    monkeypatch.setattr(pages, "HOME_GAMES", 2)
    repo = services_of(client.app).repo
    made = [f"run-{i}" for i in range(5)]
    for i, game_id in enumerate(made):  # live games of a local runner, one after the other
        repo.create(
            game_id, ["w", "x", "y", "z"], Rules(mode="short12"), server_seed=bytes([i]) * 32
        )
    first = client.get("/?lang=en").text
    assert _game_rows(first) == made[::-1][:2]
    assert "Showing 1–2 / 5" in first and 'href="/?page=2"' in first
    assert "Newer games" not in first
    second = client.get("/?page=2&lang=en").text
    assert _game_rows(second) == made[::-1][2:4]
    assert 'href="/"' in second and 'href="/?page=3"' in second
    third = client.get("/?page=3&lang=en").text
    assert _game_rows(third) == made[:1] and "Older games" not in third
    seen = [g for page in (first, second, third) for g in _game_rows(page)]
    assert sorted(seen) == sorted(made)  # each game on exactly one page
    live = client.get("/?status=live&page=2&lang=en").text
    assert 'href="/?status=live"' in live and 'href="/?status=live&amp;page=3"' in live
    past = client.get("/?page=9&lang=en").text
    assert _game_rows(past) == [] and 'href="/?page=8"' in past
    for bad in ("0", "-1", "x", "99999999999999999999"):
        assert _game_rows(client.get(f"/?page={bad}").text) == made[::-1][:2]
    assert "Daha eski oyunlar" in client.get("/?lang=tr").text
