"""A whole game of King as events in, state out.

`decide(state, command)` answers a command with the events it causes or with a Violation (a
reason code of KING_RULES.md §10); `apply(state, event)` folds one event into the next state and
recomputes every derived fact, refusing a stored fact that differs (the replay audit's core).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Any, ClassVar, Final

from domain import deal as dealmod
from domain.cards import (
    ABOVE_TEN,
    CARD_NAMES,
    FULL_DECK,
    QUEENS,
    TWO_OF_DIAMONDS,
    UnknownCard,
    card_name,
    count,
    parse_card,
)
from domain.commands import (
    Abandon,
    AskRedeal,
    Command,
    CreateGame,
    Declare,
    Play,
    RecordStrike,
    RevealSeed,
    StartDeal,
    Substitute,
)
from domain.contracts import (
    ALL_CONTRACTS,
    PENALTY_CONTRACTS,
    Contract,
    UnknownContract,
    display_name,
    parse_contract,
)
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
    SeatResult,
    SeatSubstituted,
    SeedRevealed,
    StrikeRecorded,
    TrickTaken,
)
from domain.results import ladder_points, seat_results, winners
from domain.rules import Rules
from domain.shuffle import commitment as seed_commitment
from domain.values import Value
from domain.violations import Violation

# A revealed seed is written as bytes.hex() writes it: lower-case, so a record exported from the
# game carries it as king-record/1 wants. (Its length is not checked here: the service's seeds
# are 32 bytes, but tests and tools may deal from shorter ones.)
SEED_HEX: Final = re.compile(r"\A(?:[0-9a-f]{2})+\Z")


class Phase(StrEnum):
    NEW = "new"
    AWAITING_DEAL = "awaiting_deal"
    DECLARING = "declaring"
    PLAYING = "playing"
    OVER = "over"


class InconsistentEvent(ValueError):
    """An event that cannot follow the state, or a stored derived fact that differs from the
    recomputed one. The message says what was expected."""


class CommandError(ValueError):
    """A service-side command that is malformed (bad hands, a seed that does not match)."""


# --- state ----------------------------------------------------------------------------------


_COMPLETED_FIELDS: Final = (
    "deal",
    "attempt",
    "declarer",
    "contract",
    "hands",
    "tricks",
    "tricks_won",
    "scores",
    "void",
    "king",
)


class CompletedDeal(Value):
    """A deal that has ended, kept for views, replays and records."""

    __slots__ = _COMPLETED_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _COMPLETED_FIELDS

    def __init__(
        self,
        deal: int,
        attempt: int,
        declarer: int,
        contract: Contract,
        hands: tuple[int, ...],
        tricks: tuple[TrickTaken, ...],
        tricks_won: tuple[int, ...],
        scores: tuple[int, ...],
        void: bool,
        king: int | None,
    ) -> None:
        self.deal: Final = deal
        self.attempt: Final = attempt
        self.declarer: Final = declarer
        self.contract: Final = contract
        self.hands: Final = hands
        self.tricks: Final = tricks
        self.tricks_won: Final = tricks_won
        self.scores: Final = scores
        self.void: Final = void
        self.king: Final = king


_REDEALT_FIELDS: Final = ("deal", "attempt", "declarer", "hands")


class RedealtHands(Value):
    """Hands that were dealt and given back by a weak-hand redeal (R-WEAKHAND)."""

    __slots__ = _REDEALT_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _REDEALT_FIELDS

    def __init__(self, deal: int, attempt: int, declarer: int, hands: tuple[int, ...]) -> None:
        self.deal: Final = deal
        self.attempt: Final = attempt
        self.declarer: Final = declarer
        self.hands: Final = hands


_DEFAULT_RULES: Final = Rules()  # (a frozen value: one serves every new state)

# GameState's fields, in the order of its constructor.
_STATE_FIELDS: Final = (
    "game_id",
    "rules",
    "players",
    "commitment",
    "client_seed",
    "shuffle",
    "shuffle_id",
    "phase",
    "deal_no",
    "attempt",
    "declarer",
    "hands",
    "deal",
    "trick_cards",
    "tricks",
    "trump_left",
    "penalty_left",
    "uses",
    "completed",
    "totals",
    "king",
    "result",
    "strikes",
    "occupants",
    "abandoned",
    "seed",
    "version",
)


class GameState(Value):
    """Everything known about a game after some events. Never mutated: `apply` builds the next.

    A value like a named tuple (equal, hashed and pickled by its fields; `_replace`), but a
    plain class, like the deal it holds: every event makes one, and the compiled build keeps
    a plain class's fields in a C struct, read without a lookup (docs/rules-engine.md).
    """

    __slots__ = _STATE_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _STATE_FIELDS

    def __init__(
        self,
        game_id: str = "",
        rules: Rules = _DEFAULT_RULES,
        players: tuple[str, ...] = (),
        commitment: str = "",
        client_seed: str = "",
        shuffle: str = "",
        shuffle_id: str = "",
        phase: Phase = Phase.NEW,
        deal_no: int = 1,
        attempt: int = 0,
        declarer: int = -1,
        hands: tuple[int, ...] = (),
        deal: dealmod.DealState | None = None,
        trick_cards: tuple[int, ...] = (),
        tricks: tuple[TrickTaken, ...] = (),
        trump_left: tuple[int, ...] = (0, 0, 0, 0),
        penalty_left: tuple[int, ...] = (0, 0, 0, 0),
        uses: tuple[int, ...] = (0, 0, 0, 0, 0, 0),
        completed: tuple[CompletedDeal | RedealtHands, ...] = (),
        totals: tuple[int, ...] = (0, 0, 0, 0),
        king: int | None = None,
        result: GameEnded | None = None,
        strikes: tuple[int, ...] = (0, 0, 0, 0),
        occupants: tuple[tuple[str, ...], ...] = (),
        abandoned: tuple[tuple[str, int], ...] = (),
        seed: str | None = None,
        version: int = 0,
    ) -> None:
        self.game_id: Final = game_id
        self.rules: Final = rules
        self.players: Final = players
        self.commitment: Final = commitment
        self.client_seed: Final = client_seed
        self.shuffle: Final = shuffle
        self.shuffle_id: Final = shuffle_id
        self.phase: Final = phase
        self.deal_no: Final = deal_no
        self.attempt: Final = attempt
        self.declarer: Final = declarer
        self.hands: Final = hands
        self.deal: Final = deal
        self.trick_cards: Final = trick_cards
        self.tricks: Final = tricks
        self.trump_left: Final = trump_left
        self.penalty_left: Final = penalty_left
        self.uses: Final = uses
        self.completed: Final = completed
        self.totals: Final = totals
        self.king: Final = king
        self.result: Final = result
        self.strikes: Final = strikes
        self.occupants: Final = occupants
        self.abandoned: Final = abandoned
        self.seed: Final = seed
        self.version: Final = version

    def _values(self) -> tuple[Any, ...]:
        """The fields' values in order (spelled out: the compiled build reads each directly)."""
        return (
            self.game_id,
            self.rules,
            self.players,
            self.commitment,
            self.client_seed,
            self.shuffle,
            self.shuffle_id,
            self.phase,
            self.deal_no,
            self.attempt,
            self.declarer,
            self.hands,
            self.deal,
            self.trick_cards,
            self.tricks,
            self.trump_left,
            self.penalty_left,
            self.uses,
            self.completed,
            self.totals,
            self.king,
            self.result,
            self.strikes,
            self.occupants,
            self.abandoned,
            self.seed,
            self.version,
        )

    @property
    def contract(self) -> Contract | None:
        return self.deal.contract if self.deal is not None else None

    @property
    def to_move(self) -> int | None:
        """The seat whose action the game waits for, or None (between deals, or over)."""
        phase = self.phase
        if phase is _DECLARING:
            return self.declarer
        st = self.deal
        if phase is _PLAYING and st is not None and not st.over:
            return dealmod.seat_to_move(st)
        return None

    @property
    def deals_played(self) -> int:
        return sum(1 for d in self.completed if isinstance(d, CompletedDeal) and not d.void)


