"""`python -m bench audit`: `king audit --all` in games per second, on one core and with workers.

Builds a SQLite database of N finished games first (random legal play, seeds revealed, each
game appended to the event store in one go), outside the timer. Then audits every game
(the hash chain, the seed against its commitment, every hand against the seed, every event
re-run through the core) with `--workers 1` and with each `--workers N` asked for, round after
round, and reports the medians. The peer is the target: 100 standard20 games a second on one
core (issue 19); the run with workers is reported beside the one-core run (its speed-up).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

PLAYERS = ("ada", "bora", "cem", "deniz")
TARGET = 100.0  # standard20 games a second on one core


def build_games(url: str, n: int, mode: str = "standard20", seed: int = 1) -> list[str]:
    """Store n finished games of random legal play at `url` (created if need be); their ids."""
    from domain.playout import play_game
    from domain.rules import Rules
    from eventstore import NO_STREAM, EventStore
    from tournament.games import stream_id, to_new_event

    rng = random.Random(seed)
    policies = [lambda view: rng.choice(view.legal)] * 4
    rules = Rules(mode=mode)  # type: ignore[arg-type]
    ids = [f"bench-{seed}-{i}" for i in range(n)]
    with EventStore.open(url, create=True) as store:
        for game_id in ids:
            _, events = play_game(game_id, PLAYERS, rng.randbytes(32), policies, rules=rules)
            store.append(
                stream_id(game_id),
                [to_new_event(e) for e in events],
                NO_STREAM,
                stream_type="game",
            )
    return ids


def audit_rate(url: str, ids: list[str], workers: int) -> tuple[float, float, int]:
    """One `king audit --all` over these games: games per wall-clock second, games per second
    of this process's CPU (the one-core rate, less sensitive to a busy machine; with workers
    it counts only the parent), and how many failed."""
    from services.commands.audit import audit_many

    start, cpu = time.perf_counter(), time.process_time()
    results = audit_many(url, ids, workers)
    elapsed, spent = time.perf_counter() - start, time.process_time() - cpu
    return len(ids) / elapsed, len(ids) / spent, sum(1 for r in results if not r["ok"])


def measure(games: int, rounds: int, workers: list[int], mode: str, db: Path) -> dict[str, Any]:
    url = f"sqlite:///{db}"
    start = time.perf_counter()
    ids = build_games(url, games, mode)
    built = time.perf_counter() - start
    rates: dict[str, list[float]] = {f"workers={w}": [] for w in [1, *workers]}
    cpu_rates: list[float] = []
    failed = 0
    for _ in range(rounds):
        for w in [1, *workers]:
            rate, cpu_rate, bad = audit_rate(url, ids, w)
            rates[f"workers={w}"].append(rate)
            if w == 1:
                cpu_rates.append(cpu_rate)
            failed += bad
    medians = {k: statistics.median(v) for k, v in rates.items()}
    one = medians["workers=1"]
    one_cpu = statistics.median(cpu_rates)
    return {
        "benchmark": "audit",
        "unit": f"{mode} games audited per second (king audit --all, SQLite)",
        "games": games,
        "rounds": rounds,
        "build_seconds": built,
        "cpus": os.cpu_count(),
        "median": medians,
        "samples": rates,
        "speedup": {k: v / one for k, v in medians.items()},
        "games_per_cpu_second": one_cpu,
        "failed": failed,
        "target": f"workers=1 >= {TARGET:g} {mode} games/s",
        "target_met": one >= TARGET if mode == "standard20" else None,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench audit", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--games", type=int, default=200, help="finished games to audit")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="*", default=[2], help="worker counts")
    parser.add_argument("--mode", choices=("standard20", "short12"), default="standard20")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="king-bench-audit-") as tmp:
        result = measure(args.games, args.rounds, args.workers, args.mode, Path(tmp) / "a.db")
    if args.json:
        print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
        return 0
    print(f"audit: {result['unit']}; {args.games} games, median of {args.rounds} rounds")
    print(f"{'run':<14}{'games/s':>10}{'speed-up':>10}")
    for name, rate in result["median"].items():
        print(f"{name:<14}{rate:>10,.1f}{result['speedup'][name]:>9.2f}x")
    print(f"one core, by CPU time: {result['games_per_cpu_second']:,.1f} games per CPU-second")
    met = {True: "met", False: "NOT met", None: "not measured"}[result["target_met"]]
    print(f"target: {result['target']}: {met}")
    if result["failed"]:
        print(f"{result['failed']} audits FAILED: the figures mean nothing")
    return 0
