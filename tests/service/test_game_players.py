"""Everyone who sat in each game stream (`king_game_players`): a player's games, a tournament's
games and a bot's results are found in SQL, however many newer games the store holds (the
listings read the newest `GAMES_SCANNED` of the matching games, not of all); games
`king tournament run` writes straight into the store and substitutes count; migration king0011
has the first process fold the whole feed into the new table; and, as a property, the filtered
listing equals filtering the whole listing in Python."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

import services.web.accounts as bot_pages
import services.web.lists as lists
from domain.commands import Abandon, Substitute
from domain.rules import Rules
from eventstore import NO_STREAM, EventStore, NewEvent
from eventstore import migrate as store_migrate
from eventstore.backends import create_engines
from services.app import create_app, services_of
from services.controllers.accounts import accounts_of
from services.database import store_settings, upgrade_all
from services.db.migrate import upgrade_engines
from services.projections import GAMES, GamesProjection, Projector, open_table, table_event
from services.web.accounts import version_results
from services.web.lists import GameLine, list_games, listing_of
from tests.service.conftest import SettingsFactory
from tests.service.test_game_seats import downgrade_app
from tests.service.test_projections import _finish
from tournament import events as te
from tournament.games import GameRepository

SHORT = Rules(mode="short12")
PASSWORD = "correct horse battery"


def _seed(n: int) -> bytes:
    return n.to_bytes(32, "big")


def _substitute(repo: GameRepository, game_id: str, seat: int, player: str) -> None:
    assert repo.execute(game_id, Abandon(seat, "left")).violation is None
    assert repo.execute(game_id, Substitute(seat, player)).violation is None


def _paired(store: EventStore, tid: str, games: list[str]) -> None:
    """A tournament whose first round seats `games` (its stream only, as a runner writes it)."""
    tables = tuple(
        {"table": i + 1, "seats": list("abcd"), "game_id": g} for i, g in enumerate(games)
    )
    events = [
        te.TournamentCreated(tid, tid.upper(), "swiss", 3, "house", "1/2", False, "s", {}, "x"),
        *[te.PlayerRegistered(p, p.upper(), "bot", "house:random") for p in "abcd"],
        te.RoundPaired(1, tables, ()),
    ]
    store.append(
        f"tournament-{tid}",
        [NewEvent(e.TYPE, te.to_payload(e)) for e in events],
        NO_STREAM,
        stream_type="tournament",
    )


def _rows(html: str) -> list[str]:
    """The game ids of the home page's games table, in order."""
    table = html.split('id="games"', 1)[1].split("</table>", 1)[0] if 'id="games"' in html else ""
    return re.findall(r'<tr class="status-\w+" data-game="([^"]+)"', table)


@pytest.fixture
def app(backend_settings: SettingsFactory) -> Iterator[TestClient[Any]]:
    with TestClient(create_app(backend_settings(run_driver=False))) as client:
        yield client


