"""Analysis of finished deals: what each card played cost, what the declarer might have chosen.

For every card of an ended deal the position before it is rebuilt with all four hands known
(they are public once the deal has ended), and an open-hand solver values each legal card for the
seat to move: that seat's deal points at the end of the deal under best play (the `paranoid`
model: the three others play to hold the mover's points down). The best cards are those of the
highest value; the **cost** of the card played is the best value minus its value, in deal points
(0 when it was among the best, never negative). A cost earns a label (`inaccuracy`, `mistake`,
`blunder`) by thresholds per contract (`THRESHOLDS`: a trick of a trump contract is 50 points, a
queen 100, the king of hearts 320, so one scale would not do). For each declaration the expert's
contract evaluation gives the contract it would have chosen and each legal contract's expected
deal points for the declarer, seen from the declarer's hand only (docs/ANALYSIS.md).

Pure: the solver and the contract evaluator are inputs (`CardSolver`, `ContractEvaluator`), the
events in give the same analysis out. Only deals that have ended are analysed: a deal in play is
skipped, whatever the caller asks, so an analysis never tells anything about a live hand.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from domain import solver
from domain.cards import card_name, cards_of
from domain.contracts import Contract
from domain.deal import DealState, legal_mask, new_deal, play
from domain.events import ContractDeclared, DealEnded, Event, RedealAsked
from domain.game import CompletedDeal, GameState, Phase, apply
from domain.view import Action, SeatView, seat_view

ANALYSIS_VERSION = 1
"""Bumped when what an analysis says for the same deal changes (cache keys carry it)."""

LABELS = ("inaccuracy", "mistake", "blunder")


class AnalysisError(ValueError):
    """A game or deal that cannot be analysed (not found among the ended deals)."""


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The least cost, in deal points, of an inaccuracy, a mistake and a blunder."""

    inaccuracy: float
    mistake: float
    blunder: float

    def label(self, cost: float) -> str | None:
        if cost >= self.blunder:
            return "blunder"
        if cost >= self.mistake:
            return "mistake"
        if cost >= self.inaccuracy:
            return "inaccuracy"
        return None


# By contract, in the contract's own unit (docs/ANALYSIS.md has the table and the reasons).
# Exact costs are whole units (a trick, a heart, a queen, ...); the fractions below a unit only
# catch the in-between costs a budgeted (estimated) value can have.
_TRICKS = Thresholds(50, 100, 150)  # 1, 2, 3 tricks (trump contracts, no_tricks)
THRESHOLDS: dict[Contract, Thresholds] = {
    Contract.NO_TRICKS: _TRICKS,
    Contract.NO_HEARTS: Thresholds(30, 60, 120),  # 1, 2, 4 hearts
    Contract.NO_QUEENS: Thresholds(50, 100, 200),  # half a queen (estimates), 1, 2 queens
    Contract.NO_BOYS: Thresholds(60, 120, 180),  # 1, 2, 3 boys
    Contract.LAST_TWO: Thresholds(90, 180, 360),  # half a last trick (estimates), one, both
    Contract.RIFKI: Thresholds(80, 160, 320),  # a quarter, a half (estimates), the king
    Contract.TRUMP_S: _TRICKS,
    Contract.TRUMP_H: _TRICKS,
    Contract.TRUMP_D: _TRICKS,
    Contract.TRUMP_C: _TRICKS,
}


def label_of(contract: Contract, cost: float) -> str | None:
    """The label a card's cost earns under this contract (None: no mark)."""
    return THRESHOLDS[contract].label(cost)


# --- the solver and the contract evaluator: inputs ----------------------------------------


@dataclass(frozen=True, slots=True)
class Solved:
    """A position's legal cards valued for the seat to move, and whether the values are exact
    (a solve within its node budget) or estimates (the budget ran out)."""

    values: Mapping[int, float]
    exact: bool


class CardSolver(Protocol):
    """Values the legal cards of the seat to move in a position with every hand known."""

    @property
    def model(self) -> str: ...

    @property
    def node_budget(self) -> int | None: ...

    def __call__(self, st: DealState) -> Solved: ...


@dataclass(frozen=True, slots=True)
class ContractValues:
    """The declarer's expected deal points of each legal declaration it values, and the
    declaration it would choose ("redeal" for a redeal; None: the one of highest value)."""

    values: Mapping[str, float]
    choice: str | None = None


