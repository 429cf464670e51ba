"""`python -m bench strength [--games N] [--json]`: how much each strategy beats the one below.

Three matches, duplicate deals with seats rotated (tournament.match), mean ladder points per
game with 95% confidence intervals over the duplicate sets:
  * heuristic vs random   (target: heuristic ahead by at least 4 ladder points per game),
  * strong vs heuristic   (target: strong ahead by at least 1.5, within 250 ms per decision),
  * expert vs strong      (target: expert ahead by at least 2, within 250 ms per decision).
A target counts as met only when the whole confidence interval clears it (the table says so
when only the estimate does) and, for strong and expert, when no decision took more than 250 ms
of CPU time (its core's time, whatever else the machine ran; the wall-clock maximum and the
p99s are shown too). `--budget-ms` and `--rollouts` apply to every searching strategy alike.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Any

from domain.rules import Rules
from tournament.match import MatchResult, run_match

BUDGET_LIMIT_MS = 250.0
# (A, B, A's lead target in ladder points per game, A's CPU time limit per decision or None)
TARGETS: tuple[tuple[str, str, float, float | None], ...] = (
    ("heuristic", "random", 4.0, None),
    ("strong", "heuristic", 1.5, BUDGET_LIMIT_MS),
    ("expert", "strong", 2.0, BUDGET_LIMIT_MS),
)


def verdict(
    diff_low: float,
    diff_mean: float,
    target: float,
    max_cpu_ms: float = 0.0,
    limit_ms: float | None = None,
) -> str:
    if limit_ms is not None and max_cpu_ms > limit_ms:
        return f"too slow: {max_cpu_ms:.0f} ms CPU > {limit_ms:.0f}"
    if diff_low >= target:
        return "met"
    if diff_mean >= target:
        return "estimate met, CI not"
    return f"missed by {target - diff_mean:.2f}"


def row(
    result: MatchResult, target: float, seconds: float, limit_ms: float | None = None
) -> dict[str, Any]:
    a, b = result.results
    d = result.differences[0]
    half = d.half_width if math.isfinite(d.half_width) else math.inf
    return {
        "a": a.name,
        "b": b.name,
        "games": result.games,
        "duplicate_sets": result.sets,
        "a_points": a.points.mean,
        "a_ci95": a.points.half_width,
        "b_points": b.points.mean,
        "b_ci95": b.points.half_width,
        "difference": d.mean,
        "difference_ci95": half,
        "target": target,
        "limit_ms": limit_ms,
        "verdict": verdict(d.mean - half, d.mean, target, a.timing.max_cpu_ms, limit_ms),
        "a_ms_per_decision": a.timing.mean_ms,
        "a_max_ms": a.timing.max_ms,
        "a_cpu_ms_per_decision": a.timing.mean_cpu_ms,
        "a_max_cpu_ms": a.timing.max_cpu_ms,
        "a_p99_ms": a.timing.p99_ms,
        "a_p99_cpu_ms": a.timing.p99_cpu_ms,
        "seconds": seconds,
    }


def print_table(rows: list[dict[str, Any]], rules: Rules) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Strategy strength · {rules.mode} · duplicate deals, seats rotated")
    for col in ("Match", "Games", "A pts/game", "B pts/game", "A − B", "Target", "Verdict"):
        table.add_column(col, justify="left" if col in ("Match", "Verdict") else "right")
    table.add_column("A ms/decision (p99, max)", justify="right")
    table.add_column("A CPU ms (p99, max)", justify="right")
    for r in rows:
        table.add_row(
            f"{r['a']} vs {r['b']}",
            str(r["games"]),
            f"{r['a_points']:+.2f} ± {r['a_ci95']:.2f}",
            f"{r['b_points']:+.2f} ± {r['b_ci95']:.2f}",
            f"{r['difference']:+.2f} ± {r['difference_ci95']:.2f}",
            f"≥ {r['target']:.1f}"
            + (f", ≤ {r['limit_ms']:.0f} ms" if r["limit_ms"] is not None else ""),
            r["verdict"],
            f"{r['a_ms_per_decision']:.1f} ({r['a_p99_ms']:.0f}, {r['a_max_ms']:.0f})",
            f"{r['a_cpu_ms_per_decision']:.1f} ({r['a_p99_cpu_ms']:.0f}, {r['a_max_cpu_ms']:.0f})",
        )
    console = Console()
    if not console.is_terminal:
        console = Console(width=150)  # a file or pipe: keep the table on one line per row
    console.print(table)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench strength", description=__doc__)
    parser.add_argument("--games", type=int, default=200, help="games per match (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mode", choices=("standard20", "short12"), default="standard20")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--budget-ms", type=float, default=None, help="the searchers' time budget")
    parser.add_argument("--rollouts", type=int, default=None, help="the searchers' fixed samples")
    parser.add_argument("--only", choices=[a for a, *_ in TARGETS], default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rules = Rules(mode=args.mode)
    rows = []
    for a, b, target, limit_ms in TARGETS:
        if args.only and args.only != a:
            continue
        start = time.perf_counter()
        result = run_match(
            [a, b],
            args.games,
            args.seed,
            rules,
            workers=args.workers,
            budget_ms=args.budget_ms,
            rollouts=args.rollouts,
        )
        rows.append(row(result, target, time.perf_counter() - start, limit_ms))
        if not args.json:
            print(f"{a} vs {b}: done in {rows[-1]['seconds']:.0f} s", file=sys.stderr)
    if args.json:
        print(json.dumps({"mode": args.mode, "seed": args.seed, "matches": rows}, indent=2))
    else:
        print_table(rows, rules)
    return 0
