"""A plain reference fold of a game's events, kept for tests only.

`domain.game.apply` is the fast path: named tuples copied with a few fields changed, a card's
legality as one mask test, derived facts compared whole. This fold is the slow, obvious one: a
mutable record of sets and lists, updated field by field as the rule book reads, with every
card checked through `domain.deal.check_card` (the path that names a refusal's reason) and every
trick's winner, every deal's scores and every ending worked out here from the cards. A test
folds the same events through both and compares them after each event.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from domain.cards import TWO_OF_DIAMONDS, cards_of
from domain.contracts import CONTRACT_INFO, LAST_TWO_PENALTY, PENALTY_CONTRACTS, Contract
from domain.deal import DealState, check_card, new_deal
from domain.deal import play as deal_play
from domain.events import (
    CardPlayed,
    ContractDeclared,
    DealEnded,
    DealStarted,
    Event,
    GameCreated,
    GameEnded,
    RedealAsked,
    SeatAbandoned,
    SeatSubstituted,
    SeedRevealed,
    StrikeRecorded,
    TrickTaken,
)
from domain.rules import Rules
from domain.shuffle import commitment


class Refused(Exception):
    """The reference fold refuses an event."""


def _need(ok: bool, why: str) -> None:
    if not ok:
        raise Refused(why)


@dataclass
class Reference:
    rules: Rules = field(default_factory=Rules)
    commitment: str = ""
    phase: str = "new"
    version: int = 0
    deal_no: int = 1
    attempt: int = 0
    declarer: int = -1
    dealt: tuple[int, ...] = ()  # the hands as dealt
    hands: list[set[int]] = field(default_factory=list)  # the cards still held
    contract: Contract | None = None
    deal: DealState | None = None  # only for check_card: the reasons path
    leader: int = -1
    trick: list[int] = field(default_factory=list)
    tricks: list[tuple[int, tuple[int, ...], int]] = field(default_factory=list)
    won: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    taken: list[set[int]] = field(default_factory=lambda: [set(), set(), set(), set()])
    fallen: set[int] = field(default_factory=set)  # cards of completed tricks
    deal_over: bool = False
    deal_king: int | None = None
    trump_left: list[int] = field(default_factory=list)
    penalty_left: list[int] = field(default_factory=list)
    uses: dict[Contract, int] = field(default_factory=lambda: dict.fromkeys(PENALTY_CONTRACTS, 0))
    totals: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    king: int | None = None
    strikes: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    seed: str | None = None

    @property
    def to_move(self) -> int | None:
        if self.phase == "declaring":
            return self.declarer
        if self.phase == "playing" and not self.deal_over:
            return (self.leader + len(self.trick)) % 4
        return None

    def trick_winner(self) -> int:
        """R-WIN: the highest trump played, else the highest card of the suit led."""
        assert self.contract is not None
        trump, led = self.contract.trump_suit, self.trick[0] // 13
        trumps = [c for c in self.trick if c // 13 == trump]
        best = max(trumps or [c for c in self.trick if c // 13 == led])
        return (self.leader + self.trick.index(best)) % 4

    def legal(self) -> set[int]:
        """The cards the seat to move may play, each asked of check_card on its own."""
        seat = self.to_move
        if self.phase != "playing" or seat is None or self.deal is None:
            return set()
        return {c for c in self.hands[seat] if check_card(self.deal, c) is None}

    def scores(self) -> list[int]:
        assert self.contract is not None
        info = CONTRACT_INFO[self.contract]
        if self.contract is Contract.LAST_TWO:
            out = [0, 0, 0, 0]
            for _, _, winner in self.tricks[11:13]:
                out[winner] += LAST_TWO_PENALTY
            return out
        if info.per_trick:
            return [n * info.per_trick for n in self.won]
        penalty = set(cards_of(info.penalty_cards))
        return [len(t & penalty) * info.per_card for t in self.taken]

    def fold(self, event: Event) -> None:
        """Apply one event, or raise Refused (the reference's state is then unspecified)."""
        _need(self.phase != "new" or isinstance(event, GameCreated), "before game_created")
        self.version += 1
        if isinstance(event, GameCreated):
            _need(self.phase == "new", "created twice")
            self.rules, self.commitment, self.phase = event.rules, event.commitment, "awaiting"
            self.trump_left = [event.rules.trump_rights] * 4
            self.penalty_left = [event.rules.penalty_rights] * 4
        elif isinstance(event, DealStarted):
            _need(self.phase == "awaiting", "no deal awaited")
            _need((event.deal, event.attempt) == (self.deal_no, self.attempt), "deal number")
            everything = [c for h in event.hands for c in cards_of(h)]
            _need(len(everything) == 52 and len(set(everything)) == 52, "not a deal")
            _need(all(len(cards_of(h)) == 13 for h in event.hands), "13 cards each")
            if self.declarer >= 0:
                first = self.declarer
            elif self.rules.first_declarer == "two_of_diamonds":
                first = next(s for s in range(4) if TWO_OF_DIAMONDS in cards_of(event.hands[s]))
            else:
                first = 0
            _need(event.declarer == first, "wrong declarer")
            self.declarer, self.dealt, self.phase = first, event.hands, "declaring"
            self.hands = [set(cards_of(h)) for h in event.hands]
        elif isinstance(event, ContractDeclared):
            c = event.contract
            _need(self.phase == "declaring" and event.deal == self.deal_no, "not declaring")
            _need(event.seat == self.declarer, "not the declarer")
            if c.is_trump:
                _need(self.trump_left[event.seat] > 0, "no trump right")
                self.trump_left[event.seat] -= 1
            else:
                _need(self.penalty_left[event.seat] > 0, "no penalty right")
                _need(self.uses[c] < 2, "played twice")
                self.penalty_left[event.seat] -= 1
                self.uses[c] += 1
            self.contract, self.phase, self.leader = c, "playing", event.seat
            self.deal = new_deal(self.rules, c, event.seat, self.dealt)  # type: ignore[arg-type]
            self.trick, self.tricks, self.fallen = [], [], set()
            self.won, self.taken = [0, 0, 0, 0], [set(), set(), set(), set()]
            self.deal_over, self.deal_king = False, None
        elif isinstance(event, RedealAsked):
            seat = event.seat
            _need(self.phase == "declaring" and seat == self.declarer, "not declaring")
            _need(self.rules.weak_hand_redeal and self.penalty_left[seat] == 0, "no redeal")
            _need(max(c % 13 for c in self.hands[seat]) <= 8, "a card above ten")
            self.attempt, self.phase = self.attempt + 1, "awaiting"
        elif isinstance(event, CardPlayed):
            _need(self.phase == "playing" and event.deal == self.deal_no, "not playing")
            _need(len(self.trick) < 4 and not self.deal_over, "no card due")
            _need(event.seat == self.to_move, "not the seat to move")
            _need(event.card in self.legal(), "illegal card")
            assert self.deal is not None
            self.hands[event.seat].discard(event.card)
            self.trick.append(event.card)
            self.deal = deal_play(self.deal, event.card)
        elif isinstance(event, TrickTaken):
            _need(self.phase == "playing" and len(self.trick) == 4, "trick not full")
            assert self.contract is not None
            winner = self.trick_winner()
            expected = (self.deal_no, len(self.tricks) + 1, self.leader, tuple(self.trick), winner)
            got = (event.deal, event.trick, event.leader, event.cards, event.winner)
            _need(got == expected, "trick differs")
            self.tricks.append((self.leader, tuple(self.trick), winner))
            self.won[winner] += 1
            self.taken[winner] |= set(self.trick)
            self.fallen |= set(self.trick)
            self.leader, self.trick = winner, []
            info = CONTRACT_INFO[self.contract]
            kings = self.rules.king_tricks if self.contract.is_trump else 0
            penalty = set(cards_of(info.penalty_cards))
            if kings and self.won[winner] >= kings:
                self.deal_over, self.deal_king = True, winner
            else:  # all 13 tricks, or R-EARLYEND: every penalty card has fallen
                early = self.rules.end_early and bool(penalty) and penalty <= self.fallen
                self.deal_over = len(self.tricks) == 13 or early
        elif isinstance(event, DealEnded):
            _need(self.phase == "playing" and self.deal_over and not self.trick, "deal not over")
            assert self.contract is not None
            queens = set(cards_of(CONTRACT_INFO[Contract.NO_QUEENS].penalty_cards))
            void = (
                self.rules.queens_one_each_void
                and self.contract is Contract.NO_QUEENS
                and all(len(t & queens) == 1 for t in self.taken)
            )
            scores = self.scores()
            expected = (
                (self.deal_no, self.attempt, self.contract, len(self.tricks)),
                (tuple(self.won), tuple(scores), void, self.deal_king),
            )
            got = (
                (event.deal, event.attempt, event.contract, event.tricks),
                (event.tricks_won, event.scores, event.void, event.king),
            )
            _need(got == expected, "deal result differs")
            self.phase, self.deal, self.contract = "awaiting", None, None
            if void:
                self.attempt += 1
                self.penalty_left[self.declarer] += 1
                self.uses[Contract.NO_QUEENS] -= 1
            else:
                self.totals = [t + s for t, s in zip(self.totals, scores, strict=True)]
                self.deal_no, self.attempt = self.deal_no + 1, 0
                self.declarer = (self.declarer + 1) % 4
                self.king = self.deal_king
        elif isinstance(event, GameEnded):
            _need(self.phase == "awaiting", "game_ended too early")
            _need(event.totals == tuple(self.totals) and event.king == self.king, "result")
            self.phase = "over"
        elif isinstance(event, SeedRevealed):
            _need(self.phase == "over", "seed before the end")
            _need(commitment(bytes.fromhex(event.server_seed)) == self.commitment, "seed")
            self.seed = event.server_seed
        elif isinstance(event, StrikeRecorded):
            _need(event.count == self.strikes[event.seat] + 1, "strike count")
            self.strikes[event.seat] += 1
        else:
            assert isinstance(event, SeatAbandoned | SeatSubstituted)
