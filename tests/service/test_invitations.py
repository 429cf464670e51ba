"""Consent to be seated: a player who seats other players invites them, and the table starts
only once every invitation is accepted; a decline, a cancel or an expiry closes it for good,
never started, nobody struck. The admin (and so tournaments) seats players as before."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from litestar.testing import TestClient

from services.api_types import PlayerNotice
from services.app import create_app, services_of
from services.container import Services
from services.identity import Principal
from services.play.invitations import InvitationBook, InvitationClosed, TableCancelled
from services.settings import load_settings
from tests.service.conftest import SettingsFactory, _base
from tests.service.exact_shapes import exact
from tests.service.helpers import ADMIN_HEADERS, bearer, create_player, wait_for

HOUSE = "house:random"
LONG = 3600  # seconds a decision may take: a started game waits on its people, never strikes


class Clock:
    """The invitations' clock, moved by hand (expiry without waiting)."""

    def __init__(self) -> None:
        self.at = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


def services(client: TestClient) -> Services:  # type: ignore[type-arg]
    return services_of(client.app)


def set_clock(client: TestClient) -> Clock:  # type: ignore[type-arg]
    clock = Clock()
    services(client).games.invitations.now = clock
    return clock


def table(client: TestClient, token: str, seats: list[str], **extra: Any) -> dict[str, Any]:  # type: ignore[type-arg]
    body = {"seats": seats, "rules": {"mode": "short12"}, "decision_seconds": LONG, **extra}
    r = client.post("/api/v1/games", json=body, headers=bearer(token))
    assert r.status_code == 201, r.text
    out: dict[str, Any] = r.json()
    return out


def status(client: TestClient, game_id: str) -> str:  # type: ignore[type-arg]
    return str(client.get(f"/api/v1/games/{game_id}").json()["game"]["status"])


def problem(r: httpx.Response, code: int) -> dict[str, Any]:
    assert r.status_code == code, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = r.json()
    return body


def never_started(client: TestClient, game_id: str) -> None:  # type: ignore[type-arg]
    """No game stream: nothing was dealt, nobody struck or forfeited."""
    assert status(client, game_id) == "created"
    assert not services(client).repo.exists(game_id)
    problem(client.get(f"/api/v1/games/{game_id}/record"), 404)


@pytest.fixture
def people(backend_settings: SettingsFactory) -> Iterator[tuple[TestClient, dict[str, str]]]:  # type: ignore[type-arg]
    with TestClient(create_app(backend_settings())) as client:
        tokens = {p: create_player(client, p) for p in ("ada", "bo", "cem", "dee")}
        yield client, tokens


# --- the flows ---------------------------------------------------------------------------


