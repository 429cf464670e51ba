"""Contract choice: what each legal contract is worth for this hand, against its usual worth.

A contract's worth is the declarer's expected deal points minus the mean of the other three
(the deal's share of the ladder race), estimated from the hand: expected tricks for a trump
suit; the expected penalty taken for a penalty contract. Every right must be used sooner or
later, so what matters is not the worth itself but how much better this hand is for the
contract than an average hand: we pick the largest worth above the contract's baseline.
"""

from __future__ import annotations

from domain.cards import HEARTS, RANK_ACE, RANK_JACK, RANK_KING, RANK_QUEEN, SUIT_MASKS
from domain.contracts import CONTRACT_INFO, PENALTY_CONTRACTS, TRUMP_CONTRACTS, Contract

_LOW = 6  # ranks 2..8 (index < 7) count as low cards that can duck


def _suit(hand: int, s: int) -> int:
    """The 13-bit rank pattern of suit s in hand."""
    return hand >> (13 * s) & 0x1FFF


def _has(pattern: int, rank: int) -> bool:
    return bool(pattern >> rank & 1)


def _low_count(pattern: int) -> int:
    return (pattern & ((1 << (_LOW + 1)) - 1)).bit_count()


def trump_tricks(hand: int, trump: int) -> float:
    """Expected tricks with `trump` as trump (a bridge-like count: honours, length, ruffs)."""
    t = _suit(hand, trump)
    length = t.bit_count()
    tricks = 0.0
    if _has(t, RANK_ACE):
        tricks += 1.0
    if _has(t, RANK_KING):
        tricks += 0.95 if length >= 2 else 0.4
    if _has(t, RANK_QUEEN):
        tricks += 0.8 if length >= 3 else 0.3
    if _has(t, RANK_JACK):
        tricks += 0.5 if length >= 4 else 0.15
    tricks += max(0, length - 4) * 0.9
    spare = max(0, length - 3)
    for s in range(4):
        if s == trump:
            continue
        p = _suit(hand, s)
        n = p.bit_count()
        if _has(p, RANK_ACE):
            tricks += 0.9 if n <= 5 else 0.7
        if _has(p, RANK_KING):
            tricks += (0.8 if _has(p, RANK_ACE) else 0.55) if n >= 2 else 0.15
        if _has(p, RANK_QUEEN) and n >= 3:
            tricks += 0.3 if _has(p, RANK_KING) else 0.15
        if spare:
            ruff = 1.0 if n == 0 else 0.55 if n == 1 else 0.2 if n == 2 else 0.0
            use = min(spare, ruff * 2)
            tricks += use * 0.6
            spare = max(0, spare - int(ruff * 2 + 0.5))
    return min(13.0, tricks)


_TRICK_RISK = (0.0, 0.0, 0.0, 0.0, 0.0, 0.01, 0.03, 0.06, 0.12, 0.22, 0.38, 0.58, 0.82)


def _card_risk(pattern: int, rank: int) -> float:
    """Chance a card of this rank takes a trick in a no-trump penalty deal, given its suit."""
    base = _TRICK_RISK[rank]
    lower = (pattern & ((1 << rank) - 1)).bit_count()
    low = _low_count(pattern)
    cover = 1.0 if low == 0 else 0.8 if low == 1 else 0.65 if low == 2 else 0.55
    if lower == 0 and rank >= RANK_JACK:
        cover = 1.0
    return base * cover


def no_trick_risk(hand: int) -> float:
    """Expected tricks taken in a no-trump penalty deal when trying to take none."""
    total = 0.0
    for s in range(4):
        p = _suit(hand, s)
        n = p.bit_count()
        for r in range(13):
            if _has(p, r):
                total += _card_risk(p, r)
        if n > 4:
            total += (n - 4) * 0.25 * (1.0 - 0.1 * _low_count(p))
    return total


