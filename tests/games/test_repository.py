"""Game streams in the store: a whole game through the repository, audited; tampering named."""

from __future__ import annotations

import random
import tempfile
import threading

import orjson
import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.commands import Command, RecordStrike
from domain.game import CommandError, GameState, Phase, apply, decide
from domain.record import check_record, to_record
from domain.view import seat_view
from domain.violations import Violation
from eventstore import EventStore, StoreUnavailable
from tournament.games import (
    GameExists,
    GameNotFound,
    GameRepository,
    Outcome,
    Request,
    stream_id,
)

PLAYERS = ("ada", "bora", "cem", "deniz")


@pytest.fixture
def repo(tmp_path) -> GameRepository:  # type: ignore[no-untyped-def]
    store = EventStore.open(f"sqlite:///{tmp_path / 'games.db'}")
    yield GameRepository(store)
    store.close()


def play_to_end(repo: GameRepository, game_id: str, rng: random.Random) -> None:
    state = repo.load(game_id)
    while state.phase is not Phase.OVER:
        seat = state.to_move
        assert seat is not None
        action = rng.choice(seat_view(state, seat).legal)
        outcome = repo.execute(game_id, action.command(seat))
        assert outcome.ok, outcome.violation
        state = outcome.state


def test_a_whole_game_is_stored_revealed_and_audits_clean(repo: GameRepository) -> None:
    state = repo.create("g1", PLAYERS)
    assert state.phase is Phase.DECLARING  # the first hands are dealt at creation
    assert repo.store.unseal("game-seed:g1") is not None
    types = [r.type for r in repo.events("g1")]
    assert types == ["game_created", "deal_started"]
    assert all(
        "seed" not in str(r.payload).lower() or r.type == "game_created" for r in repo.events("g1")
    )
    play_to_end(repo, "g1", random.Random(1))
    final = repo.load("g1")
    assert final.phase is Phase.OVER and final.seed is not None
    assert repo.events("g1")[-1].type == "seed_revealed"
    audit = repo.audit("g1")
    assert audit.ok, audit.to_dict()
    assert audit.replay.seed_checked and audit.replay.deals_checked >= 12
    status, out = check_record(to_record(final))
    assert status == 0 and out["totals"] == list(final.totals)


def test_a_fresh_repository_replays_what_another_appended(repo: GameRepository) -> None:
    repo.create("g2", PLAYERS)
    other = GameRepository(repo.store)
    state = other.load("g2")
    seat = state.to_move
    assert seat is not None
    other.execute("g2", seat_view(state, seat).legal[0].command(seat))
    assert repo.load("g2").version == other.load("g2").version


def test_refused_actions_append_nothing(repo: GameRepository) -> None:
    state = repo.create("g3", PLAYERS)
    wrong = (state.declarer + 1) % 4
    outcome = repo.execute("g3", seat_view(state, state.declarer).legal[0].command(wrong))
    assert not outcome.ok and outcome.violation is not None
    assert outcome.violation.code == "not_your_turn"
    assert repo.store.stream_version(stream_id("g3")) == state.version


