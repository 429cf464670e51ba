"""`play_to_end` carries on a game from any point: cut a game anywhere and play the rest, and
the events are those of the game played in one go."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.game import Phase
from domain.playout import advance, new_game, play_game, play_to_end
from domain.view import Action, SeatView

PLAYERS = ("ada", "bora", "cem", "deniz")


def middle(view: SeatView) -> Action:
    """A policy that depends on the view only, so both runs choose alike."""
    return view.legal[len(view.legal) // 2]


@settings(max_examples=15, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), cut=st.integers(0, 400), reveal=st.booleans())
def test_the_rest_of_a_cut_game_is_the_rest_of_the_whole_game(
    seed: bytes, cut: int, reveal: bool
) -> None:
    whole_state, whole = play_game("g", PLAYERS, seed, [middle] * 4, reveal=reveal)
    state, events = new_game("g", PLAYERS, seed)
    for _ in range(cut):
        if state.phase is Phase.OVER:
            break
        state, more = advance(state, seed, [middle] * 4)
        events += more
    end, rest = play_to_end(state, seed, [middle] * 4, reveal=reveal)
    assert events + rest == whole
    assert end == whole_state
    assert end.phase is Phase.OVER
    assert (end.seed is not None) is reveal
