"""Penalty contracts: the score table, R-HEARTLEAD, R-DISCARD, R-DROP and R-EARLYEND."""

from __future__ import annotations

import pytest
from helpers import deal, finish, finish_trick, hands, legal, names, shuffled, trick_by_trick, why

from domain.cards import BOYS, KING_OF_HEARTS, QUEENS, SUIT_MASKS
from domain.deal import legal_mask, scores

HEARTS = SUIT_MASKS[1]
SEEDS = [1, 2, 3, 4, 5, 6]

# --- the table of §6 ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("contract", "deal_total"),
    [
        ("no_tricks", -650),
        ("no_hearts", -390),
        ("no_queens", -400),
        ("no_boys", -480),
        ("last_two", -360),
        ("rifki", -320),
    ],
)
@pytest.mark.parametrize("deal_no", SEEDS)
def test_a_finished_penalty_deal_adds_up_to_its_total(
    contract: str, deal_total: int, deal_no: int
) -> None:
    st = finish(deal(contract, shuffled(deal_no)))
    assert st.over
    assert sum(scores(st)) == deal_total


@pytest.mark.parametrize(
    ("contract", "cards", "each"),
    [
        ("no_hearts", HEARTS, -30),
        ("no_queens", QUEENS, -100),
        ("no_boys", BOYS, -60),
        ("rifki", KING_OF_HEARTS, -320),
    ],
)
@pytest.mark.parametrize("deal_no", SEEDS)
def test_card_contracts_charge_each_penalty_card_to_the_seat_that_took_it(
    contract: str, cards: int, each: int, deal_no: int
) -> None:
    st = finish(deal(contract, shuffled(deal_no)))
    assert scores(st) == tuple((taken & cards).bit_count() * each for taken in st.taken)


@pytest.mark.parametrize("deal_no", SEEDS)
def test_no_tricks_charges_50_per_trick(deal_no: int) -> None:
    st = finish(deal("no_tricks", shuffled(deal_no)))
    assert scores(st) == tuple(-50 * n for n in st.tricks_won)


@pytest.mark.parametrize("deal_no", SEEDS)
def test_last_two_charges_180_for_trick_12_and_180_for_trick_13(deal_no: int) -> None:
    st = finish(deal("last_two", shuffled(deal_no)))
    expected = [0, 0, 0, 0]
    expected[st.winners[11]] -= 180
    expected[st.winners[12]] -= 180
    assert scores(st) == tuple(expected)


# --- R-HEARTLEAD ----------------------------------------------------------------------------

HEART_LEADER = hands("2H 5H 3C AS ...", "...", "...", "...")


@pytest.mark.parametrize("contract", ["no_hearts", "rifki"])
def test_a_heart_may_not_be_led_before_a_heart_has_been_played(contract: str) -> None:
    st = deal(contract, HEART_LEADER)
    assert not legal_mask(st) & HEARTS
    v = why(st, "5H")
    assert v is not None
    assert (v.code, v.rule) == ("hearts_not_broken", "R-HEARTLEAD")
    assert why(st, "3C") is None


@pytest.mark.parametrize("contract", ["no_hearts", "rifki"])
def test_a_leader_holding_nothing_but_hearts_may_lead_one(contract: str) -> None:
    hs = hands("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", "...", "...", "...")
    st = deal(contract, hs)
    assert why(st, "2H") is None


@pytest.mark.parametrize("contract", ["no_hearts", "rifki"])
def test_a_heart_discarded_in_an_earlier_trick_breaks_hearts(contract: str) -> None:
    # Trick 1: 2C led; seat 1 (no clubs, no KH) throws 3H; seat 3 wins with AC and may lead
    # a heart at trick 2.
    hs = hands(
        "2C ...",
        "3H ...",
        "3C KH ...",
        "AC 4H ...",
        fill_without={1: "C"},
    )
    st = deal(contract, hs, plays="2C 3H 3C AC")
    assert st.to_move == 3
    assert why(st, "4H") is None


@pytest.mark.parametrize("contract", ["no_tricks", "no_queens", "no_boys", "last_two"])
def test_in_the_other_penalty_contracts_hearts_may_be_led_at_once(contract: str) -> None:
    st = deal(contract, HEART_LEADER)
    assert why(st, "2H") is None and why(st, "5H") is None


# --- R-DISCARD ------------------------------------------------------------------------------

# Seat 0 leads 2S; seat 1 holds no spade. Seat 1's whole hand is written out.
PLAIN = "2C 3C 4C 5C 6C 7C 8C 2D 3D 4D 5D"


