"""The rule ids that the rule book (KING_RULES.md §10) gives its reason codes, copied by hand.

The reason-code tests and the `king record check` tests compare what the engine answers with
this copy, not with the engine's own table (domain.violations), so a changed rule id fails.
"""

from __future__ import annotations

# The codes and rule ids as the rule book (§10) gives them.
BOOK_RULE = {
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
    "contract_exhausted": "R-CAP",
    "redeal_not_allowed": "R-WEAKHAND",
}
