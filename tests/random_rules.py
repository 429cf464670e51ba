"""Random rule options for the property tests of the rules engine and of the strategies."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from domain.rules import Rules


def random_rules(king_tricks: Sequence[int]) -> st.SearchStrategy[Rules]:
    """`Rules` with every option drawn at random; R-KING's trick count from `king_tricks`."""
    return st.builds(
        Rules,
        mode=st.sampled_from(["standard20", "short12"]),
        first_declarer=st.sampled_from(["two_of_diamonds", "seat0"]),
        must_beat_led_suit=st.booleans(),
        must_overtrump=st.booleans(),
        must_raise_trump_lead=st.booleans(),
        trump_lead_needs_break=st.booleans(),
        akq_lead=st.sampled_from(["off", "declarer", "any"]),
        king_tricks=st.sampled_from(list(king_tricks)),
        rifki_void_must_discard_heart=st.booleans(),
        end_early=st.booleans(),
        weak_hand_redeal=st.booleans(),
        queens_one_each_void=st.booleans(),
    )