# The phases the per-card path tests, as module constants: an enum's class attribute costs
# several times as much to look up, and these are asked on every card. (`Final` names are
# constants to the compiled build as well, not looked up by name each time.)
_NEW: Final = Phase.NEW
_AWAITING_DEAL: Final = Phase.AWAITING_DEAL
_DECLARING: Final = Phase.DECLARING
_PLAYING: Final = Phase.PLAYING
_OVER: Final = Phase.OVER

# --- helpers --------------------------------------------------------------------------------

_PENALTY_INDEX: Final = {c: i for i, c in enumerate(PENALTY_CONTRACTS)}
_CARD_INDEX: Final = {name: i for i, name in enumerate(CARD_NAMES)}


def with_play(
    state: GameState,
    deal: dealmod.DealState,
    trick_cards: tuple[int, ...],
    tricks: tuple[TrickTaken, ...],
    version: int,
) -> GameState:
    """`state` with its deal's play moved on to these (what folding the deal's card_played
    and trick_taken events one by one gives: domain.fold carries them, then builds this).
    Every card passes here, so the fields are passed one by one, not by `_replace`'s names."""
    return GameState(
        state.game_id,
        state.rules,
        state.players,
        state.commitment,
        state.client_seed,
        state.shuffle,
        state.shuffle_id,
        state.phase,
        state.deal_no,
        state.attempt,
        state.declarer,
        state.hands,
        deal,
        trick_cards,
        tricks,
        state.trump_left,
        state.penalty_left,
        state.uses,
        state.completed,
        state.totals,
        state.king,
        state.result,
        state.strikes,
        state.occupants,
        state.abandoned,
        state.seed,
        version,
    )


