"""The open-hand solver (domain/solver.py) against a deliberately plain minimax.

Random small endings (up to four tricks left, possibly mid-trick; four whole tricks in the
slow suite) of random deals, under every
contract and random rule options: the solver's paranoid and maxⁿ values must equal those of a
brute-force search over every legal card (no transposition table, no equivalent cards, no
bounds), and the properties the model implies must hold.
"""

from __future__ import annotations

import random
from functools import partial

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.cards import cards_of
from domain.contracts import ALL_CONTRACTS, CONTRACT_INFO, LAST_TWO_PENALTY, Contract
from domain.deal import DealState, legal_mask, new_deal, play, scores
from domain.rules import Rules
from domain.solver import UnknownModel, best_cards, card_groups, card_values, solve
from tests.random_rules import random_rules

# Up to ten cards to play (the third-last trick under way): a full four tricks costs the plain
# minimax seconds per position, so those are in the slow suite below (-m slow).
MAX_CARDS_LEFT = 10
SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def ending(rules: Rules, contract: Contract, seed: int, cards_left: int) -> DealState:
    """A random deal played at random until `cards_left` cards remain to be played, never
    ending it: a card that would end it (R-EARLYEND and R-KING end deals early) gives way to
    one that would not, and when every card would, the deal stops there. So every search
    below it is at most `cards_left` cards deep. (Stopping before the drawn card alone left
    R-KING positions with forty cards to play, whose brute force ran for minutes.)"""
    rng = random.Random(seed)
    deck = list(range(52))
    rng.shuffle(deck)
    hands = [sum(1 << c for c in deck[13 * i : 13 * i + 13]) for i in range(4)]
    deal = new_deal(rules, contract, rng.randrange(4), (hands[0], hands[1], hands[2], hands[3]))
    for _ in range(52 - cards_left):
        cards = list(cards_of(legal_mask(deal)))
        rng.shuffle(cards)
        going_on = next((a for a in map(partial(play, deal), cards) if not a.over), None)
        if going_on is None:
            break
        deal = going_on
    return deal


def paranoid(deal: DealState, root: int) -> int:
    """The root seat's final points when it maximises and the others minimise: every card."""
    if deal.over:
        return scores(deal)[root]
    values = [paranoid(play(deal, c), root) for c in cards_of(legal_mask(deal))]
    return max(values) if deal.to_move == root else min(values)


def maxn(deal: DealState, root: int) -> tuple[int, ...]:
    """Every seat maximises its own final points; ties against the root, then the lower card."""
    if deal.over:
        return scores(deal)
    best: tuple[int, ...] = ()
    mover = deal.to_move
    for c in cards_of(legal_mask(deal)):  # low to high: a later card wins only when better
        v = maxn(play(deal, c), root)
        if not best or (v[mover], -v[root]) > (best[mover], -best[root]):
            best = v
    return best


endings = st.builds(
    ending,
    rules=random_rules(king_tricks=[0, 11, 3, 5]),
    contract=st.sampled_from(ALL_CONTRACTS),
    seed=st.integers(0, 2**32 - 1),
    cards_left=st.integers(1, MAX_CARDS_LEFT),
)


def small_endings(contract: Contract) -> st.SearchStrategy[DealState]:
    return st.builds(
        ending,
        rules=random_rules(king_tricks=[0, 11, 3, 5]),
        contract=st.just(contract),
        seed=st.integers(0, 2**32 - 1),
        cards_left=st.integers(1, MAX_CARDS_LEFT),
    )


@pytest.mark.parametrize("contract", ALL_CONTRACTS, ids=lambda c: c.value)
def test_paranoid_values_equal_a_plain_minimax(contract: Contract) -> None:
    @SETTINGS
    @given(deal=small_endings(contract))
    def check(deal: DealState) -> None:
        root = deal.to_move
        expected = {c: paranoid(play(deal, c), root) for c in cards_of(legal_mask(deal))}
        assert card_values(deal) == expected

    check()


@pytest.mark.parametrize("contract", ALL_CONTRACTS, ids=lambda c: c.value)
def test_maxn_values_equal_a_plain_maxn(contract: Contract) -> None:
    @SETTINGS
    @given(deal=small_endings(contract))
    def check(deal: DealState) -> None:
        root = deal.to_move
        lines = {c: maxn(play(deal, c), root) for c in cards_of(legal_mask(deal))}
        found = solve(deal, model="maxn")
        assert found.values == {c: v[root] for c, v in lines.items()}
        # Every seat's points along the line of play, not only the root's.
        assert found.outcomes == lines

    check()


@SETTINGS
@given(deal=endings)
def test_equivalent_cards_have_equal_values_under_plain_minimax(deal: DealState) -> None:
    """The groups are checked against the brute force, not against the solver that uses them."""
    root = deal.to_move
    groups = card_groups(deal)
    assert sum(g.bit_count() for g in groups) == legal_mask(deal).bit_count()
    for g in groups:
        assert len({paranoid(play(deal, c), root) for c in cards_of(g)}) == 1


