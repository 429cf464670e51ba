"""Pairing a round by hand: the check refuses every pairing that does not seat each active
player exactly once (with every reason), the runner plays an accepted one exactly as given and
marks the round manual, and a round-robin is planned again after it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.rules import Rules
from eventstore import EventStore, NewEvent
from tournament.events import (
    ManualPairing,
    PlayerRegistered,
    PlayerWithdrew,
    RoundClosed,
    RoundPaired,
    TournamentCreated,
    TournamentState,
    apply,
    replay,
    to_payload,
)
from tournament.model import Round, Table
from tournament.pairing.export import input_to_json, round_to_json, verify
from tournament.pairing.round_robin import RoundRobinInput
from tournament.planning import BadPairing, check_manual, next_round
from tournament.runner import TournamentRunner, parse_players, stream_id

PLAYERS = [f"p{i}" for i in range(1, 7)]


def _state(fmt: str = "swiss", rounds: int = 2, players: list[str] = PLAYERS) -> TournamentState:
    return replay(
        [
            TournamentCreated("t", "t", fmt, rounds, "bye", "0", False, "s", {}, "random"),
            *(PlayerRegistered(p, p, "builtin", "random") for p in players),
        ]
    )


def test_a_valid_pairing_is_the_round() -> None:
    rnd = check_manual(
        _state(), 1, [["p3", "p1", "house-bot-1", "p6"], ["p2", "p4", "p5", "house-bot-2"]]
    )
    assert rnd == Round(
        1,
        (
            Table(1, ("p3", "p1", "house-bot-1", "p6"), (2,)),
            Table(2, ("p2", "p4", "p5", "house-bot-2"), (3,)),
        ),
    )
    with_byes = check_manual(_state(), 1, [["p1", "p2", "p3", "p4"]], ["p6", "p5"])
    assert with_byes.byes == ("p6", "p5") and with_byes.seated == ("p1", "p2", "p3", "p4")


@pytest.mark.parametrize(
    ("round_no", "tables", "byes", "reason"),
    [
        (1, [["p1", "p2", "p3", "p4"]], ["p5"], "not seated and without a bye: p6"),
        (1, [["p1", "p2", "p3", "p4"]], ["p5", "p6", "p1"], "p1 appears 2 times"),
        (1, [["p1", "p2", "p3", "p4"]], ["p5", "p6", "zed"], "zed is not registered"),
        (1, [["p1", "p2", "p3"]], ["p4", "p5", "p6"], "table 1 has 3 seats, not four"),
        (1, [["p1", "p2", "p3", "p4"], ["house-bot-1"] * 4], ["p5", "p6"], "house-bot-1 appears"),
        (1, [["p1", "p2", "p3", "p4"]], ["p5", "p6", "house-bot-1"], "cannot have a bye"),
        (1, [], PLAYERS, "at least one table"),
        (2, [["p1", "p2", "p3", "p4"]], ["p5", "p6"], "round 1 is the next round to pair, not 2"),
        (0, [["p1", "p2", "p3", "p4"]], ["p5", "p6"], "round 0 is paired already"),
    ],
)
def test_a_bad_pairing_says_why(
    round_no: int, tables: list[list[str]], byes: list[str], reason: str
) -> None:
    with pytest.raises(BadPairing, match=reason):
        check_manual(_state(), round_no, tables, byes)


def test_every_reason_is_given_and_withdrawn_players_and_the_last_round_are_refused() -> None:
    state = apply(_state(rounds=1), PlayerWithdrew("p6", "ill"))
    with pytest.raises(BadPairing) as caught:
        check_manual(state, 1, [["p1", "p1", "p3", "p6"]], ["x"])
    text = str(caught.value)
    for part in ("p1 appears 2 times", "p6 has withdrawn", "x is not registered", "p2, p4, p5"):
        assert part in text
    table = {"table": 1, "game_id": "g", "seats": ["p1", "p2", "p3", "p4"], "house": []}
    played = apply(apply(state, RoundPaired(1, (table,), ("p5",))), RoundClosed(1))
    with pytest.raises(BadPairing, match="the tournament has 1 rounds"):
        check_manual(played, 2, [["p1", "p2", "p3", "p4"]], ["p5"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([*PLAYERS, "house-bot-1", "house-bot-2", "nobody"]), max_size=14),
    st.integers(0, 14),
)
def test_accepted_pairings_seat_every_active_player_exactly_once(ids: list[str], cut: int) -> None:
    seats, byes = ids[: cut - cut % 4], ids[cut - cut % 4 :]
    tables = [seats[i : i + 4] for i in range(0, len(seats), 4)]
    try:
        rnd = check_manual(_state(), 1, tables, byes)
    except BadPairing as exc:
        assert str(exc)
        return
    assert sorted(rnd.seated + rnd.byes) == sorted(PLAYERS)
    assert all(t.seats[s].startswith("house-bot-") for t in rnd.tables for s in t.house)


def test_a_field_change_drops_the_hand_pairing() -> None:
    rnd = check_manual(_state(), 1, [["p1", "p2", "p3", "p4"]], ["p5", "p6"])
    state = apply(_state(), _event(rnd))
    assert state.manual == rnd and next_round(state) == rnd
    assert apply(state, PlayerWithdrew("p6", "")).manual is None
    assert apply(state, PlayerRegistered("p7", "p7", "builtin", "random")).manual is None


def _event(rnd: Round) -> ManualPairing:
    tables = tuple(
        {"table": t.number, "seats": list(t.seats), "house": list(t.house)} for t in rnd.tables
    )
    return ManualPairing(rnd.number, tables, rnd.byes, "admin")


def _set(store: EventStore, runner: TournamentRunner, tid: str, rnd: Round) -> None:
    state = runner.load(tid)
    event = _event(check_manual(state, rnd.number, [list(t.seats) for t in rnd.tables], rnd.byes))
    store.append(stream_id(tid), [NewEvent(event.TYPE, to_payload(event))], state.version)


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = EventStore.open(f"sqlite:///{tmp_path / 't.db'}")
    yield s
    s.close()


def test_the_runner_plays_a_hand_pairing_as_given(store: EventStore) -> None:
    runner = TournamentRunner(store)
    runner.create(
        "sw", parse_players("random*3,heuristic*3"), rounds=2, rules=Rules(mode="short12"), seed="s"
    )
    by_hand = Round(
        1,
        (Table(1, ("heuristic-3", "random-1", "house-bot-1", "random-3"), (2,)),),
        ("heuristic-1", "heuristic-2", "random-2"),
    )
    _set(store, runner, "sw", by_hand)
    state = runner.run("sw")
    assert state.finished is not None
    assert state.rounds[0] == by_hand and state.manual_rounds == frozenset({1})
    game = runner.games.load(state.round_games[0][0]["game_id"])
    assert game.players[:2] == ("heuristic-3", "random-1") and game.players[3] == "random-3"
    # round 2 is the Swiss's own, from the standings after the hand-paired round
    assert 2 not in state.manual_rounds and len(state.rounds[1].tables) == 1


def test_a_round_robin_is_planned_again_after_a_hand_paired_round(store: EventStore) -> None:
    runner = TournamentRunner(store)
    players = parse_players("random*8")
    runner.create(
        "rr", players, format="round_robin", rounds=3, rules=Rules(mode="short12"), seed="s"
    )
    ids = [p.player_id for p in players]
    by_hand = Round(1, (Table(1, tuple(ids[:4]), ()), Table(2, tuple(ids[4:]), ())))  # type: ignore[arg-type]
    _set(store, runner, "rr", by_hand)
    state = runner.run("rr")
    assert state.rounds[0] == by_hand and state.field_changed_after == 1
    # rounds 2 and 3 are exactly the plan made with round 1 as history
    doc = input_to_json(RoundRobinInput(tuple(ids), "s", 2, "bye", state.rounds[:1]))
    assert all(verify(doc, round_to_json(r)) for r in state.rounds[1:])
