"""Properties of `domain.view.disclose`: what each audience sees of a game's events.

A seat sees its own hand and no other until the deal ends; the public sees none; ended and
redealt deals carry exactly the hands dealt; and any run of events discloses the same on its
own as within the whole game, so a stream may resume anywhere without reading from the start.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from domain.events import DealStarted, Event, GameEnded, to_payload
from domain.game import GameState
from domain.results import points_number
from domain.view import Disclosure, disclose
from tests.domain.test_properties import GAME_SETTINGS, live_game, rules_st


def _game(
    rules, seed: bytes, rng_seed: int
) -> tuple[list[tuple[GameState, list[Event]]], list[Event]]:  # type: ignore[no-untyped-def]
    steps = list(live_game(rules, seed, rng_seed))
    return steps, steps[-1][1]


def _names(mask_hands: tuple[int, ...], seat: int) -> list[str]:
    from domain.cards import card_name, cards_of

    return [card_name(c) for c in cards_of(mask_hands[seat])]


@GAME_SETTINGS
@given(rules=rules_st, seed=st.binary(min_size=32, max_size=32), rng_seed=st.integers(0, 2**16))
def test_no_audience_sees_a_hand_it_may_not_and_ended_deals_show_the_dealt_hands(
    rules, seed: bytes, rng_seed: int
) -> None:  # type: ignore[no-untyped-def]
    steps, events = _game(rules, seed, rng_seed)
    final = steps[-1][0]
    shown = disclose(events, final)
    assert [d.type for d in shown] == [e.TYPE for e in events]
    dealt: tuple[int, ...] | None = None
    for event, d in zip(events, shown, strict=True):
        if isinstance(event, DealStarted):
            dealt = event.hands
            assert d.public == {
                "deal": event.deal,
                "attempt": event.attempt,
                "declarer": event.declarer,
            }
            assert d.seats is not None
            for seat in range(4):
                form = d.data(seat)
                assert form["hand"] == _names(event.hands, seat)
                assert "hands" not in form
                assert {k: v for k, v in form.items() if k != "hand"} == d.public
            assert d.data(None) is d.public
            continue
        assert d.seats is None
        expected = to_payload(event)
        if event.TYPE in ("deal_ended", "redeal_asked"):
            assert dealt is not None
            expected["hands"] = [_names(dealt, s) for s in range(4)]
            dealt = None
        if isinstance(event, GameEnded):  # stored as fractions' text, shown as JSON numbers
            expected["ladder_points"] = [points_number(p) for p in event.ladder_points]
            for r, x in zip(expected["results"], event.results, strict=True):
                r["points"] = points_number(x.points)
        assert d.public == expected
        for seat in (None, 0, 1, 2, 3):
            assert d.data(seat) is d.public


@GAME_SETTINGS
@given(
    rules=rules_st,
    seed=st.binary(min_size=32, max_size=32),
    rng_seed=st.integers(0, 2**16),
    cut=st.floats(0, 1),
)
def test_any_run_of_events_discloses_as_within_the_whole_game(
    rules, seed: bytes, rng_seed: int, cut: float
) -> None:  # type: ignore[no-untyped-def]
    steps, events = _game(rules, seed, rng_seed)
    final = steps[-1][0]
    whole = disclose(events, final)
    k = int(cut * len(events))
    # A stream resuming after event k reads only the rest, with the state it has now.
    assert disclose(events[k:], final) == whole[k:]
    # What was disclosed when the events were new equals what a later reader gets.
    state, so_far = steps[min(int(cut * len(steps)), len(steps) - 1)]
    at_the_time: list[Disclosure] = disclose(so_far, state)
    assert at_the_time == whole[: len(so_far)]


def test_each_redeal_shows_the_hands_it_gave_back_even_when_a_run_starts_between() -> None:
    """Two weak-hand redeals in one deal: each `redeal_asked` carries its own attempt's hands,
    whether the run disclosed starts at the deal, between the redeals, or at the second."""
    from helpers import hands

    from domain.game import AskRedeal, Declare, StartDeal, run
    from tests.domain.test_rule_redeal import WEAK, forced_to_trump

    weak_again = hands("2D 3D 4D 5D 6D 7D 8D 9D TD 2C 3C 4C 5C", "...", "...", "...")
    state = forced_to_trump()
    events: list[Event] = []
    for command in (
        StartDeal(WEAK),
        AskRedeal(0),
        StartDeal(weak_again),
        AskRedeal(0),
        StartDeal(hands("AS ...", "...", "...", "...")),
    ):
        state, out = run(state, command)
        assert isinstance(out, list)
        events += out
    state, out = run(state, Declare(0, "trump_S"))
    assert isinstance(out, list)
    events += out
    shown = disclose(events, state)
    redeals = [d for d in shown if d.type == "redeal_asked"]
    assert [r.public["hands"] for r in redeals] == [
        [_names(WEAK, s) for s in range(4)],
        [_names(weak_again, s) for s in range(4)],
    ]
    for k in range(len(events)):
        assert disclose(events[k:], state) == shown[k:]
