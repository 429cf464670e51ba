"""Redeals: R-WEAKHAND, and the queens_one_each_void option."""

from __future__ import annotations

import pytest
from helpers import (
    SEED,
    deals_until,
    hands,
    new_game,
    ok,
    play_deal_out,
    refused,
    shuffled,
    start_deal,
    whole_deal,
)

from domain import playout
from domain.cards import QUEENS
from domain.commands import AskRedeal, Declare, Play
from domain.contracts import PENALTY_CONTRACTS, TRUMP_CONTRACTS, Contract
from domain.events import DealEnded, RedealAsked
from domain.game import CompletedDeal, Phase, RedealtHands, run
from domain.view import legal_actions

# Seat 0 holds nothing above a ten.
WEAK = hands("2S 3S 4S 5S 6S 7S 8S 9S TS 2H 3H 4H 5H", "...", "...", "...")
# The same, but with one jack.
ONE_JACK = hands("2S 3S 4S 5S 6S 7S 8S 9S TS 2H 3H 4H JH", "...", "...", "...")


def forced_to_trump(**options: object):  # type: ignore[no-untyped-def]
    """short12 (two penalty rights each): seat 0 declares a penalty in deals 1 and 5 and so
    declares deal 9 with no penalty right left, holding the hands given to start_deal."""
    state = new_game(mode="short12", first_declarer="seat0", **options)
    state = whole_deal(state, "no_tricks")
    state = deals_until(state, 5)
    state = whole_deal(state, "rifki")
    state = deals_until(state, 9)
    assert state.declarer == 0 and state.penalty_left[0] == 0 and state.trump_left[0] == 1
    return state


# --- R-WEAKHAND -----------------------------------------------------------------------------


def test_a_forced_trump_declarer_with_no_card_above_ten_may_ask_for_a_redeal() -> None:
    state = start_deal(forced_to_trump(), WEAK)
    assert any(a.kind == "redeal" for a in legal_actions(state, 0))
    rights = (state.trump_left, state.penalty_left, state.uses)
    new, out = run(state, AskRedeal(0))
    assert out == [RedealAsked(9, 0)]
    # The same deal number, the next shuffle attempt, no right used, the same declarer.
    assert new.phase is Phase.AWAITING_DEAL
    assert (new.deal_no, new.attempt) == (9, 1)
    assert (new.trump_left, new.penalty_left, new.uses) == rights
    assert isinstance(new.completed[-1], RedealtHands)
    assert new.completed[-1].hands == WEAK
    again = start_deal(new, hands("...", "2D ...", "...", "..."))
    assert again.declarer == 0
    assert again.phase is Phase.DECLARING
    assert legal_actions(again, 0)  # and declares as usual
    assert set(a.contract for a in legal_actions(again, 0) if a.kind == "declare") == set(
        TRUMP_CONTRACTS
    )


def test_a_redeal_deals_new_hands_from_the_next_shuffle_attempt() -> None:
    state = ok(start_deal(forced_to_trump(), WEAK), AskRedeal(0))
    state, _ = playout.deal_if_due(state, SEED)  # the service's dealing step
    assert state.hands == shuffled(9, 1)  # king-shuffle/1 for deal 9, attempt 1
    assert shuffled(9, 1) != shuffled(9, 0)


def test_redeal_refused_to_a_declarer_who_still_has_a_penalty_right() -> None:
    state = start_deal(new_game(first_declarer="seat0"), WEAK)  # deal 1: all rights left
    v = refused(state, AskRedeal(0))
    assert (v.code, v.rule) == ("redeal_not_allowed", "R-WEAKHAND")
    assert all(a.kind != "redeal" for a in legal_actions(state, 0))


def test_redeal_refused_to_a_hand_with_a_card_above_ten() -> None:
    state = start_deal(forced_to_trump(), ONE_JACK)
    v = refused(state, AskRedeal(0))
    assert (v.code, v.rule) == ("redeal_not_allowed", "R-WEAKHAND")


def test_redeal_refused_when_weak_hand_redeal_is_off() -> None:
    state = start_deal(forced_to_trump(weak_hand_redeal=False), WEAK)
    v = refused(state, AskRedeal(0))
    assert (v.code, v.rule) == ("redeal_not_allowed", "R-WEAKHAND")


def test_redeal_asked_by_another_seat_is_not_your_turn() -> None:
    state = start_deal(forced_to_trump(), WEAK)
    assert refused(state, AskRedeal(1)).code == "not_your_turn"