def _with(seq: Sequence[int], i: int, value: int) -> tuple[int, ...]:
    out = list(seq)
    out[i] = value
    return tuple(out)


def check_hands(hands: object) -> str | None:
    """Why four masks are not a deal of the 52 cards, 13 each, or None when they are."""
    if not isinstance(hands, tuple | list) or len(hands) != 4:
        return "a deal has four hands"
    seen = 0
    for seat, h in enumerate(hands):
        if type(h) is not int or h < 0 or h > FULL_DECK:
            return f"hand {seat} is not a set of cards"
        if count(h) != 13:
            return f"hand {seat} holds {count(h)} cards, not 13"
        if seen & h:
            return f"hand {seat} repeats a card of an earlier hand"
        seen |= h
    return None


def _contract(contract: object) -> Contract:
    """A contract from its name, or itself (a member is itself: parsing is for names, and
    costs an enum lookup in Python); UnknownContract for anything else."""
    return contract if type(contract) is Contract else parse_contract(contract)


def declaration_violation(state: GameState, seat: int, contract: object) -> Violation | None:
    """Why `seat` may not declare `contract` now, or None (R-ORDER, R-CAP, R-MODE)."""
    phase = state.phase
    if phase is _OVER:
        return Violation("game_over", "the game is over")
    if phase is not _DECLARING:
        return Violation("wrong_phase", "no contract is being declared now")
    if seat != state.declarer:
        return Violation("not_your_turn", f"seat {state.declarer} declares this deal")
    try:
        c = _contract(contract)
    except UnknownContract as exc:
        return Violation("bad_contract", str(exc))
    i = _PENALTY_INDEX.get(c)
    if i is None:  # a trump contract
        if state.trump_left[seat] == 0:
            return Violation("no_right_left", f"seat {seat} has no trump right left")
        return None
    if state.penalty_left[seat] == 0:
        return Violation("no_right_left", f"seat {seat} has no penalty right left")
    if state.uses[i] >= 2:
        return Violation(
            "contract_exhausted", f"{display_name(c)} has been played twice in this game"
        )
    return None


def redeal_violation(state: GameState, seat: int) -> Violation | None:
    """Why `seat` may not ask for a redeal now, or None (R-WEAKHAND)."""
    if state.phase is _OVER:
        return Violation("game_over", "the game is over")
    if state.phase is not _DECLARING:
        return Violation("wrong_phase", "no contract is being declared now")
    if seat != state.declarer:
        return Violation("not_your_turn", f"seat {state.declarer} declares this deal")
    if not state.rules.weak_hand_redeal:
        return Violation("redeal_not_allowed", "weak-hand redeals are off in this game")
    if state.penalty_left[seat] > 0:
        return Violation(
            "redeal_not_allowed", "a redeal is only for a declarer who must declare trump"
        )
    if state.hands[seat] & ABOVE_TEN:
        return Violation("redeal_not_allowed", "the hand holds a card above ten")
    return None


