"""User and bot names: normalised (NFKC, then case-folded) so that `Ada`, `ada` and `Ａｄａ` are
one name, and refused when they hold letters of another script that look like Latin ones (a
Cyrillic `а` for `a`), found with confusable-homoglyphs (Unicode's confusables data)."""

from __future__ import annotations

import importlib
import unicodedata
from types import ModuleType

from services.accounts.errors import BadName
from services.identity import PLAYER_ID, RESERVED_PLAYER_IDS

MAX_RAW_NAME = 200  # characters read at all; longer input is refused unread
MAX_DISPLAY_NAME = 100


def _confusables() -> ModuleType:
    """Unicode's confusables data, loaded when a name first needs it: reading it takes about a
    tenth of a second, which every process start paid at import (servers, each `king` command)
    while most never see a name that is not plain ASCII."""
    return importlib.import_module("confusable_homoglyphs.confusables")


def normalise_name(raw: str) -> str:
    """The player id a name stands for: NFKC, case-folded, trimmed; 2–40 of a–z, 0–9, `_`, `-`
    starting with a letter or digit. Raises BadName with the reason."""
    if len(raw) > MAX_RAW_NAME:
        raise BadName("a name has at most 40 characters")
    name = unicodedata.normalize("NFKC", raw).casefold().strip()
    if not name.isascii():
        look = _confusables().is_confusable(name, greedy=False, preferred_aliases=["latin"])
        if look:
            char = look[0]["character"]
            alias = look[0]["alias"].lower()
            raise BadName(
                f"the name holds {unicodedata.name(char, 'a character').lower()} ({alias}), "
                "which looks like a Latin letter: use the letters a-z"
            )
        raise BadName("a name uses only the letters a-z, digits, '_' and '-'")
    if not PLAYER_ID.match(name):
        raise BadName(
            "a name has 2 to 40 of the letters a-z, digits, '_' and '-', "
            "and starts with a letter or a digit"
        )
    if name in RESERVED_PLAYER_IDS or name.startswith("house"):
        raise BadName(f"the name {name!r} is reserved")
    return name


def display_name(raw: str | None, fallback: str) -> str:
    """The name shown on pages: NFKC, trimmed, printable, and not mixing a script with Latin
    look-alikes (`Pаypal` with a Cyrillic `а`); the normalised name when none is given."""
    if raw is None or not raw.strip():
        return fallback
    if len(raw) > MAX_RAW_NAME:
        raise BadName(f"a display name has at most {MAX_DISPLAY_NAME} characters")
    name = unicodedata.normalize("NFKC", raw).strip()
    if len(name) > MAX_DISPLAY_NAME:
        raise BadName(f"a display name has at most {MAX_DISPLAY_NAME} characters")
    if any(unicodedata.category(c)[0] == "C" for c in name):
        raise BadName("a display name holds no control or invisible characters")
    # Plain ASCII is Latin letters and common signs only: no script to mix, nothing to look up.
    if not name.isascii() and _confusables().is_dangerous(name):
        raise BadName("the display name mixes scripts whose letters look alike")
    return name
