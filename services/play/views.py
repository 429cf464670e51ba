"""Seat and public views as JSON, built by domain.view, with the ended deals' part cached.

`SeatView.to_dict()` re-encodes every ended deal (hands and tricks) each time; those never
change, so each ended deal is encoded once per game (by domain.view's own `summary_dict`) and
reused. The result is the same dict as `seat_view(...).to_dict()`.
"""

from __future__ import annotations

from typing import Any

from domain.game import GameState
from domain.view import SeatView, seat_view, summary_dict


class ViewCache:
    def __init__(self) -> None:
        self._history: dict[str, list[dict[str, Any]]] = {}

    def to_dict(self, view: SeatView) -> dict[str, Any]:
        out = view.to_dict(history=False)
        done = self._history.setdefault(view.game_id, [])
        if len(done) > len(view.history):  # another game with the same id? start over
            done.clear()
        for deal in view.history[len(done) :]:
            done.append(summary_dict(deal))
        out["history"] = done[: len(view.history)]
        return out

    def seat(self, state: GameState, seat: int) -> dict[str, Any]:
        return self.to_dict(seat_view(state, seat))

    def forget(self, game_id: str) -> None:
        self._history.pop(game_id, None)
