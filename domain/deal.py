"""The card play of one deal: legal cards, why a card is illegal, tricks, early end, scores.

This is the hot path (bots' rollouts and the benchmark run through it). What a deal's contract
and rule options mean for play is worked out once, into a `DealSetup` of masks and flags; a
deal in play is then an immutable value of ints (`DealState`), and each card costs a few bit
operations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar, Final

from domain.cards import (
    BOYS,
    FULL_SUIT,
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
    count,
)
from domain.contracts import CONTRACT_INFO, LAST_TWO_PENALTY, Contract
from domain.rules import Rules
from domain.values import Value
from domain.violations import Violation

_HEART_MASK: Final = SUIT_MASKS[HEARTS]
# Constants of the per-card functions, `Final` so that the compiled build reads them as C
# values, not by name from the module's dictionary on every card.
_FULL_SUIT: Final = FULL_SUIT
_KING_OF_HEARTS: Final = KING_OF_HEARTS
_LAST_TWO_PENALTY: Final = LAST_TWO_PENALTY


def _suit_of(card: int) -> int:
    """The mask of `card`'s whole suit (SUIT_MASKS[card // 13], worked out: no lookup)."""
    return _FULL_SUIT << (card // 13 * 13)


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


# DealSetup's fields, in the order of its constructor.
_SETUP_FIELDS: Final = (
    "rules",
    "contract",
    "trump",
    "declarer",
    "trump_mask",
    "lead_bar",
    "akq",
    "akq_declarer_only",
    "drop",
    "discard",
    "rifki_heart",
    "raise_trump",
    "beat",
    "overtrump",
    "early_end",
    "king_tricks",
    "last_two",
    "penalty_cards",
    "per_card",
    "per_trick",
)


class DealSetup(Value):
    """What the contract and the rule options mean for play, worked out once per deal.

    lead_bar: the suit a leader may not lead until a card of it has been played in an earlier
    trick (trump under R-TRUMPLEAD, hearts under R-HEARTLEAD), unless it is all they hold.
    akq: A-K-Q of trump when R-AKQ lets a leader break that bar, else 0.
    early_end: the penalty cards whose fall ends the deal (R-EARLYEND), else 0.
    last_two, penalty_cards, per_card, per_trick: how the contract scores (its ContractInfo),
    copied here because a seat's view asks for the deal's scores at every turn.

    A value: never changed once made (its fields are `Final` to the type checker). A plain
    class, not a named tuple, so that the compiled build keeps its fields in a C struct, read
    without a lookup or a type check on every card (see `DealState`).
    """

    __slots__ = _SETUP_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _SETUP_FIELDS

    def __init__(
        self,
        rules: Rules,
        contract: Contract,
        trump: int,
        declarer: int,
        trump_mask: int,
        lead_bar: int,
        akq: int,
        akq_declarer_only: bool,
        drop: int,
        discard: int,
        rifki_heart: bool,
        raise_trump: bool,
        beat: bool,
        overtrump: bool,
        early_end: int,
        king_tricks: int,
        last_two: bool,
        penalty_cards: int,
        per_card: int,
        per_trick: int,
    ) -> None:
        self.rules: Final = rules
        self.contract: Final = contract
        self.trump: Final = trump
        self.declarer: Final = declarer
        self.trump_mask: Final = trump_mask
        self.lead_bar: Final = lead_bar
        self.akq: Final = akq
        self.akq_declarer_only: Final = akq_declarer_only
        self.drop: Final = drop
        self.discard: Final = discard
        self.rifki_heart: Final = rifki_heart
        self.raise_trump: Final = raise_trump
        self.beat: Final = beat
        self.overtrump: Final = overtrump
        self.early_end: Final = early_end
        self.king_tricks: Final = king_tricks
        self.last_two: Final = last_two
        self.penalty_cards: Final = penalty_cards
        self.per_card: Final = per_card
        self.per_trick: Final = per_trick


# Each contract's trump suit (-1 for a penalty), read without the enum's Python property.
_TRUMP_SUIT: Final = {c: c.trump_suit for c in Contract}


def deal_setup(rules: Rules, contract: Contract, declarer: int) -> DealSetup:
    trump = _TRUMP_SUIT[contract]
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
        last_two=contract is Contract.LAST_TWO,
        penalty_cards=info.penalty_cards,
        per_card=info.per_card,
        per_trick=info.per_trick,
    )


