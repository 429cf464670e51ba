"""Rule options: the switches of the rule book, fixed in a game's first event."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

Mode = Literal["standard20", "short12"]
FirstDeclarer = Literal["two_of_diamonds", "seat0"]
AkqLead = Literal["off", "declarer", "any"]


class BadRuleOption(ValueError):
    """An unknown rule option or a value of the wrong kind."""


@dataclass(frozen=True, slots=True)
class Rules:
    """The rule options of KING_RULES.md; the defaults are the rules the project plays."""

    mode: Mode = "standard20"
    first_declarer: FirstDeclarer = "two_of_diamonds"
    must_beat_led_suit: bool = False
    must_overtrump: bool = True
    must_raise_trump_lead: bool = True
    trump_lead_needs_break: bool = True
    akq_lead: AkqLead = "off"
    king_tricks: int = 11
    rifki_void_must_discard_heart: bool = False
    end_early: bool = True
    weak_hand_redeal: bool = True
    queens_one_each_void: bool = False

    @property
    def deals(self) -> int:
        return 20 if self.mode == "standard20" else 12

    @property
    def trump_rights(self) -> int:
        return 2 if self.mode == "standard20" else 1

    @property
    def penalty_rights(self) -> int:
        return 3 if self.mode == "standard20" else 2

    @classmethod
    def from_dict(cls, data: object) -> Rules:
        """Rules from a JSON-like dict; a missing option takes its default."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise BadRuleOption("rules must be an object of rule options")
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key not in known:
                raise BadRuleOption(f"unknown rule option {key!r}")
            allowed = _CHOICES.get(key)
            if allowed is not None:
                if not isinstance(value, str) or value not in allowed:
                    raise BadRuleOption(f"rule option {key!r} must be one of {sorted(allowed)}")
            elif key == "king_tricks":
                if type(value) is not int or not 0 <= value <= 13:
                    raise BadRuleOption("rule option 'king_tricks' must be an integer 0-13")
            elif type(value) is not bool:
                raise BadRuleOption(f"rule option {key!r} must be true or false")
            values[key] = value
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        # Every option is a plain scalar: no need for asdict's deep copy (it showed in the
        # service's profile, where each seat view carries the rules).
        return {name: getattr(self, name) for name in _OPTION_NAMES}

    def changes(self) -> dict[str, Any]:
        """Only the options that differ from the defaults (what a record needs to carry)."""
        default = Rules()
        return {k: v for k, v in self.to_dict().items() if getattr(default, k) != v}


_CHOICES: dict[str, frozenset[str]] = {
    "mode": frozenset({"standard20", "short12"}),
    "first_declarer": frozenset({"two_of_diamonds", "seat0"}),
    "akq_lead": frozenset({"off", "declarer", "any"}),
}


_OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Rules))