def legal_contracts(state: GameState) -> tuple[Contract, ...]:
    """The contracts the declarer may declare now (empty when nobody is declaring)."""
    if state.phase is not _DECLARING:
        return ()
    return tuple(
        [c for c in ALL_CONTRACTS if declaration_violation(state, state.declarer, c) is None]
    )


def _playable(state: GameState, seat: object, card: object) -> bool:
    """Whether `seat` may play card index `card` now: the one question of every play, asked
    with a mask (the reasons of a refusal are `play_violation`'s, worked out only then)."""
    st = state.deal
    return (
        state.phase is _PLAYING
        and st is not None
        and not st.over
        and type(card) is int
        and 0 <= card < 52
        and seat == dealmod.seat_to_move(st)
        and dealmod.legal_mask(st) >> card & 1 == 1
    )


def play_violation(state: GameState, seat: int, card: object) -> Violation | None:
    """Why `seat` may not play `card` now, or None."""
    if _playable(state, seat, card):
        return None
    if state.phase is _OVER:
        return Violation("game_over", "the game is over")
    # Between deals a card is too late if a deal has just ended; before the first deal or
    # after a redeal it is simply out of place.
    last = state.completed[-1] if state.completed else None
    if (state.phase is _AWAITING_DEAL and isinstance(last, CompletedDeal)) or (
        state.phase is _PLAYING and state.deal is not None and state.deal.over
    ):
        return Violation("deal_over", "the deal is over")
    if state.phase is not _PLAYING or state.deal is None:
        return Violation("wrong_phase", "no card can be played before the contract is declared")
    if seat != state.deal.to_move:
        return Violation("not_your_turn", f"it is seat {state.deal.to_move}'s turn to play")
    try:
        c = _card(card)
    except UnknownCard as exc:
        return Violation("card_not_in_hand", str(exc))
    return dealmod.check_card(state.deal, c)


def _card(card: object) -> int:
    """A card index 0-51 (not a bool: True is an int to Python) or a card name; else
    UnknownCard."""
    if type(card) is int:
        if 0 <= card < 52:
            return card
        raise UnknownCard(f"a card index is 0-51, not {card}")
    return parse_card(card)


def _is_seat(seat: object) -> bool:
    return type(seat) is int and 0 <= seat < 4


def _bad_seat(seat: object) -> Violation:
    return Violation("not_your_turn", f"{seat!r} is not a seat (0-3)")


# --- decide ---------------------------------------------------------------------------------


def decide(state: GameState, command: Command) -> list[Event] | Violation:
    """The events a command causes, or the Violation that refuses it. Never changes `state`.

    A player's command with a value of the wrong kind (a seat that is not 0-3, a card that is
    not a card) gets a Violation; a service-side command that is malformed, or an object that is
    no command at all, raises CommandError.
    """
    # A command's fields are read as given, of any kind, and judged here: the compiled build
    # would otherwise check each against its declared type as it reads it, and a wrong kind
    # would be a TypeError, not the Violation or CommandError promised above.
    given: Any = command
    if isinstance(command, Play | Declare | AskRedeal) and not _is_seat(given.seat):
        return _bad_seat(given.seat)
    if isinstance(command, Play):
        return _decide_play(state, given.seat, given.card)
    if isinstance(command, Declare):
        why = declaration_violation(state, given.seat, given.contract)
        if why:
            return why
        return [ContractDeclared(state.deal_no, given.seat, _contract(given.contract))]
    if isinstance(command, AskRedeal):
        why = redeal_violation(state, given.seat)
        return why or [RedealAsked(state.deal_no, given.seat)]
    if isinstance(command, StartDeal):
        return _decide_start_deal(state, given.hands)
    if isinstance(command, CreateGame):
        if state.phase is not _NEW:
            raise CommandError("the game exists already")
        _check_create(given)
        return [
            GameCreated(
                given.game_id,
                given.rules,
                tuple(given.players),
                given.commitment,
                given.client_seed,
                given.shuffle,
                given.shuffle_id or given.game_id,
            )
        ]
    if isinstance(command, RevealSeed):
        if state.phase is not _OVER:
            raise CommandError("the seed is revealed only after the game")
        server_seed = given.server_seed
        if not isinstance(server_seed, str) or not SEED_HEX.match(server_seed):
            raise CommandError("the seed must be lower-case hex")
        if seed_commitment(bytes.fromhex(server_seed)) != state.commitment:
            raise CommandError("the seed does not match the game's commitment")
        return [SeedRevealed(server_seed)]
    if isinstance(command, RecordStrike | Abandon | Substitute):
        return _decide_seat_event(state, given)
    raise CommandError(f"not a command: {type(command).__name__}")