def test_invite_accept_starts_the_game(people: Any) -> None:
    client, t = people
    made = table(client, t["ada"], ["ada", "bo", HOUSE, "cem"])
    game_id = made["game"]["id"]
    assert made["game"]["status"] == "created" and made["view"] is None
    invitations = {i["invitee"]: i for i in made["invitations"]}
    assert set(invitations) == {"bo", "cem"}
    bo = invitations["bo"]
    assert bo["seats"] == [1] and invitations["cem"]["seats"] == [3]
    assert bo["inviter"] == "ada" and bo["status"] == "pending" and bo["game_id"] == game_id
    assert bo["players"] == ["ada", "bo", HOUSE, "cem"]
    assert bo["rules"]["mode"] == "short12" and bo["decision_seconds"] == LONG
    created = datetime.fromisoformat(bo["created_at"])
    assert datetime.fromisoformat(bo["expires_at"]) - created == timedelta(minutes=10)

    mine = client.get("/api/v1/me/invitations", headers=bearer(t["bo"])).json()
    assert [i["id"] for i in mine["received"]] == [bo["id"]] and mine["sent"] == []
    sent = client.get("/api/v1/me/invitations", headers=bearer(t["ada"])).json()
    assert {i["invitee"] for i in sent["sent"]} == {"bo", "cem"} and sent["received"] == []

    # Nobody starts it before both accept, not the creator, not the admin.
    for headers in (bearer(t["ada"]), ADMIN_HEADERS):
        body = problem(client.post(f"/api/v1/games/{game_id}/start", headers=headers), 409)
        assert body["code"] == "invitations_pending"
        assert "bo" in body["detail"] and "cem" in body["detail"]
        assert body["type"] == "https://king.example/problems/invitations-pending"

    r = client.post(f"/api/v1/invitations/{bo['id']}/accept", headers=bearer(t["bo"]))
    assert r.status_code == 200 and r.json()["status"] == "accepted"
    assert r.json()["game_status"] == "created"
    body = problem(client.post(f"/api/v1/games/{game_id}/start", headers=bearer(t["ada"])), 409)
    assert "cem" in body["detail"] and "bo" not in body["detail"]

    cem = invitations["cem"]["id"]
    r = client.post(f"/api/v1/invitations/{cem}/accept", headers=bearer(t["cem"]))
    assert r.status_code == 200 and r.json()["game_status"] == "live"
    assert status(client, game_id) == "live"
    state = client.get(f"/api/v1/games/{game_id}").json()
    assert state["version"] > 0 and state["game"]["seats"] == ["ada", "bo", HOUSE, "cem"]
    # Accepted and answered: a second answer is a 409 and changes nothing.
    again = problem(
        client.post(f"/api/v1/invitations/{cem}/decline", headers=bearer(t["cem"])), 409
    )
    assert again["code"] == "invitation_closed"
    assert client.get(f"/api/v1/invitations/{cem}", headers=bearer(t["cem"])).json()["status"] == (
        "accepted"
    )
    assert client.get("/api/v1/me/invitations", headers=bearer(t["bo"])).json()["received"] == []


def test_a_table_set_not_to_start_waits_for_its_creator(people: Any) -> None:
    client, t = people
    made = table(client, t["ada"], ["ada", "bo", HOUSE, HOUSE], start=False)
    game_id, inv = made["game"]["id"], made["invitations"][0]["id"]
    assert made["invitations"][0]["start"] is False
    client.post(f"/api/v1/invitations/{inv}/accept", headers=bearer(t["bo"]))
    assert status(client, game_id) == "created"
    r = client.post(f"/api/v1/games/{game_id}/start", headers=bearer(t["ada"]))
    assert r.status_code == 200, r.text
    assert status(client, game_id) == "live"


def test_a_decline_cancels_the_table_never_started(people: Any) -> None:
    client, t = people
    made = table(client, t["ada"], ["ada", "bo", "cem", HOUSE])
    game_id = made["game"]["id"]
    ids = {i["invitee"]: i["id"] for i in made["invitations"]}
    assert client.post(f"/api/v1/invitations/{ids['bo']}/accept", headers=bearer(t["bo"])).json()[
        "status"
    ] == ("accepted")
    r = client.post(f"/api/v1/invitations/{ids['cem']}/decline", headers=bearer(t["cem"]))
    assert r.status_code == 200 and r.json()["status"] == "declined"
    assert r.json()["reason"] == "cem declined"
    bo = client.get(f"/api/v1/invitations/{ids['bo']}", headers=bearer(t["bo"])).json()
    assert bo["status"] == "cancelled" and bo["reason"] == "cem declined"
    for headers in (bearer(t["ada"]), ADMIN_HEADERS):
        body = problem(client.post(f"/api/v1/games/{game_id}/start", headers=headers), 409)
        assert body["code"] == "table_cancelled" and "cem declined" in body["detail"]
    never_started(client, game_id)
    late = problem(
        client.post(f"/api/v1/invitations/{ids['cem']}/accept", headers=bearer(t["cem"])), 409
    )
    assert late["code"] == "invitation_closed"
    # The players were never seated: no strike, no forfeit, no game of theirs.
    for p in ("bo", "cem"):
        assert client.get("/api/v1/games", params={"player": p, "status": "live"}).json() == []