@pytest.mark.parametrize(
    ("contract", "seat1", "must_play", "refused_card"),
    [
        ("no_hearts", f"5H 9H {PLAIN}", "5H 9H", "2C"),
        ("no_queens", f"QH QC {PLAIN}", "QH QC", "2C"),
        ("no_boys", f"KH JD {PLAIN}", "KH JD", "2D"),
        ("rifki", f"KH 5H {PLAIN}", "KH", "5H"),
    ],
)
def test_a_void_player_must_discard_a_penalty_card(
    contract: str, seat1: str, must_play: str, refused_card: str
) -> None:
    st = deal(contract, hands("2S ...", seat1, "...", "..."), plays="2S")
    assert legal(st) == must_play
    v = why(st, refused_card)
    assert v is not None
    assert (v.code, v.rule) == ("must_discard_penalty", "R-DISCARD")


@pytest.mark.parametrize(
    ("contract", "seat1"),
    [
        ("no_tricks", f"AH QH {PLAIN}"),
        ("last_two", f"AH QH {PLAIN}"),
        ("rifki", f"AH QH {PLAIN}"),  # no KH: the player discards freely
    ],
)
def test_discards_are_free_in_no_tricks_last_two_and_in_rifki_without_kh(
    contract: str, seat1: str
) -> None:
    hs = hands("2S ...", seat1, "...", "...")
    st = deal(contract, hs, plays="2S")
    assert legal(st) == names(hs[1])  # all 13 cards


def test_rifki_void_must_discard_heart_option() -> None:
    without_kh = hands("2S ...", f"AH QH {PLAIN}", "...", "...")
    st = deal("rifki", without_kh, plays="2S", rifki_void_must_discard_heart=True)
    assert legal(st) == "QH AH"
    assert why(st, "2C").code == "must_discard_penalty"  # type: ignore[union-attr]
    with_kh = hands("2S ...", f"KH QH {PLAIN}", "...", "...")
    st = deal("rifki", with_kh, plays="2S", rifki_void_must_discard_heart=True)
    assert legal(st) == "KH"
    assert why(st, "QH").code == "must_discard_penalty"  # type: ignore[union-attr]


# --- R-DROP ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("contract", "led", "seat1_spades", "must_play"),
    [
        # The rule book's examples.
        ("no_queens", "KS", "QS 4S", "QS"),
        ("no_boys", "QS", "KS JS 4S", "JS"),
        # Several penalty cards below the top card: any of them.
        ("no_boys", "AS", "KS JS 4S", "JS KS"),
        ("no_queens", "AS", "QS 2S", "QS"),
    ],
)
def test_a_follower_must_drop_a_penalty_card_under_a_higher_card(
    contract: str, led: str, seat1_spades: str, must_play: str
) -> None:
    hs = hands(f"{led} ...", f"{seat1_spades} ...", "...", "...", fill_without={1: "S"})
    st = deal(contract, hs, plays=led)
    assert legal(st) == must_play
    v = why(st, "4S" if "4S" in seat1_spades else "2S")
    assert v is not None
    assert (v.code, v.rule) == ("must_drop_penalty", "R-DROP")


# The rule book's third R-DROP example. Trick 1: 2S led, seat 2 (no spades, no KH) throws 2H,
# seat 3 wins with 4S. Trick 2: seat 3 leads AH; seat 0 holds KH and 3H.
RIFKI_EXAMPLE = hands(
    "2S KH 3H ...",
    "3S ...",
    "2H ...",
    "4S AH ...",
    fill_without={0: "H", 2: "S"},
)
RIFKI_EXAMPLE_PLAYS = "2S 3S 2H 4S | AH"


def test_drop_kh_under_the_led_ace_of_hearts_in_rifki() -> None:
    st = deal("rifki", RIFKI_EXAMPLE, plays=RIFKI_EXAMPLE_PLAYS)
    assert st.to_move == 0
    assert legal(st) == "KH"
    assert why(st, "3H").code == "must_drop_penalty"  # type: ignore[union-attr]


def test_drop_counts_the_highest_card_in_the_trick_not_only_the_lead() -> None:
    # no_queens: 5S led, seat 1 plays KS; seat 2 holds QS and 3S and must drop QS.
    hs = hands("5S ...", "KS ...", "QS 3S ...", "...", fill_without={2: "S"})
    st = deal("no_queens", hs, plays="5S KS")
    assert legal(st) == "QS"
    assert why(st, "3S").code == "must_drop_penalty"  # type: ignore[union-attr]


