"""The games index, the seats index, the games' results and who sat in them are a projection
of the feed: rebuilt from zero they equal the live tables, any split of the feed into batches
(applied twice or not) gives the same tables, and a corrupted stored game fails on its own
pages only."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

import orjson
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from domain.commands import Abandon, Substitute
from domain.rules import Rules
from eventstore import NO_STREAM, EventStore
from services.app import create_app, services_of
from services.cli import main
from services.database import rebuild_projections
from services.projections import (
    GAMES,
    GamesProjection,
    Projector,
    open_table,
    table_event,
)
from services.web.tables import results_of
from tests.service.conftest import SettingsFactory
from tests.service.helpers import ADMIN_HEADERS, bearer, create_player, wait_over
from tournament.games import GameRepository

SHORT = Rules(mode="short12")

HOUSE = ["house:random"] * 4
PASSED = '<p class="ok">✔ Audit passed'
FAILED = '<p class="bad">✘ Audit failed'
TABLES = (
    "king_games",
    "king_game_seats",
    "king_game_streams",
    "king_game_players",
    "king_tournaments",
    "king_tournament_games",
)


def snapshot(engine: sa.Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the projection's tables, in a fixed order (times as UTC text)."""

    def norm(v: Any) -> Any:
        if isinstance(v, datetime):
            return (v if v.tzinfo else v.replace(tzinfo=UTC)).astimezone(UTC).isoformat()
        return v

    out = {}
    with engine.connect() as conn:
        for table in TABLES:
            rows = conn.execute(sa.text(f"SELECT * FROM {table}")).all()
            out[table] = sorted(tuple(norm(v) for v in row) for row in rows)
    return out


def play_some(client: TestClient[Any]) -> dict[str, str]:
    """Two finished games, one live (a person to move) and one table not started."""
    ada = create_player(client, "ada")
    create_player(client, "bo")
    made = {}
    for gid, seats, extra in [
        ("done-1", HOUSE, {}),
        ("done-2", ["house:random", "house:heuristic", "house:random", "house:random"], {}),
        ("live-1", ["ada", *HOUSE[:3]], {"decision_seconds": 600}),
        ("later", ["bo", "ada", "house:random", "house:random"], {"start": False}),
    ]:
        body = {"seats": seats, "rules": {"mode": "short12"}, "id": gid, **extra}
        r = client.post("/api/v1/games", json=body, headers=bearer(ada))
        assert r.status_code == 201, r.text
        made[gid] = r.json()["game"]["status"]
    wait_over(client, "done-1")
    wait_over(client, "done-2")
    return made


def test_projections_rebuilt_from_zero_equal_the_live_ones(
    backend_settings: SettingsFactory,
) -> None:
    settings_ = backend_settings()
    with TestClient(create_app(settings_)) as client:
        made = play_some(client)
        services = services_of(client.app)
        services.games.catch_up()
        engine = services.store.engines.write
        live = snapshot(engine)
        statuses = {row[0]: row[1] for row in live["king_games"]}
        assert statuses == {
            "done-1": "over",
            "done-2": "over",
            "live-1": "live",
            "later": "created",
        }
        assert made["later"] == "created"
        assert len(live["king_game_seats"]) == 16
        ended = [r for r in live["king_game_streams"] if r[1] == "over"]
        assert {r[0] for r in ended} == {"done-1", "done-2"}
        # game, seat, player, substitute, started position, points, won: the started games
        players = live["king_game_players"]
        assert sorted({r[0] for r in players}) == ["done-1", "done-2", "live-1"]
        assert ("live-1", 0, "ada", False) in {r[:4] for r in players}
        assert all((r[5] is None) == (r[0] == "live-1") for r in players)
        # Emptied by hand, the tables are back after a rebuild, equal to what they were.
        with engine.begin() as conn:
            for table in TABLES:
                conn.execute(sa.text(f"DELETE FROM {table}"))
        position = rebuild_projections(settings_)[GAMES]
        assert position == services.store.head_position()
        assert snapshot(engine) == live
        listed = client.get("/api/v1/games", params={"player": "bo"}).json()
        assert [g["id"] for g in listed] == ["later"]


def test_the_command_rebuilds(make_settings: SettingsFactory, capsys: Any) -> None:
    settings_ = make_settings(run_driver=False)
    with TestClient(create_app(settings_)) as client:
        token = create_player(client, "ada")
        r = client.post(
            "/api/v1/games",
            json={"seats": HOUSE, "start": False, "id": "t1"},
            headers=bearer(token),
        )
        assert r.status_code == 201
        engine = services_of(client.app).store.engines.write
        before = snapshot(engine)
    assert main(["db", "rebuild-projections", "--db", settings_.url]) == 0
    assert "king-games rebuilt up to feed position" in capsys.readouterr().out
    store = EventStore.open(settings_.url)
    try:
        assert snapshot(store.engines.write) == before
        assert len(before["king_games"]) == 1
    finally:
        store.close()


