"""`king tournament`: run a local tournament of built-in bots and bot URLs, show standings and
pairings, re-check exported pairings."""

from __future__ import annotations

import argparse
import contextlib
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

from domain.rules import BadRuleOption, Rules
from services.commands import COMMANDS, add_db_option
from services.errors import UserError

DEMO_PLAYERS = "heuristic*6,random*2"


def register(sub: Any) -> None:
    tournament = sub.add_parser("tournament", help=COMMANDS["tournament"])
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
    run.add_argument(
        "--decision-seconds",
        type=float,
        metavar="S",
        help="time a bot URL has per decision (default KING_DECISION_SECONDS, 10)",
    )
    add_db_option(run)
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    run.set_defaults(handler=cmd_run)

    show = actions.add_parser("standings", help="a tournament's standings")
    show.add_argument("id")
    add_db_option(show)
    out = show.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true")
    out.add_argument("--csv", action="store_true")
    show.set_defaults(handler=cmd_standings)

    pairings = actions.add_parser(
        "pairings",
        help="each round's tables and byes, or re-check an exported pairing (--check FILE)",
        description=(
            "With ID: print each round's tables and byes. With --check FILE: take a pairings "
            "export (GET /api/v1/tournaments/{id}/pairings, a list of rounds each with its "
            "king-pairing/1 `input` and its `pairing`, or one such round), pair every round "
            "again from its input and say whether that gives exactly the recorded tables, "
            "seats and byes: exit 0 when every round matches, 1 when one does not."
        ),
    )
    which = pairings.add_mutually_exclusive_group(required=True)
    which.add_argument("id", nargs="?")
    which.add_argument("--check", metavar="FILE", help="an exported pairings JSON ('-': stdin)")
    add_db_option(pairings)
    pairings.set_defaults(handler=cmd_pairings)

    listing = actions.add_parser("list", help="the tournaments in the database")
    add_db_option(listing)
    listing.set_defaults(handler=cmd_list)


def _open(db: str | None) -> Any:
    from services.database import open_store
    from services.settings import load_settings

    settings = load_settings(database_url=db)
    return open_store(settings), settings


def _runner(store: Any, policies: Any = None) -> Any:
    from tournament.runner import TournamentRunner, builtin_policies

    return TournamentRunner(store, policies=policies or builtin_policies)


