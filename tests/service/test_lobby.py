"""The lobby: open tables anyone with a token joins; a full table starts its game through the
games' own machinery; the quick game; the live stream; refusals as clear problems."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from litestar.testing import TestClient
from sqlalchemy import select

from services.api_types.lobby import LobbyMessage
from services.app import create_app, services_of
from services.db.models import LobbyTableRow
from services.lobby import tables as lt
from services.lobby.errors import LobbyConflict
from tests.service.conftest import SettingsFactory
from tests.service.exact_shapes import exact
from tests.service.helpers import ADMIN_HEADERS, bearer, create_player, wait_for, wait_over

LONG = 3600  # a person's decision time: their game waits on them, never strikes
PEOPLE = ("ada", "bo", "cem", "dee")
Client = TestClient  # type: ignore[type-arg]


@pytest.fixture
def lobby(backend_settings: SettingsFactory) -> Iterator[tuple[Client, dict[str, str]]]:
    with TestClient(create_app(backend_settings())) as client:
        yield client, {p: create_player(client, p) for p in PEOPLE}


def problem(r: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = r.json()
    assert body["detail"]
    if code is not None:
        assert body["code"] == code, body
    return body


def open_table(
    client: Client, token: str, seats: list[str] | None = None, **extra: Any
) -> dict[str, Any]:
    body = {
        "seats": seats or ["person", "person", "house:random", "house:random"],
        "rules": {"mode": "short12"},
        "decision_seconds": LONG,
        **extra,
    }
    r = client.post("/api/v1/lobby/tables", json=body, headers=bearer(token))
    assert r.status_code == 201, r.text
    out: dict[str, Any] = r.json()
    return out


def act(client: Client, token: str, table_id: str, what: str) -> httpx.Response:
    return client.post(f"/api/v1/lobby/tables/{table_id}/{what}", headers=bearer(token))


def listed(client: Client) -> dict[str, dict[str, Any]]:
    r = client.get("/api/v1/lobby")
    assert r.status_code == 200, r.text
    return {t["id"]: t for t in r.json()["tables"]}


# --- the flows ---------------------------------------------------------------------------


def test_open_join_leave_and_a_full_table_starts(lobby: Any) -> None:
    client, tokens = lobby
    table = open_table(client, tokens["ada"], ["person", "person", "person", "house:random"])
    tid = table["id"]
    assert table["status"] == "open"
    assert table["seats"] == ["ada", None, None, "house:random"]
    assert table["free_seats"] == [1, 2]
    assert table["rules"] == {"mode": "short12"}
    assert table["decision_seconds"] == LONG
    assert tid in listed(client)

    r = act(client, tokens["bo"], tid, "join")
    assert r.status_code == 200, r.text
    assert r.json()["seats"] == ["ada", "bo", None, "house:random"]
    r = act(client, tokens["bo"], tid, "leave")
    assert r.status_code == 200, r.text
    assert r.json()["seats"] == ["ada", None, None, "house:random"]
    assert act(client, tokens["cem"], tid, "join").json()["seats"][1] == "cem"
    last = act(client, tokens["dee"], tid, "join")
    assert last.status_code == 200, last.text
    started = last.json()
    assert started["status"] == "started"
    assert started["game_id"] == tid and started["play_url"] == f"/play/{tid}"
    assert started["seats"] == ["ada", "cem", "dee", "house:random"]
    assert tid not in listed(client)  # a started table leaves the lobby

    game = client.get(f"/api/v1/games/{tid}").json()["game"]
    assert game["status"] == "live"
    assert game["seats"] == ["ada", "cem", "dee", "house:random"]
    assert game["created_by"] == "ada"
    assert game["rules"] == {"mode": "short12"}
    # the joiners' consent is on record as accepted invitations from the creator
    sent = client.get("/api/v1/me/invitations?status=all", headers=bearer(tokens["ada"])).json()
    assert sorted(i["invitee"] for i in sent["sent"]) == ["cem", "dee"]
    assert {i["status"] for i in sent["sent"]} == {"accepted"}
    # the seats are theirs: the seat view answers each joiner
    view = client.get(f"/api/v1/games/{tid}/seats/2", headers=bearer(tokens["dee"]))
    assert view.status_code == 200, view.text


def test_join_a_full_started_or_cancelled_table_is_a_409(lobby: Any) -> None:
    client, tokens = lobby
    started = open_table(client, tokens["ada"])
    assert act(client, tokens["bo"], started["id"], "join").json()["status"] == "started"
    problem(act(client, tokens["cem"], started["id"], "join"), 409, "table_started")
    problem(act(client, tokens["bo"], started["id"], "leave"), 409, "table_started")
    problem(act(client, tokens["ada"], started["id"], "cancel"), 409, "table_started")

    cancelled = open_table(client, tokens["ada"])
    problem(act(client, tokens["bo"], cancelled["id"], "cancel"), 403)  # not the creator
    r = act(client, tokens["ada"], cancelled["id"], "cancel")
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    assert cancelled["id"] not in listed(client)
    problem(act(client, tokens["bo"], cancelled["id"], "join"), 409, "table_cancelled")
    problem(act(client, tokens["ada"], cancelled["id"], "cancel"), 409, "table_cancelled")
    assert not services_of(client.app).repo.exists(cancelled["id"])  # no game was ever made

    mine = open_table(client, tokens["ada"], ["person", "person", "person", "person"])
    problem(act(client, tokens["ada"], mine["id"], "join"), 409, "already_seated")
    problem(act(client, tokens["ada"], mine["id"], "leave"), 409, "creator_leaves")
    problem(act(client, tokens["bo"], mine["id"], "leave"), 409, "not_seated")
    assert act(client, tokens["bo"], mine["id"], "join").status_code == 200
    r = client.post(f"/api/v1/lobby/tables/{mine['id']}/cancel", headers=ADMIN_HEADERS)
    assert r.status_code == 200 and r.json()["status"] == "cancelled"


def test_full_is_refused_while_the_game_starts(lobby: Any) -> None:
    """A table whose last seat is taken but whose game is not yet recorded as started is
    full: joining, leaving and cancelling it are refused."""
    client, tokens = lobby
    book = services_of(client.app).lobby.book  # type: ignore[union-attr]
    table = book.open("ada", ["ada", None, "house:random", "house:random"], {}, 1000)
    book.join(table.id, "bo")  # the book alone: nothing starts the game
    assert listed(client)[table.id]["status"] == "full"
    problem(act(client, tokens["cem"], table.id, "join"), 409, "table_full")
    problem(act(client, tokens["bo"], table.id, "leave"), 409, "table_full")
    problem(act(client, tokens["ada"], table.id, "cancel"), 409, "table_full")


def test_the_sweep_starts_a_full_table_left_unstarted(lobby: Any) -> None:
    client, _tokens = lobby
    desk = services_of(client.app).lobby
    assert desk is not None
    table = desk.book.open("ada", ["ada", None, "house:random", "house:random"], {}, 1000)
    desk.book.join(table.id, "bo")
    real_now = desk.book.now
    from datetime import timedelta

    desk.book.now = lambda: real_now() + timedelta(minutes=5)
    client.blocking_portal.call(desk.sweep)
    assert desk.book.load(table.id).status == "started"
    assert client.get(f"/api/v1/games/{table.id}").json()["game"]["status"] == "live"


def test_quick_game_starts_and_the_house_bots_play(lobby: Any) -> None:
    client, tokens = lobby
    r = client.post("/api/v1/lobby/quick-game", headers=bearer(tokens["ada"]))
    assert r.status_code == 201, r.text
    out = r.json()
    gid = out["game_id"]
    assert out["seat"] == 0 and out["play_url"] == f"/play/{gid}"
    assert out["table"]["status"] == "started"
    assert out["table"]["seats"] == ["ada"] + ["house:heuristic"] * 3
    assert client.get(f"/api/v1/games/{gid}").json()["game"]["status"] == "live"

    # ada plays her first legal action each turn; the three house bots play theirs
    def turn_or_end() -> dict[str, Any] | None:
        seat = client.get(f"/api/v1/games/{gid}/seats/0", headers=bearer(tokens["ada"])).json()
        view = seat["view"]
        over = view["phase"] == "over"
        return seat if over or (view.get("to_move") == 0 and view["legal"]) else None

    while (seat := wait_for(turn_or_end, "ada's turn or the end"))["view"]["phase"] != "over":
        client.post(
            f"/api/v1/games/{gid}/actions",
            json={**seat["view"]["legal"][0], "version": seat["version"]},
            headers=bearer(tokens["ada"]),
        )
    over = wait_over(client, gid)
    assert over["game"]["status"] == "over"


def test_quick_game_with_another_strategy_and_bad_ones(lobby: Any) -> None:
    client, tokens = lobby
    r = client.post(
        "/api/v1/lobby/quick-game", json={"strategy": "random"}, headers=bearer(tokens["bo"])
    )
    assert r.status_code == 201, r.text
    assert r.json()["table"]["seats"][1:] == ["house:random"] * 3
    problem(
        client.post(
            "/api/v1/lobby/quick-game", json={"strategy": "nope"}, headers=bearer(tokens["cem"])
        ),
        422,
        "bad_table",
    )
    problem(client.post("/api/v1/lobby/quick-game", headers=ADMIN_HEADERS), 403)
    assert client.post("/api/v1/lobby/quick-game").status_code == 401


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"seats": ["person"] * 3}, 400),
        ({"seats": ["person"] * 5}, 400),
        ({"seats": ["ada", "person", "person", "person"]}, 400),
        ({"seats": ["person", "house:nope", "person", "person"]}, 422),
        ({"seats": ["house:random"] * 4}, 422),
        ({"seats": ["person"] * 4, "seat": 4}, 400),
        ({"seats": ["person", "house:random", "person", "person"], "seat": 1}, 422),
        ({"seats": ["person"] * 4, "rules": {"mode": "long99"}}, 422),
        ({"seats": ["person"] * 4, "rules": {"nope": 1}}, 422),
        ({"seats": ["person"] * 4, "decision_seconds": 0}, 400),
        ({"seats": ["person"] * 4, "decision_seconds": 99999}, 400),
        ({"seats": ["person"] * 4, "extra": 1}, 400),
        ({}, 400),
    ],
)
def test_bad_tables_are_refused_with_a_reason_and_nothing_stored(
    client: Client, body: dict[str, Any], status: int
) -> None:
    token = create_player(client, "ada")
    before = client.get("/api/v1/lobby").json()
    problem(client.post("/api/v1/lobby/tables", json=body, headers=bearer(token)), status)
    assert client.get("/api/v1/lobby").json() == before


def test_unknown_tables_are_404_and_tokens_are_needed(client: Client) -> None:
    token = create_player(client, "ada")
    for tid in ("t-000000000000", "nope", "x" * 300, "t-../../etc"):
        problem(act(client, token, tid, "join"), 404)
    problem(client.get("/api/v1/lobby/tables/t-000000000000"), 404)
    assert client.post("/api/v1/lobby/tables", json={"seats": ["person"] * 4}).status_code == 401
    r = client.post("/api/v1/lobby/tables", json={"seats": ["person"] * 4}, headers=ADMIN_HEADERS)
    problem(r, 403)


def test_a_player_has_at_most_five_open_tables(client: Client) -> None:
    token = create_player(client, "ada")
    for _ in range(5):
        open_table(client, token, ["person"] * 4)
    r = client.post("/api/v1/lobby/tables", json={"seats": ["person"] * 4}, headers=bearer(token))
    problem(r, 409, "too_many_tables")


def test_the_lobby_lists_invitations_and_tournaments_open_for_registration(
    client: Client,
) -> None:
    ada, bo = create_player(client, "ada"), create_player(client, "bo")
    r = client.post(
        "/api/v1/games",
        json={"seats": ["ada", "bo", "house:random", "house:random"]},
        headers=bearer(ada),
    )
    assert r.status_code == 201, r.text
    r = client.post(
        "/api/v1/tournaments",
        json={"name": "Open", "rounds": 1, "players": [{"player": "ada"}]},
        headers=ADMIN_HEADERS,
    )
    assert r.status_code == 201, r.text
    seen = client.get("/api/v1/lobby", headers=bearer(bo)).json()
    assert [i["inviter"] for i in seen["invitations"]] == ["ada"]
    assert [t["name"] for t in seen["tournaments"]] == ["Open"]
    assert seen["tournaments"][0]["status"] == "registering"
    assert client.get("/api/v1/lobby").json()["invitations"] == []  # no token: none


# --- the race ------------------------------------------------------------------------------


def test_two_joins_of_the_last_seat_one_wins(lobby: Any) -> None:
    client, _tokens = lobby
    desk = services_of(client.app).lobby
    assert desk is not None
    for _ in range(3):
        table = desk.book.open("ada", ["ada", None, None, "house:random"], {}, 1000)
        desk.book.join(table.id, "bo")
        barrier = threading.Barrier(2)
        outcomes: dict[str, Any] = {}

        def join(
            player: str,
            tid: str = table.id,
            barrier: threading.Barrier = barrier,
            outcomes: dict[str, Any] = outcomes,
        ) -> None:
            barrier.wait()
            try:
                outcomes[player] = desk.book.join(tid, player)
            except LobbyConflict as exc:
                outcomes[player] = exc.code

        threads = [threading.Thread(target=join, args=(p,)) for p in ("cem", "dee")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        codes = sorted(str(v) if isinstance(v, str) else "won" for v in outcomes.values())
        assert codes == ["table_full", "won"], outcomes
        seats = desk.book.load(table.id).seats
        assert seats.count("cem") + seats.count("dee") == 1


# --- the stream ----------------------------------------------------------------------------


def _messages(client: Client, after: int) -> list[dict[str, Any]]:
    r = client.get(f"/api/v1/lobby/events?format=ndjson&follow=false&after={after}")
    assert r.status_code == 200, r.text
    return [orjson.loads(line) for line in r.content.splitlines() if line.strip()]


def test_the_stream_shows_each_change(lobby: Any) -> None:
    client, tokens = lobby
    start = client.get("/api/v1/lobby").json()["position"]
    table = open_table(client, tokens["ada"])
    tid = table["id"]
    seen = _messages(client, start)
    assert [(m["type"], m["table_id"]) for m in seen] == [("table_opened", tid)]
    assert seen[0]["data"] == table
    act(client, tokens["bo"], tid, "join")
    after_open = seen[-1]["id"]
    kinds = [m["type"] for m in _messages(client, after_open)]
    assert kinds == ["table_started"]  # taken and started between two looks: shown as now
    other = open_table(client, tokens["cem"])
    act(client, tokens["cem"], other["id"], "cancel")
    last = _messages(client, after_open)
    assert [m["type"] for m in last] == ["table_started", "table_cancelled"]
    assert last[-1]["data"]["status"] == "cancelled"
    assert all(a["id"] < b["id"] for a, b in itertools.pairwise(last))


def test_a_stream_from_now_says_where_it_starts_and_resumes_from_there(lobby: Any) -> None:
    """Started from now, the SSE stream's first lines give its position as the event id (no
    data), so that a browser reconnecting before any change resumes from there."""
    client, tokens = lobby
    open_table(client, tokens["ada"])  # something before now, which a resume must not repeat
    now = client.get("/api/v1/lobby").json()["position"]
    first = client.get("/api/v1/lobby/events?follow=false").text
    assert first.startswith(f"retry: 2000\nid: {now}\n\n"), first
    table = open_table(client, tokens["bo"])
    resumed = client.get("/api/v1/lobby/events?follow=false", headers={"last-event-id": str(now)})
    data = [line for line in resumed.text.splitlines() if line.startswith("data:")]
    assert len(data) == 1 and f'"table_id":"{table["id"]}"' in data[0], resumed.text


def test_two_processes_one_lobby_live_stream_and_the_race(
    backend_settings: SettingsFactory, live_server: Any
) -> None:
    """Two `king serve` processes on one database: a stream on one sees the tables opened
    and joined on the other, and two joins of the last seat, one sent to each, get it once."""
    settings = backend_settings()
    one, two = live_server(settings), live_server(settings)
    with (
        httpx.Client(base_url=one.url, timeout=30, trust_env=False) as a,
        httpx.Client(base_url=two.url, timeout=30, trust_env=False) as b,
    ):
        tokens = {}
        for p in PEOPLE:
            r = a.post("/api/v1/players", json={"id": p}, headers=ADMIN_HEADERS)
            tokens[p] = r.json()["token"]
        with b.stream("GET", "/api/v1/lobby/events", params={"format": "ndjson"}) as stream:
            lines = stream.iter_lines()
            seen: list[dict[str, Any]] = []

            def next_message(kind: str) -> dict[str, Any]:
                def got() -> dict[str, Any] | None:
                    line = next(lines)
                    if line.strip():
                        seen.append(orjson.loads(line))
                        if seen[-1]["type"] == kind:
                            return seen[-1]
                    return None

                message: dict[str, Any] = wait_for(got, f"a {kind} message")
                return message

            body = {"seats": ["person", "person", "person", "house:random"]}
            body["decision_seconds"] = LONG  # type: ignore[assignment]
            made = a.post("/api/v1/lobby/tables", json=body, headers=bearer(tokens["ada"]))
            assert made.status_code == 201, made.text
            tid = made.json()["id"]
            opened = next_message("table_opened")
            assert opened["table_id"] == tid and opened["data"]["seats"][0] == "ada"
            assert a.post(f"/api/v1/lobby/tables/{tid}/join", headers=bearer(tokens["bo"]))
            taken = next_message("seat_taken")
            assert taken["data"]["seats"][:2] == ["ada", "bo"]

            barrier = threading.Barrier(2)
            answers: dict[str, httpx.Response] = {}

            def join(http: httpx.Client, who: str) -> None:
                barrier.wait()
                answers[who] = http.post(
                    f"/api/v1/lobby/tables/{tid}/join", headers=bearer(tokens[who])
                )

            racers = [
                threading.Thread(target=join, args=(a, "cem")),
                threading.Thread(target=join, args=(b, "dee")),
            ]
            for t in racers:
                t.start()
            for t in racers:
                t.join()
            statuses = sorted(r.status_code for r in answers.values())
            assert statuses == [200, 409], {k: v.text for k, v in answers.items()}
            loser = next(r for r in answers.values() if r.status_code == 409)
            assert loser.json()["code"] in ("table_full", "table_started")
            started = next_message("table_started")
            assert started["data"]["game_id"] == tid
        game = a.get(f"/api/v1/games/{tid}").json()["game"]
        assert game["status"] == "live"
        winner = next(who for who, r in answers.items() if r.status_code == 200)
        assert game["seats"] == ["ada", "bo", winner, "house:random"]
        for message in seen:
            exact(message, LobbyMessage)


def test_no_lobby_message_or_answer_holds_a_card_or_a_token(lobby: Any) -> None:
    client, tokens = lobby
    start = client.get("/api/v1/lobby").json()["position"]
    table = open_table(client, tokens["ada"])
    joined = act(client, tokens["bo"], table["id"], "join")
    quick = client.post("/api/v1/lobby/quick-game", headers=bearer(tokens["cem"]))
    texts = [
        joined.text,
        quick.text,
        client.get("/api/v1/lobby").text,
        client.get(f"/api/v1/lobby/events?follow=false&after={start}").text,
    ]
    hands = []
    for gid in (table["id"], quick.json()["game_id"]):
        games = services_of(client.app).games
        state = games.repo.load(gid)
        hands += [str(c) for seat in range(4) for c in games.view(state, seat)["hand"]]
    for text in texts:
        for token in tokens.values():
            assert token not in text
        assert '"hand' not in text
        assert "seed" not in text.replace("client_seed", "")
    assert hands  # the games were dealt; none of their cards is named above
    for text in texts:
        words = set(text.replace('"', " ").replace(",", " ").split())
        assert not words & set(hands)


# --- the fold ------------------------------------------------------------------------------

actions = st.lists(
    st.tuples(st.sampled_from(["join", "leave", "cancel"]), st.sampled_from(PEOPLE)),
    max_size=30,
)


@hsettings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(actions)
def test_a_table_never_seats_a_player_twice_nor_changes_once_closed(
    moves: list[tuple[str, str]],
) -> None:
    from datetime import UTC, datetime

    table = lt.LobbyTable("t-1", "ada", ("ada", None, None, "house:x"), {}, 1000, datetime.now(UTC))
    for what, who in moves:
        before = table
        try:
            if what == "join":
                table = lt.apply(table, lt.SEAT_TAKEN, lt.join(table, who))
            elif what == "leave":
                table = lt.apply(table, lt.SEAT_LEFT, lt.leave(table, who))
            elif who == "ada":  # the creator (the API checks who may)
                table = lt.apply(table, lt.CANCELLED, lt.cancel(table, who))
            else:
                continue
        except LobbyConflict:
            assert table == before
            continue
        people = [s for s in table.seats if s is not None]
        assert len(people) == len(set(people))
        assert table.seats[0] == "ada" and table.seats[3] == "house:x"
        assert before.status == "open"  # only an open table changes
        assert table.version == before.version + 1


def test_the_projection_rebuilt_from_the_feed_equals_the_live_one(lobby: Any) -> None:
    client, tokens = lobby
    kept = open_table(client, tokens["ada"], ["person"] * 4)
    act(client, tokens["bo"], kept["id"], "join")
    act(client, tokens["cem"], kept["id"], "join")
    act(client, tokens["cem"], kept["id"], "leave")
    gone = open_table(client, tokens["bo"])
    act(client, tokens["bo"], gone["id"], "cancel")
    started = open_table(client, tokens["cem"])
    act(client, tokens["dee"], started["id"], "join")
    book = services_of(client.app).lobby.book  # type: ignore[union-attr]

    def rows() -> list[Any]:
        with book.store.engines.read.connect() as conn:
            return [tuple(r) for r in conn.execute(select(LobbyTableRow.__table__).order_by("id"))]  # type: ignore[attr-defined]

    live = rows()
    assert len(live) == 3
    book.projector.rebuild()
    assert rows() == live
    statuses = {t.id: t.status for t in (book.load(kept["id"]), book.load(gone["id"]))}
    assert statuses == {kept["id"]: "open", gone["id"]: "cancelled"}
    assert book.load(kept["id"]).seats == ("ada", "bo", None, None)


# --- any order of requests: the API does what the fold says ----------------------------------


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Client, dict[str, str]]]:
    from services.settings import load_settings
    from tests.service.conftest import _base

    settings = load_settings(**_base(tmp_path_factory.mktemp("lobby")))
    with TestClient(create_app(settings)) as client:
        yield client, {p: create_player(client, p) for p in PEOPLE}


REQUESTS = st.lists(
    st.tuples(st.sampled_from(["join", "leave", "cancel"]), st.sampled_from(PEOPLE)),
    max_size=8,
)


@hsettings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(requests=REQUESTS)
def test_any_requests_change_the_table_as_the_fold_says(
    shared: tuple[Client, dict[str, str]], requests: list[tuple[str, str]]
) -> None:
    """Each request is answered 200 exactly when the pure decision allows it (else 403 or
    409 with the decision's code), and the table served is the model's after each."""
    client, tokens = shared
    made = open_table(client, tokens["ada"], ["person", "person", "person", "house:random"])
    from datetime import datetime

    model = lt.LobbyTable(
        made["id"],
        "ada",
        ("ada", None, None, "house:random"),
        {"mode": "short12"},
        LONG * 1000,
        datetime.fromisoformat(made["created_at"]),
    )
    for what, who in requests:
        r = act(client, tokens[who], made["id"], what)
        try:
            if what == "join":
                expected = lt.apply(model, lt.SEAT_TAKEN, lt.join(model, who))
            elif what == "leave":
                expected = lt.apply(model, lt.SEAT_LEFT, lt.leave(model, who))
            elif who != "ada":
                problem(r, 403)
                continue
            else:
                expected = lt.apply(model, lt.CANCELLED, lt.cancel(model, who))
        except LobbyConflict as exc:
            problem(r, 409, exc.code)
            continue
        assert r.status_code == 200, r.text
        if expected.status == lt.FULL:  # the last seat: the game started
            expected = lt.apply(expected, lt.STARTED, {"game_id": made["id"]})
        model = expected
        served = r.json()
        assert served["seats"] == list(model.seats) and served["status"] == model.status
        assert served["version"] == model.version
    if model.status == lt.OPEN:  # leave no open table behind (5 at most per creator)
        assert act(client, tokens["ada"], made["id"], "cancel").status_code == 200