# --- any split of the feed gives the same projection -----------------------------------------


def _feed_store() -> EventStore:
    from services.db.migrate import upgrade_engines

    store = EventStore.open("sqlite://")
    upgrade_engines(store.engines)
    repo = GameRepository(store)
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    cup = _cup_events()
    _tournament(store, "cup", cup[:3])  # created, two players
    for i, players in enumerate(
        [["a", "b", "c", "d"], ["b", "c", "d", "e"], ["a", "house:random", "c", "e"]]
    ):
        gid = f"g{i}"
        open_table(store, table_event(gid, players, {"mode": "short12"}, 1000, "", "admin", now))
        repo.create(gid, players, SHORT, server_seed=bytes([i]) * 32)
        if i == 0:
            _tournament(store, "cup", cup[3:6])  # two more players, round 1 seats g0 and g1
    _tournament(store, "broken", [cup[3]])  # a player before the tournament: never listed
    # a game stream without a table (a local runner's game), and a table never started
    repo.create("runner-1", ["x", "y", "z", "w"], SHORT, server_seed=b"\x09" * 32)
    open_table(store, table_event("later", ["a", "b", "c", "d"], {}, 1000, "", "admin", now))
    # seats taken over: in g1 (which then ends) by a house bot, then by "d" who holds seat 2
    # already; in runner-1 by "a"
    for gid, seat, who in [("g1", 3, "house:heuristic"), ("runner-1", 3, "a"), ("g1", 3, "d")]:
        repo.execute(gid, Abandon(seat, "left"))
        repo.execute(gid, Substitute(seat, who))
    _finish(repo, "g1")
    _tournament(store, "cup", cup[6:])  # g1 recorded
    return store


def _cup_events() -> list[Any]:
    from tournament import events as te

    players = [te.PlayerRegistered(p, p.upper(), "bot", "house:random") for p in "abcd"]
    tables = ({"table": 1, "seats": list("abcd"), "game_id": "g0"},)
    tables += ({"table": 2, "seats": list("abcd"), "game_id": "g1"},)
    return [
        te.TournamentCreated("cup", "Cup", "swiss", 3, "house", "1/2", False, "s", {}, "random"),
        *players[:2],
        *players[2:],
        te.RoundPaired(1, tables, ()),
        te.GameRecorded(1, "g1", tuple("abcd"), (1, 2, 3, 4), (0,), (), (), (), None),
    ]


def _tournament(store: EventStore, tid: str, events: list[Any]) -> None:
    from eventstore import NewEvent
    from tournament import events as te

    sid = f"tournament-{tid}"
    store.append(
        sid,
        [NewEvent(e.TYPE, te.to_payload(e)) for e in events],
        store.stream_version(sid) or NO_STREAM,
        stream_type="tournament",
    )


def _finish(repo: GameRepository, game_id: str) -> None:
    """Play the game to its end (each seat's first legal action), as the repository would,
    its seed revealed: played in memory and stored in one append, since appending each card
    on its own made a few games take seconds on PostgreSQL."""
    from domain.game import Phase
    from domain.playout import play_to_end
    from tournament.games import SEED_PREFIX, stream_id, to_new_event

    state = repo.load(game_id)
    sealed = repo.store.unseal(SEED_PREFIX + game_id)
    assert sealed is not None, f"{game_id} has no sealed seed"
    seed = bytes.fromhex(sealed)
    first_legal = [lambda view: view.legal[0]] * 4
    # A seed of its own is revealed at the end; a shared shuffle's seed stays sealed.
    _, events = play_to_end(state, seed, first_legal, reveal=state.shuffle_id == state.game_id)
    repo.store.append(stream_id(game_id), [to_new_event(e) for e in events], state.version)
    assert repo.load(game_id).phase is Phase.OVER


FEED_STORE = _feed_store()
FEED = FEED_STORE.read_all(1, limit=100_000)
REFERENCE_PROJECTOR = Projector(FEED_STORE, GamesProjection(FEED_STORE))
REFERENCE_PROJECTOR.rebuild()
REFERENCE = snapshot(FEED_STORE.engines.write)


