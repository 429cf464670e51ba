"""A seat's WebSocket (`/api/v1/games/{id}/seats/{seat}/ws`): the seat's stream as frames and
its actions as frames, on a real uvicorn server. The frames are the NDJSON stream's messages,
resumable with the same ids; every action frame gets one answer, `accepted` or `problem` with
the problem details POST /actions would answer; a refused upgrade is an HTTP problem answer;
a web session cookie never opens a socket."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import httpx
import orjson
import pytest
from websockets.exceptions import ConnectionClosedOK, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from services.botkit import SocketBot
from services.botkit.socket import socket_url
from services.settings import Settings
from tests.service.conftest import SettingsFactory
from tests.service.helpers import (
    ADMIN_HEADERS,
    LiveServer,
    bearer,
    create_game,
    create_player,
    wait_for,
    wait_over,
)
from tests.service.test_accounts import make_token, sign_up

HOUSE = ["house:random", "house:heuristic", "house:random"]
SEAT0_FIRST = {"mode": "short12", "first_declarer": "seat0"}


def ada_against_house(client: httpx.Client) -> tuple[str, str]:
    """Player ada's token, and a started game of hers against three house bots, seat 0 to
    declare first."""
    ada = create_player(client, "ada")
    return ada, create_game(client, ada, ["ada", *HOUSE], rules=SEAT0_FIRST)


def lines(text: str) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in text.splitlines() if line.strip()]


@contextmanager
def opened(
    server: LiveServer, game_id: str, seat: int, headers: dict[str, str], **params: Any
) -> Iterator[ClientConnection]:
    url = socket_url(server.url, game_id, seat, params)
    with connect(url, additional_headers=headers, proxy=None, open_timeout=10) as ws:
        yield ws


def receive(ws: ClientConnection) -> dict[str, Any]:
    message: dict[str, Any] = orjson.loads(ws.recv(timeout=20))
    return message


def next_of(ws: ClientConnection, kind: str) -> dict[str, Any]:
    while True:
        message = receive(ws)
        if message["type"] == kind:
            return message


def refused(
    server: LiveServer, game_id: str, seat: int, headers: dict[str, str], **params: Any
) -> tuple[int, Any]:
    with pytest.raises(InvalidStatus) as caught, opened(server, game_id, seat, headers, **params):
        pass
    response = caught.value.response
    return response.status_code, orjson.loads(response.body or b"null")


def test_a_socket_bot_plays_a_whole_game_and_its_frames_are_the_stream(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    server = live_server(make_settings(decision_seconds=10))
    with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
        ada, game_id = ada_against_house(client)
        seen: list[dict[str, Any]] = []
        bot = SocketBot(
            server.url, ada, lambda request: request["legal"][-1], on_message=seen.append
        )
        bot.play(game_id, 0)
        assert bot.errors == []
        wait_over(client, game_id)
        full = lines(
            client.get(
                f"/api/v1/games/{game_id}/seats/0/events",
                params={"format": "ndjson", "follow": False},
                headers=bearer(ada),
            ).text
        )
        public = lines(
            client.get(f"/api/v1/games/{game_id}/events", params={"format": "ndjson"}).text
        )
    stream = [m for m in seen if m["type"] not in ("accepted", "problem")]
    answers = [m for m in seen if m["type"] in ("accepted", "problem")]
    # The whole seat stream, read once the game is over, is what the socket sent, but for
    # the turns (never stored: each carries the id of the event before it); each turn was
    # answered once, accepted, and is in the public record.
    assert [m for m in stream if m["type"] != "your_turn"] == full
    for before, m in itertools.pairwise(stream):
        if m["type"] == "your_turn":
            assert m["id"] == before["id"] and before["type"] != "your_turn"
    turns = [m for m in stream if m["type"] == "your_turn"]
    assert {a["type"] for a in answers} == {"accepted"}
    # (the answer to the last action may come after the game's last event, when the bot has
    # stopped reading: the stream does not wait for the answer, nor the answer for it)
    refs = [str(t["data"]["version"]) for t in turns]
    assert [a["ref"] for a in answers] in (refs, refs[:-1])
    # an action appends its own event and those it brings (a trick won, a deal's end)
    assert all(
        a["data"]["version"] > t["data"]["version"] for a, t in zip(answers, turns, strict=False)
    )
    assert all(a["data"]["view"] is None and a["data"]["seat"] == 0 for a in answers)
    mine = [
        m
        for m in public
        if m["type"] in ("card_played", "contract_declared") and m["data"]["seat"] == 0
    ]
    assert len(mine) == len(turns)
    assert stream[-1]["type"] == "seed_revealed"


def test_frames_resume_after_any_id_as_the_stream_does_and_the_socket_closes_at_the_end(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    server = live_server(make_settings(decision_seconds=10))
    with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
        ada, game_id = ada_against_house(client)
        SocketBot(server.url, ada, lambda request: request["legal"][0]).play(game_id, 0)
        wait_over(client, game_id)

        def stream(**params: Any) -> list[dict[str, Any]]:
            return lines(
                client.get(
                    f"/api/v1/games/{game_id}/seats/0/events",
                    params={"format": "ndjson", "follow": False, **params},
                    headers=bearer(ada),
                ).text
            )

        full = stream()
        for only in ({}, {"only": "turns"}):
            for after in (0, 5, full[10]["id"], full[-2]["id"]):
                got: list[dict[str, Any]] = []
                with opened(server, game_id, 0, bearer(ada), after=after, **only) as ws:
                    with pytest.raises(ConnectionClosedOK):
                        while True:
                            got.append(receive(ws))
                    assert ws.close_code == 1000
                assert got == stream(after=after, **only), (after, only)
                assert got[-1]["type"] == "seed_revealed"


def test_every_bad_frame_gets_a_problem_and_the_socket_plays_on(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    server = live_server(make_settings(decision_seconds=30, max_strikes=5))
    with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
        ada, game_id = ada_against_house(client)
        with opened(server, game_id, 0, bearer(ada), only="turns") as ws:
            turn = next_of(ws, "your_turn")["data"]
            version = turn["version"]
            cases: list[tuple[str | bytes, int, str]] = [
                ("not json", 400, "bad_request"),
                ("[1, 2]", 400, "bad_request"),
                ('{"action": {"type": "play", "card": "QS"}, "extra": 1}', 400, "bad_request"),
                ('{"action": {"type": "fly"}, "ref": "r1"}', 400, "bad_request"),
                ('{"action": {"type": "play", "card": "ZZ"}, "ref": "r2"}', 400, "bad_request"),
                (b"\x00binary", 400, "bad_request"),
                (
                    orjson.dumps({"action": {**turn["legal"][0], "seat": 1}, "ref": "r3"}).decode(),
                    403,
                    "forbidden",
                ),
                (
                    orjson.dumps(
                        {"action": {**turn["legal"][0], "version": version - 1}, "ref": "r4"}
                    ).decode(),
                    409,
                    "conflict",
                ),
            ]
            for sent, status, code in cases:
                ws.send(sent)
                answer = receive(ws)
                assert answer["type"] == "problem", (sent, answer)
                assert answer["data"]["status"] == status, (sent, answer)
                assert answer["data"]["code"] == code, (sent, answer)
                if isinstance(sent, str) and '"ref": "r' in sent:
                    assert answer["ref"] is not None
            # nothing above was decided: the game still waits for seat 0 at the same version
            view = client.get(f"/api/v1/games/{game_id}/seats/0", headers=bearer(ada)).json()
            assert view["version"] == version
            # an illegal declaration on the seat's turn: 422 with the rule's code and a strike
            legal = [a.get("card") for a in turn["legal"]]
            card = next(r + u for u in "SHDC" for r in "23456789TJQKA" if r + u not in legal)
            illegal = {"type": "play", "card": card}
            ws.send(orjson.dumps({"action": {**illegal, "version": version}, "ref": "x"}).decode())
            # the strike's own message, and the next turn after the default move, may come
            # before the answer: read until both the answer and a new turn are in
            got: list[dict[str, Any]] = []
            while not (
                any(m["type"] == "problem" for m in got)
                and any(m["type"] == "your_turn" for m in got)
            ):
                got.append(receive(ws))
            answer = next(m for m in got if m["type"] == "problem")
            assert answer["ref"] == "x"
            assert answer["data"]["status"] == 422 and answer["data"]["strike"]["count"] == 1
            assert answer["data"]["code"] not in ("bad_request", "unprocessable")
            assert [m["data"]["count"] for m in got if m["type"] == "strike_recorded"] == [1]
            # and the socket plays on: the default move was played, a later turn comes (a
            # turn announced between the strike and the default move is refused as stale)
            turns = [m["data"] for m in got if m["type"] == "your_turn"]
            for _ in range(5):
                nxt = turns[-1] if turns else next_of(ws, "your_turn")["data"]
                turns = []
                action = {**nxt["legal"][0], "version": nxt["version"]}
                ws.send(orjson.dumps({"action": action}).decode())
                answer = receive(ws)
                while answer["type"] not in ("accepted", "problem"):
                    if answer["type"] == "your_turn":
                        turns.append(answer["data"])
                    answer = receive(ws)
                if answer["type"] == "accepted":
                    break
                assert answer["data"]["status"] == 409, answer
            assert answer["ref"] is None and answer["data"]["version"] > nxt["version"] > version
            # what the operator sees: one socket open, its frames counted by answer
            metrics = client.get("/metrics").text
            assert "king_seat_sockets 1.0" in metrics
            for status, least in (("400", 6), ("403", 1), ("409", 1), ("422", 1), ("200", 1)):
                line = f'king_socket_frames_total{{status="{status}"}} '
                counted = next(x for x in metrics.splitlines() if x.startswith(line))
                assert float(counted.split()[-1]) >= least, counted
            assert {**answer["data"], "version": 0} == {
                "ok": True,
                "seat": 0,
                "version": 0,
                "view": None,
                "strike": None,
            }
        wait_for(lambda: "king_seat_sockets 0.0" in client.get("/metrics").text, "the close")


def test_a_refused_upgrade_is_an_http_problem(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    server = live_server(make_settings(decision_seconds=30))
    with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
        ada = create_player(client, "ada")
        bora = create_player(client, "bora")
        game_id = create_game(client, ada, ["ada", *HOUSE], rules=SEAT0_FIRST)
        hana = sign_up(client, "hana")["token"]
        reader = make_token(client, hana, "reader", ["read"])
        h_game = create_game(client, hana, ["hana", *HOUSE], rules=SEAT0_FIRST)
    session = server.app.state.king.accounts.open_session("hana", timedelta(days=1))
    cases: list[tuple[str, int, dict[str, str], dict[str, Any], int, str]] = [
        (game_id, 0, {}, {}, 401, "unauthorized"),
        (game_id, 0, bearer("king_made_up"), {}, 401, "unauthorized"),
        (game_id, 0, {"authorization": "Basic abc"}, {}, 401, "unauthorized"),
        (h_game, 0, {"cookie": f"king_session={session}"}, {}, 401, "unauthorized"),
        (game_id, 1, bearer(ada), {}, 403, "forbidden"),
        (game_id, 0, bearer(bora), {}, 403, "forbidden"),
        (game_id, 0, ADMIN_HEADERS, {}, 403, "forbidden"),
        (h_game, 0, bearer(reader), {}, 403, "forbidden"),
        ("no-such-game", 0, bearer(ada), {}, 404, "not_found"),
        (game_id, 0, bearer(ada), {"only": "everything"}, 400, "bad_request"),
        (game_id, 0, bearer(ada), {"after": "-1"}, 400, "bad_request"),
        (game_id, 0, bearer(ada), {"format": "sse"}, 400, "bad_request"),
    ]
    for game, seat, headers, params, status, code in cases:
        got, body = refused(server, game, seat, headers, **params)
        assert got == status, (game, seat, headers, params, body)
        assert body["status"] == status and body["code"] == code, body
    # the seat's own bearer token opens it
    with opened(server, h_game, 0, bearer(hana)) as ws:
        assert receive(ws)["id"] >= 1


def test_action_frames_draw_on_the_tokens_rate_limit(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    server = live_server(
        make_settings(decision_seconds=30, rate_limit_per_second=0.01, rate_limit_burst=8)
    )
    with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
        ada, game_id = ada_against_house(client)
    statuses: list[int] = []
    with opened(server, game_id, 0, bearer(ada), only="turns") as ws:
        next_of(ws, "your_turn")
        for n in range(12):
            ws.send(
                orjson.dumps({"action": {"type": "play", "card": "ZZ"}, "ref": str(n)}).decode()
            )
            answer = receive(ws)
            statuses.append(answer["data"]["status"])
    # the bucket held 8: the socket's opening and the requests above took some, then 429s
    assert statuses.count(429) >= 4, statuses
    assert statuses[-1] == 429 and set(statuses) <= {400, 429}, statuses
    code, body = refused(server, game_id, 0, bearer(ada))
    assert code == 429 and body["code"] == "rate_limited"


def test_a_socket_wakes_on_its_turn_while_another_client_acts_over_http(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    """Two seats of one game by two players, one on a socket, one over HTTP: the socket's turn
    comes as soon as the HTTP player's action lands."""
    server = live_server(make_settings(decision_seconds=30))
    with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
        ada = create_player(client, "ada")
        bora = create_player(client, "bora")
        game_id = create_game(
            client,
            ADMIN_HEADERS["authorization"].split()[1],
            ["ada", "bora", "house:random", "house:random"],
            rules=SEAT0_FIRST,
        )
        done = threading.Event()

        def bora_over_http() -> None:
            path = f"/api/v1/games/{game_id}/seats/1/events"
            params = {"format": "ndjson", "only": "turns"}
            with (
                httpx.Client(base_url=server.url, trust_env=False, timeout=30) as c,
                c.stream("GET", path, params=params, headers=bearer(bora)) as stream,
            ):
                for line in stream.iter_lines():
                    if done.is_set() or not line.strip():
                        continue
                    m = orjson.loads(line)
                    if m["type"] == "seed_revealed":
                        return
                    if m["type"] == "your_turn":
                        t = m["data"]
                        body = {**t["legal"][0], "version": t["version"]}
                        c.post(f"/api/v1/games/{game_id}/actions", json=body, headers=bearer(bora))

        helper = threading.Thread(target=bora_over_http, daemon=True)
        helper.start()
        bot = SocketBot(server.url, ada, lambda request: request["legal"][0])
        bot.play(game_id, 0)
        assert bot.errors == []
        result = wait_over(client, game_id)
        helper.join(timeout=30)
        assert result["game"]["status"] == "over"
        assert wait_for(lambda: not helper.is_alive(), "the HTTP player to finish")