def test_a_players_old_games_are_listed_beyond_the_newest_streams(
    app: TestClient[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Games `king tournament run` wrote straight into the store, older than the newest
    `GAMES_SCANNED` streams: the player filter (starters and substitutes), the tournament
    filter, the counts and the pages still find them."""
    monkeypatch.setattr(lists, "GAMES_SCANNED", 3)
    services = services_of(app.app)
    repo = services.repo
    for i, gid in enumerate(["old-1", "old-2", "old-3"]):
        repo.create(gid, ["pia", "x", "y", "z"], SHORT, server_seed=_seed(i))
    _finish(repo, "old-1")
    repo.create("old-sub", ["w", "x", "y", "z"], SHORT, server_seed=_seed(9))
    _substitute(repo, "old-sub", 2, "pia")  # pia takes over a seat: the game is hers too
    _paired(services.store, "cup", ["old-2", "old-3"])
    for i in range(4):  # newer games without her fill the newest three
        repo.create(f"new-{i}", ["w", "x", "y", "z"], SHORT, server_seed=_seed(20 + i))
    services.games.catch_up()

    unfiltered = listing_of(services)
    assert {g.id for g in unfiltered.games} == {"new-1", "new-2", "new-3"}
    mine = listing_of(services, player="pia")
    assert [g.id for g in mine.games] == ["old-sub", "old-3", "old-2"]  # live first, the newest 3
    assert mine.total == 3 and mine.counts == {"live": 3, "over": 0, "created": 0}
    assert mine.games[0].seated[2] == ["y", "pia"] and mine.games[0].seat_of("pia") == 2
    assert mine.players == unfiltered.players  # the filter's choices do not narrow
    assert mine.recent_over == unfiltered.recent_over == []
    monkeypatch.setattr(lists, "GAMES_SCANNED", 10)
    assert listing_of(services, player="pia", status="over").games[0].id == "old-1"
    monkeypatch.setattr(lists, "GAMES_SCANNED", 3)

    html = app.get("/?player=pia&lang=en").text
    assert _rows(html) == ["old-sub", "old-3", "old-2"]
    assert 'y → <span title="took over the seat">pia</span>' in html
    assert _rows(app.get("/?tournament=cup").text) == ["old-3", "old-2"]
    assert _rows(app.get("/?tournament=cup&player=pia").text) == ["old-3", "old-2"]
    assert _rows(app.get("/?tournament=cup&player=w").text) == []
    assert _rows(app.get("/?player=w").text) == ["new-3", "new-2", "new-1"]
    import services.web.pages as pages

    monkeypatch.setattr(pages, "HOME_GAMES", 2)
    assert _rows(app.get("/?player=pia&page=2").text) == ["old-2"]
    assert "Showing 1–2 / 3" in app.get("/?player=pia&lang=en").text


def test_a_bots_page_counts_every_finished_game_of_each_version(
    app: TestClient[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The versions' results count every finished game of the bot, however many newer games
    the store holds (an aggregate in SQL); the page lists its newest `GAMES_SHOWN`."""
    monkeypatch.setattr(lists, "GAMES_SCANNED", 2)
    monkeypatch.setattr(bot_pages, "GAMES_SHOWN", 2)
    services = services_of(app.app)
    accounts = accounts_of(services)
    accounts.sign_up("oya", PASSWORD)
    accounts.create_bot("oya", "oya-bot", None, None, "0.1")
    repo = services.repo
    made: list[str] = []
    for i in range(5):
        if i == 3:
            accounts.new_version("oya", "oya-bot", "0.2", None, True)
        gid = f"bot-{i}"
        seats = ["x", "y", "z", "w"]
        seats[i % 4] = "oya-bot"
        repo.create(gid, seats, SHORT, server_seed=_seed(40 + i))
        if i != 4:  # the newest stays live
            _finish(repo, gid)
        made.append(gid)
    for i in range(3):  # newer games of others
        repo.create(f"other-{i}", ["x", "y", "z", "w"], SHORT, server_seed=_seed(50 + i))
    services.games.catch_up()

    def seat_result(gid: str) -> tuple[int, bool]:
        result = repo.load(gid).result
        assert result is not None
        seat = int(gid[-1]) % 4
        return result.totals[seat], seat in result.winners

    first = [seat_result(g) for g in made[:3]]
    second = [seat_result(made[3])]
    page = app.get("/bots/oya-bot?lang=en").text
    for number, results in [(2, second), (1, first)]:
        row = page.split(f'data-version="{number}">', 1)[1].split("</tr>", 1)[0]
        cells = re.findall(r'<td class="num">([^<]*)</td>', row)
        mean = sum(p for p, _ in results) / len(results)
        assert cells == [str(len(results)), str(sum(w for _, w in results)), f"{mean:.1f}"]
    listed = page.split('id="bot-games"', 1)[1].split("</ul>", 1)[0]
    assert re.findall(r'href="/games/([^"]+)"', listed) == ["bot-4", "bot-3"]  # live first

    # The SQL count equals counting every listed game in Python (with no scan limit).
    monkeypatch.setattr(lists, "GAMES_SCANNED", 10_000)
    everything = list_games(services.games.read_engine, player="oya-bot", limit=10_000)
    versions = accounts.versions("oya-bot")
    expected = version_results(versions, everything.games, "oya-bot")
    got = bot_pages.results_of_versions(
        versions,
        lists.results_by_period(
            services.games.read_engine, "oya-bot", [v.created_at for v in versions]
        ),
    )
    assert [(r.games, r.wins, r.points) for r in got] == [
        (r.games, r.wins, r.points) for r in expected
    ]
    assert [r.games for r in got] == [1, 3]


def test_the_upgrade_folds_the_whole_feed_into_the_players_table(
    backend_settings: SettingsFactory,
) -> None:
    """Back at king0010 (the table dropped by its downgrade) and upgraded again, the first
    process folds the feed from position 0, so the games written before are in the table."""
    settings_ = backend_settings(run_driver=False)
    upgrade_all(settings_)
    with TestClient(create_app(settings_)) as client:
        services = services_of(client.app)
        services.repo.create("before", ["ada", "bo", "cem", "dee"], SHORT, server_seed=_seed(1))
        services.games.catch_up()
    engines = create_engines(settings_.url, store_settings(settings_))
    query = sa.text("SELECT player FROM king_game_players WHERE game_id = 'before'")
    try:
        downgrade_app(engines, "king0010")
        with engines.read.connect() as conn:
            assert "king_game_players" not in sa.inspect(conn).get_table_names()
        store_migrate.upgrade_engines(engines)
        upgrade_engines(engines)
        with engines.read.connect() as conn:
            assert conn.execute(query).all() == []
            position = sa.text("SELECT count(*) FROM projections WHERE name = :n")
            assert conn.execute(position, {"n": GAMES}).scalar() == 0
        with TestClient(create_app(settings_)) as client:
            services_of(client.app).games.catch_up()
            assert [g.id for g in listing_of(services_of(client.app), player="cem").games] == [
                "before"
            ]
        with engines.read.connect() as conn:
            assert sorted(conn.execute(query).scalars()) == ["ada", "bo", "cem", "dee"]
    finally:
        engines.dispose()


# --- the SQL-filtered listing equals filtering the whole listing in Python -----------------

PEOPLE = ["ada", "bo", "cem", "dee", "eve"]


def _random_store() -> EventStore:
    """Fourteen games of five people and house bots, in random seats: the service's tables
    (some never started) and a runner's games, some finished, some with a seat taken over, a
    tournament seating a few."""
    rng = random.Random(11)
    store = EventStore.open("sqlite://")
    upgrade_engines(store.engines)
    repo = GameRepository(store)
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    made = []
    for i in range(14):
        seats = [*rng.sample(PEOPLE, 2), "house:random", "house:random"]
        rng.shuffle(seats)
        gid = f"g{i:02}"
        if i % 3 == 0:  # a table of the service's (the others: a runner's)
            open_table(store, table_event(gid, seats, {"mode": "short12"}, 1000, "", "admin", now))
            if i % 2 == 0:
                continue  # not started
        repo.create(gid, seats, SHORT, server_seed=_seed(100 + i))
        if i % 4 == 1:
            _substitute(repo, gid, rng.randrange(4), rng.choice(PEOPLE))
        if i % 5 < 2:
            _finish(repo, gid)
        made.append(gid)
    _paired(store, "cup", made[::3])
    return store


STORE = _random_store()
PROJECTOR = Projector(STORE, GamesProjection(STORE))
PROJECTOR.rebuild()
ENGINE = STORE.engines.read
with ENGINE.connect() as _conn:
    STARTED = dict(
        _conn.execute(sa.text("SELECT game_id, started_position FROM king_game_streams")).all()
    )


def _everything(**kw: Any) -> lists.Listing:
    saved = lists.GAMES_SCANNED
    lists.GAMES_SCANNED = 10_000
    try:
        return list_games(ENGINE, limit=10_000, recent=10_000, **kw)
    finally:
        lists.GAMES_SCANNED = saved


def _expected(
    scan: int, player: str | None, tournament: str | None, status: str | None
) -> tuple[list[GameLine], dict[str, int]]:
    """The whole listing filtered in Python, its game streams cut to the newest `scan`."""
    lines = [
        g
        for g in _everything().games
        if (player is None or g.sat(player)) and (tournament is None or g.tournament == tournament)
    ]
    streams = sorted((g.id for g in lines if g.id in STARTED), key=lambda i: -STARTED[i])
    kept = set(streams[:scan])
    lines = [g for g in lines if g.id not in STARTED or g.id in kept]
    counts = {s: sum(g.status == s for g in lines) for s in lists.STATUSES}
    return [g for g in lines if status is None or g.status == status], counts


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    scan=st.integers(1, 16),
    player=st.sampled_from([None, *PEOPLE, "house:random", "nobody"]),
    tournament=st.sampled_from([None, "cup", "none"]),
    status=st.sampled_from([None, *lists.STATUSES]),
    limit=st.integers(1, 16),
    offset=st.integers(0, 16),
    recent=st.integers(0, 6),
)
def test_the_filtered_listing_equals_filtering_the_whole_listing(
    scan: int,
    player: str | None,
    tournament: str | None,
    status: str | None,
    limit: int,
    offset: int,
    recent: int,
) -> None:
    saved = lists.GAMES_SCANNED
    lists.GAMES_SCANNED = scan
    try:
        got = list_games(
            ENGINE,
            player=player,
            tournament=tournament,
            status=status,
            limit=limit,
            offset=offset,
            recent=recent,
        )
        unfiltered = list_games(ENGINE, limit=limit, recent=recent)
    finally:
        lists.GAMES_SCANNED = saved
    lines, counts = _expected(scan, player, tournament, status)
    assert got.games == lines[offset : offset + limit]
    assert got.total == len(lines) and got.counts == counts
    # the filter's choices and the leaderboard's games are the unfiltered listing's
    assert got.players == unfiltered.players
    assert got.recent_over == unfiltered.recent_over
    if player is not None and player in PEOPLE:
        assert player in _everything().players
