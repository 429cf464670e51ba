"""What a seat can know about the other hands of the deal in play, from its view alone.

Every trick is public, and every rule that forces a card tells something when a player does
not play the forced card: not following suit shows a void, not ruffing shows no trump, not
discarding a penalty card shows none is held, not dropping (R-DROP) or not raising (R-RAISE,
R-OVERTRUMP, R-NOBEAT option) shows the cards that would have been forced are elsewhere, and a
heart or trump led before it is broken shows a hand of nothing else. These facts only ever
exclude cards (hands only shrink), so a seat's `possible` mask is exact about what it cannot
hold. The sampler of the strong strategy deals the unseen cards within these masks.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.cards import (
    BOYS,
    FULL_DECK,
    HEARTS,
    KING_OF_HEARTS,
    QUEENS,
    RANK_ACE,
    RANK_KING,
    RANK_QUEEN,
    SUIT_MASKS,
)
from domain.contracts import Contract
from domain.deal import DealState, new_deal, play
from domain.rules import Rules
from domain.view import SeatView

_HEART_MASK = SUIT_MASKS[HEARTS]
DROP_CONTRACTS = frozenset({Contract.NO_QUEENS, Contract.NO_BOYS, Contract.RIFKI})
# The penalty cards of each card-based contract: what R-DROP and R-DISCARD force.
_PENALTY = {
    Contract.NO_HEARTS: _HEART_MASK,
    Contract.NO_QUEENS: QUEENS,
    Contract.NO_BOYS: BOYS,
    Contract.RIFKI: KING_OF_HEARTS,
}


def akq_mask(suit: int) -> int:
    base = suit * 13
    return (1 << (base + RANK_ACE)) | (1 << (base + RANK_KING)) | (1 << (base + RANK_QUEEN))


def above(c: int) -> int:
    """The cards of c's suit that rank above c."""
    return SUIT_MASKS[c // 13] & ~((2 << c) - 1)


@dataclass(frozen=True, slots=True)
class Knowledge:
    """One seat's knowledge of the deal in play.

    state: the deal as public facts plus this seat's hand (other hands are 0 in it).
    out: the cards the other three seats hold between them.
    counts: how many cards each seat still holds.
    possible: per seat, the cards it may hold (this seat: exactly its hand).
    """

    seat: int
    state: DealState
    out: int
    counts: tuple[int, int, int, int]
    possible: tuple[int, int, int, int]

    @property
    def weights(self) -> tuple[float, float, float, float]:
        """Per seat, the chance that one of its possible cards is really in its hand."""
        out: list[float] = []
        for s in range(4):
            n = self.possible[s].bit_count()
            out.append(1.0 if n <= self.counts[s] else self.counts[s] / n)
        return out[0], out[1], out[2], out[3]


def exclusions(
    rules: Rules,
    contract: Contract,
    declarer: int,
    tricks: list[tuple[int, tuple[int, ...]]],
) -> list[int]:
    """Per seat, the cards the public play proves it does not hold.

    `tricks` are (leader, cards) in order, the last one possibly unfinished.
    """
    excluded = [0, 0, 0, 0]
    trump = contract.trump_suit
    tm = SUIT_MASKS[trump] if trump >= 0 else 0
    pen = _PENALTY.get(contract, 0)
    drop = contract in DROP_CONTRACTS
    played = 0
    akq_seat, akq_owed = -1, 0
    for leader, cards in tricks:
        if not cards:
            continue
        lead = cards[0]
        led = lead // 13
        # The leader: a trump or heart led before it is broken means nothing else was held.
        if trump >= 0 and lead // 13 == trump:
            if akq_seat == leader and akq_owed:
                akq_owed &= ~(1 << lead)
            elif rules.trump_lead_needs_break and not played & tm:
                akq_ok = rules.akq_lead == "any" or (
                    rules.akq_lead == "declarer" and leader == declarer
                )
                if akq_ok and (1 << lead) & akq_mask(trump):
                    # Either a hand of trumps only or the A-K-Q exception: assume the debt.
                    akq_seat, akq_owed = leader, akq_mask(trump) & ~(1 << lead)
                else:
                    excluded[leader] |= FULL_DECK & ~tm
        elif (
            contract in (Contract.NO_HEARTS, Contract.RIFKI)
            and led == HEARTS
            and not played & _HEART_MASK
        ):
            excluded[leader] |= FULL_DECK & ~_HEART_MASK
        # The followers.
        for i in range(1, len(cards)):
            seat = (leader + i) & 3
            c = cards[i]
            s = c // 13
            so_far = cards[:i]
            if s == led:
                top = max(x for x in so_far if x // 13 == led)
                if drop:
                    must_drop = SUIT_MASKS[led] & pen & ((1 << top) - 1)
                    if must_drop >> c & 1:
                        continue
                    excluded[seat] |= must_drop
                raise_ = (led == trump and rules.must_raise_trump_lead) or rules.must_beat_led_suit
                if raise_ and c < top:
                    excluded[seat] |= above(top)
                continue
            excluded[seat] |= SUIT_MASKS[led]
            if trump >= 0:
                if s != trump:
                    excluded[seat] |= tm
                elif rules.must_overtrump:
                    trumps = [x for x in so_far if x // 13 == trump]
                    if trumps and c < max(trumps):
                        excluded[seat] |= above(max(trumps))
                continue
            must = pen
            if not must or (1 << c) & must:
                continue
            excluded[seat] |= must
            if contract is Contract.RIFKI and rules.rifki_void_must_discard_heart and s != HEARTS:
                # Without KH a void player must discard a heart when holding one.
                excluded[seat] |= _HEART_MASK
        if len(cards) == 4:
            for c in cards:
                played |= 1 << c
    return excluded


def knowledge_of(view: SeatView) -> Knowledge:
    """What `view.seat` knows of the deal in play (the view must be in the playing phase).

    The public state is rebuilt by replaying the tricks with the domain's own `play` from the
    hands as far as they are known (this seat's whole hand, the others' played cards), so the
    tricks' winners, the cards taken and the R-AKQ debt are the domain's, not a copy of them.
    """
    contract = view.contract
    assert contract is not None and view.seat >= 0
    seat, rules = view.seat, view.rules
    tricks = [(t.leader, t.cards) for t in view.tricks]
    excluded = exclusions(rules, contract, view.declarer, tricks)
    start = [0, 0, 0, 0]
    start[seat] = view.hand
    order: list[int] = []
    for leader, cards in tricks:
        for i, c in enumerate(cards):
            start[(leader + i) & 3] |= 1 << c
            order.append(c)
    state = new_deal(rules, contract, view.declarer, (start[0], start[1], start[2], start[3]))
    for c in order:
        state = play(state, c)
    counts = [13 - (start[s] & ~state.hands[s]).bit_count() for s in range(4)]
    counts[seat] = view.hand.bit_count()
    in_trick = 0
    for c in state.trick:
        in_trick |= 1 << c
    out = FULL_DECK & ~state.played & ~in_trick & ~view.hand
    possible = [out & ~excluded[s] for s in range(4)]
    possible[seat] = view.hand
    return Knowledge(
        seat,
        state,
        out,
        (counts[0], counts[1], counts[2], counts[3]),
        (possible[0], possible[1], possible[2], possible[3]),
    )
