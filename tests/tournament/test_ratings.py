"""Ratings: Plackett–Luce moves the right way, ties and King makers are ranked as documented,
folding is deterministic, and ratings follow bot identities (a strategy, a service player), not
tournament entries."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tournament.events import (
    GameRecorded,
    PlayerRegistered,
    RoundPaired,
    TournamentCreated,
    TournamentState,
    replay,
)
from tournament.model import GameResult
from tournament.ratings import (
    Identity,
    RatedGame,
    Rating,
    Ratings,
    fold,
    leaderboard,
    ranks,
    rate_game,
    rated_games,
    strategy_identity,
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


def test_strategy_identity_is_canonical() -> None:
    assert strategy_identity("heuristic") == Identity("house:heuristic", "heuristic", "strategy")
    a = strategy_identity("strong:rollouts=40,budget_ms=100")
    b = strategy_identity("strong: budget_ms=100.0 , rollouts=40")
    assert a == b and a.key == "house:strong:budget_ms=100,rollouts=40"
    assert strategy_identity("strong:rollouts=41").key != strategy_identity("strong").key


def test_one_identity_in_several_seats_is_one_team_at_its_mean_place() -> None:
    # random holds seats 0 and 2 (places 1 and 3: mean 2), heuristic seats 1 and 3 (2, 4: 3):
    # exactly a two-team game random over heuristic.
    g = RatedGame("g", ("r", "h", "r", "h"), (300, 100, -150, -250))
    two = rate_game(Ratings(), RatedGame("g2", ("r", "h", "r", "h"), (9, 5, 5, 0)))
    got = rate_game(Ratings(), g)
    assert set(got.by_id) == {"r", "h"} and got.get("r").games == got.get("h").games == 1
    assert got.get("r").mu > 25 > got.get("h").mu
    assert two == got  # places (1, 2, 2, 4) → means 1.5 and 3: the same two-team order
    # mean places equal: a tie, nobody moves
    tie = rate_game(Ratings(), RatedGame("g", ("r", "h", "h", "r"), (300, 100, -150, -250)))
    assert tie.get("r").mu == tie.get("h").mu == 25
    # one identity alone: nothing to learn, not counted
    alone = rate_game(Ratings(), RatedGame("g", ("r", "r", "r", "r"), (300, 100, -150, -250)))
    assert alone == Ratings()


def _state_with_results() -> TournamentState:
    events: list[Any] = [
        TournamentCreated("t", "t", "swiss", 1, "house_bot", "0", False, "s", {}, "random"),
        PlayerRegistered("house:heuristic-1", "house:heuristic-1", "builtin", "heuristic"),
        PlayerRegistered("house:heuristic-2", "house:heuristic-2", "builtin", "heuristic"),
        PlayerRegistered("ada", "Ada L.", "human", "ada"),
        RoundPaired(
            1,
            (
                {
                    "table": 1,
                    "game_id": "t-r1-t1",
                    "seats": ["ada", "house:heuristic-1", "house-bot-1", "house:heuristic-2"],
                    "house": [2],
                },
            ),
            (),
        ),
        GameRecorded(
            1,
            "t-r1-t1",
            ("ada", "house:heuristic-1", "house-bot-1", "house:heuristic-2"),
            (50, 200, -100, -150),
            (1,),
            (("ada", "0"), ("house:heuristic-1", "1"), ("house:random", "0")),
            (),
            (2,),
            None,
        ),
    ]
    return replay(events)


def test_tournament_games_rate_bot_identities_with_house_seats_as_the_house_strategy() -> None:
    games, who = rated_games(_state_with_results())
    assert games == (
        RatedGame(
            "t-r1-t1",
            ("ada", "house:heuristic", "house:random", "house:heuristic"),
            (50, 200, -100, -150),
        ),
    )
    assert who == {
        "ada": Identity("ada", "Ada L.", "human"),
        "house:heuristic": Identity("house:heuristic", "heuristic", "strategy"),
        "house:random": Identity("house:random", "random", "strategy"),
    }
    board = leaderboard(fold(games), who=who)
    assert {(r.player, r.name, r.kind, r.games) for r in board} == {
        ("ada", "Ada L.", "human", 1),
        ("house:heuristic", "heuristic", "strategy", 1),
        ("house:random", "random", "strategy", 1),
    }
