"""Stored events folded into a game's state: `apply`, with a lane of its own for a deal's play.

Nine events in ten of a stored game are `card_played` or `trick_taken`. The replay audit reads
them as the store keeps them (a type and a JSON object) and, on the general path, decodes each
into an event and copies the game's two dozen fields for each card. `fold_stored` reads those
two types straight from their stored objects instead, carrying only what they change (the deal
in play, the trick's cards, the deal's tricks and the version) from one to the next, and builds
the game's state once the run of play ends.

The lane takes an event only when every check `from_payload` and `apply` would make holds:
field types (an int is an int, not a bool), the deal's number, the seat to move, the card's
legality by the same mask, the trick's every derived fact. Anything else, well formed or not,
goes the general way, which accepts it or names what is wrong. So the state after any prefix of
a stream, and the first error in it, are those of `from_payload` and `apply` one event at a
time (tests/domain/test_fold.py holds them equal on random games and damaged copies of them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from domain import deal as dealmod
from domain.cards import CARD_NAMES
from domain.events import Event, MalformedEvent, TrickTaken, from_payload
from domain.game import GameState, InconsistentEvent, Phase, apply, next_trick, with_play

_CARD_INDEX = {name: i for i, name in enumerate(CARD_NAMES)}


class StoredEventError(ValueError):
    """The first stored event that cannot follow: its version, its type and why; `ordinal` is
    its place in the input (1 for the first), which is its version when the versions run."""

    def __init__(self, ordinal: int, version: int, type_: str, reason: str) -> None:
        super().__init__(reason)
        self.ordinal = ordinal
        self.version = version
        self.type = type_
        self.reason = reason


class _Play(NamedTuple):
    """What a deal's card_played and trick_taken events change, between two game states."""

    deal: dealmod.DealState
    trick_cards: tuple[int, ...]
    tricks: tuple[TrickTaken, ...]
    version: int


_new_play = tuple.__new__  # (the field order of _Play; skips the generated keyword __new__)


def _card(run: _Play, deal_no: int, payload: object) -> _Play | None:
    """The play after a stored card_played, or None when the general path must judge it."""
    if type(payload) is not dict:
        return None
    deal, seat, name = payload.get("deal"), payload.get("seat"), payload.get("card")
    if type(deal) is not int or type(seat) is not int or type(name) is not str:
        return None
    card = _CARD_INDEX.get(name)
    st = run.deal
    if (
        card is None
        or deal != deal_no
        or len(run.trick_cards) >= 4
        or seat != dealmod.seat_to_move(st)
        # (legal_mask is 0 once the deal is over)
        or not dealmod.legal_mask(st) >> card & 1
    ):
        return None
    return _new_play(
        _Play, (dealmod.play(st, card), run.trick_cards + (card,), run.tricks, run.version + 1)
    )


def _trick(run: _Play, deal_no: int, payload: object) -> _Play | None:
    """The play after a stored trick_taken equal to the one the cards give, else None."""
    cards = run.trick_cards
    if type(payload) is not dict or len(cards) != 4:
        return None
    st = run.deal
    taken = next_trick(st, deal_no, len(run.tricks), cards)
    deal, number = payload.get("deal"), payload.get("trick")
    led, won = payload.get("leader"), payload.get("winner")
    if type(deal) is not int or type(number) is not int or type(led) is not int:
        return None
    if type(won) is not int or deal != deal_no or number != taken.trick:
        return None
    if led != taken.leader or won != taken.winner:
        return None
    shown = payload.get("cards")
    if type(shown) is not list or shown != [CARD_NAMES[c] for c in cards]:
        return None
    return _new_play(_Play, (st, (), run.tricks + (taken,), run.version + 1))


_LANE: dict[str, Callable[[_Play, int, object], _Play | None]] = {
    "card_played": _card,
    "trick_taken": _trick,
}


def fold_stored(
    events: Iterable[tuple[int, str, object]],
    state: GameState | None = None,
    seen: Callable[[int, Event, GameState], None] | None = None,
) -> GameState:
    """Fold `(version, type, payload)` triples of one stream, versions from the state's next,
    into the state after them. Raises StoredEventError at the first that cannot follow (a
    version out of turn, a malformed payload, an event the game refuses).

    `seen(version, event, state_after)` is called for every event the general path takes (all
    but a deal's cards and tricks): the audit keeps the dealt hands and checks the seed there.
    An exception it raises stops the fold and reaches the caller as it is.
    """
    s = state if state is not None else GameState()
    expected = s.version + 1
    ordinal = 0
    run: _Play | None = None
    for version, type_, payload in events:
        ordinal += 1
        if version != expected:
            raise StoredEventError(ordinal, version, type_, f"expected version {expected}")
        expected += 1
        if run is not None:
            lane = _LANE.get(type_)
            moved = lane(run, s.deal_no, payload) if lane is not None else None
            if moved is not None:
                run = moved
                continue
            s = with_play(s, run.deal, run.trick_cards, run.tricks, run.version)
            run = None
        try:
            event = from_payload(type_, payload)
            s = apply(s, event)
        except (MalformedEvent, InconsistentEvent) as exc:
            raise StoredEventError(ordinal, version, type_, str(exc)) from None
        if seen is not None:
            seen(version, event, s)
        if s.phase is Phase.PLAYING and s.deal is not None:
            run = _new_play(_Play, (s.deal, s.trick_cards, s.tricks, s.version))
    if run is not None:
        s = with_play(s, run.deal, run.trick_cards, run.tricks, run.version)
    return s
