"""A deal in play, a game's state, its events and what its views show are values (plain classes
so that the compiled build keeps their fields unboxed and makes them without running Python):
equal by their fields, hashed by them, pickled and copied to an equal value, and `_replace` as
a named tuple's. In both builds."""

from __future__ import annotations

import copy
import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.cards import cards_of, count
from domain.contracts import ALL_CONTRACTS
from domain.deal import DealState, legal_mask, new_deal, play
from domain.events import from_payload, to_payload
from domain.game import GameState, Phase, replay
from domain.playout import advance, new_game, play_game
from domain.rules import Rules
from domain.values import Value
from domain.view import seat_view
from domain.violations import Violation


def _deal_in_play(seed: int, cards: int) -> DealState:
    rng = random.Random(seed)
    deck = list(range(52))
    rng.shuffle(deck)
    hands = [0, 0, 0, 0]
    for k, c in enumerate(deck):
        hands[k & 3] |= 1 << c
    s = new_deal(Rules(), rng.choice(ALL_CONTRACTS), rng.randrange(4), (*hands,))  # type: ignore[arg-type]
    for _ in range(cards):
        if s.over:
            break
        s = play(s, rng.choice(cards_of(legal_mask(s))))
    return s


def _holds_as_a_value(s: Value, again: Value, field: str, other: object) -> None:
    """`s` and `again`, made alike apart, are equal values; `field` set to `other` differs."""
    assert s is not again and s == again and hash(s) == hash(again)
    for copied in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s), copy.copy(s)):
        assert type(copied) is type(s) and copied == s
    assert s._replace() == s
    changed = s._replace(**{field: other})
    assert changed != s and getattr(changed, field) == other
    assert changed._replace(**{field: getattr(s, field)}) == s
    assert s != s._values() and s != (s.__class__.__name__, *s._values())


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), cards=st.integers(0, 52))
def test_a_deal_in_play_is_a_value(seed: int, cards: int) -> None:
    s = _deal_in_play(seed, cards)
    _holds_as_a_value(s, _deal_in_play(seed, cards), "leader", (s.leader + 1) & 3)
    _holds_as_a_value(s.setup, _deal_in_play(seed, cards).setup, "declarer", 4)
    assert repr(s).startswith("DealState(setup=DealSetup(rules=Rules(")


def test_replace_names_an_unknown_field() -> None:
    with pytest.raises(TypeError, match="no field 'won'"):
        _deal_in_play(1, 3)._replace(won=(0, 0, 0, 0))


def _game_after(seed: int, steps: int) -> GameState:
    rng = random.Random(seed)
    server_seed = rng.randbytes(32)
    state, _ = new_game("v", ("ada", "bora", "cem", "deniz"), server_seed)
    policies = [lambda v: rng.choice(v.legal)] * 4
    for _ in range(steps):
        if state.phase is Phase.OVER:
            break
        state, _ = advance(state, server_seed, policies)
    return state


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), steps=st.integers(0, 300))
def test_a_games_state_is_a_value(seed: int, steps: int) -> None:
    s = _game_after(seed, steps)
    _holds_as_a_value(s, _game_after(seed, steps), "version", s.version + 1)
    assert GameState() == GameState() and GameState() != s
    assert repr(s).startswith("GameState(game_id='v', rules=Rules(")


def test_a_games_replace_names_an_unknown_field() -> None:
    with pytest.raises(TypeError, match="no field 'turn'"):
        GameState()._replace(turn=1)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_a_games_events_ended_deals_and_shown_tricks_are_values(seed: int) -> None:
    """The events, the ended deals, the views' tricks and the refusals are values as well (plain
    classes too: events are made at every card, and a frozen dataclass's constructor runs as
    Python even in the compiled build)."""
    rng = random.Random(seed)
    server_seed = rng.randbytes(32)
    rules = Rules(mode="short12", weak_hand_redeal=True)
    policies = [lambda v: rng.choice(v.legal)] * 4
    state, events = play_game("v", ("ada", "bora", "cem", "deniz"), server_seed, policies, rules)
    remade = [from_payload(e.TYPE, to_payload(e)) for e in events]  # equal, not the same
    assert replay(remade) == state
    for event, same in zip(events, remade, strict=True):
        field = event._FIELDS[0]
        _holds_as_a_value(event, same, field, _other(getattr(event, field)))
        assert (
            to_payload(event) == to_payload(same)
            and from_payload(event.TYPE, to_payload(event)) == event
        )
    for done in state.completed:
        field = "attempt"
        _holds_as_a_value(done, copy.deepcopy(done), field, done.attempt + 1)
    view = seat_view(replay(events[:-8]), -1)
    for shown in view.tricks:
        _holds_as_a_value(shown, copy.deepcopy(shown), "leader", (shown.leader + 1) & 3)
    refusal = Violation("game_over", "the game is over")
    _holds_as_a_value(refusal, Violation("game_over", "the game is over"), "code", "deal_over")
    assert refusal.rule == "R-MODE"


def _other(value: object) -> object:
    """A value of the same kind that differs from `value`."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, tuple):
        return (*value, *value[:1]) if value else (0,)
    return None


@given(st.integers(0, (1 << 52) - 1))
def test_count_is_bit_count_for_every_mask_of_the_deck(mask: int) -> None:
    assert count(mask) == mask.bit_count()
    assert count(mask & ~(mask & -mask)) == max(mask.bit_count() - 1, 0)
