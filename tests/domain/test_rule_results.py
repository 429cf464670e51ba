"""End of game and ladder points: R-RESULT20, R-RESULT12, R-KINGEND, R-LADDER20, R-LADDER12,
R-LADDERKING, R-ABANDON and R-SUBSTITUTE."""

from __future__ import annotations

from fractions import Fraction as F

import pytest
from helpers import hands, new_game, ok, play_deal_out, refused, start_deal

from domain.commands import Abandon, Declare, Substitute
from domain.events import GameEnded, SeatResult, to_payload
from domain.game import CommandError, Phase, decide
from domain.results import ladder_points, participant_points, winners
from domain.rules import Rules

STANDARD = Rules()
SHORT = Rules(mode="short12")

# --- R-RESULT20 / R-RESULT12 / R-KINGEND ----------------------------------------------------


@pytest.mark.parametrize(
    ("totals", "won"),
    [
        ((450, 0, -130, -320), (0, 1)),  # a total of exactly 0 wins
        ((600, -100, -200, -300), (0,)),
        ((100, 50, 50, -200), (0, 1, 2)),
        ((0, 0, 0, 0), (0, 1, 2, 3)),
        ((-10, 10, -20, 20), (1, 3)),
    ],
)
def test_standard20_players_with_a_total_of_0_or_more_win(
    totals: tuple[int, ...], won: tuple[int, ...]
) -> None:
    assert winners(STANDARD, totals, None) == won


@pytest.mark.parametrize(
    ("totals", "won"),
    [
        ((270, -180, -310, -360), (0,)),
        ((300, 200, -100, -400), (0,)),  # a positive total that is not the highest loses
        ((-100, -50, -50, -300), (1, 2)),  # all tied leaders win, even below zero
        ((0, 0, 0, 0), (0, 1, 2, 3)),
    ],
)
def test_short12_the_highest_total_wins(totals: tuple[int, ...], won: tuple[int, ...]) -> None:
    assert winners(SHORT, totals, None) == won


@pytest.mark.parametrize("rules", [STANDARD, SHORT], ids=["standard20", "short12"])
def test_after_a_king_the_maker_alone_wins_whatever_the_totals(rules: Rules) -> None:
    assert winners(rules, (500, 400, -900, 0), 2) == (2,)


# Seat 0 holds every spade (deal 1) or every heart (deal 2).
ALL_SPADES = hands("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", "...", "...", "...")
ALL_HEARTS = hands("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", "...", "...", "...")


def test_a_king_wins_the_game_even_with_a_negative_total() -> None:
    state = new_game(first_declarer="seat0")
    # Deal 1, no_tricks: seat 0 leads spades and nobody else has one: 13 tricks, -650.
    state = play_deal_out(ok(start_deal(state, ALL_SPADES), Declare(0, "no_tricks")))
    assert state.totals == (-650, 0, 0, 0)
    # Deal 2, trump_H declared by seat 1: seat 0 ruffs the first lead and runs its hearts.
    state = play_deal_out(ok(start_deal(state, ALL_HEARTS), Declare(1, "trump_H")))
    assert state.phase is Phase.OVER
    assert state.king == 0
    assert state.totals == (-100, 0, 0, 0)
    assert state.result is not None
    assert state.result.winners == (0,)
    assert state.result.ladder_points == (F(12), F(-4), F(-4), F(-4))


# --- R-LADDER20 -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("totals", "points"),
    [
        # The rule book's example.
        ((450, 0, -130, -320), (9, 6, -6, -6)),
        # One winner: +12 and the +3.
        ((600, -100, -200, -300), (15, -4, -4, -4)),
        # Three winners split +12, the top one gets +3 more.
        ((100, 50, 50, -200), (7, 4, 4, -12)),
        # Two tied top winners split the +3.
        ((300, 300, -200, -400), (F(15, 2), F(15, 2), -6, -6)),
        # Three tied top winners.
        ((100, 100, 100, -300), (5, 5, 5, -12)),
        # All zero: everyone wins, everyone is top, nobody loses.
        ((0, 0, 0, 0), (F(15, 4), F(15, 4), F(15, 4), F(15, 4))),
    ],
)
def test_ladder20(totals: tuple[int, ...], points: tuple[F | int, ...]) -> None:
    got = ladder_points(STANDARD, totals, None)
    assert got == tuple(F(p) for p in points)
    assert all(isinstance(p, F) for p in got)  # exact fractions, never floats


# --- R-LADDER12 -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("totals", "points"),
    [
        ((270, -180, -310, -360), (12, -4, -4, -4)),
        ((300, 300, -100, -400), (6, 6, -6, -6)),
        ((100, 100, 100, -300), (4, 4, 4, -12)),
        ((0, 0, 0, 0), (3, 3, 3, 3)),
        ((-50, -100, -200, -300), (12, -4, -4, -4)),
    ],
)
def test_ladder12(totals: tuple[int, ...], points: tuple[int, ...]) -> None:
    assert ladder_points(SHORT, totals, None) == tuple(F(p) for p in points)


# --- R-LADDERKING ---------------------------------------------------------------------------


