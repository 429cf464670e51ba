"""The tournament runner: whole tournaments on the store, idempotent steps, restarts, duplicates."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from domain.events import DealStarted
from domain.rules import Rules
from eventstore import EventStore
from tournament.games import to_domain_event
from tournament.planning import current_standings
from tournament.runner import PlayerSpec, TournamentRunner, parse_players

SHORT = Rules(mode="short12")


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = EventStore.open(f"sqlite:///{tmp_path / 't.db'}")
    yield s
    s.close()


def test_parse_players() -> None:
    specs = parse_players("random*2, ada=heuristic, bot=http://127.0.0.1:9/x")
    assert [(p.player_id, p.kind, p.spec) for p in specs] == [
        ("random-1", "builtin", "random"),
        ("random-2", "builtin", "random"),
        ("ada", "builtin", "heuristic"),
        ("bot", "bot", "http://127.0.0.1:9/x"),
    ]
    with pytest.raises(ValueError):
        parse_players("a=random,a=random")


def test_a_swiss_with_byes_runs_to_the_end_and_every_game_audits(store: EventStore) -> None:
    runner = TournamentRunner(store)
    players = parse_players("random*3,heuristic*3")  # 6 players: one table and two byes a round
    runner.create("sw", players, format="swiss", rounds=3, rules=SHORT, seed="s")
    state = runner.run("sw")
    assert state.finished is not None and len(state.rounds) == 3 and state.closed == 3
    for rnd in state.rounds:
        seated = [p for t in rnd.tables for p in t.players]
        assert sorted(seated + list(rnd.byes)) == sorted(p.player_id for p in players)
    byes = Counter(p for rnd in state.rounds for p in rnd.byes)
    assert max(byes.values()) == 1 and len(byes) == 6  # no second bye before everyone had one
    assert len(state.results) == 3
    for result in state.results:
        assert runner.games.audit(result.game_id).ok
    # The standings equal what the games' own streams say.
    ladder = {p.player_id: Fraction(0) for p in players}
    for result in state.results:
        game = runner.games.load(result.game_id)
        assert game.result is not None
        for row in game.result.results:
            ladder[row.player] += row.points
    assert {r.player: r.ladder for r in current_standings(state).rows} == ladder


def test_two_runners_racing_take_each_step_once(store: EventStore) -> None:
    runner = TournamentRunner(store)
    runner.create(
        "race", parse_players("random*8"), format="swiss", rounds=2, rules=SHORT, seed="r"
    )
    errors: list[BaseException] = []

    def go() -> None:
        try:
            TournamentRunner(store).run("race")
        except BaseException as exc:  # pragma: no cover - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=go) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    state = runner.load("race")
    assert [r.number for r in state.rounds] == [1, 2]
    assert len(state.results) == 4 and len({r.game_id for r in state.results}) == 4
    types = [r.type for r in store.read_stream("tournament-race")]
    assert types.count("round_paired") == 2 and types.count("round_closed") == 2
    assert types.count("tournament_finished") == 1
    for result in state.results:
        events = runner.games.events(result.game_id)
        assert [e.type for e in events].count("game_created") == 1
        assert runner.games.audit(result.game_id).ok


KEPT_IDS = itertools.count()


@settings(max_examples=8, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=hs.lists(hs.integers(0, 1), min_size=1, max_size=12))
def test_a_kept_state_brought_up_to_date_equals_a_fresh_fold(
    store: EventStore, turns: list[int]
) -> None:
    """`load` keeps each tournament's state and reads only the events appended since: after
    any interleaving of two runners' steps (each one appending what the other has not read),
    both runners' loads equal the fold of the whole stream by a runner that kept nothing."""
    tid = f"kept-{next(KEPT_IDS)}"  # (every example on the one store: a new tournament each)
    runners = [TournamentRunner(store), TournamentRunner(store)]
    runners[0].create(tid, parse_players("random*4"), format="swiss", rounds=2, rules=SHORT)
    for turn in turns:
        runners[turn].step(tid)
        fresh = TournamentRunner(store).load(tid)
        assert fresh.version == store.stream_version(f"tournament-{tid}")
        for runner in runners:
            assert runner.load(tid) == fresh


