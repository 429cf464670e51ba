"""The TV page's choice: of the live tables (of one tournament, or of the whole service), the
one most worth watching, from the public view only.

Interest, highest first: a King in reach (in a trump deal a player whose tricks taken plus the
tricks left reach `king_tricks`, and who has taken at least `king_tricks - 4`: the game may end
at any trick), then the closest standings (the smallest gap between the two best running
totals), then the latest deal. The page keeps a table while it is live and switches when it
ends, so the choice matters only then.
"""

from typing import Any

from domain.game import GameState, Phase
from domain.view import public_view
from services.web.tables import TRICKS_PER_DEAL

KING_NEAR = 4  # a King is "in reach" once this few tricks are missing


def interest(state: GameState) -> dict[str, Any] | None:
    """Why a live table is worth watching, and how much (None when it is not in play)."""
    if state.phase not in (Phase.DECLARING, Phase.PLAYING):
        return None
    view = public_view(state)
    totals = [t + d for t, d in zip(view.totals, view.deal_scores, strict=True)]
    best = sorted(totals, reverse=True)
    gap = best[0] - best[1]
    king: dict[str, Any] | None = None
    need = state.rules.king_tricks
    if need and view.contract is not None and view.contract.is_trump:
        left = TRICKS_PER_DEAL - sum(view.tricks_won)
        for seat, won in enumerate(view.tricks_won):
            if won >= need - KING_NEAR and won + left >= need:
                king = {"player": view.players[seat], "tricks": won, "needs": need}
    score = (1 if king else 0, -gap, view.deal_no)
    return {
        "game_id": state.game_id,
        "players": list(view.players),
        "totals": totals,
        "gap": gap,
        "king": king,
        "deal": view.deal_no,
        "deals": state.rules.deals,
        "score": list(score),
    }


def ranked(states: dict[str, GameState | None]) -> list[dict[str, Any]]:
    """The live tables among `states`, most interesting first."""
    found = [x for x in (interest(s) for s in states.values() if s is not None) if x]
    return sorted(found, key=lambda x: (tuple(x["score"]), x["game_id"]), reverse=True)
