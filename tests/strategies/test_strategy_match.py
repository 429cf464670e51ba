"""The match runner: seatings, confidence-interval arithmetic, determinism, and `king match`."""

from __future__ import annotations

import json
import math

import pytest

from domain.rules import Rules
from services.cli import main
from tournament.match import (
    SetResult,
    Timing,
    estimate,
    run_match,
    seat_patterns,
    sets_for,
    summarize,
    t_quantile,
)


def test_seat_patterns_put_every_strategy_in_every_seat() -> None:
    assert seat_patterns(2) == [(0, 1, 0, 1), (1, 0, 1, 0)]
    assert seat_patterns(1) == [(0, 0, 0, 0)]
    for n in (2, 3, 4):
        patterns = seat_patterns(n)
        for seat in range(4):
            assert {p[seat] for p in patterns} == set(range(n))
    assert sets_for(200, 2) == 100 and sets_for(5, 4) == 2 and sets_for(1, 2) == 1


@pytest.mark.parametrize(
    ("df", "t"), [(1, 12.7062), (2, 4.3027), (5, 2.5706), (10, 2.2281), (30, 2.0423)]
)
def test_t_quantiles(df: int, t: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(t, abs=2e-3)


def test_estimate_on_known_samples() -> None:
    e = estimate([1.0, 2.0, 3.0, 4.0, 5.0])
    # mean 3, sd sqrt(2.5), t(0.975, 4) = 2.7764
    assert e.mean == 3.0
    assert e.half_width == pytest.approx(2.7764 * math.sqrt(2.5) / math.sqrt(5), abs=2e-3)
    assert (e.low, e.high) == (e.mean - e.half_width, e.mean + e.half_width)
    assert math.isinf(estimate([4.0]).half_width)


def test_summary_uses_duplicate_set_means_as_samples() -> None:
    sets = [
        SetResult(0, (3.0, -1.0), (Timing(2, 4.0, 3.0, 2.0, 1.5), Timing())),
        SetResult(1, (1.0, 1.0), (Timing(1, 1.0, 1.0, 1.0, 1.0), Timing())),
        SetResult(2, (5.0, -3.0), (Timing(), Timing())),
    ]
    r = summarize(["a", "b"], 9, Rules(), sets)
    assert r.games == 6 and r.sets == 3
    assert r.results[0].points.mean == 3.0
    assert r.results[0].seat_games == 12  # two seats a game, two games a set
    assert r.results[0].timing == Timing(3, 5.0, 3.0, 3.0, 1.5)
    d = r.differences[0]
    assert d.mean == pytest.approx(4.0)  # diffs 4, 0, 8
    assert d.half_width == pytest.approx(t_quantile(0.975, 2) * 4.0 / math.sqrt(3))


def test_run_match_is_deterministic() -> None:
    a = run_match(["random", "heuristic"], 2, 3, Rules(mode="short12"))
    b = run_match(["random", "heuristic"], 2, 3, Rules(mode="short12"))
    assert a.set_results[0].means == b.set_results[0].means
    assert a.games == 2 and len(a.results) == 2


def test_king_match_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["match", "random", "heuristic", "--games", "2", "--seed", "4", "--mode", "short12"]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 2 and out["duplicate_sets"] == 1
    assert [r["strategy"] for r in out["results"]] == ["random", "heuristic"]
    assert out["differences"][0]["a"] == "random"


def test_king_match_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "random", "heuristic", "--games", "2", "--mode", "short12"]) == 0
    out = capsys.readouterr().out
    assert "Ladder pts/game" in out and "heuristic" in out and "random − heuristic" in out


def test_king_match_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "random", "nope", "--games", "2"]) == 2
    assert "unknown strategy" in capsys.readouterr().err
    assert main(["match", "random", "--rule", "bogus=1", "--games", "2"]) == 2
    assert main(["match", "a", "b", "c", "d", "e"]) == 2
