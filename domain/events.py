"""The events of a game stream, as immutable values with a canonical dict form.

The dict form (`to_payload`) holds only strings, integers, booleans, lists and dicts, so the
event store can hash it byte for byte; `from_payload` turns it back and refuses anything
malformed. Derived facts (TrickTaken, DealEnded, GameEnded) are stored too so a replay reads
naturally; `game.apply` recomputes them and refuses a stored fact that differs.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any, ClassVar, Final

from domain.cards import UnknownCard, card_name, cards_of, mask_of, parse_card
from domain.contracts import Contract, UnknownContract, parse_contract
from domain.rules import BadRuleOption, Rules
from domain.values import Value

SCHEMA_VERSION = 1


class MalformedEvent(ValueError):
    """A payload that is not a valid event of its type."""


_GAME_CREATED_FIELDS: Final = (
    "game_id",
    "rules",
    "players",
    "commitment",
    "client_seed",
    "shuffle",
    "shuffle_id",
)


class GameCreated(Value):
    """A table is set: rules, players by seat, and the shuffle commitment (never the seed).

    shuffle_id is the game id text fed to king-shuffle/1: the game's own id, except in
    duplicate rounds, where every table shares one so that all deal the same cards.
    """

    TYPE: ClassVar[str] = "game_created"
    __slots__ = _GAME_CREATED_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _GAME_CREATED_FIELDS

    def __init__(
        self,
        game_id: str,
        rules: Rules,
        players: tuple[str, ...],
        commitment: str,
        client_seed: str,
        shuffle: str,
        shuffle_id: str,
    ) -> None:
        self.game_id: Final = game_id
        self.rules: Final = rules
        self.players: Final = players
        self.commitment: Final = commitment
        self.client_seed: Final = client_seed
        self.shuffle: Final = shuffle
        self.shuffle_id: Final = shuffle_id


_DEAL_STARTED_FIELDS: Final = ("deal", "attempt", "declarer", "hands")


class DealStarted(Value):
    """Hands dealt for deal `deal` (1-based), shuffle attempt `attempt` (0, then 1 per redeal)."""

    TYPE: ClassVar[str] = "deal_started"
    __slots__ = _DEAL_STARTED_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _DEAL_STARTED_FIELDS

    def __init__(self, deal: int, attempt: int, declarer: int, hands: tuple[int, ...]) -> None:
        self.deal: Final = deal
        self.attempt: Final = attempt
        self.declarer: Final = declarer
        self.hands: Final = hands


_CONTRACT_DECLARED_FIELDS: Final = ("deal", "seat", "contract")


class ContractDeclared(Value):
    TYPE: ClassVar[str] = "contract_declared"
    __slots__ = _CONTRACT_DECLARED_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _CONTRACT_DECLARED_FIELDS

    def __init__(self, deal: int, seat: int, contract: Contract) -> None:
        self.deal: Final = deal
        self.seat: Final = seat
        self.contract: Final = contract


_REDEAL_ASKED_FIELDS: Final = ("deal", "seat")


class RedealAsked(Value):
    """R-WEAKHAND: the declarer asked for new hands instead of declaring."""

    TYPE: ClassVar[str] = "redeal_asked"
    __slots__ = _REDEAL_ASKED_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _REDEAL_ASKED_FIELDS

    def __init__(self, deal: int, seat: int) -> None:
        self.deal: Final = deal
        self.seat: Final = seat


_CARD_PLAYED_FIELDS: Final = ("deal", "seat", "card")


class CardPlayed(Value):
    TYPE: ClassVar[str] = "card_played"
    __slots__ = _CARD_PLAYED_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _CARD_PLAYED_FIELDS

    def __init__(self, deal: int, seat: int, card: int) -> None:
        self.deal: Final = deal
        self.seat: Final = seat
        self.card: Final = card


_TRICK_TAKEN_FIELDS: Final = ("deal", "trick", "leader", "cards", "winner")


class TrickTaken(Value):
    """Derived: trick number `trick` (1-based), its cards in play order from `leader`."""

    TYPE: ClassVar[str] = "trick_taken"
    __slots__ = _TRICK_TAKEN_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _TRICK_TAKEN_FIELDS

    def __init__(
        self, deal: int, trick: int, leader: int, cards: tuple[int, ...], winner: int
    ) -> None:
        self.deal: Final = deal
        self.trick: Final = trick
        self.leader: Final = leader
        self.cards: Final = cards
        self.winner: Final = winner


_DEAL_ENDED_FIELDS: Final = (
    "deal",
    "attempt",
    "contract",
    "tricks",
    "tricks_won",
    "scores",
    "void",
    "king",
)


class DealEnded(Value):
    """Derived: the deal's result. A void deal (queens_one_each_void) does not count."""

    TYPE: ClassVar[str] = "deal_ended"
    __slots__ = _DEAL_ENDED_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _DEAL_ENDED_FIELDS

    def __init__(
        self,
        deal: int,
        attempt: int,
        contract: Contract,
        tricks: int,
        tricks_won: tuple[int, ...],
        scores: tuple[int, ...],
        void: bool,
        king: int | None,
    ) -> None:
        self.deal: Final = deal
        self.attempt: Final = attempt
        self.contract: Final = contract
        self.tricks: Final = tricks
        self.tricks_won: Final = tricks_won
        self.scores: Final = scores
        self.void: Final = void
        self.king: Final = king


