"""Contract choice: what each legal contract is worth for this hand, against its usual worth.

A contract's worth is the declarer's expected deal value (own points minus the others' mean)
for this hand. It is a linear model over the hand's features, per suit: its length, and each
honour (T J Q K A) with how many lower cards guard it, and its low cards (2-5). For a trump
contract the trump suit and the side suits have their own weights (trump length and honours
make tricks, short side suits ruff); for no_hearts and rifki the hearts do; the other penalty
contracts treat the four suits alike (exposure: unguarded high cards, queens, boys, long
suits). The weights were fitted to simulated deals by calibrate.py (bidding_model.py).

Every right must be used sooner or later, so what matters is not a contract's worth but how
much better this hand suits it than an average hand does (its worth above BASELINES); the
heuristic weighs that edge in ladder points for the game's state (objective.contract_outlook).
"""

from __future__ import annotations

from domain.cards import HEARTS
from domain.contracts import Contract
from tournament.strategies.bidding_model import COEFFICIENTS

BLOCK = 30  # features per suit
_HONOURS = (8, 9, 10, 11, 12)  # T J Q K A


def _suit_features(pattern: int, offset: int, out: list[int]) -> None:
    """Append the feature indices of one suit's 13-bit rank pattern (repeats count)."""
    n = pattern.bit_count()
    out.append(offset + min(n, 8))
    for k, r in enumerate(_HONOURS):
        if pattern >> r & 1:
            lower = (pattern & ((1 << r) - 1)).bit_count()
            out.append(offset + 9 + 4 * k + min(lower, 3))
    out.extend([offset + 29] * (pattern & 0b1111).bit_count())


def model_key(contract: Contract) -> str:
    return "trump" if contract.is_trump else contract.value


def features(hand: int, contract: Contract) -> tuple[list[int], int]:
    """The hand's feature indices for `contract` (index 0 is the bias), and the model size."""
    idx = [0]
    if contract.is_trump or contract in (Contract.NO_HEARTS, Contract.RIFKI):
        special = contract.trump_suit if contract.is_trump else HEARTS
        _suit_features(hand >> (13 * special) & 0x1FFF, 1, idx)
        for s in range(4):
            if s != special:
                _suit_features(hand >> (13 * s) & 0x1FFF, 1 + BLOCK, idx)
        return idx, 1 + 2 * BLOCK
    for s in range(4):
        _suit_features(hand >> (13 * s) & 0x1FFF, 1, idx)
    return idx, 1 + BLOCK


def worth(hand: int, contract: Contract) -> float:
    """The declarer's expected deal value for this hand (own points minus the others' mean)."""
    idx, _ = features(hand, contract)
    w = COEFFICIENTS[model_key(contract)]
    return sum(w[i] for i in idx)
