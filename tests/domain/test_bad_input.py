"""Bad input to the core and to records: a typed answer (Violation, CommandError, malformed),
never an AttributeError or TypeError, and never a wrong value taken for a right one.

Issue 2: "Unknown cards, malformed JSON, wrong shapes, out-of-turn or repeated actions: a clear
reason, never a traceback, state unchanged."
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers import hands, new_game, ok, play_deal_out, refused, start_deal
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.cards import parse_card
from domain.commands import (
    Abandon,
    AskRedeal,
    CreateGame,
    Declare,
    Play,
    RecordStrike,
    RevealSeed,
    StartDeal,
    Substitute,
)
from domain.game import CommandError, GameState, Phase, decide
from domain.playout import play_game
from domain.record import check_record, to_record
from domain.rules import Rules
from domain.violations import Violation

# Seat 0 declares no_tricks and leads; it holds 3S, the card whose index is 1 (== True).
HANDS = hands("3S ...", "...", "...", "...")


def playing() -> GameState:
    return ok(start_deal(new_game(first_declarer="seat0"), HANDS), Declare(0, "no_tricks"))


# --- a bool is no card and no seat (True == 1 to Python) -------------------------------------


def test_true_is_not_the_card_with_index_1() -> None:
    state = playing()
    assert parse_card("3S") == 1 == True  # the trap this test is about
    ok(state, Play(0, 1))  # the index itself is a card...
    v = refused(state, Play(0, True))  # ...the bool is not
    assert v.code == "card_not_in_hand" and "bool" in v.message


@pytest.mark.parametrize("card", [-1, 52, 1.0, None, b"3S", ["3S"]])
def test_other_non_cards_are_refused(card: Any) -> None:
    assert refused(playing(), Play(0, card)).code == "card_not_in_hand"


@pytest.mark.parametrize("seat", [False, True, -1, 4, "0", None, 0.0])
def test_a_seat_that_is_not_0_to_3_is_refused(seat: Any) -> None:
    state = playing()
    assert refused(state, Play(seat, "3S")).code == "not_your_turn"
    declaring = start_deal(new_game(first_declarer="seat0"), HANDS)
    assert refused(declaring, Declare(seat, "no_tricks")).code == "not_your_turn"
    assert refused(declaring, AskRedeal(seat)).code == "not_your_turn"


# --- not a command, or a service-side command with the wrong kind of value --------------------


@pytest.mark.parametrize("junk", [None, "play", 42, object(), Violation("game_over", "x")])
def test_something_that_is_no_command_is_a_command_error(junk: Any) -> None:
    with pytest.raises(CommandError, match="not a command"):
        decide(playing(), junk)


@pytest.mark.parametrize(
    "command",
    [
        Abandon("x", "left"),  # type: ignore[arg-type]
        Abandon(True, "left"),
        Abandon(0, None),  # type: ignore[arg-type]
        RecordStrike(None, "late"),  # type: ignore[arg-type]
        RecordStrike(1, 5),  # type: ignore[arg-type]
        Substitute(4, "sub"),
        Substitute(0, ["sub"]),  # type: ignore[arg-type]
        StartDeal(None),  # type: ignore[arg-type]
        StartDeal((1, 2, 3, "4")),  # type: ignore[arg-type]
    ],
)
def test_a_malformed_service_command_is_a_command_error(command: Any) -> None:
    state = new_game(first_declarer="seat0")
    with pytest.raises(CommandError):
        decide(state, command)


@pytest.mark.parametrize(
    "command",
    [
        CreateGame("g", None),  # type: ignore[arg-type]
        CreateGame("g", ("a", "b", "c", 4)),  # type: ignore[arg-type]
        CreateGame(None, ("a", "b", "c", "d")),  # type: ignore[arg-type]
        CreateGame("g", ("a", "b", "c", "d"), rules={"mode": "short12"}),  # type: ignore[arg-type]
    ],
)
def test_a_malformed_create_game_is_a_command_error(command: CreateGame) -> None:
    with pytest.raises(CommandError):
        decide(GameState(), command)


def test_a_revealed_seed_must_be_lower_case_hex() -> None:
    seed = bytes(range(32))
    state, _ = play_game(
        "reveal", ("a", "b", "c", "d"), seed, [_first] * 4, Rules(mode="short12"), reveal=False
    )
    assert state.phase is Phase.OVER
    for bad in [seed.hex().upper(), seed.hex()[:-1], None, 7]:
        with pytest.raises(CommandError):
            decide(state, RevealSeed(bad))  # type: ignore[arg-type]
    assert decide(state, RevealSeed(seed.hex()))


def _first(view: Any) -> Any:
    return view.legal[0]


JUNK = (
    st.none()
    | st.booleans()
    | st.integers(-3, 60)
    | st.text(max_size=4)
    | st.floats(allow_nan=False)
    | st.lists(st.integers(-1, 2**52), max_size=5).map(tuple)
)
COMMANDS = st.one_of(
    st.builds(Play, JUNK, JUNK),
    st.builds(Declare, JUNK, JUNK),
    st.builds(AskRedeal, JUNK),
    st.builds(RecordStrike, JUNK, JUNK),
    st.builds(Abandon, JUNK, JUNK),
    st.builds(Substitute, JUNK, JUNK),
    st.builds(StartDeal, JUNK),
    st.builds(RevealSeed, JUNK),
    st.builds(CreateGame, JUNK, JUNK),
    JUNK,
)


@settings(max_examples=300, deadline=None)
@given(command=COMMANDS, where=st.sampled_from(["new", "awaiting", "declaring", "playing"]))
def test_any_command_with_any_values_gets_a_typed_answer(command: Any, where: str) -> None:
    state = {
        "new": GameState,
        "awaiting": lambda: new_game(first_declarer="seat0"),
        "declaring": lambda: start_deal(new_game(first_declarer="seat0"), HANDS),
        "playing": playing,
    }[where]()
    try:
        out = decide(state, command)
    except CommandError:
        return
    assert isinstance(out, Violation | list)


# --- records ----------------------------------------------------------------------------------

RECORD_HANDS = [
    ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "KS", "AS"],
    ["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH", "AH"],
    ["2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD", "KD", "AD"],
    ["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC"],
]
GOOD: dict[str, Any] = {
    "format": "king-record/1",
    "deals": [{"hands": RECORD_HANDS, "contract": "no_tricks", "plays": ["2D"]}],
}


def _status(doc: Any) -> tuple[int, str]:
    status, out = check_record(doc)
    return status, out["error"]["message"] if status else ""


def _shuffled_record() -> dict[str, Any]:
    state, _ = play_game(
        "rec", ("a", "b", "c", "d"), bytes(range(32)), [_first] * 4, Rules(mode="short12")
    )
    return to_record(state)


def test_the_base_records_are_valid() -> None:
    assert check_record(GOOD)[0] == 0
    assert check_record(_shuffled_record())[0] == 0


@pytest.mark.parametrize(
    "seed",
    ["00", "ab" * 31, "ab" * 33, "AB" * 32, "0x" + "ab" * 31, " " + "ab" * 32, 7, None],
)
def test_a_server_seed_that_is_not_64_lower_case_hex_is_malformed(seed: Any) -> None:
    doc = _shuffled_record()
    doc["shuffle"]["server_seed"] = seed
    status, message = _status(doc)
    assert status == 2 and "server_seed" in message


def test_rules_null_is_malformed_and_rules_left_out_is_the_default() -> None:
    doc = copy.deepcopy(GOOD)
    doc["rules"] = None
    assert _status(doc) == (2, "rules must be an object of rule options")
    assert check_record(GOOD)[0] == 0  # GOOD has no "rules": all defaults


@pytest.mark.parametrize("key", ["declrer", "plyas", "note", "Contract"])
def test_an_unknown_key_in_a_deal_entry_is_malformed(key: str) -> None:
    doc = copy.deepcopy(GOOD)
    doc["deals"][0][key] = 1
    status, message = _status(doc)
    assert status == 2 and repr(key) in message


def test_a_declarer_null_is_malformed() -> None:
    doc = copy.deepcopy(GOOD)
    doc["deals"][0]["declarer"] = None
    assert _status(doc) == (2, "deals[0]: declarer must be a seat 0-3")


def test_unknown_keys_at_the_top_and_in_shuffle_are_ignored() -> None:
    # GAME_RECORD.md: "Other top-level keys are ignored."
    doc = _shuffled_record()
    doc["note"] = "from another program"
    doc["shuffle"]["commitment"] = "written by another program"
    assert check_record(doc)[0] == 0


def test_a_played_deal_still_checks_after_the_entry_keys_are_fixed() -> None:
    # to_record writes only the known keys, for played and redealt entries alike.
    state = play_deal_out(playing())
    assert check_record(to_record(state))[0] == 0
