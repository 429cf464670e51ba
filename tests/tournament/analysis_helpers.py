"""Games to analyse and a stand-in solver for the analysis tests.

`RolloutSolver` values a card by a fixed rollout (every seat plays its lowest legal card) from
the position after it: no best play, but a deterministic value of the same scale as the real
solver's, so the analysis's own promises (costs, best cards, labels, shape) can be tested
without paying for open-hand solves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from domain.cards import cards_of
from domain.deal import DealState, legal_mask, play, rollout, scores
from domain.events import Event
from domain.game import GameState, Phase
from domain.playout import advance, new_game, play_game
from domain.rules import Rules
from domain.view import SeatView
from tournament.analysis import ContractValues, Solved
from tournament.strategies import make_strategy

PLAYERS = ("ada", "bora", "cem", "deniz")
SEED = bytes(range(32))


def _lowest(_seat: int, legal: int) -> int:
    return (legal & -legal).bit_length() - 1


@dataclass
class RolloutSolver:
    model: str = "rollout"
    node_budget: int | None = None
    calls: int = 0

    def __call__(self, st: DealState) -> Solved:
        self.calls += 1
        seat = st.to_move
        values: dict[int, float] = {}
        for c in cards_of(legal_mask(st)):
            end = rollout(play(st, c), _lowest)
            values[c] = scores(end)[seat]
        return Solved(values, True)


@dataclass
class FixedEvaluator:
    """Values each legal declaration by the contract's position in the legal list."""

    model: str = "fixed"

    def __call__(self, view: SeatView) -> ContractValues:
        out: Mapping[str, float] = {
            a.contract.value: -10.0 * i
            for i, a in enumerate(view.legal)
            if a.kind == "declare" and a.contract is not None
        }
        return ContractValues(out)


def played_game(
    mode: str = "short12", seed: bytes = SEED, strategy: str = "heuristic"
) -> list[Event]:
    """Every event of a whole game played by a built-in strategy."""
    policies = [make_strategy(strategy, i) for i in range(4)]
    _, events = play_game("g-analysis", PLAYERS, seed, policies, Rules.from_dict({"mode": mode}))
    return events


def game_until(
    deal: int, cards: int, mode: str = "short12", seed: bytes = SEED, strategy: str = "heuristic"
) -> tuple[GameState, list[Event]]:
    """A game played until deal `deal` has `cards` cards on the table (the deal in play)."""
    policies = [make_strategy(strategy, i) for i in range(4)]
    state, events = new_game("g-live", PLAYERS, seed, Rules.from_dict({"mode": mode}))
    while state.phase is not Phase.OVER:
        st = state.deal
        if (
            st is not None
            and state.deal_no == deal
            and not st.over
            and st.played.bit_count() + len(st.trick) >= cards
        ):
            return state, events
        state, new = advance(state, seed, policies)
        events += new
    raise AssertionError(f"the game ended before deal {deal} had {cards} cards")


__all__ = ["PLAYERS", "SEED", "FixedEvaluator", "RolloutSolver", "game_until", "played_game"]
