"""Resuming a game's public stream and a seat's stream (`Last-Event-ID`, `?after=`): the
resumed stream starts right after the given id (no gap, nothing twice), a seat resumed while
the game waits for it gets `your_turn` again, a bad id is a 400, another's seat a 403."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from litestar.testing import TestClient

from services.app import create_app
from tests.service.conftest import SettingsFactory
from tests.service.helpers import (
    ADMIN_HEADERS,
    bearer,
    create_game,
    create_player,
    wait_for,
    wait_over,
)

HOUSE = ["house:random", "house:heuristic", "house:random", "house:random"]
Client = TestClient  # type: ignore[type-arg]


def fixed(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages without `your_turn`'s time left (it counts down; the deadline stays)."""
    out = []
    for m in messages:
        if m["type"] == "your_turn":
            m = {**m, "data": {k: v for k, v in m["data"].items() if k != "deadline_ms"}}
        out.append(m)
    return out


def read(
    client: Any, path: str, fmt: str, headers: dict[str, str] | None = None, **params: Any
) -> list[dict[str, Any]]:
    """The messages of a stream that is not followed (it ends at the stored end)."""
    r = client.get(path, params={"format": fmt, "follow": False, **params}, headers=headers)
    assert r.status_code == 200, r.text
    if fmt == "ndjson":
        return [orjson.loads(line) for line in r.text.splitlines() if line.strip()]
    out: list[dict[str, Any]] = []
    for block in r.text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in fields:
            message = orjson.loads(fields["data"])
            assert fields["event"] == message["type"]
            assert fields.get("id") == (None if message["id"] is None else str(message["id"]))
            out.append(message)
    return out