# DealState's fields, in the order of its constructor.
_STATE_FIELDS: Final = (
    "setup",
    "hands",
    "leader",
    "trick",
    "trick_bits",
    "played",
    "taken",
    "tricks_won",
    "winners",
    "akq_seat",
    "akq_owed",
    "over",
    "king",
)


class DealState(Value):
    """One deal in play. Never mutated: `play` returns the next state.

    trick: the cards of the trick in progress, in play order from `leader`; trick_bits: the
    same cards as a mask. played: every card of the completed tricks (what breaks trump or
    hearts). taken: per seat, the cards of the tricks it won. winners: the winner of each
    completed trick. akq_seat/akq_owed: a leader who led trump early under R-AKQ owes the rest
    of A-K-Q. king: the seat that reached `king_tricks` tricks in a trump deal, else -1.

    A value like a named tuple (equal by its fields, hashable, pickled by them, `_replace`),
    but a plain class: every card makes one, and the compiled build keeps a plain class's
    fields in a C struct, the four-int tuples unboxed, so making one and reading its fields
    costs about half as much as a named tuple's (docs/BENCHMARKS.md, seventeenth session).
    """

    __slots__ = _STATE_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _STATE_FIELDS

    def __init__(
        self,
        setup: DealSetup,
        hands: tuple[int, int, int, int],
        leader: int,
        trick: tuple[int, ...],
        trick_bits: int,
        played: int,
        taken: tuple[int, int, int, int],
        tricks_won: tuple[int, int, int, int],
        winners: tuple[int, ...],
        akq_seat: int,
        akq_owed: int,
        over: bool,
        king: int,
    ) -> None:
        self.setup: Final = setup
        self.hands: Final = hands
        self.leader: Final = leader
        self.trick: Final = trick
        self.trick_bits: Final = trick_bits
        self.played: Final = played
        self.taken: Final = taken
        self.tricks_won: Final = tricks_won
        self.winners: Final = winners
        self.akq_seat: Final = akq_seat
        self.akq_owed: Final = akq_owed
        self.over: Final = over
        self.king: Final = king

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


def hand_of(hands: tuple[int, int, int, int], seat: int) -> int:
    """`hands[seat]`, read by a constant index. The compiled build keeps the four masks
    unboxed; a variable index would first box all four into a new tuple (four big ints
    allocated and freed, at every legal-card question)."""
    if seat == 0:
        return hands[0]
    if seat == 1:
        return hands[1]
    if seat == 2:
        return hands[2]
    return hands[3]


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
    led_mask = _suit_of(trick[0])
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
    if setup.rifki_heart and not hand & _KING_OF_HEARTS:
        discard = _HEART_MASK
    return hand & discard or hand


