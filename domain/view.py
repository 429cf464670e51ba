"""What one seat, or the public, may see of a game — the one place that decides it.

A seat sees its own hand, every card played, the scores and the public facts; a spectator sees
the same without any hand. A deal's four hands become public when the deal ends; the seed when
the game ends. Everything a service sends to a player or a spectator is built from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Final, Literal

from domain.cards import card_name, cards_of, parse_card
from domain.commands import AskRedeal, Declare, Play
from domain.contracts import PENALTY_CONTRACTS, Contract, parse_contract
from domain.deal import hand_of, legal_mask
from domain.deal import scores as deal_scores
from domain.events import (
    DealEnded,
    DealStarted,
    Event,
    GameEnded,
    RedealAsked,
    TrickTaken,
    to_payload,
)
from domain.game import (
    CompletedDeal,
    GameState,
    Phase,
    RedealtHands,
    legal_contracts,
    redeal_violation,
)
from domain.pickling import by_fields
from domain.results import points_number
from domain.rules import Rules
from domain.values import Value

ActionKind = Literal["play", "declare", "redeal"]
# The phases a view tests, as constants (an enum's class attribute costs more to look up).
_DECLARING: Final = Phase.DECLARING
_PLAYING: Final = Phase.PLAYING
_OVER: Final = Phase.OVER


class BadAction(ValueError):
    """An action object that is not {"type": "play", "card": ...} / declare / redeal."""


@dataclass(frozen=True, slots=True)
class Action:
    """One thing a seat can do: play a card, declare a contract, or ask for a redeal."""

    kind: ActionKind
    card: int = -1
    contract: Contract | None = None

    def to_dict(self) -> dict[str, str]:
        if self.kind == "play":
            return {"type": "play", "card": card_name(self.card)}
        if self.kind == "declare":
            assert self.contract is not None
            return {"type": "declare", "contract": self.contract.value}
        return {"type": "redeal"}

    @classmethod
    def from_dict(cls, data: object) -> Action:
        if not isinstance(data, dict):
            raise BadAction("an action is an object with a 'type'")
        kind = data.get("type")
        try:
            if kind == "play":
                return cls("play", card=parse_card(data.get("card")))
            if kind == "declare":
                return cls("declare", contract=parse_contract(data.get("contract")))
        except ValueError as exc:
            raise BadAction(str(exc)) from None
        if kind == "redeal":
            return cls("redeal")
        raise BadAction("action type must be 'play', 'declare' or 'redeal'")

    def command(self, seat: int) -> Play | Declare | AskRedeal:
        if self.kind == "play":
            if type(seat) is int and 0 <= seat < 4 and 0 <= self.card < 52:
                return _PLAY_COMMANDS[seat][self.card]  # (commands are values: made once)
            return Play(seat, self.card)
        if self.kind == "declare":
            assert self.contract is not None
            return Declare(seat, self.contract)  # (a Contract is its name: a StrEnum)
        return AskRedeal(seat)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return by_fields(self)  # (domain.pickling: alike in both builds)


# Actions and plays are values: one of each, made once, serves every view and every seat.
_PLAY_ACTIONS: Final = tuple(Action("play", card=c) for c in range(52))
_PLAY_COMMANDS: Final = tuple(tuple(Play(seat, c) for c in range(52)) for seat in range(4))
_DECLARE_ACTIONS: Final = {c: Action("declare", contract=c) for c in Contract}
_REDEAL_ACTION: Final = Action("redeal")


def legal_actions(state: GameState, seat: int) -> tuple[Action, ...]:
    """Every action `seat` may take now (empty when it is not that seat's turn)."""
    return _legal_actions(state, seat, state.to_move)


def _legal_actions(state: GameState, seat: int, to_move: int | None) -> tuple[Action, ...]:
    if to_move != seat:
        return ()
    if state.phase is _DECLARING:
        actions = [_DECLARE_ACTIONS[c] for c in legal_contracts(state)]
        if redeal_violation(state, seat) is None:
            actions.append(_REDEAL_ACTION)
        return tuple(actions)
    assert state.deal is not None
    return _plays(legal_mask(state.deal))


def _plays(mask: int) -> tuple[Action, ...]:
    """The play actions of a mask's cards, in card order (`cards_of`'s: the lowest bit first).
    Bit by bit: mapping `cards_of`'s tuple cost half as much again at every turn (0.20 against
    0.14 µs compiled), and a cache of masks missed, a new deal's masks being new."""
    out = []
    while mask:
        low = mask & -mask
        out.append(_PLAY_ACTIONS[low.bit_length() - 1])
        mask ^= low
    return tuple(out)


_TRICK_FIELDS: Final = ("leader", "cards", "winner")


class PlayedTrick(Value):
    """A trick as a view shows it; `winner` is None while it is in progress. A value
    (`domain.values`): the trick in progress is shown anew at almost every turn."""

    __slots__ = _TRICK_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _TRICK_FIELDS

    def __init__(self, leader: int, cards: tuple[int, ...], winner: int | None) -> None:
        self.leader: Final = leader
        self.cards: Final = cards
        self.winner: Final = winner


# SeatView's fields, in the order of its constructor.
_VIEW_FIELDS: Final = (
    "game_id",
    "seat",
    "players",
    "rules",
    "phase",
    "deal_no",
    "attempt",
    "declarer",
    "hand",
    "contract",
    "tricks",
    "tricks_won",
    "deal_scores",
    "totals",
    "trump_left",
    "penalty_left",
    "uses",
    "history",
    "to_move",
    "legal",
    "strikes",
    "winners",
    "ladder_points",
    "king",
    "commitment",
    "seed",
)


class SeatView(Value):
    """A seat's (seat >= 0) or the public's (seat == -1) view of a game at one moment.

    Built for every action a seat is asked for: a plain class (a value, `domain.values`), whose
    fields the compiled build sets and reads in a C struct, where a named tuple of this many
    fields was made twice over (a tuple, then its copy as the named tuple). The deal's tricks
    won and scores are four ints each, kept unboxed: boxed only when read from Python.
    """

    __slots__ = _VIEW_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _VIEW_FIELDS

    def __init__(
        self,
        game_id: str,
        seat: int,
        players: tuple[str, ...],
        rules: Rules,
        phase: Phase,
        deal_no: int,
        attempt: int,
        declarer: int,
        hand: int,
        contract: Contract | None,
        tricks: tuple[PlayedTrick, ...],
        tricks_won: tuple[int, int, int, int],
        deal_scores: tuple[int, int, int, int],
        totals: tuple[int, ...],
        trump_left: tuple[int, ...],
        penalty_left: tuple[int, ...],
        uses: tuple[int, ...],
        history: tuple[CompletedDeal | RedealtHands, ...],
        to_move: int | None,
        legal: tuple[Action, ...],
        strikes: tuple[int, ...],
        winners: tuple[int, ...] | None,
        ladder_points: tuple[Fraction, ...] | None,
        king: int | None,
        commitment: str,
        seed: str | None,
    ) -> None:
        self.game_id: Final = game_id
        self.seat: Final = seat
        self.players: Final = players
        self.rules: Final = rules
        self.phase: Final = phase
        self.deal_no: Final = deal_no
        self.attempt: Final = attempt
        self.declarer: Final = declarer
        self.hand: Final = hand
        self.contract: Final = contract
        self.tricks: Final = tricks
        self.tricks_won: Final = tricks_won
        self.deal_scores: Final = deal_scores
        self.totals: Final = totals
        self.trump_left: Final = trump_left
        self.penalty_left: Final = penalty_left
        self.uses: Final = uses
        self.history: Final = history
        self.to_move: Final = to_move
        self.legal: Final = legal
        self.strikes: Final = strikes
        self.winners: Final = winners
        self.ladder_points: Final = ladder_points
        self.king: Final = king
        self.commitment: Final = commitment
        self.seed: Final = seed

    @property
    def trick(self) -> PlayedTrick | None:
        """The trick in progress (cards so far), if any."""
        if self.tricks and self.tricks[-1].winner is None:
            return self.tricks[-1]
        return None

    @property
    def played(self) -> int:
        """Every card played so far in this deal, as a mask."""
        m = 0
        for t in self.tricks:
            for c in t.cards:
                m |= 1 << c
        return m

    def to_dict(
        self, *, history: bool = True, encoded: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The JSON form sent to players, bots and spectators. `history=False`: the ended
        deals left out, and `encoded`: "rules" and "tricks" as the caller has already
        encoded them (a cache of what does not change), for a caller that keeps those."""
        known = encoded or {}
        rules = known.get("rules")
        tricks = known.get("tricks")
        return {
            "game_id": self.game_id,
            "seat": self.seat if self.seat >= 0 else None,
            "players": list(self.players),
            "rules": rules if rules is not None else self.rules.to_dict(),
            "phase": self.phase.value,
            "deal": self.deal_no,
            "attempt": self.attempt,
            "declarer": self.declarer if self.declarer >= 0 else None,
            "hand": [card_name(c) for c in cards_of(self.hand)] if self.seat >= 0 else None,
            "contract": self.contract.value if self.contract else None,
            "tricks": tricks if tricks is not None else [trick_dict(t) for t in self.tricks],
            "tricks_won": list(self.tricks_won),
            "deal_scores": list(self.deal_scores),
            "totals": list(self.totals),
            "rights": {
                "trump": list(self.trump_left),
                "penalty": list(self.penalty_left),
                "contract_uses": {
                    c.value: n for c, n in zip(PENALTY_CONTRACTS, self.uses, strict=True)
                },
            },
            "history": [summary_dict(d) for d in self.history] if history else [],
            "to_move": self.to_move,
            "legal": [a.to_dict() for a in self.legal],
            "strikes": list(self.strikes),
            "winners": list(self.winners) if self.winners is not None else None,
            "ladder_points": (
                [points_number(p) for p in self.ladder_points]
                if self.ladder_points is not None
                else None
            ),
            "king": self.king,
            "commitment": self.commitment,
            "seed": self.seed,
        }


def trick_dict(t: PlayedTrick) -> dict[str, Any]:
    """A trick as in a view's `tricks` (the one in progress has no winner yet)."""
    return {"leader": t.leader, "cards": [card_name(c) for c in t.cards], "winner": t.winner}


def summary_dict(d: CompletedDeal | RedealtHands) -> dict[str, Any]:
    """An ended deal (or redealt hands) as in a view's `history`."""
    hands = [[card_name(c) for c in cards_of(h)] for h in d.hands]
    if isinstance(d, RedealtHands):
        return {
            "deal": d.deal,
            "attempt": d.attempt,
            "declarer": d.declarer,
            "redeal": True,
            "hands": hands,
        }
    return {
        "deal": d.deal,
        "attempt": d.attempt,
        "declarer": d.declarer,
        "contract": d.contract.value,
        "redeal": False,
        "scores": list(d.scores),
        "tricks_won": list(d.tricks_won),
        "void": d.void,
        "king": d.king,
        "hands": hands,
        "tricks": [
            {"leader": t.leader, "cards": [card_name(c) for c in t.cards], "winner": t.winner}
            for t in d.tricks
        ],
    }


# The tricks of a deal as a view shows them, for the last `state.tricks` seen: the same tuple
# serves the four cards of a trick (and every view of them), so each is converted once, not
# once per view. A one-entry memo of immutable values: the result never depends on it.
_shown_tricks: tuple[tuple[TrickTaken, ...], tuple[PlayedTrick, ...]] = ((), ())


def _played_tricks(tricks: tuple[TrickTaken, ...]) -> tuple[PlayedTrick, ...]:
    global _shown_tricks
    source, shown = _shown_tricks
    if source is tricks:
        return shown
    n = len(source)
    if n and len(tricks) == n + 1 and tricks[:n] == source:  # one trick more: add it alone
        t = tricks[n]
        shown = shown + (PlayedTrick(t.leader, t.cards, t.winner),)
    else:
        shown = tuple([PlayedTrick(t.leader, t.cards, t.winner) for t in tricks])
    _shown_tricks = (tricks, shown)
    return shown


_NO_SCORES: Final = (0, 0, 0, 0)


def _seated(occupants: tuple[tuple[str, ...], ...]) -> tuple[str, ...]:
    """Who sits at each seat now: the last of its occupants (the player, until a
    substitution). A one-entry memo of the same kind as `_played_tricks`'s."""
    global _shown_seated
    source, shown = _shown_seated
    if source is not occupants:
        shown = tuple([occ[-1] for occ in occupants])
        _shown_seated = (occupants, shown)
    return shown


_shown_seated: tuple[tuple[Any, ...], tuple[str, ...]] = ((), ())


def seat_view(state: GameState, seat: int) -> SeatView:
    """What `seat` may see now; seat -1 is a spectator (no hand, no legal actions)."""
    st = state.deal
    tricks = _played_tricks(state.tricks)
    if st is not None and 0 < len(state.trick_cards) < 4:
        tricks += (PlayedTrick(st.leader, state.trick_cards, None),)
    hand = 0
    phase = state.phase
    if 0 <= seat < 4 and (phase is _DECLARING or phase is _PLAYING):
        hand = hand_of(st.hands, seat) if st is not None else state.hands[seat]
    result = state.result
    to_move = state.to_move
    seated = _seated(state.occupants) if state.occupants else state.players
    return SeatView(
        state.game_id,
        seat,
        seated,  # players
        state.rules,
        phase,
        state.deal_no if phase is not _OVER else _shown_deal(state),  # deal_no
        state.attempt,
        state.declarer,
        hand,
        st.contract if st is not None else None,
        tricks,
        st.tricks_won if st is not None else _NO_SCORES,
        deal_scores(st) if st is not None else _NO_SCORES,
        state.totals,
        state.trump_left,
        state.penalty_left,
        state.uses,
        state.completed,  # history
        to_move,
        _legal_actions(state, seat, to_move) if seat >= 0 else (),
        state.strikes,
        result.winners if result else None,
        result.ladder_points if result else None,
        state.king,
        state.commitment,
        state.seed,
    )


def _shown_deal(state: GameState) -> int:
    """The deal a view names, counted from 1: the one in play, or about to be dealt; once the
    game is over, the last one played (not the next number, a deal that never comes)."""
    if state.phase is _OVER:
        for done in reversed(state.completed):
            if isinstance(done, CompletedDeal):
                return done.deal
    return state.deal_no


def public_view(state: GameState) -> SeatView:
    return seat_view(state, -1)


# --- events as their audiences may see them ---------------------------------------------


@dataclass(frozen=True, slots=True)
class Disclosure:
    """One stored event as its audiences may see it: `public` for spectators and every seat,
    except a deal's first event, where each seat sees its own hand (`seats`)."""

    type: str
    public: dict[str, Any]
    seats: tuple[dict[str, Any], ...] | None = None

    def data(self, seat: int | None) -> dict[str, Any]:
        """What `seat` (0-3) or the public (None) sees. Shared: never mutate it."""
        if seat is None or self.seats is None:
            return self.public
        return self.seats[seat]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return by_fields(self)  # (domain.pickling: alike in both builds)


def disclose(events: Sequence[Event], after: GameState) -> list[Disclosure]:
    """Consecutive events of one game, the last of which made `after`, as each audience may
    see them. Any run of events can be disclosed on its own, so a stream resumes anywhere.

    A stored `deal_started` holds all four hands: a seat sees its own, the public none. When a
    deal ends, or is given back by a redeal, its hands are public, as in the views, so
    `deal_ended` and `redeal_asked` carry them (looked up in `after`, which keeps every ended
    deal's hands). Every other event is public as it is, `game_ended`'s ladder points as JSON
    numbers (domain.results.points_number); the seed is public in `seed_revealed`, the game's
    last event. No hash is ever added: a hash over a hidden hand fingerprints it.
    """
    # The redeals of a deal within `events` are the last ones `after` knows of that deal.
    redealt: dict[int, list[RedealtHands]] = {}
    for done in after.completed:
        if isinstance(done, RedealtHands):
            redealt.setdefault(done.deal, []).append(done)
    pending: dict[int, int] = {}
    for event in events:
        if isinstance(event, RedealAsked):
            pending[event.deal] = pending.get(event.deal, 0) + 1
    out: list[Disclosure] = []
    for event in events:
        kind = event.TYPE
        if isinstance(event, DealStarted):
            public = {"deal": event.deal, "attempt": event.attempt, "declarer": event.declarer}
            seats = tuple({**public, "hand": _cards(h)} for h in event.hands)
            out.append(Disclosure(kind, public, seats))
            continue
        data = to_payload(event)
        hands: tuple[int, ...] | None = None
        if isinstance(event, DealEnded):
            hands = _ended_hands(after, event.deal, event.attempt)
        elif isinstance(event, RedealAsked):
            known = redealt.get(event.deal, [])
            index = len(known) - pending[event.deal]
            pending[event.deal] -= 1
            hands = known[index].hands if 0 <= index < len(known) else None
        if hands is not None:
            data["hands"] = [_cards(h) for h in hands]
        if isinstance(event, GameEnded):
            # Stored as exact fractions' text (the hashed form); sent as the one JSON form.
            data["ladder_points"] = [points_number(p) for p in event.ladder_points]
            data["results"] = [
                {**r, "points": points_number(x.points)}
                for r, x in zip(data["results"], event.results, strict=True)
            ]
        out.append(Disclosure(kind, data))
    return out


def _ended_hands(state: GameState, deal: int, attempt: int) -> tuple[int, ...] | None:
    for done in reversed(state.completed):
        if isinstance(done, CompletedDeal) and done.deal == deal and done.attempt == attempt:
            return done.hands
    return None


def _cards(mask: int) -> list[str]:
    return [card_name(c) for c in cards_of(mask)]