def test_a_sequence_of_commands_is_one_append_or_none(
    repo: GameRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A strike and its default move go to the store in one append; when any command of a
    sequence is refused, none of it is written; a stale sequence writes nothing either."""
    state = repo.create("s1", PLAYERS)
    seat = state.to_move
    assert seat is not None
    appends: list[list[str]] = []
    append = repo.store.append
    monkeypatch.setattr(
        repo.store,
        "append",
        lambda sid, events, *a, **kw: (
            appends.append([e.type for e in events]) or append(sid, events, *a, **kw)
        ),
    )
    move = seat_view(state, seat).legal[0].command(seat)
    wrong = seat_view(state, seat).legal[0].command((seat + 1) % 4)

    refused = repo.execute("s1", [RecordStrike(seat, "timeout"), wrong])
    assert refused.violation is not None and refused.violation.code == "not_your_turn"
    assert appends == [] and repo.load("s1") == state

    stale = repo.execute("s1", [RecordStrike(seat, "timeout"), move], at_version=state.version - 1)
    assert stale.stale and appends == [] and repo.load("s1") == state

    done = repo.execute("s1", [RecordStrike(seat, "timeout"), move], at_version=state.version)
    assert done.ok and len(appends) == 1
    assert appends[0][:2] == ["strike_recorded", done.events[1].TYPE]
    assert done.state.strikes[seat] == 1 and done.state.version == state.version + 2
    assert repo.load("s1") == done.state


def _plan(state: GameState, rng: random.Random, most: int) -> tuple[list[Command], GameState]:
    """Up to `most` random legal moves from `state`, decided locally, stopping where the
    game's own next step (a deal, the seed) must come first."""
    commands: list[Command] = []
    while len(commands) < most and state.to_move is not None:
        seat = state.to_move
        command = rng.choice(seat_view(state, seat).legal).command(seat)
        events = decide(state, command)
        assert not isinstance(events, Violation)
        for e in events:
            state = apply(state, e)
        commands.append(command)
    return commands, state


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), sizes=st.lists(st.integers(1, 4), min_size=8, max_size=30))
def test_commands_in_sequences_store_what_they_store_one_by_one(
    seed: int, sizes: list[int]
) -> None:
    """Whatever the grouping, a game played in sequences of commands stores the same events
    and reaches the same state as the same commands sent one at a time."""
    rng = random.Random(seed)
    server_seed = rng.randbytes(32)
    with tempfile.TemporaryDirectory() as tmp:
        stores = [EventStore.open(f"sqlite:///{tmp}/{name}.db") for name in ("seq", "one")]
        try:
            grouped, single = (GameRepository(s) for s in stores)
            state = grouped.create("p", PLAYERS, server_seed=server_seed)
            assert single.create("p", PLAYERS, server_seed=server_seed) == state
            for size in sizes:
                commands, _ = _plan(state, rng, size)
                if not commands:
                    break
                outcome = grouped.execute("p", commands, at_version=state.version)
                assert outcome.ok, outcome.violation
                for command in commands:
                    assert single.execute("p", command).ok
                state = outcome.state
                assert single.load("p") == state
            ours, theirs = (
                [(r.version, r.type, r.payload) for r in repo.events("p")]
                for repo in (grouped, single)
            )
            assert ours == theirs
        finally:
            for s in stores:
                s.close()