def _check_create(command: Any) -> None:
    """Refuse a CreateGame (read as given) whose fields are not of their kinds."""
    players = command.players
    if not isinstance(players, tuple | list) or len(players) != 4:
        raise CommandError("a game has four players")
    if not all(isinstance(p, str) for p in players):
        raise CommandError("player names are strings")
    if not isinstance(command.rules, Rules):
        raise CommandError("rules must be a Rules")
    texts = (
        command.game_id,
        command.commitment,
        command.client_seed,
        command.shuffle,
        command.shuffle_id,
    )
    if not all(isinstance(t, str) for t in texts):
        raise CommandError("game_id, commitment, client_seed, shuffle and shuffle_id are strings")


def _decide_seat_event(state: GameState, command: Any) -> list[Event] | Violation:
    """A RecordStrike, Abandon or Substitute, read as given."""
    seat = command.seat
    if not _is_seat(seat):
        raise CommandError(f"{seat!r} is not a seat (0-3)")
    kind = type(command)  # (not isinstance: that would type the fields it reads)
    text = command.player if issubclass(kind, Substitute) else command.reason
    if not isinstance(text, str):
        raise CommandError("a reason or a player's name is a string")
    if state.phase is _OVER:
        return Violation("game_over", "the game is over")
    if state.phase is _NEW:
        return Violation("wrong_phase", "the game has not been created")
    if issubclass(kind, RecordStrike):
        return [StrikeRecorded(seat, text, state.strikes[seat] + 1)]
    current = state.occupants[seat][-1]
    if issubclass(kind, Abandon):
        if (current, seat) in state.abandoned:
            raise CommandError(f"seat {seat} is abandoned already")
        return [SeatAbandoned(seat, current, text)]
    if (current, seat) not in state.abandoned:
        raise CommandError(f"seat {seat} is not abandoned: nobody to substitute")
    return [SeatSubstituted(seat, text)]


def _decide_start_deal(state: GameState, hands: Any) -> list[Event]:
    if state.phase is not _AWAITING_DEAL:
        raise CommandError(f"no deal is awaited (phase {state.phase.value})")
    why = check_hands(hands)
    if why:
        raise CommandError(why)
    declarer = state.declarer
    if declarer < 0:
        if state.rules.first_declarer == "two_of_diamonds":
            declarer = next(s for s in range(4) if hands[s] >> TWO_OF_DIAMONDS & 1)
        else:
            declarer = 0
    return [DealStarted(state.deal_no, state.attempt, declarer, tuple(hands))]


def _decide_play(state: GameState, seat: int, card: object) -> list[Event] | Violation:
    if isinstance(card, str):  # a name (records, the API): its index, for the mask test
        card = _CARD_INDEX.get(card, card)  # (an unknown name stays: play_violation names it)
    why = play_violation(state, seat, card)
    if why:
        return why
    assert state.deal is not None  # play_violation refuses a play without a deal
    c = _card(card)
    before = state.deal
    events: list[Event] = [CardPlayed(state.deal_no, seat, c)]
    if len(before.trick) < 3:  # the trick goes on: nothing is derived from this card
        return events
    after = dealmod.play(before, c)
    events.append(_trick_result(state, before, after, c))
    if after.over:
        events += _deal_results(state, after)
    return events


