"""The bot kit rebuilds the seat view a bot receives as JSON into the very SeatView the
service sent, ended deals (`history`) and all, so strategies run unchanged behind HTTP."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from strategy_helpers import rules_st, seat_view, steps

from domain.playout import play_game
from domain.rules import Rules
from services.botkit import seat_view_from_dict
from tournament.strategies import make_strategy


@settings(max_examples=10, deadline=None)
@given(rules=rules_st, seed=st.binary(min_size=4, max_size=8))
def test_json_view_round_trips(rules: Rules, seed: bytes) -> None:
    policies = [make_strategy("random", s) for s in range(4)]
    for n, (state, seat) in enumerate(steps(seed, rules, policies)):
        if n % 7:
            continue  # every seventh decision keeps the test quick; all phases still occur
        view = seat_view(state, seat)
        sent = orjson.loads(orjson.dumps(view.to_dict()))
        assert seat_view_from_dict(sent) == view


def test_the_final_view_keeps_every_ended_deal() -> None:
    policies = [make_strategy("random", s) for s in range(4)]
    state, _ = play_game("kit", ("a", "b", "c", "d"), b"kit-seed", policies, Rules(mode="short12"))
    view = seat_view(state, 2)
    rebuilt = seat_view_from_dict(orjson.loads(orjson.dumps(view.to_dict())))
    assert rebuilt == view
    assert len(rebuilt.history) >= 12
