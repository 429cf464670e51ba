"""services.api_types describe exactly what the service answers and streams.

Real games (finished and in progress, several rule options, a King, a redeal, a forfeited
seat) and small tournaments are played on the service; every dict-shaped answer and every
stream message is decoded strictly (`msgspec.convert(..., strict=True)`: no coercion, every
pattern, bound and Literal checked) and encoded again, which must give the same JSON value: a
field the shapes lack would be dropped by the decoding and so fail, a field they have that the
answer lacks fails the decoding.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import msgspec
import orjson
import pytest
from litestar.testing import TestClient

from domain.game import Phase
from domain.rules import Rules
from domain.view import seat_view
from services.api_types import (
    AuditReport,
    KingRecord,
    LegalAction,
    Live,
    PairingsRound,
    PlayerNotice,
    PublicGameMessage,
    PublicView,
    Ready,
    RuleChanges,
    SeatGameMessage,
    SeatView,
    StandingRow,
    TournamentMessage,
)
from services.app import create_app
from services.play.live import messages
from services.settings import Settings
from tests.service.conftest import SettingsFactory
from tests.service.exact_shapes import exact
from tests.service.helpers import (
    ADMIN_HEADERS,
    HANG_GUARD,
    LiveServer,
    bearer,
    create_game,
    create_player,
    wait_for,
    wait_over,
)
from tests.service.test_stream_resume import read

HOUSE = ["house:random", "house:heuristic", "house:random", "house:random"]
Client = TestClient  # type: ignore[type-arg]
# A seed whose game, played by `redeal_first`, has a weak-hand redeal (R-WEAKHAND needs a
# declarer without penalty contracts left and without a card above ten: rare).
REDEAL_SEED, REDEAL_GAME = (35).to_bytes(32, "big"), "r"  # the deals depend on both


def message_types(messages: list[dict[str, Any]]) -> set[str]:
    return {m["type"] for m in messages}


def check_public(client: Client, game_id: str) -> set[str]:
    """The public view, record, audit and public stream of a game; the types streamed."""
    body = client.get(f"/api/v1/games/{game_id}").json()
    exact(body["view"], PublicView)
    exact(body["game"]["rules"], RuleChanges)
    r = client.get(f"/api/v1/games/{game_id}/record")
    assert r.status_code == 200, r.text
    exact(r.json(), KingRecord)
    r = client.get(f"/api/v1/games/{game_id}/audit", headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    exact(r.json(), AuditReport)
    seen: set[str] = set()
    for fmt in ("sse", "ndjson"):
        messages = read(client, f"/api/v1/games/{game_id}/events", fmt)
        for m in messages:
            exact(m, PublicGameMessage)
        seen |= message_types(messages)
    return seen


def check_seat_stream(client: Client, game_id: str, seat: int, token: str) -> set[str]:
    seen: set[str] = set()
    for fmt in ("sse", "ndjson"):
        messages = read(client, f"/api/v1/games/{game_id}/seats/{seat}/events", fmt, bearer(token))
        for m in messages:
            exact(m, SeatGameMessage)
        seen |= message_types(messages)
    return seen


def test_finished_games_answer_exactly(make_settings: SettingsFactory) -> None:
    with TestClient(create_app(make_settings(decision_seconds=0.05))) as client:
        owner = create_player(client, "owner")
        ada = create_player(client, "ada")
        games = {
            "plain": create_game(client, owner, HOUSE, decision_seconds=5),
            # R-KING after two tricks of a trump deal: the game ends with a King.
            "king": create_game(
                client,
                owner,
                HOUSE,
                decision_seconds=5,
                rules={"mode": "short12", "king_tricks": 2, "first_declarer": "seat0"},
            ),
            "options": create_game(
                client,
                owner,
                HOUSE,
                decision_seconds=5,
                client_seed="types",
                rules={
                    "mode": "standard20",
                    "queens_one_each_void": True,
                    "must_beat_led_suit": True,
                    "must_overtrump": False,
                    "akq_lead": "any",
                    "end_early": False,
                },
            ),
            # ada never acts: three time-outs forfeit her seat to a house bot.
            "forfeit": create_game(client, ada, ["ada", *HOUSE[1:]]),
        }
        seen: set[str] = set()
        for game_id in games.values():
            wait_over(client, game_id)
            seen |= check_public(client, game_id)
        king = client.get(f"/api/v1/games/{games['king']}").json()["view"]
        assert king["king"] is not None and king["phase"] == "over"
        # Every public message type but a redeal's, which test_a_redeal_game_answers_exactly
        # covers: these games' seeds are random, and a house bot may ask for a redeal when a
        # weak hand happens to be dealt (seen once, in a run of the whole suite).
        assert seen - {"redeal_asked"} == set(_tags(PublicGameMessage)) - {"redeal_asked"}


def test_a_game_in_progress_answers_exactly(backend_settings: SettingsFactory) -> None:
    with TestClient(create_app(backend_settings(decision_seconds=600))) as client:
        ada = create_player(client, "ada")
        rules = {"mode": "short12", "first_declarer": "seat0", "weak_hand_redeal": False}
        created = client.post(
            "/api/v1/games",
            json={"seats": ["ada", *HOUSE[1:]], "rules": rules},
            headers=bearer(ada),
        )
        assert created.status_code == 201, created.text
        exact(created.json()["view"], PublicView)
        game_id = created.json()["game"]["id"]
        waiting = client.post(
            "/api/v1/games", json={"seats": HOUSE, "start": False}, headers=bearer(ada)
        )
        assert waiting.status_code == 201 and waiting.json()["view"] is None
        exact(waiting.json()["game"]["rules"], RuleChanges)
        mine = bearer(ada)
        acted = 0
        open_trick = False
        while acted < 12:

            def my_turn() -> dict[str, Any] | None:
                seat = client.get(f"/api/v1/games/{game_id}/seats/0", headers=mine).json()
                return seat if seat["view"]["legal"] else None

            seat = wait_for(my_turn, "ada's turn")
            exact(seat["view"], SeatView)  # (its deadline may still be null: the clock follows)
            seen = check_seat_stream(client, game_id, 0, ada)
            assert "your_turn" in seen and "deal_started" in seen
            check_public(client, game_id)  # the record without the shuffle; audit by the admin
            view = client.get(f"/api/v1/games/{game_id}").json()["view"]
            open_trick = open_trick or any(t["winner"] is None for t in view["tricks"])
            action = {**seat["view"]["legal"][0], "seat": 0, "version": seat["version"]}
            r = client.post(f"/api/v1/games/{game_id}/actions", json=action, headers=mine)
            assert r.status_code == 200, r.text
            exact(r.json()["view"], SeatView)
            acted += 1
        assert open_trick, "a view with a trick in progress was checked"
        record = client.get(f"/api/v1/games/{game_id}/record").json()
        assert "shuffle" not in record
        audit = client.get(f"/api/v1/games/{game_id}/audit", headers=ADMIN_HEADERS).json()
        assert audit["finished"] is False


def redeal_first(view: Any) -> Any:
    """Ask for a redeal whenever one is allowed, else take the first legal action."""
    return next((a for a in view.legal if a.kind == "redeal"), view.legal[0])


def test_a_redeal_game_answers_exactly(make_settings: SettingsFactory) -> None:
    """Played through the service's repository with a chosen seed (a table's seed is random):
    its record and audit read over HTTP, its views and stream messages made by the service's
    own encoders (the live cache's views, the streams' messages), since a game not set as a
    table has no entry in the games index that GET /games/{id} and its streams look up."""
    app = create_app(make_settings())
    with TestClient(app) as client:
        repo = app.state.king.repo
        state = repo.create(REDEAL_GAME, ["p0", "p1", "p2", "p3"], Rules(), server_seed=REDEAL_SEED)
        while state.phase is not Phase.OVER:
            seat = state.to_move
            assert seat is not None
            command = redeal_first(seat_view(state, seat)).command(seat)
            state = repo.execute(REDEAL_GAME, command).state
        r = client.get(f"/api/v1/games/{REDEAL_GAME}/record")
        assert r.status_code == 200, r.text
        record = exact(r.json(), KingRecord)
        assert any(d.redeal is True for d in record.deals)
        exact(client.get(f"/api/v1/games/{REDEAL_GAME}/audit").json(), AuditReport)
        games = app.state.king.games
        exact(games.view(state), PublicView)
        for seat in range(4):
            exact(games.view(state, seat), SeatView)
        view = exact(games.view(state), PublicView)
        assert any(d.redeal for d in view.history) and any(not d.redeal for d in view.history)
        records = app.state.king.store.read_stream(f"game-{REDEAL_GAME}")
        shown = messages(REDEAL_GAME, records, state)
        assert "redeal_asked" in {m.type for m in shown}
        for m in shown:
            exact(m.form(None), PublicGameMessage)
            for seat in range(4):
                exact(m.form(seat), SeatGameMessage)


def an_illegal_action(seat: dict[str, Any]) -> dict[str, Any]:
    """An action the rules refuse on the seat's turn (so it costs a strike)."""
    view = seat["view"]
    if view["phase"] == "declaring":
        return {"type": "play", "card": "2S", "seat": 0}
    held = set(view["hand"])
    card = next(r + s for s in "SHDC" for r in "23456789TJQKA" if r + s not in held)
    return {"type": "play", "card": card, "seat": 0}


