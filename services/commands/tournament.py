"""`king tournament`: run a local tournament of built-in bots, show standings and pairings."""

from __future__ import annotations

import argparse
import contextlib
import secrets
import sys
from collections.abc import Iterator
from typing import Any

import orjson

from domain.rules import BadRuleOption, Rules
from services.errors import UserError

DEMO_PLAYERS = "heuristic*6,random*2"


def register(sub: Any) -> None:
    tournament = sub.add_parser("tournament", help="Swiss and round-robin tournaments")
    actions = tournament.add_subparsers(dest="tournament_command", metavar="ACTION")

    run = actions.add_parser(
        "run",
        help="run a whole tournament here (with no options: a small demo)",
        description=(
            "Create a tournament of built-in bots (and bot URLs) on the database and play it to "
            "the end, then print the standings. Run again with the same --id to carry on an "
            "interrupted tournament."
        ),
    )
    run.add_argument("--id", help="tournament id (default: demo-<random>)")
    run.add_argument("--name", default="", help="a name to show")
    run.add_argument("--format", choices=["swiss", "round_robin"], default="swiss")
    run.add_argument("--rounds", type=int, help="rounds (default: 3 Swiss, or a full round-robin)")
    run.add_argument(
        "--players",
        default=DEMO_PLAYERS,
        help=f"e.g. 'random*8,heuristic*8' or 'ada=heuristic,bo=strong' (default {DEMO_PLAYERS})",
    )
    run.add_argument("--mode", choices=["standard20", "short12"], default="standard20")
    run.add_argument("--duplicate", action="store_true", help="the same deals at every table")
    run.add_argument("--fill", choices=["bye", "house_bot"], default="bye")
    run.add_argument("--bye-points", default="0", help="ladder points of a bye, or 'mean'")
    run.add_argument("--house", default="heuristic", help="strategy of house bots")
    run.add_argument("--seed", default="", help="pairing seed (default: random)")
    run.add_argument(
        "--secret",
        default="",
        metavar="HEX64",
        help="deal secret, 64 hex digits (default: random); with --seed, replays a tournament",
    )
    run.add_argument("--db", metavar="URL", help="database URL (KING_DATABASE_URL)")
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    run.set_defaults(handler=cmd_run)

    show = actions.add_parser("standings", help="a tournament's standings")
    show.add_argument("id")
    show.add_argument("--db", metavar="URL")
    out = show.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true")
    out.add_argument("--csv", action="store_true")
    show.set_defaults(handler=cmd_standings)

    pairings = actions.add_parser("pairings", help="each round's tables and byes, to re-check")
    pairings.add_argument("id")
    pairings.add_argument("--db", metavar="URL")
    pairings.set_defaults(handler=cmd_pairings)

    listing = actions.add_parser("list", help="the tournaments in the database")
    listing.add_argument("--db", metavar="URL")
    listing.set_defaults(handler=cmd_list)


def _open(db: str | None) -> Any:
    from services.database import open_store
    from services.settings import load_settings

    settings = load_settings(database_url=db)
    return open_store(settings), settings


def _runner(store: Any) -> Any:
    from tournament.runner import TournamentRunner

    return TournamentRunner(store)


