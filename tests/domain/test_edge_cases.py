"""Edge cases once got wrong: list-valued rule options, cards between deals, shared substitutes.

Each test states the rule, the situation, and what the documents ask for.
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from helpers import hands, new_game, ok, play_deal_out, refused, start_deal

from domain.commands import Abandon, AskRedeal, Declare, Play, Substitute
from domain.record import check_record

REPO = Path(__file__).resolve().parents[2]
HANDS = [
    ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "KS", "AS"],
    ["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH", "AH"],
    ["2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD", "KD", "AD"],
    ["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC"],
]


# 1. GAME_RECORD.md: "an unknown option makes the document malformed" and "No traceback,
#    whatever the input". A rule option whose value is a JSON array or object (for one of the
#    options with a fixed set of choices: mode, first_declarer, akq_lead) makes
#    Rules.from_dict raise TypeError ("unhashable type") from `value not in allowed`.
@pytest.mark.parametrize("option", ["mode", "first_declarer", "akq_lead"])
@pytest.mark.parametrize("value", [[], {}, ["short12"]])
def test_a_rule_option_value_that_is_a_list_or_object_is_malformed(
    option: str, value: object
) -> None:
    doc = {"format": "king-record/1", "rules": {option: value}, "deals": []}
    status, out = check_record(doc)
    assert status == 2
    assert out["error"]["code"] == "malformed"


def test_the_cli_prints_no_traceback_for_a_list_valued_rule_option(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"format": "king-record/1", "rules": {"mode": []}, "deals": []}))
    script = Path(sys.executable).with_name("king")
    proc = subprocess.run(
        [str(script), "record", "check", str(path)], capture_output=True, cwd=REPO, timeout=60
    )
    assert "Traceback" not in proc.stderr.decode()
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["error"]["code"] == "malformed"


# 2. KING_RULES.md §10 / GAME_RECORD.md: `deal_over` is for "a card after the deal ... is
#    over"; `wrong_phase` for an action in the wrong phase ("e.g. a card before the contract
#    is declared"). Before the first deal is dealt, and after a weak-hand redeal (new hands
#    awaited), no deal is over, yet a card is refused as deal_over.
def test_a_card_before_the_first_deal_is_wrong_phase() -> None:
    v = refused(new_game(), Play(0, "2S"))
    assert v.code == "wrong_phase"


def test_a_card_after_a_redeal_is_wrong_phase() -> None:
    from test_rule_redeal import WEAK, forced_to_trump

    state = ok(start_deal(forced_to_trump(), WEAK), AskRedeal(0))
    v = refused(state, Play(0, "2S"))
    assert v.code == "wrong_phase"


# 3. R-SUBSTITUTE / GameEnded.results: when the same substitute (say a house bot) takes over
#    two losing seats, it earns +1 per seat (+2 in all), but each of its two SeatResult rows
#    carries the person's total (+2), so the rows add up to +4.
def test_each_results_row_carries_that_seats_points() -> None:
    all_spades = hands("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", "...", "...", "...")
    state = ok(start_deal(new_game(first_declarer="seat0"), all_spades), Declare(0, "trump_S"))
    for command in (
        Abandon(1, "left"),
        Substitute(1, "house-bot"),
        Abandon(2, "left"),
        Substitute(2, "house-bot"),
    ):
        state = ok(state, command)
    state = play_deal_out(state)  # seat 0 makes King: seats 1 and 2 lose
    assert state.result is not None
    bot_rows = [r for r in state.result.results if r.player == "house-bot"]
    assert [(r.seat, r.points) for r in bot_rows] == [(1, Fraction(1)), (2, Fraction(1))]
    # today: [(1, 2), (2, 2)]
