"""Shared builders for the strategy tests: random rule options and one game step by step."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from domain.game import GameState, Phase
from domain.playout import advance, deal_if_due, new_game
from domain.rules import Rules
from domain.view import SeatView, seat_view
from tests.random_rules import random_rules

PLAYERS = ("ada", "bora", "cem", "deniz")

rules_st = random_rules(king_tricks=[0, 7, 9, 11, 13])


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
