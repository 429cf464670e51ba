"""`python -m bench NAME [--json]`: run one benchmark (`bench/<name>.py`, a `main(argv)`)."""

from __future__ import annotations

import importlib
import sys

BENCHMARKS = {
    "engine": "rules engine: deals/s beside OpenSpiel's Hearts",
    "audit": "king audit --all: standard20 games/s on one core and with workers",
    "cli": "king --help and king record check: start-up beside a bare interpreter",
    "store": "event store: append and replay rates beside the eventsourcing library",
    "log": "transparency log: checkpoint and proof times at 10^4, 10^5 and 10^6 leaves",
    "append": "event store: CPU, Python calls and SQL statements per single-event append",
    "service": "game service: pull-bot actions/s and latency beside a bare Litestar endpoint",
    "load": "many pull bots at once: SQLite, PostgreSQL with one and two API processes",
    "pairing": "tournaments: one Swiss round of 1,000 and 10,000 players; round-robin schedules",
    "strength": "strategies: heuristic vs random, strong vs heuristic (ladder points, 95% CI)",
    "solver": "open-hand solver: positions/s at 13, 8, 4 tricks left beside a plain search",
}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help"} or args[0] not in BENCHMARKS:
        print("usage: python -m bench NAME [--json] [options]\n")
        for name, what in BENCHMARKS.items():
            print(f"  {name:<8} {what}")
        return 0 if not args or args[0] in {"-h", "--help"} else 2
    from tournament import native

    # Which build of the rules core's hot modules the figures are of (on standard error, so
    # that --json output stays one object): "native" (compiled at install) or "pure: why".
    print(f"rules core: {native.STATE}", file=sys.stderr)
    module = importlib.import_module(f"bench.{args[0]}")
    return int(module.main(args[1:]) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