def test_an_expired_invitation_closes_the_table(people: Any) -> None:
    client, t = people
    clock = set_clock(client)
    made = table(client, t["ada"], ["ada", "bo", "cem", HOUSE], invitation_seconds=60)
    game_id = made["game"]["id"]
    ids = {i["invitee"]: i["id"] for i in made["invitations"]}
    client.post(f"/api/v1/invitations/{ids['bo']}/accept", headers=bearer(t["bo"]))
    clock.advance(61)
    body = problem(
        client.post(f"/api/v1/invitations/{ids['cem']}/accept", headers=bearer(t["cem"])), 409
    )
    assert body["code"] == "invitation_expired"
    cem = client.get(f"/api/v1/invitations/{ids['cem']}", headers=bearer(t["cem"])).json()
    assert cem["status"] == "expired" and cem["reason"] == "cem did not answer in time"
    bo = client.get(f"/api/v1/invitations/{ids['bo']}", headers=bearer(t["bo"])).json()
    assert bo["status"] == "cancelled"
    problem(client.post(f"/api/v1/games/{game_id}/start", headers=ADMIN_HEADERS), 409)
    never_started(client, game_id)


def test_the_sweep_expires_invitations_nobody_reads(people: Any) -> None:
    client, t = people
    clock = set_clock(client)
    made = table(client, t["ada"], ["ada", "bo", HOUSE, HOUSE], invitation_seconds=10)
    inv = made["invitations"][0]["id"]
    book = services(client).games.invitations
    assert book.sweep() == set()  # nothing due yet
    clock.advance(10)
    assert book.sweep() == {made["game"]["id"]}
    assert book.sweep() == set()  # a second sweep (another process) changes nothing
    row = book.get(inv, Principal("bo"))
    assert row.status == "expired"
    never_started(client, made["game"]["id"])


def test_the_sweep_starts_a_table_whose_start_was_missed(people: Any) -> None:
    """Every invitation accepted, but the process stopped before starting the game: the
    sweep starts it."""
    client, t = people
    made = table(client, t["ada"], ["ada", "bo", HOUSE, HOUSE])
    game_id, inv = made["game"]["id"], made["invitations"][0]["id"]
    svc = services(client)
    svc.games.invitations.accept(inv, Principal("bo"))  # the book only: no start follows
    assert status(client, game_id) == "created"
    assert svc.games.invitations.ready_tables() == [game_id]
    client.blocking_portal.call(svc.invitations.sweep)  # type: ignore[union-attr]
    assert status(client, game_id) == "live"
    assert svc.games.invitations.ready_tables() == []


def test_the_inviter_cancels(people: Any) -> None:
    client, t = people
    made = table(client, t["ada"], ["ada", "bo", HOUSE, HOUSE])
    game_id, inv = made["game"]["id"], made["invitations"][0]["id"]
    problem(client.post(f"/api/v1/invitations/{inv}/cancel", headers=bearer(t["bo"])), 403)
    r = client.post(f"/api/v1/invitations/{inv}/cancel", headers=bearer(t["ada"]))
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    assert r.json()["reason"] == "cancelled by the inviter"
    problem(client.post(f"/api/v1/invitations/{inv}/cancel", headers=bearer(t["ada"])), 409)
    assert (
        problem(client.post(f"/api/v1/invitations/{inv}/accept", headers=bearer(t["bo"])), 409)[
            "code"
        ]
        == "invitation_closed"
    )
    never_started(client, game_id)