def _trick_result(
    state: GameState, before: dealmod.DealState, after: dealmod.DealState, card: int
) -> TrickTaken:
    """The trick_taken of a trick's fourth card, `card`, played on `before` to give `after`."""
    return TrickTaken(
        state.deal_no, after.tricks, before.leader, before.trick + (card,), after.winners[-1]
    )


def _deal_results(state: GameState, st: dealmod.DealState) -> list[Event]:
    """The deal_ended of a deal now over, and game_ended when that was the game's last."""
    ended = _deal_result(state, st)
    played = state.deals_played + (0 if ended.void else 1)
    if ended.king is None and played != state.rules.deals:
        return [ended]
    totals = state.totals
    if not ended.void:
        totals = tuple(t + s for t, s in zip(totals, ended.scores, strict=True))
    return [ended, _game_result(state, totals, ended.king)]


def _deal_result(state: GameState, st: dealmod.DealState) -> DealEnded:
    void = (
        state.rules.queens_one_each_void
        and st.contract is Contract.NO_QUEENS
        and all(count(t & QUEENS) == 1 for t in st.taken)
    )
    return DealEnded(
        state.deal_no,
        state.attempt,
        st.contract,
        st.tricks,
        st.tricks_won,
        dealmod.scores(st),
        void,
        st.king if st.king >= 0 else None,
    )


def _game_result(state: GameState, totals: tuple[int, ...], king: int | None) -> GameEnded:
    points = ladder_points(state.rules, totals, king)
    won = winners(state.rules, totals, king)
    rows = seat_results(points, won, state.occupants, set(state.abandoned))
    results = [SeatResult(seat, person, p) for seat, person, p in rows]
    return GameEnded(totals, won, points, king, tuple(results))


# --- apply ----------------------------------------------------------------------------------


def _expect(ok: bool, what: str) -> None:
    if not ok:
        raise InconsistentEvent(what)


def apply(state: GameState, event: Event) -> GameState:
    """The state after one event. Raises InconsistentEvent if the event cannot follow."""
    if state.phase is _NEW and not isinstance(event, GameCreated):
        raise InconsistentEvent(f"{event.TYPE} before game_created")
    v = state.version + 1
    if isinstance(event, CardPlayed):
        return _apply_card(state, event, v)
    if isinstance(event, TrickTaken):
        return _apply_trick(state, event, v)
    if isinstance(event, DealEnded):
        return _apply_deal_end(state, event, v)
    if isinstance(event, DealStarted):
        _expect(state.phase is _AWAITING_DEAL, "deal_started while no deal is awaited")
        _expect(
            (event.deal, event.attempt) == (state.deal_no, state.attempt),
            f"expected deal {state.deal_no} attempt {state.attempt}, "
            f"got deal {event.deal} attempt {event.attempt}",
        )
        bad_hands = check_hands(event.hands)
        _expect(bad_hands is None, f"bad hands: {bad_hands}")
        if state.declarer >= 0:
            _expect(event.declarer == state.declarer, f"seat {state.declarer} declares")
        elif state.rules.first_declarer == "two_of_diamonds":
            holder = next(s for s in range(4) if event.hands[s] >> TWO_OF_DIAMONDS & 1)
            _expect(event.declarer == holder, f"the holder of 2D (seat {holder}) declares")
        else:
            _expect(event.declarer == 0, "seat 0 declares first")
        return state._replace(
            phase=_DECLARING,
            declarer=event.declarer,
            hands=event.hands,
            deal=None,
            tricks=(),
            trick_cards=(),
            version=v,
        )
    if isinstance(event, ContractDeclared):
        _expect(
            event.deal == state.deal_no, f"contract for deal {event.deal} in deal {state.deal_no}"
        )
        why = declaration_violation(state, event.seat, event.contract)
        _expect(why is None, f"illegal declaration: {why.code if why else ''}")
        c = event.contract
        seat = event.seat
        i = _PENALTY_INDEX.get(c)
        if i is None:  # a trump contract
            trump_left, penalty_left, uses = (
                _with(state.trump_left, seat, state.trump_left[seat] - 1),
                state.penalty_left,
                state.uses,
            )
        else:
            trump_left = state.trump_left
            penalty_left = _with(state.penalty_left, seat, state.penalty_left[seat] - 1)
            uses = _with(state.uses, i, state.uses[i] + 1)
        return state._replace(
            phase=_PLAYING,
            deal=dealmod.new_deal(state.rules, c, seat, (*state.hands,)),  # type: ignore[arg-type]
            trump_left=trump_left,
            penalty_left=penalty_left,
            uses=uses,
            version=v,
        )
    if isinstance(event, RedealAsked):
        why = redeal_violation(state, event.seat)
        _expect(why is None, f"illegal redeal: {why.code if why else ''}")
        gone = RedealtHands(state.deal_no, state.attempt, state.declarer, state.hands)
        return state._replace(
            phase=_AWAITING_DEAL,
            attempt=state.attempt + 1,
            hands=(),
            completed=state.completed + (gone,),
            version=v,
        )
    if isinstance(event, GameEnded):
        _expect(state.phase is _AWAITING_DEAL and state.result is None, "game_ended too early")
        expected = _game_result(state, state.totals, state.king)
        if event != expected:  # (the message is built only then: it prints both)
            raise InconsistentEvent(f"game result differs: expected {expected}, stored {event}")
        return state._replace(phase=_OVER, result=event, version=v)
    if isinstance(event, GameCreated):
        _expect(state.phase is _NEW, "game_created twice")
        _expect(len(event.players) == 4, "a game has four players")
        r = event.rules
        return GameState(
            game_id=event.game_id,
            rules=r,
            players=event.players,
            commitment=event.commitment,
            client_seed=event.client_seed,
            shuffle=event.shuffle,
            shuffle_id=event.shuffle_id,
            phase=_AWAITING_DEAL,
            trump_left=(r.trump_rights,) * 4,
            penalty_left=(r.penalty_rights,) * 4,
            occupants=tuple((p,) for p in event.players),
            version=v,
        )
    if isinstance(event, SeedRevealed):
        _expect(state.phase is _OVER, "seed revealed before the game is over")
        try:
            matches = seed_commitment(bytes.fromhex(event.server_seed)) == state.commitment
        except ValueError:
            matches = False
        _expect(matches, "the revealed seed does not match the commitment")
        return state._replace(seed=event.server_seed, version=v)
    return _apply_seat_event(state, event, v)


