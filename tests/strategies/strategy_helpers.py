"""Shared builders for the strategy tests: random rule options and one game step by step."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from hypothesis import strategies as st

from domain.game import GameState, Phase
from domain.playout import advance, deal_if_due, new_game
from domain.rules import Rules
from domain.view import SeatView, seat_view

PLAYERS = ("ada", "bora", "cem", "deniz")

rules_st = st.builds(
    Rules,
    mode=st.sampled_from(["standard20", "short12"]),
    first_declarer=st.sampled_from(["two_of_diamonds", "seat0"]),
    must_beat_led_suit=st.booleans(),
    must_overtrump=st.booleans(),
    must_raise_trump_lead=st.booleans(),
    trump_lead_needs_break=st.booleans(),
    akq_lead=st.sampled_from(["off", "declarer", "any"]),
    king_tricks=st.sampled_from([0, 7, 9, 11, 13]),
    rifki_void_must_discard_heart=st.booleans(),
    end_early=st.booleans(),
    weak_hand_redeal=st.booleans(),
    queens_one_each_void=st.booleans(),
)


def steps(
    seed: bytes, rules: Rules, policies: list[Callable[[SeatView], object]]
) -> Iterator[tuple[GameState, int]]:
    """Every decision point of a game (state, seat to move) before the policy is asked."""
    state, _ = new_game("strategy-test", PLAYERS, seed, rules)
    while state.phase is not Phase.OVER:
        if state.phase is Phase.AWAITING_DEAL:
            state, _ = deal_if_due(state, seed)
            continue
        seat = state.to_move
        assert seat is not None
        yield state, seat
        state, _ = advance(state, seed, policies)  # type: ignore[arg-type]


__all__ = ["PLAYERS", "rules_st", "seat_view", "steps"]