class ContractEvaluator(Protocol):
    """Values each legal declaration of the declarer's view (`model` names how)."""

    @property
    def model(self) -> str: ...

    def __call__(self, view: SeatView) -> ContractValues: ...


# --- the analysis values ------------------------------------------------------------------


Number = int | float


def _number(x: float) -> Number:
    """A whole value as an int (exact solves are whole points), else the float."""
    return int(x) if float(x).is_integer() else float(x)


@dataclass(frozen=True, slots=True)
class CardMark:
    """One card played: the best card(s) in its position and what the card played cost."""

    trick: int  # 1-based
    seat: int
    card: int
    best: tuple[int, ...]
    cost: Number
    value: Number  # the seat's deal points under best play after this card
    best_value: Number
    label: str | None
    forced: bool  # the only legal card (not sent to the solver)
    exact: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "trick": self.trick,
            "seat": self.seat,
            "card": card_name(self.card),
            "best": [card_name(c) for c in self.best],
            "cost": self.cost,
            "label": self.label,
            "value": self.value,
            "best_value": self.best_value,
            "forced": self.forced,
            "exact": self.exact,
        }


@dataclass(frozen=True, slots=True)
class DeclarationMark:
    """The declaration of a deal against the expert's choice.

    The values are this deal's expected points for the declarer; the expert's choice also
    weighs the game (a right is spent whatever is declared, trump always scores above a
    penalty contract), so it is not always the contract of the highest value, and no cost is
    given: `agrees` says whether the declarer chose as the expert would have."""

    seat: int
    declared: str
    declared_value: Number | None  # None: the evaluator did not value what was declared
    expert: str
    expert_value: Number | None  # None: a choice it does not value (a redeal)
    agrees: bool
    values: dict[str, Number]
    model: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "declared": self.declared,
            "declared_value": self.declared_value,
            "expert": self.expert,
            "expert_value": self.expert_value,
            "agrees": self.agrees,
            "values": dict(self.values),
            "model": self.model,
        }


@dataclass(frozen=True, slots=True)
class DealAnalysis:
    deal: int
    attempt: int
    contract: Contract
    declarer: int
    cards: tuple[CardMark, ...]
    declaration: DeclarationMark | None
    exact: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "deal": self.deal,
            "attempt": self.attempt,
            "contract": self.contract.value,
            "declarer": self.declarer,
            "exact": self.exact,
            "cards": [c.to_dict() for c in self.cards],
            "declaration": self.declaration.to_dict() if self.declaration else None,
        }


@dataclass(frozen=True, slots=True)
class GameAnalysis:
    game_id: str
    model: str
    node_budget: int | None
    deals: tuple[DealAnalysis, ...]
    contract_model: str | None = None
    players: tuple[str, ...] = ()

    @property
    def exact(self) -> bool:
        return all(d.exact for d in self.deals)

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "version": ANALYSIS_VERSION,
            "players": list(self.players),
            "model": self.model,
            "node_budget": self.node_budget,
            "contract_model": self.contract_model,
            "exact": self.exact,
            "deals": [d.to_dict() for d in self.deals],
        }


# --- walking a game -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EndedDeal:
    """An ended deal as the analysis needs it: the deal, and the declarer's view when it was
    declared (None when the events start after it)."""

    done: CompletedDeal
    rules_state: GameState  # the game just before the declaration (its rules, rights, ...)
    declaring: SeatView | None
    version: int  # the game version of its deal_ended event


def ended_deals(events: Iterable[Event]) -> tuple[GameState, list[EndedDeal]]:
    """Fold a game's events; the final state and every ended deal, in order. A deal still in
    play is not among them."""
    state = GameState()
    before_declaration: GameState | None = None
    out: list[EndedDeal] = []
    for event in events:
        if isinstance(event, ContractDeclared | RedealAsked) and state.phase is Phase.DECLARING:
            before_declaration = state
        state = apply(state, event)
        if isinstance(event, DealEnded):
            done = state.completed[-1]
            assert isinstance(done, CompletedDeal)
            declaring = None
            base = before_declaration if before_declaration is not None else state
            if before_declaration is not None:
                declaring = seat_view(before_declaration, done.declarer)
            out.append(EndedDeal(done, base, declaring, state.version))
            before_declaration = None
    return state, out


