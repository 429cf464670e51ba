"""Game states, views and disclosures pickle and copy to equal values, in both builds (the
compiled build's dataclasses would otherwise refuse to be restored: domain/pickling.py). The
analysis and the audit send game states to worker processes."""

from __future__ import annotations

import copy
import pickle
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.game import CompletedDeal, RedealtHands, replay, run
from domain.playout import play_game
from domain.rules import Rules
from domain.view import disclose, seat_view

PLAYERS = ("ada", "bora", "cem", "deniz")


@settings(max_examples=5, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), pick=st.integers(0, 2**32))
def test_a_finished_game_its_views_and_events_survive_pickling(seed: bytes, pick: int) -> None:
    rng = random.Random(pick)
    rules = Rules(mode="short12", weak_hand_redeal=True)
    state, events = play_game("p", PLAYERS, seed, [lambda v: rng.choice(v.legal)] * 4, rules)
    assert any(isinstance(d, CompletedDeal) for d in state.completed)
    for value in (state, seat_view(state, 0), seat_view(state, -1), disclose(events, state)):
        assert pickle.loads(pickle.dumps(value)) == value
        assert copy.deepcopy(value) == value
    gone = RedealtHands(1, 0, 2, (1, 2, 4, 8))
    assert pickle.loads(pickle.dumps(gone)) == gone
    declaring = replay(events[:2])  # created and dealt: the declarer chooses a contract
    assert declaring.to_move is not None
    legal = seat_view(declaring, declaring.to_move).legal
    assert legal and pickle.loads(pickle.dumps(legal)) == legal
    playing, _ = run(declaring, legal[0].command(declaring.to_move))
    if playing.to_move is not None:  # (else legal[0] was a redeal)
        plays = seat_view(playing, playing.to_move).legal
        assert plays and pickle.loads(pickle.dumps(plays)) == plays
