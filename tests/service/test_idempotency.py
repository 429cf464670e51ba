"""Safe retries with `Idempotency-Key` (services.idempotency): a repeated key gets the first
answer, 422 and strike included, and is never decided again, whether the repeats come one
after another, at once in one process or at once in two processes on one database; another
body under the key is refused without a strike; a malformed key is a 400; a key is a
player's own; keys expire. The pull bot sends one key a decision and the same on a resend."""

from __future__ import annotations

import asyncio
import random
import re
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar import Response
from litestar.testing import TestClient
from sqlalchemy import Engine

from eventstore.backends import create_engines
from services.app import create_app
from services.botkit.pull import PullBot
from services.database import store_settings, upgrade_all
from services.idempotency import (
    REPLAYED_HEADER,
    ActionKeys,
    Answer,
    Idempotency,
    KeyInProgress,
    KeyReused,
    MalformedKey,
    Scope,
    parse_key,
)
from services.settings import Settings
from tests.service.conftest import SettingsFactory
from tests.service.helpers import ADMIN, bearer, create_game, create_player, wait_for

SEAT0_FIRST = {"mode": "short12", "first_declarer": "seat0"}
PEOPLE = ["ada", "bora", "cem", "dee"]
REPLAYED = "idempotent-replayed"


def keyed(token: str, key: str) -> dict[str, str]:
    return {**bearer(token), "idempotency-key": key}


@contextmanager
def four_people(settings: Settings) -> Iterator[tuple[TestClient[Any], dict[str, str], str]]:
    """A live game of four people, seat 0 to declare: nothing moves but their requests."""
    with TestClient(create_app(settings)) as client:
        tokens = {p: create_player(client, p) for p in PEOPLE}
        # the admin seats them (a player's table would wait for the others to accept)
        game_id = create_game(client, ADMIN, PEOPLE, rules=SEAT0_FIRST)
        yield client, tokens, game_id


def state(client: TestClient[Any], game_id: str, seat: int, token: str) -> dict[str, Any]:
    r = client.get(f"/api/v1/games/{game_id}/seats/{seat}", headers=bearer(token))
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def strikes(client: TestClient[Any], game_id: str) -> list[dict[str, Any]]:
    r = client.get(f"/api/v1/games/{game_id}/events", params={"format": "ndjson", "follow": False})
    events = [orjson.loads(line) for line in r.text.splitlines() if line.strip()]
    return [e["data"] for e in events if e["type"] == "strike_recorded"]


def illegal_play(view: dict[str, Any]) -> dict[str, str]:
    """A card while a contract is to be declared: refused on the seat's turn, a strike."""
    return {"type": "play", "card": sorted(view["view"]["hand"])[0]}


def test_a_repeat_gets_the_first_answer_and_is_not_decided_again(
    backend_settings: SettingsFactory,
) -> None:
    with four_people(backend_settings(decision_seconds=120)) as (client, tokens, game_id):
        url = f"/api/v1/games/{game_id}/actions"
        before = state(client, game_id, 0, tokens["ada"])
        action = before["view"]["legal"][0]  # no `version`: today a resend is decided again
        key = str(uuid.uuid4())
        first = client.post(url, json=action, headers=keyed(tokens["ada"], key))
        assert first.status_code == 200, first.text
        assert REPLAYED not in first.headers
        after = state(client, game_id, 0, tokens["ada"])
        assert first.json()["version"] == after["version"] > before["version"]

        for _ in range(3):
            again = client.post(
                url,
                json=action,
                headers={**keyed(tokens["ada"], key), "accept-encoding": "gzip"},
            )
            assert again.status_code == 200
            assert again.headers[REPLAYED] == "true"
            assert again.content == first.content, "the same bytes"
            assert "content-encoding" not in again.headers, "an action's answer is not gzipped"
            assert state(client, game_id, 0, tokens["ada"])["version"] == after["version"]

        # the game moves on; the key still answers what it first answered
        turn = state(
            client, game_id, after["view"]["to_move"], tokens[PEOPLE[after["view"]["to_move"]]]
        )
        mover = PEOPLE[turn["seat"]]
        played = client.post(url, json=turn["view"]["legal"][0], headers=bearer(tokens[mover]))
        assert played.status_code == 200, played.text
        late = client.post(url, json=action, headers=keyed(tokens["ada"], key))
        assert late.status_code == 200 and late.content == first.content
        assert strikes(client, game_id) == []
        # without a key an action is decided every time, as before
        r = client.post(url, json=action, headers=bearer(tokens["ada"]))
        assert r.status_code == 422 and REPLAYED not in r.headers


