"""`strategy_decider` (what `king bot serve` runs): one strategy object per (game, seat),
kept for the seats asked last only, so a bot serving game after game does not grow."""

from __future__ import annotations

from typing import Any

import pytest

import services.botkit.strategies as strategies
from domain.game import GameState
from domain.playout import deal_if_due, new_game
from domain.view import seat_view
from tournament.strategies import make_strategy

SEED = bytes(range(32))


def _declaring(game_id: str) -> GameState:
    state, _ = new_game(game_id, ("ada", "bo", "cem", "dan"), SEED)
    state, _ = deal_if_due(state, SEED)
    return state


def _request(state: GameState) -> dict[str, Any]:
    seat = state.to_move
    assert seat is not None
    return {"game_id": state.game_id, "seat": seat, "view": seat_view(state, seat).to_dict()}


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The strategy name of each strategy object the decider makes, one entry an object (the
    first, made when the decider checks its name, aside)."""
    seen: list[str] = []

    def counting(name: str, seed: int) -> Any:
        seen.append(name)
        return make_strategy(name, seed)

    monkeypatch.setattr(strategies, "make_strategy", counting)
    monkeypatch.setattr(strategies, "STRATEGIES_KEPT", 2)
    return seen


def test_the_seats_asked_least_recently_are_forgotten_first(made: list[str]) -> None:
    decide = strategies.strategy_decider("heuristic", seed=3)
    assert len(made) == 1  # the name checked at once
    games = {g: _declaring(g) for g in ("g1", "g2", "g3")}
    makes: list[int] = []
    for game_id in ("g1", "g2", "g1", "g3", "g1", "g2"):
        state = games[game_id]
        action = decide(_request(state))
        assert action in [a.to_dict() for a in seat_view(state, state.to_move or 0).legal]
        makes.append(len(made) - 1)
    # g1 and g2 made; g1 kept; g3 made and g2, asked longest ago, forgotten; g1 kept; g2 anew.
    assert makes == [1, 2, 2, 3, 3, 4]
