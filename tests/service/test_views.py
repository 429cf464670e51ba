"""The cached view encoding equals domain.view's own, for every seat and the public."""

from __future__ import annotations

import random

from domain.game import Phase
from domain.view import public_view, seat_view
from eventstore import EventStore
from services.play.feed import AudienceFeed
from services.play.views import ViewCache
from tournament.games import GameRepository


def test_cached_views_equal_the_domain_views_and_feeds_hide_hands(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = EventStore.open(f"sqlite:///{tmp_path / 'v.db'}")
    repo = GameRepository(store)
    cache = ViewCache()
    rng = random.Random(4)
    state = repo.create("v1", ["a", "b", "c", "d"])
    checked = 0
    while state.phase is not Phase.OVER:
        seat = state.to_move
        assert seat is not None
        if rng.random() < 0.05 or not state.tricks:
            for s in range(4):
                assert cache.seat(state, s) == seat_view(state, s).to_dict()
            assert cache.to_dict(public_view(state)) == public_view(state).to_dict()
            checked += 1
        state = repo.execute("v1", rng.choice(seat_view(state, seat).legal).command(seat)).state
    assert checked > 20
    feeds = [AudienceFeed("v1", s) for s in (None, 0, 1, 2, 3)]
    for recorded in repo.events("v1"):
        forms = [f.form(recorded) for f in feeds]
        if recorded.type == "deal_started":
            assert "hand" not in forms[0]["data"] and "hands" not in forms[0]["data"]
            for s in range(4):
                assert forms[s + 1]["data"]["hand"] == recorded.payload["hands"][s]
                assert "hands" not in forms[s + 1]["data"]
        if recorded.type == "deal_ended":
            assert all(f["data"]["hands"] for f in forms)
    assert all(f.finished for f in feeds)
    store.close()
