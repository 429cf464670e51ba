"""R-MODE, R-CAP, R-FIRST, R-ROTATE and R-ORDER: the shape of a game and who declares what."""

from __future__ import annotations

from collections import Counter

import pytest
from helpers import (
    PLAYERS,
    SEED,
    deals_until,
    declared_by,
    first_legal,
    hands,
    new_game,
    ok,
    play_deal_out,
    refused,
    start_deal,
    trumps_first,
    whole_deal,
)

from domain import playout
from domain.commands import AskRedeal, Declare, Play
from domain.contracts import PENALTY_CONTRACTS, TRUMP_CONTRACTS, Contract
from domain.game import Phase, legal_contracts
from domain.playout import Policy, play_game
from domain.rules import Rules

# --- R-MODE ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "deals", "trumps", "penalties"),
    [("standard20", 20, 2, 3), ("short12", 12, 1, 2)],
)
def test_each_player_starts_with_the_rights_of_the_mode(
    mode: str, deals: int, trumps: int, penalties: int
) -> None:
    state = new_game(mode=mode)
    assert state.rules.deals == deals
    assert state.trump_left == (trumps,) * 4
    assert state.penalty_left == (penalties,) * 4


@pytest.mark.parametrize(
    "policy", [first_legal, trumps_first], ids=["penalties-first", "trumps-first"]
)
@pytest.mark.parametrize(
    ("mode", "deals", "trumps", "penalties"),
    [("standard20", 20, 2, 3), ("short12", 12, 1, 2)],
)
def test_a_whole_game_has_the_deals_and_declarations_of_its_mode(
    mode: str, deals: int, trumps: int, penalties: int, policy: Policy
) -> None:
    # R-ORDER too: the rights can be used in any order (penalties first or trumps first).
    state, _ = play_game("g-mode", PLAYERS, SEED, [policy] * 4, rules=Rules(mode=mode))
    assert state.phase is Phase.OVER
    assert state.king is None
    declared = declared_by(state)
    assert len(declared) == deals
    for seat in range(4):
        mine = [Contract(c) for s, c in declared if s == seat]
        assert sum(c.is_trump for c in mine) == trumps
        assert sum(not c.is_trump for c in mine) == penalties
    assert state.trump_left == (0, 0, 0, 0)
    assert state.penalty_left == (0, 0, 0, 0)


def test_a_finished_standard20_game_sums_to_zero() -> None:
    # Eight trump deals (+5200) and twelve penalty deals (-5200).
    state, _ = play_game("g-zero", PLAYERS, SEED, [first_legal] * 4)
    assert state.phase is Phase.OVER and state.king is None
    assert sum(state.totals) == 0


def test_after_the_last_deal_every_action_is_game_over() -> None:
    state, _ = play_game("g-over", PLAYERS, SEED, [first_legal] * 4, rules=Rules(mode="short12"))
    assert state.phase is Phase.OVER
    for command in (Declare(0, "trump_S"), AskRedeal(0), Play(0, "2S")):
        v = refused(state, command)
        # The rule book names no rule id for game_over; R-MODE (the number of deals) is the
        # engine's choice.
        assert (v.code, v.rule) == ("game_over", "R-MODE")


# --- R-CAP ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["standard20", "short12"])
@pytest.mark.parametrize("contract", [c.value for c in PENALTY_CONTRACTS])
def test_a_penalty_contract_may_be_declared_twice_per_game_by_all_players(
    mode: str, contract: str
) -> None:
    state = new_game(mode=mode, first_declarer="seat0")
    state = whole_deal(state, contract)  # seat 0
    state = whole_deal(state, contract)  # seat 1
    state = start_deal(state)
    assert state.declarer == 2 and state.penalty_left[2] > 0
    v = refused(state, Declare(2, contract))
    assert (v.code, v.rule) == ("contract_exhausted", "R-CAP")
    assert Contract(contract) not in legal_contracts(state)


def test_trump_suits_have_no_cap() -> None:
    state = new_game(first_declarer="seat0")
    for _ in range(4):  # four different seats, the same trump suit
        state = whole_deal(state, "trump_S")
    assert [c for _, c in declared_by(state)] == ["trump_S"] * 4
    state = start_deal(state)
    assert Contract.TRUMP_S in legal_contracts(state)


# --- R-FIRST --------------------------------------------------------------------------------