def test_duplicate_rounds_deal_the_same_cards_at_every_table(store: EventStore) -> None:
    runner = TournamentRunner(store)
    runner.create("dup", parse_players("random*8"), rounds=1, rules=SHORT, duplicate=True, seed="d")
    # The shared seed stays sealed until the last table of the round has ended.
    while runner.step("dup").kind != "recorded":
        pass
    first = runner.load("dup").results[0].game_id
    assert runner.games.load(first).phase.value == "over"
    assert runner.games.load(first).seed is None
    state = runner.run("dup")
    assert all(runner.games.load(r.game_id).seed is not None for r in state.results)
    first_hands = []
    for result in state.results:
        deal = next(
            to_domain_event(r)
            for r in runner.games.events(result.game_id)
            if r.type == "deal_started"
        )
        assert isinstance(deal, DealStarted)
        first_hands.append(deal.hands)
        assert runner.games.audit(result.game_id).ok
    assert len(first_hands) == 2 and first_hands[0] == first_hands[1]


def test_the_same_seed_and_secret_play_the_same_tournament_again(tmp_path: Path) -> None:
    secret = "5e" * 32
    finals = []
    for name in ("one", "two"):
        with EventStore.open(f"sqlite:///{tmp_path / name}.db") as s:
            runner = TournamentRunner(s)
            runner.create(
                "again",
                parse_players("random*3,heuristic*5"),
                rounds=2,
                rules=SHORT,
                seed="x",
                secret=secret,
            )
            state = runner.run("again")
            finals.append((state.rounds, state.results, current_standings(state)))
    assert finals[0] == finals[1]
    # Without a secret of its own each tournament deals other cards.
    with EventStore.open(f"sqlite:///{tmp_path / 'three'}.db") as s:
        runner = TournamentRunner(s)
        runner.create(
            "again", parse_players("random*3,heuristic*5"), rounds=2, rules=SHORT, seed="x"
        )
        assert runner.run("again").results != finals[0][1]


@pytest.mark.parametrize("secret", ["abc", "AB" * 32, "g" * 64, "ab" * 33])
def test_a_malformed_secret_is_refused_and_nothing_is_created(
    store: EventStore, secret: str
) -> None:
    runner = TournamentRunner(store)
    with pytest.raises(ValueError, match="64 hexadecimal"):
        runner.create("bad", parse_players("random*4"), secret=secret)
    assert store.stream_ids() == [] and store.unseal("tournament-secret:bad") is None


@pytest.mark.parametrize("bye_points", ["1/0", "x", "", "1/2/3"])
def test_a_bye_score_that_is_not_a_number_is_refused(store: EventStore, bye_points: str) -> None:
    with pytest.raises(ValueError, match="not a number"):
        TournamentRunner(store).create("bye", parse_players("random*5"), bye_points=bye_points)
    assert store.stream_ids() == []


def test_a_create_that_crashed_after_sealing_keeps_its_secret(store: EventStore) -> None:
    store.seal("tournament-secret:half", "11" * 32)  # the crash: sealed, no stream
    runner = TournamentRunner(store)
    runner.create("half", parse_players("random*4"), rounds=1)
    assert store.unseal("tournament-secret:half") == "11" * 32
    store.seal("tournament-secret:other", "33" * 32)
    with pytest.raises(ValueError, match="another secret"):
        runner.create("other", parse_players("random*4"), rounds=1, secret="44" * 32)
    assert "tournament-other" not in store.stream_ids()


def test_late_join_and_withdrawal_change_the_next_round(store: EventStore) -> None:
    runner = TournamentRunner(store)
    runner.create("late", parse_players("random*8"), rounds=2, rules=SHORT, seed="l")
    while runner.load("late").closed < 1:
        runner.step("late")
    runner.withdraw("late", "random-1", "left")
    runner.register("late", PlayerSpec("newcomer", "builtin", "heuristic"))
    state = runner.run("late")
    second = state.rounds[1]
    seated = set(second.seated) | set(second.byes)
    assert "random-1" not in seated and "newcomer" in seated


def test_a_failing_policy_gets_strikes_then_a_substitute(store: EventStore) -> None:
    from tournament.runner import builtin_policies

    def policies(reg, game_id, seat, house):  # type: ignore[no-untyped-def]
        if reg is not None and reg.player_id == "random-1":

            def broken(view):  # type: ignore[no-untyped-def]
                raise RuntimeError("bot crashed")

            return broken
        return builtin_policies(reg, game_id, seat, house)

    runner = TournamentRunner(store, policies=policies)
    runner.create("bad", parse_players("random*4"), rounds=1, rules=SHORT, seed="b")
    state = runner.run("bad")
    game = runner.games.load(state.results[0].game_id)
    seat = state.results[0].seats.index("random-1")
    assert game.strikes[seat] == 3
    assert ("random-1", seat) in game.abandoned
    assert game.occupants[seat][-1] == "house:heuristic"
    points = dict(state.results[0].points)
    assert Fraction(points["random-1"]) == -30  # R-ABANDON
    assert runner.games.audit(state.results[0].game_id).ok