_SEAT_RESULT_FIELDS: Final = ("seat", "player", "points")


class SeatResult(Value):
    """One person's ladder points for a game (after R-ABANDON and R-SUBSTITUTE)."""

    __slots__ = _SEAT_RESULT_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _SEAT_RESULT_FIELDS

    def __init__(self, seat: int, player: str, points: Fraction) -> None:
        self.seat: Final = seat
        self.player: Final = player
        self.points: Final = points


_GAME_ENDED_FIELDS: Final = ("totals", "winners", "ladder_points", "king", "results")


class GameEnded(Value):
    """Derived: totals, winners (seats), ladder points by seat and by person."""

    TYPE: ClassVar[str] = "game_ended"
    __slots__ = _GAME_ENDED_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _GAME_ENDED_FIELDS

    def __init__(
        self,
        totals: tuple[int, ...],
        winners: tuple[int, ...],
        ladder_points: tuple[Fraction, ...],
        king: int | None,
        results: tuple[SeatResult, ...],
    ) -> None:
        self.totals: Final = totals
        self.winners: Final = winners
        self.ladder_points: Final = ladder_points
        self.king: Final = king
        self.results: Final = results


_SEED_REVEALED_FIELDS: Final = ("server_seed",)


class SeedRevealed(Value):
    """The server seed, published once the game is over (R-SHUFFLE)."""

    TYPE: ClassVar[str] = "seed_revealed"
    __slots__ = _SEED_REVEALED_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _SEED_REVEALED_FIELDS

    def __init__(self, server_seed: str) -> None:
        self.server_seed: Final = server_seed


_STRIKE_RECORDED_FIELDS: Final = ("seat", "reason", "count")


class StrikeRecorded(Value):
    """A time-out or an illegal action: a default legal move was played for the seat."""

    TYPE: ClassVar[str] = "strike_recorded"
    __slots__ = _STRIKE_RECORDED_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _STRIKE_RECORDED_FIELDS

    def __init__(self, seat: int, reason: str, count: int) -> None:
        self.seat: Final = seat
        self.reason: Final = reason
        self.count: Final = count


_SEAT_ABANDONED_FIELDS: Final = ("seat", "player", "reason")


class SeatAbandoned(Value):
    """R-ABANDON: the player left or was forfeited; a substitute finishes the game."""

    TYPE: ClassVar[str] = "seat_abandoned"
    __slots__ = _SEAT_ABANDONED_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _SEAT_ABANDONED_FIELDS

    def __init__(self, seat: int, player: str, reason: str) -> None:
        self.seat: Final = seat
        self.player: Final = player
        self.reason: Final = reason