class BotPolicies:
    """The players of a local run: built-in strategies, and bots at URLs asked as push bots.

    A bot URL is asked by RemoteBot, the client `king match URL` uses (the service's decision
    request and reply), within the decision time limit. A refused connection, a time-out, an
    HTTP error or a reply that is not a legal action raises, which the runner records as a
    strike (the third forfeits the seat, as on the service); the last failure of each bot is
    kept to be reported after the run.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.bots: dict[str, Any] = {}
        self.last_error: dict[str, str] = {}

    def __call__(self, reg: Any, game_id: str, seat: int, house: str) -> Any:
        from services.botkit.remote import RemoteBot, RemoteBotError
        from tournament.runner import builtin_policies

        if reg is None or reg.kind != "bot":
            return builtin_policies(reg, game_id, seat, house)
        url, player = reg.spec, reg.player_id
        bot = self.bots.get(url)
        if bot is None:
            bot = self.bots[url] = RemoteBot(url, seconds=self.seconds)

        def ask(view: Any) -> Any:
            try:
                return bot(view)
            except RemoteBotError as exc:
                self.last_error[player] = str(exc)
                raise

        return ask


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
    if args.decision_seconds is not None and not 0.05 <= args.decision_seconds <= 3600:
        raise UserError("--decision-seconds must be 0.05-3600")
    store, settings = _open(args.db)
    console = Console(stderr=True)
    policies = BotPolicies(args.decision_seconds or settings.decision_seconds)
    runner = _runner(store, policies)
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
        bots = _bot_report(runner, state, policies.last_error)
        _print_result(args, state, audits, settings.url, console, bots)
    finally:
        store.close()
    return 0 if all(a.ok for a in audits) else 1


def _standings_rows(state: Any) -> list[dict[str, Any]]:
    from tournament.planning import current_standings
    from tournament.standings import to_json

    return to_json(current_standings(state))


def _bot_report(runner: Any, state: Any, last_error: dict[str, str]) -> list[dict[str, Any]]:
    """Each bot URL entrant: games played, strikes and forfeits (from the games themselves, so
    a carried-on run counts the earlier ones too) and its last failure in this run."""
    out = []
    for reg in state.players:
        if reg.kind != "bot":
            continue
        games = strikes = forfeits = 0
        for r in state.results:
            if reg.player_id not in r.seats:
                continue
            games += 1
            seat = r.seats.index(reg.player_id)
            strikes += runner.games.load(r.game_id).strikes[seat]
            forfeits += reg.player_id in r.forfeited
        out.append(
            {
                "player": reg.player_id,
                "url": reg.spec,
                "games": games,
                "strikes": strikes,
                "forfeits": forfeits,
                "last_error": last_error.get(reg.player_id),
            }
        )
    return out


def _bot_line(bot: dict[str, Any]) -> str:
    line = (
        f"bot {bot['player']} ({bot['url']}): {bot['games']} games, {bot['strikes']} strikes, "
        + (f"forfeited {bot['forfeits']}" if bot["forfeits"] else "no forfeits")
    )
    return line + (f" — last failure: {bot['last_error']}" if bot["last_error"] else "")


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def _design_name(method: str) -> str:
    if method.startswith("AG("):
        return ("affine plane " if method.startswith("AG(2,") else "affine space ") + method
    if method.startswith("cyclic GF("):
        return "cyclic design on " + method.removeprefix("cyclic ")
    return f"{method} design"


def _schedule_report(state: Any) -> dict[str, Any] | None:
    """How the round-robin was built and how evenly it seats pairs together (None for a
    Swiss): the plan the last pairing came from (as tournament.planning makes it)."""
    from tournament.pairing.export import schedule_to_json
    from tournament.pairing.round_robin import round_robin

    s = state.settings
    if s.format != "round_robin":
        return None
    since = state.field_changed_after
    plan = round_robin(state.active, s.seed, (s.rounds or 0) - since, s.fill, state.rounds[:since])
    b = plan.balance
    if b.min_meetings == b.max_meetings:
        meets = f"every pair meets {'exactly ' if b.max_meetings else ''}{_times(b.max_meetings)}"
    else:
        meets = f"pairs meet {b.min_meetings}–{b.max_meetings} times"
    band = f"{b.ideal_low}" if b.ideal_low == b.ideal_high else f"{b.ideal_low}–{b.ideal_high}"
    if not b.ideal:
        outside = b.below_ideal + b.above_ideal
        meets += f", {outside} pair{'s' * (outside != 1)} outside the ideal band {band}"
    elif b.min_meetings != b.max_meetings:
        meets += " (as evenly as possible)"
    for what, low, high in (
        ("byes", b.min_byes, b.max_byes),
        ("house-bot games", b.min_house_games, b.max_house_games),
    ):
        if high:
            meets += f"; {what} {low}–{high} each" if low != high else f"; {what} {low} each"
    name = _design_name(plan.method)
    if plan.method == "search":
        name = "search (no known design fits this field and number of rounds)"
    return {
        "method": plan.method,
        "balance": schedule_to_json(plan)["balance"],
        "summary": f"schedule: {name}, {meets}",
    }


def _print_result(
    args: argparse.Namespace,
    state: Any,
    audits: list[Any],
    url: str,
    console: Any,
    bots: list[dict[str, Any]],
) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    created = state.created
    rows = _standings_rows(state)
    bad = [a.game_id for a in audits if not a.ok]
    schedule = _schedule_report(state)
    if args.json:
        doc = {
            "tournament": created.tournament_id,
            "format": created.format,
            "rounds": len(state.rounds),
            "schedule": schedule,
            "standings": rows,
            "bots": bots,
            "games": [r.game_id for r in state.results],
            "audit": {"games": len(audits), "failed": bad},
        }
        sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
        for bot in bots:  # a failing bot is worth a word on stderr even in JSON mode
            if bot["strikes"]:
                console.print(escape("king: " + _bot_line(bot)), highlight=False)
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
    if schedule is not None:
        out.print(escape(schedule["summary"]), highlight=False)
    for bot in bots:
        out.print(escape(_bot_line(bot)), highlight=False)
    verdict = "all clean" if not bad else f"FAILED: {', '.join(bad)}"
    out.print(f"Audited {len(audits)} games (hash chain, seed, hands, replay): {verdict}.")
    db = "" if url.endswith("var/king.db") else f" --db '{url}'"
    first = state.results[0].game_id if state.results else "GAME_ID"
    page = f"http://127.0.0.1:8000/tournaments/{quote(created.tournament_id, safe='')}"
    out.print(
        f"Export a game's record: [bold]king record export{db} {first}[/]",
        highlight=False,
        soft_wrap=True,
    )
    # The last line: where to watch it (the tournament's page links every table's replay).
    out.print(
        f"Watch it: run [bold]king serve{db}[/] and open {page}", highlight=False, soft_wrap=True
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
    if args.check is not None:
        return _check_pairings(args.check)
    with _loaded(args) as state:
        rounds = [
            {"round": i + 1, "tables": list(tables), "byes": list(state.rounds[i].byes)}
            for i, tables in enumerate(state.round_games)
        ]
        doc = {"tournament": args.id, "seed": state.created.seed, "rounds": rounds}
        sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0


def _check_pairings(path: str) -> int:
    """Pair each round of an export again from its input: 0 when all match, 1 otherwise."""
    from tournament.pairing.export import MalformedPairing, round_from_json, round_to_json, verify

    name = "stdin" if path == "-" else path
    try:
        text = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
        doc = orjson.loads(text)
    except OSError as exc:
        raise UserError(f"cannot read {name}: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise UserError(f"{name} is not JSON: {exc}") from None
    # The HTTP API's list of rounds, {"rounds": [...]}, or one round.
    items = doc.get("rounds") if isinstance(doc, dict) and "input" not in doc else doc
    items = [items] if isinstance(items, dict) else items
    if not isinstance(items, list) or not items:
        raise UserError(f"{name} holds no rounds (expected an export of pairings)")
    failed = by_hand = 0
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict) or "input" not in item or "pairing" not in item:
            raise UserError(f"{name}: round item {i} has no 'input' and 'pairing' to check")
        try:
            recorded = round_from_json(item["pairing"])
            listed = _listed_round(item, recorded.number)
            manual = item["input"] is None and item.get("manual") is True
            ok = manual or verify(item["input"], item["pairing"])
        except (MalformedPairing, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise UserError(f"{name}: round item {i} is not a pairing export: {exc!r}") from None
        why = "pairing its input again gives other tables, seats or byes"
        if listed is not None and listed != round_to_json(recorded):
            ok, why = False, "its listed tables or byes are not its 'pairing'"
        what = f"{_count(len(recorded.tables), 'table')}, {_count(len(recorded.byes), 'bye')}"
        if not ok:
            failed += 1
            print(f"round {recorded.number}: DIFFERS: {why}")
        elif manual:
            by_hand += 1
            print(f"round {recorded.number}: paired by hand ({what}): no system to re-pair it")
        else:
            print(f"round {recorded.number}: matches ({what})")
    summary = f"{len(items) - failed - by_hand} of {len(items)} rounds reproduced exactly"
    print(summary + (f", {by_hand} paired by hand" if by_hand else ""))
    return 0 if not failed else 1


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' * (n != 1)}"


def _listed_round(item: dict[str, Any], number: int) -> dict[str, Any] | None:
    """An item's own `tables` and `byes` (if it lists them) in round_to_json's form, so a
    table edited beside an untouched `pairing` is caught too."""
    if "tables" not in item:
        return None
    return {
        "round": number,
        "tables": [
            {
                "table": int(t["table"]),
                "seats": list(t["seats"]),
                "house_seats": list(t.get("house_seats", t.get("house", ()))),
            }
            for t in item["tables"]
        ],
        "byes": list(item.get("byes", ())),
    }


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
