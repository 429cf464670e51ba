"""Play a deal out fast on the bitmask DealState, and score the end for one seat.

The rollout policy is the heuristic's card play with every hand known (weights 1): in a
sampled deal that is both cheap and a fair model of sensible opponents.
"""

from __future__ import annotations

from domain.deal import DealState, legal_mask, play, scores
from tournament.strategies.cardplay import rollout_card

# A King (R-KING) ends the game: +12 ladder points to the maker, -4 to each other player.
# In deal points that is worth far more than any deal; these weights keep it decisive.
KING_WIN = 1500.0
KING_LOSS = -500.0


def rollout(st: DealState) -> DealState:
    """The deal played to its end by the rollout policy for all four seats."""
    while not st.over:
        legal = legal_mask(st)
        if legal & (legal - 1):
            st = play(st, rollout_card(st, legal))
        else:
            st = play(st, legal.bit_length() - 1)
    return st


def deal_value(st: DealState, seat: int) -> float:
    """The seat's deal points minus the mean of the others' (plus the King's weight)."""
    pts = scores(st)
    value = pts[seat] - (pts[0] + pts[1] + pts[2] + pts[3] - pts[seat]) / 3.0
    if st.king >= 0:
        value += KING_WIN if st.king == seat else KING_LOSS
    return value
