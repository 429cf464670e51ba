"""The same seeds give the same game, event for event, for every strategy (strong with a fixed
sample count: with a time budget its number of samples depends on the machine)."""

from __future__ import annotations

import pytest
from strategy_helpers import PLAYERS, seat_view, steps

from domain.playout import play_game
from domain.rules import Rules
from domain.view import Action, SeatView
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


def _positions() -> list[SeatView]:
    """Decisions with a real choice from one heuristic game: declarations and card plays."""
    policies = [make_strategy("heuristic", s) for s in range(4)]
    out = []
    for state, seat in steps(b"positions", RULES, policies):
        view = seat_view(state, seat)
        if len(view.legal) >= 3:
            out.append(view)
    return out[::4]


def test_strong_with_fixed_samples_depends_only_on_its_seed() -> None:
    views = _positions()
    assert len(views) >= 30

    def choices(seed: int) -> list[Action]:
        bot = make_strategy("strong:rollouts=3", seed)
        return [bot(v) for v in views]

    first = choices(1)
    assert choices(1) == first
    # Another seed samples other deals, and with few samples that changes some choices.
    assert choices(2) != first
