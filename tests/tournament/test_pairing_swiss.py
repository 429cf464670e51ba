"""Swiss pairing: properties over simulated tournaments (with late joins and withdrawals)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from fractions import Fraction
from itertools import permutations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.results import ladder_points, winners
from domain.rules import Rules
from tournament.model import Fill, GameResult, Round, Table
from tournament.pairing.byes import table_caps
from tournament.pairing.export import input_from_json, input_to_json, pairing_input
from tournament.pairing.history import history_of
from tournament.pairing.swiss import (
    Entrant,
    SwissInput,
    pair_swiss,
    ranking,
    repeat_bound,
    safe_remaining,
)
from tournament.standings import standings

RULES = Rules()


def play(rnd: Round, rng: random.Random) -> list[GameResult]:
    """Random game totals for every table, scored with the rules engine's ladder points."""
    out = []
    for t in rnd.tables:
        totals = (rng.randint(-600, 600), rng.randint(-600, 600), rng.randint(-600, 600), 0)
        totals = (totals[0], totals[1], totals[2], -sum(totals) // 3)
        pts = ladder_points(RULES, totals, None)
        out.append(
            GameResult(
                game_id=f"r{rnd.number}t{t.number}",
                round=rnd.number,
                seats=t.seats,
                totals=totals,
                winners=winners(RULES, totals, None),
                points=tuple((p, pts[s]) for s, p in enumerate(t.seats) if s not in t.house),
                house=t.house,
            )
        )
    return out


def simulate(
    n: int, rounds: int, seed: int, fill: Fill = "bye", churn: bool = False
) -> Iterator[tuple[SwissInput, Round]]:
    """Play a Swiss of `rounds` rounds; yield each round's input and pairing."""
    rng = random.Random(seed)
    everyone = [f"p{i:03d}" for i in range(n)]
    active = list(everyone)
    results: list[GameResult] = []
    history: list[Round] = []
    spare = n
    for r in range(1, rounds + 1):
        if churn and r > 1:
            if active and rng.random() < 0.5:
                active.remove(rng.choice(active))
            if rng.random() < 0.5:
                everyone.append(f"p{spare:03d}")
                active.append(f"p{spare:03d}")
                spare += 1
        table = standings(everyone, results, history, seed=str(seed))
        inp = pairing_input(r, str(seed), active, table, history, fill)
        rnd = pair_swiss(inp)
        yield inp, rnd
        history.append(rnd)
        results.extend(play(rnd, rng))


def spread_after(counts: list[int] | None, seat: int) -> int:
    c = list(counts or (0, 0, 0, 0))
    c[seat] += 1
    return max(c) - min(c)


def repeat_pairs(rnd: Round, history: list[Round]) -> int:
    h = history_of(history)
    return sum(
        1
        for t in rnd.tables
        for i, a in enumerate(t.players)
        for b in t.players[i + 1 :]
        if h.met(a, b)
    )


def most_distinct_mates(active: list[str], history: list[Round]) -> int:
    h = history_of(history)
    alive = set(active)
    return max((sum(1 for q in h.meetings.get(p, {}) if q in alive) for p in active), default=0)


tournaments = {
    "seed": st.integers(0, 10**6),
    "fill": st.sampled_from(["bye", "house_bot"]),
    "churn": st.booleans(),
}


@settings(max_examples=15, deadline=None)
@given(n=st.integers(0, 33), rounds=st.integers(1, 5), **tournaments)
def test_swiss_properties(n: int, rounds: int, seed: int, fill: Fill, churn: bool) -> None:
    check_swiss(n, rounds, seed, fill, churn)


@pytest.mark.slow
@pytest.mark.compute
@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 90), rounds=st.integers(1, 9), **tournaments)
def test_swiss_properties_at_length(
    n: int, rounds: int, seed: int, fill: Fill, churn: bool
) -> None:
    check_swiss(n, rounds, seed, fill, churn)


