"""Reason codes for rejected actions (KING_RULES.md §10), each with its rule id."""

from __future__ import annotations

from typing import ClassVar, Final

from domain.values import Value

RULE_OF_CODE: dict[str, str] = {
    "not_your_turn": "R-SEATS",
    "card_not_in_hand": "R-TABLE",
    "must_follow_suit": "R-FOLLOW",
    "must_beat": "R-NOBEAT",
    "must_ruff": "R-RUFF",
    "must_overtrump": "R-OVERTRUMP",
    "must_raise_trump": "R-RAISE",
    "trump_not_broken": "R-TRUMPLEAD",
    "akq_sequence": "R-AKQ",
    "hearts_not_broken": "R-HEARTLEAD",
    "must_discard_penalty": "R-DISCARD",
    "must_drop_penalty": "R-DROP",
    "no_right_left": "R-ORDER",
    "contract_exhausted": "R-CAP",
    "redeal_not_allowed": "R-WEAKHAND",
    "game_over": "R-MODE",
    "deal_over": "R-EARLYEND",
    "wrong_phase": "R-LEAD1",
    "bad_contract": "R-TRUMP",
}


_VIOLATION_FIELDS: Final = ("code", "message")


class Violation(Value):
    """Why an action was refused: a reason code, its rule id and a sentence for people.

    The message speaks only of the acting seat's own cards and public facts, so it is safe to
    send to that seat.
    """

    __slots__ = _VIOLATION_FIELDS
    _FIELDS: ClassVar[tuple[str, ...]] = _VIOLATION_FIELDS

    def __init__(self, code: str, message: str) -> None:
        self.code: Final = code
        self.message: Final = message

    @property
    def rule(self) -> str:
        return RULE_OF_CODE[self.code]

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "rule": self.rule, "message": self.message}


class IllegalAction(Exception):
    """Raised by the strict API when an action breaks a rule; carries the Violation."""

    def __init__(self, violation: Violation) -> None:
        super().__init__(f"{violation.code} ({violation.rule}): {violation.message}")
        self.violation = violation
