"""Properties of name normalisation (services.accounts.names): whatever it accepts is a valid
player id and a fixed point; forms that differ only by case or Unicode compatibility (full-
width letters) are one name; a Latin look-alike from another script is never accepted."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.accounts.errors import BadName
from services.accounts.names import display_name, normalise_name
from services.identity import PLAYER_ID

ASCII_NAMES = st.from_regex(r"\A[a-zA-Z0-9][a-zA-Z0-9_-]{1,39}\Z")
# Cyrillic and Greek letters Unicode lists as confusable with Latin ones.
LOOK_ALIKES = "аеорсухіјѕԁАВЕКМНОРСТХУΑΒΕΖΗΙΚΜΝΟΡΤΥΧο"


def full_width(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@given(st.text(max_size=60))
def test_whatever_is_accepted_is_a_player_id_and_a_fixed_point(raw: str) -> None:
    try:
        name = normalise_name(raw)
    except BadName:
        return
    assert PLAYER_ID.match(name)
    assert normalise_name(name) == name


@given(ASCII_NAMES)
def test_case_and_full_width_forms_are_one_name(raw: str) -> None:
    try:
        name = normalise_name(raw)
    except BadName:  # a reserved name
        return
    assert normalise_name(raw.upper()) == name
    assert normalise_name(full_width(raw)) == name


@given(ASCII_NAMES, st.sampled_from(LOOK_ALIKES), st.integers(min_value=0, max_value=39))
def test_a_look_alike_letter_is_refused(raw: str, alike: str, at: int) -> None:
    at = min(at, len(raw) - 1)
    forged = raw[:at] + alike + raw[at + 1 :]
    with pytest.raises(BadName):
        normalise_name(forged)


@given(st.text(alphabet=string.ascii_letters + " ", min_size=1, max_size=50))
def test_latin_display_names_pass_unchanged_but_trimmed(raw: str) -> None:
    if raw.strip():
        assert display_name(raw, "x") == raw.strip()


def test_mixed_script_display_names_are_refused() -> None:
    with pytest.raises(BadName):
        display_name("Pаypal", "x")  # a Cyrillic а among Latin letters
    assert display_name("Ayşe Çelik", "x") == "Ayşe Çelik"  # Turkish letters are Latin
    assert display_name("Дмитрий", "x") == "Дмитрий"  # one script alone is no look-alike
