"""The same seeds give the same game, event for event, for every strategy."""

from __future__ import annotations

import pytest
from strategy_helpers import PLAYERS

from domain.playout import play_game
from domain.rules import Rules
from tournament.strategies import UnknownStrategy, make_strategy, parse_spec, strategy_names

RULES = Rules(mode="short12")


def _events(name: str, seed: int) -> list[object]:
    policies = [make_strategy(name, seed * 4 + s) for s in range(4)]
    _, events = play_game("repro", PLAYERS, b"repro-seed", policies, RULES)
    return list(events)


@pytest.mark.parametrize("name", ["random", "heuristic", "strong:rollouts=1"])
def test_same_seed_same_events(name: str) -> None:
    assert _events(name, 5) == _events(name, 5)


def test_random_depends_on_its_seed() -> None:
    assert _events("random", 1) != _events("random", 2)


def test_registry() -> None:
    assert set(strategy_names()) >= {"random", "heuristic", "strong"}
    assert parse_spec("strong:rollouts=40,budget_ms=100") == (
        "strong",
        {"rollouts": 40.0, "budget_ms": 100.0},
    )
    with pytest.raises(UnknownStrategy):
        make_strategy("nope", 1)
    with pytest.raises(UnknownStrategy):
        make_strategy("heuristic:rollouts=3", 1)
    # Keyword options a strategy does not take are ignored (a match passes them to all).
    assert make_strategy("random", 1, budget_ms=10).name == "random"