@pytest.mark.parametrize("holder", [0, 1, 2, 3])
def test_the_holder_of_the_two_of_diamonds_declares_deal_one(holder: int) -> None:
    specs = ["...", "...", "...", "..."]
    specs[holder] = "2D ..."
    state = start_deal(new_game(), hands(*specs))
    assert state.declarer == holder
    assert state.to_move == holder
    other = (holder + 1) % 4
    v = refused(state, Declare(other, "trump_S"))
    assert v.code == "not_your_turn"


@pytest.mark.parametrize("holder", [1, 2, 3])
def test_option_seat0_makes_seat_0_declare_deal_one(holder: int) -> None:
    specs = ["...", "...", "...", "..."]
    specs[holder] = "2D ..."
    state = start_deal(new_game(first_declarer="seat0"), hands(*specs))
    assert state.declarer == 0


# --- R-ROTATE -------------------------------------------------------------------------------


def test_the_next_deal_is_declared_by_the_seat_after_the_previous_declarer() -> None:
    state = start_deal(new_game(), hands("...", "...", "2D ...", "..."))
    assert state.declarer == 2
    state = play_deal_out(ok(state, Declare(2, "trump_H")))
    assert state.phase is Phase.AWAITING_DEAL and state.deal_no == 2
    state = start_deal(state, hands("2D ...", "...", "...", "..."))  # 2D does not matter now
    assert state.declarer == 3


@pytest.mark.parametrize(("mode", "times"), [("standard20", 5), ("short12", 3)])
def test_every_player_declares_the_same_number_of_times(mode: str, times: int) -> None:
    state, _ = play_game("g-rotate", PLAYERS, SEED, [first_legal] * 4, rules=Rules(mode=mode))
    seats = [s for s, _ in declared_by(state)]
    first = seats[0]
    assert seats == [(first + k) % 4 for k in range(len(seats))]
    assert Counter(seats) == {0: times, 1: times, 2: times, 3: times}


# --- R-ORDER --------------------------------------------------------------------------------


def test_a_declarer_with_no_trump_right_left_must_declare_a_penalty() -> None:
    state = new_game(mode="short12", first_declarer="seat0")  # one trump right each
    state = whole_deal(state, "trump_S")  # seat 0 uses it
    state = deals_until(state, 5)
    state = start_deal(state)
    assert state.declarer == 0 and state.trump_left[0] == 0
    for trump in TRUMP_CONTRACTS:
        v = refused(state, Declare(0, trump.value))
        assert v.code == "no_right_left"
        assert v.rule in ("R-ORDER", "R-MODE")  # §10: no_right_left (R-MODE/R-ORDER)
    allowed = legal_contracts(state)
    assert allowed and all(not c.is_trump for c in allowed)
    assert all(state.uses[PENALTY_CONTRACTS.index(c)] < 2 for c in allowed)


def test_a_declarer_with_no_penalty_right_left_must_declare_trump() -> None:
    state = new_game(mode="short12", first_declarer="seat0")  # two penalty rights each
    state = whole_deal(state, "no_tricks")  # seat 0, deal 1
    state = deals_until(state, 5)
    state = whole_deal(state, "rifki")  # seat 0, deal 5
    state = deals_until(state, 9)
    state = start_deal(state)
    assert state.declarer == 0 and state.penalty_left[0] == 0
    v = refused(state, Declare(0, "no_queens"))
    assert v.code == "no_right_left"
    assert v.rule in ("R-ORDER", "R-MODE")
    assert set(legal_contracts(state)) == set(TRUMP_CONTRACTS)


def test_the_last_declarer_of_standard20_may_be_forced_into_the_one_contract_left() -> None:
    # Everyone declares trumps first: deals 9-20 use the 12 penalty slots, so the declarer of
    # deal 20 holds one penalty right and exactly one contract is still below its cap.
    state, _ = playout.new_game("g-forced", PLAYERS, SEED)
    while not (state.deal_no == 20 and state.phase is Phase.DECLARING):
        state, _ = playout.advance(state, SEED, [trumps_first] * 4)
    seat = state.declarer
    assert (state.trump_left[seat], state.penalty_left[seat]) == (0, 1)
    assert sum(state.uses) == 11
    (only,) = legal_contracts(state)
    assert state.uses[PENALTY_CONTRACTS.index(only)] == 1
    for other in PENALTY_CONTRACTS:
        if other is not only:
            assert refused(state, Declare(seat, other.value)).code == "contract_exhausted"
