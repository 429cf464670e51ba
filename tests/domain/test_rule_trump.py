"""Trump contracts: R-TRUMP, R-RUFF, R-OVERTRUMP, R-RAISE, R-TRUMPLEAD, R-AKQ and R-KING."""

from __future__ import annotations

from fractions import Fraction

import pytest
from helpers import (
    deal,
    finish,
    finish_trick,
    hands,
    legal,
    new_game,
    ok,
    play_cards,
    play_deal_out,
    refused,
    shuffled,
    start_deal,
    why,
)

from domain.commands import Declare, Play
from domain.contracts import TRUMP_CONTRACTS
from domain.deal import scores
from domain.game import Phase

# --- R-TRUMP --------------------------------------------------------------------------------


@pytest.mark.parametrize("contract", [c.value for c in TRUMP_CONTRACTS])
@pytest.mark.parametrize("deal_no", [1, 2, 3])
def test_each_trick_scores_50_to_its_winner_and_a_deal_totals_650(
    contract: str, deal_no: int
) -> None:
    st = finish(deal(contract, shuffled(deal_no), king_tricks=0))
    assert st.tricks == 13
    assert scores(st) == tuple(50 * n for n in st.tricks_won)
    assert sum(scores(st)) == 650


@pytest.mark.parametrize("contract", [c.value for c in TRUMP_CONTRACTS])
def test_each_of_the_four_suits_may_be_named_trump(contract: str) -> None:
    state = start_deal(new_game(first_declarer="seat0"))
    state = ok(state, Declare(0, contract))
    assert state.contract is not None and state.contract.value == contract


@pytest.mark.parametrize("name", ["no_trump", "trump_N", "trump_s", "", "sans_atout"])
def test_no_trump_and_other_unknown_contracts_are_refused_bad_contract(name: str) -> None:
    state = start_deal(new_game(first_declarer="seat0"))
    v = refused(state, Declare(0, name))
    assert (v.code, v.rule) == ("bad_contract", "R-TRUMP")


# --- R-RUFF ---------------------------------------------------------------------------------

# trump_S. Seat 0 leads AD; seat 1 has no diamond and holds two spades (3S, JS).
RUFF = hands("AD ...", "3S JS 2C AH ...", "...", "...", fill_without={1: "DS"})


def test_a_player_void_in_the_suit_led_who_holds_a_trump_must_ruff() -> None:
    st = deal("trump_S", RUFF, plays="AD")
    assert legal(st) == "3S JS"
    for side_card in ("2C", "AH"):
        v = why(st, side_card)
        assert v is not None
        assert (v.code, v.rule) == ("must_ruff", "R-RUFF")


def test_a_player_void_in_the_suit_led_and_in_trump_may_play_anything() -> None:
    hs = hands("AD ...", "2C AH ...", "...", "...", fill_without={1: "DS"})
    st = deal("trump_S", hs, plays="AD")
    assert why(st, "2C") is None and why(st, "AH") is None


# --- R-OVERTRUMP ----------------------------------------------------------------------------


def overtrump_position(seat2_spades: str, **options: object):  # type: ignore[no-untyped-def]
    """trump_S: seat 0 leads AD, seat 1 (no diamonds) ruffs 5S; seat 2 (no diamonds) holds
    `seat2_spades` as its only spades, plus 2C."""
    hs = hands(
        "AD ...",
        "5S ...",
        f"{seat2_spades} 2C ...",
        "...",
        fill_without={1: "D", 2: "DS"},
    )
    return deal("trump_S", hs, plays="AD 5S", **options)


def test_a_ruffer_who_can_beat_the_trump_in_the_trick_must_overtrump() -> None:
    st = overtrump_position("3S 9S")
    assert legal(st) == "9S"
    v = why(st, "3S")
    assert v is not None
    assert (v.code, v.rule) == ("must_overtrump", "R-OVERTRUMP")


def test_a_ruffer_who_cannot_overtrump_may_play_any_trump_and_must_still_ruff() -> None:
    st = overtrump_position("2S 3S")
    assert legal(st) == "2S 3S"  # underruff is forced: trumps are all they may play
    assert why(st, "2C").code == "must_ruff"  # type: ignore[union-attr]


def test_with_must_overtrump_off_any_trump_will_do() -> None:
    st = overtrump_position("3S 9S", must_overtrump=False)
    assert legal(st) == "3S 9S"
    assert why(st, "3S") is None
    assert why(st, "2C").code == "must_ruff"  # type: ignore[union-attr]