def test_redeal_during_play_is_wrong_phase() -> None:
    state = ok(start_deal(forced_to_trump(), WEAK), Declare(0, "trump_C"))
    assert refused(state, AskRedeal(0)).code == "wrong_phase"


# --- queens_one_each_void -------------------------------------------------------------------

# no_queens, seat 0 declares (it holds 2D). Four tricks, each won by a different seat with
# its own queen; the fourth queen ends the deal (R-EARLYEND):
#   trick 1  seat 0 leads QS, 2S 3S 4S follow     -> seat 0 takes QS
#   trick 2  seat 0 leads 2H, seat 1 plays QH     -> seat 1 takes QH
#   trick 3  seat 1 leads 3D, seat 2 plays QD     -> seat 2 takes QD
#   trick 4  seat 2 leads 2C, seat 3 plays QC     -> seat 3 takes QC
ONE_EACH = hands(
    "QS 2H 2D 3C ...",
    "2S QH 3D 4C ...",
    "3S 3H QD 2C ...",
    "4S 4H 4D QC ...",
)
ONE_EACH_PLAYS = "QS 2S 3S 4S | 2H QH 3H 4H | 3D QD 4D 2D | 2C QC 3C 4C"


def play_one_each(**options: object):  # type: ignore[no-untyped-def]
    state = ok(start_deal(new_game(**options), ONE_EACH), Declare(0, "no_queens"))
    assert state.declarer == 0
    for name in ONE_EACH_PLAYS.split():
        if name != "|":
            state = ok(state, Play(state.to_move, name))  # type: ignore[arg-type]
    return state


def test_queens_one_each_void_the_deal_does_not_count_and_is_declared_again() -> None:
    state = play_one_each(queens_one_each_void=True)
    ended = state.completed[-1]
    assert ended.scores == (-100, -100, -100, -100)  # type: ignore[union-attr]
    assert ended.void  # type: ignore[union-attr]
    assert state.totals == (0, 0, 0, 0)
    # The declarer's right and the contract's use are given back ...
    assert state.penalty_left == (3, 3, 3, 3)
    assert state.uses[PENALTY_CONTRACTS.index(Contract.NO_QUEENS)] == 0
    # ... and the same declarer declares the same deal number again on the next attempt.
    assert state.phase is Phase.AWAITING_DEAL
    assert (state.deal_no, state.attempt) == (1, 1)
    again = start_deal(state, hands("...", "...", "2D ...", "..."))  # 2D elsewhere now
    assert again.declarer == 0
    assert refused(again, Declare(1, "no_queens")).code == "not_your_turn"
    ok(again, Declare(0, "no_queens"))


def test_without_the_option_one_queen_each_counts_like_any_deal() -> None:
    state = play_one_each()
    assert state.totals == (-100, -100, -100, -100)
    assert state.penalty_left == (2, 3, 3, 3)
    assert (state.deal_no, state.attempt) == (2, 0)
    assert start_deal(state).declarer == 1


def test_the_void_event_says_so() -> None:
    state = ok(start_deal(new_game(queens_one_each_void=True), ONE_EACH), Declare(0, "no_queens"))
    names = [n for n in ONE_EACH_PLAYS.split() if n != "|"]
    for name in names[:-1]:
        state = ok(state, Play(state.to_move, name))  # type: ignore[arg-type]
    _, events = run(state, Play(state.to_move, names[-1]))  # type: ignore[arg-type]
    assert isinstance(events, list)
    ended = [e for e in events if isinstance(e, DealEnded)]
    assert len(ended) == 1 and ended[0].void and ended[0].tricks == 4


@pytest.mark.parametrize("deal_no", [1, 2, 3])
def test_a_no_queens_deal_with_another_spread_is_not_void(deal_no: int) -> None:
    state = new_game(queens_one_each_void=True)
    state = start_deal(state, shuffled(deal_no))
    state = play_deal_out(ok(state, Declare(state.declarer, "no_queens")))
    ended = state.completed[-1]
    assert isinstance(ended, CompletedDeal)
    queens_taken = [0, 0, 0, 0]
    for trick in ended.tricks:
        queens_taken[trick.winner] += sum(1 for c in trick.cards if QUEENS >> c & 1)
    assert queens_taken != [1, 1, 1, 1]
    assert not ended.void
    assert state.deal_no == 2
