"""Bulk king-record/1 over HTTP: `GET /api/v1/games/export` (NDJSON) and `POST /api/v1/records`.

The round trip is the acceptance test: games played here (house bots, a game left unfinished,
a tournament's games) export, import into an empty database (SQLite and PostgreSQL), audit
clean there, and export again to the same bytes. Bad input gets a problem and stores nothing.
"""

from __future__ import annotations

import gzip
import os
import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from domain.playout import play_game
from domain.record import check_record, to_record
from domain.rules import Rules
from domain.view import Action, SeatView
from services.app import create_app
from services.database import upgrade_all
from services.play.watcher import game_changes
from services.record_export import RecordExport, Selection
from services.settings import Settings, load_settings
from tests.random_rules import random_rules
from tests.service.conftest import SettingsFactory, _base
from tests.service.helpers import (
    ADMIN_HEADERS,
    bearer,
    create_game,
    create_player,
    wait_for,
    wait_over,
)
from tournament.runner import TournamentRunner, parse_players

HOUSE = ["house:random", "house:heuristic", "house:random", "house:random"]
NDJSON = {"content-type": "application/x-ndjson", **ADMIN_HEADERS}
JSON_ADMIN = {"content-type": "application/json", **ADMIN_HEADERS}


@pytest.fixture(params=["sqlite", "postgres"])
def two_databases(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[SettingsFactory, SettingsFactory]]:
    """Settings of a source and of an empty destination database on one backend."""
    if request.param == "sqlite":
        src, dst = tmp_path / "src", tmp_path / "dst"
        src.mkdir()
        dst.mkdir()
        yield (
            lambda **kw: load_settings(**_base(src, **kw)),
            lambda **kw: load_settings(**_base(dst, **kw)),
        )
        return
    url = request.getfixturevalue("postgres_url")
    schemas = [f"bulk_{os.getpid()}_{uuid.uuid4().hex[:8]}" for _ in range(2)]
    makers: list[SettingsFactory] = []
    for schema in schemas:

        def make(schema: str = schema, **kw: object) -> Settings:
            return load_settings(**_base(tmp_path, database_url=url, pg_schema=schema, **kw))

        upgrade_all(make())
        makers.append(make)
    yield makers[0], makers[1]
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        for schema in schemas:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    engine.dispose()


def lines(body: bytes) -> list[bytes]:
    assert body == b"" or body.endswith(b"\n")
    return body.splitlines()


def play_one_deal(client: TestClient, token: str, game_id: str) -> None:  # type: ignore[type-arg]
    """Act for seat 0 (a pull seat) until the first deal has ended, then stop acting."""

    def deal_over() -> bool:
        seat = client.get(f"/api/v1/games/{game_id}/seats/0", headers=bearer(token)).json()
        view = seat["view"]
        if view["deal"] > 1 or view["phase"] == "over":
            return True
        if view["legal"]:
            action = {**view["legal"][0], "seat": 0, "version": seat["version"]}
            client.post(f"/api/v1/games/{game_id}/actions", json=action, headers=bearer(token))
        return False

    wait_for(deal_over, "the first deal to end")


def play_games(client: TestClient) -> dict[str, Any]:  # type: ignore[type-arg]
    """Finished house games, an unfinished game and a local tournament's games."""
    token = create_player(client, "ada")
    done = [create_game(client, token, HOUSE, id=f"done-{i}") for i in range(2)]
    for game_id in done:
        wait_over(client, game_id)
    open_id = create_game(client, token, ["ada", *HOUSE[1:]], id="open-1", decision_seconds=600)
    play_one_deal(client, token, open_id)
    store = client.app.state.king.store
    runner = TournamentRunner(store)
    runner.create("cup", parse_players("random*4"), rounds=1, rules=Rules(mode="short12"))
    cup = runner.run("cup")
    return {"done": done, "open": open_id, "cup": [r.game_id for r in cup.results]}


