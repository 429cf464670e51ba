"""A built-in strategy as a `decide` function (what `king bot serve` runs)."""

from __future__ import annotations

import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from domain.game import CompletedDeal, Phase, RedealtHands
from services.botkit.view import seat_view_from_dict
from tournament.strategies import Strategy, make_strategy

Decide = Callable[[dict[str, Any]], dict[str, Any]]


# Games whose ended deals a decider keeps, as rebuilt (the oldest forgotten first).
HISTORIES_KEPT = 256
# Seats whose strategy object a decider keeps (the least recently asked forgotten first). A bot
# is not asked once its game is over, so an ended game's seats would otherwise be kept for as
# long as `king bot serve` runs; a seat forgotten while its game goes on gets a new object,
# seeded alike, at its next turn.
STRATEGIES_KEPT = 4 * HISTORIES_KEPT


def strategy_decider(name: str, seed: int = 0) -> Decide:
    """`decide` for the strategy `name`: one strategy object per (game, seat), for the
    `STRATEGIES_KEPT` seats asked last. Each game's ended deals, once rebuilt, are kept for its
    next views (`seat_view_from_dict`'s `known_history`), until the game is over."""
    make_strategy(name, seed)  # fail now on an unknown name
    players: OrderedDict[tuple[str, int], Strategy] = OrderedDict()
    histories: dict[str, tuple[CompletedDeal | RedealtHands, ...]] = {}
    lock = threading.Lock()

    def decide(request: dict[str, Any]) -> dict[str, Any]:
        key = (str(request.get("game_id")), int(request.get("seat", 0)))
        with lock:
            strategy = players.get(key)
            if strategy is None:
                strategy = players[key] = make_strategy(
                    name, seed ^ zlib.crc32(f"{key[0]}:{key[1]}".encode())
                )
                while len(players) > STRATEGIES_KEPT:
                    players.popitem(last=False)
            else:
                players.move_to_end(key)
            known = histories.get(key[0], ())
        view = seat_view_from_dict(request["view"], known)
        with lock:
            histories.pop(key[0], None)
            if view.phase is not Phase.OVER:
                histories[key[0]] = view.history  # (re-inserted: the newest last)
                while len(histories) > HISTORIES_KEPT:
                    del histories[next(iter(histories))]
        try:
            action = strategy(view)
        except Exception:  # a strategy that fails still answers: the first legal action
            action = view.legal[0]
        return action.to_dict()

    return decide
