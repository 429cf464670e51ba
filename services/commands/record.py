"""`king record check`: check a king-record/1 file against the rules; `king record export`:
write a stored game's record."""

from __future__ import annotations

import argparse
import os
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
        description=(
            "Prints one JSON object; exit 0 valid, 1 illegal action, 2 malformed. For an "
            "illegal action, error.deal and error.play are 0-based indexes into the document's "
            "deals and that entry's plays (a line on standard error says where, in words)."
        ),
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


# A record of a whole game is tens of kilobytes; the cap keeps an endless source (/dev/zero, a
# pipe that never ends) from reading until memory runs out.
MAX_RECORD_BYTES = 64 * 1024 * 1024


class _OutputClosed(Exception):
    """Standard output is closed or cannot be written: nothing can be printed there."""


def read_source(path: str) -> bytes:
    """The record's bytes, at most MAX_RECORD_BYTES + 1 of them (one more tells it is too big)."""
    if path == "-":
        if sys.stdin is None:
            raise OSError("standard input is closed")
        return sys.stdin.buffer.read(MAX_RECORD_BYTES + 1)
    with open(path, "rb") as fh:
        return fh.read(MAX_RECORD_BYTES + 1)


def emit(out: dict[str, Any]) -> None:
    """Print the one JSON object, flushed now so that a full or closed output is seen here."""
    stream = sys.stdout
    if stream is None:
        raise _OutputClosed("standard output is closed")
    data = orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n"
    try:
        stream.flush()
        stream.buffer.write(data)
        stream.buffer.flush()
    except (OSError, ValueError) as exc:  # ValueError: the stream object was closed
        _discard_output(stream)
        raise _OutputClosed(f"cannot write to standard output: {_reason(exc)}") from None


def _discard_output(stream: Any) -> None:
    # The unwritten bytes stay buffered and Python would fail again flushing them at exit
    # (exit status 120): point the descriptor at /dev/null so that last flush succeeds.
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _tell(message: str) -> None:
    """One line on standard error, if there is one to write to."""
    try:
        if sys.stderr is not None:
            sys.stderr.write(f"king record check: {message}\n")
            sys.stderr.flush()
    except (OSError, ValueError):
        pass


def malformed(message: str) -> int:
    emit({"valid": False, "error": {"code": "malformed", "message": message}})
    return 2


def cmd_check(args: argparse.Namespace) -> int:
    """Exit 0 valid, 1 illegal action, 2 malformed or when the answer cannot be printed."""
    try:
        if sys.stdout is None:  # checked first: a closed descriptor 1 could be reused by open
            raise _OutputClosed("standard output is closed")
        return _check(args.file)
    except _OutputClosed as exc:
        _tell(str(exc))
        return 2


def _check(path: str) -> int:
    try:
        raw = read_source(path)
    except OSError as exc:
        where = "standard input" if path == "-" else path
        return malformed(f"cannot read {where}: {_reason(exc)}")
    except MemoryError:
        return malformed("out of memory reading the record")
    if len(raw) > MAX_RECORD_BYTES:
        del raw
        return malformed(f"the record is larger than {MAX_RECORD_BYTES // (1024 * 1024)} MiB")
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return malformed(f"not JSON: {exc}")
    except MemoryError:
        return malformed("out of memory reading the JSON")
    del raw
    try:
        status, out = check_record(doc)
    except RecursionError:
        return malformed("the document is nested too deeply")
    except MemoryError:
        return malformed("out of memory checking the record")
    emit(out)
    if status == 1:
        _tell(where_illegal(out["error"]))
    return status


def where_illegal(error: dict[str, Any]) -> str:
    """The error object's place said for people: its `deal` and `play` are 0-based indexes
    into the document (the record format's), not the 1-based deal numbers shown elsewhere."""
    deal, play = error["deal"], error["play"]
    place = f"deal entry {deal} (0-based index into deals, redeal entries counted)"
    if play is None:
        place += ", its declaration"
    else:
        place += f", play {play} (0-based index into that entry's plays)"
    return f"illegal action at {place}: {error['code']} ({error['rule']}): {error['message']}"


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
