"""Ratings: Plackett–Luce moves the right way, ties and King makers are ranked as documented,
and folding is deterministic."""

from __future__ import annotations

import random
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from tournament.model import GameResult
from tournament.ratings import (
    RatedGame,
    Rating,
    Ratings,
    fold,
    leaderboard,
    ranks,
    rate_game,
)

SEATS = ("a", "b", "c", "d")


def test_ranks_from_totals_ties_king_and_leavers() -> None:
    assert ranks([450, 0, -130, -320]) == [1, 2, 3, 4]
    assert ranks([10, 10, -5, -15]) == [1, 1, 3, 4]
    assert ranks([-100, 50, 20, 30], king=0) == [1, 2, 4, 3]  # the King maker first, alone
    assert ranks([5, 5, 5, 5], abandoned=(2,)) == [1, 1, 4, 1]


def test_winner_up_loser_down() -> None:
    r = rate_game(Ratings(), RatedGame("g", SEATS, (450, 0, -130, -320)))
    a, b, c, d = (r.get(p) for p in SEATS)
    start = Rating()
    assert a.mu > start.mu and d.mu < start.mu
    assert a.mu > b.mu > c.mu > d.mu
    assert all(x.sigma < start.sigma for x in (a, b, c, d))
    assert all(x.games == 1 for x in (a, b, c, d))
    assert r.games == 1


def test_ties_are_treated_alike() -> None:
    r = rate_game(Ratings(), RatedGame("g", SEATS, (100, 100, -100, -100)))
    assert r.get("a") == r.get("b")
    assert r.get("c") == r.get("d")
    assert r.get("a").mu > r.get("c").mu


def test_king_maker_gains_most() -> None:
    r = rate_game(Ratings(), RatedGame("g", SEATS, (-50, 200, 100, 0), king=0))
    assert max(SEATS, key=lambda p: r.get(p).mu) == "a"


def test_a_steady_winner_tops_the_leaderboard() -> None:
    rng = random.Random(1)
    games = []
    for i in range(40):
        others = rng.sample(["p1", "p2", "p3", "p4", "p5", "p6"], 3)
        seats = ["star", *others]
        rng.shuffle(seats)
        totals = [rng.randint(-300, 100) for _ in range(4)]
        totals[seats.index("star")] = 400
        t = (totals[0], totals[1], totals[2], totals[3])
        games.append(RatedGame(f"g{i}", (seats[0], seats[1], seats[2], seats[3]), t))
    board = leaderboard(fold(games))
    assert board[0].player == "star"
    assert board[0].ordinal == board[0].mu - 3 * board[0].sigma
    assert [row.rank for row in board] == sorted(row.rank for row in board)
    assert all(board[i].ordinal >= board[i + 1].ordinal for i in range(len(board) - 1))
    assert len(leaderboard(fold(games), limit=3)) == 3
    assert all(row.games >= 10 for row in leaderboard(fold(games), min_games=10))


totals = st.tuples(*(st.integers(-500, 500) for _ in range(4)))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.permutations(list("abcdef")), totals), max_size=12))
def test_fold_is_deterministic_and_equals_step_by_step(
    games: list[tuple[list[str], tuple[int, int, int, int]]],
) -> None:
    rated = [RatedGame(f"g{i}", (p[0], p[1], p[2], p[3]), t) for i, (p, t) in enumerate(games)]
    once = fold(rated)
    assert fold(rated) == once
    step = Ratings()
    for g in rated:
        step = rate_game(step, g)
    assert dict(step.by_id) == dict(once.by_id) and step.games == once.games == len(rated)
    # a game's best seat never loses rating, its worst never gains
    before = Ratings()
    for g in rated:
        after = rate_game(before, g)
        order = ranks(g.totals, g.king, g.abandoned)
        best = [p for p, r in zip(g.players, order, strict=True) if r == 1]
        worst = [p for p, r in zip(g.players, order, strict=True) if r == max(order)]
        if min(order) != max(order):
            assert all(after.get(p).mu >= before.get(p).mu for p in best)
            assert all(after.get(p).mu <= before.get(p).mu for p in worst)
        before = after


def test_from_result_ranks_a_leaver_last() -> None:
    res = GameResult(
        "g",
        1,
        SEATS,
        (300, 100, -150, -250),
        (0, 1),
        (("a", Fraction(9)), ("b", Fraction(-30)), ("c", Fraction(-6)), ("d", Fraction(-6))),
        forfeited=("b",),
    )
    g = RatedGame.from_result(res)
    assert g.abandoned == (1,)
    assert ranks(g.totals, g.king, g.abandoned) == [1, 4, 2, 3]
