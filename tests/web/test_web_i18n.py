"""Both languages complete: every word the templates and the page scripts ask for exists in
Turkish and English, none is empty, and the two differ where a word is not a name."""

from __future__ import annotations

import re
from pathlib import Path

from services.web.i18n import WORDS, words

WEB = Path(__file__).resolve().parents[2] / "services" / "web"
# The same in both languages on purpose: names, symbols and words Turkish shares with English.
SAME = {"site", "tv", "of", "seed"}


def _template_keys() -> set[str]:
    keys: set[str] = set()
    for path in (WEB / "templates").glob("*.html"):
        text = path.read_text()
        keys.update(re.findall(r"\bt\.([a-z_0-9]+)", text))
        keys.update(re.findall(r"\bt\['([a-z_0-9]+)'\]", text))
    return keys


def _script_keys() -> set[str]:
    keys: set[str] = set()
    for path in (WEB / "static").glob("*.js"):
        keys.update(re.findall(r"\bT\.([a-z_0-9]+)", path.read_text()))
    return keys


def test_every_word_has_both_languages() -> None:
    for key, pair in WORDS.items():
        assert len(pair) == 2, key
        tr, en = pair
        assert tr.strip() and en.strip(), f"{key!r} is empty in a language"
        if key not in SAME:
            assert tr != en, f"{key!r} is not translated: {tr!r}"
    assert words("tr").keys() == words("en").keys() == WORDS.keys()


def test_every_word_the_pages_use_exists() -> None:
    used = _template_keys() | _script_keys()
    assert used, "no words found: the patterns no longer match the templates"
    missing = sorted(k for k in used if k not in WORDS)
    assert missing == [], missing


def test_the_words_built_from_values_exist() -> None:
    """`t['status_' ~ s]`, `t['format_' ~ f]` and the scripts' `T["status_" + s]`."""
    for status in ("created", "live", "over", "failed"):
        assert f"status_{status}" in WORDS
    for fmt in ("swiss", "round_robin"):
        assert f"format_{fmt}" in WORDS
