"""Card play that knows each contract, on bitmasks: the heuristic's play and the rollout policy.

`choose_card` reads the deal (`DealState`: contract, trick, cards played) and, per seat, a
`possible` mask of cards that seat may hold with a `weight`, the chance that one of those cards
is really there: the heuristic passes what its seat can infer (weights below 1). The strong
strategy's rollouts know every hand of a sampled deal; `rollout_card` is the same choice for
that case (all weights 1), written with plain bit tests because rollouts spend most of their
time here (a test checks that the two agree).

Each legal card gets a score in points: what it risks now (the chance it ends up winning the
trick times what the trick is worth) against what playing it is worth later (shedding a
dangerous card in a penalty deal, keeping a likely winner in a trump deal).
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.cards import HEARTS, SUIT_MASKS
from domain.contracts import CONTRACT_INFO, Contract
from domain.deal import DealState

DROP = frozenset({Contract.NO_QUEENS, Contract.NO_BOYS, Contract.RIFKI})
FULL_DECK = (1 << 52) - 1
TRICK_POINTS = 50.0

# How much the future value of a card counts beside what it risks in this trick (set by hand
# and by a few matches, not fitted).
SHED_WEIGHT = 0.5
KEEP_WEIGHT = 0.8
VOID_BONUS = 0.15
DRAW_BONUS = 0.3


def _p_any(n: int, w: float) -> float:
    """The chance that a seat holds at least one of n possible cards, each held with chance w."""
    if not n:
        return 0.0
    if w >= 1.0:
        return 1.0
    return 1.0 - (1.0 - w) ** n


def choose_card(st: DealState, legal: int, possible: Sequence[int], weight: Sequence[float]) -> int:
    """The card to play from the `legal` mask for the seat to move."""
    if not legal & (legal - 1):
        return legal.bit_length() - 1
    if st.trump >= 0:
        return _trump_card(st, legal, possible, weight)
    return _penalty_card(st, legal, possible, weight)


def _cards(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _top(trick: tuple[int, ...], trump: int) -> int:
    best = trick[0]
    for c in trick[1:]:
        if c // 13 == best // 13:
            if c > best:
                best = c
        elif c // 13 == trump:
            best = c
    return best


def _to_move(st: DealState) -> tuple[int, int, int]:
    """The seat to move, its hand, and the cards out of its sight: in the other hands."""
    seat = (st.leader + len(st.trick)) & 3
    hand = st.hands[seat]
    return seat, hand, FULL_DECK & ~(st.played | st.trick_bits | hand)


def _penalty_card(
    st: DealState, legal: int, possible: Sequence[int], weight: Sequence[float]
) -> int:
    contract = st.contract
    info = CONTRACT_INFO[contract]
    pen = info.penalty_cards
    per = float(-info.per_card)
    trick = st.trick
    n = len(trick)
    trick_mask = st.trick_bits
    seat, hand, out = _to_move(st)
    done = len(st.winners)
    remaining = 13 - done
    if contract is Contract.NO_TRICKS:
        trick_cost = unit = TRICK_POINTS
    elif contract is Contract.LAST_TWO:
        trick_cost = 180.0 if done >= 11 else (60.0 if done == 10 else 0.0)
        unit = 360.0 / remaining
    else:
        trick_cost = 0.0
        unit = per * (pen & (out | hand | trick_mask)).bit_count() / remaining
    trick_pen = per * (trick_mask & pen).bit_count()
    led = trick[0] // 13 if n else -1
    top = max(c for c in trick if c // 13 == led) if n else -1
    later = [(seat + i) & 3 for i in range(1, 4 - n)]
    hearts_follow = contract is Contract.NO_HEARTS
    drop = contract in DROP
    best, best_score = -1, -1e18
    for c in _cards(legal):
        s = c // 13
        sm = SUIT_MASKS[s]
        cbit = 1 << c
        hi = sm & ~((cbit << 1) - 1)
        immediate = 0.0
        if n == 0 or (s == led and c > top):
            lo = sm & (cbit - 1)
            p_win = 1.0
            add = 0.0
            for j in later:
                pj, wj = possible[j], weight[j]
                p_follow = _p_any((pj & sm).bit_count(), wj)
                p_over = _p_any((pj & hi).bit_count(), wj) * (
                    1.0 - _p_any((pj & lo).bit_count(), wj)
                )
                p_win *= 1.0 - p_over
                if pen:
                    if drop:
                        given = _p_any((pj & pen & lo).bit_count(), wj)
                    elif hearts_follow and s == HEARTS:
                        given = 1.0
                    else:
                        given = 0.0
                    add += p_follow * given + (1.0 - p_follow) * _p_any((pj & pen).bit_count(), wj)
            own = 1.0 if cbit & pen else 0.0
            immediate = p_win * (trick_pen + per * (own + add) + trick_cost)
        danger = 1.0 / (1 + (out & hi).bit_count())
        shed = per * danger if cbit & pen else unit * danger
        score = SHED_WEIGHT * shed - immediate
        if score > best_score:
            best, best_score = c, score
    return best


def _trump_card(st: DealState, legal: int, possible: Sequence[int], weight: Sequence[float]) -> int:
    trump = st.trump
    tm = SUIT_MASKS[trump]
    trick = st.trick
    n = len(trick)
    seat, hand, out = _to_move(st)
    top = _top(trick, trump) if n else -1
    led = trick[0] // 13 if n else -1
    later = [(seat + i) & 3 for i in range(1, 4 - n)]
    my_trumps = hand & tm
    their_trumps = out & tm
    best, best_score = -1, -1e18
    for c in _cards(legal):
        s = c // 13
        cbit = 1 << c
        hi = SUIT_MASKS[s] & ~((cbit << 1) - 1)
        lead_suit = s if n == 0 else led
        if n == 0:
            beats = True
        else:
            ts = top // 13
            beats = (s == ts and c > top) or (s == trump and ts != trump)
        p_win = 0.0
        if beats:
            p_win = 1.0
            lsm = SUIT_MASKS[lead_suit]
            for j in later:
                pj, wj = possible[j], weight[j]
                if s == trump and lead_suit != trump:
                    p_void = 1.0 - _p_any((pj & lsm).bit_count(), wj)
                    p_beat = p_void * _p_any((pj & hi).bit_count(), wj)
                elif s == trump:
                    p_beat = _p_any((pj & hi).bit_count(), wj)
                else:
                    p_void = 1.0 - _p_any((pj & lsm).bit_count(), wj)
                    p_hi = _p_any((pj & hi).bit_count(), wj)
                    p_ruff = p_void * _p_any((pj & tm).bit_count(), wj)
                    p_beat = 1.0 - (1.0 - p_hi) * (1.0 - p_ruff)
                p_win *= 1.0 - p_beat
        strength = 1.0 / (1 + (out & hi).bit_count())
        keep = 0.3 + 0.7 * strength if s == trump else strength
        score = p_win - KEEP_WEIGHT * keep
        if n == 0:
            if s == trump and their_trumps:
                score += DRAW_BONUS * p_win
            elif s != trump and my_trumps and not hand & SUIT_MASKS[s] & ~cbit:
                score += VOID_BONUS
        if score > best_score:
            best, best_score = c, score
    return best


def rollout_card(st: DealState, legal: int) -> int:
    """`choose_card` with every hand known (all weights 1), written for speed.

    The chances above all become 0 or 1, so this is the same choice with plain bit tests
    (tests check the two agree); rollouts spend most of their time here.
    """
    if not legal & (legal - 1):
        return legal.bit_length() - 1
    if st.trump >= 0:
        return _trump_exact(st, legal)
    return _penalty_exact(st, legal)


def _penalty_params(contract: Contract) -> tuple[int, float, int, bool, bool]:
    """Per contract: penalty cards, points per card, trick-cost kind, hearts-follow, R-DROP."""
    info = CONTRACT_INFO[contract]
    kind = 0 if contract is Contract.NO_TRICKS else 1 if contract is Contract.LAST_TWO else 2
    return (
        info.penalty_cards,
        float(-info.per_card),
        kind,
        contract is Contract.NO_HEARTS,
        contract in DROP,
    )


_PENALTY_PARAMS = {c: _penalty_params(c) for c in Contract if not c.is_trump}


def _penalty_exact(st: DealState, legal: int) -> int:
    pen, per, kind, hearts_follow, drop = _PENALTY_PARAMS[st.contract]
    trick = st.trick
    n = len(trick)
    trick_mask = st.trick_bits
    seat, hand, out = _to_move(st)
    hands = st.hands
    done = len(st.winners)
    if kind == 0:
        trick_cost = unit = TRICK_POINTS
    elif kind == 1:
        trick_cost = 180.0 if done >= 11 else (60.0 if done == 10 else 0.0)
        unit = 360.0 / (13 - done)
    else:
        trick_cost = 0.0
        unit = per * (pen & (out | hand | trick_mask)).bit_count() / (13 - done)
    trick_pen = per * (trick_mask & pen).bit_count()
    if n:
        led = trick[0] // 13
        top = (trick_mask & SUIT_MASKS[led]).bit_length() - 1
        later = (hands[(seat + 1) & 3], hands[(seat + 2) & 3])[: 3 - n]
    else:
        led = top = -1
        later = (hands[(seat + 1) & 3], hands[(seat + 2) & 3], hands[(seat + 3) & 3])
    best, best_score = -1, -1e18
    m = legal
    while m:
        cbit = m & -m
        m ^= cbit
        c = cbit.bit_length() - 1
        s = c // 13
        sm = SUIT_MASKS[s]
        hi = sm & ~((cbit << 1) - 1)
        immediate = 0.0
        if n == 0 or (s == led and c > top):
            lo = sm & (cbit - 1)
            add = 0
            for h in later:
                if h & hi and not h & lo:
                    break
                if pen:
                    if h & sm:
                        if (drop and h & pen & lo) or (hearts_follow and s == HEARTS):
                            add += 1
                    elif h & pen:
                        add += 1
            else:
                own = 1 if cbit & pen else 0
                immediate = trick_pen + per * (own + add) + trick_cost
        danger = 1.0 / (1 + (out & hi).bit_count())
        shed = per * danger if cbit & pen else unit * danger
        score = SHED_WEIGHT * shed - immediate
        if score > best_score:
            best, best_score = c, score
    return best


def _trump_exact(st: DealState, legal: int) -> int:
    trump = st.trump
    tm = SUIT_MASKS[trump]
    trick = st.trick
    n = len(trick)
    seat, hand, out = _to_move(st)
    hands = st.hands
    if n:
        top = _top(trick, trump)
        led = trick[0] // 13
        ts = top // 13
    else:
        top = led = ts = -1
    later = [hands[(seat + i) & 3] for i in range(1, 4 - n)]
    my_trumps = hand & tm
    their_trumps = out & tm
    best, best_score = -1, -1e18
    m = legal
    while m:
        cbit = m & -m
        m ^= cbit
        c = cbit.bit_length() - 1
        s = c // 13
        hi = SUIT_MASKS[s] & ~((cbit << 1) - 1)
        lead_suit = s if n == 0 else led
        win = n == 0 or (s == ts and c > top) or (s == trump and ts != trump)
        if win:
            lsm = SUIT_MASKS[lead_suit]
            for h in later:
                if s == trump:
                    if h & hi and (lead_suit == trump or not h & lsm):
                        win = False
                        break
                elif h & hi or (not h & lsm and h & tm):
                    win = False
                    break
        strength = 1.0 / (1 + (out & hi).bit_count())
        keep = 0.3 + 0.7 * strength if s == trump else strength
        score = (1.0 if win else 0.0) - KEEP_WEIGHT * keep
        if n == 0:
            if s == trump and their_trumps:
                if win:
                    score += DRAW_BONUS
            elif s != trump and my_trumps and not hand & SUIT_MASKS[s] & ~cbit:
                score += VOID_BONUS
        if score > best_score:
            best, best_score = c, score
    return best
