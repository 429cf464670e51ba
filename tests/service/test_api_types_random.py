"""Random games played by the domain directly, under random rule options: every view (the
public's and each seat's), every record (public and the operator's, with the deal in
progress) and every disclosed message decodes strictly as its services.api_types shape and
encodes back to the same JSON value."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.commands import RevealSeed
from domain.game import run
from domain.record import to_record
from domain.rules import Rules
from domain.view import disclose, public_view, seat_view
from services.api_types import (
    KingRecord,
    PublicGameMessage,
    PublicView,
    SeatGameMessage,
    SeatView,
)
from tests.domain.test_properties import live_game
from tests.random_rules import random_rules
from tests.service.exact_shapes import exact

GAMES = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# King after a few tricks as well as the usual 11, and no King at all.
rules_st = random_rules(king_tricks=[0, 2, 11])


@GAMES
@given(
    rules=rules_st,
    seed=st.binary(min_size=32, max_size=32),
    rng_seed=st.integers(0, 2**16),
    every=st.integers(2, 9),
)
def test_every_view_record_and_message_of_a_random_game_decodes_exactly(
    rules: Rules, seed: bytes, rng_seed: int, every: int
) -> None:
    steps = list(live_game(rules, seed, rng_seed))
    for i, (state, _) in enumerate(steps):
        if i % every and i != len(steps) - 1:
            continue
        exact(public_view(state).to_dict(), PublicView)
        for s in range(4):
            exact(seat_view(state, s).to_dict(), SeatView)
        exact(to_record(state, public=True), KingRecord)
        exact(to_record(state, public=False), KingRecord)
    final, events = steps[-1]
    final, revealed = run(final, RevealSeed(seed.hex()))
    assert isinstance(revealed, list)
    events = [*events, *revealed]
    exact(public_view(final).to_dict(), PublicView)
    exact(to_record(final), KingRecord)
    for version, shown in enumerate(disclose(events, final), start=1):
        exact(
            {"id": version, "game_id": "prop", "type": shown.type, "data": shown.data(None)},
            PublicGameMessage,
        )
        for s in range(4):
            message = {"id": version, "game_id": "prop", "type": shown.type}
            exact({**message, "data": shown.data(s)}, SeatGameMessage)
