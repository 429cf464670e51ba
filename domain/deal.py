"""The card play of one deal: legal cards, why a card is illegal, tricks, early end, scores.

This is the hot path (bots' rollouts and the benchmark run through it), so a deal is an
immutable tuple of ints and masks, and the functions below are plain bit arithmetic.
"""

from __future__ import annotations

from typing import NamedTuple

from domain.cards import (
    BOYS,
    HEARTS,
    KING_OF_HEARTS,
    QUEENS,
    RANK_ACE,
    RANK_KING,
    RANK_QUEEN,
    SUIT_MASKS,
    SUIT_NAMES,
    SUIT_NAMES_SINGULAR,
    card_name,
    cards_of,
)
from domain.contracts import CONTRACT_INFO, LAST_TWO_PENALTY, Contract
from domain.rules import Rules
from domain.violations import Violation

_HEART_MASK = SUIT_MASKS[HEARTS]
# Contracts whose penalty cards must be dropped under a higher card of the led suit (R-DROP).
_DROP_CONTRACTS = frozenset({Contract.NO_QUEENS, Contract.NO_BOYS, Contract.RIFKI})
# Contracts in which a heart may not be led before hearts are broken (R-HEARTLEAD).
_HEART_LEAD_CONTRACTS = frozenset({Contract.NO_HEARTS, Contract.RIFKI})
# Cards a void player must discard when holding one (R-DISCARD); no_tricks and last_two: none.
_DISCARD: dict[Contract, int] = {
    Contract.NO_HEARTS: _HEART_MASK,
    Contract.NO_QUEENS: QUEENS,
    Contract.NO_BOYS: BOYS,
    Contract.RIFKI: KING_OF_HEARTS,
}
_AKQ = tuple(
    (1 << (s * 13 + RANK_ACE)) | (1 << (s * 13 + RANK_KING)) | (1 << (s * 13 + RANK_QUEEN))
    for s in range(4)
)


