"""Strategies that play King: random, heuristic and strong (sampling plus rollouts).

`make_strategy(name, seed)` builds one; each is a `Strategy`: `strategy(view) -> Action`.
"""

from tournament.strategies.base import (
    Strategy,
    UnknownStrategy,
    make_strategy,
    parse_spec,
    strategy_names,
)

__all__ = ["Strategy", "UnknownStrategy", "make_strategy", "parse_spec", "strategy_names"]
