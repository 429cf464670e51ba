"""Hypothesis properties of the rules engine over random legal games and random rule options."""

from __future__ import annotations

import random
from collections.abc import Iterator
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.cards import FULL_DECK, cards_of
from domain.contracts import CONTRACT_INFO, Contract
from domain.deal import check_card, legal_mask, new_deal, play, rollout
from domain.events import from_payload, to_payload
from domain.game import CompletedDeal, GameState, Phase, replay
from domain.playout import advance, new_game
from domain.record import check_record, to_record
from domain.results import ladder_points, points_from_json, points_number, seat_results
from domain.rules import Rules
from domain.view import SeatView, seat_view
from tests.random_rules import random_rules

PLAYERS = ("ada", "bora", "cem", "deniz")

# R-KING off, at 8, or at 11 (the default, drawn twice as often).
rules_st = random_rules(king_tricks=[0, 11, 11, 8])


def random_policy(rng: random.Random):  # type: ignore[no-untyped-def]
    def choose(view: SeatView):  # type: ignore[no-untyped-def]
        return rng.choice(view.legal)

    return choose


def live_game(rules: Rules, seed: bytes, rng_seed: int) -> Iterator[tuple[GameState, list]]:  # type: ignore[type-arg]
    """Every intermediate state of a random game, with the events that led to it."""
    state, events = new_game("prop", PLAYERS, seed, rules)
    policies = [random_policy(random.Random(rng_seed))] * 4
    yield state, list(events)
    while state.phase is not Phase.OVER:
        state, new = advance(state, seed, policies)
        events = events + new
        yield state, events


def random_hands(rng: random.Random) -> tuple[int, int, int, int]:
    deck = list(range(52))
    rng.shuffle(deck)
    h = [0, 0, 0, 0]
    for k, c in enumerate(deck):
        h[k % 4] |= 1 << c
    return h[0], h[1], h[2], h[3]


GAME_SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@GAME_SETTINGS
@given(rules=rules_st, seed=st.binary(min_size=32, max_size=32), rng=st.integers(0, 2**32 - 1))
def test_random_games_keep_every_invariant(rules: Rules, seed: bytes, rng: int) -> None:
    state = None
    for state, _events in live_game(rules, seed, rng):
        deal = state.deal
        if deal is not None:
            # 52 cards conserved: in hands, on the trick, or in the completed tricks.
            in_hands = deal.hands[0] | deal.hands[1] | deal.hands[2] | deal.hands[3]
            assert sum(h.bit_count() for h in deal.hands) == in_hands.bit_count()
            assert in_hands | deal.trick_bits | deal.played == FULL_DECK
            assert not in_hands & (deal.trick_bits | deal.played)
            assert (deal.taken[0] | deal.taken[1] | deal.taken[2] | deal.taken[3]) == deal.played
            # Hands shrink together: a seat never holds more than one card more than another.
            sizes = [h.bit_count() for h in deal.hands]
            assert max(sizes) - min(sizes) <= 1
        seat = state.to_move
        if seat is not None:
            assert seat_view(state, seat).legal, "the seat to act has at least one legal action"
    assert state is not None and state.phase is Phase.OVER
    played = [d for d in state.completed if isinstance(d, CompletedDeal)]
    for d in played:
        leader = d.declarer  # R-LEAD1: the declarer leads first, then each trick's winner
        for t in d.tricks:
            # One card per seat, in turn from the leader: card i from seat (leader + i) % 4's
            # hand as dealt, four different cards.
            assert t.leader == leader
            assert len(t.cards) == 4 and len(set(t.cards)) == 4
            for i, c in enumerate(t.cards):
                assert d.hands[(t.leader + i) % 4] >> c & 1, (t, i)
            leader = t.winner
        if d.king is not None:
            assert sum(d.scores) == 50 * len(d.tricks)
        else:
            assert sum(d.scores) == CONTRACT_INFO[d.contract].deal_total
    counted = [d for d in played if not d.void]
    assert state.totals == tuple(sum(d.scores[s] for d in counted) for s in range(4))
    if state.king is None:
        assert len(counted) == rules.deals
        if rules.mode == "standard20":
            assert sum(state.totals) == 0
    result = state.result
    assert result is not None
    losers = 4 - len(result.winners)
    bonus = 3 if state.king is None and rules.mode == "standard20" else 0
    assert sum(result.ladder_points) == 12 + bonus - (12 if losers else 0)


@GAME_SETTINGS
@given(rules=rules_st, seed=st.binary(min_size=32, max_size=32), rng=st.integers(0, 2**32 - 1))
def test_replaying_the_events_gives_the_live_state(rules: Rules, seed: bytes, rng: int) -> None:
    states = list(live_game(rules, seed, rng))
    final, events = states[-1]
    assert replay(events) == final
    # Every event survives its canonical dict form unchanged (what the store hashes).
    for e in events:
        assert from_payload(e.TYPE, to_payload(e)) == e
    # The exported record checks to the same result.
    status, out = check_record(to_record(final))
    assert status == 0
    assert out["totals"] == list(final.totals)
    assert out["finished"] is True


@GAME_SETTINGS
@given(rules=rules_st, seed=st.binary(min_size=32, max_size=32), rng=st.integers(0, 2**32 - 1))
def test_a_seat_view_shows_no_other_hand(rules: Rules, seed: bytes, rng: int) -> None:
    for state, _ in live_game(rules, seed, rng):
        for seat in range(4):
            view = seat_view(state, seat)
            if state.deal is not None:
                assert view.hand == state.deal.hands[seat]
            elif view.hand:
                assert view.hand == state.hands[seat]
            public = seat_view(state, -1)
            assert public.hand == 0 and public.legal == ()
            # The live deal's hands appear nowhere in the view's history.
            assert all(d.deal != state.deal_no or d.attempt != state.attempt for d in view.history)