def test_overtrump_is_measured_against_the_highest_trump_in_the_trick() -> None:
    # Seat 2 overtrumps with 9S; seat 3 (no diamonds) holds 6S and TS: only TS beats 9S.
    hs = hands(
        "AD ...",
        "5S ...",
        "9S ...",
        "6S TS ...",
        fill_without={1: "D", 2: "D", 3: "DS"},
    )
    st = deal("trump_S", hs, plays="AD 5S 9S")
    assert legal(st) == "TS"
    assert why(st, "6S").code == "must_overtrump"  # type: ignore[union-attr]


# --- R-RAISE --------------------------------------------------------------------------------


def raise_position(seat2_spades: str, **options: object):  # type: ignore[no-untyped-def]
    """trump_S. Trick 1: AD led, seat 1 (no diamonds) ruffs with 2S and wins; trump is broken.
    Trick 2: seat 1 leads 5S; seat 2 holds `seat2_spades` as its only spades."""
    hs = hands(
        "AD ...",
        "2S 5S ...",
        f"3D {seat2_spades} ...",
        "4D ...",
        fill_without={1: "DS", 2: "S"},
    )
    return deal("trump_S", hs, plays="AD 2S 3D 4D | 5S", **options)


def test_when_trump_is_led_a_player_holding_a_higher_trump_must_play_one() -> None:
    st = raise_position("4S 9S")
    assert legal(st) == "9S"
    v = why(st, "4S")
    assert v is not None
    assert (v.code, v.rule) == ("must_raise_trump", "R-RAISE")


def test_a_player_with_only_lower_trumps_may_play_any_of_them() -> None:
    st = raise_position("3S 4S")
    assert legal(st) == "3S 4S"


def test_with_must_raise_trump_lead_off_any_trump_will_do() -> None:
    st = raise_position("4S 9S", must_raise_trump_lead=False)
    assert legal(st) == "4S 9S"
    assert why(st, "4S") is None


def test_raise_is_measured_against_the_highest_trump_in_the_trick() -> None:
    # Seat 1 leads 5S, seat 2 raises with 9S; seat 3 holds 6S and TS: only TS is above 9S.
    hs = hands(
        "AD ...",
        "2S 5S ...",
        "3D 9S ...",
        "4D 6S TS ...",
        fill_without={1: "DS", 2: "S", 3: "S"},
    )
    st = deal("trump_S", hs, plays="AD 2S 3D 4D | 5S 9S")
    assert legal(st) == "TS"


# --- R-TRUMPLEAD ----------------------------------------------------------------------------

# trump_H. Seat 0 (the declarer) holds hearts and other suits.
LEADER = hands("2H AH 3C KS ...", "...", "...", "...")


def test_trump_may_not_be_led_before_a_trump_has_been_played() -> None:
    st = deal("trump_H", LEADER)
    assert not {"2H", "AH"} & set(legal(st).split())
    v = why(st, "AH")
    assert v is not None
    assert (v.code, v.rule) == ("trump_not_broken", "R-TRUMPLEAD")
    assert why(st, "3C") is None


def test_a_leader_holding_nothing_but_trumps_may_lead_trump() -> None:
    hs = hands("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", "...", "...", "...")
    st = deal("trump_H", hs)
    assert why(st, "2H") is None
    assert len(legal(st).split()) == 13


def test_a_ruff_in_an_earlier_trick_breaks_trump() -> None:
    # Trick 1: seat 0 leads AC, seat 1 (no clubs) ruffs with 2H and wins; seat 1 may now
    # lead trump.
    hs = hands("AC ...", "2H 3H ...", "3C ...", "4C ...", fill_without={1: "C"})
    st = deal("trump_H", hs, plays="AC 2H 3C 4C")
    assert st.to_move == 1
    assert why(st, "3H") is None


def test_a_trick_without_trumps_leaves_trump_unbroken() -> None:
    # Trick 1 is all clubs (nobody ruffs): at trick 2 trump is still unbroken.
    hs = hands("AC 2H ...", "2C ...", "3C ...", "4C ...")
    st = deal("trump_H", hs, plays="AC 2C 3C 4C")
    assert st.to_move == 0
    assert why(st, "2H").code == "trump_not_broken"  # type: ignore[union-attr]


def test_with_trump_lead_needs_break_off_trump_may_be_led_at_once() -> None:
    st = deal("trump_H", LEADER, trump_lead_needs_break=False)
    assert why(st, "2H") is None and why(st, "AH") is None


# --- R-AKQ ----------------------------------------------------------------------------------

# trump_S. Seat 0 (the declarer) holds the A, K and Q of spades and no other spade.
AKQ = hands("AS KS QS 2D 3D 4D ...", "...", "...", "...", fill_without={0: "S"})


def test_akq_off_the_holder_of_ace_king_queen_may_not_lead_trump_early() -> None:
    st = deal("trump_S", AKQ)
    assert why(st, "AS").code == "trump_not_broken"  # type: ignore[union-attr]