def test_the_round_trip_into_an_empty_database(
    two_databases: tuple[SettingsFactory, SettingsFactory],
) -> None:
    source, destination = two_databases
    with TestClient(create_app(source())) as client:
        games = play_games(client)
        everything = client.get("/api/v1/games/export")
        assert everything.status_code == 200, everything.text
        assert everything.headers["content-type"].startswith("application/x-ndjson")
        exported = lines(everything.content)
        ids = [*games["done"], games["open"], *games["cup"]]
        assert len(exported) == len(ids)
        # Each line is exactly the record endpoint's body, oldest game first.
        for game_id, line in zip(ids, exported, strict=True):
            assert client.get(f"/api/v1/games/{game_id}/record").content == line
        unfinished = orjson.loads(exported[len(games["done"])])
        assert "shuffle" not in unfinished and len(unfinished["deals"]) == 1
        cup = lines(client.get("/api/v1/games/export", params={"tournament": "cup"}).content)
        assert cup == exported[-len(games["cup"]) :]
        mine = lines(client.get("/api/v1/games/export", params={"player": "ada"}).content)
        assert mine == [exported[len(games["done"])]]
        params = {"player": "house:heuristic"}
        heuristic = lines(client.get("/api/v1/games/export", params=params).content)
        assert heuristic == exported[: len(games["done"]) + 1]
        assert (
            lines(client.get("/api/v1/games/export", params={"max": 2}).content) == (exported[:2])
        )
        # A time range: from the unfinished game's start on, and before it.
        store = client.app.state.king.store
        info = store.stream_info(f"game-{games['open']}")
        assert info is not None
        at = {"since": info.created_at.isoformat()}
        split = len(games["done"])
        assert lines(client.get("/api/v1/games/export", params=at).content) == exported[split:]
        before = {"until": info.created_at.isoformat()}
        assert (
            lines(client.get("/api/v1/games/export", params=before).content) == (exported[:split])
        )
        # Pages of two games: the same lines, keyset paging across pages.
        paged = RecordExport(store, page=2)
        assert b"".join(paged.lines(Selection(limit=None))) == everything.content
        assert list(paged.lines(Selection(limit=3))) == [x + b"\n" for x in exported[:3]]
        cut = Selection(player="house:heuristic", limit=None)
        assert [x.rstrip() for x in paged.lines(cut)] == heuristic

    with TestClient(create_app(destination())) as client:
        assert client.get("/api/v1/games/export").content == b""
        body = everything.content
        r = client.post("/api/v1/records?origin=elsewhere", content=body, headers=NDJSON)
        assert r.status_code == 200, r.text
        report = r.json()
        assert report["stored"] == len(ids) and report["refused"] == 0, report
        assert report["complete"] is True
        new_ids = [x["game_id"] for x in report["results"]]
        # Ids with a shuffle are kept; the unfinished game's record has none: a content id.
        assert new_ids[: len(games["done"])] == games["done"]
        assert new_ids[-len(games["cup"]) :] == games["cup"]
        assert new_ids[len(games["done"])].startswith("r-")
        for game_id in new_ids:
            audit = client.get(f"/api/v1/games/{game_id}/audit", headers=ADMIN_HEADERS)
            assert audit.status_code == 200 and audit.json()["ok"] is True, audit.text
            assert audit.json()["origin"] == "elsewhere"
            record = client.get(f"/api/v1/games/{game_id}/record")
            assert record.headers["king-origin"] == "elsewhere"
            detail = client.get(f"/api/v1/games/{game_id}").json()
            assert detail["game"]["origin"] == "elsewhere"
        assert client.get(f"/api/v1/games/{games['done'][0]}/audit").json()["ok"] is True
        open_detail = client.get(f"/api/v1/games/{new_ids[len(games['done'])]}").json()
        assert open_detail["game"]["status"] == "unfinished"
        # Exported again: the same bytes, line for line and as a whole.
        again = client.get("/api/v1/games/export")
        assert again.content == everything.content
        # Importing the same export again stores nothing new.
        twice = client.post("/api/v1/records", content=body, headers=NDJSON).json()
        assert twice["stored"] == 0 and twice["already_stored"] == len(ids), twice
        assert all(x["origin"] == "elsewhere" for x in twice["results"])
        assert client.get("/api/v1/games/export").content == everything.content
        # Imported games are records: not listed as tables, not driven.
        assert client.get("/api/v1/games").json() == []


def test_export_is_gzipped_for_a_client_that_asks(make_settings: SettingsFactory) -> None:
    with TestClient(create_app(make_settings())) as client:
        token = create_player(client, "ada")
        for i in range(2):
            wait_over(client, create_game(client, token, HOUSE, id=f"z-{i}"))
        plain = client.get("/api/v1/games/export", headers={"accept-encoding": "identity"})
        assert "content-encoding" not in plain.headers
        with client.stream("GET", "/api/v1/games/export", headers={"accept-encoding": "gzip"}) as r:
            assert r.headers["content-encoding"] == "gzip"
            raw = b"".join(r.iter_raw())
        assert gzip.decompress(raw) == plain.content
        assert len(raw) * 3 < len(plain.content)