def test_a_repeat_of_a_refused_action_costs_no_second_strike(
    backend_settings: SettingsFactory,
) -> None:
    with four_people(backend_settings(decision_seconds=120)) as (client, tokens, game_id):
        url = f"/api/v1/games/{game_id}/actions"
        bad = illegal_play(state(client, game_id, 0, tokens["ada"]))
        key = "retry-" + uuid.uuid4().hex
        first = client.post(url, json=bad, headers=keyed(tokens["ada"], key))
        assert first.status_code == 422, first.text
        assert first.json()["code"] == "wrong_phase" and first.json()["strike"]["count"] == 1
        version = state(client, game_id, 0, tokens["ada"])["version"]
        for _ in range(4):
            again = client.post(url, json=bad, headers=keyed(tokens["ada"], key))
            assert again.status_code == 422 and again.headers[REPLAYED] == "true"
            assert again.content == first.content
            assert again.headers["content-type"].startswith("application/problem+json")
        seat = state(client, game_id, 0, tokens["ada"])
        assert seat["version"] == version
        assert seat["view"]["strikes"] == [1, 0, 0, 0]
        assert [(s["seat"], s["count"]) for s in strikes(client, game_id)] == [(0, 1)]


def test_a_key_reused_with_another_body_is_refused_without_a_strike(
    backend_settings: SettingsFactory,
) -> None:
    with four_people(backend_settings(decision_seconds=120)) as (client, tokens, game_id):
        url = f"/api/v1/games/{game_id}/actions"
        before = state(client, game_id, 0, tokens["ada"])
        key = str(uuid.uuid4())
        first = client.post(url, json=before["view"]["legal"][0], headers=keyed(tokens["ada"], key))
        assert first.status_code == 200
        version = state(client, game_id, 0, tokens["ada"])["version"]
        for other in (
            illegal_play(before),  # would be a strike if it were decided
            {**before["view"]["legal"][0], "version": before["version"]},
            {**before["view"]["legal"][0], "seat": 0},
        ):
            r = client.post(url, json=other, headers=keyed(tokens["ada"], key))
            assert r.status_code == 422, r.text
            problem = r.json()
            assert problem["code"] == "idempotency_key_reused"
            assert problem["type"] == "https://king.example/problems/idempotency-key-reused"
            assert "strike" not in problem and REPLAYED not in r.headers
        seat = state(client, game_id, 0, tokens["ada"])
        assert seat["version"] == version and seat["view"]["strikes"] == [0, 0, 0, 0]
        # the same body in another key order is the same body
        text = orjson.dumps(dict(reversed(list(before["view"]["legal"][0].items()))))
        r = client.post(
            url,
            content=text,
            headers={**keyed(tokens["ada"], key), "content-type": "application/json"},
        )
        assert r.status_code == 200 and r.content == first.content


def test_a_malformed_key_is_a_400_and_decides_nothing(make_settings: SettingsFactory) -> None:
    with four_people(make_settings(decision_seconds=120)) as (client, tokens, game_id):
        url = f"/api/v1/games/{game_id}/actions"
        before = state(client, game_id, 0, tokens["ada"])
        bad = illegal_play(before)
        for key in ("", "   ", "a b", "x" * 129, '"half', "semi;colon", "a,b", '""', "k\\ey"):
            r = client.post(url, json=bad, headers=keyed(tokens["ada"], key))
            assert r.status_code == 400, (key, r.text)
            problem = r.json()
            assert problem["code"] == "bad_idempotency_key"
            assert problem["type"] == "https://king.example/problems/idempotency-key-malformed"
            assert key.strip() == "" or key not in problem["detail"], "the key is not echoed"
        seat = state(client, game_id, 0, tokens["ada"])
        assert seat["version"] == before["version"] and seat["view"]["strikes"] == [0, 0, 0, 0]
        # the draft's form, a quoted string, is the same key as its bare text
        legal = before["view"]["legal"][0]
        first = client.post(url, json=legal, headers=keyed(tokens["ada"], '"k-1"'))
        again = client.post(url, json=legal, headers=keyed(tokens["ada"], "k-1"))
        assert first.status_code == 200 and again.headers[REPLAYED] == "true"
        assert again.content == first.content
        assert client.post(url, json=legal, headers=keyed(tokens["ada"], "x" * 128)).status_code
        assert all(parse_key(k) == k for k in ("x" * 128, "A-z_0.9~:+/=", str(uuid.uuid4())))
        with pytest.raises(MalformedKey):
            parse_key("é")


