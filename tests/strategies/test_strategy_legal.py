"""Every strategy plays only legal actions, under any rule options (property tests).

domain.playout.play_game raises PolicyError on the first illegal action, so a finished game is
the proof; strong runs with a tiny fixed rollout count to stay cheap.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategy_helpers import PLAYERS, rules_st

from domain.game import Phase
from domain.playout import play_game
from domain.rules import Rules
from tournament.strategies import make_strategy

seeds = st.binary(min_size=8, max_size=8)


def _play(names: list[str], seed: bytes, rules: Rules, base: int) -> None:
    policies = [make_strategy(names[s % len(names)], base + s) for s in range(4)]
    state, _ = play_game("legal", PLAYERS, seed, policies, rules)
    assert state.phase is Phase.OVER


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_st, seed=seeds, base=st.integers(0, 2**32))
def test_heuristic_and_random_play_legal_actions(rules: Rules, seed: bytes, base: int) -> None:
    _play(["heuristic", "random"], seed, rules, base)


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_st.filter(lambda r: r.mode == "short12"), seed=seeds)
def test_strong_plays_legal_actions(rules: Rules, seed: bytes) -> None:
    _play(["strong:rollouts=1", "heuristic"], seed, rules, 7)


@pytest.mark.slow
@pytest.mark.compute
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_st, seed=seeds, base=st.integers(0, 2**32))
def test_all_strategies_legal_many_games(rules: Rules, seed: bytes, base: int) -> None:
    _play(["strong:rollouts=2", "heuristic", "random", "heuristic"], seed, rules, base)
