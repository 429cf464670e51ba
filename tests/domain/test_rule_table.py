"""R-TABLE, R-SEATS and R-LEAD1: the deck, the play order and who leads."""

from __future__ import annotations

import pytest
from helpers import (
    PLAYERS,
    SEED,
    any_card,
    deal,
    first_legal,
    hands,
    new_game,
    ok,
    play_cards,
    play_lowest,
    refused,
    shuffled,
    start_deal,
)

from domain.cards import CARD_NAMES, RANKS, UnknownCard, card_name, parse_card
from domain.commands import Declare, Play
from domain.game import CompletedDeal, Phase
from domain.playout import play_game

# --- R-TABLE --------------------------------------------------------------------------------


def test_the_deck_is_52_distinct_cards_named_rank_then_suit() -> None:
    assert len(CARD_NAMES) == 52 == len(set(CARD_NAMES))
    assert {name[1] for name in CARD_NAMES} == set("SHDC")
    assert {name[0] for name in CARD_NAMES} == set("23456789TJQKA")
    assert card_name(parse_card("QS")) == "QS"
    assert card_name(parse_card("KH")) == "KH"
    assert all(parse_card(name) == i for i, name in enumerate(CARD_NAMES))


# Only the exact names are cards (R-TABLE: "card names in every format"): no lower case, no
# "10" for the ten, no spaces, no symbols.
@pytest.mark.parametrize(
    "bad",
    [
        "1S",
        "KX",
        "",
        "Q",
        "QSS",
        "JOKER",
        "as",
        "aS",
        "As",
        "qs",
        "10S",
        "10H",
        " AS",
        "AS ",
        "A S",
        "AS\n",
        "A♠",
        "ＡS",
    ],
)
def test_there_are_no_other_cards(bad: str) -> None:
    with pytest.raises(UnknownCard):
        parse_card(bad)


@pytest.mark.parametrize(("low", "high"), [(RANKS[i], RANKS[i + 1]) for i in range(12)])
def test_within_a_suit_each_rank_beats_the_one_below(low: str, high: str) -> None:
    # Seat 0 leads the lower spade, seat 1 plays the next higher one; seats 2 and 3 have no
    # spades and discard. Seat 1 wins the trick.
    hs = hands(f"{low}S ...", f"{high}S ...", "...", "...", fill_without={2: "S", 3: "S"})
    st = deal("no_tricks", hs, plays=f"{low}S {high}S")
    st = play_lowest(st, 2)
    assert st.winners == (1,)


# --- R-SEATS --------------------------------------------------------------------------------


@pytest.mark.parametrize("declarer", [0, 1, 2, 3])
def test_after_seat_s_comes_seat_s_plus_one_mod_4(declarer: int) -> None:
    st = deal("no_tricks", shuffled(1), declarer=declarer)
    order = []
    for _ in range(4):
        order.append(st.to_move)
        st = play_lowest(st)
    assert order == [(declarer + k) % 4 for k in range(4)]


def test_a_seat_that_plays_out_of_turn_is_refused_not_your_turn() -> None:
    state = start_deal(new_game(first_declarer="seat0"))
    state = ok(state, Declare(0, "no_tricks"))
    assert state.to_move == 0
    v = refused(state, Play(1, any_card(state.hands[1])))
    # The rule book names no rule id for not_your_turn; R-SEATS is the engine's choice.
    assert (v.code, v.rule) == ("not_your_turn", "R-SEATS")


# --- R-LEAD1 --------------------------------------------------------------------------------


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_the_declarer_leads_to_the_first_trick(seat: int) -> None:
    # Under the default rules the holder of 2D declares deal 1 (R-FIRST) and then leads.
    specs = ["...", "...", "...", "..."]
    specs[seat] = "2D ..."
    state = start_deal(new_game(), hands(*specs))
    assert state.declarer == seat
    state = ok(state, Declare(seat, "trump_S"))
    assert state.to_move == seat


def test_the_winner_of_a_trick_leads_to_the_next() -> None:
    # Seat 0 leads 2C; seat 2 wins with AC and leads the next trick.
    hs = hands("2C ...", "3C ...", "AC ...", "4C ...")
    st = deal("no_tricks", hs, plays="2C 3C AC 4C")
    assert st.winners == (2,)
    assert st.to_move == 2


def test_in_a_whole_game_every_deal_is_led_by_its_declarer_then_by_trick_winners() -> None:
    state, _ = play_game("g-lead1", PLAYERS, SEED, [first_legal] * 4)
    assert state.phase is Phase.OVER
    played = [d for d in state.completed if isinstance(d, CompletedDeal)]
    assert len(played) == 20
    for d in played:
        assert d.tricks[0].leader == d.declarer
        for before, after in zip(d.tricks, d.tricks[1:], strict=False):
            assert after.leader == before.winner


def test_a_card_before_the_contract_is_declared_is_wrong_phase() -> None:
    state = start_deal(new_game(first_declarer="seat0"))
    assert state.phase is Phase.DECLARING
    v = refused(state, Play(0, any_card(state.hands[0])))
    # The rule book names no rule id for wrong_phase; R-LEAD1 is the engine's choice.
    assert (v.code, v.rule) == ("wrong_phase", "R-LEAD1")


def test_the_set_up_helpers_refuse_an_illegal_set_up() -> None:
    # The builders used throughout these tests check every set-up play.
    hs = hands("2C ...", "3C ...", "AC ...", "4C ...")
    with pytest.raises(AssertionError, match="card_not_in_hand"):
        play_cards(deal("no_tricks", hs), "3C")