def test_a_forfeited_seat_answers_exactly(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    """Three illegal actions forfeit ada's seat: her stream, followed, ends with the hand-over
    (strike_recorded, seat_abandoned, seat_substituted on the way)."""
    server = live_server(make_settings(decision_seconds=600))
    with httpx.Client(base_url=server.url, trust_env=False, timeout=HANG_GUARD) as client:
        ada = create_player(client, "ada")
        rules = {"mode": "short12", "first_declarer": "seat0"}
        game_id = create_game(client, ada, ["ada", *HOUSE[1:]], rules=rules)
        mine = bearer(ada)
        followed: list[dict[str, Any]] = []
        for strike in (1, 2, 3):

            def my_turn() -> dict[str, Any] | None:
                seat = client.get(f"/api/v1/games/{game_id}/seats/0", headers=mine).json()
                return seat if seat["view"]["legal"] else None

            seat = wait_for(my_turn, "ada's turn")
            exact(seat["view"], SeatView)
            if strike == 3:  # her seat's stream, followed until it ends
                opened = threading.Event()
                path = f"/api/v1/games/{game_id}/seats/0/events"
                listener = threading.Thread(
                    target=_follow, args=(client, path, mine, followed, opened), daemon=True
                )
                listener.start()
                assert opened.wait(HANG_GUARD)
            r = client.post(
                f"/api/v1/games/{game_id}/actions", json=an_illegal_action(seat), headers=mine
            )
            assert r.status_code == 422 and r.json()["strike"]["count"] == strike, r.text
            default = exact(r.json()["strike"]["default_action"], LegalAction | None)
            assert (default is None) == (strike == 3)  # the move played for her, until forfeit
        listener.join(HANG_GUARD)
        assert not listener.is_alive()
        for m in followed:
            exact(m, SeatGameMessage)
        assert followed[-1]["type"] == "seat_substituted"
        assert {"strike_recorded", "seat_abandoned", "your_turn"} <= message_types(followed)
        wait_over(client, game_id)
        public = read(client, f"/api/v1/games/{game_id}/events", "ndjson")
        for m in public:
            exact(m, PublicGameMessage)


def _follow(
    client: httpx.Client,
    path: str,
    headers: dict[str, str],
    out: list[dict[str, Any]],
    opened: threading.Event,
    until: str | None = None,
) -> None:
    """Read a followed NDJSON stream into `out` until it ends (or a message of type `until`);
    `opened` is set once the service has answered."""
    with client.stream("GET", path, params={"format": "ndjson"}, headers=headers) as r:
        assert r.status_code == 200
        opened.set()
        for line in r.iter_lines():
            if line.strip():
                out.append(orjson.loads(line))
                if out[-1]["type"] == until:
                    return


def test_health_answers_exactly(backend_settings: SettingsFactory) -> None:
    with TestClient(create_app(backend_settings())) as client:
        exact(client.get("/health/live").json(), Live)

        def ready() -> dict[str, Any] | None:
            r = client.get("/health/ready")
            return r.json() if r.status_code == 200 else None

        body = wait_for(ready, "the service to be ready")
        decoded = exact(body, Ready)
        assert decoded.checks.driver == "ok" and decoded.scheduler is not msgspec.UNSET
    with TestClient(create_app(backend_settings(run_driver=False, run_scheduler=False))) as client:
        r = client.get("/health/ready")
        decoded = exact(r.json(), Ready)
        assert decoded.checks.driver is msgspec.UNSET and decoded.scheduler is msgspec.UNSET


def _wait_finished(client: Client, tid: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        body = client.get(f"/api/v1/tournaments/{tid}").json()
        return body if body["tournament"]["status"] == "finished" else None

    result: dict[str, Any] = wait_for(done, f"tournament {tid} to finish", 600)
    return result


def test_tournaments_answer_exactly(make_settings: SettingsFactory) -> None:
    settings = make_settings(decision_seconds=10, scheduler_seconds=0.2)
    with TestClient(create_app(settings)) as client:
        swiss = {
            "id": "sw",
            "format": "swiss",
            "rounds": 1,
            "rules": {"mode": "short12", "must_overtrump": False},
            "fill": "house_bot",
            "players": [{"strategy": "random"}] * 3,
            "start_at": datetime.now(UTC).isoformat(),
        }
        assert client.post("/api/v1/tournaments", json=swiss, headers=ADMIN_HEADERS).status_code
        rr = {
            "id": "rr",
            "format": "round_robin",
            "rounds": 2,
            "rules": {"mode": "short12"},
            "bye_points": "mean",
            "players": [{"strategy": "random"}] * 5,
        }
        r = client.post("/api/v1/tournaments", json=rr, headers=ADMIN_HEADERS)
        assert r.status_code == 201, r.text
        ada = create_player(client, "ada")
        assert client.post("/api/v1/tournaments/rr/players", headers=bearer(ada)).status_code == 201
        assert client.delete("/api/v1/tournaments/rr/players/ada", headers=bearer(ada)).is_success
        seats = ["house:random-1", "house:random-2", "house:random-3", "house:random-4"]
        by_hand = {"tables": [seats], "byes": ["house:random-5"]}
        r = client.post(
            "/api/v1/tournaments/rr/rounds/1/pairing", json=by_hand, headers=ADMIN_HEADERS
        )
        assert r.status_code == 201, r.text
        assert client.post("/api/v1/tournaments/rr/start", headers=ADMIN_HEADERS).is_success
        seen: set[str] = set()
        for tid in ("sw", "rr"):
            detail = _wait_finished(client, tid)
            exact(detail["tournament"]["rules"], RuleChanges)
            exact(client.get(f"/api/v1/tournaments/{tid}/standings").json(), list[StandingRow])
            pairings = exact(
                client.get(f"/api/v1/tournaments/{tid}/pairings").json(), list[PairingsRound]
            )
            assert all(p.input is not None for p in pairings if not p.manual)
            for fmt in ("sse", "ndjson"):
                messages = read(client, f"/api/v1/tournaments/{tid}/events", fmt)
                for m in messages:
                    exact(m, TournamentMessage)
                seen |= message_types(messages)
        assert seen == set(_tags(TournamentMessage))


def _tags(union: Any) -> list[str]:
    return [t.__struct_config__.tag for t in union.__args__]


def test_player_notices_answer_exactly(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    """game_started and game_over on /api/v1/me/events for a game of ada's (she forfeits)."""
    server = live_server(make_settings(decision_seconds=0.05))
    with httpx.Client(base_url=server.url, trust_env=False, timeout=HANG_GUARD) as client:
        ada = create_player(client, "ada")
        notices: list[dict[str, Any]] = []
        opened = threading.Event()
        listener = threading.Thread(
            target=_follow,
            args=(client, "/api/v1/me/events", bearer(ada), notices, opened, "game_over"),
            daemon=True,
        )
        listener.start()
        assert opened.wait(HANG_GUARD)
        game_id = create_game(client, ada, ["ada", *HOUSE[1:]])
        listener.join(HANG_GUARD)
        assert not listener.is_alive(), "no game_over notice"
    assert [n["type"] for n in notices] == ["game_started", "game_over"]
    for n in notices:
        assert n["data"]["game_id"] == game_id
        exact(n, PlayerNotice)


def test_exact_refuses_an_unknown_a_missing_or_a_changed_field() -> None:
    """The check itself can fail: on a field the shape lacks (also deep inside), a field the
    answer lacks, a value of another type, a bad card and a broken tag."""
    from domain.playout import new_game

    state, _ = new_game("x", ["a", "b", "c", "d"], bytes(32), Rules(mode="short12"))
    view = seat_view(state, 0).to_dict()
    exact(view, SeatView)
    bad_views = [
        {**view, "extra": 1},
        {**view, "rights": {**view["rights"], "extra": 1}},
        {k: v for k, v in view.items() if k != "strikes"},
        {**view, "deal": "1"},
        {**view, "hand": ["10S", *view["hand"][1:]]},
        {**view, "legal": [{"type": "pass"}]},
        {**view, "seat": 4},
    ]
    for bad in bad_views:
        with pytest.raises(msgspec.ValidationError):
            exact(bad, SeatView)
