"""Round-robin: the designs meet every pair exactly as promised; searched schedules keep the
same guarantees on seating and byes, report their balance truthfully and are reproducible."""

from __future__ import annotations

import random
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournament.model import Fill, Round
from tournament.pairing.byes import table_caps
from tournament.pairing.designs import (
    KIRKMAN_BASES,
    ROTATIONAL_BASES,
    affine_space,
    check,
    cyclic_bye_design,
    kirkman_design,
    rotational_design,
)
from tournament.pairing.export import input_from_json, input_to_json, pair
from tournament.pairing.gf import field, prime_power
from tournament.pairing.history import history_of
from tournament.pairing.round_robin import (
    RoundRobinInput,
    _below,
    balance_of,
    default_rounds,
    round_robin,
    schedule,
)

PLAYERS16 = [f"player{i:02d}" for i in range(16)]


def meetings(
    rounds: tuple[Round, ...] | list[Round], players: list[str]
) -> dict[tuple[str, str], int]:
    h = history_of(rounds)
    return {(a, b): h.met(a, b) for a, b in combinations(sorted(players), 2)}


def test_sixteen_players_meet_every_other_exactly_once() -> None:
    s = round_robin(PLAYERS16, "seed")
    assert s.method == "AG(2,4)"
    assert len(s.rounds) == 5
    for rnd in s.rounds:
        assert len(rnd.tables) == 4 and not rnd.byes
        assert sorted(rnd.seated) == sorted(PLAYERS16)
    assert set(meetings(s.rounds, PLAYERS16).values()) == {1}
    b = s.balance
    assert (b.min_meetings, b.max_meetings, b.never_met, b.above_ideal, b.ideal) == (
        1,
        1,
        0,
        0,
        True,
    )


def test_gf4_is_a_field() -> None:
    f = field(4)
    for a in range(4):
        assert f.add(a, a) == 0
        for b in range(4):
            for c in range(4):
                assert f.mul(a, f.add(b, c)) == f.add(f.mul(a, b), f.mul(a, c))
        if a:
            assert any(f.mul(a, b) == 1 for b in range(1, 4))
    assert f.mul(2, 2) == 3  # x·x = x + 1 modulo x² + x + 1


@pytest.mark.parametrize("q", [3, 5, 7, 8, 9, 13, 16, 25, 27, 49])
def test_small_fields(q: int) -> None:
    f = field(q)
    assert sorted(f.exp) == list(range(1, q))  # a primitive element generates every unit
    for a in range(q):
        assert f.add(a, f.neg(a)) == 0
        for b in range(0, q, 3):
            assert f.mul(a, b) == f.mul(b, a)


def test_prime_power() -> None:
    assert prime_power(64) == (2, 6)
    assert prime_power(125) == (5, 3)
    assert prime_power(12) is None


@pytest.mark.parametrize("k", [1, 2, 3])
def test_affine_spaces(k: int) -> None:
    d = affine_space(k)
    assert len(d.rounds) == (4**k - 1) // 3
    check(d)


@pytest.mark.parametrize("q", [5, 9, 13, 17, 25, 29, 37, 41, 49])
def test_cyclic_bye_designs(q: int) -> None:
    d = cyclic_bye_design(q)
    assert len(d.rounds) == q and d.lam == 3
    check(d)
    assert sorted(b[0] for b in d.byes) == list(range(q))  # one bye each


@pytest.mark.parametrize("n", sorted(KIRKMAN_BASES))
def test_stored_resolvable_designs(n: int) -> None:
    d = kirkman_design(n)
    check(d)
    assert d.lam == 1 and len(d.rounds) == (n - 1) // 3


@pytest.mark.parametrize("n", sorted(ROTATIONAL_BASES))
def test_stored_rotational_designs(n: int) -> None:
    d = rotational_design(n)
    check(d)
    assert len(d.rounds) == (n - 1 if n % 4 == 0 else n)


@pytest.mark.parametrize(
    ("n", "fill", "rounds", "method"),
    [
        (64, "bye", None, "AG(3,4)"),
        (28, "bye", None, "resolvable Z9x3+inf"),
        (27, "house_bot", 18, "resolvable Z9x3+inf"),
        (15, "house_bot", None, "AG(2,4)"),
        (13, "bye", 13, "cyclic GF(13)"),
        (12, "bye", 11, "1-rotational Z11+inf"),
        (23, "house_bot", 23, "1-rotational Z23+inf"),
        (21, "bye", 42, "1-rotational Z21"),
        (16, "bye", 7, "AG(2,4)"),
    ],
)
def test_designs_are_ideal(n: int, fill: Fill, rounds: int | None, method: str) -> None:
    players = [f"p{i}" for i in range(n)]
    s = round_robin(players, "x", rounds, fill)
    assert s.method == method
    assert s.balance.ideal
    assert s.balance.max_byes - s.balance.min_byes <= 1


