"""The small shapes every answer and message shares: cards, seats, contracts, rule options."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

Card = Annotated[
    str, Meta(pattern="^[2-9TJQKA][SHDC]$", description="a card: rank 2-9/T/J/Q/K/A, suit S/H/D/C")
]
Seat = Annotated[int, Meta(ge=0, le=3, description="a seat, 0-3")]
SeatOrNone = Annotated[int, Meta(ge=0, le=3)] | None
Cards = list[Card]
Hands = Annotated[
    list[Cards], Meta(min_length=4, max_length=4, description="the four hands, by seat")
]
Four = Annotated[list[int], Meta(min_length=4, max_length=4, description="one number per seat")]
Seats = Annotated[list[Seat], Meta(max_length=4)]
Players = Annotated[
    list[str], Meta(min_length=4, max_length=4, description="who sits in each seat, by seat")
]
DealNo = Annotated[int, Meta(ge=1, le=20, description="the deal number, 1-based")]
Attempt = Annotated[int, Meta(ge=0, description="the shuffle attempt: 0, then 1 per redeal")]
Fraction = Annotated[
    str, Meta(pattern=r"^-?\d+(/\d+)?$", description="an exact fraction as text: 7, -30, 15/2")
]
# One game's ladder points (a view's, `game_ended`'s, `game_recorded`'s), one alias so that
# their form is said in one place: JSON numbers, exact (multiples of 1/4; see docs/API.md,
# "Values"), as the king-record/1 checker gives them.
GamePoints = Annotated[int | float, Meta(description="one game's ladder points, exact")]
Hex64 = Annotated[str, Meta(pattern="^[0-9a-f]{64}$")]

ContractName = Literal[
    "no_tricks",
    "no_hearts",
    "no_queens",
    "no_boys",
    "last_two",
    "rifki",
    "trump_S",
    "trump_H",
    "trump_D",
    "trump_C",
]
Phase = Literal["new", "awaiting_deal", "declaring", "playing", "over"]
Mode = Literal["standard20", "short12"]
FirstDeclarer = Literal["two_of_diamonds", "seat0"]
AkqLead = Literal["off", "declarer", "any"]
KingTricks = Annotated[int, Meta(ge=0, le=13)]


class Shape(Struct):
    """The base of every answer shape; a field that may be absent (UNSET) comes last."""


class RuleOptions(Shape):
    """Every rule option of docs/RULES.md with its value (a view's and `game_created`'s
    `rules`)."""

    mode: Mode
    first_declarer: FirstDeclarer
    must_beat_led_suit: bool
    must_overtrump: bool
    must_raise_trump_lead: bool
    trump_lead_needs_break: bool
    akq_lead: AkqLead
    king_tricks: KingTricks
    rifki_void_must_discard_heart: bool
    end_early: bool
    weak_hand_redeal: bool
    queens_one_each_void: bool


class RuleChanges(Shape):
    """Only the rule options that differ from the defaults (a record's, a table's and a
    tournament's `rules`); an option left out has its default."""

    mode: Mode | UnsetType = UNSET
    first_declarer: FirstDeclarer | UnsetType = UNSET
    must_beat_led_suit: bool | UnsetType = UNSET
    must_overtrump: bool | UnsetType = UNSET
    must_raise_trump_lead: bool | UnsetType = UNSET
    trump_lead_needs_break: bool | UnsetType = UNSET
    akq_lead: AkqLead | UnsetType = UNSET
    king_tricks: KingTricks | UnsetType = UNSET
    rifki_void_must_discard_heart: bool | UnsetType = UNSET
    end_early: bool | UnsetType = UNSET
    weak_hand_redeal: bool | UnsetType = UNSET
    queens_one_each_void: bool | UnsetType = UNSET


class PlayAction(Shape, tag_field="type", tag="play"):
    """Play a card."""

    card: Card


class DeclareAction(Shape, tag_field="type", tag="declare"):
    """Declare a contract (the deal's declarer)."""

    contract: ContractName


class RedealAction(Shape, tag_field="type", tag="redeal"):
    """Ask for new hands instead of declaring (R-WEAKHAND)."""


LegalAction = PlayAction | DeclareAction | RedealAction
