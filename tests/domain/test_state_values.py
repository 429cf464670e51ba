"""A deal in play and a game's state are values (`DealSetup`, `DealState` and `GameState` are
plain classes so that the compiled build keeps their fields unboxed): equal by their fields,
hashed by them, pickled and copied to an equal state, and `_replace` as a named tuple's. In
both builds."""

from __future__ import annotations

import copy
import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.cards import cards_of
from domain.contracts import ALL_CONTRACTS
from domain.deal import DealState, legal_mask, new_deal, play
from domain.game import GameState, Phase
from domain.playout import advance, new_game
from domain.rules import Rules
from domain.values import Value


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
