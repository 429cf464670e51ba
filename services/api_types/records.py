"""A game's king-record/1 document (domain.record.to_record; docs/RECORD.md), the answer of
GET /api/v1/games/{id}/record."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, UnsetType

from services.api_types.common import (
    Card,
    ContractName,
    Hands,
    Hex64,
    Players,
    RuleChanges,
    Seat,
    Shape,
)


class RecordShuffle(Shape):
    """How the hands were dealt: present once the seed is revealed (the game is over)."""

    algorithm: Literal["king-shuffle/1"]
    server_seed: Annotated[Hex64, Meta(description="the revealed server seed, 32 bytes hex")]
    game_id: Annotated[str, Meta(description="the game id text fed to king-shuffle/1")]
    client_seed: str


class RecordDeal(Shape):
    """One ended deal: its hands, declarer, contract and every card in play order; or a
    redeal (`redeal: true`, no contract, no plays)."""

    hands: Hands
    declarer: Seat
    redeal: Annotated[Literal[True], Meta(description="only on a redeal entry")] | UnsetType = UNSET
    contract: ContractName | UnsetType = UNSET
    plays: Annotated[list[Card], Meta(max_length=52, description="in play order")] | (
        UnsetType
    ) = UNSET

    def __post_init__(self) -> None:
        if self.redeal is True and (self.contract is not UNSET or self.plays is not UNSET):
            raise ValueError("a redeal entry has no contract and no plays")
        if self.redeal is UNSET and (self.contract is UNSET or self.plays is UNSET):
            raise ValueError("a deal entry has a contract and plays (or redeal: true)")


class KingRecord(Shape):
    """king-record/1 of what is public now: the ended deals with their hands; the shuffle
    (with the seed) once the game is over."""

    format: Literal["king-record/1"]
    rules: Annotated[RuleChanges, Meta(description="the options that differ from the defaults")]
    players: Players
    deals: list[RecordDeal]
    shuffle: RecordShuffle | UnsetType = UNSET


__all__ = ["KingRecord", "RecordDeal", "RecordShuffle"]
