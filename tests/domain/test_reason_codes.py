"""Every reason code of KING_RULES.md §10 and the record-only codes of GAME_RECORD.md: each one
produced by a real situation, with its rule id; then the precedence order of GAME_RECORD.md
where one action breaks several rules."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import pytest
from helpers import (
    PLAYERS,
    SEED,
    any_card,
    deal,
    deals_until,
    finish_trick,
    first_legal,
    hands,
    new_game,
    ok,
    play_deal_out,
    refused,
    start_deal,
    whole_deal,
    why,
)
from rule_book import BOOK_RULE

from domain.cards import CARD_NAMES
from domain.commands import AskRedeal, Declare, Play
from domain.deal import DealState
from domain.game import GameState
from domain.playout import play_game
from domain.record import check_record, to_record
from domain.rules import Rules
from domain.violations import RULE_OF_CODE, Violation

# §10 gives no_right_left as "(R-MODE/R-ORDER)": either is right.
NO_RIGHT_LEFT_RULES = ("R-ORDER", "R-MODE")
# Codes for which the rule book names no rule: the engine's choice, pinned here so that a change
# is deliberate.
ENGINE_RULE = {
    "not_your_turn": "R-SEATS",
    "card_not_in_hand": "R-TABLE",
    "game_over": "R-MODE",
    "deal_over": "R-EARLYEND",
    "wrong_phase": "R-LEAD1",
    "bad_contract": "R-TRUMP",  # R-TRUMP: "No-trump is not allowed."
    "hands_mismatch": "R-SHUFFLE",
    "deal_not_finished": "R-EARLYEND",
}
# The codes for a card that may not be played now; §10 lists them together.
CARD_CODES = [
    "card_not_in_hand",
    "must_follow_suit",
    "must_beat",
    "must_ruff",
    "must_overtrump",
    "must_raise_trump",
    "trump_not_broken",
    "akq_sequence",
    "hearts_not_broken",
    "must_discard_penalty",
    "must_drop_penalty",
]
SECTION_10 = [
    "not_your_turn",
    *CARD_CODES,
    "no_right_left",
    "contract_exhausted",
    "redeal_not_allowed",
    "game_over",
    "deal_over",
    "wrong_phase",
]
RECORD_ONLY = ["hands_mismatch", "deal_not_finished", "bad_contract"]


def expected_rules(code: str) -> tuple[str, ...]:
    if code == "no_right_left":
        return NO_RIGHT_LEFT_RULES
    return (BOOK_RULE.get(code) or ENGINE_RULE[code],)


# --- situations -----------------------------------------------------------------------------


class Found:
    """A refusal as the tests see it: code, rule and message, plus the deal it came from."""

    def __init__(self, code: str, rule: str, message: str, st: DealState | None = None) -> None:
        self.code, self.rule, self.message, self.st = code, rule, message, st

    @classmethod
    def of(cls, v: Violation | None, st: DealState | None = None) -> Found:
        assert v is not None, "the action was accepted"
        return cls(v.code, v.rule, v.message, st)

    @classmethod
    def of_record(cls, status: int, out: dict[str, Any]) -> Found:
        assert status == 1, out
        err = out["error"]
        return cls(err["code"], err["rule"], err["message"])


SITUATIONS: dict[str, Callable[[], Found]] = {}


def situation(code: str) -> Callable[[Callable[[], Found]], Callable[[], Found]]:
    def register(fn: Callable[[], Found]) -> Callable[[], Found]:
        SITUATIONS[code] = fn
        return fn

    return register


def on_deal(st: DealState, card: str) -> Found:
    return Found.of(why(st, card), st)


@situation("not_your_turn")
def _() -> Found:
    state = ok(start_deal(new_game(first_declarer="seat0")), Declare(0, "no_tricks"))
    return Found.of(refused(state, Play(2, any_card(state.hands[2]))))


@situation("card_not_in_hand")
def _() -> Found:
    st = deal("no_tricks", hands("2C ...", "3C ...", "...", "..."))
    return on_deal(st, "3C")  # seat 1 holds it, seat 0 is to play


@situation("must_follow_suit")
def _() -> Found:
    st = deal("no_tricks", hands("2C ...", "9C AS ...", "...", "..."), plays="2C")
    return on_deal(st, "AS")


@situation("must_beat")
def _() -> Found:
    hs = hands("TC ...", "3C KC ...", "...", "...", fill_without={1: "C"})
    return on_deal(deal("no_tricks", hs, plays="TC", must_beat_led_suit=True), "3C")


@situation("must_ruff")
def _() -> Found:
    hs = hands("AD ...", "3S 2C ...", "...", "...", fill_without={1: "D"})
    return on_deal(deal("trump_S", hs, plays="AD"), "2C")


@situation("must_overtrump")
def _() -> Found:
    hs = hands("AD ...", "5S ...", "3S 9S ...", "...", fill_without={1: "D", 2: "DS"})
    return on_deal(deal("trump_S", hs, plays="AD 5S"), "3S")


@situation("must_raise_trump")
def _() -> Found:
    hs = hands("AD ...", "2S 5S ...", "3D 4S 9S ...", "4D ...", fill_without={1: "DS", 2: "S"})
    return on_deal(deal("trump_S", hs, plays="AD 2S 3D 4D | 5S"), "4S")


@situation("trump_not_broken")
def _() -> Found:
    return on_deal(deal("trump_H", hands("2H 3C ...", "...", "...", "...")), "2H")


@situation("akq_sequence")
def _() -> Found:
    hs = hands("AS KS QS 2D ...", "...", "...", "...", fill_without={0: "S"})
    st = deal("trump_S", hs, akq_lead="any", plays="AS")
    st = finish_trick(st)
    return on_deal(st, "2D")


@situation("hearts_not_broken")
def _() -> Found:
    return on_deal(deal("no_hearts", hands("2H 3C ...", "...", "...", "...")), "2H")


@situation("must_discard_penalty")
def _() -> Found:
    hs = hands("2S ...", "QH 2C ...", "...", "...", fill_without={1: "S"})
    return on_deal(deal("no_queens", hs, plays="2S"), "2C")


@situation("must_drop_penalty")
def _() -> Found:
    hs = hands("KS ...", "QS 4S ...", "...", "...", fill_without={1: "S"})
    return on_deal(deal("no_queens", hs, plays="KS"), "4S")


@situation("no_right_left")
def _() -> Found:
    state = whole_deal(new_game(mode="short12", first_declarer="seat0"), "trump_S")
    state = start_deal(deals_until(state, 5))
    return Found.of(refused(state, Declare(0, "trump_H")))


@situation("contract_exhausted")
def _() -> Found:
    state = new_game(first_declarer="seat0")
    state = whole_deal(whole_deal(state, "last_two"), "last_two")
    return Found.of(refused(start_deal(state), Declare(2, "last_two")))


@situation("redeal_not_allowed")
def _() -> Found:
    weak = hands("2S 3S 4S 5S 6S 7S 8S 9S TS 2H 3H 4H 5H", "...", "...", "...")
    state = start_deal(new_game(first_declarer="seat0"), weak)
    return Found.of(refused(state, AskRedeal(0)))


@situation("game_over")
def _() -> Found:
    state = _king_game()
    return Found.of(refused(state, Declare(1, "trump_S")))


@situation("deal_over")
def _() -> Found:
    state = _rifki_ended_early()
    return Found.of(refused(state, Play(3, "2D")))


@situation("wrong_phase")
def _() -> Found:
    state = start_deal(new_game(first_declarer="seat0"))
    return Found.of(refused(state, Play(0, any_card(state.hands[0]))))


@situation("hands_mismatch")
def _() -> Found:
    doc = short12_record()
    _swap_first_cards(doc["deals"][0]["hands"])
    return Found.of_record(*check_record(doc))


@situation("deal_not_finished")
def _() -> Found:
    doc = short12_record()
    doc["deals"][0]["plays"] = doc["deals"][0]["plays"][:10]
    return Found.of_record(*check_record(doc))


@situation("bad_contract")
def _() -> Found:
    doc = short12_record()
    doc["deals"][0]["contract"] = "no_trump"
    return Found.of_record(*check_record(doc))


# --- shared set-ups -------------------------------------------------------------------------

ALL_SPADES = hands("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", "...", "...", "...")


def _king_game() -> GameState:
    """Seat 0 makes King in deal 1: the game is over."""
    state = ok(start_deal(new_game(first_declarer="seat0"), ALL_SPADES), Declare(0, "trump_S"))
    state = play_deal_out(state)
    assert state.result is not None
    return state


def _rifki_ended_early() -> GameState:
    """Deal 1, rifki: KH falls in trick 2 and the deal is over."""
    hs = hands("2S KH 3H ...", "3S ...", "2H ...", "4S AH 2D ...", fill_without={0: "H", 2: "S"})
    state = ok(start_deal(new_game(first_declarer="seat0"), hs), Declare(0, "rifki"))
    for name in ["2S", "3S", "2H", "4S", "AH", "KH"]:
        state = ok(state, Play(state.to_move, name))  # type: ignore[arg-type]
    state = play_deal_out(state)
    assert state.deals_played == 1 and state.deal_no == 2
    return state


_RECORD: dict[str, Any] = {}


def short12_record() -> dict[str, Any]:
    """A whole short12 game as a king-record/1 document with its seed and hands (a copy)."""
    if not _RECORD:
        state, _ = play_game("rc", PLAYERS, SEED, [first_legal] * 4, rules=Rules(mode="short12"))
        _RECORD.update(to_record(state))
        assert check_record(_RECORD)[0] == 0
        assert "shuffle" in _RECORD and all("hands" in d for d in _RECORD["deals"])
    return copy.deepcopy(_RECORD)


def _swap_first_cards(hs: list[list[str]]) -> None:
    hs[0][0], hs[1][0] = hs[1][0], hs[0][0]


# --- one test per code ----------------------------------------------------------------------


def test_every_code_has_a_situation() -> None:
    assert set(SITUATIONS) == set(SECTION_10) | set(RECORD_ONLY)
    # ... and the engine knows no code the documents do not.
    assert set(RULE_OF_CODE) <= set(SECTION_10) | set(RECORD_ONLY)


@pytest.mark.parametrize("code", SECTION_10 + RECORD_ONLY)
def test_reason_code_and_rule_id(code: str) -> None:
    found = SITUATIONS[code]()
    assert found.code == code
    assert found.rule in expected_rules(code)
    assert found.message


@pytest.mark.parametrize("code", CARD_CODES)
def test_a_message_names_only_the_movers_cards_and_the_table(code: str) -> None:
    # Violations are sent to the acting seat: they must not show another seat's cards.
    found = SITUATIONS[code]()
    st = found.st
    assert st is not None
    visible = st.hands[st.to_move] | st.played
    for c in st.trick:
        visible |= 1 << c
    for name in re.findall(r"\b[2-9TJQKA][SHDC]\b", found.message):
        c = CARD_NAMES.index(name)
        if code == "card_not_in_hand":
            continue  # it names the card the player tried
        assert visible >> c & 1, f"{name} in {found.message!r}"


# --- precedence: leading --------------------------------------------------------------------


def test_leading_card_not_in_hand_before_trump_not_broken() -> None:
    st = deal("trump_H", hands("2H 3C ...", "AH ...", "...", "..."))
    assert why(st, "AH").code == "card_not_in_hand"  # type: ignore[union-attr]


def test_leading_card_not_in_hand_before_hearts_not_broken() -> None:
    st = deal("rifki", hands("2H 3C ...", "AH ...", "...", "..."))
    assert why(st, "AH").code == "card_not_in_hand"  # type: ignore[union-attr]


def test_leading_card_not_in_hand_before_akq_sequence() -> None:
    hs = hands("AS KS QS 2D ...", "3D ...", "...", "...", fill_without={0: "S"})
    st = finish_trick(deal("trump_S", hs, akq_lead="any", plays="AS"))
    assert why(st, "3D").code == "card_not_in_hand"  # type: ignore[union-attr]


def test_leading_a_heart_in_trump_hearts_is_trump_not_broken_not_hearts_not_broken() -> None:
    st = deal("trump_H", hands("2H 3C ...", "...", "...", "..."))
    assert why(st, "2H").code == "trump_not_broken"  # type: ignore[union-attr]


# (akq_sequence and trump_not_broken never meet: the early lead of A, K or Q breaks trump.)

# --- precedence: following ------------------------------------------------------------------


def test_following_card_not_in_hand_before_must_follow_suit() -> None:
    hs = hands("2C ...", "9C ...", "AS ...", "...", fill_without={1: "S"})
    st = deal("no_tricks", hs, plays="2C")
    assert why(st, "AS").code == "card_not_in_hand"  # type: ignore[union-attr]


def test_must_follow_suit_before_must_drop_penalty() -> None:
    hs = hands("KS ...", "QS 4S 2H ...", "...", "...", fill_without={1: "S"})
    st = deal("no_queens", hs, plays="KS")
    assert why(st, "2H").code == "must_follow_suit"  # type: ignore[union-attr]


def test_must_follow_suit_before_must_raise_trump() -> None:
    hs = hands("AD ...", "2S 5S ...", "3D 9S 2C ...", "4D ...", fill_without={1: "DS", 2: "S"})
    st = deal("trump_S", hs, plays="AD 2S 3D 4D | 5S")
    assert why(st, "2C").code == "must_follow_suit"  # type: ignore[union-attr]


def test_must_follow_suit_before_must_beat() -> None:
    hs = hands("TC ...", "3C KC 2D ...", "...", "...", fill_without={1: "C"})
    st = deal("no_tricks", hs, plays="TC", must_beat_led_suit=True)
    assert why(st, "2D").code == "must_follow_suit"  # type: ignore[union-attr]


def test_must_drop_penalty_before_must_beat() -> None:
    # no_queens, must_beat on, KS led: 4S breaks both rules; AS breaks only R-DROP.
    hs = hands("KS ...", "QS AS 4S ...", "...", "...", fill_without={1: "S"})
    st = deal("no_queens", hs, plays="KS", must_beat_led_suit=True)
    assert why(st, "4S").code == "must_drop_penalty"  # type: ignore[union-attr]
    assert why(st, "AS").code == "must_drop_penalty"  # type: ignore[union-attr]


def test_must_raise_trump_before_must_beat() -> None:
    hs = hands("AD ...", "2S 5S ...", "3D 4S 9S ...", "4D ...", fill_without={1: "DS", 2: "S"})
    st = deal("trump_S", hs, plays="AD 2S 3D 4D | 5S", must_beat_led_suit=True)
    assert why(st, "4S").code == "must_raise_trump"  # type: ignore[union-attr]


def test_must_beat_when_trump_is_led_and_must_raise_is_off() -> None:
    hs = hands("AD ...", "2S 5S ...", "3D 4S 9S ...", "4D ...", fill_without={1: "DS", 2: "S"})
    st = deal(
        "trump_S",
        hs,
        plays="AD 2S 3D 4D | 5S",
        must_beat_led_suit=True,
        must_raise_trump_lead=False,
    )
    assert why(st, "4S").code == "must_beat"  # type: ignore[union-attr]


def test_must_ruff_before_must_overtrump() -> None:
    # A side card from a player who could overtrump breaks both duties.
    hs = hands("AD ...", "5S ...", "9S 2C ...", "...", fill_without={1: "D", 2: "DS"})
    st = deal("trump_S", hs, plays="AD 5S")
    assert why(st, "2C").code == "must_ruff"  # type: ignore[union-attr]


# --- precedence: declarations (game commands) -----------------------------------------------


def test_declaration_not_your_turn_before_bad_contract() -> None:
    state = start_deal(new_game(first_declarer="seat0"))
    assert refused(state, Declare(1, "no_trump")).code == "not_your_turn"


def test_declaration_not_your_turn_before_contract_exhausted() -> None:
    state = new_game(first_declarer="seat0")
    state = start_deal(whole_deal(whole_deal(state, "rifki"), "rifki"))
    assert refused(state, Declare(3, "rifki")).code == "not_your_turn"
    assert refused(state, Declare(2, "rifki")).code == "contract_exhausted"


def test_declaration_not_your_turn_before_redeal_not_allowed() -> None:
    state = start_deal(new_game(first_declarer="seat0"))
    assert refused(state, AskRedeal(1)).code == "not_your_turn"


def no_penalty_right_and_an_exhausted_contract() -> GameState:
    """short12, seat 0 to declare deal 9: the first eight deals used no_tricks, no_tricks,
    no_hearts, no_hearts, no_queens, no_queens, no_boys, no_boys (seat 0 declared two of
    them, so it has no penalty right left)."""
    state = deals_until(new_game(mode="short12", first_declarer="seat0"), 9)
    state = start_deal(state)
    assert state.declarer == 0 and state.penalty_left[0] == 0
    assert state.uses[0] == 2  # no_tricks is exhausted too
    return state


def test_declaration_no_right_left_before_contract_exhausted() -> None:
    state = no_penalty_right_and_an_exhausted_contract()
    assert refused(state, Declare(0, "no_tricks")).code == "no_right_left"


def test_declaration_game_over_before_everything() -> None:
    state = _king_game()
    assert refused(state, Declare(2, "no_trump")).code == "game_over"
    assert refused(state, AskRedeal(3)).code == "game_over"


# --- precedence: declarations and cards in a record (domain.record.check_record) ------------


def record_error(doc: dict[str, Any]) -> dict[str, Any]:
    status, out = check_record(doc)
    assert status == 1, out
    return out["error"]  # type: ignore[no-any-return]


def test_record_deal_not_finished_before_hands_mismatch() -> None:
    doc = short12_record()
    doc["deals"][0]["plays"] = doc["deals"][0]["plays"][:10]
    _swap_first_cards(doc["deals"][1]["hands"])
    err = record_error(doc)
    assert (err["deal"], err["play"], err["code"]) == (1, None, "deal_not_finished")


def test_record_game_over_before_hands_mismatch() -> None:
    doc = short12_record()
    extra = copy.deepcopy(doc["deals"][0])
    _swap_first_cards(extra["hands"])
    doc["deals"].append(extra)
    err = record_error(doc)
    assert (err["deal"], err["play"], err["code"]) == (12, None, "game_over")


def test_record_hands_mismatch_before_not_your_turn() -> None:
    doc = short12_record()
    _swap_first_cards(doc["deals"][0]["hands"])
    doc["deals"][0]["declarer"] = (doc["deals"][0]["declarer"] + 1) % 4
    err = record_error(doc)
    assert (err["deal"], err["play"], err["code"]) == (0, None, "hands_mismatch")


def test_record_not_your_turn_before_bad_contract() -> None:
    doc = short12_record()
    doc["deals"][0]["declarer"] = (doc["deals"][0]["declarer"] + 1) % 4
    doc["deals"][0]["contract"] = "no_trump"
    err = record_error(doc)
    assert (err["deal"], err["play"], err["code"]) == (0, None, "not_your_turn")


def test_record_not_your_turn_before_redeal_not_allowed() -> None:
    doc = short12_record()
    first = doc["deals"][0]
    doc["deals"][0] = {
        "hands": first["hands"],
        "declarer": (first["declarer"] + 1) % 4,
        "redeal": True,
    }
    err = record_error(doc)
    assert (err["deal"], err["play"], err["code"]) == (0, None, "not_your_turn")


def test_record_redeal_not_allowed() -> None:
    doc = short12_record()
    first = doc["deals"][0]
    doc["deals"][0] = {"hands": first["hands"], "redeal": True}
    err = record_error(doc)
    assert (err["deal"], err["play"], err["code"], err["rule"]) == (
        0,
        None,
        "redeal_not_allowed",
        "R-WEAKHAND",
    )


def test_record_no_right_left_before_contract_exhausted() -> None:
    doc = short12_record()
    contracts = [d["contract"] for d in doc["deals"][:8]]
    assert contracts == [
        "no_tricks", "no_tricks", "no_hearts", "no_hearts",
        "no_queens", "no_queens", "no_boys", "no_boys",
    ]  # fmt: skip
    doc["deals"][8]["contract"] = "no_tricks"  # the declarer of deal 1 again: no penalty right
    doc["deals"] = doc["deals"][:9]
    doc["deals"][8]["plays"] = []
    err = record_error(doc)
    assert (err["deal"], err["play"], err["code"]) == (8, None, "no_right_left")


def test_record_card_after_an_early_end_is_deal_over() -> None:
    state = _rifki_ended_early()
    doc = to_record(state)
    plays = doc["deals"][0]["plays"]
    assert len(plays) == 8  # two tricks
    plays.append("2D")
    err = record_error(doc)
    assert (err["deal"], err["play"], err["code"], err["rule"]) == (0, 8, "deal_over", "R-EARLYEND")


def test_record_card_after_the_game_is_over_is_game_over() -> None:
    doc = to_record(_king_game())
    plays = doc["deals"][0]["plays"]
    assert len(plays) == 44  # eleven tricks: King
    plays.append("2H")
    err = record_error(doc)
    assert (err["deal"], err["play"], err["code"]) == (0, 44, "game_over")


def test_record_the_check_stops_at_the_first_illegal_action() -> None:
    doc = short12_record()
    doc["deals"][3]["contract"] = "no_trump"
    doc["deals"][5]["contract"] = "no_trump"
    err = record_error(doc)
    assert err["deal"] == 3