@pytest.mark.parametrize("fmt", ["sse", "ndjson"])
def test_a_public_stream_resumes_right_after_the_given_id(
    make_settings: SettingsFactory, fmt: str
) -> None:
    with TestClient(create_app(make_settings())) as client:
        token = create_player(client, "owner")
        game_id = create_game(client, token, HOUSE)
        wait_over(client, game_id)
        path = f"/api/v1/games/{game_id}/events"
        full = read(client, path, fmt)
        assert [m["id"] for m in full] == list(range(1, len(full) + 1))
        assert full[-1]["type"] == "seed_revealed"
        for k in (0, 1, 2, len(full) // 2, len(full) - 1, len(full)):
            assert read(client, path, fmt, {"last-event-id": str(k)}) == full[k:], k
            assert read(client, path, fmt, after=k) == full[k:], k
        # `?after=` wins over the header when both are given
        assert read(client, path, fmt, {"last-event-id": "1"}, after=5) == full[5:]


def test_a_bad_resume_id_is_a_400(client: Client) -> None:
    token = create_player(client, "ada")
    game_id = create_game(client, token, HOUSE)
    game_of_ada = create_game(client, token, ["ada", *HOUSE[:3]], decision_seconds=600)
    paths = [
        (f"/api/v1/games/{game_id}/events", {}),
        (f"/api/v1/games/{game_of_ada}/seats/0/events", bearer(token)),
    ]
    for path, auth in paths:
        for bad in ("abc", "-1", "1.5", "9" * 13, "3; 4"):
            r = client.get(path, params={"follow": False}, headers={**auth, "last-event-id": bad})
            assert r.status_code == 400, (path, bad, r.text)
            assert r.headers["content-type"].startswith("application/problem+json")
            assert "Last-Event-ID" in r.json()["detail"]
        for bad in ("abc", "-1"):
            r = client.get(path, params={"follow": False, "after": bad}, headers=auth)
            assert r.status_code == 400, (path, bad, r.text)


def test_a_seat_stream_resumed_mid_game_gets_your_turn_again(
    make_settings: SettingsFactory,
) -> None:
    with TestClient(create_app(make_settings(decision_seconds=600))) as client:
        ada = create_player(client, "ada")
        bob = create_player(client, "bob")
        game_id = create_game(
            client,
            ada,
            ["ada", *HOUSE[:3]],
            rules={"mode": "short12", "first_declarer": "seat0"},
        )
        path = f"/api/v1/games/{game_id}/seats/0/events"
        mine = bearer(ada)
        first = read(client, path, "ndjson", mine)
        turn = first[-1]
        assert turn["type"] == "your_turn" and turn["data"]["legal"]
        v = turn["id"]
        assert [m["id"] for m in first[:-1]] == list(range(1, v + 1))
        assert any("hand" in m["data"] for m in first if m["type"] == "deal_started")

        # a client that lost the connection at the turn gets the same turn, and only that
        for fmt in ("ndjson", "sse"):
            again = read(client, path, fmt, {**mine, "last-event-id": str(v)})
            assert fixed(again) == fixed([turn])  # the same turn, the same deadline
            assert fixed(read(client, path, fmt, mine, after=v)) == fixed([turn])
            assert fixed(read(client, path, fmt, mine, after=v - 1)) == fixed(first[-2:])

        # play on: the house seats move, and the game waits for ada again
        action = {**turn["data"]["legal"][0], "seat": 0, "version": v}
        r = client.post(f"/api/v1/games/{game_id}/actions", json=action, headers=mine)
        assert r.status_code == 200, r.text

        def waiting_for_ada() -> dict[str, Any] | None:
            seat = client.get(f"/api/v1/games/{game_id}/seats/0", headers=mine).json()
            return seat if seat["version"] > v and seat["view"]["legal"] else None

        w = wait_for(waiting_for_ada, "ada's next turn")["version"]
        whole = read(client, path, "ndjson", mine)
        resumed = read(client, path, "ndjson", {**mine, "last-event-id": str(v)})
        assert [m["id"] for m in resumed[:-1]] == list(range(v + 1, w + 1))  # no gap, no repeat
        assert resumed[:-1] == [m for m in whole if m["type"] != "your_turn" and m["id"] > v]
        assert resumed[-1]["type"] == "your_turn" and resumed[-1]["id"] == w
        assert resumed[-1]["data"]["version"] == w

        # nobody else may read (or resume) ada's seat
        for headers in (bearer(bob), ADMIN_HEADERS, {}):
            for extra in ({}, {"last-event-id": str(v)}):
                r = client.get(path, params={"follow": False}, headers={**headers, **extra})
                assert r.status_code in (401, 403), (headers, r.status_code)
        r = client.get(path, params={"follow": False}, headers=bearer(bob))
        assert r.status_code == 403
        r = client.get(f"/api/v1/games/{game_id}/seats/1/events", headers=mine)
        assert r.status_code == 403


def test_a_resumed_stream_reads_the_store_from_where_it_stands_not_from_the_start(
    make_settings: SettingsFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With nothing of the game cached (another process played it, or it left the cache), a
    stream resumed after version k reads the game's events from k + 1 only, and still sends
    exactly what the full stream sends from there (the hands of ended deals included)."""
    from services.app import services_of
    from tournament.games import stream_id

    app = create_app(make_settings())
    with TestClient(app) as client:
        token = create_player(client, "owner")
        game_id = create_game(client, token, HOUSE)
        wait_over(client, game_id)
        path = f"/api/v1/games/{game_id}/events"
        full = read(client, path, "ndjson")
        services = services_of(app)
        store = services.store
        reads: list[int] = []
        original = store.read_stream

        def spy(sid: str, from_version: int = 1, *args: Any, **kwargs: Any) -> Any:
            if sid == stream_id(game_id):
                reads.append(from_version)
            return original(sid, from_version, *args, **kwargs)

        monkeypatch.setattr(store, "read_stream", spy)
        for k in (len(full) // 3, len(full) - 40, len(full) - 1):
            services.games.forget(game_id)
            reads.clear()
            assert read(client, path, "ndjson", after=k) == full[k:], k
            # one replay to rebuild the state (the whole stream: nothing is cached), then the
            # stream's own read from k + 1
            assert reads[-1] == k + 1, reads
            assert min(reads[1:], default=k + 1) == k + 1, reads
