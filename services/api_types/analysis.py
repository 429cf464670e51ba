"""A game's analysis (tournament.analysis.GameAnalysis.to_dict), the answer of
GET /api/v1/games/{id}/analysis and GET /api/v1/games/{id}/deals/{deal}/analysis."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from services.api_types.common import Card, ContractName, DealNo, Players, Seat, Shape

Points = Annotated[int | float, Meta(description="deal points (an int when exact)")]
Cost = Annotated[int, Meta(ge=0)] | Annotated[float, Meta(ge=0)]
Label = Literal["inaccuracy", "mistake", "blunder"]


class CardAnalysis(Shape):
    """One card played: the best card(s) of its position and what the card cost."""

    trick: Annotated[int, Meta(ge=1, le=13, description="the trick, 1-based")]
    seat: Seat
    card: Card
    best: Annotated[list[Card], Meta(min_length=1, description="the cards of highest value")]
    cost: Annotated[
        Cost,
        Meta(description="best value minus the card's value (>= 0); 0 when it was among the best"),
    ]
    label: Annotated[
        Label | None, Meta(description="by the contract's thresholds (docs/ANALYSIS.md)")
    ]
    value: Annotated[Points, Meta(description="the seat's deal points after this card")]
    best_value: Annotated[Points, Meta(description="the seat's deal points after a best card")]
    forced: Annotated[bool, Meta(description="the only legal card (not solved)")]
    exact: Annotated[bool, Meta(description="solved to the deal's end, not within a budget")]


class DeclarationAnalysis(Shape):
    """The deal's declaration against the contract the expert would have chosen."""

    seat: Seat
    declared: ContractName
    declared_value: Annotated[
        Points | None, Meta(description="its expected deal points (null: not valued)")
    ]
    expert: Annotated[str, Meta(description="the expert's choice: a contract id or `redeal`")]
    expert_value: Annotated[
        Points | None, Meta(description="its expected deal points (null for a redeal)")
    ]
    agrees: Annotated[bool, Meta(description="the declarer chose as the expert would have")]
    values: Annotated[
        dict[str, Points], Meta(description="each legal contract's expected deal points")
    ]
    model: Annotated[str, Meta(description="what valued and chose: `expert`")]


class DealAnalysis(Shape):
    """One ended deal: every card played, and the declaration."""

    deal: DealNo
    attempt: Annotated[int, Meta(ge=0)]
    contract: ContractName
    declarer: Seat
    exact: Annotated[bool, Meta(description="every card's values exact")]
    cards: list[CardAnalysis]
    declaration: DeclarationAnalysis | None


class GameAnalysis(Shape):
    """The analysis of a game's ended deals (a deal in play is never analysed)."""

    game_id: str
    version: Annotated[int, Meta(description="the analysis's version (docs/ANALYSIS.md)")]
    players: Players
    model: Annotated[str, Meta(description="the solver's model: `paranoid`")]
    node_budget: Annotated[
        int | None, Meta(description="the solver's nodes per position (null: none)")
    ]
    contract_model: Annotated[str | None, Meta(description="what valued the declarations")]
    exact: Annotated[bool, Meta(description="every value exact")]
    deals: list[DealAnalysis]


class AnalysisPending(Shape):
    """202: the deals asked for are being analysed; ask again after `Retry-After` seconds."""

    game_id: str
    status: Literal["computing"]
    done: Annotated[int, Meta(ge=0, description="deals ready")]
    total: Annotated[int, Meta(ge=1, description="deals asked for")]


__all__ = ["AnalysisPending", "CardAnalysis", "DealAnalysis", "DeclarationAnalysis", "GameAnalysis"]
