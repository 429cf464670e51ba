"""The analysis of finished deals (tournament.analysis): every card's best cards and cost, the
labels by the documented thresholds, the declaration against the expert's choice, the JSON
shape, and never a deal in play."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as hs

from domain.cards import parse_card
from domain.contracts import ALL_CONTRACTS, Contract
from domain.deal import legal_mask
from domain.events import CardPlayed, DealEnded
from domain.game import CompletedDeal, Phase, replay
from domain.solver import best_cards, card_values
from tests.tournament.analysis_helpers import (
    FixedEvaluator,
    RolloutSolver,
    game_until,
    played_game,
)
from tournament.analysis import (
    EXACT_TRICKS,
    LABELS,
    THRESHOLDS,
    AnalysisError,
    analyse_card,
    analyse_game,
    default_evaluator,
    default_solver,
    ended_deals,
    label_of,
    positions,
)


@pytest.fixture(scope="module")
def short_game() -> list:  # type: ignore[type-arg]
    return played_game("short12")


def test_every_card_of_every_ended_deal_is_marked(short_game: list) -> None:  # type: ignore[type-arg]
    state = replay(short_game)
    analysis = analyse_game(short_game, RolloutSolver(), FixedEvaluator())
    done = [d for d in state.completed if isinstance(d, CompletedDeal)]
    assert [(d.deal, d.attempt) for d in analysis.deals] == [(d.deal, d.attempt) for d in done]
    plays = [e for e in short_game if isinstance(e, CardPlayed)]
    marks = [m for d in analysis.deals for m in d.cards]
    assert [(m.seat, m.card) for m in marks] == [(e.seat, e.card) for e in plays]
    for d, dealt in zip(analysis.deals, done, strict=True):
        assert d.contract is dealt.contract
        assert d.declarer == dealt.declarer
        assert [m.trick for m in d.cards] == [1 + i // 4 for i in range(len(d.cards))]


def test_costs_are_never_negative_and_zero_exactly_for_a_best_card(short_game: list) -> None:  # type: ignore[type-arg]
    analysis = analyse_game(short_game, RolloutSolver())
    for d in analysis.deals:
        for m in d.cards:
            assert m.cost >= 0
            assert (m.cost == 0) == (m.card in m.best)
            assert m.cost == m.best_value - m.value
            assert m.label == label_of(d.contract, m.cost)
            if m.forced:
                assert m.best == (m.card,) and m.cost == 0


def test_the_best_cards_are_legal_cards_of_the_position(short_game: list) -> None:  # type: ignore[type-arg]
    _, deals = ended_deals(short_game)
    analysis = analyse_game(short_game, RolloutSolver())
    for ended, d in zip(deals, analysis.deals, strict=True):
        for (_, st, card), m in zip(positions(ended.rules_state, ended.done), d.cards, strict=True):
            assert m.card == card
            assert all(legal_mask(st) >> c & 1 for c in m.best)
            assert m.forced == (legal_mask(st).bit_count() == 1)


def test_a_forced_card_is_not_sent_to_the_solver(short_game: list) -> None:  # type: ignore[type-arg]
    solver = RolloutSolver()
    analysis = analyse_game(short_game, solver)
    unforced = sum(1 for d in analysis.deals for m in d.cards if not m.forced)
    assert solver.calls == unforced


def test_the_json_shape(short_game: list) -> None:  # type: ignore[type-arg]
    out = analyse_game(short_game, RolloutSolver(), FixedEvaluator()).to_dict()
    assert out["game_id"] == "g-analysis"
    assert {"game_id", "deals"} <= set(out)
    for d in out["deals"]:
        assert {"deal", "contract", "cards"} <= set(d)
        assert d["contract"] in {c.value for c in ALL_CONTRACTS}
        for c in d["cards"]:
            assert {"trick", "seat", "card", "best", "cost"} <= set(c)
            parse_card(c["card"])
            assert all(isinstance(b, str) and parse_card(b) >= 0 for b in c["best"])
            assert c["label"] in (None, *LABELS)
        decl = d["declaration"]
        assert decl["declared"] == d["contract"]
        assert decl["expert"] in decl["values"]
        assert decl["expert_value"] == max(decl["values"].values())  # FixedEvaluator's choice
        assert decl["agrees"] == (decl["expert"] == decl["declared"])


def test_one_deal_only(short_game: list) -> None:  # type: ignore[type-arg]
    out = analyse_game(short_game, RolloutSolver(), deal=3).to_dict()
    assert [d["deal"] for d in out["deals"]] == [3]


def test_a_deal_in_play_is_never_analysed() -> None:
    state, events = game_until(deal=2, cards=5)
    assert state.phase is Phase.PLAYING and state.deal_no == 2
    analysis = analyse_game(events, RolloutSolver())
    assert [d.deal for d in analysis.deals] == [1]
    with pytest.raises(AnalysisError, match="in play"):
        analyse_game(events, RolloutSolver(), deal=2)
    with pytest.raises(AnalysisError, match="not been played"):
        analyse_game(events, RolloutSolver(), deal=3)
    with pytest.raises(AnalysisError, match="no deal 13"):
        analyse_game(events, RolloutSolver(), deal=13)


def test_the_real_expert_values_the_declarations(short_game: list) -> None:  # type: ignore[type-arg]
    evaluate = default_evaluator()
    assert evaluate.model == "expert"
    first = analyse_game(short_game, RolloutSolver(), evaluate, deal=2).deals[0].declaration
    again = analyse_game(short_game, RolloutSolver(), default_evaluator(), deal=2)
    assert first is not None and first == again.deals[0].declaration  # reproducible
    assert first.declared in first.values and first.model == "expert"
    assert first.expert == "redeal" or first.expert_value == first.values[first.expert]
    assert first.agrees == (first.expert == first.declared)


def test_the_declaration_against_the_expert() -> None:
    events = played_game("short12")
    analysis = analyse_game(events, RolloutSolver(), FixedEvaluator())
    for d in analysis.deals:
        assert d.declaration is not None
        decl = d.declaration
        assert decl.seat == d.declarer
        assert decl.model == "fixed"
        assert decl.expert_value == max(decl.values.values())  # no choice given: the best
        assert decl.agrees == (decl.declared == decl.expert)
        assert decl.declared_value == decl.values[decl.declared]


@pytest.mark.parametrize("contract", ALL_CONTRACTS)
def test_thresholds_grow_and_whole_units_are_marked(contract: Contract) -> None:
    t = THRESHOLDS[contract]
    assert 0 < t.inaccuracy < t.mistake < t.blunder
    assert label_of(contract, 0) is None
    unit = {
        Contract.NO_HEARTS: 30,
        Contract.NO_QUEENS: 100,
        Contract.NO_BOYS: 60,
        Contract.LAST_TWO: 180,
        Contract.RIFKI: 320,
    }.get(contract, 50)
    assert label_of(contract, unit) is not None  # an exact cost is at least one unit: marked
    assert label_of(contract, 13 * unit) == "blunder"


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=hs.binary(min_size=32, max_size=32), mode=hs.sampled_from(["short12", "standard20"]))
def test_invariants_over_random_games(seed: bytes, mode: str) -> None:
    events = played_game(mode, seed, "random")
    analysis = analyse_game(events, RolloutSolver())
    ended = [e for e in events if isinstance(e, DealEnded)]
    assert len(analysis.deals) == len(ended)
    for d in analysis.deals:
        for m in d.cards:
            assert m.cost >= 0 and (m.cost == 0) == (m.card in m.best)
            assert m.value <= m.best_value


# --- with the real open-hand solver (domain.solver) -----------------------------------------


def test_the_real_solver_on_a_played_deal(short_game: list) -> None:  # type: ignore[type-arg]
    solver = default_solver(node_budget=200)
    analysis = analyse_game(short_game, solver, deal=1)
    (d,) = analysis.deals
    assert analysis.model == "paranoid" and analysis.node_budget == 200
    for m in d.cards:
        assert m.cost >= 0 and (m.cost == 0) == (m.card in m.best)
        if m.forced or m.trick > 13 - EXACT_TRICKS:
            assert m.exact  # the last tricks are always solved to the end
        assert m.label == label_of(d.contract, m.cost)
    assert not d.exact  # 200 nodes do not reach the end from the first tricks


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=hs.binary(min_size=32, max_size=32),
    deal=hs.integers(1, 12),
    late=hs.integers(0, 11),
)
def test_late_positions_agree_with_the_solver(seed: bytes, deal: int, late: int) -> None:
    """In the last three tricks (always exact): the best cards are the solver's best_cards and
    the cost is the best value minus the card's value, whatever the budget."""
    events = played_game("short12", seed, "random")
    _, deals = ended_deals(events)
    ended = deals[min(deal, len(deals)) - 1]
    ps = [p for p in positions(ended.rules_state, ended.done) if 13 - p[1].tricks <= 3]
    assume(ps)  # a deal that ended early (R-EARLYEND) may have no such position
    trick, position, card = ps[late % len(ps)]
    mark = analyse_card(position, card, trick, default_solver(node_budget=10))
    values = card_values(position)
    if mark.forced:
        assert len(values) == 1 and mark.cost == 0
        return
    assert mark.exact
    assert mark.best == best_cards(values)
    assert mark.cost == max(values.values()) - values[card] >= 0
