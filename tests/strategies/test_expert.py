"""The expert strategy: registered, legal and reproducible with a fixed sample count; its
inference weights and its contract evaluation."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategy_helpers import PLAYERS, rules_st, seat_view, steps

from domain.contracts import CONTRACT_INFO, Contract
from domain.deal import legal_mask
from domain.game import GameState, Phase
from domain.playout import play_game
from domain.rules import Rules
from domain.solver import Solution
from domain.view import Action, SeatView
from tournament.match import Timing
from tournament.strategies import make_strategy, strategy_names
from tournament.strategies.cardplay import rollout_card
from tournament.strategies.expert import (
    EXACT_NODES,
    MISS,
    NODE_SECONDS,
    ExpertStrategy,
    _still_in_the_race,
    play_likelihood,
    solved_ladder,
)
from tournament.strategies.knowledge import knowledge_of
from tournament.strategies.objective import GameContext
from tournament.strategies.sampling import sample_hands
from tournament.strategies.strong import _Clock


def test_expert_is_registered_with_its_options() -> None:
    assert "expert" in strategy_names()
    bot = make_strategy("expert:rollouts=3,infer=0,exact_tricks=2", 1)
    assert isinstance(bot, ExpertStrategy)
    assert (bot.samples, bot.infer, bot.exact_tricks, bot.model) == (3, False, 2, "maxn")
    assert make_strategy("expert:maxn=0", 1).model == "paranoid"  # type: ignore[attr-defined]


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_st, seed=st.binary(min_size=8, max_size=8))
def test_expert_plays_legal_actions_under_any_rules(rules: Rules, seed: bytes) -> None:
    policies = [make_strategy("expert:rollouts=1" if s % 2 else "heuristic", s) for s in range(4)]
    state, _ = play_game(
        "expert", PLAYERS, seed, policies, Rules(**{**rules.to_dict(), "mode": "short12"})
    )
    assert state.phase is Phase.OVER


def test_expert_with_fixed_samples_repeats_its_game() -> None:
    def events() -> list[object]:
        policies = [make_strategy("expert:rollouts=1", 40 + s) for s in range(4)]
        return list(play_game("repro", PLAYERS, b"expert", policies, Rules(mode="short12"))[1])

    assert events() == events()


def _by_rollout_policy(holder: list[GameState]) -> object:
    """A policy that plays the rollout policy's card on the true deal (first legal declaration)."""

    def policy(view: SeatView) -> Action:
        deal = holder[0].deal
        if view.phase is not Phase.PLAYING or deal is None:
            return view.legal[0]
        card = rollout_card(deal, legal_mask(deal))
        return next(a for a in view.legal if a.card == card)

    return policy


def _late_plays(seed: bytes, tricks: int) -> Iterator[tuple[GameState, int]]:
    """The card plays of a short12 game all four seats play by the rollout policy, from the
    `tricks`-th trick of each deal on: (the state, the seat to play)."""
    holder: list[GameState] = [GameState()]
    policy = _by_rollout_policy(holder)
    for state, seat in steps(seed, Rules(mode="short12"), [policy] * 4):  # type: ignore[list-item]
        holder[0] = state
        deal = state.deal
        if state.phase is Phase.PLAYING and deal is not None and deal.tricks >= tricks:
            yield state, seat


def test_the_true_deal_explains_rollout_policy_play_fully_and_samples_at_most() -> None:
    """Where every seat played the rollout policy, the real hands get weight 1, any sample no
    more, and some sample less (the inference tells deals apart)."""
    seen = 0
    rng_bot = ExpertStrategy(3, rollouts=1)
    for state, seat in _late_plays(b"infer-seed", 5):
        deal = state.deal
        assert deal is not None
        view = seat_view(state, seat)
        k = knowledge_of(view)
        assert play_likelihood(k, view, deal.hands) == 1.0
        weights = [
            play_likelihood(
                k, view, sample_hands(seat, view.hand, k.out, k.possible, k.counts, rng_bot.rng)
            )
            for _ in range(20)
        ]
        assert all(0.0 < w <= 1.0 for w in weights)
        assert min(weights) <= MISS
        seen += 1
        if seen == 3:
            break
    assert seen == 3


def test_evaluate_contracts_gives_each_declaration_deal_points_in_range() -> None:
    holder: list[GameState] = [GameState()]
    policy = _by_rollout_policy(holder)
    for state, seat in steps(b"declare-seed", Rules(mode="short12"), [policy] * 4):  # type: ignore[list-item]
        if state.phase is Phase.DECLARING:
            view = seat_view(state, seat)
            if any(a.kind == "redeal" for a in view.legal):
                continue
            values = ExpertStrategy(5, rollouts=4).evaluate_contracts(view)
            assert values == ExpertStrategy(5, rollouts=4).evaluate_contracts(view)
            assert set(values) == {a for a in view.legal if a.contract is not None}
            for action, v in values.items():
                assert action.contract is not None
                total = CONTRACT_INFO[action.contract].deal_total
                assert min(0, total) <= v <= max(0, total)
            return
        holder[0] = state
    raise AssertionError("no declaration seen")