def _below(c: int) -> int:
    return SUIT_MASKS[c // 13] & ((1 << c) - 1)


class DealState(NamedTuple):
    """One deal in play. Never mutated: `play` returns the next state.

    trick: the cards of the trick in progress, in play order from `leader`.
    played: every card of the completed tricks (what decides whether trump/hearts are broken).
    taken: per seat, the cards of the tricks it won (penalty cards are counted from these).
    winners: the winner of each completed trick, in order.
    akq_seat/akq_owed: a leader who led trump early under R-AKQ owes the rest of A-K-Q.
    king: the seat that reached `king_tricks` tricks in a trump deal (R-KING), else -1.
    """

    rules: Rules
    contract: Contract
    trump: int
    declarer: int
    hands: tuple[int, int, int, int]
    leader: int
    trick: tuple[int, ...]
    played: int
    taken: tuple[int, int, int, int]
    tricks_won: tuple[int, int, int, int]
    winners: tuple[int, ...]
    akq_seat: int
    akq_owed: int
    over: bool
    king: int

    @property
    def to_move(self) -> int:
        return (self.leader + len(self.trick)) & 3

    @property
    def tricks(self) -> int:
        """Completed tricks."""
        return len(self.winners)


def new_deal(
    rules: Rules, contract: Contract, declarer: int, hands: tuple[int, int, int, int]
) -> DealState:
    """A deal about to be played: the declarer leads to the first trick (R-LEAD1)."""
    return DealState(
        rules,
        contract,
        contract.trump_suit,
        declarer,
        hands,
        declarer,
        (),
        0,
        (0, 0, 0, 0),
        (0, 0, 0, 0),
        (),
        -1,
        0,
        False,
        -1,
    )


def _akq_exception(st: DealState, seat: int, hand: int) -> bool:
    """Whether this leader may lead A, K or Q of trump before trump is broken (R-AKQ)."""
    option = st.rules.akq_lead
    if option == "off" or (option == "declarer" and seat != st.declarer):
        return False
    akq = _AKQ[st.trump]
    return hand & akq == akq


def _lead_restriction(st: DealState, seat: int, hand: int) -> int:
    """The suit mask a leader may not lead from (0 when none), and whether AKQ lifts it."""
    if st.trump >= 0:
        tm = SUIT_MASKS[st.trump]
        if st.rules.trump_lead_needs_break and not st.played & tm and hand & ~tm:
            return tm
        return 0
    if st.contract in _HEART_LEAD_CONTRACTS and not st.played & _HEART_MASK and hand & ~_HEART_MASK:
        return _HEART_MASK
    return 0


def _discard_mask(st: DealState, hand: int) -> int:
    pen = _DISCARD.get(st.contract, 0)
    if (
        st.contract is Contract.RIFKI
        and st.rules.rifki_void_must_discard_heart
        and not hand & KING_OF_HEARTS
    ):
        pen = _HEART_MASK
    return pen


def legal_mask(st: DealState) -> int:
    """The cards the seat to move may play, as a mask (0 once the deal is over)."""
    if st.over:
        return 0
    trick = st.trick
    seat = (st.leader + len(trick)) & 3
    hand = st.hands[seat]
    if not trick:
        if st.akq_seat == seat and st.akq_owed & hand:
            return st.akq_owed & hand
        barred = _lead_restriction(st, seat, hand)
        if not barred:
            return hand
        if st.trump >= 0 and _akq_exception(st, seat, hand):
            return (hand & ~barred) | _AKQ[st.trump]
        return hand & ~barred
    led = trick[0] // 13
    in_suit = hand & SUIT_MASKS[led]
    rules = st.rules
    if in_suit:
        top = max(c for c in trick if c // 13 == led)
        if st.contract in _DROP_CONTRACTS:
            drop = in_suit & CONTRACT_INFO[st.contract].penalty_cards & ((1 << top) - 1)
            if drop:
                return drop
        if (led == st.trump and rules.must_raise_trump_lead) or rules.must_beat_led_suit:
            higher = in_suit & ~((2 << top) - 1)
            if higher:
                return higher
        return in_suit
    trump = st.trump
    if trump >= 0:
        trumps = hand & SUIT_MASKS[trump]
        if not trumps:
            return hand
        if rules.must_overtrump:
            in_trick = [c for c in trick if c // 13 == trump]
            if in_trick:
                higher = trumps & ~((2 << max(in_trick)) - 1)
                if higher:
                    return higher
        return trumps
    must = hand & _discard_mask(st, hand)
    return must or hand


def legal_cards(st: DealState) -> tuple[int, ...]:
    return cards_of(legal_mask(st))


def _suit(s: int) -> str:
    return SUIT_NAMES[s]


def check_card(st: DealState, c: int) -> Violation | None:
    """Why the seat to move may not play card c, or None when it may.

    When one card breaks several rules the first in the order of GAME_RECORD.md is named.
    Messages mention only the mover's own cards and the table, never another hand.
    """
    if st.over:
        return Violation("deal_over", "the deal is over")
    seat = st.to_move
    hand = st.hands[seat]
    name = card_name(c)
    if not hand >> c & 1:
        return Violation("card_not_in_hand", f"seat {seat} does not hold {name}")
    s = c // 13
    trick = st.trick
    if not trick:
        owed = st.akq_owed & hand if st.akq_seat == seat else 0
        if owed and not owed >> c & 1:
            need = " ".join(card_name(x) for x in cards_of(owed))
            return Violation("akq_sequence", f"seat {seat} led trump early and must lead {need}")
        barred = _lead_restriction(st, seat, hand)
        if barred >> c & 1:
            if st.trump >= 0:
                if _akq_exception(st, seat, hand) and _AKQ[st.trump] >> c & 1:
                    return None
                return Violation(
                    "trump_not_broken",
                    f"trump ({_suit(st.trump)}) may not be led before a trump has been played",
                )
            return Violation(
                "hearts_not_broken", "a heart may not be led before a heart has been played"
            )
        return None
    led = trick[0] // 13
    in_suit = hand & SUIT_MASKS[led]
    if in_suit and s != led:
        return Violation(
            "must_follow_suit",
            f"seat {seat} holds a {SUIT_NAMES_SINGULAR[led]} and must follow suit",
        )
    allowed = legal_mask(st)
    if allowed >> c & 1:
        return None
    if s == led:
        top = max(x for x in trick if x // 13 == led)
        top_name = card_name(top)
        if st.contract in _DROP_CONTRACTS and in_suit & _below(top) & (
            CONTRACT_INFO[st.contract].penalty_cards
        ):
            need = " or ".join(card_name(x) for x in cards_of(allowed))
            return Violation(
                "must_drop_penalty", f"{top_name} is on the trick: seat {seat} must play {need}"
            )
        if led == st.trump and st.rules.must_raise_trump_lead:
            return Violation(
                "must_raise_trump", f"trump was led: seat {seat} must play a trump above {top_name}"
            )
        return Violation(
            "must_beat", f"seat {seat} must play a {SUIT_NAMES_SINGULAR[led]} above {top_name}"
        )
    if st.trump >= 0:
        if s != st.trump:
            return Violation(
                "must_ruff",
                f"seat {seat} has no {_suit(led)} and must play a trump ({_suit(st.trump)})",
            )
        return Violation(
            "must_overtrump", f"seat {seat} must play a trump higher than the trump in the trick"
        )
    need = " or ".join(card_name(x) for x in cards_of(allowed))
    return Violation(
        "must_discard_penalty",
        f"seat {seat} has no {_suit(led)} and must discard a penalty card ({need})",
    )


def trick_winner(trick: tuple[int, ...], leader: int, trump: int) -> int:
    """The seat that wins a full trick: the highest trump, else the highest card led (R-WIN)."""
    best = trick[0]
    best_i = 0
    for i in (1, 2, 3):
        c = trick[i]
        if c // 13 == best // 13:
            if c > best:
                best, best_i = c, i
        elif c // 13 == trump:
            best, best_i = c, i
    return (leader + best_i) & 3


def _deal_over(st: DealState, played: int, winner: int, won: list[int]) -> tuple[bool, int]:
    """Whether the deal ends after this trick, and the King maker if any."""
    if st.trump >= 0:
        k = st.rules.king_tricks
        if k and won[winner] >= k:
            return True, winner
        return len(st.winners) == 12, -1
    if len(st.winners) == 12:
        return True, -1
    if st.rules.end_early:
        pen = CONTRACT_INFO[st.contract].penalty_cards
        if pen and played & pen == pen:
            return True, -1
    return False, -1


def play(st: DealState, c: int) -> DealState:
    """The state after the seat to move plays card c. The card must be legal (see check_card)."""
    seat = (st.leader + len(st.trick)) & 3
    hands = list(st.hands)
    hand = hands[seat]
    hands[seat] = hand & ~(1 << c)
    akq_seat, akq_owed = st.akq_seat, st.akq_owed
    if not st.trick and st.trump >= 0 and c // 13 == st.trump:
        if akq_seat == seat and akq_owed:
            akq_owed &= ~(1 << c)
        elif _lead_restriction(st, seat, hand) and _akq_exception(st, seat, hand):
            akq_seat, akq_owed = seat, _AKQ[st.trump] & ~(1 << c)
    trick = (*st.trick, c)
    if len(trick) < 4:
        return DealState(
            st.rules,
            st.contract,
            st.trump,
            st.declarer,
            (hands[0], hands[1], hands[2], hands[3]),
            st.leader,
            trick,
            st.played,
            st.taken,
            st.tricks_won,
            st.winners,
            akq_seat,
            akq_owed,
            False,
            -1,
        )
    winner = trick_winner(trick, st.leader, st.trump)
    trick_mask = (1 << trick[0]) | (1 << trick[1]) | (1 << trick[2]) | (1 << trick[3])
    played = st.played | trick_mask
    taken = list(st.taken)
    taken[winner] |= trick_mask
    won = list(st.tricks_won)
    won[winner] += 1
    over, king = _deal_over(st, played, winner, won)
    return DealState(
        st.rules,
        st.contract,
        st.trump,
        st.declarer,
        (hands[0], hands[1], hands[2], hands[3]),
        winner,
        (),
        played,
        (taken[0], taken[1], taken[2], taken[3]),
        (won[0], won[1], won[2], won[3]),
        (*st.winners, winner),
        akq_seat,
        akq_owed,
        over,
        king,
    )


def scores(st: DealState) -> tuple[int, int, int, int]:
    """Each seat's points from the tricks completed so far (R-TRUMP and the penalty table)."""
    info = CONTRACT_INFO[st.contract]
    if st.contract is Contract.LAST_TWO:
        out = [0, 0, 0, 0]
        for w in st.winners[11:13]:
            out[w] += LAST_TWO_PENALTY
        return out[0], out[1], out[2], out[3]
    if info.per_trick:
        a, b, c, d = st.tricks_won
        t = info.per_trick
        return a * t, b * t, c * t, d * t
    pen, per = info.penalty_cards, info.per_card
    a, b, c, d = st.taken
    return (
        (a & pen).bit_count() * per,
        (b & pen).bit_count() * per,
        (c & pen).bit_count() * per,
        (d & pen).bit_count() * per,
    )