def test_another_players_same_key_is_a_key_of_its_own(backend_settings: SettingsFactory) -> None:
    with four_people(backend_settings(decision_seconds=120)) as (client, tokens, game_id):
        url = f"/api/v1/games/{game_id}/actions"
        key = "shared-key"
        ada = state(client, game_id, 0, tokens["ada"])
        first = client.post(url, json=ada["view"]["legal"][0], headers=keyed(tokens["ada"], key))
        assert first.status_code == 200
        hand = set(first.json()["view"]["hand"])
        # the same key and body from bora: her own request, decided for her seat (not her turn)
        other = client.post(url, json=ada["view"]["legal"][0], headers=keyed(tokens["bora"], key))
        assert other.status_code == 422 and "strike" not in other.json(), other.text
        assert REPLAYED not in other.headers
        sent = ada["view"]["legal"][0].get("card")  # bora may be told of the card she sent
        named = set(re.findall(r"\b[2-9TJQKA][SHDC]\b", other.text))  # whole card names only
        assert not named & (hand - {sent}), other.text
        # when it is bora's turn, her own use of the key is decided and answers her own view
        while True:
            turn = state(client, game_id, 0, tokens["ada"])
            mover = turn["view"]["to_move"]
            if mover == 1:
                break
            seat_view = state(client, game_id, mover, tokens[PEOPLE[mover]])
            r = client.post(
                url, json=seat_view["view"]["legal"][0], headers=bearer(tokens[PEOPLE[mover]])
            )
            assert r.status_code == 200, r.text
        bora = state(client, game_id, 1, tokens["bora"])
        key2 = "bora-" + uuid.uuid4().hex
        mine = client.post(url, json=bora["view"]["legal"][0], headers=keyed(tokens["bora"], key2))
        assert mine.status_code == 200 and mine.json()["seat"] == 1
        # ada's repeat of bora's key is hers: decided for ada, never bora's answer
        theirs = client.post(url, json=bora["view"]["legal"][0], headers=keyed(tokens["ada"], key2))
        assert REPLAYED not in theirs.headers and theirs.content != mine.content
        # and ada's first key still answers ada's first answer
        again = client.post(url, json=ada["view"]["legal"][0], headers=keyed(tokens["ada"], key))
        assert again.headers[REPLAYED] == "true" and again.content == first.content


def _at_once(send: list[Any]) -> list[httpx.Response]:
    """Call every `send()` from a thread of its own, all released together."""
    barrier = threading.Barrier(len(send))
    results: list[httpx.Response | None] = [None] * len(send)

    def run(i: int) -> None:
        barrier.wait()
        results[i] = send[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(send))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


def _one_decision(answers: list[httpx.Response]) -> None:
    """Every answer the first one or a 409 "in progress"; the first one answered once."""
    decided = [r for r in answers if r.status_code != 409]
    assert decided, "at least one request is answered"
    assert all(r.content == decided[0].content for r in decided)
    assert sum(REPLAYED not in r.headers for r in decided) <= 1
    for r in answers:
        if r.status_code == 409:
            assert r.json()["code"] == "idempotency_key_in_progress", r.text
            assert r.headers["retry-after"] == "1"


def test_concurrent_repeats_in_one_process_are_decided_once(
    backend_settings: SettingsFactory,
) -> None:
    with four_people(backend_settings(decision_seconds=120)) as (client, tokens, game_id):
        url = f"/api/v1/games/{game_id}/actions"
        bad = illegal_play(state(client, game_id, 0, tokens["ada"]))
        key = str(uuid.uuid4())
        answers = _at_once(
            [lambda: client.post(url, json=bad, headers=keyed(tokens["ada"], key))] * 6
        )
        _one_decision(answers)
        assert answers[0].status_code in (409, 422)
        assert [(s["seat"], s["count"]) for s in strikes(client, game_id)] == [(0, 1)]
        r = client.post(url, json=bad, headers=keyed(tokens["ada"], key))
        assert r.status_code == 422 and r.json()["strike"]["count"] == 1