def test_house_bots_in_an_affine_design_never_three_at_a_table() -> None:
    s = round_robin([f"p{i}" for i in range(13)], "x", fill="house_bot")
    assert s.method == "AG(2,4)"
    for rnd in s.rounds:
        assert all(len(t.house) <= 2 for t in rnd.tables)
    assert set(meetings(s.rounds, list(s.players)).values()) <= {0, 1}


fills = st.sampled_from(["bye", "house_bot"])


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 24), st.one_of(st.none(), st.integers(0, 6)), fills, st.text(max_size=5))
def test_round_robin_properties(n: int, rounds: int | None, fill: Fill, seed: str) -> None:
    check_round_robin(n, rounds, fill, seed)


@pytest.mark.slow
@pytest.mark.compute
@settings(max_examples=100, deadline=None)
@given(st.integers(0, 70), st.one_of(st.none(), st.integers(0, 14)), fills, st.text(max_size=5))
def test_round_robin_properties_at_length(
    n: int, rounds: int | None, fill: Fill, seed: str
) -> None:
    check_round_robin(n, rounds, fill, seed)


def check_round_robin(n: int, rounds: int | None, fill: Fill, seed: str) -> None:
    """Seating, byes, the reported balance and reproducibility of one schedule."""
    players = [f"p{i}" for i in range(n)]
    s = round_robin(players, seed, rounds, fill)
    assert len(s.rounds) == (default_rounds(n, fill) if rounds is None else rounds)
    caps, n_byes = table_caps(n, fill)
    byes: dict[str, int] = dict.fromkeys(players, 0)
    for k, rnd in enumerate(s.rounds, start=1):
        assert rnd.number == k
        # every player seated exactly once or given the bye
        assert sorted([*rnd.seated, *rnd.byes]) == sorted(players)
        assert len(rnd.byes) == n_byes
        if s.method == "search":
            assert sorted(len(t.players) for t in rnd.tables) == sorted(caps)
        else:  # two house-bot points of an affine design share one line: one table of two
            assert len(rnd.tables) == len(caps)
            assert all(len(t.house) <= max(2, 4 - n) for t in rnd.tables)
        # no second bye before everyone had one
        for p in rnd.byes:
            byes[p] += 1
        assert max(byes.values(), default=0) - min(byes.values(), default=0) <= 1
    # the reported balance is the real one
    assert s.balance == balance_of(players, s.rounds)
    # reproducible, whatever the order the players are listed in
    assert round_robin(list(reversed(players)), seed, rounds, fill) == s
    inp = RoundRobinInput(tuple(players), seed, rounds, fill)
    assert pair(input_from_json(input_to_json(inp))) == s.rounds


def test_search_schedule_reports_its_balance() -> None:
    s = round_robin([f"p{i}" for i in range(20)], "x")
    assert s.method == "search"
    b = s.balance
    assert b.pairs == 190
    met = meetings(s.rounds, list(s.players))
    assert b.min_meetings == min(met.values()) and b.max_meetings == max(met.values())
    assert b.never_met == sum(1 for v in met.values() if v == 0)
    assert b.above_ideal == sum(1 for v in met.values() if v > b.ideal_high)
    assert b.max_meetings <= 3  # the search spreads the 7 rounds' meetings


def test_replanning_after_a_withdrawal_and_a_late_join() -> None:
    """Rounds already played are history: the rest is planned around them."""
    first = round_robin(PLAYERS16, "x")
    played = first.rounds[:2]
    field_now = [p for p in PLAYERS16 if p != "player03"] + ["late"]
    rest = schedule(RoundRobinInput(tuple(field_now), "x", 3, "bye", played))
    assert [r.number for r in rest.rounds] == [3, 4, 5]
    for rnd in rest.rounds:
        assert sorted([*rnd.seated, *rnd.byes]) == sorted(field_now)
        assert "player03" not in rnd.seated
    # pairs that met in the two rounds played are not made to meet much again
    assert rest.balance.max_meetings <= 2


@given(st.integers(0, 2**64), st.lists(st.integers(1, 2**70), min_size=1, max_size=50))
def test_the_searchs_draws_are_randranges_draws(seed: int, stops: list[int]) -> None:
    """The search draws through `_below`: the same numbers `randrange` draws from the same
    generator, so a seed keeps giving the schedules it gave (and recorded ones verify)."""
    ours, theirs = random.Random(seed), random.Random(seed)
    below = _below(ours)
    assert [below(n) for n in stops] == [theirs.randrange(n) for n in stops]
    assert ours.getstate() == theirs.getstate()


def test_default_rounds() -> None:
    assert default_rounds(16) == 5
    assert default_rounds(5) == 5
    assert default_rounds(6) == 3
    assert default_rounds(7, "house_bot") == 2
    assert default_rounds(64) == 21
    assert default_rounds(1) == 0


@pytest.mark.slow
@pytest.mark.compute
@pytest.mark.parametrize("n", [32, 48, 100])
def test_larger_searched_round_robins(n: int) -> None:
    s = round_robin([f"p{i}" for i in range(n)], "x")
    assert s.balance.max_meetings <= 3
    for rnd in s.rounds:
        assert sorted(rnd.seated) == sorted(s.players)
