"""R-FOLLOW, R-WIN and R-NOBEAT (with the must_beat_led_suit option): play in every contract."""

from __future__ import annotations

import pytest
from helpers import deal, hands, legal, names, why

from domain.contracts import ALL_CONTRACTS

# Clubs are led below; in trump_C that would be a trump lead (R-TRUMPLEAD, R-RAISE: tested in
# test_rule_trump.py), so these tests run in the nine other contracts.
CLUBS_PLAIN = [c.value for c in ALL_CONTRACTS if c.value != "trump_C"]

# --- R-FOLLOW -------------------------------------------------------------------------------

# Seat 0 leads 2C. Seat 1 holds two clubs (9C, KC) and no queen/boy/heart trouble around them.
FOLLOW = hands("2C ...", "9C KC 3S 4D ...", "...", "...", fill_without={1: "C"})


@pytest.mark.parametrize("contract", CLUBS_PLAIN)
def test_a_player_holding_the_suit_led_must_follow(contract: str) -> None:
    st = deal(contract, FOLLOW, plays="2C")
    assert legal(st) == "9C KC"
    v = why(st, "3S")
    assert v is not None
    assert (v.code, v.rule) == ("must_follow_suit", "R-FOLLOW")
    assert why(st, "4D").code == "must_follow_suit"  # type: ignore[union-attr]
    assert why(st, "9C") is None
    assert why(st, "KC") is None


@pytest.mark.parametrize("contract", ["no_tricks", "last_two"])
def test_a_player_void_in_the_suit_led_may_play_any_card_when_nothing_else_binds(
    contract: str,
) -> None:
    hs = hands("2C ...", "AS KH QD 2H ...", "...", "...", fill_without={1: "C"})
    st = deal(contract, hs, plays="2C")
    assert legal(st) == names(hs[1])  # all 13 cards
    assert why(st, "AS") is None and why(st, "KH") is None and why(st, "QD") is None


# --- R-WIN ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("contract", "thrown"),
    [
        ("no_tricks", "AS"),
        ("no_hearts", "AH"),
        ("no_queens", "QS"),
        ("no_boys", "KS"),
        ("last_two", "AS"),
        ("rifki", "AS"),
    ],
)
def test_without_trump_the_highest_card_of_the_suit_led_wins(contract: str, thrown: str) -> None:
    # 5D led; seat 1 plays 9D; seat 2 (no diamonds) throws a high card of another suit (a
    # penalty card where R-DISCARD asks for one); seat 3 plays 7D. 9D wins.
    hs = hands("5D ...", "9D ...", f"{thrown} ...", "7D ...", fill_without={2: "DH"})
    st = deal(contract, hs, plays=f"5D 9D {thrown} 7D")
    assert st.winners == (1,)


def test_in_a_penalty_contract_hearts_are_no_trump() -> None:
    # no_hearts: a heart thrown on a spade trick does not win it.
    hs = hands("2S ...", "AH ...", "3S ...", "4S ...", fill_without={1: "S"})
    st = deal("no_hearts", hs, plays="2S AH 3S 4S")
    assert st.winners == (3,)


def test_any_trump_beats_the_ace_of_the_suit_led() -> None:
    # trump_H: AD led, seat 1 (no diamonds) ruffs with 2H; seats 2 and 3 follow with diamonds.
    hs = hands("AD ...", "2H ...", "KD ...", "QD ...", fill_without={1: "D"})
    st = deal("trump_H", hs, plays="AD 2H KD QD")
    assert st.winners == (1,)


def test_the_highest_trump_wins_when_several_are_played() -> None:
    hs = hands(
        "AD ...",
        "5H ...",
        "KD ...",
        "9H ...",
        fill_without={1: "DH", 3: "DH"},
    )
    st = deal("trump_H", hs, plays="AD 5H KD 9H")
    assert st.winners == (3,)


