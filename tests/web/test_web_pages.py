"""The pages through Litestar's TestClient: both languages, 404s, the embedded record, and no
hidden card in a live game's page."""

from __future__ import annotations

import json
import re
from typing import Any

from litestar.testing import TestClient

from domain.cards import card_name, cards_of
from domain.contracts import Contract, display_name
from services.app import services_of
from tests.service.helpers import bearer, create_player, wait_for, wait_over
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
    for lang, word in (("tr", "Puan durumu"), ("en", "Standings")):
        r = client.get(f"/tournaments/cup?lang={lang}")
        assert r.status_code == 200, r.text
        assert word in r.text and "random-1" in r.text
    state = runner.load("cup")
    game_id = state.round_games[0][0]["game_id"]
    assert f"/games/{game_id}" in client.get("/tournaments/cup").text
    assert client.get(f"/games/{game_id}").status_code == 200  # a runner game, not indexed
    assert "/tournaments/cup" in client.get("/").text
