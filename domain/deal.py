"""The card play of one deal: legal cards, why a card is illegal, tricks, early end, scores.

This is the hot path (bots' rollouts and the benchmark run through it). What a deal's contract
and rule options mean for play is worked out once, into a `DealSetup` of masks and flags; a
deal in play is then an immutable tuple of ints, and each card costs a few bit operations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
# Cards that must be dropped under a higher card of the led suit (R-DROP).
_DROP: dict[Contract, int] = {
    Contract.NO_QUEENS: QUEENS,
    Contract.NO_BOYS: BOYS,
    Contract.RIFKI: KING_OF_HEARTS,
}
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


class DealSetup(NamedTuple):
    """What the contract and the rule options mean for play, worked out once per deal.

    lead_bar: the suit a leader may not lead until a card of it has been played in an earlier
    trick (trump under R-TRUMPLEAD, hearts under R-HEARTLEAD), unless it is all they hold.
    akq: A-K-Q of trump when R-AKQ lets a leader break that bar, else 0.
    early_end: the penalty cards whose fall ends the deal (R-EARLYEND), else 0.
    """

    rules: Rules
    contract: Contract
    trump: int
    declarer: int
    trump_mask: int
    lead_bar: int
    akq: int
    akq_declarer_only: bool
    drop: int
    discard: int
    rifki_heart: bool
    raise_trump: bool
    beat: bool
    overtrump: bool
    early_end: int
    king_tricks: int


def deal_setup(rules: Rules, contract: Contract, declarer: int) -> DealSetup:
    trump = contract.trump_suit
    trump_mask = SUIT_MASKS[trump] if trump >= 0 else 0
    if trump >= 0:
        lead_bar = trump_mask if rules.trump_lead_needs_break else 0
    elif contract in (Contract.NO_HEARTS, Contract.RIFKI):
        lead_bar = _HEART_MASK
    else:
        lead_bar = 0
    info = CONTRACT_INFO[contract]
    return DealSetup(
        rules=rules,
        contract=contract,
        trump=trump,
        declarer=declarer,
        trump_mask=trump_mask,
        lead_bar=lead_bar,
        akq=_AKQ[trump] if trump >= 0 and lead_bar and rules.akq_lead != "off" else 0,
        akq_declarer_only=rules.akq_lead == "declarer",
        drop=_DROP.get(contract, 0),
        discard=_DISCARD.get(contract, 0),
        rifki_heart=contract is Contract.RIFKI and rules.rifki_void_must_discard_heart,
        raise_trump=trump >= 0 and rules.must_raise_trump_lead,
        beat=rules.must_beat_led_suit,
        overtrump=trump >= 0 and rules.must_overtrump,
        early_end=info.penalty_cards if rules.end_early else 0,
        king_tricks=rules.king_tricks if trump >= 0 else 0,
    )


class DealState(NamedTuple):
    """One deal in play. Never mutated: `play` returns the next state.

    trick: the cards of the trick in progress, in play order from `leader`; trick_bits: the
    same cards as a mask. played: every card of the completed tricks (what breaks trump or
    hearts). taken: per seat, the cards of the tricks it won. winners: the winner of each
    completed trick. akq_seat/akq_owed: a leader who led trump early under R-AKQ owes the rest
    of A-K-Q. king: the seat that reached `king_tricks` tricks in a trump deal, else -1.
    """

    setup: DealSetup
    hands: tuple[int, int, int, int]
    leader: int
    trick: tuple[int, ...]
    trick_bits: int
    played: int
    taken: tuple[int, int, int, int]
    tricks_won: tuple[int, int, int, int]
    winners: tuple[int, ...]
    akq_seat: int
    akq_owed: int
    over: bool
    king: int

    @property
    def rules(self) -> Rules:
        return self.setup.rules

    @property
    def contract(self) -> Contract:
        return self.setup.contract

    @property
    def trump(self) -> int:
        return self.setup.trump

    @property
    def declarer(self) -> int:
        return self.setup.declarer

    @property
    def to_move(self) -> int:
        return seat_to_move(self)

    @property
    def tricks(self) -> int:
        """Completed tricks."""
        return len(self.winners)


def seat_to_move(st: DealState) -> int:
    """The seat whose card the trick waits for (also once the deal is over: ask `over`). A
    function as well as `DealState.to_move`: the compiled callers reach it without a lookup."""
    return (st.leader + len(st.trick)) & 3


# Building the next state with tuple.__new__ skips NamedTuple's generated __new__ (half the
# cost of a play); the field order is DealState's.
_new_state = tuple.__new__


def new_deal(
    rules: Rules, contract: Contract, declarer: int, hands: tuple[int, int, int, int]
) -> DealState:
    """A deal about to be played: the declarer leads to the first trick (R-LEAD1)."""
    setup = deal_setup(rules, contract, declarer)
    return DealState(
        setup, hands, declarer, (), 0, 0, (0, 0, 0, 0), (0, 0, 0, 0), (), -1, 0, False, -1
    )


def _akq_allowed(setup: DealSetup, seat: int, hand: int) -> bool:
    """Whether this leader may lead A, K or Q of trump before trump is broken (R-AKQ)."""
    akq = setup.akq
    return (
        bool(akq) and hand & akq == akq and not (setup.akq_declarer_only and seat != setup.declarer)
    )


def _legal(
    setup: DealSetup,
    seat: int,
    hand: int,
    trick: Sequence[int],
    trick_bits: int,
    played: int,
    akq_seat: int,
    akq_owed: int,
) -> int:
    """The rules of play in one place: what `seat`, holding `hand`, may play to this trick."""
    if not trick:
        if akq_seat == seat and akq_owed & hand:
            return akq_owed & hand
        bar = setup.lead_bar
        if bar and not played & bar and hand & ~bar:
            if _akq_allowed(setup, seat, hand):
                return (hand & ~bar) | setup.akq
            return hand & ~bar
        return hand
    led_mask = SUIT_MASKS[trick[0] // 13]
    in_suit = hand & led_mask
    if in_suit:
        top = (trick_bits & led_mask).bit_length() - 1
        if setup.drop:
            drop = in_suit & setup.drop & ((1 << top) - 1)
            if drop:
                return drop
        if setup.beat or (setup.raise_trump and led_mask == setup.trump_mask):
            higher = in_suit & ~((2 << top) - 1)
            if higher:
                return higher
        return in_suit
    trumps = hand & setup.trump_mask
    if trumps:
        if setup.overtrump:
            top_trump = (trick_bits & setup.trump_mask).bit_length() - 1
            if top_trump >= 0:
                higher = trumps & ~((2 << top_trump) - 1)
                if higher:
                    return higher
        return trumps
    if setup.trump >= 0:
        return hand
    discard = setup.discard
    if setup.rifki_heart and not hand & KING_OF_HEARTS:
        discard = _HEART_MASK
    return hand & discard or hand


def legal_mask(st: DealState) -> int:
    """The cards the seat to move may play, as a mask (0 once the deal is over)."""
    setup, hands, leader, trick, trick_bits, played, _, _, _, akq_seat, akq_owed, over, _ = st
    if over:
        return 0
    seat = (leader + len(trick)) & 3
    return _legal(setup, seat, hands[seat], trick, trick_bits, played, akq_seat, akq_owed)


def legal_cards(st: DealState) -> tuple[int, ...]:
    return cards_of(legal_mask(st))


def check_card(st: DealState, c: int) -> Violation | None:
    """Why the seat to move may not play card c, or None when it may.

    When one card breaks several rules the first in the order of GAME_RECORD.md is named.
    Messages mention only the mover's own cards and the table, never another hand.
    """
    if st.over:
        return Violation("deal_over", "the deal is over")
    seat = st.to_move
    hand = st.hands[seat]
    if not hand >> c & 1:
        return Violation("card_not_in_hand", f"seat {seat} does not hold {card_name(c)}")
    allowed = legal_mask(st)
    if allowed >> c & 1:
        return None
    setup = st.setup
    s = c // 13
    if not st.trick:
        if st.akq_seat == seat and st.akq_owed & hand:
            need = " ".join(card_name(x) for x in cards_of(st.akq_owed & hand))
            return Violation("akq_sequence", f"seat {seat} led trump early and must lead {need}")
        if setup.trump >= 0:
            return Violation(
                "trump_not_broken",
                f"trump ({SUIT_NAMES[setup.trump]}) may not be led before a trump has been played",
            )
        return Violation(
            "hearts_not_broken", "a heart may not be led before a heart has been played"
        )
    led = st.trick[0] // 13
    if s != led and hand & SUIT_MASKS[led]:
        return Violation(
            "must_follow_suit",
            f"seat {seat} holds a {SUIT_NAMES_SINGULAR[led]} and must follow suit",
        )
    if s == led:
        top = (st.trick_bits & SUIT_MASKS[led]).bit_length() - 1
        top_name = card_name(top)
        if hand & SUIT_MASKS[led] & setup.drop & ((1 << top) - 1):
            need = " or ".join(card_name(x) for x in cards_of(allowed))
            return Violation(
                "must_drop_penalty", f"{top_name} is on the trick: seat {seat} must play {need}"
            )
        if setup.raise_trump and led == setup.trump:
            return Violation(
                "must_raise_trump", f"trump was led: seat {seat} must play a trump above {top_name}"
            )
        return Violation(
            "must_beat", f"seat {seat} must play a {SUIT_NAMES_SINGULAR[led]} above {top_name}"
        )
    if setup.trump >= 0:
        if s != setup.trump:
            return Violation(
                "must_ruff",
                f"seat {seat} has no {SUIT_NAMES[led]} "
                f"and must play a trump ({SUIT_NAMES[setup.trump]})",
            )
        return Violation(
            "must_overtrump", f"seat {seat} must play a trump higher than the trump in the trick"
        )
    need = " or ".join(card_name(x) for x in cards_of(allowed))
    return Violation(
        "must_discard_penalty",
        f"seat {seat} has no {SUIT_NAMES[led]} and must discard a penalty card ({need})",
    )


def trick_winner(trick: Sequence[int], leader: int, trump: int) -> int:
    """The seat that wins a full trick led by `leader` (trump: a suit index, or -1)."""
    bits = (1 << trick[0]) | (1 << trick[1]) | (1 << trick[2]) | (1 << trick[3])
    return _winner(SUIT_MASKS[trump] if trump >= 0 else 0, leader, trick, bits)


def _winner(trump_mask: int, leader: int, trick: Sequence[int], bits: int) -> int:
    """R-WIN from the trick's mask: the highest trump if any, else the highest card led."""
    best = (bits & trump_mask or bits & SUIT_MASKS[trick[0] // 13]).bit_length() - 1
    return (leader + trick.index(best)) & 3


def _akq_after_lead(
    setup: DealSetup, seat: int, hand: int, played: int, akq_seat: int, akq_owed: int, b: int
) -> tuple[int, int]:
    """The R-AKQ debt after `seat` leads trump card `b`: started, paid down, or unchanged."""
    if akq_seat == seat and akq_owed & hand:
        return akq_seat, akq_owed & ~b
    if (
        setup.akq
        and not played & setup.lead_bar
        and hand & ~setup.lead_bar
        and _akq_allowed(setup, seat, hand)
    ):
        return seat, setup.akq & ~b
    return akq_seat, akq_owed


def _ending(setup: DealSetup, played: int, winner_tricks: int, tricks: int) -> tuple[bool, bool]:
    """After a trick: is the deal over (13 tricks, R-EARLYEND, R-KING), and by a King?"""
    if setup.king_tricks and winner_tricks >= setup.king_tricks:
        return True, True
    if tricks == 13:
        return True, False
    return bool(setup.early_end) and played & setup.early_end == setup.early_end, False


def play(st: DealState, c: int) -> DealState:
    """The state after the seat to move plays card c. The card must be legal (see check_card)."""
    # One unpacking instead of a dozen attribute reads: this function runs once per card.
    (
        setup,
        hands,
        leader,
        trick,
        trick_bits,
        played,
        taken,
        won,
        winners,
        akq_seat,
        akq_owed,
        _,
        _,
    ) = st
    n = len(trick)
    seat = (leader + n) & 3
    b = 1 << c
    h0, h1, h2, h3 = hands
    if seat == 0:
        hand, h0 = h0, h0 & ~b
    elif seat == 1:
        hand, h1 = h1, h1 & ~b
    elif seat == 2:
        hand, h2 = h2, h2 & ~b
    else:
        hand, h3 = h3, h3 & ~b
    if not n and b & setup.trump_mask:
        akq_seat, akq_owed = _akq_after_lead(setup, seat, hand, played, akq_seat, akq_owed, b)
    bits = trick_bits | b
    trick = (*trick, c)
    if n < 3:
        return _new_state(
            DealState,
            (
                setup,
                (h0, h1, h2, h3),
                leader,
                trick,
                bits,
                played,
                taken,
                won,
                winners,
                akq_seat,
                akq_owed,
                False,
                -1,
            ),
        )
    winner = _winner(setup.trump_mask, leader, trick, bits)
    played |= bits
    t = list(taken)
    t[winner] |= bits
    w = list(won)
    w[winner] += 1
    winners = (*winners, winner)
    over, king = _ending(setup, played, w[winner], len(winners))
    return _new_state(
        DealState,
        (
            setup,
            (h0, h1, h2, h3),
            winner,
            (),
            0,
            played,
            (t[0], t[1], t[2], t[3]),
            (w[0], w[1], w[2], w[3]),
            winners,
            akq_seat,
            akq_owed,
            over,
            winner if king else -1,
        ),
    )


def rollout(st: DealState, pick: Callable[[int, int], int]) -> DealState:
    """Play the deal to its end, `pick(seat, legal_mask)` choosing each card; the final state.

    The same rules as `play`, card after card, without building a state per card: what bots'
    Monte Carlo rollouts and the benchmark run.
    """
    (
        setup,
        hands_t,
        leader,
        trick_t,
        bits,
        played,
        taken_t,
        won_t,
        winners_t,
        akq_seat,
        akq_owed,
        over,
        king,
    ) = st
    hands, taken, won, winners, trick = (
        list(hands_t),
        list(taken_t),
        list(won_t),
        list(winners_t),
        list(trick_t),
    )
    trump_mask = setup.trump_mask
    while not over:
        seat = (leader + len(trick)) & 3
        hand = hands[seat]
        c = pick(seat, _legal(setup, seat, hand, trick, bits, played, akq_seat, akq_owed))
        b = 1 << c
        hands[seat] = hand & ~b
        if not trick and b & trump_mask:
            akq_seat, akq_owed = _akq_after_lead(setup, seat, hand, played, akq_seat, akq_owed, b)
        trick.append(c)
        bits |= b
        if len(trick) == 4:
            winner = _winner(setup.trump_mask, leader, trick, bits)
            played |= bits
            taken[winner] |= bits
            won[winner] += 1
            winners.append(winner)
            over, by_king = _ending(setup, played, won[winner], len(winners))
            king = winner if by_king else -1
            leader, trick, bits = winner, [], 0
    return DealState(
        setup,
        (hands[0], hands[1], hands[2], hands[3]),
        leader,
        tuple(trick),
        bits,
        played,
        (taken[0], taken[1], taken[2], taken[3]),
        (won[0], won[1], won[2], won[3]),
        tuple(winners),
        akq_seat,
        akq_owed,
        over,
        king,
    )


def scores(st: DealState) -> tuple[int, int, int, int]:
    """Each seat's points from the tricks completed so far (R-TRUMP and the penalty table)."""
    contract = st.setup.contract
    info = CONTRACT_INFO[contract]
    if contract is Contract.LAST_TWO:
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
