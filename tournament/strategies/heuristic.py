"""The heuristic strategy: contract choice from hand evaluation and the game's state, card
play from inference.

It never searches: each decision is a handful of bit operations, so it is also fast enough to
be a house bot and a baseline for the strong strategy.
"""

from __future__ import annotations

from domain.game import Phase
from domain.view import Action, SeatView
from tournament.strategies.base import register
from tournament.strategies.bidding import model_key, worth
from tournament.strategies.bidding_model import BASELINES
from tournament.strategies.cardplay import choose_card
from tournament.strategies.knowledge import knowledge_of
from tournament.strategies.objective import contract_outlook, game_context

# Deal points break ties between contracts whose ladder gains are equal (a decided game).
TIE_BREAK = 1e-4


def declare(view: SeatView) -> Action:
    """The legal declaration that gains most, in expected ladder points for the game, from
    this hand rather than an average one (the right is spent either way, now or later).

    The gain is the hand model's edge (bidding.py) weighed by what points are worth where the
    contract leaves this seat's total (objective.py): early it ranks contracts by the edge
    alone; late, behind, the points a trump deal brings count for more, and ahead, the points
    a penalty deal can cost."""
    ctx = game_context(view)
    seat = view.seat
    best: Action | None = None
    best_score = -1e18
    for action in view.legal:
        if action.kind == "redeal":
            # Only offered for a hand with no card above ten and trump to declare: take it.
            return action
        c = action.contract
        assert c is not None
        this_hand = worth(view.hand, c)
        usual = BASELINES[model_key(c)]
        score = (
            contract_outlook(ctx, seat, c, this_hand)
            - contract_outlook(ctx, seat, c, usual)
            + TIE_BREAK * (this_hand - usual)
        )
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