def _apply_seat_event(
    state: GameState, event: StrikeRecorded | SeatAbandoned | SeatSubstituted, v: int
) -> GameState:
    seat = event.seat
    _expect(0 <= seat < 4, "a seat is 0-3")
    if isinstance(event, StrikeRecorded):
        _expect(event.count == state.strikes[seat] + 1, "strike count out of order")
        return state._replace(strikes=_with(state.strikes, seat, event.count), version=v)
    if isinstance(event, SeatAbandoned):
        _expect(event.player == state.occupants[seat][-1], f"{event.player} is not in seat {seat}")
        return state._replace(abandoned=state.abandoned + ((event.player, seat),), version=v)
    occupants = list(state.occupants)
    occupants[seat] = occupants[seat] + (event.player,)
    return state._replace(occupants=tuple(occupants), version=v)


def _apply_card(state: GameState, event: CardPlayed, v: int) -> GameState:
    card = event.card
    if not (
        event.deal == state.deal_no
        and len(state.trick_cards) < 4
        and _playable(state, event.seat, card)
    ):
        _refuse_card(state, event)
    return _fold_card(state, card, v)


def _fold_card(state: GameState, card: int, v: int) -> GameState:
    """The state after a card known to be playable (`_apply_card` has checked)."""
    assert state.deal is not None
    return with_play(
        state, dealmod.play(state.deal, card), state.trick_cards + (card,), state.tricks, v
    )


def _refuse_card(state: GameState, event: CardPlayed) -> None:
    """Raise InconsistentEvent naming why this card cannot follow (the first reason)."""
    _expect(event.deal == state.deal_no, f"card for deal {event.deal} in deal {state.deal_no}")
    _expect(len(state.trick_cards) < 4, "card_played where trick_taken was due")
    why = play_violation(state, event.seat, event.card)
    _expect(why is None, f"illegal card {card_name(event.card)}: {why.code if why else ''}")
    raise AssertionError("_refuse_card on a playable card")  # pragma: no cover