def test_in_a_trump_contract_a_higher_card_of_another_plain_suit_does_not_win() -> None:
    # trump_S: 5D led; seat 1 (no diamonds, no spades) throws AC; 9D wins.
    hs = hands("5D ...", "AC ...", "9D ...", "7D ...", fill_without={1: "DS"})
    st = deal("trump_S", hs, plays="5D AC 9D 7D")
    assert st.winners == (2,)


# --- R-NOBEAT -------------------------------------------------------------------------------

# Seat 0 leads TC; seat 1 holds 3C and KC (and no other club).
BEAT = hands("TC ...", "3C KC ...", "...", "...", fill_without={1: "C"})


@pytest.mark.parametrize("contract", CLUBS_PLAIN)
def test_by_default_there_is_no_duty_to_beat_the_trick(contract: str) -> None:
    st = deal(contract, BEAT, plays="TC")
    assert legal(st) == "3C KC"
    assert why(st, "3C") is None


@pytest.mark.parametrize("contract", CLUBS_PLAIN)
def test_with_must_beat_led_suit_a_follower_must_play_higher_if_able(contract: str) -> None:
    st = deal(contract, BEAT, plays="TC", must_beat_led_suit=True)
    assert legal(st) == "KC"
    v = why(st, "3C")
    assert v is not None
    assert (v.code, v.rule) == ("must_beat", "R-NOBEAT")


def test_must_beat_is_measured_against_the_highest_card_of_the_suit_in_the_trick() -> None:
    # TC led, seat 1 plays KC; seat 2 holds QC and AC: only AC beats KC.
    hs = hands("TC ...", "KC ...", "QC AC ...", "...", fill_without={1: "C", 2: "C"})
    st = deal("no_tricks", hs, plays="TC KC", must_beat_led_suit=True)
    assert legal(st) == "AC"
    assert why(st, "QC").code == "must_beat"  # type: ignore[union-attr]


def test_must_beat_a_follower_who_cannot_beat_may_play_any_card_of_the_suit() -> None:
    hs = hands("AC ...", "3C 9C ...", "...", "...", fill_without={1: "C"})
    st = deal("no_tricks", hs, plays="AC", must_beat_led_suit=True)
    assert legal(st) == "3C 9C"


def test_must_beat_does_not_bind_a_player_void_in_the_suit_led() -> None:
    hs = hands("2C ...", "3S AS ...", "...", "...", fill_without={1: "C"})
    st = deal("no_tricks", hs, plays="2C", must_beat_led_suit=True)
    assert why(st, "3S") is None


def test_must_beat_on_a_plain_suit_lead_in_a_trump_contract() -> None:
    st = deal("trump_S", BEAT, plays="TC", must_beat_led_suit=True)
    assert legal(st) == "KC"


def test_r_drop_takes_precedence_over_must_beat() -> None:
    # no_queens, KS led: the holder of QS and AS must drop QS although AS would beat KS.
    hs = hands("KS ...", "QS AS 4S ...", "...", "...", fill_without={1: "S"})
    st = deal("no_queens", hs, plays="KS", must_beat_led_suit=True)
    assert legal(st) == "QS"
    assert why(st, "AS").code == "must_drop_penalty"  # type: ignore[union-attr]
    assert why(st, "4S").code == "must_drop_penalty"  # type: ignore[union-attr]


def test_r_raise_takes_precedence_over_must_beat_when_trump_is_led() -> None:
    # trump_S; trick 1 is ruffed by seat 1 (so trump is broken); seat 1 leads 5S; seat 2
    # holds 4S and 9S: the code for 4S is must_raise_trump, not must_beat.
    hs = hands(
        "AD ...",
        "2S 5S ...",
        "3D 4S 9S ...",
        "4D ...",
        fill_without={1: "DS", 2: "S"},
    )
    st = deal("trump_S", hs, plays="AD 2S 3D 4D | 5S", must_beat_led_suit=True)
    assert legal(st) == "9S"
    assert why(st, "4S").code == "must_raise_trump"  # type: ignore[union-attr]