def legal_mask(st: DealState) -> int:
    """The cards the seat to move may play, as a mask (0 once the deal is over)."""
    if st.over:
        return 0
    trick = st.trick
    seat = (st.leader + len(trick)) & 3
    return _legal(
        st.setup,
        seat,
        hand_of(st.hands, seat),
        trick,
        st.trick_bits,
        st.played,
        st.akq_seat,
        st.akq_owed,
    )


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
    hand = hand_of(st.hands, seat)
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
    best = (bits & trump_mask or bits & _suit_of(trick[0])).bit_length() - 1
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
    setup = st.setup
    trick = st.trick
    leader = st.leader
    n = len(trick)
    seat = (leader + n) & 3
    b = 1 << c
    h0, h1, h2, h3 = st.hands
    if seat == 0:
        hand, h0 = h0, h0 & ~b
    elif seat == 1:
        hand, h1 = h1, h1 & ~b
    elif seat == 2:
        hand, h2 = h2, h2 & ~b
    else:
        hand, h3 = h3, h3 & ~b
    played = st.played
    akq_seat, akq_owed = st.akq_seat, st.akq_owed
    if not n and b & setup.trump_mask:
        akq_seat, akq_owed = _akq_after_lead(setup, seat, hand, played, akq_seat, akq_owed, b)
    bits = st.trick_bits | b
    trick = trick + (c,)
    if n < 3:
        return DealState(
            setup,
            (h0, h1, h2, h3),
            leader,
            trick,
            bits,
            played,
            st.taken,
            st.tricks_won,
            st.winners,
            akq_seat,
            akq_owed,
            False,
            -1,
        )
    winner = _winner(setup.trump_mask, leader, trick, bits)
    played |= bits
    t0, t1, t2, t3 = st.taken
    w0, w1, w2, w3 = st.tricks_won
    # (seat by seat, not through a list: the compiled build keeps these four-int tuples unboxed)
    if winner == 0:
        t0 |= bits
        w0 += 1
        won = w0
    elif winner == 1:
        t1 |= bits
        w1 += 1
        won = w1
    elif winner == 2:
        t2 |= bits
        w2 += 1
        won = w2
    else:
        t3 |= bits
        w3 += 1
        won = w3
    winners = st.winners + (winner,)
    over, king = _ending(setup, played, won, len(winners))
    return DealState(
        setup,
        (h0, h1, h2, h3),
        winner,
        (),
        0,
        played,
        (t0, t1, t2, t3),
        (w0, w1, w2, w3),
        winners,
        akq_seat,
        akq_owed,
        over,
        winner if king else -1,
    )


def rollout(st: DealState, pick: Callable[[int, int], int]) -> DealState:
    """Play the deal to its end, `pick(seat, legal_mask)` choosing each card; the final state.

    The same rules as `play`, card after card, without building a state per card: what bots'
    Monte Carlo rollouts and the benchmark run.
    """
    setup, leader, bits, played = st.setup, st.leader, st.trick_bits, st.played
    akq_seat, akq_owed, over, king = st.akq_seat, st.akq_owed, st.over, st.king
    hands, taken, won, winners, trick = (
        list(st.hands),
        list(st.taken),
        list(st.tricks_won),
        list(st.winners),
        list(st.trick),
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
    """Each seat's points from the tricks completed so far (R-TRUMP and the penalty table).
    Asked at every seat's view: the four seats' sums are kept in locals, not a list, and
    cards are counted with `count` (no method call in the compiled build)."""
    setup = st.setup
    if setup.last_two:
        a = b = c = d = 0
        for w in st.winners[11:13]:
            if w == 0:
                a += _LAST_TWO_PENALTY
            elif w == 1:
                b += _LAST_TWO_PENALTY
            elif w == 2:
                c += _LAST_TWO_PENALTY
            else:
                d += _LAST_TWO_PENALTY
        return a, b, c, d
    # Products are of non-negative ints, negated after: the compiled build multiplies a
    # negative int the slow way, as a Python object (its overflow test is conservative).
    t = setup.per_trick
    if t:
        a, b, c, d = st.tricks_won
        if t > 0:
            return a * t, b * t, c * t, d * t
        t = -t
        return -(a * t), -(b * t), -(c * t), -(d * t)
    pen, cost = setup.penalty_cards, -setup.per_card  # (a penalty card's points are negative)
    a, b, c, d = st.taken
    return (
        -(count(a & pen) * cost),
        -(count(b & pen) * cost),
        -(count(c & pen) * cost),
        -(count(d & pen) * cost),
    )
