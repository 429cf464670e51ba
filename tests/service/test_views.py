"""The live cache's view encoding equals domain.view's own, for every seat and the public."""

from __future__ import annotations

import random

from domain.game import Phase
from domain.view import public_view, seat_view
from eventstore import EventStore
from services.play.live import LiveGames
from tournament.games import GameRepository


def test_cached_views_equal_the_domain_views(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = EventStore.open(f"sqlite:///{tmp_path / 'v.db'}")
    live = LiveGames()
    repo = GameRepository(store, live)
    rng = random.Random(4)
    state = repo.create("v1", ["a", "b", "c", "d"])
    checked = 0
    while state.phase is not Phase.OVER:
        seat = state.to_move
        assert seat is not None
        if rng.random() < 0.3 or not state.tricks:
            for s in range(4):
                assert live.view_dict(seat_view(state, s)) == seat_view(state, s).to_dict()
            assert live.view_dict(public_view(state)) == public_view(state).to_dict()
            checked += 1
        state = repo.execute("v1", rng.choice(seat_view(state, seat).legal).command(seat)).state
    assert checked > 20
    assert live.get("v1") == state  # the repository keeps its states in the live cache
    store.close()


def test_a_view_older_than_the_cache_shows_nothing_newer(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The cache has encoded a later state's tricks; a view of an earlier state (read a
    moment before) still shows exactly that state: no card played after it."""
    store = EventStore.open(f"sqlite:///{tmp_path / 'o.db'}")
    live = LiveGames()
    repo = GameRepository(store, live)
    rng = random.Random(9)
    states = [repo.create("o1", ["a", "b", "c", "d"])]
    while len(states) < 60:
        state = states[-1]
        seat = state.to_move
        assert seat is not None
        states.append(
            repo.execute("o1", rng.choice(seat_view(state, seat).legal).command(seat)).state
        )
    for newer, older in [(states[k + d], states[k]) for k in range(50) for d in (1, 2, 3, 7)]:
        live.view_dict(public_view(newer))
        assert live.view_dict(public_view(older)) == public_view(older).to_dict()
    store.close()