def positions(rules_state: GameState, done: CompletedDeal) -> list[tuple[int, DealState, int]]:
    """Each card of an ended deal with the position before it: (trick, state, card)."""
    a, b, c, d = done.hands
    st = new_deal(rules_state.rules, done.contract, done.declarer, (a, b, c, d))
    out = []
    for n, trick in enumerate(done.tricks, start=1):
        for card in trick.cards:
            out.append((n, st, card))
            st = play(st, card)
    return out


def analyse_card(st: DealState, card: int, trick: int, solver: CardSolver) -> CardMark:
    """The mark of `card` played in position `st` (the card must be legal there)."""
    seat = st.to_move
    legal = legal_mask(st)
    if not legal >> card & 1:
        raise AnalysisError(f"{card_name(card)} is not legal for seat {seat} there")
    if legal.bit_count() == 1:
        return CardMark(trick, seat, card, (card,), 0, 0, 0, None, True, True)
    solved = solver(st)
    values = solved.values
    if set(values) != set(cards_of(legal)):
        raise AnalysisError("the solver did not value exactly the legal cards")
    top = max(values.values())
    best = tuple(c for c in cards_of(legal) if values[c] == top)
    cost = 0.0 if card in best else top - values[card]
    return CardMark(
        trick=trick,
        seat=seat,
        card=card,
        best=best,
        cost=_number(cost),
        value=_number(values[card]),
        best_value=_number(top),
        label=label_of(st.contract, cost),
        forced=False,
        exact=solved.exact,
    )


def analyse_declaration(
    declaring: SeatView, declared: Contract, evaluate: ContractEvaluator
) -> DeclarationMark:
    found = evaluate(declaring)
    values = {k: _number(v) for k, v in found.values.items()}
    if not values:
        raise AnalysisError("the contract evaluator valued no declaration")
    expert = found.choice or max(values, key=lambda k: (values[k], k == declared.value))
    return DeclarationMark(
        seat=declaring.seat,
        declared=declared.value,
        declared_value=values.get(declared.value),
        expert=expert,
        expert_value=values.get(expert),
        agrees=expert == declared.value,
        values=values,
        model=evaluate.model,
    )


def analyse_deal(
    ended: EndedDeal,
    solver: CardSolver,
    evaluate: ContractEvaluator | None = None,
    progress: Callable[[int], None] | None = None,
) -> DealAnalysis:
    """One ended deal: every card's mark and (with `evaluate`) the declaration's."""
    done = ended.done
    marks = []
    for trick, st, card in positions(ended.rules_state, done):
        marks.append(analyse_card(st, card, trick, solver))
        if progress is not None:
            progress(1)
    declaration = None
    if evaluate is not None and ended.declaring is not None:
        declaration = analyse_declaration(ended.declaring, done.contract, evaluate)
    return DealAnalysis(
        deal=done.deal,
        attempt=done.attempt,
        contract=done.contract,
        declarer=done.declarer,
        cards=tuple(marks),
        declaration=declaration,
        exact=all(m.exact for m in marks),
    )


def select(deals: Sequence[EndedDeal], deal: int | None) -> list[EndedDeal]:
    """The ended deals numbered `deal` (every attempt that ended), or all of them."""
    if deal is None:
        return list(deals)
    return [d for d in deals if d.done.deal == deal]