def test_export_filters_and_bad_queries(make_settings: SettingsFactory) -> None:
    with TestClient(create_app(make_settings())) as client:
        token = create_player(client, "ada")
        wait_over(client, create_game(client, token, HOUSE, id="t-1"))
        one = client.get("/api/v1/games/export").content
        assert len(lines(one)) == 1
        assert (
            client.get("/api/v1/games/export", params={"since": "2000-01-01T00:00:00Z"}).content
            == one
        )
        assert (
            client.get("/api/v1/games/export", params={"until": "2000-01-01T00:00:00Z"}).content
            == b""
        )
        assert (
            client.get(
                "/api/v1/games/export", params={"since": "2999-01-01T00:00:00+02:00"}
            ).content
            == b""
        )
        assert client.get("/api/v1/games/export", params={"player": "nobody"}).content == b""
        for params in ({"max": 0}, {"max": 10_001}, {"since": "yesterday"}):
            r = client.get("/api/v1/games/export", params=params)
            assert r.status_code == 400, params
            assert r.headers["content-type"].startswith("application/problem+json")
        r = client.get("/api/v1/games/export", params={"tournament": "nope"})
        assert r.status_code == 404 and "nope" in r.json()["detail"]


def _finished_record(seed: int, reveal: bool = True, rules: Rules | None = None) -> dict[str, Any]:
    rng = random.Random(seed)

    def pick(view: SeatView) -> Action:
        return rng.choice(view.legal)

    state, _ = play_game(
        f"x-{seed}",
        ["ada", "bora", "cem", "deniz"],
        seed.to_bytes(32, "big"),
        [pick] * 4,
        rules or Rules(mode="short12"),
        reveal=reveal,
    )
    return to_record(state)


def test_one_document_and_its_problems(make_settings: SettingsFactory) -> None:
    with TestClient(create_app(make_settings())) as client:
        doc = _finished_record(7)
        body = orjson.dumps(doc)
        token = create_player(client, "bob")
        json_type = {"content-type": "application/json"}
        assert client.post("/api/v1/records", content=body, headers=json_type).status_code == 401
        r = client.post(
            "/api/v1/records",
            content=body,
            headers={"content-type": "application/json", **bearer(token)},
        )
        assert r.status_code == 403
        r = client.post("/api/v1/records", json=doc, headers=ADMIN_HEADERS)
        assert r.status_code == 201, r.text
        assert r.json() == {
            "game_id": "x-7",
            "status": "stored",
            "origin": "import",
            "finished": True,
        }
        r = client.post("/api/v1/records?origin=other", json=doc, headers=ADMIN_HEADERS)
        assert r.status_code == 200 and r.json()["status"] == "already_stored"
        assert r.json()["origin"] == "import"  # the first import's origin stays
        assert client.get("/api/v1/games/x-7/record").content == body
        assert client.get("/api/v1/games/x-7/audit").json()["ok"] is True
        # Nobody drives an imported game: the feed does not offer it to be claimed.
        stored = client.app.state.king.store.read_stream("game-x-7")
        assert game_changes(stored).created == [] and game_changes(stored).versions
        before = client.get("/api/v1/games/export").content

        # Another game under a taken id: 409, nothing stored.
        other = _finished_record(8)
        r = client.post("/api/v1/records?id=x-7", json=other, headers=ADMIN_HEADERS)
        assert r.status_code == 409 and r.json()["code"] == "game_exists", r.text
        assert r.json()["game_id"] == "x-7"
        # An illegal play: the checker's reason, nothing stored.
        bad = _finished_record(9, reveal=False)
        first = bad["deals"][0]
        first["plays"][0], first["plays"][1] = first["plays"][1], first["plays"][0]
        r = client.post("/api/v1/records", json=bad, headers=ADMIN_HEADERS)
        assert r.status_code == 422, r.text
        p = r.json()
        assert p["deal"] == 0 and p["play"] == 0 and p["code"] and p["rule"].startswith("R-")
        r = client.post(
            "/api/v1/records",
            content=b"{not json",
            headers=JSON_ADMIN,
        )
        assert r.status_code == 400 and r.json()["code"] == "malformed"
        r = client.post("/api/v1/records", json={"format": "king-record/2"}, headers=ADMIN_HEADERS)
        assert r.status_code == 422 and r.json()["code"] == "malformed"
        assert "format" in r.json()["detail"]
        r = client.post("/api/v1/records?origin=no%20spaces", json=doc, headers=ADMIN_HEADERS)
        assert r.status_code == 400
        huge = b'{"format": "king-record/1", "deals": [], "pad": "' + b"x" * (1024 * 1024) + b'"}'
        r = client.post(
            "/api/v1/records",
            content=huge,
            headers=JSON_ADMIN,
        )
        assert r.status_code == 413, r.text
        r = client.post(
            "/api/v1/records", content=body, headers=ADMIN_HEADERS | {"content-type": "text/plain"}
        )
        assert r.status_code == 415
        # A deal in progress, or the seed of an unfinished game: not stored.
        partial = _finished_record(10, reveal=False)
        partial["deals"] = partial["deals"][:1]
        partial["deals"][0]["plays"] = partial["deals"][0]["plays"][:5]
        r = client.post("/api/v1/records", json=partial, headers=ADMIN_HEADERS)
        assert r.status_code == 422 and r.json()["code"] == "deal_in_progress"
        seeded = _finished_record(11)
        seeded["deals"] = seeded["deals"][:2]
        r = client.post("/api/v1/records", json=seeded, headers=ADMIN_HEADERS)
        assert r.status_code == 422 and r.json()["code"] == "seed_before_end"
        assert client.get("/api/v1/games/export").content == before


