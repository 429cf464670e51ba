"""Small parts of the strategies: the ladder objective, equivalent cards, the hand model."""

from __future__ import annotations

import random

import pytest

from domain.cards import mask_of, parse_card
from domain.contracts import ALL_CONTRACTS, Contract
from domain.deal import new_deal, play
from domain.rules import Rules
from tournament.strategies.bidding import BLOCK, features, worth
from tournament.strategies.bidding_model import BASELINES, COEFFICIENTS
from tournament.strategies.calibrate import _solve
from tournament.strategies.knowledge import Knowledge
from tournament.strategies.objective import GameContext, contract_outlook, expected_ladder
from tournament.strategies.strong import distinct_cards


def _mask(text: str) -> int:
    return mask_of(parse_card(t) for t in text.split())


def test_ladder_objective_at_the_end_of_a_game() -> None:
    # R-LADDER20's example: totals +450 / 0 / -130 / -320 give +9 / +6 / -6 / -6. The model
    # smooths the threshold a little, so the order and rough sizes are what it must get.
    ctx = GameContext(Rules(), (450.0, 0.0, -130.0, -320.0), 0)
    got = [expected_ladder(ctx, s, (0, 0, 0, 0), -1) for s in range(4)]
    assert got[0] > got[1] > got[2] == got[3]
    assert got[0] == pytest.approx(9 + 1.5, abs=1.0) and got[2] == pytest.approx(-5.5, abs=0.6)


def test_ladder_objective_prefers_points_and_values_them_more_late() -> None:
    early = GameContext(Rules(), (0.0, 0.0, 0.0, 0.0), 19)
    late = GameContext(Rules(), (0.0, 0.0, 0.0, 0.0), 1)

    def gain(ctx: GameContext) -> float:
        return expected_ladder(ctx, 0, (60, -20, -20, -20), -1) - expected_ladder(
            ctx, 0, (0, 0, 0, 0), -1
        )

    assert 0 < gain(early) < gain(late)
    assert expected_ladder(early, 0, (0, 0, 0, 0), 0) == 12.0  # a King
    assert expected_ladder(early, 1, (0, 0, 0, 0), 0) == -4.0
    short = GameContext(Rules(mode="short12"), (100.0, 0.0, 0.0, 0.0), 0)
    assert expected_ladder(short, 0, (0, 0, 0, 0), -1) == pytest.approx(12.0, abs=0.01)


def test_a_contract_edge_is_weighed_by_the_game_state() -> None:
    """Early, a hand's edge for a contract is worth about the same whatever the contract (the
    choice is the hand model's); late, where the totals stand makes the edges differ."""

    def gain(totals: tuple[float, ...], left: int, c: Contract) -> float:
        ctx = GameContext(Rules(), totals, left)
        return contract_outlook(ctx, 0, c, 100.0) - contract_outlook(ctx, 0, c, 0.0)

    even = (0.0, 0.0, 0.0, 0.0)
    assert gain(even, 19, Contract.TRUMP_S) > 0 and gain(even, 19, Contract.NO_QUEENS) > 0
    assert gain(even, 19, Contract.TRUMP_S) == pytest.approx(
        gain(even, 19, Contract.NO_QUEENS), rel=0.05
    )
    behind, ahead = (-250.0, 100.0, 100.0, 50.0), (300.0, -100.0, -100.0, -100.0)
    for totals in (behind, ahead):
        trump, penalty = gain(totals, 1, Contract.TRUMP_S), gain(totals, 1, Contract.NO_QUEENS)
        assert min(trump, penalty) > 0 and abs(trump - penalty) > 0.2 * min(trump, penalty)
    # A decided game: no edge changes the ladder points (the heuristic then breaks the tie
    # on deal points).
    assert gain((2000.0, -700.0, -700.0, -600.0), 0, Contract.NO_QUEENS) == pytest.approx(
        0.0, abs=1e-6
    )


def test_equivalent_cards_are_searched_once() -> None:
    hand = _mask("2S 3S 5S 9S QH")
    st = new_deal(Rules(), Contract.NO_TRICKS, 0, (hand, 0, 0, 0))
    out = ((1 << 52) - 1) & ~hand & ~_mask("4S")  # 4S is gone: 2S 3S 5S are one card
    k = Knowledge(0, st, out, (5, 13, 13, 13), (hand, out, out, out))
    assert distinct_cards(k, hand) == [parse_card(c) for c in ("2S", "9S", "QH")]
    # In no_queens a queen is never the same as its neighbour.
    hand2 = _mask("JS QS KS")
    st2 = new_deal(Rules(), Contract.NO_QUEENS, 0, (hand2, 0, 0, 0))
    k2 = Knowledge(0, st2, out & ~hand2, (3, 13, 13, 13), (hand2, out, out, out))
    assert distinct_cards(k2, hand2) == [parse_card(c) for c in ("JS", "QS", "KS")]
    # A card on the trick in progress lies between too: over an 8S led, 9S wins and 7S loses.
    hand3 = _mask("7S 9S")
    dealt = (hand3, _mask("2C"), _mask("3C"), _mask("8S 2H"))
    st3 = play(new_deal(Rules(), Contract.NO_TRICKS, 3, dealt), parse_card("8S"))
    assert st3.to_move == 0
    rest = ((1 << 52) - 1) & ~hand3 & ~_mask("8S")
    k3 = Knowledge(0, st3, rest, (2, 1, 1, 1), (hand3, rest, rest, rest))
    assert distinct_cards(k3, hand3) == [parse_card(c) for c in ("7S", "9S")]


def test_hand_model_shapes() -> None:
    assert (
        set(BASELINES)
        == set(COEFFICIENTS)
        == {"trump", "no_tricks", "no_hearts", "no_queens", "no_boys", "last_two", "rifki"}
    )
    rng = random.Random(3)
    deck = list(range(52))
    for _ in range(20):
        rng.shuffle(deck)
        hand = mask_of(deck[:13])
        for c in ALL_CONTRACTS:
            idx, size = features(hand, c)
            assert idx[0] == 0 and max(idx) < size and size in (1 + BLOCK, 1 + 2 * BLOCK)
            assert len(COEFFICIENTS["trump" if c.is_trump else c.value]) == size
            worth(hand, c)
    # A bare KH is a liability in rifki; long strong trumps are an asset.
    assert worth(_mask("KH 2S 3S 4S 5S 6S 7S 2D 3D 4D 2C 3C 4C"), Contract.RIFKI) < worth(
        _mask("2H 2S 3S 4S 5S 6S 7S 2D 3D 4D 2C 3C 4C"), Contract.RIFKI
    )
    assert worth(_mask("AS KS QS JS TS 9S 2H 3H 2D 3D 2C 3C 4C"), Contract.TRUMP_S) > 150


def test_least_squares_solver() -> None:
    x = _solve([[4.0, 1.0], [1.0, 3.0]], [1.0, 2.0])
    assert x == pytest.approx([1 / 11, 7 / 11])
