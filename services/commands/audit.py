"""`king audit`: check games' hash chains and replay them through the rules.

For each game: the hash chain (a changed, dropped or reordered event breaks it), the seed
against its commitment, every dealt hand against the seed, and every action re-run through the
core with every derived fact recomputed. Names the first event that differs and why. Exit 0
when every game passes, 1 when one fails, 2 for a usage problem.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from services.commands import COMMANDS
from services.errors import UserError
from services.settings import load_settings


def register(sub: Any) -> None:
    audit = sub.add_parser(
        "audit",
        help=COMMANDS["audit"],
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    audit.add_argument("game_id", nargs="?", help="the game to audit")
    audit.add_argument("--all", action="store_true", help="audit every game in the database")
    audit.add_argument("--db", default=None, metavar="URL", help="database URL (KING_DATABASE_URL)")
    audit.add_argument("--json", action="store_true", help="print one JSON object")
    audit.set_defaults(handler=cmd_audit)


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


def audit_one(repo: Any, game_id: str) -> dict[str, Any]:
    from tournament.games import GameNotFound

    if not repo.exists(game_id):
        raise GameNotFound(f"no game {game_id!r}")
    try:
        return dict(repo.audit(game_id).to_dict())
    except GameNotFound:
        raise
    except Exception as exc:  # rows too damaged to read: the game fails, the run goes on
        return {
            "game_id": game_id,
            "ok": False,
            "error": f"{type(exc).__name__}: {str(exc)[:300]}",
        }


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


def cmd_audit(args: argparse.Namespace) -> int:
    from tournament.games import GameNotFound

    if bool(args.game_id) == bool(args.all):
        raise UserError("name one GAME_ID or --all")
    repo = open_repository(args.db)
    try:
        ids = repo.game_ids() if args.all else [args.game_id]
        results = []
        for game_id in ids:
            try:
                results.append(audit_one(repo, game_id))
            except GameNotFound:
                raise UserError(f"no game {game_id!r} in the database") from None
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
