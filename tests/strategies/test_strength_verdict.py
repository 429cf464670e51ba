"""The strength bench's verdict: a lead counts when its whole interval clears the target, and
the searchers' only within their time limit per decision."""

from __future__ import annotations

from bench.strength import BUDGET_LIMIT_MS, TARGETS, verdict


def test_the_interval_must_clear_the_target() -> None:
    assert verdict(4.1, 5.0, 4.0) == "met"
    assert verdict(3.0, 5.0, 4.0) == "estimate met, CI not"
    assert verdict(1.0, 2.0, 4.0) == "missed by 2.00"


def test_a_slow_decision_fails_the_target_whatever_the_lead() -> None:
    assert verdict(4.1, 5.0, 1.5, max_cpu_ms=BUDGET_LIMIT_MS, limit_ms=BUDGET_LIMIT_MS) == "met"
    slow = verdict(4.1, 5.0, 1.5, max_cpu_ms=BUDGET_LIMIT_MS + 1, limit_ms=BUDGET_LIMIT_MS)
    assert slow.startswith("too slow")
    # Only the searchers' matches carry the limit.
    assert {a: limit for a, _, _, limit in TARGETS} == {
        "heuristic": None,
        "strong": BUDGET_LIMIT_MS,
        "expert": BUDGET_LIMIT_MS,
    }
