"""The heuristic strategy: contract choice from hand evaluation, card play from inference.

It never searches: each decision is a handful of bit operations, so it is also fast enough to
be a house bot and a baseline for the strong strategy.
"""

from __future__ import annotations

from domain.game import Phase
from domain.view import Action, SeatView
from tournament.strategies.base import register
from tournament.strategies.bidding import advantage
from tournament.strategies.cardplay import choose_card
from tournament.strategies.knowledge import knowledge_of


def declare(view: SeatView) -> Action:
    """The legal declaration whose worth for this hand is furthest above its usual worth."""
    best: Action | None = None
    best_score = -1e18
    for action in view.legal:
        if action.kind == "redeal":
            # Only offered for a hand with no card above ten and trump to declare: take it.
            return action
        assert action.contract is not None
        score = advantage(view.hand, action.contract)
        if score > best_score:
            best, best_score = action, score
    assert best is not None
    return best


def play(view: SeatView) -> Action:
    """The card chosen by the contract-aware rules over what this seat can infer."""
    legal = 0
    by_card: dict[int, Action] = {}
    for action in view.legal:
        legal |= 1 << action.card
        by_card[action.card] = action
    k = knowledge_of(view)
    return by_card[choose_card(k.state, legal, k.possible, k.weights)]


@register("heuristic")
class HeuristicStrategy:
    """Hand evaluation and contract-aware rules of thumb. It draws no random numbers, so any
    seed gives the same play; the seed is taken for the common interface."""

    name = "heuristic"

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def __call__(self, view: SeatView) -> Action:
        if len(view.legal) == 1:
            return view.legal[0]
        if view.phase is Phase.DECLARING:
            return declare(view)
        return play(view)
