"""`king analyse`: what each card played in a game's ended deals cost, against an open-hand
solver, and each declaration against the expert's choice (docs/ANALYSIS.md).

GAME is a game id in the database, or a king-record/1 file (or - for standard input). Only
deals that have ended are analysed. A table by default; --json prints the analysis object of
GET /api/v1/games/{id}/analysis. Exit 0 on success, 2 for a usage problem (no such game, a
deal not ended, a malformed record).

Open-hand solves of whole deals are costly: the solver's nodes per position are capped
(--budget, default 20000; --exact for none), and a value searched within the budget counts as
an estimate. The last five tricks of a deal are always solved exactly; the output says which
values are exact (~ marks the others).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from services.commands import add_db_option, command_parser
from services.errors import UserError

DEFAULT_BUDGET = 20_000  # about half a second a position (docs/ANALYSIS.md)


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return n


def register(sub: Any) -> None:
    cmd = command_parser(sub, "analyse", __doc__)
    cmd.add_argument("game", metavar="GAME", help="a game id, or a king-record/1 file (- : stdin)")
    cmd.add_argument("--json", action="store_true", help="print the analysis as one JSON object")
    cmd.add_argument("--deal", type=_positive, default=None, metavar="N", help="only deal N")
    how = cmd.add_mutually_exclusive_group()
    how.add_argument(
        "--budget",
        type=_positive,
        default=DEFAULT_BUDGET,
        metavar="NODES",
        help=f"the solver's node budget per position (default {DEFAULT_BUDGET}); the last "
        "five tricks are always solved exactly",
    )
    how.add_argument(
        "--exact",
        dest="budget",
        action="store_const",
        const=None,
        help="no budget: every value exact (a whole deal can take hours)",
    )
    cmd.add_argument(
        "--no-declarations",
        dest="declarations",
        action="store_false",
        help="leave out the declarations' analysis",
    )
    add_db_option(cmd)
    cmd.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on standard error (default: when it is a terminal)",
    )
    cmd.set_defaults(handler=cmd_analyse)


def _record_events(game: str) -> list[Any]:
    """The events of a king-record/1 file (as the service would store them)."""
    from pathlib import Path

    import orjson

    from domain.record import MalformedRecord, parse_record, record_events

    try:
        raw = sys.stdin.buffer.read() if game == "-" else Path(game).read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {game}: {exc.strerror}") from None
    try:
        record = parse_record(orjson.loads(raw))
    except orjson.JSONDecodeError as exc:
        raise UserError(f"{game} is not JSON: {exc}") from None
    except MalformedRecord as exc:
        raise UserError(f"{game} is not a king-record/1 document: {exc}") from None
    name = "record" if game == "-" else Path(game).name.removesuffix(".json")
    _, events, error = record_events(record, name.removesuffix(".king-record") or "record")
    if error is not None:
        raise UserError(f"{game} does not follow the rules: {error['error']['message']}")
    return events


def _stored_events(game: str, db: str | None) -> list[Any]:
    from domain.game import InconsistentEvent
    from services.commands.audit import open_repository
    from tournament.games import GameNotFound, to_domain_event

    repo = open_repository(db)
    try:
        if not repo.exists(game):
            raise UserError(f"no game {game!r} in the database")
        try:
            return [to_domain_event(r) for r in repo.events(game)]
        except GameNotFound:
            raise UserError(f"no game {game!r} in the database") from None
        except (InconsistentEvent, ValueError, KeyError, TypeError) as exc:
            raise UserError(f"game {game!r} does not load (run king audit): {exc}") from None
    finally:
        repo.store.close()


def load_events(game: str, db: str | None) -> list[Any]:
    from pathlib import Path

    if game == "-" or (game.endswith(".json") and Path(game).is_file()):
        return _record_events(game)
    return _stored_events(game, db)


@contextmanager
def _progress(total: int, show: bool) -> Iterator[Callable[[int], None] | None]:
    if not show or not total:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    console = Console(stderr=True)
    columns = ("analyse", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=console.is_terminal) as bar:
        task = bar.add_task("analyse", total=total)
        yield lambda n: bar.advance(task, n)


def cmd_analyse(args: argparse.Namespace) -> int:
    import orjson

    from domain.game import InconsistentEvent
    from tournament.analysis import (
        AnalysisError,
        analyse_game,
        default_evaluator,
        default_solver,
        ended_deals,
        select,
    )

    events = load_events(args.game, args.db)
    try:
        _, deals = ended_deals(events)
    except InconsistentEvent as exc:
        raise UserError(f"the game does not replay (run king audit): {exc}") from None
    try:
        solver = default_solver(node_budget=args.budget)
        evaluate = default_evaluator() if args.declarations else None
        total = sum(len(d.done.tricks) * 4 for d in select(deals, args.deal))
        show = args.progress if args.progress is not None else sys.stderr.isatty()
        with _progress(total, show) as done:
            analysis = analyse_game(events, solver, evaluate, deal=args.deal, progress=done)
    except AnalysisError as exc:
        raise UserError(str(exc)) from None
    out = analysis.to_dict()
    if args.json:
        sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print_table(out)
    return 0


_LABEL_STYLE = {"inaccuracy": "yellow", "mistake": "dark_orange", "blunder": "bold red"}


def _number(x: float) -> str:
    return str(x) if isinstance(x, int) else f"{x:.1f}"


def print_table(out: dict[str, Any]) -> None:
    """The analysis as tables: one per deal, then each player's total cost and marks."""
    from rich.console import Console
    from rich.table import Table

    from domain.contracts import Contract, display_name

    console = Console()
    players = out["players"]
    budget = out["node_budget"]
    how = "all exact" if out["exact"] else f"~: searched within {budget} nodes (an estimate)"
    console.print(
        f"[bold]{out['game_id']}[/bold] · card values: {out['model']} open-hand solve, {how}"
    )
    if out["contract_model"]:
        console.print(f"declarations: valued by the {out['contract_model']} model")
    cost = [0.0] * 4
    marks = [{"inaccuracy": 0, "mistake": 0, "blunder": 0} for _ in range(4)]
    for d in out["deals"]:
        name = display_name(Contract(d["contract"]))
        attempt = f".{d['attempt']}" if d["attempt"] else ""
        title = f"Deal {d['deal']}{attempt} · {name} · declarer {players[d['declarer']]}"
        table = Table(title=title, title_justify="left")
        for col, justify in (
            ("trick", "right"),
            ("player", "left"),
            ("card", "left"),
            ("best", "left"),
            ("cost", "right"),
            ("mark", "left"),
        ):
            table.add_column(col, justify=justify)  # type: ignore[arg-type]
        for c in d["cards"]:
            label = c["label"] or ""
            style = _LABEL_STYLE.get(label, "")
            best = "forced" if c["forced"] else " ".join(c["best"])
            approx = "" if c["exact"] else "~"
            table.add_row(
                str(c["trick"]),
                players[c["seat"]],
                c["card"],
                best,
                approx + _number(c["cost"]),
                f"[{style}]{label}[/{style}]" if style else "",
            )
            cost[c["seat"]] += c["cost"]
            if label:
                marks[c["seat"]][label] += 1
        console.print(table)
        decl = d["declaration"]
        if decl:
            said, best = decl["declared_value"], decl["expert_value"]
            said_text = "not valued" if said is None else _number(said)
            best_text = "not valued" if best is None else _number(best)
            verdict = "as the expert would" if decl["agrees"] else "the expert would not"
            console.print(
                f"  declared {decl['declared']} ({said_text}), {verdict}; the expert: "
                f"{decl['expert']} ({best_text}) (expected deal points)"
            )
    summary = Table(title="Players", title_justify="left")
    for col in ("player", "cost", "inaccuracies", "mistakes", "blunders"):
        summary.add_column(col, justify="left" if col == "player" else "right")
    for seat in range(4):
        m = marks[seat]
        summary.add_row(
            players[seat],
            _number(cost[seat]),
            str(m["inaccuracy"]),
            str(m["mistake"]),
            str(m["blunder"]),
        )
    console.print(summary)
