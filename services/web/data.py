"""What the pages show, built from the public record and the public view only.

`replay_payload` is embedded in the replay page and served as JSON for live updates. It holds
the public king-record/1 (ended deals with hands, the seed once revealed) and, per deal, the
server-computed trick winners and running scores (domain.deal), so the page's script steps
through cards without re-implementing the rules. The deal in progress comes from
`public_view`: played cards only, never a hand.
"""

from __future__ import annotations

from typing import Any

from domain.cards import card_name, parse_card
from domain.contracts import Contract
from domain.deal import new_deal, play
from domain.deal import scores as deal_scores
from domain.game import CompletedDeal, GameState, Phase, RedealtHands
from domain.record import to_record
from domain.results import points_number
from domain.rules import Rules
from domain.view import public_view
from services.web.i18n import contract_name


def _running_scores(
    rules: Rules,
    contract: Contract,
    declarer: int,
    hands: tuple[int, ...],
    plays: list[int],
) -> list[list[int]]:
    """Each seat's points after 0, 1, 2, ... completed tricks (from the played cards)."""
    a, b, c, d = hands
    st = new_deal(rules, contract, declarer, (a, b, c, d))
    out = [list(deal_scores(st))]
    for card in plays:
        before = st.tricks
        st = play(st, card)
        if st.tricks != before:
            out.append(list(deal_scores(st)))
    return out


def _tricks(tricks: Any) -> list[dict[str, Any]]:
    return [
        {
            "leader": t.leader,
            "cards": [card_name(c) for c in t.cards],
            "winner": t.winner,
        }
        for t in tricks
    ]


def replay_payload(state: GameState, status: str) -> dict[str, Any]:
    """The replay page's data (public only)."""
    record = to_record(state, public=True)
    deals: list[dict[str, Any]] = []
    totals = [0, 0, 0, 0]
    for i, d in enumerate(state.completed):
        hands = record["deals"][i]["hands"]
        if isinstance(d, RedealtHands):
            deals.append(
                {
                    "index": i + 1,
                    "deal": d.deal,
                    "attempt": d.attempt,
                    "declarer": d.declarer,
                    "redeal": True,
                    "contract": None,
                    "contract_name": "",
                    "hands": hands,
                    "tricks": [],
                    "scores_after": [[0, 0, 0, 0]],
                    "scores": [0, 0, 0, 0],
                    "totals_after": list(totals),
                    "live": False,
                }
            )
            continue
        assert isinstance(d, CompletedDeal)
        plays = [c for t in d.tricks for c in t.cards]
        running = _running_scores(state.rules, d.contract, d.declarer, d.hands, plays)
        totals = [x + y for x, y in zip(totals, d.scores, strict=True)]
        deals.append(
            {
                "index": i + 1,
                "deal": d.deal,
                "attempt": d.attempt,
                "declarer": d.declarer,
                "redeal": False,
                "contract": d.contract.value,
                "contract_name": contract_name(d.contract.value),
                "hands": hands,
                "tricks": _tricks(d.tricks),
                "scores_after": running,
                "scores": list(d.scores),
                "tricks_won": list(d.tricks_won),
                "void": d.void,
                "king": d.king,
                "totals_after": list(totals),
                "live": False,
            }
        )
    live: dict[str, Any] | None = None
    view = public_view(state)
    if state.phase in (Phase.DECLARING, Phase.PLAYING):
        live_tricks = _tricks(view.tricks)
        running = [[0, 0, 0, 0]]
        st = state.deal
        if st is not None:
            # Scores after each completed trick follow from the played cards alone; the
            # hands are needed only to run domain.deal and never leave this function.
            plays = [
                parse_card(c) for t in live_tricks if t["winner"] is not None for c in t["cards"]
            ]
            running = _running_scores(state.rules, st.contract, st.declarer, state.hands, plays)
        live = {
            "index": len(deals) + 1,
            "deal": view.deal_no,
            "attempt": view.attempt,
            "declarer": view.declarer if view.declarer >= 0 else None,
            "redeal": False,
            "contract": view.contract.value if view.contract else None,
            "contract_name": contract_name(view.contract.value if view.contract else None),
            "hands": None,
            "tricks": live_tricks,
            "scores_after": running,
            "scores": list(view.deal_scores),
            "tricks_won": list(view.tricks_won),
            "totals_after": list(state.totals),
            "live": True,
            "phase": view.phase.value,
            "to_move": view.to_move,
        }
        deals.append(live)
    result = state.result
    return {
        "game_id": state.game_id,
        "status": status,
        "version": state.version,
        "players": list(view.players),
        "rules": state.rules.to_dict(),
        "deal_count": state.rules.deals,  # deals are numbered 1..deal_count (`deal`)
        "phase": state.phase.value,
        "totals": list(state.totals),
        "winners": list(result.winners) if result else None,
        "ladder_points": [points_number(p) for p in result.ladder_points] if result else None,
        "commitment": state.commitment,
        "seed": state.seed,
        "deals": deals,
        "record": record,
    }
