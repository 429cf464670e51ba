"""The baseline: a uniformly random legal action."""

from __future__ import annotations

import random

from domain.view import Action, SeatView
from tournament.strategies.base import register


@register("random")
class RandomStrategy:
    """Picks uniformly among `view.legal`; the floor every other strategy must clear."""

    name = "random"

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def __call__(self, view: SeatView) -> Action:
        return self.rng.choice(view.legal)
