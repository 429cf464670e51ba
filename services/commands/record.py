"""`king record check`: check a king-record/1 file against the rules; `king record export`:
write a stored game's record."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from domain.record import check_record


def register(sub: Any) -> None:
    record = sub.add_parser("record", help="king-record/1 game records")
    actions = record.add_subparsers(dest="record_command", metavar="ACTION")
    check = actions.add_parser(
        "check",
        help="check a record against the rules",
        description="Prints one JSON object; exit 0 valid, 1 illegal action, 2 malformed.",
    )
    check.add_argument("file", help="the record file, or - for standard input")
    check.set_defaults(handler=cmd_check)
    export = actions.add_parser(
        "export",
        help="write a stored game's king-record/1 (what is public so far)",
        description=(
            "Writes the record of a game in the database: the deals that have ended with "
            "their hands, and the seed once the game is over (the public record)."
        ),
    )
    export.add_argument("game_id", help="the game")
    export.add_argument(
        "--db", default=None, metavar="URL", help="database URL (KING_DATABASE_URL)"
    )
    export.add_argument(
        "-o", "--output", default="-", help="output file (default: standard output)"
    )
    export.set_defaults(handler=cmd_export)


def read_source(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as fh:
        return fh.read()


def emit(out: dict[str, Any]) -> None:
    sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")


def malformed(message: str) -> int:
    emit({"valid": False, "error": {"code": "malformed", "message": message}})
    return 2


def cmd_check(args: argparse.Namespace) -> int:
    try:
        raw = read_source(args.file)
    except OSError as exc:
        return malformed(f"cannot read {args.file}: {exc.strerror or exc}")
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return malformed(f"not JSON: {exc}")
    try:
        status, out = check_record(doc)
    except RecursionError:
        return malformed("the document is nested too deeply")
    emit(out)
    return status


def cmd_export(args: argparse.Namespace) -> int:
    from domain.record import to_record
    from services.commands.audit import open_repository
    from services.errors import UserError
    from tournament.games import GameNotFound

    repo = open_repository(args.db)
    try:
        state = repo.load(args.game_id)
    except GameNotFound:
        raise UserError(f"no game {args.game_id!r} in the database") from None
    finally:
        repo.store.close()
    data = orjson.dumps(to_record(state, public=True), option=orjson.OPT_INDENT_2) + b"\n"
    if args.output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    try:
        with open(args.output, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        raise UserError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    return 0