def test_a_solve_under_a_time_budget_gets_only_the_positions_the_time_left_pays_for() -> None:
    """What once carried a decision to 303 ms: a solve started late in the budget, as large
    as one started early. The node budget now shrinks with the time left, to 0 at the end
    (then each card is valued by a rollout, as strong values it)."""
    bot = ExpertStrategy(1, budget_ms=200)
    clock = _Clock()
    assert min(EXACT_NODES, int(0.19 / NODE_SECONDS)) <= bot._affordable_nodes(clock) <= EXACT_NODES
    clock.start -= 0.19  # 10 ms left
    assert 0 < bot._affordable_nodes(clock) <= int(0.011 / NODE_SECONDS)
    clock.start -= 0.02  # over the budget
    assert bot._affordable_nodes(clock) == 0


def test_expert_plays_the_last_tricks_legally_with_no_time_to_solve() -> None:
    """A budget too small for one solved position still gives a legal card each time."""
    seen = 0
    for state, seat in _late_plays(b"late-seed", 10):
        view = seat_view(state, seat)
        assert ExpertStrategy(2, budget_ms=0.001)(view) in view.legal
        for maxn in (0, 1):
            assert ExpertStrategy(2, rollouts=2, maxn=maxn)(view) in view.legal
        seen += 1
        if seen == 8:
            return
    raise AssertionError(f"only {seen} late decisions seen")


def test_match_timing_percentiles_come_from_merged_histograms() -> None:
    a = Timing(2, 3.0, 2.5, 3.0, 2.5, (0, 1, 1), (0, 1, 1))  # one decision in 1 ms, one in 2
    b = Timing(98, 98.0, 0.5, 98.0, 0.5, (98,), (98,))
    both = a + b
    assert both.wall_hist == (98, 1, 1) and both.decisions == 100
    assert both.p99_ms == 2.0  # the 99th of 100 decisions lies in the 1 ms bucket: under 2 ms
    assert a.p99_ms == 3.0 and Timing().p99_ms == 0.0


def test_racing_drops_only_cards_clearly_behind_the_leader() -> None:
    lead = [1.0, 2.0, 3.0, 4.0] * 4
    alive = [0, 1, 2, 3]
    values = [
        lead,
        [v - 1.0 for v in lead],  # always one point behind: dropped
        list(lead),  # the same every time: kept (a tie)
        [v + (0.5 if i % 2 else -0.5) for i, v in enumerate(lead)],  # level on average: kept
    ]
    totals = [sum(v) for v in values]
    assert _still_in_the_race(alive, values, totals) == [0, 2, 3]


@given(
    rows=st.integers(2, 5).flatmap(
        lambda k: st.lists(
            st.lists(st.floats(-20, 20, allow_nan=False), min_size=k, max_size=k),
            min_size=8,
            max_size=30,
        )
    ),
    weights=st.lists(st.floats(0.1, 1.0), min_size=30, max_size=30),
)
def test_racing_keeps_the_leader_and_only_cards_it_had(
    rows: list[list[float]], weights: list[float]
) -> None:
    k = len(rows[0])
    values = [[row[i] for row in rows] for i in range(k)]
    totals = [sum(w * v for w, v in zip(weights, vs, strict=False)) for vs in values]
    alive = list(range(k))
    kept = _still_in_the_race(alive, values, totals)
    assert kept == sorted(set(kept)) and set(kept) <= set(alive)
    assert max(alive, key=lambda i: totals[i]) in kept


def test_a_solved_line_is_scored_by_who_takes_the_points() -> None:
    """Two cards that cost the seat nothing, one handing 100 penalty points to a rival just
    above zero, the other to a player far below it: in the last deal, with seat 0 winning,
    the first leaves fewer winners to share the prize with, so maxⁿ's four-seat lines must
    rank it higher. Paranoid knows only the seat's own points: the two tie."""
    ctx = GameContext(Rules(), totals=(50.0, 30.0, -400.0, 300.0), deals_left=0)
    total = CONTRACT_INFO[Contract.NO_QUEENS].deal_total
    lines = {10: (0.0, -100.0, 0.0, total + 100.0), 11: (0.0, 0.0, -100.0, total + 100.0)}
    maxn = Solution({10: 0, 11: 0}, True, 1, lines)
    assert solved_ladder(ctx, 0, total, maxn, 10) > solved_ladder(ctx, 0, total, maxn, 11)
    paranoid = Solution({10: 0, 11: 0}, True, 1, {})
    assert solved_ladder(ctx, 0, total, paranoid, 10) == solved_ladder(ctx, 0, total, paranoid, 11)