def test_concurrent_repeats_in_two_processes_are_decided_once(
    backend_settings: SettingsFactory,
) -> None:
    one = backend_settings(decision_seconds=120)
    two = backend_settings(decision_seconds=120, run_driver=False, run_scheduler=False)
    with (
        four_people(one) as (client, tokens, game_id),
        TestClient(create_app(two)) as other,
    ):
        url = f"/api/v1/games/{game_id}/actions"
        for round_ in range(2):  # a strike each round: a doubled one would show in the count
            view = state(client, game_id, 0, tokens["ada"])
            assert view["view"]["to_move"] == 0
            if view["view"]["legal"][0]["type"] == "declare":
                bad = illegal_play(view)
            else:
                hand = set(view["view"]["hand"])
                bad = {
                    "type": "play",
                    "card": next(c for c in ("2S", "3S", "4S", "5S", "6S", "7S") if c not in hand),
                }
            key = f"two-{round_}-{uuid.uuid4().hex}"
            send = [
                lambda c=c, bad=bad, key=key: c.post(
                    url, json=bad, headers=keyed(tokens["ada"], key)
                )
                for c in (client, other) * 3
            ]
            answers = _at_once(send)
            _one_decision(answers)
            # Every answer is in, so every decision is made; the strike decided by the other
            # process reaches this one's stream through the feed, a moment later.
            wait_for(lambda n=round_: len(strikes(client, game_id)) > n, "the strike in the feed")
            assert len(strikes(client, game_id)) == round_ + 1, "one strike per key"
            for c in (client, other):  # once answered, every process replays the answer
                r = c.post(url, json=bad, headers=keyed(tokens["ada"], key))
                assert r.status_code == 422 and r.headers[REPLAYED] == "true"
                assert r.json()["strike"]["count"] == round_ + 1
            _to_ada(client, tokens, game_id)
        assert state(client, game_id, 0, tokens["ada"])["view"]["strikes"] == [2, 0, 0, 0]


def _to_ada(client: TestClient[Any], tokens: dict[str, str], game_id: str) -> None:
    """Play legal moves for the others until it is seat 0's turn again."""
    url = f"/api/v1/games/{game_id}/actions"
    while True:
        mover = state(client, game_id, 0, tokens["ada"])["view"]["to_move"]
        if mover == 0:
            return
        view = state(client, game_id, mover, tokens[PEOPLE[mover]])
        r = client.post(url, json=view["view"]["legal"][0], headers=bearer(tokens[PEOPLE[mover]]))
        assert r.status_code == 200, r.text


def test_a_page_on_an_allowed_origin_may_send_a_key_and_read_the_replay_header(
    make_settings: SettingsFactory,
) -> None:
    page = "https://bots.example.org"
    with TestClient(create_app(make_settings(cors_origins=page))) as client:
        pre = client.options(
            "/api/v1/games/g-1/actions",
            headers={
                "origin": page,
                "access-control-request-method": "POST",
                "access-control-request-headers": "authorization, content-type, idempotency-key",
            },
        )
        assert pre.status_code in (200, 204), pre.text
        assert "idempotency-key" in pre.headers["access-control-allow-headers"].lower()
        r = client.get("/api/v1/games", headers={"origin": page})
        assert "idempotent-replayed" in r.headers["access-control-expose-headers"].lower()


# --- the keys' table and the async side, without HTTP ------------------------------------


@pytest.fixture
def key_engine(backend_settings: SettingsFactory) -> Iterator[Engine]:
    """The write engine of a migrated database on each backend."""
    settings_ = backend_settings()
    upgrade_all(settings_)
    engines = create_engines(settings_.url, store_settings(settings_))
    yield engines.write
    engines.dispose()


def _answer(status: int, text: str) -> Response[bytes]:
    return Response(text.encode(), status_code=status, media_type="application/json")


