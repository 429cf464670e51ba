"""The replay page carries the analysis panel (off by default) and its script, in both
languages; analysis.js is served."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from services.web.i18n import WORDS
from tests.web.conftest import new_game


def test_the_replay_page_has_the_analysis_toggle(client: TestClient[Any], ada: str) -> None:
    new_game(client, ada, ["ada", "house:random", "house:random", "house:random"], "a-1")
    for lang, word in (("tr", "Analizi göster"), ("en", "Show the analysis")):
        r = client.get(f"/games/a-1?lang={lang}")
        assert r.status_code == 200
        assert word in r.text
        assert (
            'id="analysis-toggle"' in r.text
            and "checked" not in r.text.split('id="analysis-toggle"')[1].split(">")[0]
        )
        assert '<script src="/static/analysis.js"></script>' in r.text
    r = client.get("/static/analysis.js")
    assert r.status_code == 200 and "javascript" in r.headers["content-type"]
    # every word the script uses is in both languages
    used = {w for w in WORDS if w.startswith("analysis")}
    assert {"analysis_inaccuracy", "analysis_mistake", "analysis_blunder"} <= used
    assert all(WORDS[w][0] and WORDS[w][1] for w in used)
