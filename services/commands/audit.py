"""`king audit`: check games' hash chains and replay them through the rules.

For each game: the hash chain (a changed, dropped or reordered event breaks it), the seed
against its commitment, every dealt hand against the seed, and every action re-run through the
core with every derived fact recomputed. Names the first event that differs and why. Exit 0
when every game passes, 1 when one fails, 2 for a usage problem.

With --all, `--workers N` spreads the games over N processes (each with its own database
connection); the results are printed in the order of the games either way. A progress bar
shows on standard error when it is a terminal (--progress / --no-progress to choose).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import orjson

from services.commands import add_db_option, command_parser
from services.errors import UserError
from services.settings import load_settings


def register(sub: Any) -> None:
    audit = command_parser(sub, "audit", __doc__)
    audit.add_argument("game_id", nargs="?", help="the game to audit")
    audit.add_argument("--all", action="store_true", help="audit every game in the database")
    add_db_option(audit)
    audit.add_argument("--json", action="store_true", help="print one JSON object")
    audit.add_argument(
        "--workers",
        type=_workers,
        default=1,
        metavar="N",
        help="processes to audit in (default 1; 0: one per CPU)",
    )
    audit.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on standard error (default: when it is a terminal)",
    )
    audit.set_defaults(handler=cmd_audit)


def _workers(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of workers: {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError("the number of workers is 0 (one per CPU) or more")
    return n or (os.cpu_count() or 1)


def open_repository(db: str | None) -> Any:
    """A GameRepository on an existing database, never migrating it."""
    from eventstore import EventStore, SchemaError
    from services.database import store_settings
    from tournament.games import GameRepository

    settings = load_settings(database_url=db)
    if settings.is_sqlite:
        from pathlib import Path

        from sqlalchemy.engine import make_url

        path = make_url(settings.url).database
        if path and not Path(path).exists():
            raise UserError(f"no database at {path}")
    try:
        store = EventStore.open(settings.url, settings=store_settings(settings), create=False)
    except SchemaError as exc:
        raise UserError(str(exc)) from None
    except Exception as exc:
        raise UserError(f"cannot open the database: {type(exc).__name__}: {exc}") from None
    return GameRepository(store)


def audit_one(repo: Any, game_id: str, known: bool = False) -> dict[str, Any]:
    """One game's audit as a dict; GameNotFound when there is no such game (`known`: the id
    comes from the store's own list, so its existence need not be asked first)."""
    from tournament.games import GameNotFound

    if not known and not repo.exists(game_id):
        raise GameNotFound(f"no game {game_id!r}")
    try:
        with _collector_paused():
            return dict(repo.audit(game_id).to_dict())
    except GameNotFound:
        if not known:
            raise
        return {"game_id": game_id, "ok": False, "error": "the game's stream is gone"}
    except Exception as exc:  # rows too damaged to read: the game fails, the run goes on
        return {
            "game_id": game_id,
            "ok": False,
            "error": f"{type(exc).__name__}: {str(exc)[:300]}",
        }


@contextmanager
def _collector_paused() -> Iterator[None]:
    """One game's audit makes about a hundred thousand short-lived values (states, events,
    rows), none in a cycle: reference counting frees them, and the cyclic collector's passes
    over them are only cost (about 5% of an audit, measured). It runs again between games."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def describe(result: dict[str, Any]) -> str:
    gid = result["game_id"]
    if "error" in result:
        return f"FAIL {gid}: the stream cannot be read: {result['error']}"
    if result["ok"]:
        state = "finished" if result["finished"] else "in progress"
        replay = result["replay"]
        seed = "seed and hands checked" if replay["seed_checked"] else "seed not revealed yet"
        return f"ok   {gid}: {result['events']} events, {state}, chain intact, {seed}"
    lines = [f"FAIL {gid}:"]
    chain = result["chain"]
    if not chain["ok"]:
        lines.append(
            f"  hash chain: first bad event is version {chain['first_bad_version']}: "
            f"{chain['reason']}"
        )
    replay = result["replay"]
    if not replay["ok"]:
        lines.append(
            f"  replay: event {replay['first_bad_version']} ({replay['event_type']}): "
            f"{replay['reason']}"
        )
    return "\n".join(lines)


CHUNK = 32  # games a worker audits per task: few enough to spread, many enough to amortise


def audit_many(
    db: str | None,
    ids: Sequence[str],
    workers: int = 1,
    done: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Audit these games, in this order, in `workers` processes (1: this one); `done(n)` is
    told as each batch of n games is finished."""
    if workers <= 1 or len(ids) <= 1:
        repo = open_repository(db)
        try:
            results = []
            for game_id in ids:
                results.append(audit_one(repo, game_id, known=True))
                if done is not None:
                    done(1)
            return results
        finally:
            repo.store.close()
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    size = max(1, min(CHUNK, len(ids) // (workers * 4)))  # a few tasks per worker at least
    chunks = [list(ids[i : i + size]) for i in range(0, len(ids), size)]
    # Spawned, not forked: a worker starts clean and opens its own connection.
    context = multiprocessing.get_context("spawn")
    out: list[dict[str, Any]] = []
    with ProcessPoolExecutor(
        workers, mp_context=context, initializer=_start_worker, initargs=(db,)
    ) as pool:
        for batch in pool.map(_audit_chunk, chunks):
            out.extend(batch)
            if done is not None:
                done(len(batch))
    return out


_worker_repo: Any = None  # a worker process's own repository


def _start_worker(db: str | None) -> None:
    global _worker_repo
    _worker_repo = open_repository(db)


def _audit_chunk(ids: list[str]) -> list[dict[str, Any]]:
    return [audit_one(_worker_repo, game_id, known=True) for game_id in ids]


def _progress_bar(total: int, show: bool) -> Iterator[Callable[[int], None] | None]:
    """A rich progress bar on standard error, or nothing."""
    if not show:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    columns = ("audit", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    console = Console(stderr=True)
    # On a terminal the bar is cleared at the end; elsewhere it is printed once, finished.
    with Progress(*columns, console=console, transient=console.is_terminal) as bar:
        task = bar.add_task("audit", total=total)
        yield lambda n: bar.advance(task, n)


def cmd_audit(args: argparse.Namespace) -> int:
    from contextlib import contextmanager

    from tournament.games import GameNotFound

    if bool(args.game_id) == bool(args.all):
        raise UserError("name one GAME_ID or --all")
    if args.all:
        repo = open_repository(args.db)
        try:
            ids = repo.game_ids()
        finally:
            repo.store.close()
        show = args.progress if args.progress is not None else sys.stderr.isatty()
        with contextmanager(_progress_bar)(len(ids), show and bool(ids)) as done:
            results = audit_many(args.db, ids, args.workers, done)
    else:
        repo = open_repository(args.db)
        try:
            results = [audit_one(repo, args.game_id)]
        except GameNotFound:
            raise UserError(f"no game {args.game_id!r} in the database") from None
        finally:
            repo.store.close()
    ok = all(r["ok"] for r in results)
    if args.json:
        out = {"ok": ok, "games": results, "failed": [r["game_id"] for r in results if not r["ok"]]}
        sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        for r in results:
            print(describe(r))
        failed = sum(1 for r in results if not r["ok"])
        print(f"{len(results)} game(s) audited, {failed} failed")
    return 0 if ok else 1