def test_only_the_invitee_may_answer(people: Any) -> None:
    client, t = people
    made = table(client, t["ada"], ["ada", "bo", HOUSE, HOUSE])
    inv = made["invitations"][0]["id"]
    # An outsider does not see it; the inviter and the admin see it but may not answer it.
    for action in ("accept", "decline"):
        problem(client.post(f"/api/v1/invitations/{inv}/{action}", headers=bearer(t["cem"])), 404)
        problem(client.post(f"/api/v1/invitations/{inv}/{action}", headers=bearer(t["ada"])), 403)
        problem(client.post(f"/api/v1/invitations/{inv}/{action}", headers=ADMIN_HEADERS), 403)
    assert (
        problem(client.get(f"/api/v1/invitations/{inv}", headers=bearer(t["cem"])), 404)["code"]
        == "invitation_not_found"
    )
    problem(client.get(f"/api/v1/invitations/{inv}"), 401)
    problem(client.get("/api/v1/invitations/inv-nope", headers=bearer(t["bo"])), 404)
    for headers in (bearer(t["ada"]), bearer(t["bo"]), ADMIN_HEADERS):
        r = client.get(f"/api/v1/invitations/{inv}", headers=headers)
        assert r.status_code == 200 and r.json()["status"] == "pending"
    problem(client.get("/api/v1/me/invitations", headers=ADMIN_HEADERS), 403)
    assert status(client, made["game"]["id"]) == "created"


def test_seating_oneself_and_house_bots_starts_at_once(people: Any) -> None:
    client, t = people
    made = table(client, t["ada"], [HOUSE, "ada", "house:heuristic", HOUSE])
    assert made["invitations"] == [] and made["game"]["status"] == "live"
    assert made["version"] > 0
    # A table of house bots only, set by a player, starts too.
    assert table(client, t["bo"], [HOUSE] * 4)["game"]["status"] == "live"


def test_the_admin_seats_anyone_as_before(people: Any) -> None:
    client, t = people
    body = {"seats": ["ada", "bo", "cem", "dee"], "rules": {"mode": "short12"}}
    body["decision_seconds"] = LONG
    r = client.post("/api/v1/games", json=body, headers=ADMIN_HEADERS)
    assert r.status_code == 201 and r.json()["game"]["status"] == "live"
    assert r.json()["invitations"] == []
    r = client.post("/api/v1/games", json={**body, "start": False}, headers=ADMIN_HEADERS)
    game_id = r.json()["game"]["id"]
    assert client.post(f"/api/v1/games/{game_id}/start", headers=ADMIN_HEADERS).status_code == 200
    for p in ("ada", "bo", "cem", "dee"):
        mine = client.get("/api/v1/me/invitations", headers=bearer(t[p]), params={"status": "all"})
        assert mine.json() == {"received": [], "sent": []}


def test_bad_invitation_seconds_leave_nothing_behind(people: Any) -> None:
    client, t = people
    for seconds in (1, 86401):
        body = {"seats": ["ada", "bo", HOUSE, HOUSE], "invitation_seconds": seconds, "id": "t1"}
        problem(client.post("/api/v1/games", json=body, headers=bearer(t["ada"])), 400)
    problem(client.get("/api/v1/games/t1"), 404)
    assert client.get("/api/v1/me/invitations", headers=bearer(t["bo"])).json()["received"] == []


# --- the player's notices ------------------------------------------------------------------