def next_trick(
    st: dealmod.DealState, deal_no: int, tricks_before: int, cards: tuple[int, ...]
) -> TrickTaken:
    """The trick_taken the rules give once four cards are down: its number, its leader (the
    declarer first, then each trick's winner) and its winner, from the deal's state."""
    n = tricks_before + 1
    leader = st.winners[n - 2] if n > 1 else st.declarer
    return TrickTaken(deal_no, n, leader, cards, st.winners[n - 1])


def _apply_trick(state: GameState, event: TrickTaken, v: int) -> GameState:
    st = state.deal
    _expect(st is not None and len(state.trick_cards) == 4, "trick_taken before four cards")
    assert st is not None
    expected = next_trick(st, state.deal_no, len(state.tricks), state.trick_cards)
    if event != expected:  # (the message is built only then: it prints both)
        raise InconsistentEvent(f"trick differs: expected {expected}, stored {event}")
    return state._replace(tricks=state.tricks + (event,), trick_cards=(), version=v)


def _apply_deal_end(state: GameState, event: DealEnded, v: int) -> GameState:
    st = state.deal
    _expect(
        st is not None and st.over and not state.trick_cards and len(state.tricks) == st.tricks,
        "deal_ended before the deal is over",
    )
    assert st is not None
    expected = _deal_result(state, st)
    if event != expected:  # (the message is built only then: it prints both)
        raise InconsistentEvent(f"deal result differs: expected {expected}, stored {event}")
    done = CompletedDeal(
        state.deal_no,
        state.attempt,
        state.declarer,
        st.contract,
        state.hands,
        state.tricks,
        st.tricks_won,
        event.scores,
        event.void,
        event.king,
    )
    base = state._replace(completed=state.completed + (done,), deal=None, trick_cards=(), version=v)
    if event.void:
        i = _PENALTY_INDEX[st.contract]
        seat = state.declarer
        return base._replace(
            phase=_AWAITING_DEAL,
            attempt=state.attempt + 1,
            penalty_left=_with(state.penalty_left, seat, state.penalty_left[seat] + 1),
            uses=_with(state.uses, i, state.uses[i] - 1),
        )
    return base._replace(
        phase=_AWAITING_DEAL,
        deal_no=state.deal_no + 1,
        attempt=0,
        declarer=(state.declarer + 1) % 4,
        totals=tuple(t + s for t, s in zip(state.totals, event.scores, strict=True)),
        king=event.king,
    )


def replay(events: Iterable[Event], state: GameState | None = None) -> GameState:
    """Fold events into a state, from a new game unless a state is given."""
    s = state if state is not None else GameState()
    for e in events:
        s = apply(s, e)
    return s


def run(state: GameState, command: Command) -> tuple[GameState, list[Event] | Violation]:
    """Decide and apply in one step: the new state and the events (or the Violation)."""
    if type(command) is Play:
        given: Any = command  # (read as given: see decide)
        played = _run_play(state, given.seat, given.card)
        if played is not None:
            return played
    decided = decide(state, command)
    if isinstance(decided, Violation):
        return state, decided
    return replay(decided, state), decided


def _run_play(state: GameState, seat: object, card: object) -> tuple[GameState, list[Event]] | None:
    """A playable card's events and the state after them, each worked out once: `decide` then
    `apply` would play the card twice and derive its trick twice. The deal's and the game's
    results, once a deal, are folded by `apply` as decided. None for anything else (a card by
    name, a seat that is not an int, a card the rules refuse): `decide` takes those."""
    if type(seat) is not int or len(state.trick_cards) >= 4 or not _playable(state, seat, card):
        return None
    assert state.deal is not None and type(card) is int  # (what _playable has just checked)
    before = state.deal
    after = dealmod.play(before, card)
    v = state.version + 1
    events: list[Event] = [CardPlayed(state.deal_no, seat, card)]
    if len(before.trick) < 3:  # the trick goes on
        return with_play(state, after, state.trick_cards + (card,), state.tricks, v), events
    taken = _trick_result(state, before, after, card)
    events.append(taken)
    s = with_play(state, after, (), state.tricks + (taken,), v + 1)
    if not after.over:
        return s, events
    results = _deal_results(state, after)
    return replay(results, s), events + results