def test_an_ndjson_batch_stores_the_good_and_reports_each_refusal(
    make_settings: SettingsFactory,
) -> None:
    with TestClient(create_app(make_settings())) as client:
        good = [orjson.dumps(_finished_record(s)) for s in (21, 22)]
        bad_play = _finished_record(23, reveal=False)
        bad_play["deals"][1]["plays"] = ["ZZ"]
        body = (
            b"\n".join(
                [
                    good[0],
                    b"not json",
                    orjson.dumps(bad_play),
                    b"",
                    good[1],
                    b"x" * (1024 * 1024 + 5),
                    good[0],
                ]
            )
            + b"\n"
        )
        r = client.post("/api/v1/records", content=body, headers=NDJSON)
        assert r.status_code == 200, r.text
        report = r.json()
        assert (report["stored"], report["already_stored"], report["refused"]) == (2, 1, 3)
        by_line = {x["line"]: x for x in report["results"]}
        assert by_line[1]["status"] == "stored" and by_line[5]["status"] == "stored"
        assert by_line[2]["error"]["code"] == "malformed"
        assert by_line[3]["error"]["code"] == "malformed" and "ZZ" in by_line[3]["error"]["message"]
        assert by_line[6]["error"]["code"] == "too_large"
        assert by_line[7]["status"] == "already_stored"
        assert 4 not in by_line  # a blank line is no record
        assert len(lines(client.get("/api/v1/games/export").content)) == 2


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(1, 2**64),
    reveal=st.booleans(),
    rules=random_rules(king_tricks=[0, 11, 8]),
)
def test_import_then_export_gives_back_the_same_bytes(
    client: TestClient,  # type: ignore[type-arg]
    seed: int,
    reveal: bool,
    rules: Rules,
) -> None:
    body = orjson.dumps(_finished_record(seed, reveal, rules))
    r = client.post(
        "/api/v1/records",
        content=body,
        headers=JSON_ADMIN,
    )
    assert r.status_code in (200, 201), r.text
    game_id = r.json()["game_id"]
    assert client.get(f"/api/v1/games/{game_id}/record").content == body
    audit = client.get(f"/api/v1/games/{game_id}/audit").json()
    assert audit["ok"] is True and audit["replay"]["seed_checked"] is reveal


BASE = _finished_record(99, reveal=False)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_a_record_is_stored_only_when_the_checker_accepts_it(
    client: TestClient,  # type: ignore[type-arg]
    data: st.DataObject,
) -> None:
    doc = orjson.loads(orjson.dumps(BASE))
    deals = doc["deals"]
    i = data.draw(st.integers(0, len(deals) - 1), label="deal")
    entry = deals[i]
    mutation = data.draw(
        st.sampled_from(["swap", "drop", "card", "contract", "cut", "declarer", "key"]),
        label="mutation",
    )
    plays = entry["plays"]
    j = data.draw(st.integers(0, len(plays) - 2), label="play")
    if mutation == "swap":
        plays[j], plays[j + 1] = plays[j + 1], plays[j]
    elif mutation == "drop":
        del plays[j]
    elif mutation == "card":
        plays[j] = data.draw(st.sampled_from(["AS", "2C", "QH", "1X", "", 7]), label="card")
    elif mutation == "contract":
        entry["contract"] = data.draw(st.sampled_from(["no_tricks", "trump_S", "nope"]))
    elif mutation == "cut":
        del deals[i + 1 :]
    elif mutation == "declarer":
        entry["declarer"] = data.draw(st.integers(-1, 4), label="declarer")
    else:
        entry[data.draw(st.sampled_from(["plyas", "hands"]), label="key")] = None
    before = client.get("/api/v1/games/export").content
    verdict, _ = check_record(doc)
    r = client.post("/api/v1/records", json=doc, headers=ADMIN_HEADERS)
    assert r.status_code < 500, r.text
    if verdict != 0:
        assert r.status_code in (400, 422), r.text
        assert r.json()["code"] and r.json()["detail"]
        assert client.get("/api/v1/games/export").content == before
    elif r.status_code in (200, 201):
        line = client.get(f"/api/v1/games/{r.json()['game_id']}/record").content
        assert check_record(orjson.loads(line)) == check_record(doc)  # the same game
    else:  # valid, but stopped inside a deal
        assert r.status_code == 422 and r.json()["code"] == "deal_in_progress", r.text