def test_a_socket_bot_run_plays_each_game_its_player_is_seated_in(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    """`SocketBot.run`: the player's notices announce each game, and every seat of it is
    played over its socket to the end."""
    server = live_server(make_settings(decision_seconds=10))
    with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
        ada = create_player(client, "ada")
        bot = SocketBot(server.url, ada, lambda request: request["legal"][0])
        runner = threading.Thread(target=bot.run, kwargs={"max_games": 2}, daemon=True)
        runner.start()
        games = [
            create_game(client, ada, ["ada", *HOUSE], rules=SEAT0_FIRST),
            create_game(client, ada, [*HOUSE[:2], "ada", HOUSE[2]], rules={"mode": "short12"}),
        ]
        for game_id in games:
            result = wait_over(client, game_id)
            assert result["game"]["status"] == "over"
        runner.join(timeout=30)
        assert not runner.is_alive() and bot.errors == []
        for game_id, seat in zip(games, (0, 2), strict=True):
            # no strike: every turn of the bot's seat was played by the bot, in time
            events = lines(
                client.get(f"/api/v1/games/{game_id}/events", params={"format": "ndjson"}).text
            )
            assert not [m for m in events if m["type"] == "strike_recorded"], game_id
            assert any(m["type"] == "card_played" and m["data"]["seat"] == seat for m in events)


def test_king_bot_pull_socket_plays_a_game_over_the_seats_socket(
    make_settings: SettingsFactory, live_server: Callable[[Settings], LiveServer]
) -> None:
    server = live_server(make_settings(decision_seconds=10))
    with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
        ada = create_player(client, "ada")
        args = ["bot", "pull", "--socket", "--strategy", "random", "--url", server.url]
        bot = subprocess.Popen(
            [sys.executable, "-m", "services.cli", *args, "--token", ada],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            game_id = create_game(client, ada, ["ada", *HOUSE], rules=SEAT0_FIRST)
            wait_over(client, game_id)
        finally:
            bot.terminate()
            _, err = bot.communicate(timeout=30)
        events = lines(
            client.get(f"/api/v1/games/{game_id}/events", params={"format": "ndjson"}).text
        )
    assert b"random socket bot on" in err, err
    assert not [m for m in events if m["type"] == "strike_recorded"], err
    assert any(m["type"] == "card_played" and m["data"]["seat"] == 0 for m in events)