def test_an_answer_of_500_or_more_lets_the_key_go_and_keys_expire(key_engine: Engine) -> None:
    now = [datetime(2027, 1, 1, tzinfo=UTC)]
    keys = ActionKeys(key_engine, ttl_seconds=3600, clock=lambda: now[0])
    idem = Idempotency(keys)
    decided: list[int] = []

    async def busy() -> Response[bytes]:
        decided.append(503)
        return _answer(503, "busy")

    async def done() -> Response[bytes]:
        decided.append(200)
        return _answer(200, "done")

    async def scenario() -> None:
        scope = Scope("ada", "g-1", "k")
        assert (await idem.run(scope, "p", busy)).status_code == 503
        first = await idem.run(scope, "p", done)  # decided afresh: nothing was kept
        assert first.status_code == 200 and REPLAYED_HEADER not in first.headers
        again = await idem.run(scope, "p", done)
        assert again.content == b"done" and again.headers[REPLAYED_HEADER] == "true"
        now[0] += timedelta(hours=2)  # expired: the key is new again
        assert REPLAYED_HEADER not in (await idem.run(scope, "p", done)).headers
        now[0] += timedelta(hours=2)
        assert keys.prune() == 1
        assert keys.prune() == 0

    asyncio.run(scenario())
    assert decided == [503, 200, 200]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    batches=st.lists(
        st.lists(st.tuples(st.booleans(), st.integers(0, 1)), min_size=1, max_size=4),
        min_size=1,
        max_size=4,
    ),
    status=st.sampled_from([200, 409, 422]),
)
def test_any_repeats_of_a_key_are_one_decision_and_one_answer(
    key_engine: Engine, batches: list[list[tuple[bool, int]]], status: int
) -> None:
    """Batches of requests with one key, each batch at once, each request in one of two
    "processes" (two Idempotency objects over one table) and with the first body or another:
    one decision, one answer; another body is refused; "in progress" only from elsewhere."""
    keys = ActionKeys(key_engine)
    processes = [Idempotency(keys), Idempotency(ActionKeys(key_engine))]
    scope = Scope("ada", "g-prop", uuid.uuid4().hex)
    decisions: list[str] = []

    def decider(body: str) -> Any:
        async def decide() -> Response[bytes]:
            decisions.append(body)
            for _ in range(random.randint(0, 3)):
                await asyncio.sleep(0)
            return _answer(status, f"decided {body} #{len(decisions)}")

        return decide

    async def one(same: bool, where: int) -> tuple[bool, Answer | str]:
        body = "first" if same else "other"
        try:
            response = await processes[where].run(scope, body, decider(body))
        except (KeyReused, KeyInProgress) as exc:
            return same, type(exc).__name__
        return same, Answer.of(response)

    async def scenario() -> list[tuple[bool, Answer | str]]:
        out: list[tuple[bool, Answer | str]] = []
        for batch in batches:
            out += await asyncio.gather(*(one(same, where) for same, where in batch))
        return out

    results = asyncio.run(scenario())
    assert len(decisions) == 1, decisions
    won = decisions[0]  # the body that claimed the key first
    answers = {r for same, r in results if isinstance(r, Answer)}
    assert len(answers) == 1
    (answer,) = answers
    assert answer.status == status and answer.body == f"decided {won} #1".encode()
    for same, r in results:
        if ("first" if same else "other") != won:
            assert r == "KeyReused"
        else:
            assert r in ("KeyInProgress", answer)
    # once answered, both processes replay the one answer
    for idem in processes:
        replay = asyncio.run(idem.run(scope, won, decider(won)))
        assert Answer.of(replay) == answer and replay.headers[REPLAYED_HEADER] == "true"
    assert len(decisions) == 1


# --- the pull bot ------------------------------------------------------------------------

TURN = {"version": 7, "seat": 2, "deadline_ms": 60_000, "legal": [{"type": "redeal"}]}


def _bot(answers: list[Any]) -> tuple[PullBot, list[httpx.Request], httpx.Client]:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        assert isinstance(answer, httpx.Response)
        return answer

    bot = PullBot("http://king.test", "tok", lambda req: req["legal"][0])
    bot.sleep = lambda _: None
    bot.rng = random.Random(1)
    client = httpx.Client(base_url="http://king.test", transport=httpx.MockTransport(handler))
    return bot, sent, client


IN_PROGRESS = httpx.Response(
    409, headers={"retry-after": "1"}, json={"code": "idempotency_key_in_progress"}
)


def test_the_pull_bot_resends_a_decision_with_its_key_and_a_new_decision_with_a_new_one() -> None:
    answers: list[Any] = [
        httpx.ConnectError("refused"),
        httpx.Response(503, headers={"retry-after": "1"}),
        IN_PROGRESS,
        httpx.Response(200, json={"ok": True}),
        httpx.Response(200, json={"ok": True}),
    ]
    bot, sent, client = _bot(answers)
    bot._act(client, "g1", TURN)
    assert len(sent) == 4 and len({r.content for r in sent}) == 1
    first_keys = {r.headers["idempotency-key"] for r in sent}
    assert len(first_keys) == 1 and parse_key(first_keys.pop())
    bot._act(client, "g1", {**TURN, "version": 9})
    assert sent[-1].headers["idempotency-key"] != sent[0].headers["idempotency-key"]
    assert bot.errors == []


def test_the_pull_bot_does_not_resend_a_plain_conflict() -> None:
    bot, sent, client = _bot([httpx.Response(409, json={"code": None, "title": "conflict"})])
    bot._act(client, "g1", TURN)
    assert len(sent) == 1 and bot.errors == []