_SEAT_SUBSTITUTED_FIELDS: Final = ("seat", "player")


class SeatSubstituted(Value):
    """R-SUBSTITUTE: someone (a house bot, say) takes over an abandoned seat."""

    TYPE: ClassVar[str] = "seat_substituted"
    __slots__ = _SEAT_SUBSTITUTED_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _SEAT_SUBSTITUTED_FIELDS

    def __init__(self, seat: int, player: str) -> None:
        self.seat: Final = seat
        self.player: Final = player


Event = (
    GameCreated
    | DealStarted
    | ContractDeclared
    | RedealAsked
    | CardPlayed
    | TrickTaken
    | DealEnded
    | GameEnded
    | SeedRevealed
    | StrikeRecorded
    | SeatAbandoned
    | SeatSubstituted
)

EVENT_TYPES: dict[str, type[Any]] = {
    cls.TYPE: cls
    for cls in (
        GameCreated,
        DealStarted,
        ContractDeclared,
        RedealAsked,
        CardPlayed,
        TrickTaken,
        DealEnded,
        GameEnded,
        SeedRevealed,
        StrikeRecorded,
        SeatAbandoned,
        SeatSubstituted,
    )
}

# How a field leaves and enters the canonical form, by field name. Fields not named here are
# plain strings, ints or bools.
_Codec = tuple[Callable[[Any], Any], Callable[[Any], Any]]


def _int(v: Any) -> int:
    if type(v) is not int:
        raise MalformedEvent(f"expected an integer, got {v!r}")
    return v


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise MalformedEvent(f"expected a string, got {v!r}")
    return v


def _bool(v: Any) -> bool:
    if type(v) is not bool:
        raise MalformedEvent(f"expected true or false, got {v!r}")
    return v


def _ints(v: Any) -> tuple[int, ...]:
    if not isinstance(v, list):
        raise MalformedEvent(f"expected a list of integers, got {v!r}")
    return tuple(_int(x) for x in v)


def _opt_int(v: Any) -> int | None:
    return None if v is None else _int(v)


def _hands_out(hands: tuple[int, ...]) -> list[list[str]]:
    return [[card_name(c) for c in cards_of(h)] for h in hands]


def _hands_in(v: Any) -> tuple[int, ...]:
    if not isinstance(v, list) or len(v) != 4 or not all(isinstance(h, list) for h in v):
        raise MalformedEvent("hands must be four lists of cards")
    return tuple(mask_of(parse_card(c) for c in h) for h in v)


def _results_out(results: tuple[SeatResult, ...]) -> list[dict[str, Any]]:
    return [{"seat": r.seat, "player": r.player, "points": str(r.points)} for r in results]


def _results_in(v: Any) -> tuple[SeatResult, ...]:
    if not isinstance(v, list) or not all(isinstance(r, dict) for r in v):
        raise MalformedEvent("results must be a list of objects")
    return tuple(
        SeatResult(_int(r.get("seat")), _str(r.get("player")), Fraction(_str(r.get("points"))))
        for r in v
    )


_CODECS: dict[str, _Codec] = {
    "rules": (Rules.to_dict, Rules.from_dict),
    "players": (list, lambda v: tuple(_str(x) for x in v)),
    "hands": (_hands_out, _hands_in),
    "card": (card_name, parse_card),
    "cards": (lambda cs: [card_name(c) for c in cs], lambda v: tuple(parse_card(c) for c in v)),
    "contract": (lambda c: c.value, parse_contract),
    "tricks_won": (list, _ints),
    "scores": (list, _ints),
    "totals": (list, _ints),
    "winners": (list, _ints),
    "ladder_points": (
        lambda ps: [str(p) for p in ps],
        lambda v: tuple(Fraction(_str(x)) for x in v),
    ),
    "king": (lambda k: k, _opt_int),
    "results": (_results_out, _results_in),
    "void": (lambda b: b, _bool),
}


