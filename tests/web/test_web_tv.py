"""The TV's choice of table (services.web.tv): a King in reach first, then the closest
standings, then the latest deal. The public view is stood in for, to set up the cases."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from domain.contracts import Contract
from domain.game import Phase
from services.web import tv


def _table(game_id: str, totals: list[int], won: list[int], contract: Contract, deal: int) -> Any:
    view = SimpleNamespace(
        totals=totals,
        deal_scores=[0, 0, 0, 0],
        contract=contract,
        tricks_won=won,
        players=["a", "b", "c", "d"],
        deal_no=deal,
    )
    rules = SimpleNamespace(king_tricks=11, deals=12)
    return SimpleNamespace(game_id=game_id, phase=Phase.PLAYING, rules=rules, view=view)


@pytest.fixture(autouse=True)
def _views(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tv, "public_view", lambda state: state.view)


def test_a_king_in_reach_comes_first_then_the_closest_totals() -> None:
    trump = next(c for c in Contract if c.is_trump)
    penalty = next(c for c in Contract if not c.is_trump)
    states = {
        # a trump deal, seat 1 with 8 of 11 tricks and 4 tricks left: a King is in reach
        "king": _table("king", [500, -100, 0, 0], [1, 8, 0, 0], trump, 3),
        "close": _table("close", [200, 190, 0, 0], [2, 2, 1, 1], penalty, 2),
        "far": _table("far", [900, -300, 0, 0], [2, 2, 1, 1], penalty, 9),
        # 7 tricks but only 2 left: 11 is out of reach
        "gone": _table("gone", [900, -300, 0, 0], [7, 4, 0, 0], trump, 9),
        "over": SimpleNamespace(game_id="over", phase=Phase.OVER),
        "missing": None,
    }
    ranked = tv.ranked(states)  # type: ignore[arg-type]
    assert [t["game_id"] for t in ranked] == ["king", "close", "gone", "far"]
    assert ranked[0]["king"] == {"player": "b", "tricks": 8, "needs": 11}
    assert ranked[1]["gap"] == 10 and ranked[1]["king"] is None
    assert ranked[2]["king"] is None  # 7 + 2 left < 11


def test_no_king_when_the_rule_is_off_or_in_a_penalty_deal() -> None:
    trump = next(c for c in Contract if c.is_trump)
    off = _table("off", [0, 0, 0, 0], [0, 9, 0, 0], trump, 4)
    off.rules.king_tricks = 0
    assert tv.interest(off)["king"] is None  # type: ignore[index]
    penalty = next(c for c in Contract if not c.is_trump)
    assert tv.interest(_table("p", [0, 0, 0, 0], [0, 9, 0, 0], penalty, 4))["king"] is None  # type: ignore[index]
