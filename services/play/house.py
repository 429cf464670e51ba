"""House bots: the built-in strategies playing seats named `house:<strategy>`.

They also choose the default move played for a seat that gets a strike. A strategy that fails
(raises, or returns an action that is not legal) is replaced for that decision by the first
legal action, so a house seat never stalls a game.
"""

from __future__ import annotations

import threading
import zlib

from domain.view import Action, SeatView
from services.observability import get_logger
from tournament.strategies import Strategy, UnknownStrategy, make_strategy

HOUSE_PREFIX = "house:"
log = get_logger("king.house")


def is_house(owner: str) -> bool:
    return owner.startswith(HOUSE_PREFIX)


def house_owner(strategy: str) -> str:
    return HOUSE_PREFIX + strategy


def check_house(owner: str) -> str | None:
    """Why `house:<strategy>` cannot be built, or None."""
    try:
        make_strategy(owner[len(HOUSE_PREFIX) :], 0)
    except UnknownStrategy as exc:
        return str(exc)
    return None


class HouseBots:
    def __init__(self) -> None:
        self._strategies: dict[tuple[str, int, str], Strategy] = {}
        self._lock = threading.Lock()
        self.failures = 0

    def _strategy(self, game_id: str, seat: int, owner: str) -> Strategy:
        key = (game_id, seat, owner)
        with self._lock:
            strategy = self._strategies.get(key)
            if strategy is None:
                seed = zlib.crc32(f"{game_id}:{seat}".encode())
                strategy = make_strategy(owner[len(HOUSE_PREFIX) :], seed)
                self._strategies[key] = strategy
            return strategy

    def choose(self, game_id: str, seat: int, owner: str, view: SeatView) -> Action:
        """The house strategy's action for the view (blocking: run it off the event loop)."""
        if not view.legal:
            raise ValueError("no legal action for this seat now")
        try:
            action = self._strategy(game_id, seat, owner)(view)
            if action in view.legal:
                return action
            problem = "an action that is not legal"
        except Exception as exc:
            problem = type(exc).__name__
        self.failures += 1
        log.warning("house_strategy_failed", game_id=game_id, seat=seat, owner=owner, error=problem)
        return view.legal[0]

    def forget(self, game_id: str) -> None:
        with self._lock:
            for key in [k for k in self._strategies if k[0] == game_id]:
                del self._strategies[key]