@settings(max_examples=200, deadline=None)
@given(
    rules=rules_st,
    contract=st.sampled_from(list(Contract)),
    declarer=st.integers(0, 3),
    rng_seed=st.integers(0, 2**32 - 1),
)
def test_legal_mask_and_check_card_agree(
    rules: Rules, contract: Contract, declarer: int, rng_seed: int
) -> None:
    """A card is in the legal mask exactly when check_card finds nothing wrong with it."""
    rng = random.Random(rng_seed)
    deal = new_deal(rules, contract, declarer, random_hands(rng))
    while not deal.over:
        mask = legal_mask(deal)
        assert mask, "someone to move always has a legal card"
        hand = deal.hands[deal.to_move]
        assert mask & ~hand == 0
        for c in range(52):
            why = check_card(deal, c)
            assert (why is None) == bool(mask >> c & 1), (c, why)
            if why is not None and not hand >> c & 1:
                assert why.code == "card_not_in_hand"
        deal = play(deal, rng.choice(cards_of(mask)))
    assert legal_mask(deal) == 0
    assert check_card(deal, 0) is not None


@settings(max_examples=200, deadline=None)
@given(
    rules=rules_st,
    contract=st.sampled_from(list(Contract)),
    declarer=st.integers(0, 3),
    seed=st.integers(0, 2**32),
)
def test_rollout_equals_play_card_by_card(
    rules: Rules, contract: Contract, declarer: int, seed: int
) -> None:
    hands = random_hands(random.Random(seed))
    start = new_deal(rules, contract, declarer, hands)
    picks = random.Random(seed + 1)
    fast = rollout(start, lambda _seat, mask: picks.choice(cards_of(mask)))
    picks = random.Random(seed + 1)
    slow = start
    while not slow.over:
        slow = play(slow, picks.choice(cards_of(legal_mask(slow))))
    assert fast == slow


@pytest.mark.slow
@pytest.mark.compute
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_st, seed=st.binary(min_size=32, max_size=32), rng=st.integers(0, 2**32 - 1))
def test_many_random_games_keep_every_invariant(rules: Rules, seed: bytes, rng: int) -> None:
    test_random_games_keep_every_invariant.hypothesis.inner_test(rules, seed, rng)  # type: ignore[attr-defined]
    test_replaying_the_events_gives_the_live_state.hypothesis.inner_test(rules, seed, rng)  # type: ignore[attr-defined]


def _half_points_unless_four_lead(rules: Rules, totals: tuple[int, ...], points: tuple) -> None:  # type: ignore[type-arg]
    """Per-game ladder points are halves (so exact as JSON numbers), with one exception: a
    standard20 game where all four tie for the lead (every total 0) shares the +3 four ways."""
    four_lead = rules.mode == "standard20" and len(set(totals)) == 1
    for p in points:
        assert (p * 4).denominator == 1
        assert (p * 2).denominator == 1 or (four_lead and p == Fraction(15, 4))
        assert points_from_json(points_number(p)) == p  # the JSON number is exact
        assert points_from_json(str(p)) == p  # and the old text form still reads


@GAME_SETTINGS
@given(
    rules=rules_st,
    seed=st.binary(min_size=32, max_size=32),
    rng=st.integers(0, 2**32 - 1),
    gone=st.sets(st.integers(0, 3), max_size=3),
)
def test_every_ladder_point_of_a_finished_game_is_a_half(
    rules: Rules, seed: bytes, rng: int, gone: set[int]
) -> None:
    *_, (state, _events) = live_game(rules, seed, rng)
    result = state.result
    assert result is not None
    _half_points_unless_four_lead(rules, state.totals, result.ladder_points)
    # The seats in `gone` were forfeited and finished by a substitute: -30 and +1 are halves too.
    occupants = [[PLAYERS[s], "house:heuristic"] if s in gone else [PLAYERS[s]] for s in range(4)]
    abandoned = {(PLAYERS[s], s) for s in gone}
    rows = seat_results(result.ladder_points, result.winners, occupants, abandoned)
    _half_points_unless_four_lead(rules, state.totals, tuple(p for _s, _who, p in rows))


@settings(max_examples=300, deadline=None)
@given(
    rules=rules_st,
    totals=st.lists(st.integers(-60, 60), min_size=3, max_size=3),
    king=st.integers(-1, 3),
)
def test_ladder_points_over_any_totals_are_halves_but_a_four_way_lead(
    rules: Rules, totals: list[int], king: int
) -> None:
    # standard20 totals sum to 0; short12 totals are any; multiples of 10 make ties common.
    last = -sum(totals) if rules.mode == "standard20" else totals[0]
    t = tuple(10 * x for x in (*totals, last))
    _half_points_unless_four_lead(rules, t, ladder_points(rules, t, king if king >= 0 else None))


@GAME_SETTINGS
@given(rules=rules_st, seed=st.binary(min_size=32, max_size=32), rng=st.integers(0, 2**32 - 1))
def test_a_view_names_deals_from_one_and_a_finished_game_its_last(
    rules: Rules, seed: bytes, rng: int
) -> None:
    state = None
    for state, _events in live_game(rules, seed, rng):
        assert 1 <= seat_view(state, -1).to_dict()["deal"] <= rules.deals
    assert state is not None and state.phase is Phase.OVER
    last = [d.deal for d in state.completed if isinstance(d, CompletedDeal)][-1]
    assert seat_view(state, 0).to_dict()["deal"] == last


def test_the_four_way_lead_is_the_one_quarter() -> None:
    assert ladder_points(Rules(), (0, 0, 0, 0), None) == (Fraction(15, 4),) * 4
    assert points_number(Fraction(15, 4)) == 3.75