def test_the_invitees_stream_tells_of_invitations(
    make_settings: SettingsFactory, live_server: Any
) -> None:
    server = live_server(make_settings())
    with httpx.Client(base_url=server.url, timeout=30, trust_env=False) as http:
        tokens = {}
        for p in ("ada", "bo"):
            r = http.post("/api/v1/players", json={"id": p}, headers=ADMIN_HEADERS)
            tokens[p] = r.json()["token"]
        seen: list[dict[str, Any]] = []
        with http.stream(
            "GET", "/api/v1/me/events", params={"format": "ndjson"}, headers=bearer(tokens["bo"])
        ) as stream:
            lines = stream.iter_lines()

            def next_notice(kind: str) -> dict[str, Any]:
                def got() -> dict[str, Any] | None:
                    line = next(lines)
                    if line.strip():
                        seen.append(orjson.loads(line))
                        if seen[-1]["type"] == kind:
                            return seen[-1]
                    return None

                notice: dict[str, Any] = wait_for(got, f"a {kind} notice")
                return notice

            body = {"seats": ["ada", "bo", HOUSE, HOUSE], "decision_seconds": LONG}
            made = http.post("/api/v1/games", json=body, headers=bearer(tokens["ada"])).json()
            invited = next_notice("invitation")
            assert invited["data"]["id"] == made["invitations"][0]["id"]
            assert invited["data"]["seats"] == [1] and invited["data"]["inviter"] == "ada"
            inv = invited["data"]["id"]
            r = http.post(f"/api/v1/invitations/{inv}/accept", headers=bearer(tokens["bo"]))
            assert r.status_code == 200
            closed = next_notice("invitation_closed")
            assert closed["data"]["id"] == inv and closed["data"]["status"] == "accepted"
            started = next_notice("game_started")
            assert started["data"]["game_id"] == made["game"]["id"]
        assert invited["id"] == f"{inv}:invited" and closed["id"] == f"{inv}:closed"
        for notice in seen:  # each exactly as the documented shape says
            exact(notice, PlayerNotice)


# --- any order of answers --------------------------------------------------------------------

Op = tuple[str, int]
OPS = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["accept", "decline", "cancel"]), st.integers(0, 2)),
        st.just(("expire", 0)),
    ),
    max_size=7,
)


@pytest.fixture(scope="module")
def shared(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[TestClient, dict[str, str], Clock]]:  # type: ignore[type-arg]
    settings = load_settings(**_base(Path(tmp_path_factory.mktemp("invitations"))))
    with TestClient(create_app(settings)) as client:
        tokens = {p: create_player(client, p) for p in ("ada", "bo", "cem", "dee")}
        yield client, tokens, set_clock(client)


@hsettings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(invitees=st.integers(1, 3), ops=OPS)
def test_a_table_starts_iff_every_invitee_accepted_before_any_close(
    shared: Any, invitees: int, ops: list[Op]
) -> None:
    client, t, clock = shared
    guests = ["bo", "cem", "dee"][:invitees]
    seats = ["ada", *guests, *[HOUSE] * (3 - invitees)]
    made = table(client, t["ada"], seats, invitation_seconds=60)
    game_id = made["game"]["id"]
    ids = {i["invitee"]: i["id"] for i in made["invitations"]}
    accepted: set[str] = set()
    closed = False
    for kind, n in ops:
        guest = guests[n % invitees]
        if kind == "expire":
            clock.advance(61)
            if len(accepted) < invitees:
                closed = True
            continue
        who = t["ada"] if kind == "cancel" else t[guest]
        r = client.post(f"/api/v1/invitations/{ids[guest]}/{kind}", headers=bearer(who))
        pending = guest not in accepted and not closed
        if kind == "accept":
            ok = pending
            accepted |= {guest} if ok else set()
        elif kind == "decline":
            ok = pending
        else:  # a cancel closes the table unless it is closed or every invitee accepted
            ok = not closed and len(accepted) < invitees
        assert r.status_code == (200 if ok else 409), (kind, guest, r.text)
        closed = closed or (ok and kind != "accept")
    started = not closed and len(accepted) == invitees
    assert status(client, game_id) == ("live" if started else "created")
    assert services(client).repo.exists(game_id) == started
    statuses = {
        client.get(f"/api/v1/invitations/{i}", headers=bearer(t["ada"])).json()["status"]
        for i in ids.values()
    }
    if started:
        assert statuses == {"accepted"}
    elif closed:
        assert statuses <= {"declined", "expired", "cancelled"}
        problem(client.post(f"/api/v1/games/{game_id}/start", headers=ADMIN_HEADERS), 409)
    else:
        assert "pending" in statuses
    clock.advance(61)  # the next table starts afresh; this one expires if still open


