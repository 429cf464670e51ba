"""`king match A B ...`: strategies head to head, duplicate deals, seats rotated."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

import orjson
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from domain.rules import BadRuleOption, Rules
from services.commands import COMMANDS
from services.errors import UserError
from tournament.match import Estimate, MatchResult, SetResult, run_match, sets_for
from tournament.strategies import UnknownStrategy, make_strategy, strategy_names


def register(sub: Any) -> None:
    match = sub.add_parser(
        "match",
        help=COMMANDS["match"],
        description=(
            "Play 1-4 strategies against each other with duplicate deals: every server seed is "
            "played once per seating of a rotation, so each strategy holds each seat's cards. "
            "Prints mean ladder points per game with 95% confidence intervals over the "
            "duplicate sets. Strategies: " + ", ".join(strategy_names()) + " (options as "
            "name:key=value,..., e.g. strong:rollouts=40)."
        ),
    )
    match.add_argument("strategies", nargs="+", metavar="STRATEGY", help="1 to 4 strategies")
    match.add_argument("--games", type=int, default=200, help="games to play (default 200)")
    match.add_argument("--seed", type=int, default=1, help="match seed (default 1)")
    match.add_argument("--mode", choices=("standard20", "short12"), default="standard20")
    match.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="OPTION=VALUE",
        help="a rule option, e.g. --rule must_overtrump=false (repeatable)",
    )
    match.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    match.add_argument(
        "--budget-ms", type=float, default=None, help="time per decision for searching strategies"
    )
    match.add_argument(
        "--rollouts", type=int, default=None, help="fixed samples per decision (reproducible)"
    )
    match.add_argument("--json", action="store_true", help="print one JSON object")
    match.set_defaults(handler=cmd_match)


def _rule_value(text: str) -> object:
    low = text.strip().lower()
    if low in {"true", "on", "yes"}:
        return True
    if low in {"false", "off", "no"}:
        return False
    try:
        return int(low)
    except ValueError:
        return text.strip()


def parse_rules(mode: str, items: list[str]) -> Rules:
    """Rules from --mode and --rule OPTION=VALUE items."""
    data: dict[str, object] = {"mode": mode}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq:
            raise UserError(f"--rule {item!r}: expected OPTION=VALUE")
        data[key.strip()] = _rule_value(value)
    try:
        return Rules.from_dict(data)
    except BadRuleOption as exc:
        raise UserError(str(exc)) from None


def _check_args(args: argparse.Namespace) -> None:
    if not 1 <= len(args.strategies) <= 4:
        raise UserError("a match takes 1 to 4 strategies")
    if args.games < 1:
        raise UserError("--games must be at least 1")
    if args.workers < 1:
        raise UserError("--workers must be at least 1")
    if args.budget_ms is not None and args.budget_ms <= 0:
        raise UserError("--budget-ms must be positive")
    if args.rollouts is not None and args.rollouts < 1:
        raise UserError("--rollouts must be at least 1")
    for name in args.strategies:
        try:
            make_strategy(name, 0)
        except UnknownStrategy as exc:
            raise UserError(str(exc)) from None


def _ci(e: Estimate) -> str:
    return "n/a" if not math.isfinite(e.half_width) else f"± {e.half_width:.2f}"


def render(result: MatchResult, console: Console) -> None:
    """The results table: mean ladder points per game ± 95% CI, and the difference."""
    r = result.rules
    table = Table(
        title=(
            f"King match · {r.mode} · {result.games} games in {result.sets} duplicate sets · "
            f"seed {result.seed}"
        )
    )
    table.add_column("Strategy")
    table.add_column("Ladder pts/game", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("Seat-games", justify="right")
    table.add_column("ms/decision", justify="right")
    table.add_column("max ms", justify="right")
    table.add_column("p99 ms", justify="right")
    table.add_column("CPU ms (max, p99)", justify="right")
    for s in result.results:
        table.add_row(
            s.name,
            f"{s.points.mean:+.2f}",
            _ci(s.points),
            str(s.seat_games),
            f"{s.timing.mean_ms:.1f}",
            f"{s.timing.max_ms:.0f}",
            f"{s.timing.p99_ms:.0f}",
            f"{s.timing.mean_cpu_ms:.1f} ({s.timing.max_cpu_ms:.0f}, {s.timing.p99_cpu_ms:.0f})",
        )
    console.print(table)
    for i, d in enumerate(result.differences):
        a, b = result.strategies[0], result.strategies[i + 1]
        console.print(
            f"{a} − {b}: {d.mean:+.2f} {_ci(d)} ladder points per game "
            f"(95% CI {d.low:+.2f} … {d.high:+.2f})"
            if math.isfinite(d.half_width)
            else f"{a} − {b}: {d.mean:+.2f} ladder points per game (one set: no CI)"
        )


def cmd_match(args: argparse.Namespace) -> int:
    from services.botkit.remote import RemoteBotError, register

    register()  # bot URLs (http://…) play as strategies
    remote = [s for s in args.strategies if s.startswith(("http://", "https://"))]
    if remote and args.workers > 1:
        raise UserError("bots at URLs play in one process: leave out --workers")
    try:
        return _run(args)
    except RemoteBotError as exc:
        raise UserError(f"the bot failed: {exc}") from None


def _run(args: argparse.Namespace) -> int:
    _check_args(args)
    rules = parse_rules(args.mode, args.rule)
    options = {"budget_ms": args.budget_ms, "rollouts": args.rollouts}
    total = sets_for(args.games, len(args.strategies))
    err = Console(stderr=True)
    with Progress(
        TextColumn("duplicate sets"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    ) as progress:
        task = progress.add_task("match", total=total)

        def advance(_: SetResult) -> None:
            progress.advance(task)

        result = run_match(
            args.strategies,
            args.games,
            args.seed,
            rules,
            workers=args.workers,
            progress=advance,
            **options,
        )
    if args.json:
        sys.stdout.write(orjson.dumps(result.to_dict(), option=orjson.OPT_INDENT_2).decode())
        sys.stdout.write("\n")
    else:
        console = Console()
        if not console.is_terminal:
            console = Console(width=120)  # a file or pipe: one line per row
        render(result, console)
    return 0