@pytest.mark.parametrize("rules", [STANDARD, SHORT], ids=["standard20", "short12"])
@pytest.mark.parametrize("maker", [0, 1, 2, 3])
def test_ladder_after_a_king(rules: Rules, maker: int) -> None:
    expected = [F(-4)] * 4
    expected[maker] = F(12)
    assert ladder_points(rules, (900, 800, -100, 550), maker) == tuple(expected)


def test_split_points_are_stored_as_exact_fractions() -> None:
    ended = GameEnded(
        (300, 300, -200, -400),
        (0, 1),
        ladder_points(STANDARD, (300, 300, -200, -400), None),
        None,
        (),
    )
    assert to_payload(ended)["ladder_points"] == ["15/2", "15/2", "-6", "-6"]


# --- R-ABANDON / R-SUBSTITUTE: domain.results.participant_points ----------------------------

SEAT_POINTS = (F(9), F(6), F(-6), F(-6))  # the R-LADDER20 example: seats 0 and 1 won
WON = (0, 1)
ORIGINAL = (("ada",), ("bora",), ("cem",), ("deniz",))


def test_without_abandons_everyone_gets_their_seat_points() -> None:
    assert participant_points(SEAT_POINTS, WON, ORIGINAL, {}) == {
        "ada": 9,
        "bora": 6,
        "cem": -6,
        "deniz": -6,
    }


def test_a_leaver_gets_minus_30_and_a_losing_substitute_gets_plus_1() -> None:
    occupants = (("ada",), ("bora",), ("cem", "bot-1"), ("deniz",))
    points = participant_points(SEAT_POINTS, WON, occupants, {"cem": 2})
    assert points["cem"] == -30
    assert points["bot-1"] == 1
    assert (points["ada"], points["bora"], points["deniz"]) == (9, 6, -6)


def test_a_leaver_gets_minus_30_even_if_the_seat_wins_and_the_substitute_gets_normal_points() -> (
    None
):
    occupants = (("ada", "bot-1"), ("bora",), ("cem",), ("deniz",))
    points = participant_points(SEAT_POINTS, WON, occupants, {"ada": 0})
    assert points["ada"] == -30
    assert points["bot-1"] == 9


def test_a_leaver_without_substitute_gets_minus_30() -> None:
    points = participant_points(SEAT_POINTS, WON, ORIGINAL, {"deniz": 3})
    assert points["deniz"] == -30


def test_a_substitute_who_leaves_too_gets_minus_30_and_the_next_one_plays_on() -> None:
    occupants = (("ada",), ("bora",), ("cem", "bot-1", "bot-2"), ("deniz",))
    points = participant_points(SEAT_POINTS, WON, occupants, {"cem": 2, "bot-1": 2})
    assert (points["cem"], points["bot-1"], points["bot-2"]) == (-30, -30, 1)


# --- R-ABANDON / R-SUBSTITUTE through the game's commands -----------------------------------


def king_game_with(*commands: Abandon | Substitute):  # type: ignore[no-untyped-def]
    """Seat 0 makes King in deal 1 (it holds every spade, trump_S); the commands are run
    after the contract is declared, in the middle of the game."""
    state = ok(start_deal(new_game(first_declarer="seat0"), ALL_SPADES), Declare(0, "trump_S"))
    for command in commands:
        state = ok(state, command)
    state = play_deal_out(state)
    assert state.phase is Phase.OVER and state.king == 0
    assert state.result is not None
    return state.result


def test_abandon_and_substitute_on_a_losing_seat() -> None:
    result = king_game_with(Abandon(1, "timeouts"), Substitute(1, "house-bot"))
    assert result.ladder_points == (F(12), F(-4), F(-4), F(-4))
    assert set(result.results) == {
        SeatResult(0, "ada", F(12)),
        SeatResult(1, "bora", F(-30)),
        SeatResult(1, "house-bot", F(1)),
        SeatResult(2, "cem", F(-4)),
        SeatResult(3, "deniz", F(-4)),
    }


def test_abandon_and_substitute_on_the_winning_seat() -> None:
    result = king_game_with(Abandon(0, "left"), Substitute(0, "house-bot"))
    by_person = {r.player: r.points for r in result.results}
    assert by_person["ada"] == -30
    assert by_person["house-bot"] == 12


def test_abandon_without_a_substitute() -> None:
    result = king_game_with(Abandon(3, "left"))
    by_person = {r.player: r.points for r in result.results}
    assert by_person["deniz"] == -30


def test_a_substitute_needs_an_abandoned_seat() -> None:
    state = ok(start_deal(new_game(first_declarer="seat0"), ALL_SPADES), Declare(0, "trump_S"))
    with pytest.raises(CommandError):
        decide(state, Substitute(2, "house-bot"))


def test_no_abandon_after_the_game_is_over() -> None:
    state = ok(start_deal(new_game(first_declarer="seat0"), ALL_SPADES), Declare(0, "trump_S"))
    state = play_deal_out(state)
    v = refused(state, Abandon(1, "left"))
    assert v.code == "game_over"