def check_swiss(n: int, rounds: int, seed: int, fill: Fill, churn: bool) -> None:
    """Every property of every round of one simulated tournament."""
    history: list[Round] = []
    for inp, rnd in simulate(n, rounds, seed, fill, churn):
        active = [e.player for e in inp.entrants]
        # Every active player is seated exactly once or has the bye; nobody else appears.
        assert sorted([*rnd.seated, *rnd.byes]) == sorted(active)
        caps, n_byes = table_caps(len(active), fill)
        assert len(rnd.byes) == n_byes
        assert [len(t.players) for t in rnd.tables] == list(caps)
        for t in rnd.tables:
            assert len(set(t.seats)) == 4
            assert all(t.seats[s].startswith("house-bot-") for s in t.house)
            if fill == "house_bot" and len(rnd.tables) >= 3:
                assert len(t.house) <= 1
        # Byes: nobody gets a second bye before every active player had one; lowest-ranked
        # among those with the fewest byes first.
        before = history_of(history).byes
        rank = {p: i for i, p in enumerate(ranking(inp.entrants, inp.seed))}
        for p in rnd.byes:
            for q in set(active) - set(rnd.byes):
                assert before.get(q, 0) >= before.get(p, 0)
                if before.get(q, 0) == before.get(p, 0):
                    assert rank[q] < rank[p]
        # Seats: within one of each other for everyone at a table whenever some seating can.
        held = history_of(history).seats
        for t in rnd.tables:
            people = [(p, t.seat_of(p)) for p in t.players]
            if any(
                all(spread_after(held.get(p), perm[s]) <= 1 for p, s in people)
                for perm in permutations(range(4))
            ):
                assert all(spread_after(held.get(p), s) <= 1 for p, s in people)
        # The documented greedy bound on repeat meetings.
        d = most_distinct_mates(active, history)
        assert repeat_pairs(rnd, history) <= repeat_bound(d, caps)
        # The same input, through its JSON form, gives the same round.
        again = input_from_json(input_to_json(inp))
        assert again == inp
        assert isinstance(again, SwissInput)
        assert pair_swiss(again) == rnd
        history.append(rnd)


def test_no_repeats_while_the_field_is_large_enough() -> None:
    """With many players the greedy never needs a repeat (tables formed with ≥ 3d + 4 left)."""
    history: list[Round] = []
    for inp, rnd in simulate(200, 6, 7):
        active = [e.player for e in inp.entrants]
        d = most_distinct_mates(active, history)
        assert len(active) >= safe_remaining(d)
        assert repeat_pairs(rnd, history) == 0
        history.append(rnd)


def test_round_one_is_seed_order_from_the_top() -> None:
    entrants = tuple(Entrant(f"p{i}") for i in range(8))
    rnd = pair_swiss(SwissInput(1, "s", entrants))
    order = ranking(entrants, "s")
    assert [set(t.players) for t in rnd.tables] == [set(order[:4]), set(order[4:])]


def test_tables_follow_the_standings() -> None:
    """Round 2 of eight: p0 heads table 1 and p1 joins; everyone else has met one of them, so
    two repeats per table are forced (two of each earlier table), and among those pairings the
    one closest in rank wins: p0–p3 and p4–p7."""
    entrants = tuple(Entrant(f"p{i}", Fraction(20 - i)) for i in range(8))
    r1 = Round(1, (Table(1, ("p0", "p2", "p4", "p6")), Table(2, ("p1", "p3", "p5", "p7"))))
    rnd = pair_swiss(SwissInput(2, "s", entrants, (r1,)))
    assert [set(t.players) for t in rnd.tables] == [
        {"p0", "p1", "p2", "p3"},
        {"p4", "p5", "p6", "p7"},
    ]
    assert repeat_pairs(rnd, [r1]) == 4


def test_ranking_keys_in_order() -> None:
    e = [
        Entrant("a", Fraction(3), 10, Fraction(0), 1),
        Entrant("b", Fraction(3), 10, Fraction(5), 0),
        Entrant("c", Fraction(3), 20, Fraction(-5), 0),
        Entrant("d", Fraction(4), -100, Fraction(0), 0),
        Entrant("e", Fraction(3), 10, Fraction(5), 2),
    ]
    assert ranking(e, "x") == ["d", "c", "e", "b", "a"]


def test_duplicate_entrant_refused() -> None:
    with pytest.raises(ValueError):
        pair_swiss(SwissInput(1, "s", (Entrant("a"), Entrant("a"))))


@pytest.mark.slow
@pytest.mark.compute
def test_ten_thousand_players_five_rounds_of_history() -> None:
    history: list[Round] = []
    for inp, rnd in simulate(10_000, 6, 3):
        active = [e.player for e in inp.entrants]
        assert sorted([*rnd.seated, *rnd.byes]) == sorted(active)
        d = most_distinct_mates(active, history)
        assert repeat_pairs(rnd, history) <= repeat_bound(d, table_caps(len(active), "bye")[0])
        history.append(rnd)