def _penalty_taken(hand: int, contract: Contract) -> float:
    """Expected penalty points (positive) the declarer takes in a penalty contract."""
    tricks = no_trick_risk(hand)
    if contract is Contract.NO_TRICKS:
        return 50.0 * tricks
    if contract is Contract.NO_HEARTS:
        h = _suit(hand, HEARTS)
        heart_risk = sum(_card_risk(h, r) for r in range(13) if _has(h, r))
        return 30.0 * (0.85 * tricks + 1.2 * heart_risk)
    if contract is Contract.LAST_TWO:
        lengths = [_suit(hand, s).bit_count() for s in range(4)]
        high = sum(1 for s in range(4) for r in (RANK_ACE, RANK_KING) if _has(_suit(hand, s), r))
        return 180.0 * (0.2 + 0.07 * sum(max(0, n - 3) for n in lengths) + 0.04 * high)
    risk = 0.0
    for s in range(4):
        p = _suit(hand, s)
        n = p.bit_count()
        low = _low_count(p)
        guard = 1.0 if low == 0 else 0.75 if low == 1 else 0.6
        if contract is Contract.NO_QUEENS:
            if _has(p, RANK_QUEEN):
                risk += (0.55 if n <= 2 else 0.4) * guard
                if _has(p, RANK_KING) or _has(p, RANK_ACE):
                    risk += 0.15
            else:
                risk += (0.15 * _has(p, RANK_ACE) + 0.12 * _has(p, RANK_KING)) * guard
        elif contract is Contract.NO_BOYS:
            for r, weight in ((RANK_KING, 0.45), (RANK_JACK, 0.3)):
                if _has(p, r):
                    risk += weight * guard
            risk += 0.3 * _has(p, RANK_ACE) * guard
            risk += 0.12 * _has(p, RANK_QUEEN) * guard
        elif contract is Contract.RIFKI and s == HEARTS:
            short = sum(1 for x in range(4) if x != HEARTS and _suit(hand, x).bit_count() <= 1)
            if _has(p, RANK_KING):
                risk += max(0.25, (0.9 if _has(p, RANK_ACE) else 0.6) * guard - 0.1 * short)
            elif _has(p, RANK_ACE):
                risk += 0.3 * guard
    return float(-CONTRACT_INFO[contract].per_card) * risk


def worth(hand: int, contract: Contract) -> float:
    """The declarer's expected deal points minus the others' mean, for this hand."""
    total = CONTRACT_INFO[contract].deal_total
    if contract.is_trump:
        own = 50.0 * trump_tricks(hand, contract.trump_suit)
    else:
        own = -min(_penalty_taken(hand, contract), -total)
    return own - (total - own) / 3.0


# Mean worth of each contract over random hands: baseline_worths(20000, seed=0), rounded.
BASELINE: dict[Contract, float] = {
    Contract.NO_TRICKS: 98.2,
    Contract.NO_HEARTS: 50.3,
    Contract.NO_QUEENS: 65.1,
    Contract.NO_BOYS: 94.1,
    Contract.LAST_TWO: 9.0,
    Contract.RIFKI: 43.1,
    Contract.TRUMP_S: 22.8,
    Contract.TRUMP_H: 22.8,
    Contract.TRUMP_D: 22.8,
    Contract.TRUMP_C: 22.8,
}


def baseline_worths(hands: int = 20000, seed: int = 0) -> dict[Contract, float]:
    """The mean `worth` of each contract over random hands (the trump one: of the best suit)."""
    import random

    rng = random.Random(seed)
    sums = dict.fromkeys((*PENALTY_CONTRACTS, TRUMP_CONTRACTS[0]), 0.0)
    deck = list(range(52))
    for _ in range(hands):
        rng.shuffle(deck)
        hand = 0
        for card in deck[:13]:
            hand |= 1 << card
        for c in PENALTY_CONTRACTS:
            sums[c] += worth(hand, c)
        sums[TRUMP_CONTRACTS[0]] += max(worth(hand, t) for t in TRUMP_CONTRACTS)
    out = {c: v / hands for c, v in sums.items()}
    for t in TRUMP_CONTRACTS[1:]:
        out[t] = out[TRUMP_CONTRACTS[0]]
    return out


def advantage(hand: int, contract: Contract) -> float:
    """How much better this hand suits `contract` than an average hand does."""
    return worth(hand, contract) - BASELINE[contract]


__all__ = ["SUIT_MASKS", "advantage", "baseline_worths", "trump_tricks", "worth"]
