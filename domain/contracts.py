"""The ten contracts: four trump suits and six penalty contracts, with their scoring."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from domain.cards import BOYS, KING_OF_HEARTS, QUEENS, SUIT_MASKS


class Contract(StrEnum):
    """Contract ids as in the rule book and every format."""

    NO_TRICKS = "no_tricks"
    NO_HEARTS = "no_hearts"
    NO_QUEENS = "no_queens"
    NO_BOYS = "no_boys"
    LAST_TWO = "last_two"
    RIFKI = "rifki"
    TRUMP_S = "trump_S"
    TRUMP_H = "trump_H"
    TRUMP_D = "trump_D"
    TRUMP_C = "trump_C"

    @property
    def is_trump(self) -> bool:
        return self.value.startswith("trump_")

    @property
    def trump_suit(self) -> int:
        """The trump suit index (0-3), or -1 for a penalty contract."""
        return "SHDC".index(self.value[-1]) if self.is_trump else -1

    @property
    def info(self) -> ContractInfo:
        return CONTRACT_INFO[self]


PENALTY_CONTRACTS: tuple[Contract, ...] = (
    Contract.NO_TRICKS,
    Contract.NO_HEARTS,
    Contract.NO_QUEENS,
    Contract.NO_BOYS,
    Contract.LAST_TWO,
    Contract.RIFKI,
)
TRUMP_CONTRACTS: tuple[Contract, ...] = (
    Contract.TRUMP_S,
    Contract.TRUMP_H,
    Contract.TRUMP_D,
    Contract.TRUMP_C,
)
ALL_CONTRACTS: tuple[Contract, ...] = PENALTY_CONTRACTS + TRUMP_CONTRACTS


@dataclass(frozen=True, slots=True)
class ContractInfo:
    """How a contract scores and what it is called.

    penalty_cards: the cards that cost points when taken (card-based penalty contracts), else 0.
    per_card / per_trick: points per penalty card or per trick taken (negative for penalties).
    deal_total: what the four scores of a finished deal add up to.
    """

    turkish: str
    english: str
    penalty_cards: int
    per_card: int
    per_trick: int
    deal_total: int


CONTRACT_INFO: dict[Contract, ContractInfo] = {
    Contract.NO_TRICKS: ContractInfo("El Almaz", "no tricks", 0, 0, -50, -650),
    Contract.NO_HEARTS: ContractInfo("Kupa Almaz", "no hearts", SUIT_MASKS[1], -30, 0, -390),
    Contract.NO_QUEENS: ContractInfo("Kız Almaz", "no queens", QUEENS, -100, 0, -400),
    Contract.NO_BOYS: ContractInfo("Erkek Almaz", "no boys", BOYS, -60, 0, -480),
    Contract.LAST_TWO: ContractInfo("Son İki", "last two", 0, 0, 0, -360),
    Contract.RIFKI: ContractInfo("Rıfkı", "king of hearts", KING_OF_HEARTS, -320, 0, -320),
    Contract.TRUMP_S: ContractInfo("Koz Maça", "trump spades", 0, 0, 50, 650),
    Contract.TRUMP_H: ContractInfo("Koz Kupa", "trump hearts", 0, 0, 50, 650),
    Contract.TRUMP_D: ContractInfo("Koz Karo", "trump diamonds", 0, 0, 50, 650),
    Contract.TRUMP_C: ContractInfo("Koz Sinek", "trump clubs", 0, 0, 50, 650),
}

LAST_TWO_PENALTY = -180


class UnknownContract(ValueError):
    """A contract id that is not one of the ten."""


def parse_contract(value: object) -> Contract:
    try:
        return Contract(value) if isinstance(value, str) else Contract("")
    except ValueError:
        names = ", ".join(c.value for c in ALL_CONTRACTS)
        raise UnknownContract(f"unknown contract {value!r} (one of {names})") from None


def display_name(contract: Contract) -> str:
    """The Turkish name with the English one beside it, as players know them."""
    info = CONTRACT_INFO[contract]
    return f"{info.turkish} ({info.english})"
