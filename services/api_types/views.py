"""A game as the public or one seat sees it (domain.view.SeatView.to_dict): the `view` of
GET /api/v1/games/{id}, GET /api/v1/games/{id}/seats/{seat}, POST /api/v1/games/{id}/actions
and of a seat's `your_turn` message."""

from __future__ import annotations

from typing import Annotated

from msgspec import UNSET, Meta, UnsetType

from services.api_types.common import (
    Attempt,
    Card,
    Cards,
    ContractName,
    DealNo,
    Four,
    GamePoints,
    Hands,
    LegalAction,
    Phase,
    Players,
    RuleOptions,
    Seat,
    SeatOrNone,
    Seats,
    Shape,
)


class Trick(Shape):
    """A trick: the cards in play order from its leader; the one in progress has no winner."""

    leader: Annotated[Seat, Meta(description="the seat that led")]
    cards: Annotated[list[Card], Meta(max_length=4, description="in play order from the leader")]
    winner: Annotated[SeatOrNone, Meta(description="who took it; null while in progress")]


class PenaltyUses(Shape):
    """How often each penalty contract has been played in this game."""

    no_tricks: int
    no_hearts: int
    no_queens: int
    no_boys: int
    last_two: int
    rifki: int


class Rights(Shape):
    """The declaring rights each seat has left."""

    trump: Annotated[Four, Meta(description="trump contracts left, by seat")]
    penalty: Annotated[Four, Meta(description="penalty contracts left, by seat")]
    contract_uses: Annotated[PenaltyUses, Meta(description="times each penalty was played")]


class EndedDeal(Shape):
    """An ended deal (`redeal` false) or hands given back by a redeal (`redeal` true: then
    only deal, attempt, declarer and hands)."""

    deal: DealNo
    attempt: Attempt
    declarer: Seat
    redeal: Annotated[bool, Meta(description="true: the declarer asked for new hands")]
    hands: Annotated[Hands, Meta(description="the four hands as dealt")]
    contract: ContractName | UnsetType = UNSET
    scores: Annotated[Four, Meta(description="the deal's points, by seat")] | UnsetType = UNSET
    tricks_won: Annotated[Four, Meta(description="tricks taken, by seat")] | UnsetType = UNSET
    void: Annotated[bool, Meta(description="queens_one_each_void: the deal does not count")] | (
        UnsetType
    ) = UNSET
    king: Annotated[SeatOrNone, Meta(description="the seat that made King (R-KING)")] | (
        UnsetType
    ) = UNSET
    tricks: list[Trick] | UnsetType = UNSET

    def __post_init__(self) -> None:
        played = (self.contract, self.scores, self.tricks_won, self.void, self.king, self.tricks)
        if self.redeal and any(v is not UNSET for v in played):
            raise ValueError("a redeal entry has only deal, attempt, declarer and hands")
        if not self.redeal and any(v is UNSET for v in played):
            raise ValueError(
                "an ended deal has contract, scores, tricks_won, void, king and tricks"
            )


class _View(Shape):
    """What the public and every seat see alike."""

    game_id: str
    players: Annotated[Players, Meta(description="the current occupant of each seat")]
    rules: RuleOptions
    phase: Phase
    deal: Annotated[
        int,
        Meta(
            ge=0,
            le=20,
            description="the deal in play or about to be dealt (0 before the first); the last "
            "deal played once the game is over",
        ),
    ]
    attempt: Attempt
    declarer: Annotated[SeatOrNone, Meta(description="who declares this deal")]
    contract: Annotated[ContractName | None, Meta(description="this deal's contract")]
    tricks: Annotated[list[Trick], Meta(description="this deal's tricks, the last maybe open")]
    tricks_won: Annotated[Four, Meta(description="this deal's tricks taken, by seat")]
    deal_scores: Annotated[Four, Meta(description="this deal's points so far, by seat")]
    totals: Annotated[Four, Meta(description="the game's points so far, by seat")]
    rights: Rights
    history: Annotated[list[EndedDeal], Meta(description="every ended deal and redeal")]
    to_move: Annotated[SeatOrNone, Meta(description="whose decision it is")]
    strikes: Annotated[Four, Meta(description="strikes, by seat")]
    winners: Annotated[Seats | None, Meta(description="the winning seats once over")]
    ladder_points: Annotated[
        list[GamePoints] | None, Meta(description="ladder points by seat once over")
    ]
    king: Annotated[SeatOrNone, Meta(description="the seat that made King (R-KING)")]
    commitment: Annotated[str, Meta(description="SHA-256 of the server seed, hex")]
    seed: Annotated[str | None, Meta(description="the server seed, once the game is over")]


class PublicView(_View):
    """The public's view: no hand, no legal actions."""

    seat: Annotated[None, Meta(description="null: the public")]
    hand: Annotated[None, Meta(description="null: the public sees no hand")]
    legal: Annotated[list[LegalAction], Meta(max_length=0, description="always empty")]


class SeatView(_View):
    """A seat's view: its own hand and, on its turn, its legal actions."""

    seat: Seat
    hand: Annotated[Cards, Meta(description="the seat's cards (empty between deals)")]
    legal: Annotated[list[LegalAction], Meta(description="what the seat may do now")]


__all__ = ["EndedDeal", "PenaltyUses", "PublicView", "Rights", "SeatView", "Trick"]