def event_type(event: Event) -> str:
    return event.TYPE


# The fields stored as they are (no codec), with the check that reads each back.
_PLAIN: dict[str, Callable[[Any], Any]] = {
    **dict.fromkeys(
        ("deal", "attempt", "declarer", "seat", "trick", "leader", "winner", "tricks", "count"),
        _int,
    ),
    **dict.fromkeys(
        (
            "game_id",
            "commitment",
            "client_seed",
            "shuffle",
            "shuffle_id",
            "server_seed",
            "reason",
            "player",
        ),
        _str,
    ),
}


def _plan(
    cls: type[Any],
) -> tuple[tuple[str, Callable[[Any], Any] | None, Callable[[Any], Any]], ...]:
    """A class's fields as (name, encoder or None, decoder), in its constructor's order."""
    return tuple(
        (name, _CODECS[name][0], _CODECS[name][1])
        if name in _CODECS
        else (name, None, _PLAIN[name])
        for name in cls._FIELDS
    )


# Per event class, its plan, worked out once: every event in and out of the store passes here.
# (A field with neither a codec nor a plain reading fails here, on import.)
_PLANS: dict[
    type[Any], tuple[tuple[str, Callable[[Any], Any] | None, Callable[[Any], Any]], ...]
] = {cls: _plan(cls) for cls in EVENT_TYPES.values()}


def to_payload(event: Event) -> dict[str, Any]:
    """The canonical dict form of an event's fields (the type travels beside it)."""
    out: dict[str, Any] = {}
    for name, encode, _ in _PLANS[type(event)]:
        value = getattr(event, name)
        out[name] = encode(value) if encode is not None else value
    return out


# Per event type: its class and each field's (name, decoder), for the common case.
_DECODERS: dict[str, tuple[type[Any], tuple[tuple[str, Callable[[Any], Any]], ...]]] = {
    t: (cls, tuple((name, decode) for name, _, decode in _PLANS[cls]))
    for t, cls in EVENT_TYPES.items()
}


def _card_played(payload: dict[str, Any]) -> CardPlayed:
    return CardPlayed(_int(payload["deal"]), _int(payload["seat"]), parse_card(payload["card"]))


# Three events in four of a stream are card_played: its fields read directly, not through the
# generic per-field loop (a third of its cost). Same reading, same fallback on any error.
_FAST_DECODERS: dict[str, Callable[[dict[str, Any]], Event]] = {"card_played": _card_played}


def from_payload(type_: str, payload: object) -> Event:
    """The event of a type from its dict form; MalformedEvent for anything else."""
    fast = _FAST_DECODERS.get(type_)
    if fast is not None and type(payload) is dict:
        try:
            return fast(payload)
        except Exception:  # the generic reading below names what is wrong
            pass
    known = _DECODERS.get(type_)
    if known is None:
        raise MalformedEvent(f"unknown event type {type_!r}")
    if not isinstance(payload, dict):
        raise MalformedEvent(f"{type_} payload must be an object")
    cls, decoders = known
    try:  # every event of every replay comes through here: one pass, no bookkeeping
        event: Event = cls(*[decode(payload[name]) for name, decode in decoders])
        return event
    except Exception:  # whatever it was, the careful pass below names it
        return _from_payload_carefully(type_, cls, payload)


def _from_payload_carefully(type_: str, cls: type[Any], payload: dict[str, Any]) -> Event:
    """from_payload field by field, naming the first field that is missing or malformed."""
    values: dict[str, Any] = {}
    for name, _, decode in _PLANS[cls]:
        if name not in payload:
            raise MalformedEvent(f"{type_} payload lacks {name!r}")
        try:
            values[name] = decode(payload[name])
        except (UnknownCard, UnknownContract, BadRuleOption, TypeError, ValueError) as exc:
            if isinstance(exc, MalformedEvent):
                raise
            raise MalformedEvent(f"{type_}.{name}: {exc}") from None
    event: Event = cls(**values)
    return event
