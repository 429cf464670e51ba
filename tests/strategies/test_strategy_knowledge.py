"""Inference from a seat's view never excludes a card a seat really holds; sampled deals keep
to what is known; the fast rollout policy makes the same choices as the general one."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategy_helpers import rules_st, steps

from domain.cards import mask_of, parse_card
from domain.contracts import ALL_CONTRACTS, Contract
from domain.deal import legal_mask, new_deal, play
from domain.game import Phase
from domain.rules import Rules
from domain.view import seat_view
from tournament.strategies import make_strategy
from tournament.strategies.cardplay import choose_card, rollout_card
from tournament.strategies.knowledge import exclusions, knowledge_of
from tournament.strategies.sampling import sample_hands


def _check_inference(rules: Rules, seed: bytes, base: int) -> None:
    policies = [make_strategy(("heuristic", "random")[s % 2], base + s) for s in range(4)]
    rng = random.Random(base)
    for state, seat in steps(seed, rules, policies):
        if state.phase is not Phase.PLAYING:
            continue
        assert state.deal is not None
        k = knowledge_of(seat_view(state, seat))
        assert k.state.trick == state.deal.trick
        assert k.state.winners == state.deal.winners
        assert k.state.taken == state.deal.taken
        for s in range(4):
            real = state.deal.hands[s]
            assert real & ~k.possible[s] == 0, f"seat {s} holds a card ruled out"
            assert k.counts[s] == real.bit_count()
        hands = sample_hands(seat, k.state.hands[seat], k.out, k.possible, k.counts, rng)
        assert hands[seat] == state.deal.hands[seat]
        for s in range(4):
            assert hands[s] & ~k.possible[s] == 0
            assert hands[s].bit_count() == k.counts[s]


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_st, seed=st.binary(min_size=8, max_size=8), base=st.integers(0, 999))
def test_inference_is_sound_and_samples_fit(rules: Rules, seed: bytes, base: int) -> None:
    _check_inference(rules, seed, base)


@pytest.mark.slow
@pytest.mark.compute
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_st, seed=st.binary(min_size=8, max_size=8), base=st.integers(0, 999))
def test_inference_is_sound_many_games(rules: Rules, seed: bytes, base: int) -> None:
    _check_inference(rules, seed, base)


def test_a_void_and_a_refused_ruff_are_inferred() -> None:
    # Trump spades; seat 1 discards a club on a heart lead: no hearts and no spades left.
    tricks = [(0, (parse_card("2H"), parse_card("3C")))]
    excluded = exclusions(Rules(), Contract.TRUMP_S, 0, tricks)
    assert excluded[1] == mask_of(range(13, 26)) | mask_of(range(0, 13))


def test_not_dropping_the_queen_shows_it_is_elsewhere() -> None:
    # No queens; KS led, seat 1 follows with 4S: it cannot hold QS (R-DROP would force it).
    tricks = [(0, (parse_card("KS"), parse_card("4S")))]
    excluded = exclusions(Rules(), Contract.NO_QUEENS, 0, tricks)
    assert excluded[1] == 1 << parse_card("QS")


def test_fast_rollout_policy_matches_the_general_one() -> None:
    rng = random.Random(11)
    exact = (1.0, 1.0, 1.0, 1.0)
    for i in range(200):
        deck = list(range(52))
        rng.shuffle(deck)
        hands = [0, 0, 0, 0]
        for k, c in enumerate(deck):
            hands[k % 4] |= 1 << c
        st_ = new_deal(
            Rules(), ALL_CONTRACTS[i % 10], i % 4, (hands[0], hands[1], hands[2], hands[3])
        )
        while not st_.over:
            legal = legal_mask(st_)
            choice = choose_card(st_, legal, st_.hands, exact)
            assert rollout_card(st_, legal) == choice
            options = [c for c in range(52) if legal >> c & 1]
            st_ = play(st_, choice if rng.random() < 0.5 else rng.choice(options))