@pytest.mark.slow
def test_a_16_player_round_robin_meets_every_pair_exactly_once(store: EventStore) -> None:
    runner = TournamentRunner(store)
    runner.create("rr", parse_players("random*16"), format="round_robin", rules=SHORT, seed="rr")
    state = runner.run("rr")
    assert len(state.rounds) == 5
    met = Counter(
        frozenset(pair)
        for rnd in state.rounds
        for t in rnd.tables
        for pair in itertools.combinations(t.players, 2)
    )
    assert len(met) == 16 * 15 // 2 and set(met.values()) == {1}


def _king(*args: str) -> list[str]:
    return [sys.executable, "-m", "services.cli", *args]


def _game_under_way(db: Path, tid: str) -> int:
    """The round (paired, not closed) with a game begun and not ended, read straight from the
    SQLite file as the runner writes it (WAL: a reader does not hold it up); 0 if none."""
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    except sqlite3.OperationalError:
        return 0
    try:
        rows = con.execute(
            "SELECT type, payload FROM events WHERE stream_id = ? ORDER BY version",
            (f"tournament-{tid}",),
        ).fetchall()
        paired = [json.loads(payload) for kind, payload in rows if kind == "round_paired"]
        closed = sum(kind == "round_closed" for kind, _ in rows)
        if not paired or len(paired) != closed + 1:
            return 0
        for table in paired[-1]["tables"]:
            stream = f"game-{table['game_id']}"
            types = {
                t for (t,) in con.execute("SELECT type FROM events WHERE stream_id = ?", (stream,))
            }
            if "card_played" in types and "game_ended" not in types:
                return int(paired[-1]["round"])
        return 0
    except sqlite3.OperationalError:  # the tables are not made yet
        return 0
    finally:
        con.close()


@pytest.mark.slow
def test_kill_9_mid_tournament_then_carry_on(tmp_path: Path) -> None:
    """SIGKILL the runner while a game of a round is in play (round 1, then round 2 after a
    restart), start it again: nothing lost, nothing played twice."""
    db = tmp_path / "k.db"
    url = f"sqlite:///{db}"
    args = [
        "tournament",
        "run",
        "--id",
        "k9",
        "--db",
        url,
        "--players",
        "random*8",
        "--rounds",
        "3",
        "--mode",
        "short12",
        "--seed",
        "k",
        "--json",
    ]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    for target in (1, 2):
        proc = subprocess.Popen(
            _king(*args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        try:
            in_play = 0
            while in_play < target:  # no clock: wait for the database to show it
                assert proc.poll() is None, "the run ended before a game of the round began"
                time.sleep(0.02)
                in_play = _game_under_way(db, "k9")
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        assert proc.returncode == -signal.SIGKILL  # killed, not ended on its own
        assert in_play == target
        with EventStore.open(url) as store:
            killed = TournamentRunner(store).load("k9")
        # Still in that round: its game was under way a poll before the kill, and closing the
        # round needs that game to end and be recorded first.
        assert killed.finished is None and killed.current_round == target
    done = subprocess.run(_king(*args), capture_output=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    out = json.loads(done.stdout)
    assert out["audit"]["failed"] == [] and out["audit"]["games"] == 6
    store = EventStore.open(url)
    try:
        runner = TournamentRunner(store)
        state = runner.load("k9")
        types = [r.type for r in store.read_stream("tournament-k9")]
        assert types.count("round_paired") == 3 and types.count("game_recorded") == 6
        assert len({r.game_id for r in state.results}) == 6
        for result in state.results:
            events = [r.type for r in runner.games.events(result.game_id)]
            assert events.count("game_created") == 1 and events.count("game_ended") == 1
        assert store.verify_all().ok
    finally:
        store.close()


def test_the_cli_runs_a_small_tournament(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    import contextlib
    import io

    from services.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        status = main(
            [
                "tournament",
                "run",
                "--id",
                "c",
                "--db",
                url,
                "--players",
                "random*4",
                "--rounds",
                "1",
                "--mode",
                "short12",
                "--json",
            ]
        )
    assert status == 0
    out = json.loads(buf.getvalue())
    assert out["audit"] == {"games": 1, "failed": []}
    assert [r["player"] for r in out["standings"]] and len(out["standings"]) == 4