def cmd_run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from tournament.runner import PlayerSpec, TournamentExists, TournamentNotFound, parse_players
    from tournament.strategies import UnknownStrategy

    try:
        players: list[PlayerSpec] = parse_players(args.players)
        rules = Rules.from_dict({"mode": args.mode})
    except (ValueError, BadRuleOption) as exc:
        raise UserError(str(exc)) from None
    if args.rounds is not None and args.rounds < 1:
        raise UserError("--rounds must be at least 1")
    store, settings = _open(args.db)
    console = Console(stderr=True)
    runner = _runner(store)
    tid = args.id or f"demo-{secrets.token_hex(3)}"
    try:
        try:
            state = runner.load(tid)
            console.print(f"carrying on tournament [bold]{tid}[/] (round {len(state.rounds)})")
        except TournamentNotFound:
            try:
                state = runner.create(
                    tid,
                    players,
                    name=args.name,
                    format=args.format,
                    rounds=args.rounds
                    if args.rounds is not None
                    else (3 if args.format == "swiss" else None),
                    rules=rules,
                    fill=args.fill,
                    bye_points=args.bye_points,
                    duplicate=args.duplicate,
                    seed=args.seed,
                    secret=args.secret,
                    house_strategy=args.house,
                )
            except (ValueError, UnknownStrategy, TournamentExists) as exc:
                raise UserError(str(exc)) from None
        settings_ = state.settings
        tables = (
            max(1, len(state.active) // 4)
            if settings_.fill == "bye"
            else -(-len(state.active) // 4)
        )
        total = tables * (settings_.rounds or 1)
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=args.json,
            disable=not console.is_terminal and args.json,
        ) as progress:
            task = progress.add_task(f"{tid}: games", total=total)
            done = {g.game_id for g in state.results}
            progress.update(task, completed=len(done))

            def on_step(step: Any) -> None:
                if step.kind == "recorded" and step.game_id not in done:
                    done.add(step.game_id)
                    progress.update(task, completed=len(done))
                elif step.kind == "paired":
                    progress.update(task, description=f"{tid}: round {step.round}")

            state = runner.run(tid, on_step)
        audits = [runner.games.audit(r.game_id) for r in state.results]
        _print_result(args, state, audits, settings.url, console)
    finally:
        store.close()
    return 0 if all(a.ok for a in audits) else 1


def _standings_rows(state: Any) -> list[dict[str, Any]]:
    from tournament.planning import current_standings
    from tournament.standings import to_json

    return to_json(current_standings(state))


def _print_result(
    args: argparse.Namespace, state: Any, audits: list[Any], url: str, console: Any
) -> None:
    from rich.console import Console
    from rich.table import Table

    created = state.created
    rows = _standings_rows(state)
    bad = [a.game_id for a in audits if not a.ok]
    if args.json:
        doc = {
            "tournament": created.tournament_id,
            "format": created.format,
            "rounds": len(state.rounds),
            "standings": rows,
            "games": [r.game_id for r in state.results],
            "audit": {"games": len(audits), "failed": bad},
        }
        sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    table = Table(title=f"{created.name} · {created.format} · {len(state.rounds)} rounds")
    for col, justify in [
        ("#", "right"),
        ("player", "left"),
        ("ladder", "right"),
        ("game pts", "right"),
        ("table-mates", "right"),
        ("wins", "right"),
        ("games", "right"),
        ("byes", "right"),
    ]:
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for r in rows:
        table.add_row(
            str(r["rank"]),
            r["player"],
            r["ladder_display"],
            str(r["game_points"]),
            r["table_mates_display"],
            str(r["wins"]),
            str(r["games"]),
            str(r["byes"]),
        )
    out = Console()
    out.print(table)
    verdict = "all clean" if not bad else f"FAILED: {', '.join(bad)}"
    out.print(f"Audited {len(audits)} games (hash chain, seed, hands, replay): {verdict}.")
    db = "" if url.endswith("var/king.db") else f" --db '{url}'"
    first = state.results[0].game_id if state.results else "GAME_ID"
    out.print(
        "Watch the replays: run [bold]king serve"
        + db
        + f"[/] and open http://127.0.0.1:8000/ — or export one: "
        f"[bold]king record export{db} {first}[/]"
    )


@contextlib.contextmanager
def _loaded(args: argparse.Namespace) -> Iterator[Any]:
    """The tournament named by args.id, with the store open while the block runs."""
    from tournament.runner import TournamentNotFound

    store, _ = _open(args.db)
    try:
        try:
            yield _runner(store).load(args.id)
        except TournamentNotFound as exc:
            raise UserError(str(exc)) from None
    finally:
        store.close()


def cmd_standings(args: argparse.Namespace) -> int:
    from tournament.planning import current_standings
    from tournament.standings import to_csv, to_json

    with _loaded(args) as state:
        table = current_standings(state)
        if args.csv:
            sys.stdout.write(to_csv(table))
        else:
            sys.stdout.write(
                orjson.dumps(to_json(table), option=orjson.OPT_INDENT_2).decode() + "\n"
            )
    return 0


def cmd_pairings(args: argparse.Namespace) -> int:
    with _loaded(args) as state:
        rounds = [
            {"round": i + 1, "tables": list(tables), "byes": list(state.rounds[i].byes)}
            for i, tables in enumerate(state.round_games)
        ]
        doc = {"tournament": args.id, "seed": state.created.seed, "rounds": rounds}
        sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    store, _ = _open(args.db)
    try:
        runner = _runner(store)
        for tid in runner.tournament_ids():
            state = runner.load(tid)
            status = "finished" if state.finished else f"round {len(state.rounds)}"
            print(f"{tid}\t{state.created.format}\t{len(state.players)} players\t{status}")
    finally:
        store.close()
    return 0
