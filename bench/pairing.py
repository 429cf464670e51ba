"""`python -m bench pairing [--runs N] [--json]`: how long pairing takes.

* Swiss: one round of 1,000 and of 10,000 players with 5 rounds of history (the history and the
  standings are simulated first, untimed); the time covers everything `pair_swiss` does: the
  history counts, ranking, byes, tables and seats. Targets: 0.5 s and 5 s in CPython on one
  core. For scale: bbpPairings, a C++ pairer for two-player Swiss (FIDE Dutch), pairs 10,000
  players in about 0.6 s in its fast mode.
* Round-robin: the whole schedule for 16, 32 and 64 players (16 and 64 are affine designs,
  32 is searched by annealing).
Each figure is the median of `--runs` runs (default 5).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from domain.results import ladder_points, winners
from domain.rules import Rules
from tournament.model import GameResult, Round
from tournament.pairing.export import pairing_input
from tournament.pairing.history import history_of
from tournament.pairing.round_robin import round_robin
from tournament.pairing.swiss import SwissInput, pair_swiss
from tournament.standings import standings

SWISS_TARGETS = ((1_000, 0.5), (10_000, 5.0))
ROUND_ROBIN_SIZES = (16, 32, 64)
HISTORY_ROUNDS = 5
BBP_10K_SECONDS = 0.6


def _results(rnd: Round, rng: random.Random, rules: Rules) -> list[GameResult]:
    out = []
    for t in rnd.tables:
        a, b, c = (rng.randint(-600, 600) for _ in range(3))
        totals = (a, b, c, -(a + b + c) // 3)
        pts = ladder_points(rules, totals, None)
        out.append(
            GameResult(
                f"r{rnd.number}t{t.number}",
                rnd.number,
                t.seats,
                totals,
                winners(rules, totals, None),
                tuple((p, pts[s]) for s, p in enumerate(t.seats) if s not in t.house),
                house=t.house,
            )
        )
    return out


def swiss_input(n: int, seed: int = 1) -> SwissInput:
    """Round 6 of a simulated n-player Swiss (5 rounds played with random results)."""
    rng = random.Random(seed)
    rules = Rules()
    players = [f"player-{i:05d}" for i in range(n)]
    history: list[Round] = []
    results: list[GameResult] = []
    for r in range(1, HISTORY_ROUNDS + 2):
        table = standings(players, results, history, seed=str(seed))
        inp = pairing_input(r, str(seed), players, table, history)
        if r == HISTORY_ROUNDS + 1:
            return inp
        rnd = pair_swiss(inp)
        history.append(rnd)
        results.extend(_results(rnd, rng, rules))
    raise AssertionError("unreachable")


def median_seconds(fn: Callable[[], object], runs: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def repeats(inp: SwissInput, rnd: Round) -> int:
    h = history_of(inp.history)
    return sum(
        1
        for t in rnd.tables
        for i, a in enumerate(t.players)
        for b in t.players[i + 1 :]
        if h.met(a, b)
    )


def run(runs: int) -> dict[str, Any]:
    swiss = []
    for n, target in SWISS_TARGETS:
        print(f"simulating {HISTORY_ROUNDS} rounds of {n} players…", file=sys.stderr)
        inp = swiss_input(n)
        rnd = pair_swiss(inp)
        med, times = median_seconds(partial(pair_swiss, inp), runs)
        swiss.append(
            {
                "players": n,
                "history_rounds": HISTORY_ROUNDS,
                "median_s": med,
                "runs_s": times,
                "target_s": target,
                "met": med <= target,
                "repeat_pairs": repeats(inp, rnd),
            }
        )
    rr = []
    for n in ROUND_ROBIN_SIZES:
        players = [f"player-{i:02d}" for i in range(n)]
        s = round_robin(players, "bench")
        med, times = median_seconds(partial(round_robin, players, "bench"), runs)
        b = s.balance
        rr.append(
            {
                "players": n,
                "rounds": len(s.rounds),
                "method": s.method,
                "median_s": med,
                "runs_s": times,
                "min_meetings": b.min_meetings,
                "max_meetings": b.max_meetings,
                "never_met": b.never_met,
                "above_ideal": b.above_ideal,
                "ideal": b.ideal,
            }
        )
    return {
        "python": sys.version.split()[0],
        "runs": runs,
        "swiss": swiss,
        "round_robin": rr,
        "reference": {"bbpPairings_fast_10000_two_player_s": BBP_10K_SECONDS},
    }


def print_tables(data: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not console.is_terminal:
        console = Console(width=120)
    t = Table(title=f"Swiss pairing, one round after {HISTORY_ROUNDS} (median of {data['runs']})")
    for col in ("Players", "Median", "Target", "Verdict", "Repeat pairs", "Runs"):
        t.add_column(col, justify="right")
    for r in data["swiss"]:
        t.add_row(
            f"{r['players']:,}",
            f"{r['median_s']:.3f} s",
            f"{r['target_s']:.1f} s",
            "met" if r["met"] else "missed",
            str(r["repeat_pairs"]),
            " ".join(f"{x:.3f}" for x in r["runs_s"]),
        )
    console.print(t)
    console.print(
        f"  for scale: bbpPairings (C++, two-player FIDE Dutch, fast mode) pairs 10,000 "
        f"players in about {BBP_10K_SECONDS} s"
    )
    t = Table(title="Round-robin schedule construction")
    for col in ("Players", "Rounds", "Method", "Median", "Pair meetings", "Never met", "Ideal"):
        t.add_column(col, justify="left" if col == "Method" else "right")
    for r in data["round_robin"]:
        t.add_row(
            str(r["players"]),
            str(r["rounds"]),
            r["method"],
            f"{r['median_s'] * 1000:.1f} ms",
            f"{r['min_meetings']}–{r['max_meetings']}",
            str(r["never_met"]),
            "yes" if r["ideal"] else "no",
        )
    console.print(t)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench pairing", description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per figure (median)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    data = run(max(1, args.runs))
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print_tables(data)
    return 0
