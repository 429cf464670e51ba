"""The bot kit rebuilds the seat view a bot receives as JSON into the very SeatView the
service sent, ended deals (`history`) and all, so strategies run unchanged behind HTTP."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategy_helpers import rules_st, seat_view, steps

from domain.game import CompletedDeal, RedealtHands
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


@settings(max_examples=5, deadline=None)
@given(rules=rules_st, seed=st.binary(min_size=4, max_size=8))
def test_views_rebuilt_on_the_last_ones_history_equal_the_views_sent(
    rules: Rules, seed: bytes
) -> None:
    """Following one game, each view is rebuilt on the history rebuilt for the view before
    (a seat's, then another's: the ended deals are the same for every seat) and still equals
    the view the service sent, ended deals, redeals and all."""
    policies = [make_strategy("random", s) for s in range(4)]
    known: tuple[CompletedDeal | RedealtHands, ...] = ()
    for state, seat in steps(seed, rules, policies):
        view = seat_view(state, seat)
        rebuilt = seat_view_from_dict(orjson.loads(orjson.dumps(view.to_dict())), known)
        assert rebuilt == view
        known = rebuilt.history


def test_ended_deals_of_another_shape_are_rebuilt_not_taken() -> None:
    """A kept deal that is not the one at its place in the new view (another deal or attempt)
    is not taken: the view is rebuilt from there on."""
    policies = [make_strategy("random", s) for s in range(4)]
    state, _ = play_game("kit", ("a", "b", "c", "d"), b"kit-seed", policies, Rules(mode="short12"))
    view = seat_view(state, 1)
    sent = orjson.loads(orjson.dumps(view.to_dict()))
    shifted = seat_view_from_dict(sent).history[1:]  # deal 2 where deal 1 belongs
    assert seat_view_from_dict(sent, shifted) == view


def test_a_view_without_four_counts_is_refused_with_the_reason() -> None:
    """A seat's tricks won and scores are four counts: anything else is a ValueError that says
    so, not a failed unpacking."""
    policies = [make_strategy("random", s) for s in range(4)]
    state, _ = play_game("kit", ("a", "b", "c", "d"), b"kit-seed", policies, Rules(mode="short12"))
    sent = orjson.loads(orjson.dumps(seat_view(state, 0).to_dict()))
    sent["tricks_won"] = [1, 2, 3]
    with pytest.raises(ValueError, match="four seats, got 3"):
        seat_view_from_dict(sent)