def test_the_reference_projection_holds_what_the_feed_says() -> None:
    statuses = {row[0]: row[1] for row in REFERENCE["king_games"]}
    assert statuses == {"g0": "live", "g1": "over", "g2": "live", "later": "created"}
    streams = {row[0]: row[1] for row in REFERENCE["king_game_streams"]}
    assert streams == {"g0": "live", "g1": "over", "g2": "live", "runner-1": "live"}
    assert len(REFERENCE["king_game_seats"]) == 16
    # id, name, format, rounds, played, players, finished, open tables, opened position
    (cup,) = REFERENCE["king_tournaments"]
    assert cup[:8] == ("cup", "Cup", "swiss", 3, 1, 4, False, 1)
    assert sorted(REFERENCE["king_tournament_games"]) == [("g0", "cup"), ("g1", "cup")]
    started = {row[0]: row[7] for row in REFERENCE["king_game_streams"]}  # started_position
    order = sorted(started, key=lambda g: started[g])
    assert order == ["g0", "g1", "g2", "runner-1"]
    subs = {row[0]: row[9] for row in REFERENCE["king_game_streams"]}  # substitutes
    assert subs["g1"] == '[[3,"house:heuristic"],[3,"d"]]' and subs["runner-1"] == '[[3,"a"]]'
    assert subs["g0"] is None
    # game, seat, player, substitute, started position, points, won: one row per occupant
    players = {(r[0], r[1], r[2]): r for r in REFERENCE["king_game_players"]}
    assert len(players) == 4 * 4 + 3
    assert players["runner-1", 3, "a"][3:5] == (True, started["runner-1"])
    assert not players["runner-1", 3, "w"][3]  # the one who left keeps the game
    g1 = [r for k, r in players.items() if k[0] == "g1"]
    assert all(r[5] is not None and r[6] is not None for r in g1)  # over: points and won
    assert {r[5] for r in g1 if r[1] == 3} == {players["g1", 3, "e"][5]}  # the seat's points
    assert all(r[5] is None for k, r in players.items() if k[0] != "g1")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cuts=st.lists(st.integers(min_value=1, max_value=len(FEED) - 1), max_size=12),
    again=st.lists(st.integers(min_value=0, max_value=12), max_size=3),
)
def test_any_split_of_the_feed_gives_the_same_projection(cuts: list[int], again: list[int]) -> None:
    """Applied in batches split anywhere, each batch in its own transaction and some batches
    twice (a crash after the writes, before the position), the tables come out the same."""
    bounds = [0, *sorted(set(cuts)), len(FEED)]
    batches = [FEED[a:b] for a, b in itertools.pairwise(bounds)]
    projection = GamesProjection(FEED_STORE)
    engine = FEED_STORE.engines.write
    with engine.begin() as conn:
        projection.clear(conn)
    for i, batch in enumerate(batches):
        for _ in range(1 + again.count(i)):
            with engine.begin() as conn:
                projection.apply(conn, batch)
    try:
        assert snapshot(engine) == REFERENCE
    finally:
        REFERENCE_PROJECTOR.rebuild()


# --- a corrupted game ------------------------------------------------------------------------


def _tamper(engine: sa.Engine, game_id: str, event_type: str) -> None:
    """Change one stored payload in place (valid JSON, wrong content): replay and chain fail."""
    with engine.begin() as conn:
        row = conn.execute(
            sa.text(
                "SELECT position, payload FROM events WHERE stream_id = :s AND type = :t "
                "ORDER BY version LIMIT 1"
            ),
            {"s": f"game-{game_id}", "t": event_type},
        ).one()
        payload = orjson.loads(row.payload)
        payload["card"] = "SA" if payload["card"] != "SA" else "SK"
        conn.execute(
            sa.text("UPDATE events SET payload = :p WHERE position = :pos"),
            {"p": orjson.dumps(payload).decode(), "pos": row.position},
        )