# --- races -------------------------------------------------------------------------------


def test_accept_and_cancel_race_to_one_winner(people: Any) -> None:
    client, t = people
    book = services(client).games.invitations
    winners = {"accept": 0, "cancel": 0}
    for _ in range(12):
        made = table(client, t["ada"], ["ada", "bo", HOUSE, HOUSE], start=False)
        game_id, inv = made["game"]["id"], made["invitations"][0]["id"]
        gate = threading.Barrier(2)
        results: dict[str, str] = {}

        def run(
            kind: str,
            principal: Principal,
            inv: str = inv,
            gate: Any = gate,
            results: dict[str, str] = results,
        ) -> None:
            gate.wait()
            try:
                move = book.accept if kind == "accept" else book.cancel
                results[kind] = move(inv, principal).status
            except InvitationClosed as exc:
                results[kind] = exc.code

        threads = [
            threading.Thread(target=run, args=("accept", Principal("bo"))),
            threading.Thread(target=run, args=("cancel", Principal("ada"))),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        final = book.get(inv, Principal("ada")).status
        if final == "accepted":
            winners["accept"] += 1
            assert results == {"accept": "accepted", "cancel": "invitations_accepted"}
            book.consent(game_id, "ada", ["ada", "bo", HOUSE, HOUSE])  # may start
        else:
            winners["cancel"] += 1
            assert final == "cancelled"
            assert results == {"accept": "invitation_closed", "cancel": "cancelled"}
            with pytest.raises(TableCancelled):
                book.consent(game_id, "ada", ["ada", "bo", HOUSE, HOUSE])
    assert sum(winners.values()) == 12


def test_an_invitation_made_on_one_process_is_answered_on_another(
    backend_settings: SettingsFactory,
) -> None:
    quiet = {"run_driver": False, "run_scheduler": False}
    with (
        TestClient(create_app(backend_settings(**quiet))) as a,
        TestClient(create_app(backend_settings(**quiet))) as b,
    ):
        t = {p: create_player(a, p) for p in ("ada", "bo", "cem")}
        made = table(a, t["ada"], ["ada", "bo", "cem", HOUSE])
        ids = {i["invitee"]: i["id"] for i in made["invitations"]}
        listed = b.get("/api/v1/me/invitations", headers=bearer(t["bo"])).json()["received"]
        assert [i["id"] for i in listed] == [ids["bo"]]
        assert (
            b.post(f"/api/v1/invitations/{ids['bo']}/accept", headers=bearer(t["bo"])).json()[
                "status"
            ]
            == "accepted"
        )
        # The answer is in the shared database: the other process refuses a second one.
        again = a.post(f"/api/v1/invitations/{ids['bo']}/decline", headers=bearer(t["bo"]))
        assert problem(again, 409)["code"] == "invitation_closed"
        r = a.post(f"/api/v1/invitations/{ids['cem']}/accept", headers=bearer(t["cem"]))
        assert r.status_code == 200 and r.json()["game_status"] == "live"
        wait_for(lambda: status(b, made["game"]["id"]) == "live", "the other process to see it")


def test_accept_cancel_and_expiry_race_to_one_winner(people: Any) -> None:
    """Three processes at once: the invitee accepts, the inviter cancels, and a sweeper whose
    clock says the invitation is due expires it. Exactly one takes effect."""
    client, t = people
    svc = services(client)
    clock = set_clock(client)
    book = svc.games.invitations
    late = InvitationBook(svc.store.engines.write, now=lambda: clock() + timedelta(seconds=11))
    outcomes: dict[str, int] = {}
    for _ in range(12):
        seats = ["ada", "bo", HOUSE, HOUSE]
        made = table(client, t["ada"], seats, start=False, invitation_seconds=10)
        game_id, inv = made["game"]["id"], made["invitations"][0]["id"]
        gate = threading.Barrier(3)
        won: dict[str, bool] = {}

        def run(
            kind: str,
            gate: Any = gate,
            inv: str = inv,
            game_id: str = game_id,
            won: dict[str, bool] = won,
        ) -> None:
            gate.wait()
            try:
                if kind == "accept":
                    won[kind] = book.accept(inv, Principal("bo")).status == "accepted"
                elif kind == "cancel":
                    won[kind] = book.cancel(inv, Principal("ada")).status == "cancelled"
                else:
                    won[kind] = game_id in late.sweep()
            except InvitationClosed:
                won[kind] = False

        threads = [threading.Thread(target=run, args=(k,)) for k in ("accept", "cancel", "sweep")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        final = book.get(inv, Principal("ada")).status
        assert sum(won.values()) == 1, (won, final)
        winner = next(k for k, v in won.items() if v)
        assert final == {"accept": "accepted", "cancel": "cancelled", "sweep": "expired"}[winner]
        outcomes[final] = outcomes.get(final, 0) + 1
        if final != "accepted":
            with pytest.raises(TableCancelled):
                book.consent(game_id, "ada", ["ada", "bo", HOUSE, HOUSE])
        clock.advance(11)  # every table from here on is due for `late` only after its own 10 s
    assert sum(outcomes.values()) == 12


# --- the player's stream reads the invitations only when they may have changed ---------------


class CountingBook:
    """A stand-in for the book as the stream's watch sees it: its version, clock and stamp
    (counted: each stamp is a read of the database)."""

    def __init__(self) -> None:
        self.version = 0
        self.at = datetime(2030, 1, 1, tzinfo=UTC)
        self.stamps = 0
        self.current = (0, 0)

    def now(self) -> datetime:
        return self.at

    def stamp(self, _player: str) -> tuple[int, int]:
        self.stamps += 1
        return self.current


def test_the_stream_reads_invitations_only_when_they_may_have_changed() -> None:
    import asyncio
    from types import SimpleNamespace

    from services.play.invitations import Invitation
    from services.play.streams import InvitationWatch

    book = CountingBook()
    games: Any = SimpleNamespace(invitations=book)
    watch = InvitationWatch()

    def changed(polled: bool) -> bool:
        return asyncio.run(watch.changed(games, "bo", polled))

    assert changed(polled=True)  # the stream's first read
    expires = book.at + timedelta(seconds=60)
    pending = Invitation(
        "inv-1", "g-1", "ada", "bo", (1,), "pending", True, book.at, expires, None, None
    )
    watch.shown([pending])
    before = book.stamps
    assert not changed(polled=False)  # woken for a game: nothing read at all
    assert book.stamps == before
    assert not changed(polled=True)  # a poll: one small stamp read, the same stamp
    assert book.stamps == before + 1
    book.current = (1, 1)  # another process wrote an invitation to the player
    assert changed(polled=True)
    assert not changed(polled=True)
    book.version += 1  # this process wrote one
    assert changed(polled=False)
    book.at += timedelta(seconds=61)  # the one shown is due to expire
    assert changed(polled=False)
    watch.shown([])
    assert not changed(polled=False)


def test_the_stamp_sees_what_another_process_writes(people: Any) -> None:
    """Two books on one database, as two processes: what one writes moves the other's stamp
    (and only the writer's own version)."""
    client, _tokens = people
    here = services(client).games.invitations
    there = InvitationBook(here.engine)
    before, version = here.stamp("bo"), here.version
    made = there.invite("g-elsewhere", "ada", ["ada", "bo", HOUSE, HOUSE], True, 600)
    assert here.version == version and there.version == 1
    assert here.stamp("bo") == (before[0] + 1, before[1] + 1)
    there.decline(made[0].id, Principal("bo"))
    assert here.stamp("bo") == (before[0] + 1, before[1])
    assert here.stamp("cem") == (0, 0)