def analyse_game(
    events: Iterable[Event],
    solver: CardSolver,
    evaluate: ContractEvaluator | None = None,
    *,
    deal: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> GameAnalysis:
    """The analysis of a game's ended deals (only deal number `deal` if given). AnalysisError
    when that deal has not ended (or does not exist): a live deal is never analysed."""
    state, deals = ended_deals(events)
    chosen = select(deals, deal)
    if deal is not None and not chosen:
        raise AnalysisError(deal_not_ended(state, deal))
    return GameAnalysis(
        game_id=state.game_id,
        model=solver.model,
        node_budget=solver.node_budget,
        deals=tuple(analyse_deal(d, solver, evaluate, progress) for d in chosen),
        contract_model=evaluate.model if evaluate is not None else None,
        players=tuple(occ[-1] for occ in state.occupants) or state.players,
    )


def deal_not_ended(state: GameState, deal: int) -> str:
    """Why deal `deal` has no analysis (it is in play, to come, or beyond the game)."""
    if deal < 1 or deal > state.rules.deals:
        return f"the game has no deal {deal} (deals 1-{state.rules.deals})"
    live = state.phase in (Phase.DECLARING, Phase.PLAYING) and state.deal_no == deal
    if live:
        return f"deal {deal} is in play: it is analysed once it has ended"
    if state.phase is Phase.OVER:
        return f"deal {deal} was not played (the game ended before it)"
    return f"deal {deal} has not been played yet"


# --- the solvers and evaluators the project has ---------------------------------------------


EXACT_TRICKS = 5
"""Positions with at most this many tricks left (the one in progress included) are always
solved to the end, budget or not: a few hundredths of a second each (docs/ANALYSIS.md)."""


@dataclass(frozen=True, slots=True)
class SolverAdapter:
    """`CardSolver` over domain.solver's `solve(st, model=, node_budget=)`.

    Without a node budget every value is exact. With one, a position with more than
    EXACT_TRICKS tricks left is searched within the budget, and its values are exact only if
    the solver says so (its deepening reached the end of the deal within the budget).
    """

    solve: Callable[..., solver.Solution] = solver.solve
    model: str = "paranoid"
    node_budget: int | None = None

    def __call__(self, st: DealState) -> Solved:
        budget = None if 13 - st.tricks <= EXACT_TRICKS else self.node_budget
        found = self.solve(st, model=self.model, node_budget=budget)
        return Solved(found.values, found.exact)


def action_key(action: Action) -> str:
    """A declaration as the analysis names it: the contract id, or "redeal"."""
    if action.kind == "declare" and action.contract is not None:
        return action.contract.value
    return action.kind


@dataclass(frozen=True, slots=True)
class ActionValuesEvaluator:
    """`ContractEvaluator` over a function of a view to {Action: expected deal points}, and
    optionally one to the action chosen."""

    evaluate: Callable[[SeatView], Mapping[Action, float]]
    model: str
    choose: Callable[[SeatView], Action] | None = None

    def __call__(self, view: SeatView) -> ContractValues:
        values = {action_key(a): v for a, v in self.evaluate(view).items()}
        choice = action_key(self.choose(view)) if self.choose is not None else None
        return ContractValues(values, choice)


def default_solver(model: str = "paranoid", node_budget: int | None = None) -> SolverAdapter:
    """The project's open-hand solver (domain.solver); `node_budget` per position."""
    if model not in solver.MODELS:
        raise AnalysisError(f"unknown model {model!r} (one of {', '.join(solver.MODELS)})")
    return SolverAdapter(solver.solve, model, node_budget)


def _linear_values(view: SeatView) -> Mapping[Action, float]:
    from tournament.strategies.bidding import worth

    return {
        a: worth(view.hand, a.contract)
        for a in view.legal
        if a.kind == "declare" and a.contract is not None
    }


CONTRACT_SAMPLES = 32
"""Deals the expert samples for the unseen cards to value the declarations (a fixed number, not
a time budget, so the same declaration always gets the same values)."""


def _expert(samples: int) -> Any:
    from tournament.strategies.expert import ExpertStrategy

    # A fresh expert per question, seeded alike, with a fixed sample count: the answer depends
    # on the view only, not on which deals were analysed before or on the clock.
    return ExpertStrategy(0, rollouts=samples)


def _expert_values(view: SeatView, samples: int) -> Mapping[Action, float]:
    values: Mapping[Action, float] = _expert(samples).evaluate_contracts(view)
    return values


def _expert_choice(view: SeatView, samples: int) -> Action:
    choice: Action = _expert(samples).declare(view)
    return choice


def default_evaluator(samples: int = CONTRACT_SAMPLES) -> ActionValuesEvaluator:
    """The expert strategy's contract evaluation and choice (tournament.strategies.expert, a
    fixed seed and `samples` sampled deals); without that strategy, the heuristic's linear
    bidding model (`bidding-linear`: the declarer's points minus the others' mean,
    docs/ANALYSIS.md; its choice the contract of the highest value)."""
    try:
        importlib.import_module("tournament.strategies.expert")
    except ImportError:
        return ActionValuesEvaluator(_linear_values, "bidding-linear")
    return ActionValuesEvaluator(
        functools.partial(_expert_values, samples=samples),
        "expert",
        functools.partial(_expert_choice, samples=samples),
    )