def bounds(deal: DealState, seat: int) -> tuple[int, int]:
    """The seat's final points lie within these, whatever is played (with the trick in play)."""
    now = scores(deal)[seat]
    info = CONTRACT_INFO[deal.contract]
    left = 13 - deal.tricks
    if deal.contract is Contract.LAST_TWO:
        return now + LAST_TWO_PENALTY * min(2, left), now
    if info.per_trick:
        swing = info.per_trick * left
        return (now, now + swing) if swing > 0 else (now + swing, now)
    out = info.penalty_cards & (sum(deal.hands) | deal.trick_bits)
    return now + info.per_card * out.bit_count(), now


@SETTINGS
@given(deal=endings)
def test_values_keep_their_bounds_and_paranoid_never_beats_maxn(deal: DealState) -> None:
    root = deal.to_move
    worst = card_values(deal)
    selfish = card_values(deal, model="maxn")
    low, high = bounds(deal, root)
    assert set(worst) == set(selfish) == set(cards_of(legal_mask(deal)))
    for c, v in worst.items():
        assert low <= v <= selfish[c] <= high


@SETTINGS
@given(deal=endings, budget=st.integers(0, 300))
def test_a_budget_gives_every_card_a_value_the_same_way_twice(deal: DealState, budget: int) -> None:
    first = card_values(deal, node_budget=budget)
    assert first == card_values(deal, node_budget=budget)
    assert set(first) == set(cards_of(legal_mask(deal)))
    assert card_values(deal, node_budget=10**7) == card_values(deal)


@SETTINGS
@given(deal=endings, budget=st.integers(0, 300))
def test_maxn_outcomes_under_a_budget_hold_the_values(deal: DealState, budget: int) -> None:
    """Whatever pass the budget reached (or none: the estimate after each card), each card's
    four-seat outcome carries its value at the root's place, the same way twice."""
    root = deal.to_move
    found = solve(deal, model="maxn", node_budget=budget)
    assert found == solve(deal, model="maxn", node_budget=budget)
    assert set(found.outcomes) == set(found.values) == set(cards_of(legal_mask(deal)))
    for c, line in found.outcomes.items():
        assert len(line) == 4 and line[root] == found.values[c]
    assert solve(deal, model="paranoid", node_budget=budget).outcomes == {}


@SETTINGS
@given(deal=endings)
def test_best_cards_are_the_top_values(deal: DealState) -> None:
    values = card_values(deal)
    best = best_cards(values)
    assert best and all(values[c] == max(values.values()) for c in best)
    assert all(values[c] < max(values.values()) for c in set(values) - set(best))


def test_an_over_deal_has_no_values_and_an_unknown_model_is_refused() -> None:
    deal = ending(Rules(), Contract.NO_TRICKS, 1, 4)
    while not deal.over:
        deal = play(deal, cards_of(legal_mask(deal))[0])
    assert card_values(deal) == {} and best_cards({}) == ()
    with pytest.raises(UnknownModel):
        card_values(ending(Rules(), Contract.RIFKI, 2, 11), model="minimax")
    with pytest.raises(ValueError, match="node_budget"):
        card_values(ending(Rules(), Contract.RIFKI, 2, 11), node_budget=-1)


def test_a_queen_and_a_jack_of_hearts_are_not_equivalent_in_no_queens() -> None:
    """JH and QH with nothing between: alike in no_hearts, not in no_queens."""
    jh, qh = 13 + 9, 13 + 10
    for contract, together in ((Contract.NO_HEARTS, True), (Contract.NO_QUEENS, False)):
        deal = ending(Rules(), contract, 7, 52)
        hands = list(deal.hands)
        seat = deal.to_move
        holder = next(s for s in range(4) if hands[s] >> qh & 1)
        if holder != seat:
            # Swap QH into the mover's hand for one of its cards of another suit.
            give = next(c for c in cards_of(hands[seat]) if c // 13 != 1 and c != jh)
            hands[holder] ^= (1 << qh) | (1 << give)
            hands[seat] ^= (1 << qh) | (1 << give)
        holder = next(s for s in range(4) if hands[s] >> jh & 1)
        if holder != seat:
            give = next(c for c in cards_of(hands[seat]) if c // 13 != 1 and c != qh)
            hands[holder] ^= (1 << jh) | (1 << give)
            hands[seat] ^= (1 << jh) | (1 << give)
        deal = deal._replace(hands=(hands[0], hands[1], hands[2], hands[3]), leader=seat)
        deal = deal._replace(played=1 << 13)  # hearts broken: a heart may be led
        groups = [g for g in card_groups(deal) if g >> qh & 1]
        assert bool(groups[0] >> jh & 1) is together


@pytest.mark.slow
@pytest.mark.compute
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=random_rules(king_tricks=[0, 11, 3, 5]),
    contract=st.sampled_from(ALL_CONTRACTS),
    seed=st.integers(0, 2**32 - 1),
)
def test_four_whole_tricks_left_match_the_plain_minimax(
    rules: Rules, contract: Contract, seed: int
) -> None:
    deal = ending(rules, contract, seed, 16)
    root = deal.to_move
    assert card_values(deal) == {
        c: paranoid(play(deal, c), root) for c in cards_of(legal_mask(deal))
    }