def test_a_corrupted_game_fails_on_its_own_pages_and_nowhere_else(
    make_settings: SettingsFactory,
) -> None:
    settings_ = make_settings()
    with TestClient(create_app(settings_)) as client:
        play_some(client)
        engine = services_of(client.app).store.engines.write
    _tamper(engine := sa.create_engine(settings_.url), "done-1", "card_played")
    engine.dispose()
    with TestClient(create_app(settings_)) as client:  # a process that never saw it intact
        page = client.get("/games/done-1?lang=en")
        assert page.status_code == 200
        assert 'id="game-failed"' in page.text and "does not apply" in page.text
        assert FAILED in page.text and PASSED not in page.text
        for path in ("/games/done-1/replay.json", "/api/v1/games/done-1/record"):
            r = client.get(path)
            assert r.status_code == 409, (path, r.text)
            assert "does not load" in r.json()["detail"] and "Traceback" not in r.text
        audit = client.get("/api/v1/games/done-1/audit", headers=ADMIN_HEADERS)
        assert audit.status_code == 200 and audit.json()["ok"] is False
        play = client.get("/play/done-1?lang=en")  # its play page says nothing it cannot
        assert play.status_code == 200 and "Traceback" not in play.text
        assert 'id="result"' not in play.text
        for path in (
            "/",
            "/?lang=en",
            "/?status=over&player=ada",
            "/tv",
            "/tv.json",
            "/api/v1/games",
            "/api/v1/games?status=over",
            "/api/v1/games?player=ada",
            "/api/v1/games/done-2",
            "/games/done-2",
            "/api/v1/games/done-2/record",
            "/api/v1/leaderboard",
            "/api/v1/tournaments",
        ):
            assert client.get(path).status_code == 200, path
        listed = {g["id"]: g["status"] for g in client.get("/api/v1/games").json()}
        assert listed["done-1"] == "over" and listed["done-2"] == "over"
        assert rebuild_projections(settings_)[GAMES] > 0  # the rebuild folds past it too
        assert client.get("/").status_code == 200


def test_the_page_audits_a_changed_stream_again(make_settings: SettingsFactory) -> None:
    with TestClient(create_app(make_settings())) as client:
        play_some(client)
        assert PASSED in client.get("/games/done-2?lang=en").text
        assert PASSED in client.get("/games/done-2?lang=en").text  # from the cache
        _tamper(services_of(client.app).store.engines.write, "done-2", "card_played")
        page = client.get("/games/done-2?lang=en")
        assert page.status_code == 200
        assert FAILED in page.text and PASSED not in page.text


# --- the ratings ----------------------------------------------------------------------------


def test_the_ratings_projection_equals_the_fold_and_its_rebuild(
    make_settings: SettingsFactory,
) -> None:
    """The ratings table, folded as the feed goes, gives the leaderboard that folding every
    tournament's recorded games gives (tournaments played one after another, so feed order is
    tournament order); rebuilt from zero it is the same, row for row."""
    from services.container import build_services
    from services.database import open_store
    from tournament.ratings import fold, leaderboard, rated_games
    from tournament.runner import TournamentRunner, parse_players

    settings_ = make_settings()
    with open_store(settings_) as store:
        desk = build_services(settings_, store).tournaments
        assert desk is not None
        local = TournamentRunner(store)
        local.create("one", parse_players("random*2,heuristic*2"), rounds=2, rules=SHORT, seed="a")
        local.run("one")
        assert len(desk.leaderboard(100, 0)) == 2
        local.create("two", parse_players("random*3,heuristic"), rounds=1, rules=SHORT, seed="b")
        local.run("two")
        games, who = [], {}
        for tid in ("one", "two"):
            rated, named = rated_games(local.load(tid))
            games.extend(rated)
            who.update(named)
        expected = leaderboard(fold(games), 100, 0, who)
        assert desk.leaderboard(100, 0) == expected
        with store.engines.read.connect() as conn:
            live = sorted(conn.execute(sa.text("SELECT * FROM king_ratings")).all())
        assert rebuild_projections(settings_)["king-ratings"] == store.head_position()
        with store.engines.read.connect() as conn:
            assert sorted(conn.execute(sa.text("SELECT * FROM king_ratings")).all()) == live
        assert desk.leaderboard(100, 0) == expected


def test_a_games_ladder_is_stored_as_numbers_and_old_text_rows_still_read(
    make_settings: SettingsFactory,
) -> None:
    with TestClient(create_app(make_settings())) as client:
        ada = create_player(client, "ada")
        body = {"seats": HOUSE, "rules": {"mode": "short12"}, "id": "done-1"}
        assert client.post("/api/v1/games", json=body, headers=bearer(ada)).status_code == 201
        final = wait_over(client, "done-1")
        services = services_of(client.app)
        services.games.catch_up()
        engine = services.store.engines.write
        query = sa.text("SELECT ladder FROM king_game_streams WHERE game_id = 'done-1'")
        with engine.connect() as conn:
            stored = orjson.loads(conn.execute(query).scalar_one())
        assert stored == final["view"]["ladder_points"]  # the one form: JSON numbers
        assert all(type(p) in (int, float) for p in stored)
        exact = results_of(engine, ["done-1"])["done-1"].ladder
        # A row written before numbers were the form holds the fractions' text: same result.
        old = orjson.dumps([str(p) for p in exact]).decode()
        update = sa.text("UPDATE king_game_streams SET ladder = :old WHERE game_id = 'done-1'")
        with engine.begin() as conn:
            conn.execute(update, {"old": old})
        assert results_of(engine, ["done-1"])["done-1"].ladder == exact