def test_drop_kh_under_a_played_ace_of_hearts() -> None:
    # rifki: hearts broken in trick 1; seat 3 leads 5H, seat 0 plays AH, seat 1 must drop KH.
    hs = hands(
        "2S AH ...",
        "3S KH 3H ...",
        "2H ...",
        "4S 5H ...",
        fill_without={1: "H", 2: "S"},
    )
    st = deal("rifki", hs, plays="2S 3S 2H 4S | 5H AH")
    assert legal(st) == "KH"


@pytest.mark.parametrize(
    ("contract", "led", "seat1_spades"),
    [
        ("no_queens", "JS", "QS 4S"),  # nothing above QS on the trick
        ("no_boys", "QS", "KS 4S"),  # KS is above QS: nothing to drop
        ("no_tricks", "AS", "QS 4S"),  # R-DROP is for no_queens, no_boys and rifki only
        ("last_two", "AS", "KS 4S"),
    ],
)
def test_no_drop_when_no_penalty_card_is_below_the_top_card(
    contract: str, led: str, seat1_spades: str
) -> None:
    hs = hands(f"{led} ...", f"{seat1_spades} ...", "...", "...", fill_without={1: "S"})
    st = deal(contract, hs, plays=led)
    assert legal(st) == names(hs[1] & SUIT_MASKS[0])
    assert why(st, "4S") is None


def test_no_drop_in_no_hearts() -> None:
    # Hearts are broken in trick 1 (seat 1, without spades, must throw a heart); seat 3 leads
    # AH at trick 2 and seat 0 may keep its hearts low or high as it likes.
    hs = hands(
        "2S 5H 9H ...",
        "2H ...",
        "3S ...",
        "4S AH ...",
        fill_without={0: "H", 1: "S"},
    )
    st = deal("no_hearts", hs, plays="2S 2H 3S 4S | AH")
    assert st.to_move == 0
    assert legal(st) == "5H 9H"


# --- R-EARLYEND -----------------------------------------------------------------------------


def test_rifki_ends_after_the_trick_in_which_kh_falls_and_that_trick_is_finished() -> None:
    st = deal("rifki", RIFKI_EXAMPLE, plays=f"{RIFKI_EXAMPLE_PLAYS} KH")
    assert not st.over  # KH has fallen but the trick goes on
    st = finish_trick(st)
    assert st.over
    assert st.tricks == 2
    assert scores(st) == (0, 0, 0, -320)
    assert legal_mask(st) == 0
    v = why(st, "3H")
    assert v is not None
    # The rule book names no rule for deal_over; R-EARLYEND is the engine's choice.
    assert (v.code, v.rule) == ("deal_over", "R-EARLYEND")


CARD_CONTRACTS = [
    ("no_hearts", HEARTS),
    ("no_queens", QUEENS),
    ("no_boys", BOYS),
    ("rifki", KING_OF_HEARTS),
]


@pytest.mark.parametrize(("contract", "penalty_cards"), CARD_CONTRACTS)
@pytest.mark.parametrize("deal_no", SEEDS)
def test_a_card_contract_ends_right_after_the_trick_of_its_last_penalty_card(
    contract: str, penalty_cards: int, deal_no: int
) -> None:
    after_each_trick = trick_by_trick(deal(contract, shuffled(deal_no)))
    last = after_each_trick[-1]
    assert last.played & penalty_cards == penalty_cards
    for earlier in after_each_trick[:-1]:
        assert not earlier.over
        assert earlier.played & penalty_cards != penalty_cards


@pytest.mark.parametrize(("contract", "penalty_cards"), CARD_CONTRACTS)
def test_early_ends_do_happen(contract: str, penalty_cards: int) -> None:
    # Over the same deals, each contract ends before trick 13 at least once.
    lengths = [finish(deal(contract, shuffled(n))).tricks for n in SEEDS]
    assert min(lengths) < 13, lengths


@pytest.mark.parametrize(
    "contract", ["no_hearts", "no_queens", "no_boys", "rifki", "no_tricks", "last_two"]
)
@pytest.mark.parametrize("deal_no", SEEDS)
def test_end_early_off_plays_13_tricks_and_gives_the_same_scores(
    contract: str, deal_no: int
) -> None:
    early = finish(deal(contract, shuffled(deal_no)))
    full = finish(deal(contract, shuffled(deal_no), end_early=False))
    assert full.tricks == 13
    assert scores(full) == scores(early)


@pytest.mark.parametrize("contract", ["no_tricks", "last_two"])
@pytest.mark.parametrize("deal_no", SEEDS)
def test_no_tricks_and_last_two_always_play_13_tricks(contract: str, deal_no: int) -> None:
    assert finish(deal(contract, shuffled(deal_no))).tricks == 13
