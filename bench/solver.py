"""`python -m bench solver [--json]`: the open-hand solver beside a plain search, by tricks left.

Positions: random deals (default rules, the ten contracts in turn) played with uniformly random
legal cards until 13, 8 or 4 tricks remain; the seat to move then asks for the value of every
legal card (paranoid model, `domain.solver.solve`). Two searches run on the same positions,
alternating, in one process (times are CPU time, so other load on a shared machine does not
inflate them):

- **solver**    — alpha-beta with the transposition table, static bounds and equivalent cards;
- **plain**     — the same alpha-beta with the table, the bounds and the equivalences off.

Each search gets a cap of `--cap` positions visited (nodes) per position; a position whose
search hits the cap is counted as *not solved* and its time as spent, so a rate with unsolved
positions is a lower bound on the time the exact answer would need. Reported per row: positions
solved within the cap, positions per second (solved positions over all the time spent), the
median time and nodes per position, and the plain search's time over the solver's.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

import orjson

from domain.cards import cards_of
from domain.contracts import ALL_CONTRACTS
from domain.deal import DealState, legal_mask, new_deal, play
from domain.rules import Rules
from domain.solver import solve

LEVELS = (13, 8, 4)
SEARCHES = {"solver": True, "plain": False}


def positions(tricks_left: int, n: int, seed: int) -> list[DealState]:
    """n positions at a trick boundary with `tricks_left` tricks to play (deals that end early
    are dealt again)."""
    rng = random.Random(seed * 100 + tricks_left)
    out: list[DealState] = []
    while len(out) < n:
        deck = list(range(52))
        rng.shuffle(deck)
        hands = [sum(1 << c for c in deck[13 * i : 13 * i + 13]) for i in range(4)]
        contract = ALL_CONTRACTS[len(out) % len(ALL_CONTRACTS)]
        st = new_deal(Rules(), contract, rng.randrange(4), (hands[0], hands[1], hands[2], hands[3]))
        while not st.over and st.tricks < 13 - tricks_left:
            st = play(st, rng.choice(cards_of(legal_mask(st))))
        if not st.over:
            out.append(st)
    return out


def measure(counts: dict[int, int], cap: int, seed: int) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for left, n in counts.items():
        times: dict[str, list[float]] = {name: [] for name in SEARCHES}
        nodes: dict[str, list[int]] = {name: [] for name in SEARCHES}
        solved = dict.fromkeys(SEARCHES, 0)
        agree = 0
        both = 0
        for st in positions(left, n, seed):
            answers = {}
            for name, pruning in SEARCHES.items():
                t = time.process_time()
                sol = solve(
                    st, node_budget=cap, transpositions=pruning, equivalences=pruning, deepen=False
                )
                times[name].append(time.process_time() - t)
                nodes[name].append(sol.nodes)
                if sol.exact:
                    solved[name] += 1
                    answers[name] = sol.values
            if len(answers) == 2:
                both += 1
                agree += answers["solver"] == answers["plain"]
        row: dict[str, Any] = {"tricks_left": left, "positions": n, "cap_nodes": cap}
        for name in SEARCHES:
            spent = sum(times[name])
            row[name] = {
                "solved": solved[name],
                "positions_per_s": solved[name] / spent if spent else 0.0,
                "median_ms": statistics.median(times[name]) * 1000.0,
                "median_nodes": statistics.median(nodes[name]),
                "seconds": spent,
            }
        row["median_time_ratio"] = row["plain"]["median_ms"] / row["solver"]["median_ms"]
        row["median_node_ratio"] = row["plain"]["median_nodes"] / max(
            1, row["solver"]["median_nodes"]
        )
        row["both_solved_and_agree"] = f"{agree}/{both}"
        rows.append(row)
    return {"unit": "positions (every legal card valued) per second", "rows": rows}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench solver", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cap", type=int, default=200_000, help="nodes per position")
    parser.add_argument(
        "--positions",
        type=int,
        nargs=3,
        default=(4, 20, 60),
        metavar=("AT13", "AT8", "AT4"),
        help="positions at 13, 8 and 4 tricks left",
    )
    args = parser.parse_args(argv)
    counts = dict(zip(LEVELS, args.positions, strict=True))
    result = measure(counts, args.cap, args.seed)
    if args.json:
        print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
        return 0
    print(f"solver: {result['unit']}; cap {args.cap:,} nodes per position (paranoid model)")
    head = f"{'tricks left':>11} {'search':<7}{'solved':>9}{'pos/s':>10}{'median ms':>11}"
    print(head + f"{'median nodes':>14}{'plain/solver':>14}")
    for row in result["rows"]:
        for name in SEARCHES:
            r = row[name]
            ratio = f"{row['median_time_ratio']:.1f}x time" if name == "plain" else ""
            print(
                f"{row['tricks_left']:>11} {name:<7}{r['solved']:>4}/{row['positions']:<4}"
                f"{r['positions_per_s']:>10.2f}{r['median_ms']:>11.1f}{r['median_nodes']:>14,.0f}"
                f"{ratio:>14}"
            )
        print(
            f"{'':>11} nodes plain/solver {row['median_node_ratio']:.1f}x; "
            f"both solved and agree: {row['both_solved_and_agree']}"
        )
    return 0