@pytest.mark.parametrize("option", ["any", "declarer"])
def test_akq_the_holder_of_ace_king_queen_may_lead_them_before_trump_is_broken(
    option: str,
) -> None:
    st = deal("trump_S", AKQ, akq_lead=option)
    for card in ("AS", "KS", "QS"):
        assert why(st, card) is None
    assert {"AS", "KS", "QS"} <= set(legal(st).split())


def test_akq_leading_one_of_them_obliges_the_other_two_on_the_following_leads() -> None:
    st = deal("trump_S", AKQ, akq_lead="any", plays="AS")
    st = finish_trick(st)
    assert st.to_move == 0  # AS wins
    assert legal(st) == "QS KS"
    v = why(st, "2D")
    assert v is not None
    assert (v.code, v.rule) == ("akq_sequence", "R-AKQ")
    st = finish_trick(play_cards(st, "KS"))
    assert legal(st) == "QS"
    assert why(st, "2D").code == "akq_sequence"  # type: ignore[union-attr]
    st = finish_trick(play_cards(st, "QS"))
    assert why(st, "2D") is None  # the debt is paid


def test_akq_declarer_option_does_not_help_another_seat() -> None:
    # Trick 1: seat 0 leads 2C and seat 1 wins it with AC (nobody ruffs): trump is unbroken.
    # Seat 1 holds A, K, Q of spades but is not the declarer.
    hs = hands(
        "2C ...",
        "AC AS KS QS ...",
        "3C ...",
        "4C ...",
        fill_without={1: "S"},
    )
    declarer_only = deal("trump_S", hs, akq_lead="declarer", plays="2C AC 3C 4C")
    assert declarer_only.to_move == 1
    assert why(declarer_only, "AS").code == "trump_not_broken"  # type: ignore[union-attr]
    anyone = deal("trump_S", hs, akq_lead="any", plays="2C AC 3C 4C")
    assert why(anyone, "AS") is None


def test_akq_exception_needs_all_three_honours() -> None:
    hs = hands("AS KS 2D ...", "...", "...", "...", fill_without={0: "S"})
    st = deal("trump_S", hs, akq_lead="any")
    assert why(st, "AS").code == "trump_not_broken"  # type: ignore[union-attr]


# --- R-KING ---------------------------------------------------------------------------------

# Seat 0 holds all thirteen spades.
ALL_SPADES = hands("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", "...", "...", "...")


@pytest.mark.parametrize("declarer", [0, 1, 2, 3])
def test_a_player_who_takes_11_tricks_ends_the_deal_with_a_king(declarer: int) -> None:
    # Declarer or not: seat 0 ruffs or wins every trick, and the deal stops after the 11th.
    st = finish(deal("trump_S", ALL_SPADES, declarer=declarer))
    assert st.over
    assert st.tricks == 11
    assert st.tricks_won == (11, 0, 0, 0)
    assert st.king == 0
    assert scores(st) == (550, 0, 0, 0)


def test_king_tricks_0_switches_king_off() -> None:
    st = finish(deal("trump_S", ALL_SPADES, king_tricks=0))
    assert st.tricks == 13
    assert st.king == -1
    assert scores(st) == (650, 0, 0, 0)


def test_king_tricks_option_sets_the_number() -> None:
    st = finish(deal("trump_S", ALL_SPADES, king_tricks=9))
    assert (st.tricks, st.king) == (9, 0)


def test_king_is_for_trump_deals_only() -> None:
    # no_tricks: seat 0 takes all 13 tricks; that is no King, just -650.
    st = finish(deal("no_tricks", ALL_SPADES))
    assert st.tricks == 13 and st.king == -1
    assert scores(st) == (-650, 0, 0, 0)


def test_a_king_ends_the_whole_game_at_once() -> None:
    state = start_deal(new_game(first_declarer="seat0"), ALL_SPADES)
    state = play_deal_out(ok(state, Declare(0, "trump_S")))
    assert state.phase is Phase.OVER
    assert state.king == 0
    assert state.deals_played == 1
    assert state.result is not None
    assert state.result.winners == (0,)
    assert state.result.ladder_points == (Fraction(12), Fraction(-4), Fraction(-4), Fraction(-4))
    assert refused(state, Play(1, "2H")).code == "game_over"


def test_with_king_off_the_game_goes_on_after_13_tricks() -> None:
    state = start_deal(new_game(first_declarer="seat0", king_tricks=0), ALL_SPADES)
    state = play_deal_out(ok(state, Declare(0, "trump_S")))
    assert state.phase is Phase.AWAITING_DEAL
    assert state.deal_no == 2
    assert state.totals == (650, 0, 0, 0)
    assert state.king is None