def test_a_known_version_decides_on_the_cache_and_a_stale_cache_is_never_trusted(
    repo: GameRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the version the caller knows, a command decides on the cached state without
    reading the stream; when another writer moved the game on, the append refuses the stale
    decision and the command is decided again on the stored state — and a command refused on
    the stale cache but legal now is taken, not refused."""
    state = repo.create("g9", PLAYERS)
    reads: list[str] = []
    read_stream = repo.store.read_stream
    monkeypatch.setattr(
        repo.store, "read_stream", lambda sid, **kw: reads.append(sid) or read_stream(sid, **kw)
    )
    seat = state.to_move
    assert seat is not None
    done = repo.execute("g9", seat_view(state, seat).legal[0].command(seat), state.version)
    assert done.ok and reads == []  # decided on the cache: no read

    # Another writer (another process) plays the next decision; this repo's cache is behind.
    other = GameRepository(repo.store)
    now = other.load("g9")
    mover = now.to_move
    assert mover is not None
    assert other.execute("g9", seat_view(now, mover).legal[0].command(mover)).ok
    moved = other.load("g9")
    nxt = moved.to_move
    assert nxt is not None and nxt != mover
    # On the stale cache it is `mover`'s turn, so `nxt` would be refused there: it is taken.
    action = seat_view(moved, nxt).legal[0].command(nxt)
    outcome = repo.execute("g9", action, done.state.version)
    assert outcome.ok, outcome.violation
    assert outcome.state == other.load("g9") and outcome.state.version > moved.version
    assert reads  # the stored state was read before deciding again


def test_create_twice_and_unknown_games(repo: GameRepository) -> None:
    repo.create("g4", PLAYERS)
    with pytest.raises(GameExists):
        repo.create("g4", PLAYERS, server_seed=bytes(32))
    with pytest.raises(GameNotFound):
        repo.load("nope")
    assert repo.game_ids() == ["g4"]


def test_concurrent_actions_on_one_game_are_decided_once_each(repo: GameRepository) -> None:
    """Two threads racing to play the same seat's card: one wins, the other is refused."""
    state = repo.create("g5", PLAYERS, server_seed=bytes(32))
    seat = state.declarer
    contract = seat_view(state, seat).legal[0]
    results = []

    def act() -> None:
        results.append(GameRepository(repo.store).execute("g5", contract.command(seat)))

    threads = [threading.Thread(target=act) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(1 for r in results if r.ok) == 1
    assert {r.violation.code for r in results if not r.ok} == {"wrong_phase"}  # type: ignore[union-attr]
    assert [r.type for r in repo.events("g5")].count("contract_declared") == 1


def _raw(repo: GameRepository, sql: str, **params: object) -> None:
    with repo.store.engines.write.begin() as conn:
        conn.execute(sa.text(sql), params)


def test_a_changed_card_breaks_the_chain_and_the_audit_names_it(repo: GameRepository) -> None:
    repo.create("g6", PLAYERS, server_seed=bytes(32))
    play_to_end(repo, "g6", random.Random(2))
    target = next(r for r in repo.events("g6") if r.type == "card_played" and r.version > 10)
    forged = target.payload | {"card": "2C" if target.payload["card"] != "2C" else "3C"}
    _raw(
        repo,
        "UPDATE events SET payload = :p WHERE position = :pos",
        p=orjson.dumps(forged, option=orjson.OPT_SORT_KEYS).decode(),
        pos=target.position,
    )
    audit = GameRepository(repo.store).audit("g6")
    assert not audit.ok
    assert audit.chain.version == target.version
    assert audit.replay.finding is not None and audit.replay.finding.version <= target.version + 4


GAMES = ("ga", "gb", "gc", "gd")


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    picks=st.lists(st.sets(st.sampled_from(GAMES), min_size=1), min_size=5, max_size=40),
)
def test_a_group_of_games_commands_stores_what_they_store_one_by_one(
    seed: int, picks: list[set[str]]
) -> None:
    """Group commit: whatever games are grouped, each game's events, states and outcomes are
    what the same commands give one at a time; a group of two or more is one append."""
    rng = random.Random(seed)
    seeds = {g: rng.randbytes(32) for g in GAMES}
    with tempfile.TemporaryDirectory() as tmp:
        stores = [EventStore.open(f"sqlite:///{tmp}/{name}.db") for name in ("group", "one")]
        try:
            grouped, single = (GameRepository(s) for s in stores)
            states = {}
            for g in GAMES:
                states[g] = grouped.create(g, PLAYERS, server_seed=seeds[g])
                single.create(g, PLAYERS, server_seed=seeds[g])
            many = 0
            append_many = grouped.store.append_many

            def counted(requests):  # type: ignore[no-untyped-def]
                nonlocal many
                many += 1
                return append_many(requests)

            grouped.store.append_many = counted  # type: ignore[method-assign]
            for pick in picks:
                requests = []
                for g in sorted(pick):
                    state = states[g]
                    if state.to_move is None:
                        continue
                    action = rng.choice(seat_view(state, state.to_move).legal)
                    requests.append(Request(g, action.command(state.to_move), state.version))
                before = many
                outcomes = grouped.execute_group(requests)
                assert many - before == (1 if requests else 0)  # one append a group
                for request, outcome in zip(requests, outcomes, strict=True):
                    assert isinstance(outcome, Outcome) and outcome.ok, outcome
                    assert [(r.stream_id, r.type) for r in outcome.recorded] == [
                        (stream_id(request.game_id), e.TYPE) for e in outcome.events
                    ]
                    assert outcome.recorded[-1].version == outcome.state.version
                    alone = single.execute(request.game_id, request.commands)
                    assert alone.ok and alone.events == outcome.events
                    assert alone.state == outcome.state
                    states[request.game_id] = outcome.state
            for g in GAMES:
                ours, theirs = (
                    [(r.version, r.type, r.payload) for r in repo.events(g)]
                    for repo in (grouped, single)
                )
                assert ours == theirs
                assert GameRepository(grouped.store).load(g) == states[g]
        finally:
            for s in stores:
                s.close()


def _next(state: GameState, pick: int = 0) -> Command:
    seat = state.to_move
    assert seat is not None
    return seat_view(state, seat).legal[pick].command(seat)


def test_a_group_with_a_conflict_writes_nothing_together_and_each_goes_alone(
    repo: GameRepository,
) -> None:
    """Another writer moved one game behind the cache: the group's append conflicts and
    writes nothing; each request then goes through `execute` on what is stored, so the other
    game's move lands and the stale one is stale, as it would be alone."""
    a, b = repo.create("ca", PLAYERS), repo.create("cb", PLAYERS)
    other = GameRepository(repo.store)
    moved = other.execute("cb", _next(other.load("cb")))
    assert moved.ok
    outcomes = repo.execute_group(
        [
            Request("ca", _next(a), a.version, at_version=a.version),
            Request("cb", _next(b), b.version, at_version=b.version),  # b's cache is behind
        ]
    )
    first, second = outcomes
    assert isinstance(first, Outcome) and first.ok and first.state.version > a.version
    assert isinstance(second, Outcome) and second.stale and not second.events
    assert repo.load("cb") == moved.state  # the other writer's move, and nothing more
    assert repo.load("ca") == first.state


def test_a_refusal_in_a_group_is_judged_alone_and_the_rest_is_written(
    repo: GameRepository,
) -> None:
    a, b = repo.create("ra", PLAYERS), repo.create("rb", PLAYERS)
    seat = b.to_move
    assert seat is not None
    wrong = seat_view(b, seat).legal[0].command((seat + 1) % 4)
    first, second = repo.execute_group(
        [Request("ra", _next(a), a.version), Request("rb", wrong, b.version)]
    )
    assert isinstance(first, Outcome) and first.ok
    assert isinstance(second, Outcome) and second.violation is not None
    assert second.violation.code == "not_your_turn"
    assert repo.store.stream_version(stream_id("rb")) == b.version
    assert repo.load("ra") == first.state


def test_a_group_whose_write_fails_tells_each_of_its_callers(
    repo: GameRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure that may or may not have written (the database gone) is not retried: each
    request of the group gets it, as a lone `execute` would raise it."""
    a, b = repo.create("fa", PLAYERS), repo.create("fb", PLAYERS)

    def gone(requests: object) -> None:
        raise StoreUnavailable("the database went away")

    monkeypatch.setattr(repo.store, "append_many", gone)
    outcomes = repo.execute_group(
        [Request("fa", _next(a), a.version), Request("fb", _next(b), b.version)]
    )
    assert all(isinstance(o, StoreUnavailable) for o in outcomes), outcomes
    monkeypatch.undo()
    assert repo.load("fa") == a and repo.load("fb") == b


def test_a_malformed_command_fails_alone_and_two_requests_of_one_game_go_in_order(
    repo: GameRepository,
) -> None:
    """A command the core cannot read raises for its own caller only; a game asked twice in
    one group (a caller gave up, then asked again) has both requests decided one after the
    other, the second on what the first left."""
    a, b = repo.create("ma", PLAYERS), repo.create("mb", PLAYERS)
    broken = RecordStrike(7, "timeout")  # no such seat
    first = _next(b)
    out = repo.execute_group(
        [
            Request("ma", broken, a.version),
            Request("mb", first, b.version, at_version=b.version),
            Request("mb", first, b.version, at_version=b.version),
        ]
    )
    assert isinstance(out[0], CommandError)
    assert isinstance(out[1], Outcome) and out[1].ok and out[1].state.version > b.version
    assert isinstance(out[2], Outcome) and out[2].stale  # asked at the version the first left
    assert repo.load("ma") == a and repo.load("mb") == out[1].state
